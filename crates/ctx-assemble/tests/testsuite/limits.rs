//! Budgets and limits on real temporary workspaces: the include bomb, output budget, depth.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ctx_assemble::{Assembler, Options};
use ctx_fs::Sandbox;
use ctx_syntax::Code;

fn assembler(dir: &std::path::Path, options: Options) -> Assembler {
    let sandbox =
        Sandbox::builder(dir.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
    Assembler::new(Arc::new(sandbox), options)
}

fn codes(assembly: &ctx_assemble::Assembly) -> Vec<Code> {
    let mut codes: Vec<Code> = assembly.diagnostics.iter().map(|d| d.code).collect();
    codes.dedup();
    codes
}

/// A file that includes the next one twice, eighteen levels deep: 2^18 leaves.
#[test]
fn include_bomb_ends_fast_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    for level in 0..18 {
        let next = format!("l{}.md", level + 1);
        std::fs::write(dir.path().join(format!("l{level}.md")), format!("@[{next}]@[{next}]"))
            .unwrap();
    }
    std::fs::write(dir.path().join("l18.md"), "boom\n").unwrap();
    let started = Instant::now();
    let assembly = assembler(dir.path(), Options::default()).assemble_file("l0.md").unwrap();
    let took = started.elapsed();
    assert!(codes(&assembly).contains(&Code::Budget), "{:?}", codes(&assembly));
    assert!(assembly.references.len() <= 10_001);
    assert!(assembly.content.len() < 1 << 20);
    // Generous for a debug build on a loaded 2-core machine; the release figure is in the
    // benchmark.
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

/// A document that includes one file of a single word of a megabyte many times: once the
/// token budget is spent, the later includes are left out without being counted (each count
/// of such a word is costly: 40 includes took 7.6 s of a release build, 0.37 s now).
#[test]
fn a_long_word_included_many_times_is_not_counted_again_once_the_budget_is_spent() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wide.md"), format!("{}\n", "w".repeat(1_000_000))).unwrap();
    std::fs::write(dir.path().join("top.md"), "@[wide.md]".repeat(12)).unwrap();
    let mut options = Options::default();
    options.limits.max_tokens = 200_000;
    let started = Instant::now();
    let assembly = assembler(dir.path(), options).assemble_file("top.md").unwrap();
    let took = started.elapsed();
    assert!(codes(&assembly).contains(&Code::TokenBudget), "{:?}", codes(&assembly));
    assert!(assembly.content.len() < 1 << 16, "{}", assembly.content.len());
    // Generous for a debug build on a loaded 2-core machine.
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

/// With no depth limit (`--max-depth 0`), a chain of 3 000 includes is assembled whole on a
/// thread of 256 KiB of stack: the stack grows on the heap, never overflows (it aborted the
/// process past about 1 850 levels on a main thread of 8 MiB).
#[test]
fn a_deep_chain_without_a_depth_limit_does_not_overflow_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3_000 {
        let text = format!("L{i}\n@[f{}.md]\nE{i}\n", i + 1);
        std::fs::write(dir.path().join(format!("f{i}.md")), text).unwrap();
    }
    std::fs::write(dir.path().join("f3000.md"), "leaf\n").unwrap();
    let mut options = Options::default();
    options.limits.max_depth = 0;
    let a = assembler(dir.path(), options);
    let assembly = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || a.assemble_file("f0.md").unwrap())
        .unwrap()
        .join()
        .unwrap();
    assert!(assembly.diagnostics.is_empty(), "{:?}", codes(&assembly));
    assert!(assembly.content.contains("L2999\nleaf\nE2999"), "{}", assembly.content.len());
    assert!(assembly.content.starts_with("L0\n") && assembly.content.ends_with("E0\n"));
}

