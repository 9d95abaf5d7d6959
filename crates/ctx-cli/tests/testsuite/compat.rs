//! Cases from other tools' own tests, restated for ctx and run on the real binary.
//!
//! Each case cites its source: repository, file and test name. Where ctx differs on purpose,
//! the case records ctx's behaviour and the line of the specification that decides it.
//! docs/dialects.md counts them.

use assert_cmd::Command;
use assert_fs::TempDir;
use assert_fs::prelude::*;
use serde_json::Value;

/// gemini-cli's `@` processor tests: google-gemini/gemini-cli,
/// packages/cli/src/ui/hooks/atCommandProcessor.test.ts.
const GEMINI_AT: &str = "gemini-cli atCommandProcessor.test.ts";

/// One case: the files of the workspace, the prompt, the paths attached in order, and the
/// codes of the errors and warnings in order.
struct Case {
    source: &'static str,
    files: &'static [(&'static str, &'static str)],
    prompt: &'static str,
    attached: &'static [&'static str],
    codes: &'static [&'static str],
}

fn expand(case: &Case) -> (Vec<String>, Vec<String>, String) {
    let dir = TempDir::new().unwrap();
    for (path, text) in case.files {
        dir.child(path).write_str(text).unwrap();
    }
    let out = Command::cargo_bin("ctx")
        .unwrap()
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .args(["expand", "--format", "json", case.prompt])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{}: {e}: {}", case.source, String::from_utf8_lossy(&out.stderr))
    });
    let attached = json["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["error"].is_null())
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    let codes = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_owned())
        .collect();
    (attached, codes, json["content"].as_str().unwrap().to_owned())
}

fn check(cases: &[Case]) {
    for case in cases {
        let (attached, codes, content) = expand(case);
        assert_eq!(attached, case.attached, "{}", case.source);
        assert_eq!(codes, case.codes, "{}", case.source);
        // The prompt's own text is always kept as written (assembly.md §7, append mode).
        assert!(content.starts_with(case.prompt), "{}: {content}", case.source);
    }
}

