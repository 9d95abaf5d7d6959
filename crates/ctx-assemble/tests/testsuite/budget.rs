//! The token budget keeps everything the model receives within it (assembly.md §7, "Limits on
//! content"): for random files, mentions, formats and budgets, the exact o200k count of the
//! output without the prompt's own text is at most the budget, and every file the budget cut
//! or left out is said in the output, whatever a reducer gives for a file that does not fit.

use std::sync::Arc;

use ctx_assemble::record::Lines;
use ctx_assemble::{Assembler, Format, OnError, Options, Reduce, Reduced, Reducer};
use ctx_fs::Sandbox;
use proptest::prelude::*;

fn assembler(dir: &std::path::Path, options: Options) -> Assembler {
    let sandbox =
        Sandbox::builder(dir.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
    Assembler::new(Arc::new(sandbox), options)
}

/// A reducer that gives whatever it is told to, heedless of its room: `times` copies of the
/// file's first lines with a hidden character, ranges made up. The assembler must keep the
/// budget and make the text visible whatever a reducer gives.
struct Careless {
    times: usize,
}

impl Reducer for Careless {
    fn reduce(&self, file: &Reduce<'_>) -> Option<Reduced> {
        if self.times == 0 {
            return None;
        }
        let head: String = file.text.lines().take(3).map(|l| format!("{l}\u{202E}\n")).collect();
        let ranges = vec![Lines { start: 1, end: 3 }, Lines { start: 10, end: 12 }];
        Some(Reduced::new(head.repeat(self.times), ranges, 1, 2))
    }
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
        reduced in prop::sample::select(vec![0usize, 1, 4, 40, 4000]),
        attached in prop::collection::vec((0usize..8, any::<bool>()), 0..4),
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
        let assembler = assembler(dir.path(), options)
            .with_reducer(Arc::new(Careless { times: reduced }));
        // Attachments after the prompt's own mentions, whole or a range, the last of which
        // keeps no room for a closing note when it fits whole.
        let list: Vec<_> = attached
            .iter()
            .map(|&(m, whole)| {
                // A range past a short file's end fails: the list of failures is within the
                // budget too.
                let m = m % files.len();
                let lines = (!whole).then_some(Lines { start: 2, end: 9 });
                ctx_assemble::Attachment::suggested(format!("d/f{m}.txt"), lines)
            })
            .collect();
        let assembly = assembler.assemble_str_with(&prompt, "-", list.as_slice().into());
        prop_assert!(!assembly.content.contains('\u{202E}'), "a hidden character in the output");
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
            // A failure is listed, or counted in the line that ends the list, or the budget
            // was spent by content and notes before it failed (the room kept for what ends the
            // output went to the note of what was left out).
            if let Some(error) = record.error.as_ref().filter(|_| budget >= 200) {
                let listed = format!("- @{}: {}", record.raw.trim_start_matches('@'), error.code);
                prop_assert!(
                    out.contains(&listed)
                        || out.contains("not listed (token budget spent")
                        || out.contains(&spent),
                    "{listed} {error:?}\n{}",
                    out
                );
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
    expand_tree_with(dir, max_tokens, count_tokens, None)
}

fn expand_tree_with(
    dir: &std::path::Path,
    max_tokens: usize,
    count_tokens: bool,
    known: Option<Arc<ctx_tokens::KnownCounts>>,
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
    let mut assembler = Assembler::new(Arc::new(sandbox), options);
    if let Some(known) = known {
        assembler = assembler.with_known_counts(known);
    }
    assembler.assemble_str("see @t/", "-")
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

/// A file mentioned whole that does not fit is what the reducer gives, with its marker and
/// record; a ranged mention, or a reducer with nothing to give, is cut at its head as before.
#[test]
fn a_reduced_file_says_what_it_kept() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=300).map(|i| format!("line {i} of a with some words here\n")).collect();
    std::fs::write(dir.path().join("a.txt"), &text).unwrap();
    let mut options = Options { format: Format::Json, ..Options::for_prompt() };
    options.limits.max_tokens = 500;
    let reduce =
        |times| assembler(dir.path(), options.clone()).with_reducer(Arc::new(Careless { times }));
    let assembly = reduce(1).assemble_str("see @a.txt", "-");
    let out = &assembly.content;
    assert!(out.contains("line 1 of a with some words here\\u{202E}\n"), "{out}");
    assert!(out.contains(
        "[... token budget of 500 (o200k) reached: kept the outline (1 of 2 definitions) and lines \
         1-3, 10-12 of 1-300 ("
    ), "{out}");
    assert!(out.contains("the rest: @a.txt#La-b for lines a-b, or raise --max-tokens ...]"));
    let cut = assembly.references[0].cut.as_ref().unwrap();
    assert_eq!(cut.view.as_deref(), Some("outline"));
    assert_eq!(cut.ranges, vec![Lines { start: 1, end: 3 }, Lines { start: 10, end: 12 }]);
    assert_eq!(cut.kept, Lines { start: 1, end: 3 });
    assert_eq!((cut.total_lines, cut.total_tokens), (300, 3000));
    assert_eq!(assembly.references[0].tokens, Some(cut.kept_tokens));
    let warning = &assembly.diagnostics[0];
    assert!(warning.message.contains("a.txt reduced to its outline and lines 1-3, 10-12 of 300"));
    // The same inputs, the same bytes.
    assert_eq!(reduce(1).assemble_str("see @a.txt", "-").content, assembly.content);
    // A reduction over the room: cut at the head.
    for (prompt, times) in [("see @a.txt", 4000), ("see @a.txt#L1-200", 1), ("see @a.txt", 0)] {
        let assembly = reduce(times).assemble_str(prompt, "-");
        let cut = assembly.references[0].cut.as_ref().unwrap();
        assert_eq!(cut.view, None, "{prompt}");
        assert!(assembly.content.contains("reached: kept lines 1-"), "{}", assembly.content);
    }
}

/// An attachment held to its own tokens is reduced (or cut) to them whatever the budget
/// leaves, and one that fits them is whole.
#[test]
fn an_attachment_within_its_own_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=300).map(|i| format!("line {i} of a with some words here\n")).collect();
    std::fs::write(dir.path().join("a.txt"), &text).unwrap();
    std::fs::write(dir.path().join("b.txt"), "one line\n").unwrap();
    let mut options = Options::for_prompt();
    options.limits.max_tokens = 50_000;
    for times in [0, 1] {
        let assembler =
            assembler(dir.path(), options.clone()).with_reducer(Arc::new(Careless { times }));
        let list = [
            ctx_assemble::Attachment::suggested_within("a.txt", 120, Vec::new()),
            ctx_assemble::Attachment::suggested_within("b.txt", 120, Vec::new()),
        ];
        let assembly = assembler.assemble_str_with("see", "-", list.as_slice().into());
        let a = &assembly.references[0];
        assert!(a.suggested && a.tokens.unwrap() <= 120, "{a:?}");
        let cut = a.cut.as_ref().expect("cut to its tokens");
        assert_eq!(cut.view.is_some(), times == 1, "{cut:?}");
        assert!(assembly.content.contains("<file path=\"b.txt\">\none line\n</file>"));
        assert!(assembly.references[1].cut.is_none());
    }
}

