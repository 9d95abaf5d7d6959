//! The stored index in segments: an update appends what changed, a removal a tombstone, too
//! many segments are merged, and a log cut short, damaged or changed under the update is
//! never the answer.

use std::path::{Path, PathBuf};

use ctx_fs::Store;
use ctx_suggest::{Index, Options};

/// A tree of a hundred files, its sandbox, and a store in a cache folder.
struct Setup {
    tree: tempfile::TempDir,
    _cache: tempfile::TempDir,
    sandbox: ctx_fs::Sandbox,
    store: Store,
    index: PathBuf,
}

const PROMPT: &str = "retry the request before the deadline";

fn setup() -> Setup {
    let (tree, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let files: Vec<(String, String)> = (0..100)
        .map(|i| {
            let body = format!(
                "/// Handles request {i} before its deadline.\npub fn handle_{i}() {{ retry(); }}\n"
            );
            (format!("src/m{i:03}.rs"), body)
        })
        .chain([("src/retry.rs".to_owned(), "/// Retries.\npub fn retry() {}\n".to_owned())])
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, b)| (p.as_str(), b.as_str())).collect();
    crate::write_tree(tree.path(), &refs);
    let sandbox = crate::sandbox(tree.path());
    let store = Store::open(cache.path().to_str().unwrap(), cap_std::ambient_authority()).unwrap();
    Index::open(&sandbox, &store).unwrap();
    let index = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .unwrap();
    Setup { tree, _cache: cache, sandbox, store, index }
}

impl Setup {
    fn write(&self, path: &str, text: &str) {
        std::fs::write(self.tree.path().join(path), text).unwrap();
    }

    /// The answer of a fresh build, of the stored index opened, and of its bytes decoded.
    fn answers(&self) -> [Vec<ctx_suggest::Suggestion>; 3] {
        let opts = Options::default().explain(true);
        let (fresh, _) = Index::build(&self.sandbox).unwrap();
        let (opened, stats) = Index::open(&self.sandbox, &self.store).unwrap();
        assert_eq!(stats.indexed, 0, "the store is current");
        let decoded = Index::decode(&std::fs::read(&self.index).unwrap()).unwrap();
        [&fresh, &opened, &decoded].map(|i| i.suggest(&self.sandbox, PROMPT, &opts))
    }

