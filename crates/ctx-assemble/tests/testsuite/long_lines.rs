//! One long line of many problems (issue 23, rule 6): each diagnostic keeps a window of its
//! line, not the line, with exact lines and columns; a run keeps at most `MAX_DIAGNOSTICS`
//! and says how many more there were; "did you mean" is answered once per missing path.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ctx_assemble::record::{DiagnosticRecord, MAX_DIAGNOSTICS, WINDOW_CHARS};
use ctx_assemble::{Assembler, Assembly, Format, Mode, Options};
use ctx_fs::Sandbox;
use ctx_syntax::Code;

fn assembler(dir: &std::path::Path, options: Options) -> Assembler {
    let sandbox =
        Sandbox::builder(dir.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
    Assembler::new(Arc::new(sandbox), options)
}

/// A document of one line of `unit`s, as long as the default file limit (1 MiB) allows.
fn one_line_of(unit: &str) -> String {
    unit.repeat(((1 << 20) - 1) / unit.len()) + "\n"
}

/// Assembles `text` written to `main.md` in `dir`, with a hang guard: generous for a debug
/// build on a loaded machine; the release figures are in the report of the issue.
fn assemble_in(dir: &std::path::Path, text: &str, options: Options) -> Assembly {
    std::fs::write(dir.join("main.md"), text).unwrap();
    let started = Instant::now();
    let assembly = assembler(dir, options).assemble_file("main.md").unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assembly
}

/// The column of byte `at` of `text` on its line, in characters.
fn column_of(text: &str, at: usize) -> u32 {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..at].chars().count() as u32 + 1
}

/// Every diagnostic with a source keeps at most the window, its line and column are those of
/// its span in `text`, and the window's columns agree with them. The bytes kept in all.
fn check_windows(text: &str, diagnostics: &[DiagnosticRecord]) -> usize {
    let mut kept = 0;
    for d in diagnostics {
        let Some(source) = &d.source else { continue };
        let window = source.lines.as_str();
        assert!(window.chars().count() <= WINDOW_CHARS, "{d:?}");
        assert!(window.len() <= 4 * WINDOW_CHARS, "{d:?}");
        let at = source.span.start;
        assert_eq!(d.line as usize, text[..at].matches('\n').count() + 1, "{d:?}");
        assert_eq!(d.column, column_of(text, at), "{d:?}");
        let before = window[..source.in_lines.start].chars().count() as u32;
        assert_eq!(source.first_column + before, d.column, "{d:?}");
        assert!(text[source.span.clone()].starts_with(&window[source.in_lines.clone()]));
        kept += window.len() + d.message.len() + d.file.len();
    }
    kept
}

/// 87 381 `@nothere.md` on one line of 1 MiB: the include budget stops the walk at 10 000,
/// and each of the 10 000 diagnostics keeps a window of at most 240 characters (the line
/// each time was 10 GB). Inline mode (`ctx check`, `ctx assemble`) and append mode (`ctx
/// expand`, the MCP `expand` tool) alike.
#[test]
fn a_line_of_failing_mentions_keeps_a_window_per_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let text = one_line_of("@nothere.md ");
    let inline = assemble_in(dir.path(), &text, Options::default());
    let options = Options { mode: Mode::Append, format: Format::Xml, ..Options::default() };
    let append = assembler(dir.path(), options).assemble_str(&text, "-");
    for assembly in [&inline, &append] {
        let d = &assembly.diagnostics;
        assert_eq!(d.len(), 10_001);
        assert!(d[..10_000].iter().all(|d| d.code == Code::Unresolved));
        assert_eq!(d[10_000].code, Code::Budget);
        for (i, d) in d.iter().enumerate() {
            assert_eq!((d.line, d.column), (1, 12 * i as u32 + 1));
            let source = d.source.as_ref().unwrap();
            assert_eq!(&source.lines[source.in_lines.clone()], "@nothere.md");
            assert_eq!(source.clipped_before, i > 6);
            assert!(source.clipped_after);
        }
        let kept = check_windows(&text, d);
        assert!(kept < d.len() * (4 * WINDOW_CHARS + 100), "{kept} bytes kept");
    }
}

/// The same line of failing includes, a near name on disk: every diagnostic says "did you
/// mean" (answered once, then from the run's memo) and keeps a window.
#[test]
fn a_line_of_failing_includes_is_answered_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "n\n").unwrap();
    let text = one_line_of("@[notes.mdd] ");
    let assembly = assemble_in(dir.path(), &text, Options::default());
    let d = &assembly.diagnostics;
    assert_eq!(d.len(), 10_001);
    for d in &d[..10_000] {
        assert_eq!(d.code, Code::NotFound);
        assert!(d.message.ends_with("(did you mean notes.md?)"), "{}", d.message);
    }
    check_windows(&text, d);
}