/// Attack: files that the assembler changes before writing them (hidden characters made
/// visible, lines cut by the line limit, line numbers), in a directory whose files the reading
/// thread counts as it reads them. What must not happen: a count taken of the text as read
/// standing for the text as written. The records' tokens and the output must be those of the
/// run that counts each file as written (no reading ahead).
#[test]
fn the_count_taken_as_read_never_stands_for_a_changed_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    std::fs::create_dir(&root).unwrap();
    for i in 0..40 {
        let text = match i % 4 {
            0 => "fn main() { let x = 1; }\n".repeat(i + 1),
            1 => format!("hidden \u{202e}bidi\u{200b} text {i}\n").repeat(i + 1),
            2 => "a long file of many lines\n".repeat(300),
            _ => String::new(),
        };
        std::fs::write(root.join(format!("f{i:02}.txt")), text).unwrap();
    }
    for line_numbers in [false, true] {
        let run = |prefetch: bool, max_tokens: usize| {
            let mut options = Options {
                format: Format::Json,
                count_tokens: true,
                prefetch,
                line_numbers,
                ..Options::for_prompt()
            };
            options.limits.max_tokens = max_tokens;
            options.limits.max_lines = 100;
            assembler(dir.path(), options).assemble_str("see @t/", "-")
        };
        for max_tokens in [0, 1 << 20, 3000] {
            let ahead = run(true, max_tokens);
            let written = run(false, max_tokens);
            assert_eq!(ahead.content, written.content, "{line_numbers} {max_tokens}");
            assert_eq!(ahead.stats.tokens, written.stats.tokens, "{line_numbers} {max_tokens}");
            let tokens = |a: &ctx_assemble::Assembly| {
                a.references.iter().map(|r| r.tokens).collect::<Vec<_>>()
            };
            assert_eq!(tokens(&ahead), tokens(&written));
            assert!(ahead.stats.tokens.is_some_and(|n| n > 0));
        }
    }
}

