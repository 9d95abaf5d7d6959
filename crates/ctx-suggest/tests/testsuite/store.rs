//! The stored index: incremental updates by stamp, two writers at once, and corrupt files.

use std::path::{Path, PathBuf};

use ctx_fs::Store;
use ctx_suggest::{Index, Options, SymbolSource};

fn store(dir: &Path) -> Store {
    Store::open(dir.to_str().unwrap(), cap_std::ambient_authority()).unwrap()
}

/// A tree of files with its sandbox, and an empty cache folder with its store.
struct Setup {
    tree: tempfile::TempDir,
    cache: tempfile::TempDir,
    sandbox: ctx_fs::Sandbox,
    store: Store,
}

fn setup(files: &[(&str, &str)]) -> Setup {
    let (tree, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    crate::write_tree(tree.path(), files);
    let (sandbox, store) = (crate::sandbox(tree.path()), store(cache.path()));
    Setup { tree, cache, sandbox, store }
}

fn index_files(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "idx"))
        .collect()
}

const TREE: &[(&str, &str)] = &[
    ("src/retry.rs", "/// Retries.\npub fn retry_with_timeout() { send(); }\n"),
    ("src/http.rs", "pub fn send() {}\n"),
    ("src/main.rs", "fn main() {}\n"),
];

#[test]
fn an_index_of_the_other_symbol_source_is_rebuilt() {
    let Setup { tree: _tree, cache: _cache, sandbox, store } = setup(TREE);
    let open = |source| Index::open_with(&sandbox, &store, source, |i| i.symbol_source()).unwrap();

    let (_, stats, asked) = open(SymbolSource::Scan);
    assert_eq!((stats.indexed, asked), (3, SymbolSource::Scan));
    let (_, stats, _) = open(SymbolSource::Scan);
    assert_eq!(stats.indexed, 0, "same source: kept");
    // The query never runs on the stored index of the other source.
    let (index, stats, asked) = open(SymbolSource::TreeSitter);
    assert_eq!((stats.indexed, stats.rebuilt_corrupt), (3, false));
    assert_eq!(
        (asked, index.symbol_source()),
        (SymbolSource::TreeSitter, SymbolSource::TreeSitter)
    );
    let (_, stats, _) = open(SymbolSource::TreeSitter);
    assert_eq!(stats.indexed, 0);
}

#[test]
fn updates_only_what_changed() {
    let Setup { tree, cache, sandbox, store } = setup(TREE);

    let (_, first) = Index::open(&sandbox, &store).unwrap();
    assert_eq!((first.files, first.indexed, first.reused), (3, 3, 0));
    assert!(first.bytes > 0);
    assert_eq!(index_files(cache.path()).len(), 1);

    let (_, second) = Index::open(&sandbox, &store).unwrap();
    assert_eq!((second.indexed, second.reused, second.removed), (0, 3, 0));

    std::fs::write(tree.path().join("src/http.rs"), "pub fn send_with_deadline() {}\n").unwrap();
    std::fs::remove_file(tree.path().join("src/main.rs")).unwrap();
    std::fs::write(tree.path().join("src/deadline.rs"), "pub fn deadline() {}\n").unwrap();
    let (index, third) = Index::open(&sandbox, &store).unwrap();
    assert_eq!((third.files, third.indexed, third.reused, third.removed), (3, 2, 1, 1));
    let found = index.suggest(&sandbox, "send_with_deadline", &Options::default());
    assert_eq!(found[0].path, "src/http.rs");

    // The stored copy has the same answers as the one in memory.
    let bytes = std::fs::read(&index_files(cache.path())[0]).unwrap();
    let stored = Index::decode(&bytes).unwrap();
    assert_eq!(stored.suggest(&sandbox, "send_with_deadline", &Options::default()), found);
}

#[test]
fn a_file_replaced_with_the_same_length_is_read_again() {
    let Setup { tree, cache: _cache, sandbox, store } = setup(&[("a.rs", "fn alpha() {}\n")]);
    Index::open(&sandbox, &store).unwrap();
    // Same length, new inode (written beside, then renamed over).
    std::fs::write(tree.path().join("b.tmp"), "fn gamma() {}\n").unwrap();
    std::fs::rename(tree.path().join("b.tmp"), tree.path().join("a.rs")).unwrap();
    let (index, stats) = Index::open(&sandbox, &store).unwrap();
    assert_eq!(stats.indexed, 1);
    assert_eq!(index.suggest(&sandbox, "gamma", &Options::default())[0].path, "a.rs");
}

