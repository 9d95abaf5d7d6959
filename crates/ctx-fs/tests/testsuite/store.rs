//! The store is read like any other folder: what an attacker plants under an entry's name (a
//! FIFO, a link, a folder, a device) is refused at once, never waited on or followed.

use std::os::unix::fs::symlink;
use std::sync::mpsc;
use std::time::Duration;

use camino::Utf8PathBuf;
use ctx_fs::{Code, Store};

use crate::util::{Fixture, SECRET, code};

/// Runs `f` on a thread and fails the test if it has not returned after ten seconds (a read
/// that blocks on a FIFO never returns).
fn never_hangs<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("{what} hangs"))
}

fn mkfifo(path: &Utf8PathBuf) {
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

fn store(fx: &Fixture) -> Store {
    Store::open(fx.base.join("cache"), cap_std::ambient_authority()).unwrap()
}

#[test]
fn planted_fifos_are_refused_without_blocking() {
    let fx = Fixture::new();
    let dir = fx.base.join("cache");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["suggest-0123.idx", "sources-4567.idx", "trust.json", "log.jsonl", "x.lock"] {
        mkfifo(&dir.join(name));
    }
    let s = store(&fx);
    let (read, map, append, lock) = never_hangs("a read of a planted FIFO", move || {
        (
            code(s.read("suggest-0123.idx")),
            code(s.map("sources-4567.idx")),
            code(s.append("log.jsonl", b"{}\n")),
            code(s.lock("x")),
        )
    });
    assert_eq!(read, Some(Code::NotRegular));
    assert_eq!(map, Some(Code::NotRegular));
    assert_eq!(append, Some(Code::NotRegular));
    assert_eq!(lock, Some(Code::NotRegular));
    let s = store(&fx);
    assert_eq!(never_hangs("a capped read", move || code(s.read_up_to("trust.json", 64))), {
        Some(Code::NotRegular)
    });
}

#[test]
fn planted_links_are_never_followed() {
    let fx = Fixture::new();
    let dir = fx.base.join("cache");
    std::fs::create_dir_all(dir.join("real")).unwrap();
    std::fs::write(dir.join("inside.idx"), "inside").unwrap();
    symlink(fx.outside.join("secret.txt"), dir.join("out.idx")).unwrap();
    symlink("inside.idx", dir.join("in.idx")).unwrap();
    symlink(fx.outside.join("secret.txt"), dir.join("log.jsonl")).unwrap();
    symlink(fx.outside.join("secret.txt"), dir.join("x.lock")).unwrap();
    symlink(&fx.outside, dir.join("images")).unwrap();
    let s = store(&fx);
    for name in ["out.idx", "in.idx"] {
        let read = s.read(name);
        assert!(read.as_ref().is_err(), "{name}: {read:?}");
        assert!(!format!("{read:?}").contains(SECRET));
        assert!(s.map(name).is_err(), "{name}");
    }
    assert!(s.append("log.jsonl", b"appended").is_err());
    assert!(s.lock("x").is_err());
    assert!(s.sub("images").is_err(), "a link to a folder outside is not a store");
    let secret = std::fs::read_to_string(fx.outside.join("secret.txt")).unwrap();
    assert_eq!(secret, SECRET, "nothing was written through a link");
    // Replacing an entry that is a link replaces the link itself, never its target.
    s.write("out.idx", b"fresh").unwrap();
    assert_eq!(s.read("out.idx").unwrap().as_deref(), Some(&b"fresh"[..]));
    assert_eq!(std::fs::read_to_string(fx.outside.join("secret.txt")).unwrap(), SECRET);
}

#[test]
fn folders_and_oversized_entries_are_refused() {
    let fx = Fixture::new();
    let s = store(&fx);
    std::fs::create_dir_all(fx.base.join("cache/folder.idx")).unwrap();
    assert_eq!(code(s.read("folder.idx")), Some(Code::NotRegular));
    assert_eq!(code(s.map("folder.idx")), Some(Code::NotRegular));
    s.write("big", &[b'x'; 100]).unwrap();
    assert_eq!(code(s.read_up_to("big", 99)), Some(Code::TooLarge));
    assert_eq!(s.read_up_to("big", 100).unwrap().unwrap().len(), 100);
    assert_eq!(s.read_up_to("missing", 100).unwrap(), None);
}