/// Many different missing paths with near names: the first 32 get a hint, later ones none,
/// so that a document of misses costs a bounded number of listings and comparisons.
#[test]
fn hints_stop_after_a_few_different_misses() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..100 {
        std::fs::write(dir.path().join(format!("a{i}.md")), "a\n").unwrap();
        text.push_str(&format!("@[a{i}.mdd] "));
    }
    let assembly = assemble_in(dir.path(), &text, Options::default());
    let hinted: Vec<bool> =
        assembly.diagnostics.iter().map(|d| d.message.contains("did you mean")).collect();
    assert_eq!(hinted.len(), 100);
    assert!(hinted[..32].iter().all(|&h| h) && !hinted[32..].iter().any(|&h| h), "{hinted:?}");
}

/// 116 508 `@{endif}` without an `@{if}` on one line: the run keeps 10 000 diagnostics and a
/// `W_LIMIT` that counts the rest, each kept one within its window.
#[test]
fn diagnostics_past_the_cap_are_counted_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let text = one_line_of("@{endif} ");
    let assembly = assemble_in(dir.path(), &text, Options::default());
    let d = &assembly.diagnostics;
    assert_eq!(d.len(), MAX_DIAGNOSTICS + 1);
    assert!(d[..MAX_DIAGNOSTICS].iter().all(|d| d.code == Code::Directive));
    let total = ((1 << 20) - 1) / 9;
    let more = total - MAX_DIAGNOSTICS;
    let note = &d[MAX_DIAGNOSTICS];
    assert_eq!(note.code, Code::Limit);
    assert_eq!(
        note.message,
        format!("{more} more diagnostics not kept ({more} errors, 0 warnings); a run keeps 10000")
    );
    assert!(assembly.has_errors());
    check_windows(&text, d);
}

/// Warnings fill the cap, then one error: the error is kept, so the run still has errors.
#[test]
fn an_error_past_the_cap_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let text = "@{X}".repeat(MAX_DIAGNOSTICS + 500) + "@{endif}\n";
    let assembly = assemble_in(dir.path(), &text, Options::default());
    let d = &assembly.diagnostics;
    assert_eq!(d.len(), MAX_DIAGNOSTICS + 2);
    assert!(d[..MAX_DIAGNOSTICS].iter().all(|d| d.code == Code::UndefinedMacro));
    assert_eq!(d[MAX_DIAGNOSTICS].code, Code::Directive);
    assert_eq!(d[MAX_DIAGNOSTICS].column, 4 * (MAX_DIAGNOSTICS as u32 + 500) + 1);
    assert_eq!(
        d[MAX_DIAGNOSTICS + 1].message,
        "500 more diagnostics not kept (0 errors, 500 warnings); a run keeps 10000"
    );
    assert!(assembly.has_errors());
}

/// A failing include and a directive error in the middle of a long line of two-byte
/// characters: both windows are clipped on both sides, columns count characters of the whole
/// line, and the window is cut between characters.
#[test]
fn a_long_line_with_a_failing_include_and_a_directive_error() {
    let dir = tempfile::tempdir().unwrap();
    let fill = "\u{e9}".repeat(150_000);
    let text = format!("intro\n{fill}@[missing.md]{fill}\u{1f600}@{{endif}}{fill}\n");
    let assembly = assemble_in(dir.path(), &text, Options::default());
    let d = &assembly.diagnostics;
    let codes: Vec<Code> = d.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::NotFound, Code::Directive]);
    assert_eq!((d[0].line, d[0].column), (2, 150_001));
    assert_eq!((d[1].line, d[1].column), (2, 150_000 + 13 + 150_000 + 1 + 1));
    for (d, span) in d.iter().zip(["@[missing.md]", "@{endif}"]) {
        let source = d.source.as_ref().unwrap();
        assert!(source.clipped_before && source.clipped_after, "{source:?}");
        assert_eq!(&source.lines[source.in_lines.clone()], span);
        assert_eq!(source.lines.chars().count(), WINDOW_CHARS);
        assert_eq!(source.first_line, 2);
    }
    assert_eq!(d[0].source.as_ref().unwrap().first_column, 150_001 - 80);
    check_windows(&text, d);
}