#[test]
fn gemini_cli_at_command_processor() {
    let cases = [
        Case {
            source: "should pass through query if no @ command is present",
            files: &[],
            prompt: "regular user query",
            attached: &[],
            codes: &[],
        },
        Case {
            source: "should pass through original query if only a lone @ symbol is present",
            files: &[],
            prompt: "  @  ",
            attached: &[],
            codes: &[],
        },
        Case {
            source: "should process a valid text file path",
            files: &[("path/to/file.txt", "This is the file content.")],
            prompt: "@path/to/file.txt",
            attached: &["path/to/file.txt"],
            codes: &[],
        },
        Case {
            source: "should process a valid directory path and convert to glob",
            files: &[("path/to/file.txt", "This is the file content.")],
            prompt: "@path/to/",
            attached: &["path/to"],
            codes: &[],
        },
        Case {
            source: "should handle query with text before and after @command",
            files: &[("doc.md", "Markdown content.")],
            prompt: "Explain this: @doc.md in detail.",
            attached: &["doc.md"],
            codes: &[],
        },
        Case {
            source: "should correctly unescape paths with escaped spaces",
            files: &[("path/to/my file.txt", "x")],
            prompt: "@path/to/my\\ file.txt",
            attached: &["path/to/my file.txt"],
            codes: &[],
        },
        Case {
            source: "should correctly handle double-quoted paths with spaces",
            files: &[("my folder/my file.txt", "x")],
            prompt: "@\"my folder/my file.txt\"",
            attached: &["my folder/my file.txt"],
            codes: &[],
        },
        Case {
            source: "should correctly handle file paths with narrow non-breaking space (NNBSP)",
            files: &[("my\u{202f}file.txt", "x")],
            prompt: "@my\u{202f}file.txt",
            attached: &["my\u{202f}file.txt"],
            codes: &[],
        },
        Case {
            source: "should handle multiple @file references",
            files: &[("file1.txt", "1"), ("file2.md", "2")],
            prompt: "@file1.txt @file2.md",
            attached: &["file1.txt", "file2.md"],
            codes: &[],
        },
        Case {
            source: "should handle multiple @file references with interleaved text",
            files: &[("f1.txt", "C1"), ("f2.md", "C2")],
            prompt: "Check @f1.txt and @f2.md please.",
            attached: &["f1.txt", "f2.md"],
            codes: &[],
        },
        // gemini-cli then searches the tree for `**/*nonexistent.txt*`; ctx resolves paths as
        // written (assembly.md §2) and keeps an unknown mention as prose with W_UNRESOLVED.
        Case {
            source: "should handle a mix of valid, invalid, and lone @ references",
            files: &[("valid1.txt", "1"), ("resolved/valid2.actual", "2")],
            prompt: "Look at @valid1.txt then @nonexistent.txt and also just @ symbol, then @resolved/valid2.actual",
            attached: &["valid1.txt", "resolved/valid2.actual"],
            codes: &["W_UNRESOLVED"],
        },
        Case {
            source: "should return original query if all @paths are invalid or lone @",
            files: &[],
            prompt: "Check @nonexistent.txt and @ also",
            attached: &[],
            codes: &["W_UNRESOLVED"],
        },
        // Differs on purpose: a file named directly is read even when an ignore file lists it
        // (assembly.md §3, "a file named directly is still readable"); ignore files shape walks.
        Case {
            source: "should skip git-ignored files in @ commands",
            files: &[
                (".gitignore", "node_modules/package.json"),
                ("node_modules/package.json", "{}"),
            ],
            prompt: "@node_modules/package.json",
            attached: &["node_modules/package.json"],
            codes: &[],
        },
        Case {
            source: "should process non-git-ignored files normally",
            files: &[(".gitignore", "node_modules/package.json"), ("src/index.ts", "x")],
            prompt: "@src/index.ts",
            attached: &["src/index.ts"],
            codes: &[],
        },
        // gemini-cli skips `.env` because a .gitignore lists it; ctx refuses it whatever the
        // ignore files say (the deny list, assembly.md §3), and says so with an error.
        Case {
            source: "should handle mixed git-ignored and valid files",
            files: &[
                (".gitignore", ".env"),
                ("README.md", "# Project README"),
                (".env", "SECRET=123"),
            ],
            prompt: "@README.md @.env",
            attached: &["README.md"],
            codes: &["E_DENIED"],
        },
        Case {
            source: "should always ignore .git directory files",
            files: &[(".git/config", "[core]")],
            prompt: "@.git/config",
            attached: &[],
            codes: &["E_DENIED"],
        },
        Case {
            source: "should terminate @path at comma",
            files: &[("test.txt", "x")],
            prompt: "Look at @test.txt, then explain it.",
            attached: &["test.txt"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at period",
            files: &[("readme.md", "x")],
            prompt: "Check @readme.md. What does it say?",
            attached: &["readme.md"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at semicolon",
            files: &[("example.js", "x")],
            prompt: "Review @example.js; check for bugs.",
            attached: &["example.js"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at exclamation mark",
            files: &[("important.txt", "x")],
            prompt: "Look at @important.txt! This is critical.",
            attached: &["important.txt"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at question mark",
            files: &[("config.json", "x")],
            prompt: "What is in @config.json? Please explain.",
            attached: &["config.json"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at opening parenthesis",
            files: &[("func.ts", "x")],
            prompt: "Analyze @func.ts(the main function).",
            attached: &["func.ts"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at closing parenthesis",
            files: &[("data.json", "x")],
            prompt: "Use data from @data.json) for testing.",
            attached: &["data.json"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at opening square bracket",
            files: &[("array.js", "x")],
            prompt: "Check @array.js[0] for the first element.",
            attached: &["array.js"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at closing square bracket",
            files: &[("list.md", "x")],
            prompt: "Review item @list.md] from the list.",
            attached: &["list.md"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at opening curly brace",
            files: &[("object.ts", "x")],
            prompt: "Parse @object.ts{prop1: value1}.",
            attached: &["object.ts"],
            codes: &[],
        },
        Case {
            source: "should terminate @path at closing curly brace",
            files: &[("config.yaml", "x")],
            prompt: "Use settings from @config.yaml} for deployment.",
            attached: &["config.yaml"],
            codes: &[],
        },
        Case {
            source: "should handle multiple @paths terminated by different punctuation",
            files: &[("first.txt", "1"), ("second.txt", "2")],
            prompt: "Compare @first.txt, @second.txt; what's different?",
            attached: &["first.txt", "second.txt"],
            codes: &[],
        },
        Case {
            source: "should still handle escaped spaces in paths before punctuation",
            files: &[("spaced file.txt", "x")],
            prompt: "Check @spaced\\ file.txt, it has spaces.",
            attached: &["spaced file.txt"],
            codes: &[],
        },
        Case {
            source: "should not break file paths with periods in extensions",
            files: &[("example.d.ts", "x")],
            prompt: "Analyze @example.d.ts for type definitions.",
            attached: &["example.d.ts"],
            codes: &[],
        },
    ];
    assert_eq!(cases.len(), 30, "{GEMINI_AT}: the count in docs/dialects.md");
    check(&cases);
}

/// Claude Code's documented rules for imports in CLAUDE.md ("Memory", the section on CLAUDE.md
/// imports, docs.anthropic.com/en/docs/claude-code/memory), restated as `ctx assemble` cases.
#[test]
fn claude_code_memory_imports() {
    let dir = TempDir::new().unwrap();
    let home = TempDir::new().unwrap();
    home.child(".claude/my-project-instructions.md").write_str("mine\n").unwrap();
    dir.child("README.md").write_str("readme\n").unwrap();
    dir.child("docs/git-instructions.md").write_str("git\n").unwrap();
    dir.child("a.md").write_str("A @b.md\n").unwrap();
    dir.child("b.md").write_str("B @c.md\n").unwrap();
    dir.child("c.md").write_str("C\n").unwrap();
    let assemble = |text: &str, args: &[&str]| {
        dir.child("CLAUDE.md").write_str(text).unwrap();
        let out = Command::cargo_bin("ctx")
            .unwrap()
            .current_dir(dir.path())
            .env("HOME", home.path())
            .env("NO_COLOR", "1")
            .args(["assemble", "CLAUDE.md"])
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    // "See @README for project overview": relative paths resolve from the importing file.
    assert_eq!(
        assemble("See @README.md for the overview.\n", &[]).1,
        "See readme\n for the overview.\n"
    );
    // An import alone on its line, as the documentation writes them.
    assert_eq!(
        assemble("- git workflow @docs/git-instructions.md\n", &[]).1,
        "- git workflow git\n\n"
    );
    // "@~/.claude/my-project-instructions.md": home paths, here once the home folder is allowed.
    assert_eq!(assemble("@~/.claude/my-project-instructions.md\n", &["--allow", "~"]).1, "mine\n");
    // "imports are not evaluated inside markdown code spans and code blocks".
    assert_eq!(
        assemble("This `@anthropic-ai/claude-code` stays.\n", &[]).1,
        "This `@anthropic-ai/claude-code` stays.\n"
    );
    assert_eq!(assemble("```\n@README.md\n```\n", &[]).1, "```\n@README.md\n```\n");
    // "imported files can recursively import additional files": a.md imports b.md, b.md c.md.
    assert_eq!(assemble("@a.md\n", &[]).1, "A B C\n\n\n");
    // "with a max-depth of 5 hops": ctx's default depth is 20 (assembly.md §4); the same
    // bound is `--max-depth`, and a deeper import is E_DEPTH rather than silently dropped.
    let (code, text) = assemble("@a.md\n", &["--max-depth", "2"]);
    assert_eq!(code, Some(1));
    assert!(text.contains("E_DEPTH"), "{text}");
}

/// gemini-cli's import processor for GEMINI.md (google-gemini/gemini-cli,
/// packages/core/src/utils/memoryImportProcessor.test.ts), restated as `ctx assemble` cases:
/// the document, what the output must hold and must not, and the codes of the run.
#[test]
fn gemini_cli_memory_import_processor() {
    struct Doc {
        source: &'static str,
        text: &'static str,
        holds: &'static [&'static str],
        lacks: &'static [&'static str],
        codes: &'static [&'static str],
    }
    let files = [
        ("test.md", "# Imported Content\nThis is imported."),
        ("instructions.txt", "# Instructions\nThis is a text file with markdown."),
        ("a.md", "@b.md"),
        ("b.md", "@a.md"),
        ("foo/bar.md", "Subdirectory content"),
        ("deep.md", "Deep @./deeper.md content"),
        ("deeper.md", "deepest"),
        ("nested.md", "Nested @./inner.md content"),
        ("inner.md", "Inner content"),
        ("first.md", "First content"),
        ("second.md", "Second content"),
        ("should-import.md", "Imported 1"),
        ("should-import2.md", "Imported 2"),
        ("should-not-import.md", "NOT IMPORTED"),
    ];
    let cases = [
        // ctx inserts the content itself; gemini-cli wraps it in `<!-- Imported from -->`
        // comments, which ctx leaves to the output formats (assembly.md §7).
        Doc {
            source: "should process basic md file imports",
            text: "Some content @./test.md more content",
            holds: &["Some content # Imported Content\nThis is imported. more content"],
            lacks: &[],
            codes: &[],
        },
        Doc {
            source: "should import non-md files just like md files",
            text: "Some content @./instructions.txt more content",
            holds: &["# Instructions\nThis is a text file with markdown."],
            lacks: &[],
            codes: &[],
        },
        // gemini-cli writes "File already processed"; ctx names the chain (assembly.md §4).
        Doc {
            source: "should handle circular imports gracefully",
            text: "@a.md",
            holds: &["E_CYCLE: include cycle: a.md -> b.md -> a.md"],
            lacks: &[],
            codes: &["E_CYCLE"],
        },
        Doc {
            source: "should not treat npm-style packages in code blocks as imports",
            text: "*   **Frontend:** `vitest` is used. Run with `pnpm -F @google-cloud-pulse/frontend test`.",
            holds: &["`pnpm -F @google-cloud-pulse/frontend test`"],
            lacks: &[],
            codes: &[],
        },
        Doc {
            source: "should not treat python decorators in code blocks as imports",
            text: "```python\n@app.route(\"/api\")\ndef my_api():\n  return \"OK\",\n```",
            holds: &["@app.route(\"/api\")"],
            lacks: &[],
            codes: &[],
        },
        Doc {
            source: "should not treat email addresses as imports",
            text: "Contact us at contact@example.com",
            holds: &["Contact us at contact@example.com"],
            lacks: &[],
            codes: &[],
        },
        // The text is unchanged in both; ctx also warns that the mention names nothing.
        Doc {
            source: "should not treat decorators as imports",
            text: "This is a decorator @my-decorator",
            holds: &["This is a decorator @my-decorator"],
            lacks: &[],
            codes: &["W_UNRESOLVED"],
        },
        Doc {
            source: "should handle subdirectory imports with extensions but ignore those without",
            text: "Import with extension: @foo/bar.md and without: @foo/bar",
            holds: &["Subdirectory content", "and without: @foo/bar"],
            lacks: &[],
            codes: &["W_UNRESOLVED"],
        },
        // gemini-cli leaves an "Import failed" comment; a mention that names nothing stays as
        // written in ctx, since `@name` in prose is not a mistake (syntax.md §2).
        Doc {
            source: "should handle file not found errors",
            text: "Content @./nonexistent.md more content",
            holds: &["Content @./nonexistent.md more content"],
            lacks: &[],
            codes: &["W_UNRESOLVED"],
        },
        Doc {
            source: "should handle nested imports recursively",
            text: "Main @./nested.md content",
            holds: &["Main Nested Inner content content content"],
            lacks: &[],
            codes: &[],
        },
        Doc {
            source: "should handle absolute paths in imports",
            text: "Content @/absolute/path/file.md more content",
            holds: &["E_OUTSIDE"],
            lacks: &[],
            codes: &["E_OUTSIDE"],
        },
        Doc {
            source: "should handle multiple imports in same content",
            text: "Start @./first.md middle @./second.md end",
            holds: &["Start First content middle Second content end"],
            lacks: &[],
            codes: &[],
        },
        Doc {
            source: "should ignore imports inside code blocks",
            text: "Normal content @./should-import.md\n```\ncode block with @./should-not-import.md\n```\nMore content @./should-import2.md",
            holds: &["Imported 1", "Imported 2", "code block with @./should-not-import.md"],
            lacks: &["NOT IMPORTED"],
            codes: &[],
        },
        Doc {
            source: "should ignore imports inside inline code",
            text: "Normal content @./should-import.md\n`code with import @./should-not-import.md`\nMore content @./should-import2.md",
            holds: &["Imported 1", "Imported 2", "`code with import @./should-not-import.md`"],
            lacks: &["NOT IMPORTED"],
            codes: &[],
        },
    ];
    for case in &cases {
        let dir = TempDir::new().unwrap();
        for (path, text) in files {
            dir.child(path).write_str(text).unwrap();
        }
        dir.child("main.md").write_str(case.text).unwrap();
        let out = Command::cargo_bin("ctx")
            .unwrap()
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .args(["assemble", "main.md", "--format", "json"])
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        let content = json["content"].as_str().unwrap();
        for want in case.holds {
            assert!(content.contains(want), "{}: {content:?} lacks {want:?}", case.source);
        }
        for unwanted in case.lacks {
            assert!(!content.contains(unwanted), "{}: {content:?}", case.source);
        }
        let codes: Vec<&str> = json["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, case.codes, "{}", case.source);
    }
    // "should respect max depth limit": ctx's bound is --max-depth, and past it E_DEPTH.
    let dir = TempDir::new().unwrap();
    for (path, text) in files {
        dir.child(path).write_str(text).unwrap();
    }
    dir.child("main.md").write_str("Content @./deep.md more content").unwrap();
    let out = Command::cargo_bin("ctx")
        .unwrap()
        .current_dir(dir.path())
        .args(["assemble", "main.md", "--max-depth", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("E_DEPTH"));
    assert_eq!(cases.len() + 1, 15, "the count in docs/dialects.md");
}

/// mdBook's link preprocessor at the commit docs/dialects.md was checked against.
const MDBOOK_LINKS: &str =
    "rust-lang/mdBook@641d06a crates/mdbook-driver/src/builtin_preprocessors/links.rs";
/// mdBook's tests of its include test book (tests/testsuite/includes/all_includes/).
const MDBOOK_INCLUDES: &str = "rust-lang/mdBook@641d06a tests/testsuite/includes.rs";

/// `ctx assemble PATH --dialect mdbook` in a workspace holding `files`: exit code, output and
/// standard error.
fn assemble_book(files: &[(&str, &str)], path: &str) -> (Option<i32>, String, String) {
    let dir = TempDir::new().unwrap();
    for (file, text) in files {
        dir.child(file).write_str(text).unwrap();
    }
    let out = Command::cargo_bin("ctx")
        .unwrap()
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .args(["assemble", path, "--dialect", "mdbook"])
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// Lines `first` to `last` of `numbered.rs` below, joined as mdBook joins them.
fn numbered(first: usize, last: usize) -> String {
    (first..=last).map(|n| format!("line {n}")).collect::<Vec<_>>().join("\n")
}

/// mdBook's tests of how it finds and reads links (`test_find_links_*`, `parse_*`,
/// `test_replace_all_escaped`, `test_set_chapter_title` in links.rs), each restated as a
/// chapter and the Markdown mdBook makes of it. mdBook's tests check the link it finds; here
/// the check is what that link puts in the page.
#[test]
fn mdbook_links() {
    let words = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n";
    let anchors = "// ANCHOR: some-anchor\nin some-anchor\n// ANCHOR_END: some-anchor\n";
    let minus = "// ANCHOR: -5\nin -5\n// ANCHOR_END: -5\n";
    let arbitrary = format!("{words}{anchors}{minus}");
    let file = format!("{}\n", numbered(1, 22));
    let files = [
        ("numbered.rs", file.as_str()),
        ("arbitrary", arbitrary.as_str()),
        ("anchored.rs", "before\n// ANCHOR: anchor\ninside\n// ANCHOR_END: anchor\nafter\n"),
        ("small.rs", "let small = 1;\n"),
        ("test.rs", "fn test() {}\n"),
        ("my.rs", "fn main() {}\n"),
    ];
    let all_words = arbitrary.trim_end();
    let page = str::to_owned;
    let cases: Vec<(&str, &str, String)> = vec![
        ("test_find_links_no_link", "Nothing to expand here.\n", page("Nothing to expand here.\n")),
        (
            "test_find_links_partial_link",
            "Cut short: {{#playground...\n",
            page("Cut short: {{#playground...\n"),
        ),
        (
            "test_find_links_partial_link",
            "Cut short: {{#include...\n",
            page("Cut short: {{#include...\n"),
        ),
        // An escape with no closing `}}` on its line is no escape: the backslash stays.
        (
            "test_find_links_partial_link",
            "Cut short: \\{{#include...\n",
            page("Cut short: \\{{#include...\n"),
        ),
        (
            "test_find_links_empty_link",
            "No path: {{#playground}}, {{#playground   }}, {{}} and {{#}}.\n",
            page("No path: {{#playground}}, {{#playground   }}, {{}} and {{#}}.\n"),
        ),
        (
            "test_find_links_unknown_link_type",
            "Unknown: {{#playgroundz ar.rs}}, {{#incn}}, {{baz}} and {{#bar}}.\n",
            page("Unknown: {{#playgroundz ar.rs}}, {{#incn}}, {{baz}} and {{#bar}}.\n"),
        ),
        // Prose before a link is not repeated on its further lines (docs/dialects.md).
        (
            "test_find_links_simple_link",
            "Two: {{#playground small.rs}} and {{#playground test.rs }}.\n",
            ["Two: ```rust", "let small = 1;", "``` and ```rust", "fn test() {}", "```.\n"]
                .join("\n"),
        ),
        ("test_find_links_with_range", "{{#include numbered.rs:10:20}}\n", numbered(10, 20) + "\n"),
        (
            "test_find_links_with_line_number",
            "{{#include numbered.rs:10}}\n",
            numbered(10, 10) + "\n",
        ),
        (
            "test_find_links_with_from_range",
            "{{#include numbered.rs:10:}}\n",
            numbered(10, 22) + "\n",
        ),
        ("test_find_links_with_to_range", "{{#include numbered.rs::20}}\n", numbered(1, 20) + "\n"),
        ("test_find_links_with_full_range", "{{#include numbered.rs::}}\n", numbered(1, 22) + "\n"),
        (
            "test_find_links_with_no_range_specified",
            "{{#include numbered.rs}}\n",
            numbered(1, 22) + "\n",
        ),
        ("test_find_links_with_anchor", "[{{#include anchored.rs:anchor}}]\n", page("[inside]\n")),
        (
            "test_find_links_escaped_link",
            "As written: \\{{#playground small.rs editable}} here.\n",
            page("As written: {{#playground small.rs editable}} here.\n"),
        ),
        (
            "test_find_playgrounds_with_properties",
            "First {{#playground small.rs editable }} then\nsecond {{#playground my.rs editable no_run should_panic}} end.\n",
            [
                "First ```rust,editable",
                "let small = 1;",
                "``` then",
                "second ```rust,editable,no_run,should_panic",
                "fn main() {}",
                "``` end.\n",
            ]
            .join("\n"),
        ),
        // An escape runs to the last `}}` of its line, whatever stands inside.
        (
            "test_find_all_link_types",
            "All: {{#include test.rs}}, \\{{#anything at all}} and\n{{#playground my.rs editable no_run should_panic}}\n",
            page(
                "All: fn test() {}, {{#anything at all}} and\n```rust,editable,no_run,should_panic\nfn main() {}\n```\n",
            ),
        ),
        (
            "test_replace_all_escaped",
            "Handlebars:\n```hbs\n\\{{#include numbered.rs}} is shown, not expanded\n```\n",
            page("Handlebars:\n```hbs\n{{#include numbered.rs}} is shown, not expanded\n```\n"),
        ),
        // The title names the page; the line it stood on stays, empty.
        (
            "test_set_chapter_title",
            "{{#title A Better Title}}\n# The chapter\n",
            page("\n# The chapter\n"),
        ),
        ("parse_without_colon_includes_all", "{{#include arbitrary}}\n", format!("{all_words}\n")),
        (
            "parse_with_nothing_after_colon_includes_all",
            "{{#include arbitrary:}}\n",
            format!("{all_words}\n"),
        ),
        (
            "parse_with_two_colons_includes_all",
            "{{#include arbitrary::}}\n",
            format!("{all_words}\n"),
        ),
        (
            "parse_with_garbage_after_two_colons_includes_all",
            "{{#include arbitrary::NaN}}\n",
            format!("{all_words}\n"),
        ),
        (
            "parse_with_one_number_after_colon_only_that_line",
            "{{#include arbitrary:5}}\n",
            page("five\n"),
        ),
        (
            "parse_with_one_based_start_becomes_zero_based",
            "{{#include arbitrary:1}}\n",
            page("one\n"),
        ),
        (
            "parse_with_zero_based_start_stays_zero_based_but_is_probably_an_error",
            "{{#include arbitrary:0}}\n",
            page("one\n"),
        ),
        (
            "parse_start_only_range",
            "{{#include arbitrary:11:}}\n",
            format!("eleven\n{anchors}{minus}"),
        ),
        (
            "parse_start_with_garbage_interpreted_as_start_only_range",
            "{{#include arbitrary:11:NaN}}\n",
            format!("eleven\n{anchors}{minus}"),
        ),
        (
            "parse_end_only_range",
            "{{#include arbitrary::5}}\n",
            page("one\ntwo\nthree\nfour\nfive\n"),
        ),
        (
            "parse_start_and_end_range",
            "{{#include arbitrary:5:10}}\n",
            page("five\nsix\nseven\neight\nnine\nten\n"),
        ),
        // A start that is not a number is an anchor's name.
        (
            "parse_with_negative_interpreted_as_anchor",
            "{{#include arbitrary:-5}}\n",
            page("in -5\n"),
        ),
        // An anchor name is made of word characters and `-`: no marker names `-5.7`.
        (
            "parse_with_floating_point_interpreted_as_anchor",
            "[{{#include arbitrary:-5.7}}]\n",
            page("[]\n"),
        ),
        (
            "parse_with_anchor_followed_by_colon",
            "{{#include arbitrary:some-anchor:this-gets-ignored}}\n",
            page("in some-anchor\n"),
        ),
        (
            "parse_with_more_than_three_colons_ignores_everything_after_third_colon",
            "{{#include arbitrary:5:10:17:anything:}}\n",
            page("five\nsix\nseven\neight\nnine\nten\n"),
        ),
    ];
    for (test, chapter, expected) in &cases {
        let mut all = files.to_vec();
        all.push(("c.md", chapter));
        let (code, out, err) = assemble_book(&all, "c.md");
        assert_eq!(
            (code, out.as_str()),
            (Some(0), expected.as_str()),
            "{MDBOOK_LINKS} {test}: {err}"
        );
    }

    // `test_find_links_with_special_characters`: the link is read whole, path
    // `foo-bar\baz/_c++.rs`. ctx differs on purpose in the file it names: a backslash in a path
    // is a separator on every platform (assembly.md §3), so it is `foo-bar/baz/_c++.rs`, where
    // mdBook on Linux opens a folder named `foo-bar\baz`.
    let chapter = "Odd: {{#playground foo-bar\\baz/_c++.rs}}\n";
    let files = [("foo-bar/baz/_c++.rs", "// c++\n"), ("c.md", chapter)];
    let (code, out, err) = assemble_book(&files, "c.md");
    assert_eq!((code, out.as_str()), (Some(0), "Odd: ```rust\n// c++\n```\n"), "{err}");
    assert_eq!(cases.len() + 1, 35, "the count in docs/dialects.md");
}

/// A page of mdBook's include test book, restated: the chapter (at `path`), and the Markdown
/// mdBook's include preprocessor makes of it (mdBook's test checks the HTML rendered from it).
struct BookPage {
    test: &'static str,
    path: &'static str,
    chapter: &'static str,
    expected: &'static str,
}

/// The pages of mdBook's include test book (`include`, `multiline_include`,
/// `anchored_include`, `playground_include`, `rustdoc_include`), with chapters and files of
/// ctx's own that use the same link forms: a whole Markdown file from the chapter's folder
/// and from a sub-folder, an anchor nested in another, a playground, rustdoc ranges and
/// anchors, and links behind quote markers, admonitions, list indentation, `# `, and the
/// cases of mdBook issues 619, 1127, 1564, 1626 and 2521.
#[test]
fn mdbook_include_test_book() {
    let files = [
        ("sample.md", "## Sample\n\nIncluded text.\n"),
        ("hello.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
        (
            "nested.rs",
            "// ANCHOR: outer\nfn outer() {\n    // ANCHOR: inner\n    let x = 1;\n    // ANCHOR_END: inner\n}\n// ANCHOR_END: outer\n",
        ),
        (
            "example.rs",
            "fn main() {\n    println!(\"shown\");\n#\n#   // hidden in the rendered page\n}\n",
        ),
        (
            "partial.rs",
            "fn helper() {\n    println!(\"helper\");\n}\n\nfn main() {\n    helper();\n}\n",
        ),
        (
            "partial-anchored.rs",
            "fn other() {\n    println!(\"other\");\n}\n\n// ANCHOR: shown\nfn main() {\n    other();\n}\n// ANCHOR_END: shown\n",
        ),
        (
            "lines.txt",
            "row 1\nrow 2\nrow 3\nrow 4\nrow 5\nrow 6\nrow 7\nrow 8\nrow 9\nrow 10\nrow 11\nrow 12\n",
        ),
        ("body.rs", "println!(\"in a quote\");\n\nprintln!(\"after a blank line\");\n"),
        ("method.rs", "pub fn go() {\n    println!(\"go\");\n}\n"),
        ("entry.rs", "pub fn main() {\n    go();\n}\n"),
        (
            "Classes.purs",
            "module Classes where\n\n-- ANCHOR: eqPair\ninstance eqPair :: Eq a => Eq (Pair a) where\n  eq (Pair a b) (Pair c d) = a == c && b == d\n-- ANCHOR_END: eqPair\n",
        ),
        (
            "search.rs",
            "fn find(xs: &[i32], x: i32) -> Option<usize> {\n    xs.iter().position(|&y| y == x)\n}\n",
        ),
    ];
    let pages = [
        BookPage {
            test: "include: includes.md",
            path: "c.md",
            chapter: concat!("# Basic\n", "\n", "{{#include sample.md}}\n",),
            expected: concat!("# Basic\n", "\n", "## Sample\n", "\n", "Included text.\n",),
        },
        BookPage {
            test: "include: relative/includes.md",
            path: "sub/c.md",
            chapter: concat!("# From a folder\n", "\n", "{{#include ../sample.md}}\n",),
            expected: concat!("# From a folder\n", "\n", "## Sample\n", "\n", "Included text.\n",),
        },
        BookPage {
            test: "anchored_include",
            path: "c.md",
            chapter: concat!(
                "# Anchors\n",
                "\n",
                "```rust\n",
                "{{#include nested.rs:inner}}\n",
                "```\n",
            ),
            expected: concat!("# Anchors\n", "\n", "```rust\n", "    let x = 1;\n", "```\n",),
        },
        BookPage {
            test: "playground_include",
            path: "c.md",
            chapter: concat!("# Playground\n", "\n", "{{#playground example.rs}}\n",),
            expected: concat!(
                "# Playground\n",
                "\n",
                "```rust\n",
                "fn main() {\n",
                "    println!(\"shown\");\n",
                "#\n",
                "#   // hidden in the rendered page\n",
                "}\n",
                "```\n",
            ),
        },
        BookPage {
            test: "rustdoc_include",
            path: "c.md",
            chapter: concat!(
                "# Rustdoc\n",
                "\n",
                "```rust\n",
                "{{#rustdoc_include partial.rs:5:7}}\n",
                "```\n",
                "\n",
                "```rust\n",
                "{{#rustdoc_include partial-anchored.rs:shown}}\n",
                "```\n",
            ),
            expected: concat!(
                "# Rustdoc\n",
                "\n",
                "```rust\n",
                "# fn helper() {\n",
                "#     println!(\"helper\");\n",
                "# }\n",
                "# \n",
                "fn main() {\n",
                "    helper();\n",
                "}\n",
                "```\n",
                "\n",
                "```rust\n",
                "# fn other() {\n",
                "#     println!(\"other\");\n",
                "# }\n",
                "# \n",
                "fn main() {\n",
                "    other();\n",
                "}\n",
                "```\n",
            ),
        },
        BookPage {
            test: "multiline_include: multiline.md",
            path: "c.md",
            chapter: concat!(
                "# Multi-line\n",
                "\n",
                "```rust\n",
                "{{#include hello.rs}}\n",
                "```\n",
                "\n",
                "> Quoted:\n",
                "> ```rust\n",
                "> {{#include hello.rs}}\n",
                "> ```\n",
                "\n",
                "> [!NOTE]\n",
                "> ```rust\n",
                "> {{#include hello.rs}}\n",
                "> ```\n",
                "\n",
                "> Two levels\n",
                "> > ```rust\n",
                "> > {{#include hello.rs}}\n",
                "> > ```\n",
                "\n",
                "- Once:\n",
                "  ```rust\n",
                "  {{#include hello.rs}}\n",
                "  ```\n",
                "  - Twice:\n",
                "    ```rust\n",
                "    {{#include hello.rs}}\n",
                "    ```\n",
                "\n",
                "1. Numbered:\n",
                "   ```rust\n",
                "   {{#include hello.rs}}\n",
                "   ```\n",
                "1. Next.\n",
            ),
            expected: concat!(
                "# Multi-line\n",
                "\n",
                "```rust\n",
                "fn main() {\n",
                "    println!(\"hello\");\n",
                "}\n",
                "```\n",
                "\n",
                "> Quoted:\n",
                "> ```rust\n",
                "> fn main() {\n",
                ">     println!(\"hello\");\n",
                "> }\n",
                "> ```\n",
                "\n",
                "> [!NOTE]\n",
                "> ```rust\n",
                "> fn main() {\n",
                ">     println!(\"hello\");\n",
                "> }\n",
                "> ```\n",
                "\n",
                "> Two levels\n",
                "> > ```rust\n",
                "> > fn main() {\n",
                "> >     println!(\"hello\");\n",
                "> > }\n",
                "> > ```\n",
                "\n",
                "- Once:\n",
                "  ```rust\n",
                "  fn main() {\n",
                "      println!(\"hello\");\n",
                "  }\n",
                "  ```\n",
                "  - Twice:\n",
                "    ```rust\n",
                "    fn main() {\n",
                "        println!(\"hello\");\n",
                "    }\n",
                "    ```\n",
                "\n",
                "1. Numbered:\n",
                "   ```rust\n",
                "   fn main() {\n",
                "       println!(\"hello\");\n",
                "   }\n",
                "   ```\n",
                "1. Next.\n",
            ),
        },
        BookPage {
            test: "multiline_include: multiline/issues.md",
            path: "c.md",
            chapter: concat!(
                "# Issues\n",
                "\n",
                "```rust\n",
                "{{#include lines.txt::2}}\n",
                "# {{#include lines.txt:3:10}}\n",
                "{{#include lines.txt:11:}}\n",
                "```\n",
                "\n",
                "> Quoted code:\n",
                ">\n",
                "> ```rust\n",
                "> {{#include body.rs}}\n",
                "> ```\n",
                ">\n",
                "> After.\n",
                "\n",
                "- Indented:\n",
                "\n",
                "  ```rust\n",
                "  struct S;\n",
                "\n",
                "  impl S {\n",
                "      {{#include method.rs}}\n",
                "  }\n",
                "\n",
                "  {{#include entry.rs}}\n",
                "  ```\n",
                "\n",
                "1. Anchored:\n",
                "    ```haskell\n",
                "    {{#include Classes.purs:eqPair}}\n",
                "    ```\n",
                "    then.\n",
                "\n",
                "- Spaced link:\n",
                "  ```rust\n",
                "  {{ #include search.rs }}\n",
                "  ```\n",
                "- Last.\n",
            ),
            expected: concat!(
                "# Issues\n",
                "\n",
                "```rust\n",
                "row 1\n",
                "row 2\n",
                "# row 3\n",
                "# row 4\n",
                "# row 5\n",
                "# row 6\n",
                "# row 7\n",
                "# row 8\n",
                "# row 9\n",
                "# row 10\n",
                "row 11\n",
                "row 12\n",
                "```\n",
                "\n",
                "> Quoted code:\n",
                ">\n",
                "> ```rust\n",
                "> println!(\"in a quote\");\n",
                "> \n",
                "> println!(\"after a blank line\");\n",
                "> ```\n",
                ">\n",
                "> After.\n",
                "\n",
                "- Indented:\n",
                "\n",
                "  ```rust\n",
                "  struct S;\n",
                "\n",
                "  impl S {\n",
                "      pub fn go() {\n",
                "          println!(\"go\");\n",
                "      }\n",
                "  }\n",
                "\n",
                "  pub fn main() {\n",
                "      go();\n",
                "  }\n",
                "  ```\n",
                "\n",
                "1. Anchored:\n",
                "    ```haskell\n",
                "    instance eqPair :: Eq a => Eq (Pair a) where\n",
                "      eq (Pair a b) (Pair c d) = a == c && b == d\n",
                "    ```\n",
                "    then.\n",
                "\n",
                "- Spaced link:\n",
                "  ```rust\n",
                "  fn find(xs: &[i32], x: i32) -> Option<usize> {\n",
                "      xs.iter().position(|&y| y == x)\n",
                "  }\n",
                "  ```\n",
                "- Last.\n",
            ),
        },
    ];
    for page in &pages {
        let mut all = files.to_vec();
        all.push((page.path, page.chapter));
        let (code, out, err) = assemble_book(&all, page.path);
        assert_eq!(
            (code, out.as_str()),
            (Some(0), page.expected),
            "{MDBOOK_INCLUDES} {}: {err}",
            page.test
        );
    }

    // `recursive_include`: a chapter that includes itself. mdBook expands it ten levels deep,
    // logs "Stack depth exceeded" and drops the eleventh link; ctx differs on purpose: a file
    // already on the include chain is `E_CYCLE` (assembly.md §4), and the link's place gets
    // the error's marker.
    let chapter = "Around and around\n{{#include recursive.md}}\n";
    let (code, out, err) = assemble_book(&[("recursive.md", chapter)], "recursive.md");
    assert_eq!(code, Some(1));
    assert!(out.starts_with("Around and around\n<!-- ctx: E_CYCLE"), "{out}");
    assert!(err.contains("E_CYCLE"), "{err}");
    assert_eq!(pages.len() + 1, 8, "the count in docs/dialects.md");
}

/// The chapters of the book in tests/fixtures/mdbook-guide (see its README): one for each
/// chapter of mdBook's user guide that holds a link, with the same link forms, and the
/// Markdown mdBook's include preprocessor makes of it.
const GUIDE_CHAPTERS: [(&str, &str); 7] = [
    ("format/mdbook.md", include_str!("../fixtures/mdbook-guide/expected/format/mdbook.md")),
    ("format/summary.md", include_str!("../fixtures/mdbook-guide/expected/format/summary.md")),
    (
        "format/configuration/preprocessors.md",
        include_str!("../fixtures/mdbook-guide/expected/format/configuration/preprocessors.md"),
    ),
    (
        "format/theme/index-hbs.md",
        include_str!("../fixtures/mdbook-guide/expected/format/theme/index-hbs.md"),
    ),
    ("cli/watch.md", include_str!("../fixtures/mdbook-guide/expected/cli/watch.md")),
    ("cli/serve.md", include_str!("../fixtures/mdbook-guide/expected/cli/serve.md")),
    (
        "for_developers/preprocessors.md",
        include_str!("../fixtures/mdbook-guide/expected/for_developers/preprocessors.md"),
    ),
];

/// `ctx assemble --dialect mdbook` of each chapter of the small guide gives, byte for byte,
/// the Markdown mdBook's include preprocessor gives; the options are those docs/dialects.md
/// uses on mdBook's own guide (ctx's own syntax off, a failed link kept as written).
#[test]
fn mdbook_guide_chapters() {
    let dir = TempDir::new().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mdbook-guide");
    dir.copy_from(fixture, &["**/*"]).unwrap();
    for (chapter, expected) in GUIDE_CHAPTERS {
        let out = Command::cargo_bin("ctx")
            .unwrap()
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .args(["--root", ".", "--no-mentions", "--no-includes", "--no-directives"])
            .args(["--on-error", "keep", "--max-lines", "0", "assemble", "--dialect", "mdbook"])
            .arg(format!("guide/src/{chapter}"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{chapter}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{chapter}");
        assert!(stderr.is_empty(), "{chapter}: {stderr}");
    }
}

/// A chapter of the book in tests/fixtures/mdbook-recorded (see its README), what ctx is
/// run with on it besides `--root . --max-lines 0 assemble --dialect mdbook`, and what
/// must hold of the run: exit code and the codes on standard error, in order.
struct Recorded {
    chapter: &'static str,
    on_error: &'static str,
    extra: &'static [&'static str],
    code: i32,
    codes: &'static [&'static str],
}

/// The chapters whose output ctx writes otherwise than mdBook on purpose: each has its
/// Markdown under `expected/`, and docs/dialects.md says why.
const RECORDED_DIFFERENT: [&str; 3] = ["bom.md", "playground.md", "prefix.md"];

/// `ctx assemble --dialect mdbook` of each chapter of the recorded book gives, byte for byte,
/// what mdBook 0.4.52 and 0.5.4 gave (their markdown renderer's output, recorded under
/// `recorded/`), but for the chapters of [`RECORDED_DIFFERENT`], which give `expected/`:
/// links read again in every included file (a code file in a code block, a
/// `{{#rustdoc_include}}`'s hidden lines, a playground), mdBook's depth with
/// `--max-depth 10`, the text of an included file unaltered but for its links and their
/// escapes, a byte order mark kept (made visible), and a line prefix repeated only when it is
/// no prose.
#[test]
fn mdbook_recorded_chapters() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mdbook-recorded");
    let fixture = std::path::Path::new(fixture);
    let dir = TempDir::new().unwrap();
    dir.copy_from(fixture.join("book"), &["**/*"]).unwrap();
    let chapters = [
        Recorded { chapter: "recursive.md", on_error: "keep", extra: &[], code: 0, codes: &[] },
        Recorded {
            chapter: "text.md",
            on_error: "keep",
            extra: &[],
            code: 1,
            codes: &["E_NOT_FOUND"],
        },
        Recorded {
            chapter: "playground.md",
            on_error: "keep",
            extra: &[],
            code: 0,
            codes: &["W_HIDDEN_TEXT"],
        },
        // mdBook reads ten levels of links and drops the eleventh with an error.
        Recorded {
            chapter: "depth.md",
            on_error: "drop",
            extra: &["--max-depth", "10"],
            code: 1,
            codes: &["E_DEPTH"],
        },
        Recorded {
            chapter: "bom.md",
            on_error: "keep",
            extra: &[],
            code: 0,
            codes: &["W_HIDDEN_TEXT", "W_HIDDEN_TEXT", "W_HIDDEN_TEXT", "W_HIDDEN_TEXT"],
        },
        Recorded { chapter: "chapter-bom.md", on_error: "keep", extra: &[], code: 0, codes: &[] },
        Recorded { chapter: "prefix.md", on_error: "keep", extra: &[], code: 0, codes: &[] },
    ];
    let read = |path: std::path::PathBuf| {
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    for c in &chapters {
        let recorded = read(fixture.join("recorded/0.4.52").join(c.chapter));
        assert_eq!(recorded, read(fixture.join("recorded/0.5.4").join(c.chapter)), "{}", c.chapter);
        let different = RECORDED_DIFFERENT.contains(&c.chapter);
        let expected = fixture.join("expected").join(c.chapter);
        assert_eq!(expected.exists(), different, "{}", c.chapter);
        let expected = if different { read(expected) } else { recorded.clone() };
        assert_eq!(different, expected != recorded, "{}", c.chapter);
        let out = Command::cargo_bin("ctx")
            .unwrap()
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .args(["--root", ".", "--max-lines", "0", "--on-error", c.on_error])
            .args(c.extra)
            .args(["assemble", "--dialect", "mdbook"])
            .arg(format!("src/{}", c.chapter))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{}: {stderr}", c.chapter);
        assert_eq!(out.status.code(), Some(c.code), "{}: {stderr}", c.chapter);
        let codes: Vec<&str> = stderr
            .lines()
            .filter_map(|l| l.split_once("[").and_then(|(_, rest)| rest.split_once(']')))
            .map(|(code, _)| code)
            .collect();
        assert_eq!(codes, c.codes, "{}: {stderr}", c.chapter);
    }
    assert_eq!(chapters.len(), 7, "the count in docs/dialects.md");
}
