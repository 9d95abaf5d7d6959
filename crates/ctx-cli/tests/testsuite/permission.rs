//! Refused access is named truly: an unreadable file or directory is `E_PERMISSION`, never
//! `E_NOT_FOUND` or `E_IO`, and an unreadable directory is an error, not an empty listing.
//!
//! Permissions do not bind root, so as root the binary runs as `nobody` through `setpriv`.
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use assert_fs::TempDir;
use assert_fs::prelude::*;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn is_root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// Runs ctx in `dir` as a user the modes bind.
fn ctx_unprivileged(dir: &Path, args: &[&str]) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("ctx");
    let mut cmd = if is_root() {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(bin);
        cmd
    } else {
        Command::new(bin)
    };
    // The user's own settings are not the test's (and as `nobody`, root's are unreadable).
    cmd.env("CTX_CONFIG_DIR", "/nonexistent/ctx-config");
    cmd.current_dir(dir).args(args).output().unwrap()
}

#[test]
fn refused_access_is_e_permission() {
    let dir = TempDir::new().unwrap();
    chmod(dir.path(), 0o755);
    dir.child("ok/a.txt").write_str("a\n").unwrap();
    dir.child("locked/inner.txt").write_str("secret\n").unwrap();
    dir.child("locked.txt").write_str("secret\n").unwrap();
    chmod(&dir.path().join("ok"), 0o755);
    chmod(&dir.path().join("ok/a.txt"), 0o644);
    chmod(&dir.path().join("locked"), 0o000);
    chmod(&dir.path().join("locked.txt"), 0o000);

    let out = ctx_unprivileged(dir.path(), &["expand", "@locked.txt @locked/ @./"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("-:1:1: error[E_PERMISSION]"), "{stderr}");
    // The directory that cannot be listed is an error, not an empty listing.
    assert!(stderr.contains("-:1:13: error[E_PERMISSION]"), "{stderr}");
    assert!(!stderr.contains("E_NOT_FOUND") && !stderr.contains("E_IO"), "{stderr}");
    assert!(!stdout.contains("secret"), "{stdout}");
    // The walk of the whole tree says what it left out, and why.
    assert!(stdout.contains("1 permission denied (E_PERMISSION)"), "{stdout}");
    assert!(!stdout.contains("(E_IO)"), "{stdout}");
    // The tools' walks say so too, and warn that what they could not read is left out.
    let out = ctx_unprivileged(
        dir.path(),
        &["expand", "@[glob{\"pattern\":\"**/*.txt\"}] @[grep{\"pattern\":\"a\"}]"],
    );
    let tools = String::from_utf8_lossy(&out.stdout);
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        tools.matches("[... 1 entry skipped: 1 permission denied (E_PERMISSION) ...]").count(),
        2,
        "{tools}"
    );
    assert!(!tools.contains("secret") && !tools.contains("inner.txt"), "{tools}");
    assert_eq!(
        warnings.matches("W_LIMIT]: a walk could not read 1 entry").count(),
        2,
        "{warnings}"
    );
    // No absolute path of the machine is named.
    let root = dir.path().to_string_lossy();
    assert!(!stderr.contains(root.as_ref()) && !stdout.contains(root.as_ref()), "{stderr}");
    // Completion passes over the folder it cannot list, as the walks above do.
    let out = ctx_unprivileged(dir.path(), &["complete", "a.t"]);
    let completions = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(completions.contains("ok/a.txt"), "{completions}");
    assert!(!completions.contains("inner.txt"), "{completions}");
    chmod(&dir.path().join("locked"), 0o755);
}