/// The last attachment placed whole needs no room for a closing note, since nothing after it
/// can be left out: a plan that fills the budget (but for two tokens of slack) comes whole. Any other attachment,
/// or the last one after one was left out, keeps that room: what does not fit is cut with its
/// marker, and the output stays within the budget with every cut and drop said in it.
#[test]
fn the_last_attachment_fills_the_budget_without_room_for_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=40).map(|i| format!("line {i} of a with some words here\n")).collect();
    std::fs::write(dir.path().join("a.txt"), &text).unwrap();
    std::fs::write(dir.path().join("b.txt"), "one line\n").unwrap();
    let run = |budget: usize, list: &[&str]| {
        let mut options = Options::for_prompt();
        options.limits.max_tokens = budget;
        let list: Vec<_> =
            list.iter().map(|p| ctx_assemble::Attachment::suggested(*p, None)).collect();
        assembler(dir.path(), options).assemble_str_with("see", "-", list.as_slice().into())
    };
    let tokens =
        |a: &ctx_assemble::Assembly| ctx_tokens::count(a.content.strip_prefix("see").unwrap());
    for list in [&["a.txt"][..], &["b.txt", "a.txt"]] {
        let exact = tokens(&run(0, list));
        // Two tokens of slack: a Markdown fence may grow with the content.
        let fitted = run(exact + 2, list);
        assert_eq!(tokens(&fitted), exact, "{list:?}");
        assert!(fitted.references.iter().all(|r| r.cut.is_none() && r.dropped == 0), "{list:?}");
        // A token less: the last is cut, with its marker, within the budget.
        let under = run(exact - 1, list);
        assert!(tokens(&under) < exact, "{list:?}");
        assert!(under.content.contains("reached: kept lines 1-"), "{}", under.content);
    }
    // Not the last: the room for the note is kept, so the same budget cuts it.
    let exact = tokens(&run(0, &["a.txt", "b.txt"]));
    let first = run(exact + 2, &["a.txt", "b.txt"]);
    assert!(tokens(&first) <= exact);
    assert!(first.references[0].cut.is_some(), "{}", first.content);
    assert!(first.content.contains("reached: kept lines 1-"), "{}", first.content);
}

/// Attack: a prompt of many references that fail (ranges past a file's end), under a small
/// budget. What must not happen: a list of failures past the budget. The list holds what
/// fits, in order, then a line that counts the rest; the diagnostics name every failure; and
/// without a budget every failure is listed.
#[test]
fn the_list_of_failures_stays_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one line\n").unwrap();
    let mut prompt = String::from("see");
    for i in 0..40 {
        prompt.push_str(&format!(" @a.txt#L{}-{}", i + 5, i + 9));
    }
    for format in [Format::Inline, Format::Xml, Format::Markdown, Format::Json] {
        for budget in [0, 60, 200, 1000] {
            let mut options = Options { format, ..Options::for_prompt() };
            options.limits.max_tokens = budget;
            let assembly = assembler(dir.path(), options).assemble_str(&prompt, "-");
            let out = assembly.content.replacen(&prompt, "", 1);
            let errors = assembly.diagnostics.iter().filter(|d| d.code.as_str() == "E_RANGE");
            assert_eq!(errors.count(), 40, "{format:?} {budget}");
            let listed = out.matches("- @a.txt#L").count();
            if budget == 0 {
                assert_eq!(listed, 40, "{format:?}: {out}");
                continue;
            }
            let n = ctx_tokens::count(&out);
            assert!(n <= budget, "{format:?}: {n} tokens over {budget}: {out}");
            if budget >= 200 {
                assert!(out.contains("- @a.txt#L5-9: E_RANGE"), "{format:?}: {out}");
                let more = match listed {
                    0 => "40 not listed (token budget spent".to_owned(),
                    n => format!("{} more not listed (token budget spent", 40 - n),
                };
                assert!(listed < 40 && out.contains(&more), "{format:?} {budget}: {out}");
            }
        }
    }
}

