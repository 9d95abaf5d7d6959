//! Fixture files: `test_data/ok/*.ctx` must scan without diagnostics, `test_data/err/*.ctx`
//! with at least one; each has its expected dump beside it as `*.dump`.

use std::path::{Path, PathBuf};

use expect_test::expect_file;

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data").join(dir);
    #[allow(clippy::disallowed_methods)] // Test data lives on disk; this is not product code.
    let entries = std::fs::read_dir(&dir).unwrap();
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ctx"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

fn run(dir: &str, want_errors: bool) {
    for path in fixtures(dir) {
        #[allow(clippy::disallowed_methods)]
        let text = std::fs::read_to_string(&path).unwrap();
        let scan = ctx_syntax::scan(&text);
        ctx_syntax::check(&text);
        assert_eq!(
            !scan.diagnostics.is_empty(),
            want_errors,
            "{}: {}",
            path.display(),
            if want_errors { "expected diagnostics" } else { "expected no diagnostics" }
        );
        expect_file![path.with_extension("dump")].assert_eq(&scan.dump());
    }
}

#[test]
fn ok_fixtures() {
    run("ok", false);
}

#[test]
fn err_fixtures() {
    run("err", true);
}