    fn assert_current(&self) {
        let [fresh, opened, decoded] = self.answers();
        assert!(!fresh.is_empty());
        assert_eq!(opened, fresh);
        assert_eq!(decoded, fresh);
    }
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn an_update_appends_a_segment_and_answers_as_a_fresh_index() {
    let s = setup();
    let base = bytes(&s.index);
    s.write("src/m007.rs", "/// Retries the request with a deadline.\npub fn deadline() {}\n");
    let (_, stats) = Index::open(&s.sandbox, &s.store).unwrap();
    assert_eq!((stats.indexed, stats.removed), (1, 0));
    let stored = bytes(&s.index);
    assert_eq!(&stored[..base.len()], &base[..], "the base is left as it was");
    assert!(stored.len() > base.len() && stored.len() < base.len() + base.len() / 4);
    assert_eq!(stats.bytes, stored.len() as u64);
    s.assert_current();
}

#[test]
fn a_removed_file_leaves_a_tombstone() {
    let s = setup();
    let base = bytes(&s.index);
    std::fs::remove_file(s.tree.path().join("src/m042.rs")).unwrap();
    let (index, stats) = Index::open(&s.sandbox, &s.store).unwrap();
    assert_eq!((stats.indexed, stats.removed, index.len()), (0, 1, 100));
    let stored = bytes(&s.index);
    assert_eq!(&stored[..base.len()], &base[..]);
    assert!(stored.len() > base.len());
    let decoded = Index::decode(&stored).unwrap();
    assert_eq!(decoded.len(), 100);
    let opts = Options::default();
    assert!(
        decoded.suggest(&s.sandbox, "handle_42", &opts).iter().all(|h| h.path != "src/m042.rs")
    );
    s.assert_current();
}

#[test]
fn too_many_segments_are_merged() {
    let s = setup();
    let mut base = bytes(&s.index);
    let mut merges = 0;
    for round in 0..20 {
        s.write(
            &format!("src/m{:03}.rs", round * 3),
            &format!("/// Round {round} of the deadline.\npub fn round_{round}() {{ retry(); }}\n"),
        );
        let (_, stats) = Index::open(&s.sandbox, &s.store).unwrap();
        assert_eq!(stats.indexed, 1);
        let stored = bytes(&s.index);
        if stored[..base.len().min(stored.len())] != base[..] {
            // Merged: the whole index written again, with no log.
            merges += 1;
            assert_eq!(Index::decode(&stored).unwrap().encode(), stored, "round {round}");
            base = stored;
        }
        s.assert_current();
    }
    // At most eight segments a log: twenty updates merge at least twice.
    assert!(merges >= 2, "{merges} merges");
}

#[test]
fn an_append_cut_short_is_read_again() {
    let s = setup();
    s.write("src/m007.rs", "/// Retries the request with a deadline.\npub fn deadline() {}\n");
    Index::open(&s.sandbox, &s.store).unwrap();
    let stored = bytes(&s.index);
    // The crash came in the middle of the append: the segment is there in part.
    for cut in [1, 10, 40] {
        std::fs::write(&s.index, &stored[..stored.len() - cut]).unwrap();
        let (_, stats) = Index::open(&s.sandbox, &s.store).unwrap();
        assert!(!stats.rebuilt_corrupt, "the base is whole");
        assert_eq!(stats.indexed, 1, "the change is found again");
        s.assert_current();
        let merged = bytes(&s.index);
        assert_eq!(Index::decode(&merged).unwrap().encode(), merged, "merged, no log");
    }
}

#[test]
fn a_damaged_segment_is_never_the_answer() {
    let s = setup();
    let base = bytes(&s.index);
    s.write("src/m007.rs", "/// Retries the request with a deadline.\npub fn deadline() {}\n");
    Index::open(&s.sandbox, &s.store).unwrap();
    let stored = bytes(&s.index);
    for at in [base.len(), base.len() + 9, base.len() + 30, (base.len() + stored.len()) / 2] {
        let mut damaged = stored.clone();
        damaged[at] ^= 0x55;
        std::fs::write(&s.index, &damaged).unwrap();
        // Decoded, the damaged segment is left out: the index of before the update.
        let decoded = Index::decode(&damaged).unwrap();
        assert_eq!(decoded.encode(), Index::decode(&base).unwrap().encode(), "byte {at}");
        let (_, stats) = Index::open(&s.sandbox, &s.store).unwrap();
        assert_eq!(stats.indexed, 1, "byte {at}");
        s.assert_current();
    }
    // Garbage after the base: dropped, merged away.
    std::fs::write(&s.index, [&base[..], &[0xff; 4096][..]].concat()).unwrap();
    let (_, stats) = Index::open(&s.sandbox, &s.store).unwrap();
    assert!(!stats.rebuilt_corrupt);
    s.assert_current();
    assert_eq!(Index::decode(&bytes(&s.index)).unwrap().encode(), bytes(&s.index));
}

#[test]
fn a_tree_that_changes_during_updates_ends_current() {
    let s = setup();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let tree = s.tree.path();
        scope.spawn(|| {
            let mut round = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let i = round % 100;
                let path = tree.join(format!("src/m{i:03}.rs"));
                std::fs::write(path, format!("pub fn changed_{round}() {{ retry(); }}\n")).unwrap();
                if round.is_multiple_of(7) {
                    let _ = std::fs::remove_file(tree.join(format!("src/extra{}.rs", round / 7)));
                    std::fs::write(tree.join(format!("src/extra{round}.rs")), "fn e() {}\n")
                        .unwrap();
                }
                round += 1;
            }
        });
        for _ in 0..15 {
            let (index, _) = Index::open(&s.sandbox, &s.store).unwrap();
            assert!(index.len() >= 100);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    // Once the tree is still, one update brings the index to it, and it answers as new.
    std::thread::sleep(std::time::Duration::from_millis(20));
    Index::open(&s.sandbox, &s.store).unwrap();
    s.assert_current();
}

#[test]
fn an_empty_workspace_is_stored_once_and_grows_no_log() {
    let (tree, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let sandbox = crate::sandbox(tree.path());
    let store = Store::open(cache.path().to_str().unwrap(), cap_std::ambient_authority()).unwrap();
    let (_, first) = Index::open(&sandbox, &store).unwrap();
    assert!(first.bytes > 0, "stored");
    for _ in 0..12 {
        let (index, stats) = Index::open(&sandbox, &store).unwrap();
        assert!(index.is_empty());
        assert_eq!(stats.bytes, first.bytes);
    }
    // A file removed until the workspace is empty: a tombstone, then nothing more.
    crate::write_tree(tree.path(), &[("a.rs", "fn alpha() {}\n")]);
    Index::open(&sandbox, &store).unwrap();
    std::fs::remove_file(tree.path().join("a.rs")).unwrap();
    let (index, stats) = Index::open(&sandbox, &store).unwrap();
    assert_eq!((index.len(), stats.removed), (0, 1));
    let (_, again) = Index::open(&sandbox, &store).unwrap();
    assert_eq!(again.bytes, stats.bytes);
}

#[cfg(unix)]
#[test]
fn links_out_of_the_root_and_back_to_it_added_between_updates_are_never_indexed() {
    let s = setup();
    let outside = tempfile::tempdir().unwrap();
    let secret = "zanzibarquokkasecret";
    std::fs::write(outside.path().join("secret.rs"), format!("pub fn {secret}() {{}}\n")).unwrap();
    std::os::unix::fs::symlink(outside.path(), s.tree.path().join("src/outside")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.rs"), s.tree.path().join("leak.rs"))
        .unwrap();
    std::os::unix::fs::symlink("..", s.tree.path().join("src/loop")).unwrap();
    s.write("src/m001.rs", "/// Retries the request.\npub fn loop_guard() {}\n");
    let (index, stats) = Index::open(&s.sandbox, &s.store).unwrap();
    assert_eq!((stats.indexed, index.len()), (1, 101), "no file behind a link, no file twice");
    let opts = Options::default();
    assert!(index.suggest(&s.sandbox, secret, &opts).is_empty());
    let decoded = Index::decode(&bytes(&s.index)).unwrap();
    assert!(decoded.suggest(&s.sandbox, secret, &opts).is_empty());
    s.assert_current();
}