/// Counts remembered by content (`ctx_tokens::KnownCounts`, kept between runs by the caller)
/// stand for the counts they replace: a run through them writes the bytes and the records of
/// a run that counts everything, under no budget, a budget that holds everything and one that
/// cuts; the next run, from the table stored, finds the texts remembered and writes the same.
#[test]
fn counts_remembered_by_content_change_no_byte_of_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    std::fs::create_dir(&root).unwrap();
    for i in 0..40 {
        let body = format!("fn f{i}() {{ let x = {i}; }}\n").repeat(40 + i);
        std::fs::write(root.join(format!("f{i:02}.rs")), body).unwrap();
        std::fs::write(root.join(format!("s{i:02}.rs")), format!("// {i}\n")).unwrap();
    }
    let whole = expand_tree(dir.path(), 0, true);
    let tokens = ctx_tokens::count(&whole.content.replacen("see @t/", "", 1));
    for max in [0, tokens + 1000, tokens / 2] {
        let plain = expand_tree(dir.path(), max, true);
        let known = Arc::new(ctx_tokens::KnownCounts::new());
        let first = expand_tree_with(dir.path(), max, true, Some(known.clone()));
        let stored = ctx_tokens::KnownCounts::from_stored(known.to_bytes());
        let stored = Arc::new(stored);
        let second = expand_tree_with(dir.path(), max, true, Some(stored.clone()));
        for run in [&first, &second] {
            assert_eq!(run.content, plain.content, "budget {max}");
            assert_eq!(run.stats.tokens, plain.stats.tokens, "budget {max}");
            let counts = |a: &ctx_assemble::Assembly| {
                a.references.iter().map(|r| (r.path.clone(), r.tokens)).collect::<Vec<_>>()
            };
            assert_eq!(counts(run), counts(&plain), "budget {max}");
        }
        assert!(known.changed(), "the first run took counts");
        assert!(stored.hits() > 0, "budget {max}: the second run found counts remembered");
    }
}

/// Attack: an included document of 40 references that all fail, assembled in place under
/// budgets from tiny to ample. What each failure leaves in the included document's text (its
/// marker) is part of that text: within the budget it is written on its own line; past it the
/// document's text ends with the budget's marker, and what is written stays within the budget
/// (the top-level document's own text aside). The diagnostics name every failure whatever the
/// budget.
#[test]
fn failures_in_an_included_document_stay_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let sub: String = std::iter::once("# Rules\n".to_owned())
        .chain((0..40).map(|i| format!("@[missing{i}.md]\n")))
        .collect();
    std::fs::write(dir.path().join("sub.md"), sub).unwrap();
    std::fs::write(dir.path().join("main.md"), "# Main\n@[sub.md]\n").unwrap();
    for max in [0, 20, 50, 120, 300, 100_000] {
        let mut options = Options::default();
        options.limits.max_tokens = max;
        let assembly = assembler(dir.path(), options).assemble_file("main.md").unwrap();
        let out = &assembly.content;
        let missing =
            assembly.diagnostics.iter().filter(|d| d.code.as_str() == "E_NOT_FOUND").count();
        assert_eq!(missing, 40, "budget {max}: every failure is named");
        assert!(!out.contains("--><!--"), "budget {max}: markers glued together:\n{out}");
        let markers = out.matches("<!-- ctx: E_NOT_FOUND").count();
        if max == 0 || max == 100_000 {
            assert_eq!(markers, 40, "budget {max}:\n{out}");
            continue;
        }
        let n = ctx_tokens::count(&out.replacen("# Main\n", "", 1));
        assert!(n <= max, "budget {max}: {n} tokens:\n{out}");
        assert!(markers < 40, "budget {max}:\n{out}");
        // The budget's marker where it fits (about 30 tokens); W_BUDGET in any case.
        if max >= 50 {
            assert!(out.contains("reached in sub.md"), "budget {max}: the cut is said:\n{out}");
        }
        let said = assembly.diagnostics.iter().filter(|d| d.code.as_str() == "W_BUDGET").count();
        assert_eq!(said, 1, "budget {max}");
    }
}

