//! The deny list: entries that are never read, even when named directly.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, ErrorKind};

/// The built-in rules of assembly.md §3 plus configured globs, compared
/// case-insensitively.
#[derive(Debug)]
pub(crate) struct DenyList {
    globs: GlobSet,
}

/// Whether `pattern` is a deny glob the sandbox can use (so a configuration can say which of
/// its globs does not parse, at its place, before a sandbox is built).
pub fn deny_glob_parses(pattern: &str) -> bool {
    GlobBuilder::new(pattern).case_insensitive(true).build().is_ok()
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

    /// [`DenyList::check`] of the entry `name` of a folder that is not denied itself
    /// (`check` of its components said `None`): `parent` is the folder's last component
    /// (empty at the root) and `path` the entry's whole path, its components joined by `/`.
    /// Every rule but the ones on the last component already passed on the folder's, so only
    /// those are tried: what a walk asks of each entry, without a string per component.
    pub(crate) fn check_entry(&self, parent: &str, name: &str, path: &str) -> Option<&'static str> {
        if let Some(reason) = builtin_comp(&lower(parent), &lower(name)) {
            return Some(reason);
        }
        if !self.globs.is_empty() && self.globs.is_match(path) {
            return Some("matches a deny glob");
        }
        None
    }
}

/// `name` in lower case, borrowed when it is already.
fn lower(name: &str) -> std::borrow::Cow<'_, str> {
    if name.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        std::borrow::Cow::Owned(name.to_lowercase())
    } else {
        std::borrow::Cow::Borrowed(name)
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
        if let Some(reason) = builtin_comp(&parent, &name) {
            return Some(reason);
        }
        // A name with a colon is a stream of the file named before it on Windows
        // (`.env:x` of `.env`): denied as that file is.
        if let Some((file, _)) = name.split_once(':')
            && let Some(reason) = builtin_comp(&parent, file)
        {
            return Some(reason);
        }
        parent = name;
    }
    None
}

/// The built-in rules on one component, `name`, in the folder `parent` (both in lower case;
/// `parent` empty for a first component).
fn builtin_comp(parent: &str, name: &str) -> Option<&'static str> {
    if name == ".git" {
        return Some("git metadata");
    }
    if (name == ".env" || name.starts_with(".env.")) && !ENV_ALLOWED.contains(&name) {
        return Some("environment file");
    }
    if CREDENTIALS.contains(&name) || CREDENTIALS_IN.contains(&(parent, name)) {
        return Some("credential store");
    }
    if name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || name.ends_with(".pem")
        || name.ends_with(".key")
    {
        return Some("private key");
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
            // A stream of a denied file on Windows (`NAME:stream`) is denied as the file is.
            ".env:secret",
            "keys/id_rsa:x",
            ".git:x/config",
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

    /// Names that the rules look at, in every case, and plain ones.
    fn component() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let names = [
            ".git",
            ".GIT",
            ".env",
            ".env.local",
            ".env.example",
            ".ENV.Sample",
            ".ssh",
            ".aws",
            ".config",
            "gcloud",
            "GH",
            "hosts.yml",
            ".docker",
            "config.json",
            "id_rsa.pub",
            "server.PEM",
            "tls.key",
            "secrets",
            "x.sqlite",
            "src",
            "a",
            "Straße",
            "İd_rsa",
        ];
        prop_oneof![
            proptest::sample::select(names.to_vec()).prop_map(str::to_owned),
            "[a-zA-Z_.-]{1,8}",
        ]
    }

    proptest::proptest! {
        /// The check of a walk's entry in a folder that passed is the check of its whole path.
        #[test]
        fn an_entry_is_checked_as_its_whole_path(
            comps in proptest::collection::vec(component(), 1..6),
        ) {
            let list = DenyList::new(&["secrets".into(), "**/*.sqlite".into()]).unwrap();
            let (name, folder) = comps.split_last().unwrap();
            if list.check(folder).is_none() {
                let parent = folder.last().map_or("", String::as_str);
                let path = comps.join("/");
                proptest::prop_assert_eq!(list.check_entry(parent, name, &path), list.check(&comps));
            }
        }
    }
}
