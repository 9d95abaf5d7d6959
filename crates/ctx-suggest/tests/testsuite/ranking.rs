//! Ranking fixtures: `tests/fixtures/ranking/<case>/` holds a `tree/`, a `prompt.txt` and the
//! expected top suggestions in `expected.txt` (`UPDATE_EXPECT=1` regenerates them).

use std::path::Path;

use ctx_suggest::{Index, Options};
use expect_test::expect_file;

fn run_case(case: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ranking").join(case);
    let prompt = std::fs::read_to_string(dir.join("prompt.txt")).unwrap();
    let sandbox = crate::sandbox(&dir.join("tree"));
    let (index, _) = Index::build(&sandbox).unwrap();
    let found = index.suggest(&sandbox, prompt.trim(), &Options::default().limit(3).explain(true));
    let mut text = String::new();
    for s in &found {
        let ranges: Vec<String> =
            s.ranges.iter().map(|r| format!("{}-{}", r.start, r.end)).collect();
        let best = format!("{}-{}", s.lines.start, s.lines.end);
        assert!(ranges.contains(&best), "{best} among {ranges:?}");
        text.push_str(&format!("{}:{}  {}\n", s.path, ranges.join(","), s.summary));
        for why in &s.why {
            text.push_str(&format!("    {why}\n"));
        }
    }
    expect_file![dir.join("expected.txt")].assert_eq(&text);
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { run_case(stringify!($name)); })*
    };
}

cases!(
    rust_retry,
    python_identifier,
    typescript_graph,
    path_mention,
    asks_for_tests,
    long_file_range
);