/// An escaped `@` (`\@`) of an included document is its text: past the budget's cut, none
/// of it is written, whatever the budget and wherever the escapes fall.
#[test]
fn escapes_after_the_cut_of_an_included_document_are_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let line = "mail us at team@example.org, see \\@[notes.md] or ask \\@support @@ about it\n";
    std::fs::write(dir.path().join("sub.md"), line.repeat(200)).unwrap();
    std::fs::write(dir.path().join("main.md"), "# Main\n@[sub.md]\n").unwrap();
    for max in [5, 20, 50, 120, 300, 1000] {
        let mut options = Options::default();
        options.limits.max_tokens = max;
        let assembly = assembler(dir.path(), options).assemble_file("main.md").unwrap();
        let out = &assembly.content;
        let n = ctx_tokens::count(&out.replacen("# Main\n", "", 1));
        assert!(n <= max, "budget {max}: {n} tokens:\n{out}");
        if let Some(at) = out.find("reached in sub.md") {
            let after = &out[at..];
            let end = after.find("-->").map_or(after.len(), |e| e + 3);
            assert_eq!(after[end..].trim(), "", "budget {max}: written after the cut:\n{out}");
        }
        let said = assembly.diagnostics.iter().filter(|d| d.code.as_str() == "W_BUDGET").count();
        assert_eq!(said, 1, "budget {max}");
    }
}

/// W_BUDGET names the line where an included document's text was cut: the first line not
/// written, not the line where the text began.
#[test]
fn the_warning_of_a_cut_names_the_line_where_it_falls() {
    let dir = tempfile::tempdir().unwrap();
    let sub: String =
        (1..=100).map(|i| format!("line {i} of the rules, in plain words\n")).collect();
    std::fs::write(dir.path().join("sub.md"), sub).unwrap();
    std::fs::write(dir.path().join("main.md"), "# Main\n@[sub.md]\n").unwrap();
    for max in [100, 300, 600] {
        let mut options = Options::default();
        options.limits.max_tokens = max;
        let assembly = assembler(dir.path(), options).assemble_file("main.md").unwrap();
        let kept = (1..=100)
            .take_while(|i| assembly.content.contains(&format!("line {i} of the rules")))
            .count();
        assert!(kept > 0 && kept < 100, "budget {max}: {kept} lines kept");
        let warning = assembly.diagnostics.iter().find(|d| d.code.as_str() == "W_BUDGET").unwrap();
        assert_eq!(warning.file, "sub.md", "budget {max}");
        let line = u32::try_from(kept + 1).unwrap();
        assert_eq!((warning.line, warning.column), (line, 1), "budget {max}");
    }
}

/// A budget smaller than the room kept for the note that ends the output (about 80 tokens)
/// still says in the output that something was cut or left out, in the longest of the note's
/// shorter forms that fits, from the few tokens of its shortest form up; and a prompt's
/// expansion never passes the budget doing so.
#[test]
fn a_budget_too_small_for_the_note_still_says_what_it_cut() {
    let dir = tempfile::tempdir().unwrap();
    let long: String =
        (1..=300).map(|i| format!("line {i} of the rules, in plain words\n")).collect();
    std::fs::write(dir.path().join("a.md"), &long).unwrap();
    std::fs::write(dir.path().join("b.txt"), &long).unwrap();
    std::fs::write(dir.path().join("main.md"), "# Main\n@[a.md]\n@[b.txt]\n").unwrap();
    let shortest = ctx_tokens::count("\n[... budget spent ...]\n");
    for max in 1..=100 {
        let mut options = Options::default();
        options.limits.max_tokens = max;
        // The document's own text (its heading, the ends of its lines) is not counted; the
        // budget of included documents is `included_documents_with_failures_stay_within_…`'s.
        let assembly = assembler(dir.path(), options).assemble_file("main.md").unwrap();
        let out = assembly.content.replacen("# Main\n", "", 1);
        let said = ["left out", "text cut", "budget spent", "reached in a.md"];
        if max >= shortest {
            assert!(said.iter().any(|s| out.contains(s)), "budget {max}, nothing said:\n{out}");
        }
        let mut options = Options::for_prompt();
        options.limits.max_tokens = max;
        let prompt = "see @b.txt and @a.md";
        let assembly = assembler(dir.path(), options).assemble_str(prompt, "-");
        let out = assembly.content.replacen(prompt, "", 1);
        assert!(ctx_tokens::count(&out) <= max, "budget {max}:\n{out}");
        if max >= shortest {
            assert!(said.iter().any(|s| out.contains(s)), "budget {max}, nothing said:\n{out}");
        }
        // With the budget named from about 30 tokens, and the files from about 35.
        if max >= 30 {
            let named = out.contains("left out b.txt, a.md");
            let counted = format!("budget of {max} (o200k) spent: 2 files left out");
            assert!(named || out.contains(&counted), "budget {max}:\n{out}");
        }
    }
}

