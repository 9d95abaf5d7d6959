//! The content cache: hits are cheap clones, changes are never served stale.

use std::os::unix::fs::symlink;

use ctx_fs::{Code, Content, Text};

use crate::util::{Fixture, SECRET, age, code, message, read};

fn text(content: Content) -> Text {
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
    assert!(Text::ptr_eq(&first, &second), "second read is a cache hit");
}

#[test]
fn fresh_files_are_not_cached() {
    let fx = Fixture::new();
    fx.write("a.md", "new");
    let sb = fx.sandbox();
    let loc = sb.resolve("a.md", None).unwrap();
    let first = text(sb.read_text(&loc).unwrap());
    let second = text(sb.read_text(&loc).unwrap());
    assert!(!Text::ptr_eq(&first, &second), "a file modified just now may change again unseen");
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
    assert!(!Text::ptr_eq(&first, &second), "expired after the ttl");
    let off = fx.builder().cache_capacity(0).open(cap_std::ambient_authority()).unwrap();
    let a = text(off.read_text(&loc).unwrap());
    let b = text(off.read_text(&loc).unwrap());
    assert!(!Text::ptr_eq(&a, &b), "capacity 0 turns the cache off");
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

// The warm path: a hit validated by one stat of the path, no open. Entries are
// served that way only when the file's status-change time was two seconds old
// when it was read, so these tests wait that long once.

/// Waits until every file written so far is older than the racy window.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2100));
}

#[test]
fn warm_hit_serves_the_file() {
    let fx = Fixture::new();
    fx.write("docs/a.md", "warm");
    settle();
    let sb = fx.sandbox();
    let base = sb.resolve("docs", None).unwrap();
    let (loc, first) = sb.read_path("a.md", Some(&base)).unwrap();
    let first = text(first);
    let (again, second) = sb.read_path("../docs/./a.md", Some(&base)).unwrap();
    assert_eq!(again, loc);
    assert_eq!(loc.path(), "docs/a.md");
    assert!(Text::ptr_eq(&first, &text(second)), "path hit");
    assert!(Text::ptr_eq(&first, &text(sb.read_text(&loc).unwrap())), "location hit");
    // The lexical rules still come first.
    assert_eq!(code(sb.read_path("../../docs/a.md", Some(&base))), Some(Code::Outside));
    assert_eq!(
        code(sb.read_path("a.md/", Some(&base))),
        code(fx.sandbox().read_path("docs/a.md/", None))
    );
}

