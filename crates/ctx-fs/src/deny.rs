//! The deny list: entries that are never read, even when named directly.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, ErrorKind};

/// The built-in rules of assembly.md §3 plus configured globs, compared
/// case-insensitively.
#[derive(Debug)]
pub(crate) struct DenyList {
    globs: GlobSet,
}

impl DenyList {
    pub(crate) fn new(patterns: &[String]) -> Result<DenyList, Error> {
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            let glob = GlobBuilder::new(pattern).case_insensitive(true).build().map_err(|e| {
                Error::new(ErrorKind::Config, pattern).with_detail(format!("deny glob: {e}"))
            })?;
            builder.add(glob);
        }
        let globs = builder
            .build()
            .map_err(|e| Error::new(ErrorKind::Config, "deny").with_detail(e.to_string()))?;
        Ok(DenyList { globs })
    }

    /// Why the in-root path `comps` is denied, if it is.
    pub(crate) fn check<S: AsRef<str>>(&self, comps: &[S]) -> Option<&'static str> {
        if let Some(reason) = builtin(comps) {
            return Some(reason);
        }
        if !self.globs.is_empty() {
            let mut prefix = String::new();
            for comp in comps {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(comp.as_ref());
                if self.globs.is_match(&prefix) {
                    return Some("matches a deny glob");
                }
            }
        }
        None
    }
}

const ENV_ALLOWED: [&str; 3] = [".env.example", ".env.sample", ".env.template"];
const CREDENTIALS: [&str; 14] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".netrc",
    ".npmrc",
    ".pypirc",
    // Beyond assembly.md's list: tokens that tools keep in the home directory.
    ".git-credentials",
    ".pgpass",
    ".vault-token",
    ".s3cfg",
    ".boto",
    ".azure",
    ".terraformrc",
];

/// Credential files known by the folder they are in: (folder, file or folder).
const CREDENTIALS_IN: [(&str, &str); 6] = [
    (".docker", "config.json"),
    (".cargo", "credentials"),
    (".cargo", "credentials.toml"),
    ("gh", "hosts.yml"),
    (".config", "gcloud"),
    (".config", "hub"),
];

/// Why the path `comps` (its components, in any root or none) falls under the built-in deny
/// rules of assembly.md §3, if it does: a `.git` component, `.env` files, credential stores,
/// private keys. Configured deny globs are not looked at.
pub fn builtin_denial<S: AsRef<str>>(comps: &[S]) -> Option<&'static str> {
    builtin(comps)
}

fn builtin<S: AsRef<str>>(comps: &[S]) -> Option<&'static str> {
    let mut parent = String::new();
    for comp in comps {
        let name = comp.as_ref().to_lowercase();
        let name = name.as_str();
        if name == ".git" {
            return Some("git metadata");
        }
        if (name == ".env" || name.starts_with(".env.")) && !ENV_ALLOWED.contains(&name) {
            return Some("environment file");
        }
        if CREDENTIALS.contains(&name) || CREDENTIALS_IN.contains(&(parent.as_str(), name)) {
            return Some("credential store");
        }
        if name.starts_with("id_rsa")
            || name.starts_with("id_ed25519")
            || name.ends_with(".pem")
            || name.ends_with(".key")
        {
            return Some("private key");
        }
        parent = name.to_owned();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied(list: &DenyList, path: &str) -> bool {
        let comps: Vec<&str> = path.split('/').collect();
        list.check(&comps).is_some()
    }

    #[test]
    fn builtin_rules() {
        let list = DenyList::new(&[]).unwrap();
        for p in [
            ".git",
            ".git/config",
            "a/.GIT/HEAD",
            ".env",
            ".ENV",
            ".env.local",
            "x/.env.production",
            ".ssh/id_ed25519.pub",
            ".docker/config.json",
            "home/.netrc",
            "home/.git-credentials",
            "home/.cargo/credentials.toml",
            ".config/gh/hosts.yml",
            ".config/gcloud/credentials.db",
            "id_rsa",
            "ID_RSA.pub",
            "certs/server.pem",
            "tls.KEY",
            ".aws/credentials",
            ".kube/config",
        ] {
            assert!(denied(&list, p), "{p} should be denied");
        }
        for p in [
            ".env.example",
            ".ENV.Sample",
            ".env.template",
            ".gitignore",
            ".github/ci.yml",
            "docs/config.json",
            ".docker/other.json",
            "environment.md",
            "keys.md",
            "a.env",
            "src/gh/hosts.yml.md",
            ".cargo/config.toml",
            "credentials.toml",
        ] {
            assert!(!denied(&list, p), "{p} should be allowed");
        }
    }

    #[test]
    fn configured_globs() {
        let list = DenyList::new(&["secrets".into(), "*.sqlite".into()]).unwrap();
        assert!(denied(&list, "secrets/a.md"));
        assert!(denied(&list, "SECRETS"));
        assert!(denied(&list, "db/x.SQLite"));
        assert!(!denied(&list, "docs/secrets.md"));
        assert!(DenyList::new(&["a[".into()]).is_err());
    }
}
