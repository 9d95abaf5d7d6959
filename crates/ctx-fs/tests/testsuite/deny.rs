//! The deny list: named directly, through links, case-insensitively, globs.

use crate::util::{Fixture, code, read};
use ctx_fs::Code;

#[test]
fn env_files() {
    let fx = Fixture::new();
    for name in [".env", ".env.local", ".env.production", ".ENV", ".env.example", ".env.sample"] {
        fx.write(name, "KEY=value");
    }
    fx.write(".env.template", "KEY=").write("sub/.env", "KEY=1");
    let sb = fx.sandbox();
    for denied in [".env", ".env.local", ".env.production", "sub/.env", ".Env.Local"] {
        assert_eq!(code(read(&sb, denied)), Some(Code::Denied), "{denied}");
    }
    for allowed in [".env.example", ".env.sample", ".env.template"] {
        assert_eq!(
            read(&sb, allowed).unwrap().len(),
            if allowed == ".env.template" { 4 } else { 9 }
        );
    }
    // Denied whether or not it exists: the answer does not depend on the disk.
    assert_eq!(code(read(&sb, "nowhere/.env")), Some(Code::Denied));
    let err = read(&sb, ".env.local").unwrap_err();
    assert_eq!(err.to_string(), "access denied: .env.local (environment file)");
}

#[test]
fn git_and_credentials() {
    let fx = Fixture::new();
    fx.write(".git/config", "[core]").write(".git/HEAD", "ref").write(".ssh/id_ed25519", "k");
    fx.write(".docker/config.json", "{}").write("deploy/server.pem", "pem").write("tls.key", "k");
    fx.write("id_rsa.pub", "pub").write(".netrc", "n").write(".aws/credentials", "c");
    fx.write(".gitignore", "x").write(".github/ci.yml", "ci").write("docs/config.json", "{}");
    let sb = fx.sandbox();
    for denied in [
        ".git/config",
        ".GIT/HEAD",
        ".git",
        "a/../.git/config",
        ".ssh/id_ed25519",
        ".docker/config.json",
        "deploy/server.pem",
        "tls.key",
        "id_rsa.pub",
        ".netrc",
        ".aws/credentials",
    ] {
        assert_eq!(code(sb.resolve(denied, None)), Some(Code::Denied), "{denied}");
    }
    for allowed in [".gitignore", ".github/ci.yml", "docs/config.json"] {
        assert_eq!(code(read(&sb, allowed)), None, "{allowed}");
    }
    let abs = fx.path(".git/config");
    assert_eq!(code(sb.resolve(abs.as_str(), None)), Some(Code::Denied));
}

#[test]
fn links_to_denied_entries() {
    let fx = Fixture::new();
    fx.write(".env", "SECRET_KEY=1").write(".git/config", "[core]").write("README.md", "readme");
    fx.link("notes.md", ".env")
        .link("g", ".git")
        .link("chain", "notes.md")
        .link("up/x", "../.git/config");
    fx.link(".env.example", "README.md");
    let sb = fx.sandbox();
    for denied in ["notes.md", "g/config", "g", "chain", "up/x"] {
        assert_eq!(code(read(&sb, denied)), Some(Code::Denied), "{denied}");
    }
    assert_eq!(read(&sb, ".env.example").unwrap(), "readme");
}

#[test]
fn configured_globs() {
    let fx = Fixture::new();
    fx.write("secrets/a.md", "a").write("data/x.SQLITE", "db").write("docs/secrets.md", "fine");
    fx.link("alias.md", "secrets/a.md");
    let sb =
        fx.builder().deny("secrets").deny("*.sqlite").open(cap_std::ambient_authority()).unwrap();
    assert_eq!(code(read(&sb, "secrets/a.md")), Some(Code::Denied));
    assert_eq!(code(read(&sb, "Secrets/a.md")), Some(Code::Denied));
    assert_eq!(code(read(&sb, "data/x.SQLITE")), Some(Code::Denied));
    assert_eq!(code(read(&sb, "alias.md")), Some(Code::Denied));
    assert_eq!(read(&sb, "docs/secrets.md").unwrap(), "fine");
}

#[test]
fn a_marker_is_seen_but_never_read() {
    let fx = Fixture::new();
    fx.write("repo/.git/config", "[core] token=secret").write("repo/sub/a.md", "a");
    fx.write("plain/a.md", "a").link("linked/.git", "../repo/.git");
    let sb = fx.sandbox();
    let dir = |rel: &str| sb.resolve(rel, None).unwrap();
    // The marker of a repository is seen where it is, a file, a folder or a link alike…
    assert!(sb.holds(&dir("repo"), ".git"));
    assert!(sb.holds(&dir("linked"), ".git"));
    assert!(!sb.holds(&dir("plain"), ".git"));
    assert!(!sb.holds(&dir("repo/sub"), ".git"));
    // …but never read, and the listing still leaves it out.
    assert_eq!(code(read(&sb, "repo/.git/config")), Some(Code::Denied));
    assert_eq!(code(read(&sb, "linked/.git/config")), Some(Code::Denied));
    assert!(!sb.names(&dir("repo")).unwrap().contains(&".git".to_owned()));
    // Only one plain name is looked up: nothing is reached through a path.
    for name in ["", ".", "..", "../repo/.git", "sub/../.git", ".git/config", "a\0b"] {
        assert!(!sb.holds(&dir("repo"), name), "{name:?}");
    }
    assert!(!sb.holds(&dir("repo/sub"), ".."));
}

/// A walk, serial or on every core, never lists a denied entry however deep, in whatever
/// case, brought back by an ignore file or matched by a deny glob: each is reported as denied
/// (a denied folder once, not entered), and only the others are listed.
#[test]
fn a_walk_lists_no_denied_entry_at_any_depth() {
    use ctx_fs::{FileKind, SkipReason};
    let fx = Fixture::new();
    fx.write(".ignore", "!.env\n!.env.local\n!.env.example\n");
    for path in [
        "src/a/b/server.PEM",
        "src/a/ID_RSA",
        "src/a/b/tls.Key",
        "src/Id_Ed25519.pub",
        "src/a/.env",
        "src/a/.env.local",
        "secrets/x.md",
        "data/deep/x.SQLite",
        "src/a/b/ok.rs",
        "src/.env.example",
        "src/ok.md",
        "data/deep/y.md",
        "docs/secrets.md",
    ] {
        fx.write(path, "x");
    }
    let sb = fx.builder().deny("secrets").deny("**/*.sqlite").open(cap_std::ambient_authority());
    let sb = sb.unwrap();
    let mut denied = vec![
        "data/deep/x.SQLite",
        "secrets",
        "src/Id_Ed25519.pub",
        "src/a/.env",
        "src/a/.env.local",
        "src/a/ID_RSA",
        "src/a/b/server.PEM",
        "src/a/b/tls.Key",
    ];
    denied.sort_unstable();
    let listed =
        ["data/deep/y.md", "docs/secrets.md", "src/.env.example", "src/a/b/ok.rs", "src/ok.md"];
    for walk in [sb.walk(&sb.workspace()), sb.walk_parallel(&sb.workspace())] {
        let walk = walk.unwrap();
        let files: Vec<&str> = walk
            .entries
            .iter()
            .filter(|e| e.kind == FileKind::File)
            .map(|e| e.path.as_str())
            .collect();
        assert_eq!(files, listed);
        let mut reported: Vec<&str> = walk
            .skipped
            .iter()
            .filter(|s| s.reason == SkipReason::Denied)
            .map(|s| s.path.as_str())
            .collect();
        reported.sort_unstable();
        assert_eq!(reported, denied);
    }
}