/// What a failed reference leaves in the top-level document's own text is that text's: it is
/// not counted against the budget, so it never leaves a file after it out unsaid, and a small
/// file that fits the budget is placed rather than left out to keep room for naming files.
#[test]
fn the_documents_own_failures_take_no_room_from_the_files_after_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.rs"), "fn small() {}\n").unwrap();
    std::fs::write(dir.path().join("top.md"), "Intro.\n@[missing.md]\n@[small.rs]\n").unwrap();
    let marker = "<!-- ctx: E_NOT_FOUND: no such file or directory: missing.md -->\n";
    let shortest = ctx_tokens::count("\n[... budget spent ...]\n");
    let mut placed = 0;
    for max in 1..=120 {
        let mut options = Options::default();
        options.limits.max_tokens = max;
        let assembly = assembler(dir.path(), options).assemble_file("top.md").unwrap();
        let out = &assembly.content;
        assert!(out.starts_with(&format!("Intro.\n{marker}")), "budget {max}:\n{out}");
        // The line end after the reference left out is the document's own text too.
        let added = &out["Intro.\n".len() + marker.len()..];
        let added = added.strip_prefix('\n').unwrap_or(added);
        assert!(ctx_tokens::count(added) <= max, "budget {max}:\n{out}");
        if out.contains("fn small() {}") {
            placed += 1;
        } else if max >= shortest {
            let said = ["left out", "budget spent"];
            assert!(said.iter().any(|s| added.contains(s)), "budget {max}, not said:\n{out}");
        }
        // From a budget that holds the file and the room of the counted note, it is placed.
        if max >= 40 {
            assert!(out.contains("fn small() {}"), "budget {max}:\n{out}");
        }
    }
    assert!(placed >= 80, "placed at {placed} budgets");
}

/// A directory expansion closes with its own notes (the files past the file limit, entries
/// skipped) as well as the note of the files the budget left out: the room for its frame
/// holds them, at every budget, in every format.
#[test]
fn a_directory_and_its_notes_stay_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let long: String = (1..=2500).map(|i| format!("line {i} of a long file\n")).collect();
    std::fs::write(dir.path().join("long.txt"), long).unwrap();
    for i in 0..3 {
        std::fs::write(dir.path().join(format!("t{i}.txt")), "a few words\n").unwrap();
    }
    let prompt = "look at @./";
    for format in [Format::Inline, Format::Markdown, Format::Xml, Format::Json] {
        for max_files in [1, 2] {
            for max in 1..=160 {
                let mut options = Options { format, ..Options::for_prompt() };
                options.limits.max_tokens = max;
                options.limits.max_files = max_files;
                let assembly = assembler(dir.path(), options).assemble_str(prompt, "-");
                let out = assembly.content.replacen(prompt, "", 1);
                let n = ctx_tokens::count(&out);
                assert!(n <= max, "{format:?}, {max_files} files: {n} over {max}:\n{out}");
            }
        }
    }
}

/// An included document after a cut of document text is left out as a file is: its record
/// says `dropped` and a `W_BUDGET` of its own names it, beside the cut's.
#[test]
fn a_document_included_after_a_cut_is_said_to_be_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let doc: String = (1..=100).map(|i| format!("doc text {i}\n")).collect();
    std::fs::write(dir.path().join("doc.md"), doc).unwrap();
    let second: String = (1..=30).map(|i| format!("second doc {i}\n")).collect();
    std::fs::write(dir.path().join("doc2.md"), second).unwrap();
    std::fs::write(dir.path().join("top.md"), "Top.\n@[doc.md]\n@[doc2.md]\n").unwrap();
    let mut options = Options::default();
    options.limits.max_tokens = 100;
    let assembly = assembler(dir.path(), options).assemble_file("top.md").unwrap();
    assert!(assembly.content.contains("reached in doc.md"), "{}", assembly.content);
    assert!(!assembly.content.contains("second doc"), "{}", assembly.content);
    let second = assembly.references.iter().find(|r| r.path == "doc2.md").unwrap();
    assert_eq!((second.truncated, second.dropped, second.bytes), (true, 1, 0));
    let said = assembly.diagnostics.iter().any(|d| {
        d.code == ctx_syntax::Code::TokenBudget
            && d.line == 3
            && d.message.contains("spent: doc2.md left out")
    });
    assert!(said, "{:#?}", assembly.diagnostics);
}