#[test]
fn two_writers_at_once_leave_a_whole_index() {
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let files: Vec<(String, String)> =
        (0..200).map(|i| (format!("src/m{i}.rs"), format!("pub fn item_{i}() {{}}\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    crate::write_tree(tree.path(), &refs);
    std::thread::scope(|scope| {
        for worker in 0..2 {
            let (tree, cache) = (tree.path(), cache.path());
            scope.spawn(move || {
                // Each worker has its own sandbox and store handle, as two processes would.
                let sandbox = crate::sandbox(tree);
                let store = store(cache);
                for round in 0..5 {
                    let name = format!("src/w{worker}.rs");
                    std::fs::write(tree.join(&name), format!("pub fn round_{round}() {{}}\n"))
                        .unwrap();
                    let (index, _) = Index::open(&sandbox, &store).unwrap();
                    assert!(index.len() >= 200);
                }
            });
        }
    });
    let sandbox = crate::sandbox(tree.path());
    let bytes = std::fs::read(&index_files(cache.path())[0]).unwrap();
    let stored = Index::decode(&bytes).expect("a whole index");
    assert_eq!(stored.len(), 202);
    let (index, stats) = Index::open(&sandbox, &store(cache.path())).unwrap();
    assert_eq!((stats.indexed, stats.reused), (0, 202));
    assert_eq!(index.suggest(&sandbox, "round_4", &Options::default()).len(), 2);
    let leftovers: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_corrupt_index_is_rebuilt() {
    let Setup { tree: _tree, cache, sandbox, store } = setup(TREE);
    Index::open(&sandbox, &store).unwrap();
    let path = index_files(cache.path()).remove(0);
    let whole = std::fs::read(&path).unwrap();
    let mut flipped = whole.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x55;
    for bad in [b"garbage".to_vec(), whole[..whole.len() / 2].to_vec(), flipped, Vec::new()] {
        std::fs::write(&path, &bad).unwrap();
        assert!(Index::decode(&bad).is_none());
        let (index, stats) = Index::open(&sandbox, &store).unwrap();
        assert!(stats.rebuilt_corrupt);
        assert_eq!(stats.indexed, 3);
        assert_eq!(
            index.suggest(&sandbox, "retry timeout", &Options::default())[0].path,
            "src/retry.rs"
        );
        assert_eq!(std::fs::read(&path).unwrap().len(), whole.len());
    }
}

#[test]
fn terms_of_replaced_files_are_dropped_in_time() {
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let words = |round: usize| -> String {
        (0..100).map(|i| format!("fn word{round}x{i}() {{}}\n")).collect()
    };
    crate::write_tree(tree.path(), &[("a.rs", "fn steady() {}\n"), ("b.rs", &words(0))]);
    let sandbox = crate::sandbox(tree.path());
    let store = store(cache.path());
    let (first, _) = Index::open(&sandbox, &store).unwrap();
    let fresh = first.term_count();
    for round in 1..=6 {
        std::fs::write(tree.path().join("b.rs"), words(round)).unwrap();
        let (index, stats) = Index::open(&sandbox, &store).unwrap();
        assert_eq!(stats.indexed, 1);
        assert!(index.term_count() <= 2 * fresh + 2, "round {round}: {} terms", index.term_count());
        assert_eq!(
            index.suggest(&sandbox, &format!("word{round}x7"), &Options::default())[0].path,
            "b.rs"
        );
        assert!(
            index
                .suggest(&sandbox, &format!("word{}x7", round - 1), &Options::default())
                .is_empty()
        );
    }
}

#[test]
fn an_updated_index_answers_as_a_fresh_one() {
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    crate::write_tree(
        tree.path(),
        &[
            (
                "src/retry.rs",
                "/// Retries until the deadline.\npub fn retry_with_timeout() { send(); }\n",
            ),
            ("src/http.rs", "/// Sends one request.\npub fn send() { encode_body(); }\n"),
            ("src/body.rs", "/// Encodes a request body.\npub fn encode_body() {}\n"),
            ("src/main.rs", "fn main() { retry_with_timeout(); }\n"),
        ],
    );
    let sandbox = crate::sandbox(tree.path());
    let store = store(cache.path());
    Index::open(&sandbox, &store).unwrap();
    // Kept files sit in the stored buffer, changed ones are read again: both must answer.
    std::fs::write(
        tree.path().join("src/http.rs"),
        "/// Sends a request with a deadline.\npub fn send() { encode_body(); }\n",
    )
    .unwrap();
    std::fs::remove_file(tree.path().join("src/main.rs")).unwrap();
    let (updated, stats) = Index::open(&sandbox, &store).unwrap();
    assert_eq!((stats.indexed, stats.reused, stats.removed), (1, 2, 1));
    let (fresh, _) = Index::build(&sandbox).unwrap();
    assert_eq!(updated.definition_count(), fresh.definition_count());
    let stored = Index::decode(&std::fs::read(&index_files(cache.path())[0]).unwrap()).unwrap();
    let opts = Options::default().explain(true);
    for prompt in ["retry until the deadline", "encode the request body", "send with a deadline"] {
        let want = fresh.suggest(&sandbox, prompt, &opts);
        assert!(!want.is_empty(), "{prompt}");
        assert_eq!(updated.suggest(&sandbox, prompt, &opts), want, "{prompt}");
        assert_eq!(stored.suggest(&sandbox, prompt, &opts), want, "{prompt}");
    }
    let body = updated.suggest(&sandbox, "encode_body", &opts);
    assert_eq!(body[0].summary, "fn encode_body: Encodes a request body.");
}

#[test]
fn a_query_on_a_stored_index_sees_changes_made_since() {
    let Setup { tree, cache: _cache, sandbox, store } = setup(TREE);
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let ask = |index: &Index| {
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        index.suggest(&sandbox, "deadline", &Options::default())
    };
    // No stored index yet: asked once, after the build.
    let (_, _, found) = Index::open_with(&sandbox, &store, SymbolSource::Scan, ask).unwrap();
    assert!(found.is_empty());
    assert_eq!(calls.swap(0, std::sync::atomic::Ordering::Relaxed), 1);
    // Nothing changed: the answer of the stored index is the answer.
    let (_, stats, _) = Index::open_with(&sandbox, &store, SymbolSource::Scan, ask).unwrap();
    assert_eq!((stats.indexed, calls.swap(0, std::sync::atomic::Ordering::Relaxed)), (0, 1));
    // A file changed: asked again on the updated index, which finds it.
    std::fs::write(tree.path().join("src/http.rs"), "pub fn send_with_deadline() {}\n").unwrap();
    let (_, stats, found) = Index::open_with(&sandbox, &store, SymbolSource::Scan, ask).unwrap();
    assert_eq!((stats.indexed, calls.load(std::sync::atomic::Ordering::Relaxed)), (1, 2));
    assert_eq!(found[0].path, "src/http.rs");
}

#[test]
fn updates_keep_the_stored_index_whole_and_bounded() {
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let file = |i: usize, round: usize| {
        let body = format!(
            "/// Handles request {i} in round {round}.\npub fn handle_{i}() {{ helper_{round}(); }}\n\
             pub fn helper_{round}() {{}}\n"
        );
        (format!("src/m{i}.rs"), body)
    };
    let files: Vec<(String, String)> = (0..10).map(|i| file(i, 0)).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, b)| (p.as_str(), b.as_str())).collect();
    crate::write_tree(tree.path(), &refs);
    let sandbox = crate::sandbox(tree.path());
    let store = store(cache.path());
    Index::open(&sandbox, &store).unwrap();
    let opts = Options::default().explain(true);
    for round in 1..=12 {
        let (path, body) = file(round % 10, round);
        std::fs::write(tree.path().join(path), body).unwrap();
        let (updated, stats) = Index::open(&sandbox, &store).unwrap();
        assert_eq!(stats.indexed, 1, "round {round}");
        let stored = std::fs::read(&index_files(cache.path())[0]).unwrap();
        let (fresh, _) = Index::build(&sandbox).unwrap();
        let prompt = format!("handle request with helper_{round}");
        let want = fresh.suggest(&sandbox, &prompt, &opts);
        assert_eq!(updated.suggest(&sandbox, &prompt, &opts), want, "round {round}");
        let decoded = Index::decode(&stored).unwrap();
        assert_eq!(decoded.suggest(&sandbox, &prompt, &opts), want, "round {round}");
        // The parts of replaced files are dropped in time: the stored index stays within
        // a few tenths of a fresh one.
        let limit = fresh.encode().len() * 3 / 2;
        assert!(stored.len() <= limit, "round {round}: {} > {limit}", stored.len());
    }
}

#[test]
fn a_damaged_index_is_never_the_answer() {
    let Setup { tree: _tree, cache, sandbox, store } = setup(TREE);
    Index::open(&sandbox, &store).unwrap();
    let path = index_files(cache.path()).remove(0);
    let whole = std::fs::read(&path).unwrap();
    let (fresh, _) = Index::build(&sandbox).unwrap();
    let opts = Options::default().explain(true);
    let want = fresh.suggest(&sandbox, "retry timeout send", &opts);
    // The stored index is asked before its checksum is known: damage anywhere must neither
    // panic nor reach the answer.
    for step in [7, 13, 31] {
        let mut damaged = whole.clone();
        for i in (24..damaged.len()).step_by(step) {
            damaged[i] = damaged[i].wrapping_mul(31).wrapping_add(17);
        }
        std::fs::write(&path, &damaged).unwrap();
        let ask = |index: &Index| index.suggest(&sandbox, "retry timeout send", &opts);
        let (_, stats, found) =
            Index::open_with(&sandbox, &store, SymbolSource::Scan, ask).unwrap();
        assert!(stats.rebuilt_corrupt, "step {step}");
        assert_eq!(found, want, "step {step}");
    }
}

#[test]
fn a_token_budget_passes_over_files_that_do_not_fit() {
    let tree = tempfile::tempdir().unwrap();
    let big: String =
        (0..200).map(|i| format!("pub fn deadline_{i}() {{ deadline_check(); }}\n")).collect();
    crate::write_tree(
        tree.path(),
        &[
            ("src/big.rs", big.as_str()),
            ("src/one.rs", "/// The deadline.\npub fn deadline_one() {}\n"),
            ("src/two.rs", "/// Another deadline.\npub fn deadline_two() {}\n"),
            ("src/three.rs", "/// A third deadline.\npub fn deadline_three() {}\n"),
        ],
    );
    let sandbox = crate::sandbox(tree.path());
    let (index, _) = Index::build(&sandbox).unwrap();
    let paths = |opts: &Options| -> Vec<String> {
        index.suggest(&sandbox, "deadline", opts).into_iter().map(|s| s.path).collect()
    };
    let all = paths(&Options::default().limit(3));
    assert_eq!(all[0], "src/big.rs");
    // The big file's window does not fit in 60 tokens: the next files take its place, in
    // their order, up to the limit.
    let fitting = paths(&Options::default().limit(3).max_tokens(Some(60)));
    let small: Vec<String> =
        paths(&Options::default().limit(4)).into_iter().filter(|p| p != "src/big.rs").collect();
    assert_eq!(fitting, small);
}

#[test]
fn a_token_budget_is_in_the_tokens_the_assembler_counts() {
    // Digits apart are a token every two bytes: at four bytes a token, a range of them would
    // be taken at half what it costs once assembled.
    let digits: String = std::iter::once("/// The deadline digits.\npub fn deadline_digits() {}\n")
        .chain(std::iter::repeat_n("1 2 3 4 5 6 7 8 9\n", 40))
        .collect();
    let tree = tempfile::tempdir().unwrap();
    crate::write_tree(
        tree.path(),
        &[("src/digits.rs", digits.as_str()), ("src/one.rs", "pub fn deadline_one() {}\n")],
    );
    let sandbox = crate::sandbox(tree.path());
    let (index, _) = Index::build(&sandbox).unwrap();
    let paths = |budget: usize| -> Vec<String> {
        let opts = Options::default().limit(1).max_tokens(Some(budget));
        index.suggest(&sandbox, "deadline digits", &opts).into_iter().map(|s| s.path).collect()
    };
    let exact = ctx_tokens::count(&digits);
    assert!(digits.len().div_ceil(4) < exact, "the text under-counted at four bytes a token");
    // The whole file is its range: it fits a budget of exactly its tokens, and not one less.
    assert_eq!(paths(exact), ["src/digits.rs"]);
    assert_eq!(paths(exact - 1), ["src/one.rs"]);
    assert_eq!(paths(digits.len().div_ceil(4)), ["src/one.rs"]);
}

#[test]
fn a_range_of_one_enormous_word_is_passed_over_without_counting_it() {
    // The attack: a proposed range that is one line of one 900 000-byte word, which the merge
    // of o200k takes O(n log n) to count. Past a budget of 100 tokens it cannot fit (a token is
    // at most 128 bytes), so it is passed over before any merging and the next file is taken.
    let word = format!("pub fn deadline_huge() {{}} // {}\n", "a".repeat(900_000));
    let tree = tempfile::tempdir().unwrap();
    crate::write_tree(
        tree.path(),
        &[("src/huge.rs", word.as_str()), ("src/one.rs", "pub fn deadline_one() {}\n")],
    );
    let sandbox = crate::sandbox(tree.path());
    let (index, _) = Index::build(&sandbox).unwrap();
    let all: Vec<String> = index
        .suggest(&sandbox, "deadline huge", &Options::default().limit(2))
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(all, ["src/huge.rs", "src/one.rs"]);
    let opts = Options::default().limit(1).max_tokens(Some(100));
    let fitting: Vec<String> =
        index.suggest(&sandbox, "deadline huge", &opts).into_iter().map(|s| s.path).collect();
    assert_eq!(fitting, ["src/one.rs"]);
}

#[test]
fn an_index_of_another_version_is_rebuilt_without_calling_it_damaged() {
    let Setup { tree: _tree, cache, sandbox, store } = setup(TREE);
    Index::open(&sandbox, &store).unwrap();
    let path = index_files(cache.path()).remove(0);
    let mut bytes = std::fs::read(&path).unwrap();
    // The version follows the eight bytes of the magic number.
    bytes[8] = bytes[8].wrapping_sub(1);
    std::fs::write(&path, &bytes).unwrap();
    let (_, stats) = Index::open(&sandbox, &store).unwrap();
    assert!(!stats.rebuilt_corrupt);
    assert_eq!((stats.indexed, stats.reused), (3, 0));
}

#[test]
fn queries_while_another_process_updates_see_a_whole_index() {
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let files: Vec<(String, String)> = (0..100)
        .map(|i| {
            (format!("src/m{i}.rs"), format!("/// Retries item {i}.\npub fn item_{i}() {{}}\n"))
        })
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    crate::write_tree(tree.path(), &refs);
    Index::open(&crate::sandbox(tree.path()), &store(cache.path())).unwrap();
    std::thread::scope(|scope| {
        let (tree, cache) = (tree.path(), cache.path());
        // One "process" keeps changing a file and updating the stored index (a new file
        // renamed over the one the other may have mapped)...
        scope.spawn(move || {
            let (sandbox, store) = (crate::sandbox(tree), store(cache));
            for round in 0..20 {
                std::fs::write(tree.join("src/m0.rs"), format!("pub fn round_{round}() {{}}\n"))
                    .unwrap();
                Index::open(&sandbox, &store).unwrap();
            }
        });
        // ...while another asks it: every answer comes from a whole, current index.
        scope.spawn(move || {
            let (sandbox, store) = (crate::sandbox(tree), store(cache));
            for _ in 0..20 {
                let ask =
                    |index: &Index| index.suggest(&sandbox, "retries item", &Options::default());
                let (_, stats, found) =
                    Index::open_with(&sandbox, &store, SymbolSource::Scan, ask).unwrap();
                assert!(!stats.rebuilt_corrupt);
                assert_eq!(found.len(), 10);
            }
        });
    });
}

#[test]
fn an_index_in_memory_is_asked_while_it_is_refreshed() {
    let tree = tempfile::tempdir().unwrap();
    crate::write_tree(tree.path(), TREE);
    let sandbox = crate::sandbox(tree.path());
    let (mut index, _) = Index::build(&sandbox).unwrap();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let ask = |index: &Index| {
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        index.suggest(&sandbox, "deadline", &Options::default())
    };
    // Nothing changed: asked once, while walking.
    let (stats, found) = index.refresh_with(&sandbox, ask).unwrap();
    assert_eq!((stats.indexed, calls.swap(0, std::sync::atomic::Ordering::Relaxed)), (0, 1));
    assert!(found.is_empty());
    // A file changed: asked again after the update, which finds it.
    std::fs::write(tree.path().join("src/http.rs"), "pub fn send_with_deadline() {}\n").unwrap();
    let (stats, found) = index.refresh_with(&sandbox, ask).unwrap();
    assert_eq!((stats.indexed, calls.load(std::sync::atomic::Ordering::Relaxed)), (1, 2));
    assert_eq!(found[0].path, "src/http.rs");
}

/// A tree of `n` files that define and call each other's functions, with docs and a few
/// files that are not source.
fn linked_tree(n: usize) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = (0..n)
        .map(|i| {
            let body = format!(
                "/// Handles request {i} with a deadline.\npub fn handle_{i}() {{ helper_{}(); \
                 retry_with_timeout(); }}\n/// Helps {i}.\npub fn helper_{i}() {{}}\n\
                 pub fn retry_with_timeout() {{}}\n",
                (i * 7 + 3) % n
            );
            (format!("src/m{}/f{i}.rs", i % 9), body)
        })
        .collect();
    files.push(("README.md".into(), "# Requests\nHow requests are retried.\n".into()));
    files.push(("data/table.csv".into(), "a,b\n1,2\n".into()));
    files
}

#[test]
fn a_cold_index_streamed_to_the_store_is_the_index_built_in_memory() {
    let files = linked_tree(300);
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, b)| (p.as_str(), b.as_str())).collect();
    let Setup { tree: _tree, cache, sandbox, store } = setup(&refs);
    // The cold build streams its parts and graph to the store, never holding them in memory.
    let (opened, stats) = Index::open(&sandbox, &store).unwrap();
    assert_eq!(stats.indexed, files.len());
    let stored_files = index_files(cache.path());
    assert_eq!(stored_files.len(), 1);
    let stored = std::fs::read(&stored_files[0]).unwrap();
    assert_eq!(stats.bytes, stored.len() as u64);
    // The same bytes as the index built in memory, so the same answers.
    let (built, _) = Index::build(&sandbox).unwrap();
    assert!(stored == built.encode(), "the streamed index is the one built in memory");
    assert!(opened.encode() == stored, "the opened index reads the stored bytes");
    assert_eq!(opened.definition_count(), built.definition_count());
    let opts = Options::default().explain(true);
    for prompt in ["handle request 17 with a deadline", "helper_42", "retry_with_timeout"] {
        let want = built.suggest(&sandbox, prompt, &opts);
        assert!(!want.is_empty(), "{prompt}");
        assert_eq!(opened.suggest(&sandbox, prompt, &opts), want, "{prompt}");
    }
    // No temporary file is left beside it, and the next open keeps it.
    let names: Vec<String> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    let (_, stats) = Index::open(&sandbox, &store).unwrap();
    assert_eq!((stats.indexed, stats.bytes), (0, stored.len() as u64));
}