/// mdBook links on one long line: each failure keeps a window, and the line before a link is
/// neither copied nor read again for each (whether it is a prefix is read as the line grows,
/// and the prefix is taken when a further line comes); that prefix still is what dialects.md
/// says.
#[test]
fn mdbook_links_on_a_long_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.syntax.mdbook = true;
    let text = one_line_of("{{#include nothere.md}} ");
    let assembly = assemble_in(dir.path(), &text, options.clone());
    assert_eq!(assembly.diagnostics.len(), 10_001);
    check_windows(&text, &assembly.diagnostics);

    // Half a megabyte of blanks, then ten thousand links that insert nothing: the blanks before
    // each link are a prefix, read once for all of them.
    std::fs::write(dir.path().join("empty.txt"), "").unwrap();
    let blanks = " ".repeat(1 << 19);
    let text = format!("{blanks}{}\n", "{{#include empty.txt}}".repeat(10_000));
    let assembly = assemble_in(dir.path(), &text, options.clone());
    assert_eq!(assembly.content, format!("{blanks}\n"));
    assert_eq!(assembly.references.len(), 10_000);

    std::fs::write(dir.path().join("g.txt"), "A\nB\n").unwrap();
    let assembly = assemble_in(dir.path(), "x {{#include g.txt}} {{#include g.txt}}\n", options);
    assert_eq!(assembly.content, "x A\nB A\nB\n");
}

/// A resolver (the source index's place) that counts what it is asked.
#[derive(Default)]
struct Counting {
    resolves: std::sync::atomic::AtomicUsize,
    closest: std::sync::atomic::AtomicUsize,
}

impl ctx_assemble::Resolver for Counting {
    fn resolve(&self, _: &str, _: &Sandbox) -> ctx_assemble::Resolution {
        self.resolves.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ctx_assemble::Resolution::NotFound
    }

    fn closest(&self, _: &str, _: &Sandbox) -> Option<String> {
        self.closest.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        None
    }
}

/// With a resolver behind the workspace (a source index of 50 000 files compares a missing
/// name with each): one missing path named 10 000 times is asked once, and "did you mean" is
/// asked for at most 32 different paths, however many a document names.
#[test]
fn the_resolver_is_asked_once_per_missing_path() {
    let dir = tempfile::tempdir().unwrap();
    let run = |text: &str| {
        let counting = Arc::new(Counting::default());
        let asm = assembler(dir.path(), Options::default()).with_resolver(counting.clone());
        std::fs::write(dir.path().join("main.md"), text).unwrap();
        let assembly = asm.assemble_file("main.md").unwrap();
        let count =
            |n: &std::sync::atomic::AtomicUsize| n.load(std::sync::atomic::Ordering::Relaxed);
        (assembly, count(&counting.resolves), count(&counting.closest))
    };
    let (assembly, resolves, closest) = run(&one_line_of("@nothere.md "));
    assert_eq!(assembly.diagnostics.len(), 10_001);
    assert_eq!((resolves, closest), (1, 0));
    let (assembly, resolves, closest) = run(&one_line_of("@[nothere.md] "));
    assert_eq!(assembly.diagnostics.len(), 10_001);
    assert_eq!((resolves, closest), (1, 1));
    let distinct: String = (0..2000).map(|i| format!("@[gone{i}.md] ")).collect();
    let (assembly, resolves, closest) = run(&distinct);
    assert_eq!(assembly.diagnostics.len(), 2000);
    assert_eq!((resolves, closest), (2000, 32));
}

/// A line of the same glob in a folder of many files: the folder is walked once for the run,
/// not once for each of the 10 000 globs the include budget admits, and each gives the same.
#[test]
fn a_line_of_the_same_glob_walks_once() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1000 {
        std::fs::write(dir.path().join(format!("f{i}.txt")), "x\n").unwrap();
    }
    let text = one_line_of("@[no*.md] ");
    let assembly = assemble_in(dir.path(), &text, Options::default());
    assert_eq!(assembly.references.len(), 10_001);
    let kinds: Vec<_> = assembly.references[..10_000].iter().map(|r| r.kind).collect();
    assert!(kinds.iter().all(|k| *k == ctx_assemble::record::Kind::Glob));
    assert_eq!(assembly.references[9_999].bytes, assembly.references[0].bytes);
    assert_eq!(assembly.references[10_000].error.as_ref().unwrap().code, Code::Budget);
}

