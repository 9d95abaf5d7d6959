//! `Index::refresh_paths`: an update that lists only the folders of the changes a watch
//! reported gives the index a whole walk gives, and asks for the whole walk wherever a partial
//! listing could differ (an ignore file, a link, a path out of the workspace).

use std::path::Path;

use ctx_suggest::{Index, Options};

const PROMPTS: [&str; 3] = ["retry the request", "parse the configuration", "new feature"];

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    crate::write_tree(
        dir.path(),
        &[
            ("src/a.rs", "/// Retries the request.\npub fn retry() {}\n"),
            ("src/b.rs", "/// Parses the configuration.\npub fn parse_config() {}\n"),
            ("src/deep/c.rs", "pub fn deep_config() { parse_config(); }\n"),
            ("README.md", "Retry and parse.\n"),
            (".gitignore", "out/\n"),
            ("out/x.rs", "pub fn ignored_retry() {}\n"),
            (".hidden/h.rs", "pub fn hidden_retry() {}\n"),
            ("target/t.rs", "pub fn skipped_retry() {}\n"),
        ],
    );
    dir
}

/// What an index answers, to compare with a fresh build's.
fn answers(dir: &Path, index: &Index) -> Vec<String> {
    let sandbox = crate::sandbox(dir);
    let opts = Options::default().explain(true);
    let mut out = vec![format!("{} files, {:?}", index.len(), index.class_counts())];
    for prompt in PROMPTS {
        out.push(format!("{:?}", index.suggest(&sandbox, prompt, &opts)));
    }
    out
}

/// Applies `change` to the tree, refreshes the index for `paths` and checks it against a
/// fresh build; returns what the partial refresh did.
#[track_caller]
fn check(
    dir: &Path,
    index: &mut Index,
    paths: &[&str],
    change: impl FnOnce(&Path),
) -> ctx_suggest::UpdateStats {
    change(dir);
    let sandbox = crate::sandbox(dir);
    let stats = index.refresh_paths(&sandbox, paths).unwrap().expect("a partial refresh");
    let (fresh, _) = Index::build(&sandbox).unwrap();
    assert_eq!(answers(dir, index), answers(dir, &fresh), "after {paths:?}");
    stats
}

#[test]
fn a_partial_refresh_gives_the_whole_walks_index() {
    let dir = tree();
    let sandbox = crate::sandbox(dir.path());
    let (mut index, _) = Index::build(&sandbox).unwrap();
    let p = dir.path();
    let write = |path: &str, text: &str| crate::write_tree(p, &[(path, text)]);
    let stats = check(p, &mut index, &["src/a.rs"], |_| {
        write("src/a.rs", "/// Retries the request twice.\npub fn retry_twice() {}\n")
    });
    assert_eq!((stats.indexed, stats.removed), (1, 0));
    let stats = check(p, &mut index, &["src/new.rs"], |_| {
        write("src/new.rs", "/// A new feature.\npub fn new_feature() {}\n")
    });
    assert_eq!((stats.indexed, stats.files), (1, 5));
    let stats =
        check(p, &mut index, &["src/b.rs"], |d| std::fs::remove_file(d.join("src/b.rs")).unwrap());
    assert_eq!((stats.indexed, stats.removed), (0, 1));
    let stats = check(p, &mut index, &["src/pkg"], |_| {
        write("src/pkg/one.rs", "pub fn feature_one() {}\n");
        write("src/pkg/two.rs", "pub fn feature_two() { new_feature(); }\n");
    });
    assert_eq!(stats.indexed, 2);
    check(p, &mut index, &["src/pkg", "src/pkg2"], |d| {
        std::fs::rename(d.join("src/pkg"), d.join("src/pkg2")).unwrap()
    });
    let stats = check(p, &mut index, &["src/deep"], |d| {
        std::fs::remove_dir_all(d.join("src/deep")).unwrap()
    });
    assert_eq!(stats.removed, 1);
    check(p, &mut index, &["NEW.md"], |_| write("NEW.md", "A new feature, retried.\n"));
    // Changes the whole walk never lists change nothing.
    for path in ["out/x.rs", ".hidden/h.rs", "target/t.rs", "out/y.rs"] {
        let stats =
            check(p, &mut index, &[path], |_| write(path, "pub fn new_feature_retry() {}\n"));
        assert_eq!((stats.indexed, stats.removed), (0, 0), "{path}");
    }
}

#[test]
fn what_a_partial_listing_cannot_tell_asks_for_the_whole_walk() {
    let dir = tree();
    let sandbox = crate::sandbox(dir.path());
    let mut index = Index::new(ctx_suggest::SymbolSource::default());
    assert!(index.refresh_paths(&sandbox, &["src/a.rs"]).unwrap().is_none(), "never walked");
    index.refresh(&sandbox).unwrap();
    for paths in [
        &[".gitignore"][..],
        &["src/.ignore"],
        &["../outside.rs"],
        &["/etc/passwd"],
        &["src/../../x"],
        &[""],
        &["src//a.rs"],
    ] {
        assert!(index.refresh_paths(&sandbox, paths).unwrap().is_none(), "{paths:?}");
    }
    let many: Vec<String> =
        (0..=ctx_suggest::MAX_PARTIAL_FOLDERS).map(|i| format!("d{i}/f.rs")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    assert!(index.refresh_paths(&sandbox, &many).unwrap().is_none(), "too many folders");
    // A link in the tree: a file behind it changes without a change under its path.
    #[cfg(unix)]
    {
        // Relative: a link with an absolute target counts as leaving the root.
        std::os::unix::fs::symlink("src", dir.path().join("alias")).unwrap();
        let stats = index.refresh(&sandbox).unwrap();
        assert_eq!(stats.indexed, 3, "the link is followed");
        assert!(index.refresh_paths(&sandbox, &["src/a.rs"]).unwrap().is_none());
    }
}
