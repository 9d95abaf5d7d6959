//! A mentioned file that does not fit the token budget, reduced by the facade's reducer to its
//! outline and ranges: for random code files, mentions, formats and budgets, the whole output
//! but the prompt's own text stays within the budget, nothing hidden is written raw, and the
//! same inputs give the same bytes.

#![allow(clippy::disallowed_methods)] // Tests build their workspaces on disk.

use ctx::{Context, Format, Options};
use proptest::prelude::*;

/// The lines code files are made of: definitions of several languages, bodies, comments,
/// hidden characters.
const LINES: &[&str] = &[
    "fn retry_timeout() -> u32 {",
    "pub struct Pool {",
    "impl Pool {",
    "    fn shutdown(&self) {}",
    "def backoff(attempt):",
    "class Retry:",
    "    let x = pool.retry(timeout);",
    "    return 2 ** attempt",
    "}",
    "// the retry timeout of the pool",
    "    x + 1",
    "fn admin\u{202E}() {}",
    "    let s = \"日本語 naïve\";",
    "",
];

fn file() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(LINES), 0..200)
        .prop_map(|lines| lines.iter().map(|l| format!("{l}\n")).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_reduced_output_stays_within_the_budget(
        files in prop::collection::vec(file(), 1..4),
        budget in prop::sample::select(vec![1usize, 60, 150, 300, 600, 1500]),
        format in prop::sample::select(vec![Format::Inline, Format::Xml, Format::Markdown, Format::Json]),
        numbered in any::<bool>(),
        python in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let ext = if python { "py" } else { "rs" };
        let mut prompt = String::from("fix the retry timeout of");
        for (i, text) in files.iter().enumerate() {
            std::fs::write(dir.path().join(format!("f{i}.{ext}")), text).unwrap();
            prompt.push_str(&format!(" @f{i}.{ext}"));
        }
        let mut options = Options { format, line_numbers: numbered, ..Options::for_prompt() };
        options.limits.max_tokens = budget;
        let ctx = Context::builder().root(dir.path()).options(options).build().unwrap();
        let assembly = ctx.expand_prompt(&prompt);
        let out = assembly.content.replacen(&prompt, "", 1);
        let n = ctx::tokens::count(&out);
        prop_assert!(n <= budget, "{n} tokens over a budget of {budget}:\n{}", assembly.content);
        prop_assert!(!out.contains('\u{202E}'), "a hidden character written raw");
        for record in &assembly.references {
            if let Some(cut) = &record.cut
                && cut.view.is_some()
            {
                prop_assert!(out.contains("reached: kept the outline ("), "{}", out);
                for w in cut.ranges.windows(2) {
                    prop_assert!(w[0].end < w[1].start);
                }
            }
        }
        prop_assert_eq!(ctx.expand_prompt(&prompt).content, assembly.content);
    }
}