#[test]
fn a_cold_build_of_an_empty_workspace_is_stored_once() {
    let Setup { tree: _tree, cache, sandbox, store } = setup(&[]);
    let (index, stats) = Index::open(&sandbox, &store).unwrap();
    assert_eq!((index.len(), stats.indexed), (0, 0));
    let stored = std::fs::read(&index_files(cache.path())[0]).unwrap();
    assert!(stored == Index::build(&sandbox).unwrap().0.encode());
    let (_, stats) = Index::open(&sandbox, &store).unwrap();
    assert_eq!((stats.indexed, stats.rebuilt_corrupt), (0, false));
}

/// A query on the stored index after one change of each kind, made between queries: the
/// stamps compared in the walk's order, a change in the middle of that order ends the
/// comparison there and the rest is found by path; each answer is a fresh index's.
#[cfg(unix)]
#[test]
fn every_kind_of_change_is_seen_by_the_next_query() {
    let files: Vec<(String, String)> = ["a/one", "b/two", "c/three", "d/four", "f/six"]
        .iter()
        .map(|name| (format!("{name}.rs"), format!("/// Shared {name}.\npub fn shared() {{}}\n")))
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, b)| (p.as_str(), b.as_str())).collect();
    let Setup { tree, cache: _cache, sandbox, store } = setup(&refs);
    let root = tree.path().to_owned();
    let opts = Options::default().explain(true);
    let ask = |index: &Index| (index.len(), index.suggest(&sandbox, "shared secretword", &opts));
    Index::open(&sandbox, &store).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("leak.rs"), "pub fn secretword() {}\n").unwrap();
    let set_time = |path: &Path, time: std::time::SystemTime| {
        std::fs::File::options().write(true).open(path).unwrap().set_modified(time).unwrap();
    };
    let modified = |path: &Path| std::fs::metadata(path).unwrap().modified().unwrap();
    // What changed, the change, and the files then read and dropped.
    type Change<'a> = (&'a str, Box<dyn Fn() + 'a>, (usize, usize));
    let changes: Vec<Change> = vec![
        ("nothing", Box::new(|| {}), (0, 0)),
        (
            "rewritten in place, same length, another time",
            Box::new(|| {
                let path = root.join("b/two.rs");
                let before = modified(&path);
                std::fs::write(&path, "/// Shared B/TWO.\npub fn shared() {}\n").unwrap();
                set_time(&path, before + std::time::Duration::from_secs(3));
            }),
            (1, 0),
        ),
        (
            "replaced by a file of the same length and time",
            Box::new(|| {
                let path = root.join("c/three.rs");
                let before = modified(&path);
                let new = root.join("c/three.tmp");
                std::fs::write(&new, "/// Shared C/THREE.\npub fn shared() {}\n").unwrap();
                set_time(&new, before);
                std::fs::rename(&new, &path).unwrap();
            }),
            (1, 0),
        ),
        (
            "added in the middle",
            Box::new(|| {
                std::fs::write(root.join("b/two_more.rs"), "pub fn shared() {}\n").unwrap()
            }),
            (1, 0),
        ),
        ("removed", Box::new(|| std::fs::remove_file(root.join("a/one.rs")).unwrap()), (0, 1)),
        (
            "renamed",
            Box::new(|| std::fs::rename(root.join("d/four.rs"), root.join("d/five.rs")).unwrap()),
            (1, 1),
        ),
        (
            "a folder moved",
            Box::new(|| std::fs::rename(root.join("b"), root.join("e")).unwrap()),
            (2, 2),
        ),
        ("ignored", Box::new(|| std::fs::write(root.join(".gitignore"), "c/\n").unwrap()), (0, 1)),
        (
            "a link in the root",
            Box::new(|| std::os::unix::fs::symlink("f/six.rs", root.join("link.rs")).unwrap()),
            (1, 0),
        ),
        (
            "a link out of the root, and a cycle",
            Box::new(|| {
                std::os::unix::fs::symlink(outside.path(), root.join("f/out")).unwrap();
                std::os::unix::fs::symlink(outside.path().join("leak.rs"), root.join("leak.rs"))
                    .unwrap();
                std::os::unix::fs::symlink("..", root.join("f/loop")).unwrap();
            }),
            (0, 0),
        ),
    ];
    for (what, change, (indexed, removed)) in changes {
        change();
        let (_, stats, found) =
            Index::open_with(&sandbox, &store, SymbolSource::Scan, ask).unwrap();
        assert_eq!((stats.indexed, stats.removed), (indexed, removed), "{what}");
        let (fresh, _) = Index::build(&sandbox).unwrap();
        assert_eq!(found, ask(&fresh), "{what}");
        assert!(found.1.iter().all(|s| s.path != "leak.rs" && !s.path.contains("out/")), "{what}");
    }
}