/// An anchor's region without the marker lines of the anchors nested in it: each line keeps
/// its own number, and a budget's cut names the lines of the file, the rest included.
#[test]
fn nested_anchor_markers_leave_the_line_numbers_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = "fn a() {}\n// ANCHOR: setup\nlet x = 1;\n// ANCHOR: inner\nlet y = 2;\n\
                // ANCHOR_END: inner\nlet z = 3;\n// ANCHOR_END: setup\n";
    std::fs::write(dir.path().join("l.rs"), text).unwrap();
    let mut body = String::from("// ANCHOR: big\n");
    for i in 0..220 {
        if i % 20 == 5 {
            body.push_str(&format!("// ANCHOR: n{i}\n"));
        }
        body.push_str(&format!("let value_{i} = {i} * 1234567;\n"));
        if i % 20 == 10 {
            body.push_str(&format!("// ANCHOR_END: n{}\n", i - 5));
        }
    }
    body.push_str("// ANCHOR_END: big\n");
    std::fs::write(dir.path().join("big.rs"), &body).unwrap();
    let mut options = Options { line_numbers: true, ..Options::default() };
    let out = assembler(dir.path(), options.clone()).assemble_str("@l.rs#setup", "-");
    assert!(out.content.contains("3: let x = 1;\n5: let y = 2;\n7: let z = 3;"), "{}", out.content);
    options.limits.max_tokens = 300;
    let out = assembler(dir.path(), options).assemble_str("@big.rs#big", "-");
    let last_line = body.lines().count() - 1;
    let marker = out.content.lines().find(|l| l.contains("kept lines")).unwrap();
    assert!(marker.contains(&format!(" of 2-{last_line} ")), "{marker}");
    // The last line kept is the number of the last line shown, the rest starts after it.
    let shown: Vec<u32> = out
        .content
        .lines()
        .filter_map(|l| l.split_once(": let ").and_then(|(n, _)| n.parse().ok()))
        .collect();
    let last = *shown.last().unwrap();
    assert!(marker.contains(&format!("kept lines 2-{last} ")), "{marker} {shown:?}");
    assert!(marker.contains(&format!("#L{}-{last_line}", last + 1)), "{marker}");
    // A document included through such an anchor: its lines numbered, and its diagnostics
    // placed, at their lines in the file.
    let doc = "# R\n<!-- ANCHOR: o -->\nl3\n<!-- ANCHOR: i -->\nl5\n<!-- ANCHOR_END: i -->\n\
               l7 @[missing.md]\n<!-- ANCHOR_END: o -->\n";
    std::fs::write(dir.path().join("r.md"), doc).unwrap();
    std::fs::write(dir.path().join("top.md"), "see @[r.md#o]\n").unwrap();
    let options = Options { line_numbers: true, ..Options::default() };
    let out = assembler(dir.path(), options).assemble_file("top.md").unwrap();
    assert!(out.content.contains("3: l3\n5: l5\n7: l7"), "{}", out.content);
    let missing = out.diagnostics.iter().find(|d| d.code == Code::NotFound).unwrap();
    assert_eq!((missing.file.as_str(), missing.line, missing.column), ("r.md", 7, 4));
}

/// A prompt's diagnostics come in the order of their places in it: its directives are met
/// as its text is scanned and its mentions when they are attached, after it.
#[test]
fn a_prompts_diagnostics_come_in_its_order() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options { mode: ctx_assemble::Mode::Append, ..Options::default() };
    let out =
        assembler(dir.path(), options).assemble_str("@nope1 @{U1} @[nope2.md] @{bogus x}", "-");
    let at: Vec<(Code, u32)> = out.diagnostics.iter().map(|d| (d.code, d.column)).collect();
    assert_eq!(
        at,
        [
            (Code::Unresolved, 1),
            (Code::UndefinedMacro, 8),
            (Code::NotFound, 14),
            (Code::Directive, 26)
        ]
    );
}