#[test]
fn warm_modification_is_seen() {
    let fx = Fixture::new();
    fx.write("a.md", "one");
    let mtime = std::fs::metadata(fx.path("a.md")).unwrap().modified().unwrap();
    settle();
    let sb = fx.sandbox();
    assert_eq!(read(&sb, "a.md").unwrap(), "one");
    // Another length.
    fx.write("a.md", "three");
    assert_eq!(read(&sb, "a.md").unwrap(), "three");
    // The same length with the modification time put back: the status-change time moved.
    fx.write("a.md", "two");
    std::fs::File::options()
        .write(true)
        .open(fx.path("a.md"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(read(&sb, "a.md").unwrap(), "two");
}

#[test]
fn warm_mtime_change_is_seen() {
    let fx = Fixture::new();
    fx.write("a.md", "one");
    settle();
    let sb = fx.sandbox();
    let loc = sb.resolve("a.md", None).unwrap();
    let first = text(sb.read_text(&loc).unwrap());
    assert!(Text::ptr_eq(&first, &text(sb.read_text(&loc).unwrap())));
    std::fs::File::options()
        .write(true)
        .open(fx.path("a.md"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(600))
        .unwrap();
    let second = text(sb.read_text(&loc).unwrap());
    assert!(!Text::ptr_eq(&first, &second), "a touched file is read again");
}

#[test]
fn warm_rename_over_is_seen() {
    let fx = Fixture::new();
    fx.write("a.md", "one").write("b.md", "two");
    // Same length and same modification time: only inode and status-change time differ.
    let mtime = std::fs::metadata(fx.path("a.md")).unwrap().modified().unwrap();
    std::fs::File::options()
        .write(true)
        .open(fx.path("b.md"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    settle();
    let sb = fx.sandbox();
    let loc = sb.resolve("a.md", None).unwrap();
    assert_eq!(read(&sb, "a.md").unwrap(), "one");
    assert_eq!(read(&sb, "a.md").unwrap(), "one");
    std::fs::rename(fx.path("b.md"), fx.path("a.md")).unwrap();
    assert_eq!(read(&sb, "a.md").unwrap(), "two");
    assert_eq!(&*text(sb.read_text(&loc).unwrap()), "two");
}

#[test]
fn warm_link_swapped_in_never_reads_outside() {
    let fx = Fixture::new();
    fx.write("dir/a.md", "inside").write("b.md", "inside");
    std::fs::create_dir(fx.outside.join("dir")).unwrap();
    std::fs::write(fx.outside.join("dir/a.md"), SECRET).unwrap();
    settle();
    let sb = fx.sandbox();
    let a = sb.resolve("dir/a.md", None).unwrap();
    let b = sb.resolve("b.md", None).unwrap();
    assert_eq!(read(&sb, "dir/a.md").unwrap(), "inside");
    assert_eq!(read(&sb, "b.md").unwrap(), "inside");
    // The file itself becomes a link to the secret.
    std::fs::remove_file(fx.path("b.md")).unwrap();
    symlink(fx.outside.join("secret.txt"), fx.path("b.md")).unwrap();
    assert_eq!(code(sb.read_path("b.md", None)), Some(Code::Outside));
    assert_eq!(code(sb.read_text(&b)), Some(Code::Outside));
    message(&sb, "b.md");
    // A directory on the way becomes a link to an outside directory.
    std::fs::rename(fx.path("dir"), fx.path("dir.old")).unwrap();
    symlink("../outside/dir", fx.path("dir")).unwrap();
    assert_eq!(code(sb.read_path("dir/a.md", None)), Some(Code::Outside));
    assert_eq!(code(sb.read_text(&a)), Some(Code::Outside));
    message(&sb, "dir/a.md");
    // Even to a hard link of the cached file made after it was read: that moved its
    // status-change time.
    std::fs::remove_file(fx.outside.join("dir/a.md")).unwrap();
    std::fs::hard_link(fx.path("dir.old/a.md"), fx.outside.join("dir/a.md")).unwrap();
    assert_eq!(code(sb.read_path("dir/a.md", None)), Some(Code::Outside));
    assert_eq!(code(sb.read_text(&a)), Some(Code::Outside));
}

#[test]
fn warm_path_becoming_denied_is_refused() {
    let fx = Fixture::new();
    fx.write("docs/a.md", "allowed").write("b.md", "allowed").write(".env", "TOKEN=1");
    fx.write(".git/a.md", "config");
    settle();
    let sb = fx.sandbox();
    let a = sb.resolve("docs/a.md", None).unwrap();
    let b = sb.resolve("b.md", None).unwrap();
    assert_eq!(read(&sb, "docs/a.md").unwrap(), "allowed");
    assert_eq!(read(&sb, "b.md").unwrap(), "allowed");
    // The file becomes a link to a denied file.
    std::fs::remove_file(fx.path("b.md")).unwrap();
    symlink(".env", fx.path("b.md")).unwrap();
    assert_eq!(code(sb.read_path("b.md", None)), Some(Code::Denied));
    assert_eq!(code(sb.read_text(&b)), Some(Code::Denied));
    // A directory on the way becomes a link into `.git`.
    std::fs::rename(fx.path("docs"), fx.path("docs.old")).unwrap();
    symlink(".git", fx.path("docs")).unwrap();
    assert_eq!(code(sb.read_path("docs/a.md", None)), Some(Code::Denied));
    assert_eq!(code(sb.read_text(&a)), Some(Code::Denied));
    // Also when the denied name is a hard link of the cached file made after it was read.
    std::fs::remove_file(fx.path(".git/a.md")).unwrap();
    std::fs::hard_link(fx.path("docs.old/a.md"), fx.path(".git/a.md")).unwrap();
    assert_eq!(code(sb.read_path("docs/a.md", None)), Some(Code::Denied));
    assert_eq!(code(sb.read_text(&a)), Some(Code::Denied));
}

/// The documented limit of the warm path, and the proof that it skips the open: a link
/// swapped into a directory on the way, to a hard link of the cached file that already
/// existed when it was read, serves the cached file's own bytes where a full resolution
/// refuses.
#[test]
fn warm_path_serves_an_old_hard_link_of_the_same_file() {
    let fx = Fixture::new();
    fx.write("docs/a.md", "allowed").mkdir(".git");
    std::fs::hard_link(fx.path("docs/a.md"), fx.path(".git/a.md")).unwrap();
    settle();
    let sb = fx.sandbox();
    let (_, first) = sb.read_path("docs/a.md", None).unwrap();
    std::fs::rename(fx.path("docs"), fx.path("docs.old")).unwrap();
    symlink(".git", fx.path("docs")).unwrap();
    let (_, again) = sb.read_path("docs/a.md", None).unwrap();
    assert!(Text::ptr_eq(&text(first), &text(again)), "the same bytes, from the cache");
    assert_eq!(
        code(fx.sandbox().read_path("docs/a.md", None)),
        Some(Code::Denied),
        "a cold read refuses"
    );
}

#[test]
fn warm_path_needs_a_settled_status_change_time() {
    let fx = Fixture::new();
    fx.write("docs/a.md", "allowed").mkdir(".git");
    std::fs::hard_link(fx.path("docs/a.md"), fx.path(".git/a.md")).unwrap();
    settle();
    // The status-change time moves now; the modification time stays old.
    std::fs::File::options()
        .write(true)
        .open(fx.path("docs/a.md"))
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(600))
        .unwrap();
    let sb = fx.sandbox();
    sb.read_path("docs/a.md", None).unwrap();
    std::fs::rename(fx.path("docs"), fx.path("docs.old")).unwrap();
    symlink(".git", fx.path("docs")).unwrap();
    // Cached, but only validated on an opened handle: the full resolution refuses.
    assert_eq!(code(sb.read_path("docs/a.md", None)), Some(Code::Denied));
}