/// The attack: a line of distinct globs (`@[a1*] @[a2*] …`), each a walk of its own. What
/// must not happen: the walks cost their number times one walk without end; past the run's
/// walk budget the rest are refused with `E_BUDGET`, each once.
#[test]
fn a_line_of_distinct_globs_shares_one_walk_budget() {
    let dir = ten_folders_of_thirty();
    let text: String = (0..2000).map(|i| format!("@[**/n{i}*] ")).collect::<String>() + "\n";
    std::fs::write(dir.path().join("main.md"), &text).unwrap();
    let assembly = assemble_walking_ten(dir.path());
    let budget: Vec<_> = assembly.diagnostics.iter().filter(|d| d.code == Code::Budget).collect();
    assert!(!budget.is_empty(), "the walks stop at the run's budget");
    assert!(budget[0].message.contains("their budget"), "{}", budget[0].message);
    // Ten walks of at most 100 entries looked at each fill a budget of 1 000.
    let walked = assembly.diagnostics.iter().filter(|d| d.code == Code::Limit).count();
    assert!(walked <= 11, "{walked} walks ran");
}

/// The attack: a document of tool calls that each walk the tree (`glob`, `ls`, `tree`),
/// distinct or the same again, where mentions would share the run's walk budget. What must
/// not happen: tool walks escaping that budget (a few hundred calls over a large folder took
/// minutes); past it each call is `E_BUDGET`, and mentions after them are refused too.
#[test]
fn tool_walks_share_the_runs_walk_budget() {
    let dir = ten_folders_of_thirty();
    let calls: String = (0..200)
        .map(|i| match i % 3 {
            0 => format!("@[glob{{\"pattern\":\"**/n{i}*\"}}]\n"),
            1 => "@[ls{\"uri\":\".\"}]\n".to_owned(),
            _ => "@[tree{\"uri\":\".\",\"depth\":5}]\n".to_owned(),
        })
        .collect();
    std::fs::write(dir.path().join("main.md"), calls + "@[**/n*]\n").unwrap();
    let assembly = assemble_walking_ten(dir.path());
    let refused: Vec<_> = assembly
        .references
        .iter()
        .filter(|r| r.error.as_ref().is_some_and(|e| e.code == Code::Budget))
        .collect();
    assert!(refused.len() > 150, "{} calls refused", refused.len());
    assert!(refused[0].error.as_ref().unwrap().message.contains("their budget"));
    // The mention after them finds the budget spent as well.
    let last = assembly.references.last().unwrap();
    assert_eq!(last.error.as_ref().map(|e| e.code), Some(Code::Budget), "{last:?}");
}

/// The attack: a tool argument given twice (`{"uri":"/etc/passwd","uri":"a.md"}`), read as
/// its last value while the output shows both, so that whoever reviews it is misled about what
/// was read. What must not happen: the call made; it is `E_TOOL_ARGS`.
#[test]
fn a_tool_argument_given_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.md"), "CONTENT OF A\n").unwrap();
    let text = "@[read_file{\"uri\":\"/etc/passwd\",\"uri\":\"a.md\"}]\n";
    let assembly = assemble_in(dir.path(), text, Options::default());
    assert!(!assembly.content.contains("CONTENT OF A"), "{}", assembly.content);
    let error = assembly.references[0].error.as_ref().unwrap();
    assert_eq!(error.code, Code::ToolArgs, "{error:?}");
    // Keys given once each, nested objects with repeated names, are fine.
    let text = "@[read_file{\"uri\":\"a.md\"}] @[grep{\"pattern\":\"A\",\"uri\":\"a.md\"}]\n";
    let assembly = assemble_in(dir.path(), text, Options::default());
    assert!(assembly.references.iter().all(|r| r.error.is_none()), "{:?}", assembly.references);
}

/// Ten folders of thirty files each.
fn ten_folders_of_thirty() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in 0..10 {
        std::fs::create_dir_all(dir.path().join(format!("d{d}"))).unwrap();
        for f in 0..30 {
            std::fs::write(dir.path().join(format!("d{d}/f{f}.txt")), "x").unwrap();
        }
    }
    dir
}

/// `main.md` of `dir` assembled in a sandbox whose walks each list at most ten entries.
fn assemble_walking_ten(dir: &std::path::Path) -> Assembly {
    let mut limits = ctx_fs::Limits::default();
    limits.max_walk_entries = 10;
    let sandbox = Sandbox::builder(dir.to_str().unwrap())
        .limits(limits)
        .open(cap_std::ambient_authority())
        .unwrap();
    Assembler::new(Arc::new(sandbox), Options::default()).assemble_file("main.md").unwrap()
}