#[test]
fn output_budget_stops_reading() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(4000)).unwrap();
    std::fs::write(dir.path().join("main.md"), "@[big.txt]@[big.txt]@[big.txt]").unwrap();
    let mut options = Options::default();
    options.limits.max_output_bytes = 10_000;
    let assembly = assembler(dir.path(), options).assemble_file("main.md").unwrap();
    assert_eq!(codes(&assembly), [Code::Budget]);
    let (kept, marker) = assembly.content.split_once("<!--").unwrap();
    assert_eq!(kept, "x".repeat(8000));
    assert!(marker.contains("E_BUDGET"));
    assert!(assembly.content.ends_with("-->"));
}

#[test]
fn zero_means_no_limit() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.path().join("long.txt"), &lines).unwrap();
    std::fs::write(dir.path().join("main.md"), "@[long.txt]").unwrap();
    let mut options = Options::default();
    options.limits.max_lines = 0;
    let assembly = assembler(dir.path(), options).assemble_file("main.md").unwrap();
    assert_eq!(assembly.content, lines);
    let assembly = assembler(dir.path(), Options::default()).assemble_file("main.md").unwrap();
    assert!(assembly.content.ends_with("[... truncated 1000 lines ...]\n"));
}

#[test]
fn top_level_errors_are_errors_of_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let asm = assembler(dir.path(), Options::default());
    let err = asm.assemble_file("missing.md").unwrap_err();
    assert!(err.to_string().starts_with("E_NOT_FOUND"), "{err}");
    let err = asm.assemble_file("../outside.md").unwrap_err();
    assert!(err.to_string().starts_with("E_OUTSIDE"), "{err}");
}

/// An I/O failure other than a miss is `E_IO` with the operating system's message, never
/// `E_NOT_FOUND` (reading `/proc/self/mem` at offset 0 fails with EIO).
#[cfg(target_os = "linux")]
#[test]
fn io_errors_are_e_io() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::builder(dir.path().to_str().unwrap())
        .allow("/proc")
        .open(cap_std::ambient_authority())
        .unwrap();
    let assembler = Assembler::new(Arc::new(sandbox), Options::default());
    let assembly = assembler.assemble_str("@[/proc/self/mem]\n", "-");
    let error = assembly.references[0].error.as_ref().expect("the read fails");
    assert_eq!(error.code, Code::Io, "{}", error.message);
    assert!(error.message.contains("os error"), "{}", error.message);
    assert_eq!(codes(&assembly), [Code::Io]);
}

/// A walk stopped at the sandbox's entry limit says so with `W_LIMIT` (not the token budget's
/// `W_BUDGET`), in the output and in the record.
#[test]
fn walk_limit_is_w_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    for i in 0..10 {
        std::fs::write(dir.path().join(format!("d/{i}.txt")), "x\n").unwrap();
    }
    let mut limits = ctx_fs::Limits::default();
    limits.max_walk_entries = 3;
    let sandbox = Sandbox::builder(dir.path().to_str().unwrap())
        .limits(limits)
        .open(cap_std::ambient_authority())
        .unwrap();
    let assembly =
        Assembler::new(Arc::new(sandbox), Options::default()).assemble_str("@[d/]\n", "-");
    assert_eq!(codes(&assembly), [Code::Limit]);
    assert!(assembly.references[0].truncated);
    // Three kept, the other seven counted (the walk counts up to ten times its limit past it).
    assert!(assembly.content.contains("[... 7 more files omitted ...]"), "{}", assembly.content);
    assert!(
        assembly.diagnostics[0].message.contains("7 later files"),
        "{:?}",
        assembly.diagnostics
    );
}

