//! The postings by term (`Index::keep_term_lists`): the ranking answers the same with them as
//! without, and an update keeps them only where they still fit the index.

use std::path::Path;

use ctx_suggest::{Index, Options};

#[test]
fn the_ranking_fixtures_rank_the_same_with_term_lists() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ranking");
    let mut cases = 0;
    for case in std::fs::read_dir(&fixtures).unwrap() {
        let dir = case.unwrap().path();
        let prompt = std::fs::read_to_string(dir.join("prompt.txt")).unwrap();
        let sandbox = crate::sandbox(&dir.join("tree"));
        let (index, _) = Index::build(&sandbox).unwrap();
        let opts = Options::default().explain(true);
        let want = index.suggest(&sandbox, prompt.trim(), &opts);
        assert_eq!(index.term_lists_bytes(), 0);
        index.keep_term_lists();
        assert!(index.term_lists_bytes() > 0);
        assert_eq!(index.suggest(&sandbox, prompt.trim(), &opts), want, "{}", dir.display());
        cases += 1;
    }
    assert!(cases >= 6);
}

/// The answers of `index` with its postings by term (kept from before the last update when
/// it kept them, else built now), and of a fresh index without them, are the same.
fn answers_as_a_fresh_index(index: &Index, sandbox: &ctx_fs::Sandbox) {
    let opts = Options::default().explain(true);
    let (fresh, _) = Index::build(sandbox).unwrap();
    for prompt in [
        "encode the request body",
        "send a request with a deadline",
        "retry until the deadline",
        "item_3 and item_17",
        "`helper` in lib/m5.rs",
    ] {
        let want = fresh.suggest(sandbox, prompt, &opts);
        assert_eq!(index.suggest(sandbox, prompt, &opts), want, "{prompt}");
        index.keep_term_lists();
        assert_eq!(index.suggest(sandbox, prompt, &opts), want, "{prompt}");
    }
}

#[test]
fn files_of_equal_scores_come_in_the_order_of_their_paths_with_term_lists() {
    let tree = tempfile::tempdir().unwrap();
    // The same text under paths whose order as strings is not the walk's (`-` sorts before
    // `/`), so that only the paths order the ties.
    let text = "/// Parses the buffer.\npub fn parse_buffer() {}\n";
    let paths =
        ["a/b/x.rs", "a-b/x.rs", "a/x.rs", "a.b/x.rs", "ab/x.rs", "a/b-c/x.rs", "a/b/c/x.rs"];
    for path in paths {
        crate::write_tree(tree.path(), &[(path, text)]);
    }
    let sandbox = crate::sandbox(tree.path());
    let (index, _) = Index::build(&sandbox).unwrap();
    let opts = Options::default().limit(20);
    let want = index.suggest(&sandbox, "parse the buffer", &opts);
    let mut sorted: Vec<&str> = paths.to_vec();
    sorted.sort_unstable();
    assert_eq!(want.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(), sorted);
    index.keep_term_lists();
    assert_eq!(index.suggest(&sandbox, "parse the buffer", &opts), want);
}

#[test]
fn term_lists_follow_updates_and_answer_as_a_fresh_index() {
    let tree = tempfile::tempdir().unwrap();
    crate::write_tree(
        tree.path(),
        &[
            ("src/retry.rs", "/// Retries until the deadline.\npub fn retry() { send(); }\n"),
            ("src/http.rs", "/// Sends one request.\npub fn send() { helper(); }\n"),
        ],
    );
    // Enough files that a few changed ones do not make the blob worth rebuilding.
    for i in 0..40 {
        let text = format!("/// Item {i}, a helper.\npub fn item_{i}() {{ helper(); }}\n");
        crate::write_tree(tree.path(), &[(&format!("lib/m{i}.rs"), &text)]);
    }
    let sandbox = crate::sandbox(tree.path());
    let (mut index, _) = Index::build(&sandbox).unwrap();
    index.keep_term_lists();
    // A file added before the others, one changed, one removed: a whole walk.
    crate::write_tree(
        tree.path(),
        &[
            ("a/body.rs", "/// Encodes a request body.\npub fn encode() { helper(); }\n"),
            ("lib/m5.rs", "/// Item five, with a deadline.\npub fn helper() {}\n"),
        ],
    );
    std::fs::remove_file(tree.path().join("lib/m9.rs")).unwrap();
    index.refresh(&sandbox).unwrap();
    assert!(index.term_lists_bytes() > 0, "kept through an update of three files");
    answers_as_a_fresh_index(&index, &sandbox);
    // Then the update of one folder the watch names, a file read again that was read since.
    crate::write_tree(
        tree.path(),
        &[("lib/m5.rs", "/// Sends with a deadline.\npub fn send_late() {}\n")],
    );
    crate::write_tree(tree.path(), &[("lib/m0.rs", "pub fn item_0() { send_late(); }\n")]);
    index.refresh_paths(&sandbox, &["lib/m5.rs", "lib/m0.rs"]).unwrap().unwrap();
    assert!(index.term_lists_bytes() > 0, "kept through a partial update");
    answers_as_a_fresh_index(&index, &sandbox);
    // Most files removed: the blob is rebuilt, and the lists with it; the order of the paths
    // (four bytes a file) follows.
    for i in 10..40 {
        let _ = std::fs::remove_file(tree.path().join(format!("lib/m{i}.rs")));
    }
    index.refresh(&sandbox).unwrap();
    assert_eq!(index.term_lists_bytes(), 4 * index.len(), "the lists of the blob before");
    answers_as_a_fresh_index(&index, &sandbox);
}
