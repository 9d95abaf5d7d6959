//! The content cache: hits are cheap clones, changes are never served stale.

use std::sync::Arc;

use ctx_fs::Content;

use crate::util::{Fixture, age};

fn text(content: Content) -> Arc<str> {
    content.text().cloned().expect("text")
}

#[test]
fn hits_share_the_text() {
    let fx = Fixture::new();
    fx.write("a.md", "cached");
    age(&fx.path("a.md"));
    let sb = fx.sandbox();
    let loc = sb.resolve("a.md", None).unwrap();
    let first = text(sb.read_text(&loc).unwrap());
    let second = text(sb.read_text(&loc).unwrap());
    assert!(Arc::ptr_eq(&first, &second), "second read is a cache hit");
}

#[test]
fn fresh_files_are_not_cached() {
    let fx = Fixture::new();
    fx.write("a.md", "new");
    let sb = fx.sandbox();
    let loc = sb.resolve("a.md", None).unwrap();
    let first = text(sb.read_text(&loc).unwrap());
    let second = text(sb.read_text(&loc).unwrap());
    assert!(!Arc::ptr_eq(&first, &second), "a file modified just now may change again unseen");
}

#[test]
fn same_length_change_is_seen() {
    let fx = Fixture::new();
    fx.write("a.md", "one");
    age(&fx.path("a.md"));
    let sb = fx.sandbox();
    let loc = sb.resolve("a.md", None).unwrap();
    assert_eq!(&*text(sb.read_text(&loc).unwrap()), "one");
    fx.write("a.md", "two");
    assert_eq!(&*text(sb.read_text(&loc).unwrap()), "two", "mtime changed");
}

#[test]
fn replaced_file_is_seen() {
    let fx = Fixture::new();
    fx.write("a.md", "one").write("b.md", "two");
    age(&fx.path("a.md"));
    age(&fx.path("b.md"));
    // Same length and (second-granular) same mtime: only the inode tells them apart.
    let mtime = std::fs::metadata(fx.path("a.md")).unwrap().modified().unwrap();
    std::fs::File::options()
        .write(true)
        .open(fx.path("b.md"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let sb = fx.sandbox();
    let loc = sb.resolve("a.md", None).unwrap();
    assert_eq!(&*text(sb.read_text(&loc).unwrap()), "one");
    std::fs::rename(fx.path("b.md"), fx.path("a.md")).unwrap();
    assert_eq!(&*text(sb.read_text(&loc).unwrap()), "two", "inode changed");
}

#[test]
fn ttl_and_capacity() {
    let fx = Fixture::new();
    fx.write("a.md", "x");
    age(&fx.path("a.md"));
    let sb = fx
        .builder()
        .cache_ttl(std::time::Duration::from_millis(50))
        .open(cap_std::ambient_authority())
        .unwrap();
    let loc = sb.resolve("a.md", None).unwrap();
    let first = text(sb.read_text(&loc).unwrap());
    std::thread::sleep(std::time::Duration::from_millis(120));
    let second = text(sb.read_text(&loc).unwrap());
    assert!(!Arc::ptr_eq(&first, &second), "expired after the ttl");
    let off = fx.builder().cache_capacity(0).open(cap_std::ambient_authority()).unwrap();
    let a = text(off.read_text(&loc).unwrap());
    let b = text(off.read_text(&loc).unwrap());
    assert!(!Arc::ptr_eq(&a, &b), "capacity 0 turns the cache off");
}

#[test]
fn change_with_mtime_set_back_is_seen() {
    let fx = Fixture::new();
    fx.write("a.md", "one");
    age(&fx.path("a.md"));
    let mtime = std::fs::metadata(fx.path("a.md")).unwrap().modified().unwrap();
    let sb = fx.sandbox();
    let loc = sb.resolve("a.md", None).unwrap();
    assert_eq!(&*text(sb.read_text(&loc).unwrap()), "one");
    // Same inode, same length, modification time put back: the status-change time moved.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(fx.path("a.md"), "two").unwrap();
    std::fs::File::options()
        .write(true)
        .open(fx.path("a.md"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(&*text(sb.read_text(&loc).unwrap()), "two");
}