/// When the output budget stops an append-mode run, the prompt's text is still whole: only
/// attachments are cut.
#[test]
fn budget_stop_keeps_the_whole_prompt() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(4000)).unwrap();
    std::fs::write(dir.path().join("small.txt"), "y\n").unwrap();
    let options = Options {
        limits: ctx_assemble::Limits { max_output_bytes: 1000, ..Default::default() },
        ..Options::for_prompt()
    };
    let prompt = "first @big.txt then @small.txt and the last words of the prompt";
    let assembly = assembler(dir.path(), options).assemble_str(prompt, "-");
    assert!(assembly.content.starts_with(prompt), "{}", assembly.content);
    assert!(!assembly.content.contains("xxxx"), "{}", assembly.content);
    assert_eq!(codes(&assembly), [Code::Budget]);
    // Nothing was attached: no frame to close, no marker glued to the prompt; the cut is
    // listed with the failures.
    let after = &assembly.content[prompt.len()..];
    assert_eq!(
        after,
        "\n\nSome files could not be loaded:\n- E_BUDGET: output budget of 1000 bytes spent; the rest is not read\n"
    );
    // A cut after the first attachment closes the frame it opened.
    let options = Options {
        limits: ctx_assemble::Limits { max_output_bytes: 200, ..Default::default() },
        ..Options::for_prompt()
    };
    let assembly = assembler(dir.path(), options).assemble_str("see @small.txt then @big.txt", "-");
    let content = &assembly.content;
    assert_eq!(content.matches("<system-reminder>").count(), 1, "{content}");
    assert!(content.contains("y\n</file>\n</system-reminder>\n\nSome files"), "{content}");
    assert!(!content.contains("<!--"), "{content}");
}

/// `ls` reads one level and `tree` only its depth: a deep subdirectory cannot use up the walk's
/// entry limit before the later top-level entries are listed.
#[test]
fn listings_read_only_their_levels() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/deep")).unwrap();
    for i in 0..20 {
        std::fs::write(dir.path().join(format!("a/deep/{i:02}.txt")), "x\n").unwrap();
    }
    std::fs::write(dir.path().join("z.md"), "z\n").unwrap();
    let mut limits = ctx_fs::Limits::default();
    limits.max_walk_entries = 5;
    let sandbox = Sandbox::builder(dir.path().to_str().unwrap())
        .limits(limits)
        .open(cap_std::ambient_authority())
        .unwrap();
    let asm = Assembler::new(Arc::new(sandbox), Options::default());
    let ls = asm.assemble_str("@[ls{\"uri\":\".\"}]", "-");
    assert_eq!(ls.content, "a/\nz.md\n");
    let tree = asm.assemble_str("@[tree{\"uri\":\".\",\"depth\":1}]", "-");
    assert!(tree.content.contains("z.md"), "{}", tree.content);
}

/// A path over 4096 bytes is `E_BAD_PATH` (assembly.md §3) in an include and in a mention, not
/// unterminated text, and a long line of openers without `]` stays text, scanned once.
#[test]
fn over_long_paths_are_bad_paths() {
    let dir = tempfile::tempdir().unwrap();
    let asm = assembler(dir.path(), Options::default());
    let long = "a".repeat(6000);
    let include = asm.assemble_str(&format!("see @[{long}] end\n"), "-");
    assert_eq!(codes(&include), [Code::BadPath]);
    assert!(include.content.starts_with("see <!-- ctx: E_BAD_PATH"), "{}", &include.content[..80]);
    assert!(include.content.ends_with(" end\n"));
    let mention = asm.assemble_str(&format!("see @{long} end\n"), "-");
    assert_eq!(codes(&mention), [Code::BadPath]);
    let openers = asm.assemble_str(&format!("{}\n", format!("@[{long}").repeat(200)), "-");
    assert_eq!(codes(&openers), [Code::Unterminated]);
}

