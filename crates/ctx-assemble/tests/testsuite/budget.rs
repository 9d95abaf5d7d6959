//! The token budget keeps everything the model receives within it (assembly.md §7, "Limits on
//! content"): for random files, mentions, formats and budgets, the exact o200k count of the
//! output without the prompt's own text is at most the budget, and every file the budget cut
//! or left out is said in the output.

use std::sync::Arc;

use ctx_assemble::{Assembler, Format, Options};
use ctx_fs::Sandbox;
use proptest::prelude::*;

fn assembler(dir: &std::path::Path, options: Options) -> Assembler {
    let sandbox =
        Sandbox::builder(dir.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
    Assembler::new(Arc::new(sandbox), options)
}

/// The words files are made of: prose, code, digits, punctuation, wide characters.
const WORDS: &[&str] = &[
    "the",
    "budget",
    "fn",
    "main()",
    "{",
    "}",
    "let x = 1;",
    "42",
    "1234567",
    "<tag>",
    "`code`",
    "```",
    "日本語",
    "naïve",
    "    ",
    "\t",
    "-->",
    "&amp;",
    "#",
    "@",
    "[...]",
];

fn file() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::collection::vec(prop::sample::select(WORDS), 0..12), 0..60)
        .prop_map(|lines| lines.iter().map(|l| l.join(" ") + "\n").collect())
}

fn format() -> impl Strategy<Value = Format> {
    prop::sample::select(vec![Format::Inline, Format::Xml, Format::Markdown, Format::Json])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_whole_output_stays_within_the_budget(
        files in prop::collection::vec(file(), 1..6),
        mentions in prop::collection::vec(0usize..8, 1..8),
        budget in prop::sample::select(vec![1usize, 10, 60, 120, 200, 300, 500, 900, 2000, 5000]),
        format in format(),
        directory in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        for (i, text) in files.iter().enumerate() {
            std::fs::write(dir.path().join(format!("d/f{i}.txt")), text).unwrap();
        }
        let mut prompt = String::from("look at");
        for m in &mentions {
            prompt.push_str(&format!(" @d/f{}.txt", m % files.len()));
        }
        if directory {
            prompt.push_str(" and @d/");
        }
        let mut options = Options { format, ..Options::for_prompt() };
        options.limits.max_tokens = budget;
        let assembly = assembler(dir.path(), options).assemble_str(&prompt, "-");
        let out = assembly.content.replacen(&prompt, "", 1);
        let n = ctx_tokens::count(&out);
        prop_assert!(n <= budget, "{n} tokens over a budget of {budget}:\n{}", assembly.content);
        // Whatever the budget cut or left out is said in band when there is room to say it.
        let reached = format!("token budget of {budget} (o200k) reached");
        let spent = format!("token budget of {budget} (o200k) spent");
        for record in &assembly.references {
            if record.cut.is_some() {
                prop_assert!(out.contains(&reached), "{}", out);
            }
            if record.dropped > 0 && budget >= 200 {
                prop_assert!(out.contains(&spent), "{}", out);
            }
        }
    }
}

/// A tree of the shapes that stress counting: many empty files, one long line of words, one
/// long word, code. `big` scales the long ones.
fn hostile_tree(big: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    std::fs::create_dir(&root).unwrap();
    for i in 0..2000 {
        std::fs::write(root.join(format!("e{i:04}.txt")), "").unwrap();
    }
    std::fs::write(root.join("line.txt"), "word and ünï 42 ".repeat(big / 16)).unwrap();
    std::fs::write(root.join("word.txt"), "a".repeat(big / 4)).unwrap();
    std::fs::write(root.join("code.rs"), "fn main() {\n    let x = 1;\n}\n".repeat(big / 28))
        .unwrap();
    dir
}

fn expand_tree(
    dir: &std::path::Path,
    max_tokens: usize,
    count_tokens: bool,
) -> ctx_assemble::Assembly {
    let mut options = Options { format: Format::Xml, count_tokens, ..Options::for_prompt() };
    options.limits.max_tokens = max_tokens;
    options.limits.max_files = 0;
    options.limits.max_lines = 0;
    options.limits.max_output_bytes = 0;
    let mut limits = ctx_fs::Limits::default();
    limits.max_file_bytes = 64 << 20;
    let sandbox = Sandbox::builder(dir.to_str().unwrap())
        .limits(limits)
        .open(cap_std::ambient_authority())
        .unwrap();
    Assembler::new(Arc::new(sandbox), options).assemble_str("see @t/", "-")
}

/// Attack: an expansion whose bytes pass the budget while its tokens do not, over many empty
/// files and megabytes of one line and one word, so that what is written is counted beside the
/// writing, chunk by chunk. What must not happen: a count other than the plain one (the output
/// must be the unbudgeted output, byte for byte, and the records' tokens those of a plain
/// count), a cut, a hang.
#[test]
fn a_budget_between_tokens_and_bytes_counts_beside_the_writing_exactly() {
    let dir = hostile_tree(1 << 20);
    let plain = expand_tree(dir.path(), 0, false);
    let bytes = plain.content.len();
    let tokens = ctx_tokens::count(&plain.content.replacen("see @t/", "", 1));
    assert!(tokens < bytes / 2, "{tokens} tokens of {bytes} bytes");
    let budgeted = expand_tree(dir.path(), bytes / 2, true);
    assert_eq!(budgeted.content, plain.content);
    assert!(budgeted.references.iter().all(|r| r.cut.is_none() && r.dropped == 0));
    let counted = expand_tree(dir.path(), 0, true);
    assert_eq!(budgeted.stats.tokens, counted.stats.tokens);
    assert!(counted.stats.tokens.is_some());
    // A budget just under the count cuts, and what is written stays within it.
    let tight = expand_tree(dir.path(), tokens - 1000, false);
    let n = ctx_tokens::count(&tight.content.replacen("see @t/", "", 1));
    assert!(n <= tokens - 1000, "{n} tokens over {}", tokens - 1000);
}
