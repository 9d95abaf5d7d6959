//! The trust store on real folders: grants, revocation, and a trust file that someone else
//! planted or spoiled.
#![allow(clippy::disallowed_methods)] // The tests plant files in the store's folder.

use std::time::Duration;

use camino::Utf8PathBuf;
use ctx_trust::{Asked, Request, TRUST_FILE, TrustStore};

fn folder() -> (tempfile::TempDir, Utf8PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let path = Utf8PathBuf::try_from(tmp.path().canonicalize().unwrap()).unwrap();
    (tmp, path)
}

fn store(dir: &Utf8PathBuf) -> TrustStore {
    TrustStore::new(dir.join("config"), cap_std::ambient_authority())
}

fn request(workspace: &str, roots: &[&str]) -> Request {
    let asked = roots
        .iter()
        .map(|r| Asked::new(*r, "build/app.sln (source folder)").with_real(Some((*r).into())))
        .collect();
    Request::new(workspace, asked)
}

#[test]
fn a_grant_trusts_its_workspace_only_until_revoked() {
    let (_tmp, dir) = folder();
    let trust = store(&dir);
    let asked = request("/w/build", &["/w/src"]);
    assert!(!trust.trusts(&asked).unwrap(), "nothing is trusted before the user says so");
    assert!(!dir.join("config").exists(), "reading creates nothing");
    let grant = trust.grant(&asked).unwrap();
    assert_eq!(grant.digest, asked.digest());
    assert!(trust.trusts(&asked).unwrap());
    assert!(!trust.trusts(&request("/other", &["/w/src"])).unwrap(), "another workspace");
    assert!(!trust.trusts(&request("/w/build", &["/w/src", "/w/more"])).unwrap(), "a new root");
    assert!(trust.trusts(&request("/w/build", &[])).unwrap(), "asking for nothing");
    // A second workspace's grant keeps the first.
    trust.grant(&request("/v", &["/v2"])).unwrap();
    assert!(trust.trusts(&asked).unwrap());
    assert!(trust.revoke("/w/build".into()).unwrap());
    assert!(!trust.revoke("/w/build".into()).unwrap());
    assert!(!trust.trusts(&asked).unwrap());
    assert!(trust.trusts(&request("/v", &["/v2"])).unwrap());
}

#[test]
fn a_planted_trust_file_is_refused_without_blocking() {
    let (_tmp, dir) = folder();
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(dir.join("elsewhere.json"), br#"{"version":1,"workspaces":[]}"#).unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere.json"), config.join(TRUST_FILE)).unwrap();
    let asked = request("/w", &["/src"]);
    assert!(store(&dir).grant_for("/w".into()).is_err(), "a link is not the trust file");
    std::fs::remove_file(config.join(TRUST_FILE)).unwrap();
    let status = std::process::Command::new("mkfifo").arg(config.join(TRUST_FILE)).status();
    assert!(status.unwrap().success());
    let (tx, rx) = std::sync::mpsc::channel();
    let planted = store(&dir);
    let ask = asked.clone();
    std::thread::spawn(move || tx.send(planted.trusts(&ask).is_err()).unwrap());
    assert!(rx.recv_timeout(Duration::from_secs(10)).expect("reading a FIFO hangs"));
    std::fs::remove_file(config.join(TRUST_FILE)).unwrap();
    std::fs::create_dir(config.join(TRUST_FILE)).unwrap();
    assert!(store(&dir).grant(&asked).is_err(), "a folder is not the trust file");
}

#[test]
fn a_spoiled_trust_file_is_an_error_that_quotes_nothing() {
    let (_tmp, dir) = folder();
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    let secret = r#"{"auths":{"registry":{"auth":"c2VjcmV0LXRva2VuPQ=="}}}"#;
    std::fs::write(config.join(TRUST_FILE), secret).unwrap();
    let err = store(&dir).grant_for("/w".into()).unwrap_err();
    assert_eq!(err.code(), ctx_trust::Code::Config);
    let message = err.to_string();
    assert!(message.contains("remove it"), "{message}");
    assert!(!message.contains("c2Vj") && !message.contains("auths"), "{message}");
    // Nothing is granted over it: the user decides what to do with the file.
    assert!(store(&dir).grant(&request("/w", &["/src"])).is_err());
    assert_eq!(std::fs::read_to_string(config.join(TRUST_FILE)).unwrap(), secret);
    std::fs::write(config.join(TRUST_FILE), vec![b'x'; 5 << 20]).unwrap();
    assert!(store(&dir).grant_for("/w".into()).is_err(), "an oversized file is refused");
}

#[test]
fn a_store_inside_the_workspace_speaks_for_nothing() {
    let (_tmp, dir) = folder();
    let workspace = dir.join("repo");
    std::fs::create_dir_all(workspace.join(".config/ctx")).unwrap();
    let inside = TrustStore::new(workspace.join(".config/ctx"), cap_std::ambient_authority());
    let asked = request(workspace.as_str(), &["/src"]);
    assert!(inside.grant(&asked).is_err(), "a repository cannot record its own grant");
    assert!(inside.trusts(&asked).is_err());
    // Nor through a link that leads into it.
    std::os::unix::fs::symlink(workspace.join(".config"), dir.join("linked")).unwrap();
    let linked = TrustStore::new(dir.join("linked/ctx"), cap_std::ambient_authority());
    let err = linked.grant(&asked).unwrap_err();
    assert!(err.to_string().contains("cannot trust itself"), "{err}");
}