/// Many distinct, costly patterns: compiled once each within the run's regex budget, then
/// `E_BUDGET`; the run ends.
#[test]
fn a_regex_bomb_hits_the_regex_budget() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let calls: String = (0..500)
        .map(|i| format!("@[grep{{\"pattern\":\"\\\\w{{60}}{i}\",\"uri\":\"a.txt\"}}]\n"))
        .collect();
    let assembly = assembler(dir.path(), Options::default()).assemble_str(&calls, "-");
    let budget = assembly.diagnostics.iter().filter(|d| d.code == Code::Budget).count();
    assert!(budget > 400, "{budget} calls over the budget");
    assert!(
        assembly.diagnostics[0].message.contains("pattern too large"),
        "{:?}",
        assembly.diagnostics[0]
    );
    let last = assembly.diagnostics.last().unwrap();
    assert!(last.message.contains("regex budget"), "{last:?}");
}

/// Every cut a tool makes is visible in its output and raises `W_LIMIT`.
#[test]
fn tools_say_where_they_cut() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5 {
        std::fs::write(dir.path().join(format!("f{i}.txt")), "match\nmatch\n").unwrap();
    }
    std::fs::write(dir.path().join("bin.dat"), b"match\0binary").unwrap();
    let run = |doc: &str, limits: ctx_assemble::Limits| {
        let options = Options { limits, ..Options::default() };
        assembler(dir.path(), options).assemble_str(doc, "-")
    };
    let at_max = run("@[grep{\"pattern\":\"match\",\"max\":3}]", Default::default());
    // Ten matches in five files: three shown, the other seven counted.
    assert!(at_max.content.contains("[... 7 more entries omitted ...]"), "{}", at_max.content);
    assert!(at_max.content.contains("[... 1 file skipped: 1 binary ...]"), "{}", at_max.content);
    assert_eq!(codes(&at_max), [Code::Limit]);
    let scan = ctx_assemble::Limits { max_scan_bytes: 20, ..Default::default() };
    let scanned = run("@[grep{\"pattern\":\"match\"}]", scan);
    assert!(scanned.content.contains("more entries omitted ...]"), "{}", scanned.content);
    assert_eq!(codes(&scanned), [Code::Limit]);
}

/// The `E_BUDGET` of the output budget names the include whose content ran over it, as its
/// reference record's error too, whether the content is a file placed whole or the text of
/// an included document.
#[test]
fn the_output_budget_error_names_the_include() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "abcdefghij\n").unwrap();
    std::fs::write(dir.path().join("big.rs"), "fn main() { println!(); }\n").unwrap();
    for (name, file) in [("txt", "big.txt"), ("rs", "big.rs")] {
        std::fs::write(dir.path().join("m.md"), format!("hi\n@[{file}]\n")).unwrap();
        let options = Options {
            limits: ctx_assemble::Limits { max_output_bytes: 8, ..Default::default() },
            ..Options::default()
        };
        let assembly = assembler(dir.path(), options).assemble_file("m.md").unwrap();
        let d = &assembly.diagnostics[0];
        assert_eq!(
            (d.code, d.file.as_str(), d.line, d.column),
            (Code::Budget, "m.md", 2, 1),
            "{name}"
        );
        let error = assembly.references[0].error.as_ref().expect(name);
        assert_eq!(error.code, Code::Budget, "{name}");
    }
}

/// A tool's `uri` with a scheme is `E_SCHEME`, as a reference's is; a `glob` pattern that is
/// empty or does not compile is a bad argument, as `grep`'s is.
#[test]
fn tool_arguments_get_the_codes_of_references() {
    let dir = tempfile::tempdir().unwrap();
    let run = |doc: &str| assembler(dir.path(), Options::default()).assemble_str(doc, "-");
    assert_eq!(codes(&run("@[ls{\"uri\":\"file:///etc\"}]")), [Code::Scheme]);
    assert_eq!(
        codes(&run("@[grep{\"pattern\":\"x\",\"uri\":\"https://a.test/\"}]")),
        [Code::Scheme]
    );
    assert_eq!(codes(&run("@[glob{\"pattern\":\"\"}]")), [Code::ToolArgs]);
    assert_eq!(codes(&run("@[glob{\"pattern\":\"a[b\"}]")), [Code::ToolArgs]);
}

