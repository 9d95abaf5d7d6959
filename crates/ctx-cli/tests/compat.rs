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
