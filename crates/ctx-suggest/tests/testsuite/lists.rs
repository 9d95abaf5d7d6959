//! The postings by term (`Index::keep_term_lists`): the ranking answers the same with them as
//! without, and any update drops them rather than answer from lists of another index.

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

#[test]
fn an_update_drops_the_term_lists() {
    let tree = tempfile::tempdir().unwrap();
    crate::write_tree(
        tree.path(),
        &[
            ("src/retry.rs", "/// Retries until the deadline.\npub fn retry() { send(); }\n"),
            ("src/http.rs", "/// Sends one request.\npub fn send() {}\n"),
        ],
    );
    let sandbox = crate::sandbox(tree.path());
    let (mut index, _) = Index::build(&sandbox).unwrap();
    index.keep_term_lists();
    crate::write_tree(
        tree.path(),
        &[("src/body.rs", "/// Encodes a request body.\npub fn encode() {}\n")],
    );
    std::fs::remove_file(tree.path().join("src/retry.rs")).unwrap();
    index.refresh(&sandbox).unwrap();
    assert_eq!(index.term_lists_bytes(), 0, "the lists of the index before the update");
    index.keep_term_lists();
    crate::write_tree(tree.path(), &[("src/http.rs", "/// Sends a request.\npub fn send() {}\n")]);
    index.refresh_paths(&sandbox, &["src/http.rs"]).unwrap().unwrap();
    assert_eq!(index.term_lists_bytes(), 0, "the lists of the index before the update");
    let opts = Options::default().explain(true);
    let (fresh, _) = Index::build(&sandbox).unwrap();
    for prompt in ["encode the request body", "send a request", "retry until the deadline"] {
        let want = fresh.suggest(&sandbox, prompt, &opts);
        assert_eq!(index.suggest(&sandbox, prompt, &opts), want, "{prompt}");
        index.keep_term_lists();
        assert_eq!(index.suggest(&sandbox, prompt, &opts), want, "{prompt}");
    }
}