/// `--on-error` applies to the item a budget stops as to any failed item: its marker, its
/// source text, or nothing.
#[test]
fn on_error_applies_to_the_item_a_budget_stops() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A\n").unwrap();
    std::fs::write(dir.path().join("b.rs"), "fn main() { println!(); }\n").unwrap();
    let run = |doc: &str, limits: &ctx_assemble::Limits, on_error: ctx_assemble::OnError| {
        let options = Options { limits: limits.clone(), on_error, ..Options::default() };
        assembler(dir.path(), options).assemble_str(doc, "-").content
    };
    let includes = ctx_assemble::Limits { max_includes: 1, ..Default::default() };
    let output = ctx_assemble::Limits { max_output_bytes: 8, ..Default::default() };
    use ctx_assemble::OnError::{Drop, Keep, Marker};
    assert_eq!(run("@[a.txt] @[a.txt]", &includes, Keep), "A\n @[a.txt]");
    assert_eq!(run("@[a.txt] @[a.txt]", &includes, Drop), "A\n ");
    assert!(run("@[a.txt] @[a.txt]", &includes, Marker).contains("<!-- ctx: E_BUDGET"));
    assert_eq!(run("hi\n@[b.rs]\n", &output, Keep), "hi\n@[b.rs]");
    assert_eq!(run("hi\n@[b.rs]\n", &output, Drop), "hi\n");
}

/// A `grep` with a `glob` filter notes only the denied files the filter would have taken.
#[test]
fn grep_notes_only_the_refusals_its_glob_would_take() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
    std::fs::write(dir.path().join("server.pem"), "needle\n").unwrap();
    let run = |doc: &str| assembler(dir.path(), Options::default()).assemble_str(doc, "-").content;
    let txt = run("@[grep{\"pattern\":\"needle\",\"glob\":\"*.txt\"}]");
    assert!(!txt.contains("denied"), "{txt}");
    let pem = run("@[grep{\"pattern\":\"needle\",\"glob\":\"*.pem\"}]");
    assert!(pem.contains("1 denied"), "{pem}");
}

/// A directory of several batches (256 files each) comes out the same, in walk order, whether
/// the next batch is read while one is written or not; a budget spent halfway stops both.
#[test]
fn directories_of_many_batches_come_out_in_order_read_ahead_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for i in 0..700 {
        std::fs::write(src.join(format!("f{i:04}.txt")), format!("file {i}\n")).unwrap();
    }
    std::fs::write(src.join("f0300.txt"), "hidden\u{202E}text\n").unwrap();
    std::fs::write(dir.path().join("main.md"), "@[src/]\n").unwrap();
    let run = |prefetch: bool, max_output_bytes: u64| {
        let mut options = Options { prefetch, ..Options::default() };
        options.limits.max_files = 0;
        options.limits.max_output_bytes = max_output_bytes;
        assembler(dir.path(), options).assemble_file("main.md").unwrap()
    };
    let ahead = run(true, 0);
    let plain = run(false, 0);
    assert_eq!(ahead.content, plain.content);
    assert_eq!(codes(&ahead), [Code::HiddenText]);
    let mut at = 0;
    for i in 0..700 {
        let body =
            if i == 300 { "hidden\\u{202E}text\n".to_owned() } else { format!("file {i}\n") };
        let found = ahead.content[at..].find(&body).unwrap_or_else(|| panic!("file {i} in order"));
        at += found + body.len();
    }
    let (cut_ahead, cut_plain) = (run(true, 20_000), run(false, 20_000));
    assert_eq!(cut_ahead.content, cut_plain.content);
    assert!(codes(&cut_ahead).contains(&Code::Budget), "{:?}", codes(&cut_ahead));
    assert!(cut_ahead.content.len() < 21_000, "{}", cut_ahead.content.len());
}