/// A file left out inside an included document before its text is cut is named, or counted,
/// by the note that ends the output: the cut's marker speaks only of what comes after it, so
/// the cut keeps room for the note's short form. The files included after the cut are what
/// the marker says is left out.
#[test]
fn a_file_left_out_before_a_cut_is_still_said() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.rs"), "fn tiny() {}\n").unwrap();
    let code: String = (0..60)
        .map(|i| format!("pub fn thing_{i}(a: u32) -> u32 {{\n    a * {i}\n}}\n\n"))
        .collect();
    std::fs::write(dir.path().join("code.rs"), code).unwrap();
    let doc: String = (0..30).map(|i| format!("doc line {i}.\n")).collect();
    std::fs::write(dir.path().join("doc.md"), format!("Doc intro.\n@[small.rs]\n{doc}")).unwrap();
    std::fs::write(dir.path().join("top.md"), "@[doc.md]\n@[small.rs]\n@[code.rs:10:40]\n")
        .unwrap();
    let mut checked = 0;
    for max in 10..=200 {
        let mut options = Options::default();
        options.limits.max_tokens = max;
        let assembly = assembler(dir.path(), options).assemble_file("top.md").unwrap();
        let out = &assembly.content;
        let before_cut = assembly
            .diagnostics
            .iter()
            .any(|d| d.file == "doc.md" && d.line == 2 && d.message.contains("small.rs left out"));
        if before_cut {
            checked += 1;
            let said = ["spent: left out", "file left out", "files left out", "budget spent"];
            assert!(said.iter().any(|s| out.contains(s)), "budget {max}, not said:\n{out}");
        }
        if out.contains("reached in doc.md") {
            assert!(out.contains("included content after this point is left out"), "{out}");
        }
    }
    assert!(checked > 20, "{checked} budgets left the file out before the cut");
}

/// A line of an included document: words, a reference to a file that is not there, to
/// another document (a cycle, or one that is there), to a text file whole or by a range, or a
/// tool's call.
fn doc_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(WORDS), 0..10).prop_map(|w| w.join(" ")),
        // Characters made visible as `\u{…}`, several tokens each where they were one.
        1 => (1usize..20).prop_map(|n| "\u{E0041}\u{200B}\u{1b}".repeat(n)),
        1 => (0usize..50).prop_map(|i| format!("@[missing{i}.md]")),
        // A failing reference that hides characters in its path.
        1 => (0usize..50).prop_map(|i| format!("@[mi\u{E0041}ss{i}\u{202E}.md]")),
        // Mentions in prose that name no file: left as written, as the text around them.
        1 => (0usize..20).prop_map(|i| format!("ask @user{i} about @param and @since")),
        // Escaped `@`s: text of the document, bounded as the text around them.
        1 => (1usize..20).prop_map(|n| "\\@team and \\@[x.md] ".repeat(n)),
        1 => (0usize..4).prop_map(|i| format!("@[d{i}.md]")),
        // A document in a legacy encoding: decoded, and headed by a note that says so.
        1 => Just("@[latin1.md]".to_owned()),
        // A folder: its tree and its files, binary ones among them.
        1 => Just("@[sub/]".to_owned()),
        1 => (0usize..3).prop_map(|i| format!("@[t{i}.txt]")),
        1 => (0usize..3, 1u32..30, 0u32..40)
            .prop_map(|(i, a, n)| format!("@[t{i}.txt:{a}:{}]", a + n)),
        1 => prop::sample::select(vec![
            r#"@[grep{"pattern":"budget"}]"#.to_owned(),
            "@[tree{}]".to_owned(),
            r#"@[glob{"pattern":"*.txt"}]"#.to_owned(),
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Documents assembled in place that include documents of text (hidden characters
    /// among it, made visible at several times their tokens), failing references, text files
    /// whole and by ranges, tools' calls, a document in a legacy encoding and each other
    /// (cycles too), lines numbered or not, in every format, under budgets from tiny to ample
    /// and every `--on-error`: what is written beside the top-level document's own text stays
    /// within the budget, whatever fails where, no two markers share a line, and nothing
    /// hidden reaches the output.
    #[test]
    fn included_documents_with_failures_stay_within_the_budget(
        docs in prop::collection::vec(prop::collection::vec(doc_line(), 0..30), 1..4),
        texts in prop::collection::vec(file(), 3..=3),
        budget in prop::sample::select(vec![1usize, 10, 30, 60, 120, 300, 1000]),
        line_numbers in any::<bool>(),
        on_error in prop::sample::select(vec![OnError::Marker, OnError::Keep, OnError::Drop]),
        format in format(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        for (i, lines) in docs.iter().enumerate() {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(dir.path().join(format!("d{i}.md")), text).unwrap();
        }
        for (i, text) in texts.iter().enumerate() {
            std::fs::write(dir.path().join(format!("t{i}.txt")), text).unwrap();
        }
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/bin.dat"), [0u8, 159, 146, 150, 0, 1]).unwrap();
        std::fs::write(dir.path().join("sub/empty.txt"), "").unwrap();
        std::fs::write(dir.path().join("sub/hidden.txt"), "\u{E0041}\u{202E}x\n".repeat(30))
            .unwrap();
        std::fs::write(dir.path().join("sub/words.txt"), &texts[0]).unwrap();
        let latin1: Vec<u8> = b"caf\xe9 na\xefve budget\n".repeat(40);
        std::fs::write(dir.path().join("latin1.md"), latin1).unwrap();
        let root: String = (0..docs.len()).map(|i| format!("@[d{i}.md]\n")).collect();
        std::fs::write(dir.path().join("main.md"), &root).unwrap();
        let mut options = Options { line_numbers, on_error, format, ..Options::default() };
        options.limits.max_tokens = budget;
        let assembly = assembler(dir.path(), options).assemble_file("main.md").unwrap();
        let out = &assembly.content;
        // The top-level document's own text is its line breaks: a token each at most.
        let n = ctx_tokens::count(out);
        prop_assert!(n <= budget + docs.len(), "{n} tokens over a budget of {budget}:\n{out}");
        prop_assert!(!out.contains("--><!--"), "markers glued together:\n{out}");
        prop_assert!(!out.contains(['\u{E0041}', '\u{202E}', '\u{1b}']), "hidden:\n{out}");
    }
}

/// A mention of a prompt: a text file whole or by a range, a missing file, the folder, or a
/// tool's call.
fn mention() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => (0usize..3).prop_map(|i| format!("@t{i}.txt")),
        1 => (0usize..3, 1u32..30, 0u32..40).prop_map(|(i, a, n)| format!("@t{i}.txt#L{a}-{}", a + n)),
        1 => (0usize..20).prop_map(|i| format!("@missing{i}.txt")),
        1 => Just("@./".to_owned()),
        // Past the line limit: cut with the limit's marker before the budget looks at it.
        1 => Just("@long.txt".to_owned()),
        1 => prop::sample::select(vec![
            r#"@[grep{"pattern":"budget"}]"#.to_owned(),
            "@[tree{}]".to_owned(),
            r#"@[glob{"pattern":"*.txt"}]"#.to_owned(),
        ]),
    ]
}

/// A file of words with characters made visible at several times their tokens.
fn hiding_file() -> impl Strategy<Value = String> {
    (file(), 0usize..20).prop_map(|(text, n)| text + &"\u{E0041}\u{200B}\u{1b}\n".repeat(n))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Prompts that mention text files (hidden characters among their words) whole and by
    /// ranges, a file past the line limit, missing files, the folder and tools' calls, in
    /// every format, lines numbered or not, with line and file limits from none to tight,
    /// under budgets from tiny to ample: everything written beside the prompt stays within the
    /// budget and nothing hidden reaches the output.
    #[test]
    fn prompts_of_every_kind_of_mention_stay_within_the_budget(
        texts in prop::collection::vec(hiding_file(), 3..=3),
        mentions in prop::collection::vec(mention(), 1..8),
        budget in prop::sample::select(vec![1usize, 10, 30, 60, 120, 300, 1000, 5000]),
        format in format(),
        line_numbers in any::<bool>(),
        max_files in prop::sample::select(vec![0usize, 1, 3, 200]),
        max_lines in prop::sample::select(vec![0usize, 5, 2000]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        for (i, text) in texts.iter().enumerate() {
            std::fs::write(dir.path().join(format!("t{i}.txt")), text).unwrap();
        }
        let long: String = (1..=2500).map(|i| format!("line {i} of a long file\n")).collect();
        std::fs::write(dir.path().join("long.txt"), long).unwrap();
        let prompt = format!("look at {}", mentions.join(" and "));
        let mut options = Options { format, line_numbers, ..Options::for_prompt() };
        options.limits.max_tokens = budget;
        options.limits.max_files = max_files;
        options.limits.max_lines = max_lines;
        let assembly = assembler(dir.path(), options).assemble_str(&prompt, "-");
        let out = assembly.content.replacen(&prompt, "", 1);
        let n = ctx_tokens::count(&out);
        prop_assert!(n <= budget, "{n} tokens over a budget of {budget}:\n{}", assembly.content);
        prop_assert!(!out.contains(['\u{E0041}', '\u{200B}', '\u{1b}']), "hidden:\n{out}");
    }
}
