//! CLI tests: the real `ctx` binary run in a temporary directory, one test per command,
//! option group, exit status and diagnostic rendering.

use std::path::Path;
use std::process::Stdio;

use assert_cmd::Command;
use assert_fs::TempDir;
use assert_fs::prelude::*;
use expect_test::expect_file;
use serde_json::Value;

use crate::util::{Run, assert_no_raw_hidden, run};

/// The binary in `dir`, with no colour, no forced terminal and no logging from the
/// environment.
/// The user's trust file is looked for where there is none, unless a test sets its own.
fn ctx_in(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(dir).env("NO_COLOR", "1").env_remove("CTX_FORCE_TTY").env_remove("RUST_LOG");
    cmd.env("CTX_CONFIG_DIR", "/nonexistent/ctx-config");
    cmd
}

fn ctx(dir: &TempDir) -> Command {
    ctx_in(dir.path())
}

/// A workspace with a main document, an include, a source file and a broken document.
fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    dir.child("main.md")
        .write_str(
            "---\nDescription: demo\nParams: [a]\n---\nTitle @{NAME}\n@[docs/part.md]\n@{ifdef DEBUG}\ndebug on\n@{endif}\n",
        )
        .unwrap();
    dir.child("docs/part.md").write_str("Part with @[../src/lib.rs:2:3]\n").unwrap();
    dir.child("src/lib.rs").write_str("one\ntwo\nthree\nfour\n").unwrap();
    dir.child("broken.md").write_str("ok\nsee @[missing.md] now\nask @alice\n").unwrap();
    dir
}

// ---------------------------------------------------------------- ctx parse

#[test]
fn parse_prints_items_as_json() {
    let dir = TempDir::new().unwrap();
    dir.child("doc.md").write_str("see @a.md#L2-3 and @[b.md:1:2]\n").unwrap();
    let out = ctx(&dir).args(["parse", "doc.md"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = json["items"].as_array().unwrap();
    let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "mention", "text", "include", "text"]);
    assert_eq!(items[1]["path"], "a.md");
    assert_eq!(items[1]["selector"]["lines"]["start"], 2);
    assert_eq!(items[1]["selector"]["lines"]["end"], 3);
    assert_eq!(items[1]["column"], 5);
    assert_eq!(items[3]["span"]["start"], 19);
    assert_eq!(json["diagnostics"].as_array().unwrap().len(), 0);
}

#[test]
fn parse_reads_standard_input_and_prints_text() {
    let dir = TempDir::new().unwrap();
    let out = ctx(&dir)
        .args(["parse", "-", "--format", "text"])
        .write_stdin("@{ifdef X}\n")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "directive 0..10 1:1 ifdef X alone=0..11\ntext 10..11 1:11 \"\\n\"\n"
    );
}

#[test]
fn parse_exits_1_on_error_diagnostics() {
    let dir = TempDir::new().unwrap();
    let out = ctx(&dir).args(["parse", "-"]).write_stdin("@{bogus body}").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["diagnostics"][0]["code"], "E_DIRECTIVE");
}

#[test]
fn parse_honours_the_syntax_switches_before_the_command() {
    let dir = TempDir::new().unwrap();
    let r = run(ctx(&dir)
        .args(["--no-includes", "parse", "-", "--format", "text"])
        .write_stdin("@[a.md]"));
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("text "), "{}", r.stdout);
}

#[test]
fn unreadable_input_exits_2_with_a_clear_message() {
    let dir = TempDir::new().unwrap();
    let out = ctx(&dir).args(["parse", "missing.md"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("E_NOT_FOUND: no such file or directory: missing.md")
    );

    let out = ctx(&dir).args(["parse", "-"]).write_stdin(vec![0x66, 0xff, 0x00]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not UTF-8"));
}

#[test]
fn help_and_version() {
    let dir = TempDir::new().unwrap();
    let out = ctx(&dir).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for command in ["assemble", "expand", "check", "refs", "parse", "complete", "completions"] {
        assert!(help.contains(command), "{command} missing from\n{help}");
    }
    let out = ctx(&dir).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ctx "));
}

// ---------------------------------------------------------------- ctx assemble

#[test]
fn assemble_inlines_includes_and_macros() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["assemble", "main.md", "-D", "NAME=ctx"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "Title ctx\nPart with two\nthree\n");
    assert_eq!(r.stderr, "");

    // Options before the command, `-D NAME` defining it empty, `--define` long form.
    let r = run(ctx(&dir).args(["-D", "DEBUG", "--define", "NAME=x", "assemble", "main.md"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("debug on"), "{}", r.stdout);
    assert!(r.stdout.starts_with("Title x\n"));
}

#[test]
fn assemble_reads_standard_input() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["assemble", "-"]).write_stdin("A @[src/lib.rs:1] B\n"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "A one B\n");

    // An empty document is valid: empty output, exit 0.
    let r = run(ctx(&dir).args(["assemble", "-"]).write_stdin(""));
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let r = run(ctx(&dir).args(["check", "-"]).write_stdin(""));
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    assert_eq!(r.stderr, "0 errors, 0 warnings in 1 file\n");
    let r = run(ctx(&dir).args(["refs", "-"]).write_stdin(""));
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "-\n", ""));

    let r = run(ctx(&dir).args(["assemble", "-"]).write_stdin(vec![b'a', 0xc3]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("W_BINARY: standard input is not UTF-8 text"), "{}", r.stderr);
}

/// The attack: `ctx parse` asked to read a file outside the workspace, through a link out of
/// it, a denied file and a FIFO. What must not happen: any of their bytes printed, or a hang.
/// It reads through the sandbox as `assemble` does: each is exit 2 with its code.
#[cfg(unix)]
#[test]
fn parse_reads_through_the_sandbox() {
    let outside = TempDir::new().unwrap();
    outside.child("secret.md").write_str("OUTSIDE SECRET\n").unwrap();
    let dir = TempDir::new().unwrap();
    dir.child(".env").write_str("API_KEY=hunter2\n").unwrap();
    dir.child("sub/doc.md").write_str("see @[a.md]\n").unwrap();
    std::os::unix::fs::symlink(outside.child("secret.md").path(), dir.child("l.md").path())
        .unwrap();
    let fifo = dir.child("f.md");
    assert!(std::process::Command::new("mkfifo").arg(fifo.path()).status().unwrap().success());
    let secret = outside.child("secret.md").path().display().to_string();
    for (file, code) in [
        (secret.as_str(), "E_OUTSIDE"),
        ("l.md", "E_OUTSIDE"),
        (".env", "E_DENIED"),
        ("f.md", "E_NOT_REGULAR"),
    ] {
        let r = run(ctx(&dir).args(["parse", file, "--format", "text"]));
        assert_eq!(r.code, 2, "{file}: {}", r.stderr);
        assert!(r.stderr.contains(code), "{file}: {}", r.stderr);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(!all.contains("SECRET") && !all.contains("hunter2"), "{file}: {all}");
    }
    // A document is found from the root, as for `assemble`.
    let r = run(ctx(&dir).args(["parse", "sub/doc.md", "--format", "text"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("include"), "{}", r.stdout);
    // A binary document says its code.
    dir.child("bin.md").write_binary(b"\0\x01\x02").unwrap();
    for command in ["parse", "assemble", "check"] {
        let r = run(ctx(&dir).args([command, "bin.md"]));
        assert_eq!(r.code, 2, "{command}: {}", r.stderr);
        assert!(r.stderr.contains("W_BINARY"), "{command}: {}", r.stderr);
    }
}

/// The attack: a document named from a folder outside the workspace (`--root` elsewhere).
/// What must not happen: the error naming the absolute path it was made into, which lies
/// outside every root; it names the file as written, in every command that reads one.
#[test]
fn a_document_outside_the_root_is_named_as_written() {
    let base = TempDir::new().unwrap();
    base.child("w/a.md").write_str("hi\n").unwrap();
    base.child("other/z.md").write_str("OUTSIDE\n").unwrap();
    let root = base.child("w").path().display().to_string();
    let hidden = base.child("other").path().display().to_string();
    for command in ["assemble", "refs", "check", "parse"] {
        let r = run(ctx_in(base.child("other").path()).args([command, "z.md", "--root", &root]));
        assert_eq!(r.code, 2, "{command}: {}", r.stderr);
        assert!(r.stderr.contains("E_OUTSIDE") && r.stderr.contains("z.md"), "{}", r.stderr);
        assert!(!r.stderr.contains(&hidden), "{command}: {}", r.stderr);
        assert!(!r.stdout.contains("OUTSIDE"), "{command}: {}", r.stdout);
    }
}

/// cli.md: `ctx resolve` says `file` only for a file: a folder or a FIFO is refused as not a
/// regular file (reading it would be), and the exit status says a query is not a file.
#[cfg(unix)]
#[test]
fn resolve_says_file_for_files_only() {
    let dir = TempDir::new().unwrap();
    dir.child("d/a.txt").write_str("a\n").unwrap();
    dir.child("b.txt").write_str("b\n").unwrap();
    assert!(
        std::process::Command::new("mkfifo").arg(dir.child("f").path()).status().unwrap().success()
    );
    let r = run(ctx(&dir).args(["resolve", "--format", "json", "b.txt"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for query in ["d", "f"] {
        let r = run(ctx(&dir).args(["resolve", "--format", "json", "b.txt", query]));
        assert_eq!(r.code, 1, "{query}: {}", r.stdout);
        let json: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(json[0]["status"], "file");
        assert_eq!(json[1]["status"], "refused", "{query}: {json}");
        assert_eq!(json[1]["code"], "E_NOT_REGULAR", "{query}: {json}");
    }
}

/// cli.md: a format a command does not take is a usage error (exit 2), also for the commands
/// whose output has one shape; nothing is done.
#[test]
fn a_command_without_formats_refuses_one() {
    let dir = TempDir::new().unwrap();
    for args in [
        &["completions", "bash", "--format", "json"][..],
        &["init", "--format", "xml"],
        &["mcp", "--format", "markdown"],
        &["lsp", "--format", "xml"],
        &["paste-image", "--format", "json"],
    ] {
        let r = run(ctx(&dir).args(args));
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("takes no --format"), "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
    }
    assert!(!dir.child(".ctx").exists() && !dir.child("ctx.toml").exists(), "init did nothing");
}

#[test]
fn unreadable_top_level_document_exits_2() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["assemble", "nope.md"]));
    assert_eq!(r.code, 2);
    // Said once: the message of the sandbox's error is not repeated as its cause.
    assert_eq!(r.stderr, "ctx: error: E_NOT_FOUND: no such file or directory: nope.md\n");
    let r = run(ctx(&dir).args(["assemble", "../outside.md"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("E_OUTSIDE"), "{}", r.stderr);
}

#[test]
fn errors_exit_1_with_one_plain_line_each() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["assemble", "broken.md"]));
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "ok\nsee <!-- ctx: E_NOT_FOUND: no such file or directory: missing.md --> now\nask @alice\n"
    );
    assert_eq!(
        r.stderr,
        "broken.md:2:5: error[E_NOT_FOUND]: no such file or directory: missing.md\n\
         broken.md:3:5: warning[W_UNRESOLVED]: no such file or directory: alice\n"
    );
}

#[test]
fn quiet_hides_warnings_but_not_errors() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["assemble", "broken.md", "-q"]));
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "broken.md:2:5: error[E_NOT_FOUND]: no such file or directory: missing.md\n"
    );
    dir.child("warn.md").write_str("ask @alice\n").unwrap();
    let r = run(ctx(&dir).args(["-q", "assemble", "warn.md"]));
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

#[test]
fn terminal_rendering_shows_the_line_and_a_caret() {
    let dir = workspace();
    // A terminal without colour (NO_COLOR is set by the helper).
    let r = run(ctx(&dir).env("CTX_FORCE_TTY", "1").args(["assemble", "broken.md"]));
    assert_eq!(r.code, 1);
    assert!(!r.stderr.contains('\x1b'), "{}", r.stderr);
    let expected = "\
error[E_NOT_FOUND]: no such file or directory: missing.md
  ╭▸ broken.md:2:5
  │
2 │ see @[missing.md] now
  ╰╴    ━━━━━━━━━━━━━
";
    assert!(r.stderr.starts_with(expected), "{}", r.stderr);
    assert!(r.stderr.contains("warning[W_UNRESOLVED]"));

    // `--color always` forces the rendering and colour, whatever NO_COLOR says.
    let r = run(ctx(&dir).args(["--color", "always", "assemble", "broken.md"]));
    assert!(r.stderr.contains("\x1b["), "{}", r.stderr);
    assert!(r.stderr.contains("━━━━━━━━━━━━━"));

    // `--color never` wins over a terminal.
    let r = run(ctx(&dir).env("CTX_FORCE_TTY", "1").args([
        "assemble",
        "broken.md",
        "--color",
        "never",
    ]));
    assert!(r.stderr.starts_with("broken.md:2:5: error[E_NOT_FOUND]"), "{}", r.stderr);

    // Colour on a terminal unless NO_COLOR.
    let r = run(ctx(&dir)
        .env("CTX_FORCE_TTY", "1")
        .env_remove("NO_COLOR")
        .args(["assemble", "broken.md"]));
    assert!(r.stderr.contains("\x1b["), "{}", r.stderr);
}

#[test]
fn strict_stops_at_the_first_error() {
    let dir = workspace();
    dir.child("two.md").write_str("a @[x.md]\nb @[y.md]\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "two.md", "--strict"]));
    assert_eq!(r.code, 1);
    assert!(!r.stdout.contains("b "), "{}", r.stdout);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

#[test]
fn assemble_formats_and_modes() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["assemble", "docs/part.md", "--format", "xml"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("<file path=\"src/lib.rs\" lines=\"2-3\">"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["assemble", "docs/part.md", "--format", "markdown"]));
    // Headed by the reference as written, without its `@` and brackets (assembly.md §7).
    assert!(r.stdout.contains("#### Source: ../src/lib.rs:2:3\n"), "{}", r.stdout);
    assert!(!r.stdout.contains("#### Source: src/lib.rs#L2-3"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["assemble", "main.md", "--format", "json", "--tokens"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["description"], "demo");
    assert_eq!(json["params"][0], "a");
    assert!(json["stats"]["tokens"].as_u64().unwrap() > 0);
    let r = run(ctx(&dir).args(["assemble", "main.md", "--format", "json"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(json["stats"]["tokens"].is_null());
    let r = run(ctx(&dir).args(["assemble", "docs/part.md", "--mode", "append"]));
    assert!(r.stdout.starts_with("Part with @[../src/lib.rs:2:3]\n"), "{}", r.stdout);
    // The inline format labels an attachment as Markdown does.
    assert!(
        r.stdout.ends_with("\n#### Source: ../src/lib.rs:2:3\n\n```rust\ntwo\nthree\n```\n"),
        "{:?}",
        r.stdout
    );
    // Formats of other commands are usage errors.
    let r = run(ctx(&dir).args(["assemble", "main.md", "--format", "text"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("expected one of: inline, xml, markdown, json"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["assemble", "main.md", "--format", "yaml"]));
    assert_eq!(r.code, 2);
}

#[test]
fn limits() {
    let dir = workspace();
    dir.child("long.rs").write_str(&"x\n".repeat(10)).unwrap();
    dir.child("inc.md").write_str("@[long.rs]").unwrap();
    let r = run(ctx(&dir).args(["assemble", "inc.md", "--max-lines", "3"]));
    assert!(r.stdout.contains("[... truncated 7 lines ...]"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["assemble", "inc.md", "--max-lines", "0"]));
    assert_eq!(r.stdout, "x\n".repeat(10));
    let r = run(ctx(&dir).args(["assemble", "inc.md", "--max-file-bytes", "15"]));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("E_TOO_LARGE"), "{}", r.stderr);
    dir.child("chain/a.md").write_str("@[b.md]").unwrap();
    dir.child("chain/b.md").write_str("@[c.md]").unwrap();
    dir.child("chain/c.md").write_str("c").unwrap();
    let r = run(ctx(&dir).args(["assemble", "chain/a.md", "--max-depth", "0"]));
    assert_eq!((r.code, r.stdout.as_str()), (0, "c"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["assemble", "chain/a.md", "--max-depth", "1"]));
    assert!(r.stderr.contains("E_DEPTH"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["assemble", "main.md", "--max-includes", "1"]));
    assert!(r.stderr.contains("E_BUDGET"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["assemble", "inc.md", "--max-output-bytes", "4"]));
    assert!(r.stderr.contains("E_BUDGET"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["assemble", "inc.md", "--max-tokens", "2"]));
    assert!(r.stderr.contains("W_BUDGET"), "{}", r.stderr);
    dir.child("dir.md").write_str("@[src/]").unwrap();
    dir.child("src/more.rs").write_str("more\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "dir.md", "--max-files", "1"]));
    assert!(r.stdout.contains("1 more files omitted"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["assemble", "inc.md", "--line-numbers", "--max-lines", "2"]));
    assert!(r.stdout.starts_with("1: x\n2: x\n"), "{}", r.stdout);
}

#[test]
fn syntax_switches() {
    let dir = workspace();
    dir.child("s.md")
        .write_str("@[src/lib.rs:1] @src/lib.rs#L2 @{define A, \"v\"}@{A} `@[src/lib.rs:3]`\n")
        .unwrap();
    let r = run(ctx(&dir).args(["assemble", "s.md"]));
    assert_eq!(r.stdout, "one two v `@[src/lib.rs:3]`\n");
    let r = run(ctx(&dir).args(["assemble", "s.md", "--no-includes"]));
    assert!(r.stdout.starts_with("@[src/lib.rs:1] two"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["assemble", "s.md", "--no-mentions"]));
    assert!(r.stdout.starts_with("one @src/lib.rs#L2 v"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["assemble", "s.md", "--no-directives"]));
    assert!(r.stdout.contains("@{define A, \"v\"}@{A}"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["assemble", "s.md", "--no-code-skip"]));
    assert!(r.stdout.ends_with("`three`\n"), "{}", r.stdout);
}

#[test]
fn roots_and_allow() {
    let dir = workspace();
    let other = TempDir::new().unwrap();
    other.child("shared.md").write_str("shared text\n").unwrap();
    let shared = other.path().join("shared.md");
    let doc = format!("@[{}]\n", shared.display());
    dir.child("abs.md").write_str(&doc).unwrap();
    let r = run(ctx(&dir).args(["assemble", "abs.md"]));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("E_OUTSIDE"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["assemble", "abs.md", "--allow"]).arg(other.path()));
    assert_eq!((r.code, r.stdout.as_str()), (0, "shared text\n"), "{}", r.stderr);
    // `--root` elsewhere: the document is found from the current directory or the root.
    let r = run(ctx(&other).arg("--root").arg(dir.path()).args(["assemble", "docs/part.md"]));
    assert_eq!((r.code, r.stdout.as_str()), (0, "Part with two\nthree\n"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["--root", "nowhere", "assemble", "main.md"]));
    assert_eq!(r.code, 2);
}

#[test]
fn closed_standard_output_is_success() {
    let dir = workspace();
    dir.child("big.txt").write_str(&"0123456789abcdef\n".repeat(200_000)).unwrap();
    dir.child("big.md").write_str("@[big.txt]\n").unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctx"))
        .current_dir(dir.path())
        .args([
            "assemble",
            "big.md",
            "--max-file-bytes",
            "0",
            "--max-lines",
            "0",
            "--max-tokens",
            "0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn usage_errors_exit_2() {
    let dir = workspace();
    assert_eq!(run(ctx(&dir).args(["assemble"])).code, 2);
    assert_eq!(run(ctx(&dir).args(["frobnicate"])).code, 2);
    assert_eq!(run(ctx(&dir).args(["assemble", "main.md", "--max-lines", "many"])).code, 2);
    let r = run(ctx(&dir).args(["assemble", "main.md", "-D", "1BAD=x"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a macro name"), "{}", r.stderr);
}

#[test]
fn verbose_logs_to_standard_error() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["-v", "assemble", "main.md"]));
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("assembled"), "{}", r.stderr);
    let r = run(ctx(&dir).env("RUST_LOG", "debug").args(["assemble", "main.md"]));
    assert!(r.stderr.contains("context built"), "{}", r.stderr);
}

// ---------------------------------------------------------------- ctx expand

#[test]
fn expand_appends_mentions_as_xml() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["expand", "explain @src/lib.rs#L1-2 please"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "explain @src/lib.rs#L1-2 please\n\n<system-reminder>\nThe following files were mentioned with @ syntax:\n\n<file path=\"src/lib.rs\" lines=\"1-2\">\none\ntwo\n</file>\n</system-reminder>\n"
    );
    let r = run(ctx(&dir).args(["expand", "--format", "markdown"]).write_stdin("see @src/lib.rs"));
    assert!(r.stdout.contains("#### Source: src/lib.rs\n\n```rust\none\n"), "{}", r.stdout);
    let r = run(ctx(&dir).arg("expand").write_stdin(""));
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let r = run(ctx(&dir).args(["expand", "ask @alice about @[gone.md]"]));
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("Some files could not be loaded:\n- @gone.md: E_NOT_FOUND"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("-:1:18: error[E_NOT_FOUND]"), "{}", r.stderr);
    let r = run(ctx(&dir).arg("expand").write_stdin(vec![0xff]));
    assert_eq!(r.code, 2);
}

// ---------------------------------------------------------------- ctx check

#[test]
fn check_prints_only_diagnostics_and_a_summary() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["check", "broken.md", "main.md"]));
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "1 error, 2 warnings in 2 files\n", "the summary is not a diagnostic");
    assert_eq!(
        r.stdout,
        "broken.md:2:5: error[E_NOT_FOUND]: no such file or directory: missing.md\n\
         broken.md:3:5: warning[W_UNRESOLVED]: no such file or directory: alice\n\
         main.md:5:7: warning[W_UNDEFINED_MACRO]: macro `NAME` is not defined; left as text\n"
    );
    let r = run(ctx(&dir).args(["check", "main.md", "-DNAME=x"]));
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert_eq!(r.stderr, "0 errors, 0 warnings in 1 file\n");
    let r = run(ctx(&dir).args(["check", "broken.md", "--format", "json"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["errors"], 1);
    assert_eq!(json["diagnostics"][0]["code"], "E_NOT_FOUND");
    let r = run(ctx(&dir).args(["check", "main.md", "nope.md"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nope.md"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["check", "-"]).write_stdin("@{endif}\n"));
    assert_eq!(r.code, 1);
    assert!(r.stdout.starts_with("-:1:1: error[E_DIRECTIVE]"), "{}", r.stdout);
}

/// A 1 MiB document of one line of failing mentions (87 381 of them; issue 23, rule 6): `ctx
/// check`, its terminal rendering, its JSON and `ctx expand` each end well within the hang
/// guard (each took 25 to 35 s and 10 GB before diagnostics kept a window), with lines and
/// columns exact, at most 1 000 diagnostics shown and the rest counted, and every caret under
/// its mention.
#[test]
fn a_long_line_of_failing_mentions() {
    let dir = TempDir::new().unwrap();
    let text = "@nothere.md ".repeat(((1 << 20) - 1) / 12) + "\n";
    dir.child("long.md").write_str(&text).unwrap();
    let guard = std::time::Duration::from_secs(60);

    let r = run(ctx(&dir).timeout(guard).args(["check", "long.md"]));
    assert_eq!(r.code, 1, "the include budget's E_BUDGET is an error");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1000, "{}", r.stderr);
    for (i, line) in lines.iter().enumerate() {
        let column = 12 * i + 1;
        let want = format!(
            "long.md:1:{column}: warning[W_UNRESOLVED]: no such file or directory: nothere.md"
        );
        assert_eq!(*line, want);
    }
    assert_eq!(
        r.stderr,
        "ctx: 9001 more diagnostics not shown\n1 error, 10000 warnings in 1 file\n"
    );

    // Drawn: the window of the line around each mention, `…` where it goes on, the column
    // of the whole line in the header, the caret under the mention.
    let r = run(ctx(&dir).timeout(guard).args(["--color", "always", "check", "long.md"]));
    assert_eq!(r.code, 1);
    let plain: String = strip_ansi(&r.stdout);
    assert!(plain.len() < 1000 * 600, "{} bytes shown", plain.len());
    let blocks: Vec<&str> = plain.split("warning[W_UNRESOLVED]").skip(1).collect();
    assert_eq!(blocks.len(), 1000);
    for (i, block) in blocks.iter().enumerate() {
        let header = format!("╭▸ long.md:1:{}\n", 12 * i + 1);
        assert!(block.contains(&header), "{i}: {block}");
        let rows: Vec<&str> = block.lines().collect();
        let row = rows.iter().position(|l| l.starts_with("1 │ ")).unwrap();
        let col = |l: &str, what: char| l.chars().position(|c| c == what).unwrap();
        let caret = col(rows[row + 1], '━');
        assert_eq!(rows[row].chars().nth(caret), Some('@'), "{i}: {block}");
        assert_eq!(rows[row].starts_with("1 │ …"), i > 6, "{i}: {block}");
        assert!(rows[row].ends_with('…'), "{i}: {block}");
    }

    // The JSON records: every diagnostic, no source text in them.
    let r = run(ctx(&dir).timeout(guard).args(["check", "long.md", "--format", "json"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    let diagnostics = json["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 10_001);
    assert_eq!(diagnostics[9_999]["column"], 12 * 9_999 + 1);
    assert!(r.stdout.len() < 4 << 20, "{} bytes", r.stdout.len());

    // `ctx expand` of the same prompt from standard input.
    let r = run(ctx(&dir).timeout(guard).arg("expand").write_stdin(text.as_str()));
    assert_eq!(r.code, 1);
    assert!(r.stdout.starts_with("@nothere.md @nothere.md "));
    assert!(r.stdout.ends_with("E_BUDGET: include budget of 10000 spent; the rest is not read\n"));
    assert!(r.stderr.ends_with("ctx: 9001 more diagnostics not shown\n"), "{}", r.stderr);
}

/// `text` without its ANSI colour sequences.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

// ---------------------------------------------------------------- ctx refs

#[test]
fn refs_draws_the_include_tree() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["refs", "main.md"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "main.md\n\
         └── docs/part.md  (file, 20 bytes)  @[docs/part.md]  line 6\n\
         \x20   └── src/lib.rs:2-3  (file, 9 bytes)  @[../src/lib.rs:2:3]  line 1\n"
    );
    let r = run(ctx(&dir).args(["refs", "main.md", "--format", "json"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["references"][0]["path"], "docs/part.md");
    assert_eq!(json["references"][0]["children"][0]["lines"]["start"], 2);
    // The fields of the assembly's JSON, `depth` among them.
    assert_eq!(json["references"][0]["depth"], 0);
    assert_eq!(json["references"][0]["children"][0]["depth"], 1);
    let r = run(ctx(&dir).args(["refs", "broken.md"]));
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("@[missing.md]  error[E_NOT_FOUND]"), "{}", r.stdout);
}

// ---------------------------------------------------------------- ctx complete

#[test]
fn complete_ranks_files_and_directories() {
    let dir = workspace();
    dir.child("src/agent.rs").write_str("").unwrap();
    dir.child("src/agenda/notes.txt").write_str("").unwrap();
    dir.child("my file.md").write_str("").unwrap();
    dir.child(".gitignore").write_str("ignored/\n").unwrap();
    dir.child("ignored/agent.rs").write_str("").unwrap();
    dir.child(".env").write_str("SECRET=1").unwrap();
    dir.child("secrets/agent-key.txt").write_str("").unwrap();
    dir.child("ctx.toml").write_str("deny = [\"secrets/**\"]\n").unwrap();

    let r = run(ctx(&dir).args(["complete", "src/ag"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[..3], ["@src/agenda/", "@src/agent.rs", "@src/agenda/notes.txt"]);
    assert!(!r.stdout.contains("ignored"), "{}", r.stdout);
    assert!(!r.stdout.contains("secrets"), "{}", r.stdout);

    let r = run(ctx(&dir).args(["complete", "@\"my f"]));
    assert_eq!(r.stdout.lines().next(), Some("@\"my file.md\""));
    let r = run(ctx(&dir).args(["complete", "env"]));
    assert!(!r.stdout.contains(".env"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["complete", "", "--limit", "2"]));
    assert_eq!(r.stdout.lines().count(), 2);
    let r = run(ctx(&dir).args(["complete", "agent", "--format", "json"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    let first = &json["completions"][0];
    assert_eq!(
        (first["completion"].as_str(), first["kind"].as_str()),
        (Some("@src/agent.rs"), Some("file"))
    );
    let r = run(ctx(&dir).args(["complete", "zzzz"]));
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
}

// ---------------------------------------------------------------- hidden text

/// No character a terminal obeys or that hides text, raw, in `text`.
/// The attack: a document whose references, front matter and text carry a terminal title
/// sequence, a C1 CSI, DEL, bidi, zero-width and Tag characters, and files whose names carry
/// them. What must not happen: any of them reaching standard output or standard error raw, in
/// any command that prints text from files (refs, check, complete, parse, assemble, expand,
/// resolve), in text or in JSON.
#[test]
fn text_from_files_reaches_the_terminal_made_visible() {
    let dir = workspace();
    let hostile = "---\ndescription: \"d\\u202e\\u200b\"\n---\n\
        title \u{1b}]0;pwned\u{7}\u{9b}2J\u{7f}\n\
        see @[gone\u{1b}(0.md] and @[x\u{202e}y.md] and @[z\u{200d}\u{e0041}.md] @[docs/part.md]\n";
    dir.child("hostile.md").write_str(hostile).unwrap();
    dir.child("esc\u{1b}]0;t\u{7}.md").write_str("x").unwrap();
    dir.child("bidi\u{202e}dm.md").write_str("x").unwrap();
    dir.child("c1\u{9b}.md").write_str("x").unwrap();
    let runs: [&[&str]; 14] = [
        &["refs", "hostile.md"],
        &["refs", "hostile.md", "--format", "json"],
        &["check", "hostile.md"],
        &["check", "hostile.md", "--format", "json"],
        &["complete", ""],
        &["complete", "esc", "--format", "json"],
        &["parse", "hostile.md", "--format", "text"],
        &["parse", "hostile.md"],
        &["assemble", "hostile.md"],
        &["assemble", "hostile.md", "--format", "json"],
        // The prompt's own text is kept as typed; what it brings in is not.
        &["expand", "@hostile.md @x.md"],
        &["resolve", "gone\u{1b}[2J.md", "x\u{202e}y.md"],
        &["resolve", "--format", "json", "gone\u{1b}[2J.md"],
        &["assemble", "gone\u{1b}]0;t\u{7}.md"],
    ];
    for args in runs {
        let r = run(ctx(&dir).args(args));
        assert!(r.code <= 2, "{args:?}: {}", r.stderr);
        assert_no_raw_hidden(&r.stdout);
        assert_no_raw_hidden(&r.stderr);
        if r.stdout.starts_with('{') || r.stdout.starts_with('[') {
            let value: Value = serde_json::from_str(&r.stdout).unwrap();
            assert_no_raw_hidden(&format!("{value:#}"));
        }
    }
    // What was hidden shows as what it is.
    let r = run(ctx(&dir).args(["refs", "hostile.md"]));
    assert!(r.stdout.contains("@[gone\\u{1b}(0.md]"), "{}", r.stdout);
    assert!(r.stdout.contains("@[x\\u{202E}y.md]"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["check", "hostile.md"]));
    assert!(r.stdout.contains("gone\\u{1b}(0.md"), "{}", r.stdout);
}

// ---------------------------------------------------------------- ctx completions

#[test]
fn completions_for_each_shell() {
    let dir = TempDir::new().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = run(ctx(&dir).args(["completions", shell]));
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains("assemble"), "{shell}");
    }
    assert_eq!(run(ctx(&dir).args(["completions", "tcsh"])).code, 2);
}

// ---------------------------------------------------------------- configuration

#[test]
fn configuration_file_and_precedence() {
    let dir = workspace();
    dir.child("ctx.toml")
        .write_str("format = \"json\"\nmax_lines = 1\nline_numbers = true\n[defines]\nNAME = \"from-config\"\nDEBUG = \"\"\n")
        .unwrap();
    let r = run(ctx(&dir).args(["assemble", "main.md"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(json["content"].as_str().unwrap().starts_with("Title from-config\n"));
    assert!(json["content"].as_str().unwrap().contains("debug on"));
    assert!(json["content"].as_str().unwrap().contains("Part with 2: two\n3: three"));
    dir.child("whole.md").write_str("@[src/lib.rs]").unwrap();
    let r = run(ctx(&dir).args(["assemble", "whole.md"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(json["content"].as_str().unwrap().contains("truncated 3 lines"), "{json}");
    // The command line wins.
    let r = run(ctx(&dir).args(["assemble", "main.md", "--format", "inline", "-D", "NAME=cli"]));
    assert!(r.stdout.starts_with("Title cli\n"), "{}", r.stdout);

    // `.ctx/config.toml` when there is no ctx.toml; `--config` names another file.
    std::fs::remove_file(dir.path().join("ctx.toml")).unwrap();
    dir.child(".ctx/config.toml").write_str("[defines]\nNAME = \"dot-ctx\"\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "main.md"]));
    assert!(r.stdout.starts_with("Title dot-ctx\n"), "{}", r.stdout);
    dir.child("other.toml").write_str("[defines]\nNAME = \"other\"\n").unwrap();
    let r = run(ctx(&dir).args(["--config", "other.toml", "assemble", "main.md"]));
    assert!(r.stdout.starts_with("Title other\n"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["--config", "absent.toml", "assemble", "main.md"]));
    assert_eq!(r.code, 2);
}

/// cli.md: `--config` names a file that must exist; a bare name is in the current folder.
#[test]
fn a_configuration_named_by_a_bare_name_is_read_or_missing() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["--config", "nope.toml", "assemble", "main.md"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no such file: nope.toml"), "{}", r.stderr);
    assert!(!r.stderr.contains("sandbox"), "{}", r.stderr);
    dir.child("mine.toml").write_str("strict = true\n").unwrap();
    let r = run(ctx(&dir).args(["--config", "mine.toml", "assemble", "main.md"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn bad_configuration_exits_2_naming_the_key_and_line() {
    let dir = workspace();
    dir.child("ctx.toml").write_str("strict = true\nmax_tokns = 5\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "main.md"]));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("ctx.toml:2:1: unknown key `max_tokns` (did you mean `max_tokens`?)"),
        "{}",
        r.stderr
    );
    dir.child("ctx.toml").write_str("\nmax_lines = \"ten\"\n").unwrap();
    let r = run(ctx(&dir).args(["check", "main.md"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("ctx.toml:2:13: key `max_lines`"), "{}", r.stderr);
    dir.child("ctx.toml").write_str("format = \"yaml\"\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "main.md"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("key `format`"), "{}", r.stderr);
    dir.child("ctx.toml").write_str("max_lines = [1\n").unwrap();
    assert_eq!(run(ctx(&dir).args(["assemble", "main.md"])).code, 2);
}

// ---------------------------------------------------------------- snapshots of the examples

/// The repository root, where `examples/` is.
fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `ctx assemble examples/rules/main.md` in one format, from the repository root.
fn example(args: &[&str]) -> Run {
    let r = run(ctx_in(&repo()).args(["assemble", "examples/rules/main.md"]).args(args));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "");
    r
}

#[test]
fn snapshot_example_inline() {
    expect_file!["../snapshots/example_inline.txt"].assert_eq(&example(&[]).stdout);
    expect_file!["../snapshots/example_inline_debug.txt"]
        .assert_eq(&example(&["-D", "DEBUG"]).stdout);
}

#[test]
fn snapshot_example_xml() {
    expect_file!["../snapshots/example_xml.txt"].assert_eq(&example(&["--format", "xml"]).stdout);
}

#[test]
fn snapshot_example_markdown() {
    expect_file!["../snapshots/example_markdown.txt"]
        .assert_eq(&example(&["--format", "markdown"]).stdout);
}

#[test]
fn snapshot_example_json() {
    let r = example(&["--format", "json", "--tokens"]);
    let mut json: Value = serde_json::from_str(&r.stdout).unwrap();
    json["stats"]["elapsed_ms"] = Value::from("[elapsed]");
    expect_file!["../snapshots/example_json.txt"]
        .assert_eq(&serde_json::to_string_pretty(&json).unwrap());
}

#[test]
fn snapshot_example_prompt_and_refs_and_check() {
    let prompt = std::fs::read_to_string(repo().join("examples/prompts/explain.txt")).unwrap();
    let r = run(ctx_in(&repo()).arg("expand").write_stdin(prompt));
    assert_eq!(r.code, 0, "{}", r.stderr);
    expect_file!["../snapshots/example_expand_xml.txt"].assert_eq(&r.stdout);

    let r = run(ctx_in(&repo()).args(["refs", "examples/rules/main.md", "-D", "DEBUG"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    expect_file!["../snapshots/example_refs.txt"].assert_eq(&r.stdout);

    let r = run(ctx_in(&repo()).args(["check", "examples/broken/rules.md"]));
    assert_eq!(r.code, 1);
    expect_file!["../snapshots/example_check_plain.txt"].assert_eq(&r.stdout);
    let r =
        run(ctx_in(&repo()).env("CTX_FORCE_TTY", "1").args(["check", "examples/broken/rules.md"]));
    expect_file!["../snapshots/example_check_terminal.txt"].assert_eq(&r.stdout);
}

#[test]
fn configuration_roots_extensions_and_switches() {
    let dir = workspace();
    let shared = TempDir::new().unwrap();
    shared.child("team.md").write_str("team rules\n").unwrap();
    let doc =
        format!("@[{}]\n@[notes.txt]\n@[src/lib.rs:1]\n", shared.path().join("team.md").display());
    dir.child("cfg.md").write_str(&doc).unwrap();
    dir.child("notes.txt").write_str("@[src/lib.rs:4]\n").unwrap();
    // `allow` is relative to the configuration file; `recursive_extensions` leaves .txt verbatim.
    let allow = shared.path().to_str().unwrap().replace('\\', "/");
    dir.child(".ctx/config.toml")
        .write_str(&format!(
            "allow = [\"{allow}\"]\nrecursive_extensions = [\"md\"]\nno_includes = false\nline_numbers = true\nquiet = true\n"
        ))
        .unwrap();
    // A folder outside the workspace that its configuration asks for is opened only once
    // the user trusts it; until then it is named in one warning, and the rest works.
    let config = TempDir::new().unwrap();
    let trusting = |args: &[&str]| run(ctx(&dir).env("CTX_CONFIG_DIR", config.path()).args(args));
    let r = trusting(&["assemble", "cfg.md"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr.matches("warning[W_UNTRUSTED]").count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains(&format!("{allow} (.ctx/config.toml (allow))")), "{}", r.stderr);
    assert!(r.stderr.contains("`ctx trust`") && r.stderr.contains("E_OUTSIDE"), "{}", r.stderr);
    assert!(r.stdout.contains("1: @[src/lib.rs:4]\n1: one\n"), "{}", r.stdout);
    assert_eq!(trusting(&["trust"]).code, 1, "not trusted yet");
    let r = trusting(&["trust", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("trusted: 1 folder"), "{}", r.stdout);
    let r = trusting(&["assemble", "cfg.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "1: team rules\n1: @[src/lib.rs:4]\n1: one\n");
    // Completions cover the extra root, shown under its path.
    let r = trusting(&["complete", "team"]);
    assert!(r.stdout.lines().any(|l| l.ends_with("/team.md")), "{}", r.stdout);
}

#[test]
fn check_sorts_diagnostics_by_file_line_and_column() {
    let dir = TempDir::new().unwrap();
    // The walk of main.md meets a.md's problem first, and b.md is checked last: sorted, a.md
    // comes first, then b.md, then main.md in line order.
    dir.child("main.md").write_str("@[a.md] @[nope1.md]\n@[nope2.md]\n").unwrap();
    dir.child("a.md").write_str("x\n@[gone.md]\n").unwrap();
    dir.child("b.md").write_str("@[nope3.md]\n").unwrap();
    let r = run(ctx(&dir).args(["check", "main.md", "b.md"]));
    assert_eq!(r.code, 1);
    let positions: Vec<&str> =
        r.stdout.lines().filter_map(|l| l.split(": ").next()).filter(|p| p.contains(':')).collect();
    let mut sorted = positions.clone();
    sorted.sort_by_key(|p| {
        let mut parts = p.rsplitn(3, ':');
        let column: u32 = parts.next().unwrap().parse().unwrap();
        let line: u32 = parts.next().unwrap().parse().unwrap();
        (parts.next().unwrap().to_owned(), line, column)
    });
    assert_eq!(positions, sorted, "{}", r.stdout);
    assert_eq!(positions.len(), 4, "{}", r.stdout);
    // a.md checked on its own too: its problem is still reported once.
    let r = run(ctx(&dir).args(["check", "main.md", "a.md", "b.md"]));
    assert_eq!(r.stdout.matches("a.md:2:1").count(), 1, "{}", r.stdout);
    assert!(r.stderr.contains("4 errors, 0 warnings in 3 files"), "{}", r.stderr);
}

#[test]
fn on_error_chooses_what_a_failed_item_leaves() {
    let dir = workspace();
    let run_with = |args: &[&str]| run(ctx(&dir).args(["assemble", "broken.md"]).args(args));
    let marker = run_with(&[]);
    assert!(marker.stdout.contains("see <!-- ctx: E_NOT_FOUND"), "{}", marker.stdout);
    assert_eq!(run_with(&["--on-error", "keep"]).stdout, "ok\nsee @[missing.md] now\nask @alice\n");
    let dropped = run_with(&["--on-error", "drop"]);
    assert_eq!((dropped.code, dropped.stdout.as_str()), (1, "ok\nsee  now\nask @alice\n"));
    dir.child("ctx.toml").write_str("on_error = \"drop\"\n").unwrap();
    assert_eq!(run_with(&[]).stdout, "ok\nsee  now\nask @alice\n");
    assert_eq!(run_with(&["--on-error", "keep"]).stdout, "ok\nsee @[missing.md] now\nask @alice\n");
    dir.child("ctx.toml").write_str("on_error = \"hide\"\n").unwrap();
    let bad = run_with(&[]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("on_error"), "{}", bad.stderr);
}

/// Attack: a reference that hides characters in its path (a Tag character, a bidi override)
/// fails, and `--on-error keep` leaves its source text in place, in the top-level document
/// and in one it includes. What must not happen: a hidden character reaching the output; it
/// is written visibly, as in the text around it.
#[test]
fn a_kept_reference_shows_what_it_hides() {
    let dir = TempDir::new().unwrap();
    dir.child("sub.md").write_str("see @[mi\u{E0041}ss.md] and @[a\u{202E}b.md]\n").unwrap();
    dir.child("main.md").write_str("root @[r\u{202E}x.md]\n@[sub.md]\n").unwrap();
    for budget in ["0", "100000"] {
        let r = run(ctx(&dir)
            .args(["assemble", "main.md", "--on-error", "keep"])
            .args(["--max-tokens", budget]));
        assert!(!r.stdout.contains(['\u{E0041}', '\u{202E}']), "{}", r.stdout);
        assert!(r.stdout.contains("@[r\\u{202E}x.md]"), "{}", r.stdout);
        assert!(r.stdout.contains("@[mi\\u{E0041}ss.md]"), "{}", r.stdout);
    }
}

#[test]
fn home_paths_need_the_home_directory_allowed() {
    let dir = workspace();
    let home = TempDir::new().unwrap();
    home.child(".claude/x.md").write_str("from home\n").unwrap();
    home.child("notes/n.md").write_str("a note\n").unwrap();
    let with_home = |args: &[&str]| run(ctx(&dir).env("HOME", home.path()).args(args));

    // Without a root around it, a home path is outside, and the message says how to allow it.
    let r = run(ctx(&dir)
        .env("HOME", home.path())
        .args(["assemble", "-"])
        .write_stdin("@[~/.claude/x.md]\n"));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("E_OUTSIDE") && r.stderr.contains("--allow '~'"), "{}", r.stderr);

    // `--allow '~'` makes the home directory a root: mentions and includes read from it.
    let r = with_home(&["expand", "--allow", "~", "see @~/.claude/x.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("from home"), "{}", r.stdout);
    // It is named as a home path: the output shows no path of the machine.
    assert!(r.stdout.contains("<file path=\"~/.claude/x.md\">"), "{}", r.stdout);
    assert!(!r.stdout.contains(home.path().to_str().unwrap()), "{}", r.stdout);
    let r = run(ctx(&dir)
        .env("HOME", home.path())
        .args(["assemble", "-", "--allow", "~"])
        .write_stdin("@[~/notes/n.md]\n"));
    assert_eq!((r.code, r.stdout.as_str()), (0, "a note\n"), "{}", r.stderr);

    // `~/sub` allows one folder only; the home root is never searched for relative paths.
    let r = with_home(&["expand", "--allow", "~/notes", "@~/notes/n.md @~/.claude/x.md @n.md"]);
    assert!(r.stdout.contains("a note"), "{}", r.stdout);
    assert!(r.stdout.contains("<file path=\"~/notes/n.md\">"), "{}", r.stdout);
    assert!(!r.stdout.contains("from home"), "{}", r.stdout);
    assert!(r.stderr.contains("E_OUTSIDE"), "{}", r.stderr);
    assert!(r.stderr.contains("W_UNRESOLVED"), "{}", r.stderr);

    // A configuration of the user's own says the same with `allow = ["~"]`. One found in
    // the workspace (a cloned repository's) may ask for a folder of the home directory, which
    // is opened once the user trusts it, never for the home directory itself, a hidden folder
    // of it, or a way out of it (`~/..`).
    let own = TempDir::new().unwrap();
    own.child("mine.toml").write_str("allow = [\"~\"]\n").unwrap();
    let mine = own.path().join("mine.toml");
    let r = with_home(&["--config", mine.to_str().unwrap(), "expand", "@~/.claude/x.md"]);
    assert!(r.stdout.contains("from home"), "{}", r.stdout);
    dir.child("ctx.toml").write_str("allow = [\"~/notes\"]\n").unwrap();
    let r = with_home(&["expand", "@~/notes/n.md"]);
    assert!(!r.stdout.contains("a note") && r.stderr.contains("W_UNTRUSTED"), "{}", r.stderr);
    let config = TempDir::new().unwrap();
    let trusted = |args: &[&str]| {
        run(ctx(&dir).env("HOME", home.path()).env("CTX_CONFIG_DIR", config.path()).args(args))
    };
    assert_eq!(trusted(&["trust", "--yes"]).code, 0);
    let r = trusted(&["expand", "@~/notes/n.md"]);
    assert!(r.stdout.contains("a note"), "{}", r.stderr);
    for (allow, why) in [
        ("~", "the home folder"),
        ("~/.claude", "hidden folder"),
        ("~/..", "shared"),
        ("~/notes/../..", "shared"),
    ] {
        dir.child("ctx.toml").write_str(&format!("allow = [\"{allow}\"]\n")).unwrap();
        // Not even a trust the user gives opens them.
        assert_eq!(trusted(&["trust", "--yes"]).code, 0);
        let r = trusted(&["expand", "@~/.claude/x.md"]);
        assert_eq!(r.code, 1, "{allow}: {}", r.stderr);
        assert!(r.stderr.contains("W_CONFIG") && r.stderr.contains(why), "{allow}: {}", r.stderr);
        assert!(!r.stdout.contains("from home"), "{allow}: {}", r.stdout);
    }
}

#[test]
fn the_mdbook_dialect_reads_a_chapter_as_mdbook_does() {
    let dir = TempDir::new().unwrap();
    dir.child("book/book.toml").write_str("[book]\ntitle = \"t\"\n").unwrap();
    dir.child("book/src/file.rs")
        .write_str("fn one() {}\n// ANCHOR: two\nfn two() {}\n// ANCHOR_END: two\nfn three() {}\n")
        .unwrap();
    dir.child("book/src/part.md").write_str("Part {{#include file.rs:1}}.\n").unwrap();
    dir.child("book/src/chapter.md")
        .write_str(concat!(
            "# Chapter\n",
            "```rust\n{{#include file.rs:2:3}}\n```\n",
            "Only: {{#include file.rs:two}}\n",
            "```rust\n{{#rustdoc_include file.rs:two}}\n```\n",
            "Till 1: {{#include file.rs::1}}\n",
            "Past the end: [{{#include file.rs:9:}}]\n",
            "Literal: \\{{#include file.rs}}\n",
            "{{#include part.md}}\n",
            "{{#title Other}}\n",
            "> {{#include file.rs:1:2}}\n",
            "    See: {{#include file.rs::2}} end\n",
        ))
        .unwrap();
    let expected = concat!(
        "# Chapter\n",
        "```rust\n// ANCHOR: two\nfn two() {}\n```\n",
        "Only: fn two() {}\n",
        "```rust\n# fn one() {}\nfn two() {}\n# fn three() {}\n```\n",
        "Till 1: fn one() {}\n",
        "Past the end: []\n",
        "Literal: {{#include file.rs}}\n",
        "Part fn one() {}.\n",
        // mdBook takes the title link out: it names the page, it is not text.
        "\n",
        "> fn one() {}\n> // ANCHOR: two\n",
        // Prose before a link is not repeated on its further lines.
        "    See: fn one() {}\n// ANCHOR: two end\n",
    );
    for args in [&["--dialect", "mdbook"][..], &["--dialect", "auto"][..]] {
        let r = run(ctx(&dir).args(["assemble", "book/src/chapter.md"]).args(args));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.stdout, expected);
    }
    // Without the dialect, the chapter is ctx text.
    let r = run(ctx(&dir).args(["assemble", "book/src/chapter.md"]));
    assert!(r.stdout.contains("{{#include file.rs:2:3}}"), "{}", r.stdout);
    // `dialect = "mdbook"` in the configuration says the same.
    dir.child("ctx.toml").write_str("dialect = \"mdbook\"\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "book/src/chapter.md"]));
    assert_eq!(r.stdout, expected);
}

#[test]
fn an_mdbook_link_takes_its_prefix_from_the_output_of_its_line() {
    let dir = TempDir::new().unwrap();
    dir.child("g.txt").write_str("A\nB\n").unwrap();
    dir.child("c.md").write_str("{{#include g.txt}} {{#include g.txt}}\n").unwrap();
    // The second link's line holds what the first inserted last: prose, not repeated.
    let r = run(ctx(&dir).args(["assemble", "c.md", "--dialect", "mdbook"]));
    assert_eq!((r.code, r.stdout.as_str()), (0, "A\nB A\nB\n"), "{}", r.stderr);
    dir.child("c.md").write_str("> {{#include g.txt}}{{#include g.txt}}\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "c.md", "--dialect", "mdbook"]));
    assert_eq!(r.stdout, "> A\n> BA\nB\n", "{}", r.stderr);
    // Inside an included chapter, the prefix is that chapter's own line, and the including
    // line's prefix comes on top.
    dir.child("a.md").write_str("- {{#include g.txt}} y {{#include g.txt}}\n").unwrap();
    dir.child("o.md").write_str("> {{#include a.md}}\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "o.md", "--dialect", "mdbook"]));
    assert_eq!(r.stdout, "> - A\n>   B y A\n> B\n", "{}", r.stderr);
}

#[test]
fn the_auto_dialect_looks_for_book_toml_up_to_the_workspace_root_only() {
    let dir = TempDir::new().unwrap();
    dir.child("book/book.toml").write_str("[book]\ntitle = \"t\"\n").unwrap();
    dir.child("book/src/a.txt").write_str("A\n").unwrap();
    dir.child("book/src/ch.md").write_str("{{#include a.txt}}\n").unwrap();
    let src = dir.path().join("book/src");
    let in_src = |args: &[&str]| run(ctx_in(&src).args(args));
    // The workspace root is the current folder, book/src: book.toml lies above it, outside the
    // sandbox, and is not looked at.
    let r = in_src(&["assemble", "ch.md", "--dialect", "auto"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "{{#include a.txt}}\n"), "{}", r.stderr);
    // Naming the dialect, or a root at or above the book, reads the chapter as mdBook does; a
    // document named from the current folder is found there.
    for args in [
        &["assemble", "ch.md", "--dialect", "mdbook"][..],
        &["--root", "..", "assemble", "ch.md", "--dialect", "auto"],
        &["--root", "../..", "assemble", "ch.md", "--dialect", "auto"],
    ] {
        let r = in_src(args);
        assert_eq!((r.code, r.stdout.as_str()), (0, "A\n"), "{args:?}: {}", r.stderr);
    }
}

/// Runs `ctx ARGS` with standard output closed before it writes anything.
fn with_stdout_closed(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctx"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn every_command_takes_a_closed_output_as_success() {
    let dir = workspace();
    dir.child("big.md").write_str(&"@[a.md] text\n".repeat(50_000)).unwrap();
    for args in [
        &["completions", "bash"][..],
        &["parse", "big.md"],
        &["assemble", "big.md", "--max-output-bytes", "0", "--max-includes", "0"],
        &["check", "main.md"],
        &["refs", "main.md"],
    ] {
        let out = with_stdout_closed(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
        // `assemble` of big.md reports its own missing includes: status 1, from the run.
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {:?} {stderr}", out.status);
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_a_clean_error() {
    let dir = workspace();
    for args in [&["completions", "bash"][..], &["assemble", "main.md"], &["parse", "main.md"]] {
        let full = std::fs::File::create("/dev/full").unwrap();
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctx"))
            .current_dir(dir.path())
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("ctx: error:") && stderr.contains("No space left"), "{stderr}");
    }
}

#[test]
fn a_workspace_configuration_cannot_open_the_machine() {
    let dir = workspace();
    for root in ["/", "/etc", "/proc/self", "../../../../../../etc"] {
        dir.child("ctx.toml").write_str(&format!("allow = [\"{root}\"]\n")).unwrap();
        let r = run(ctx(&dir).args(["expand", "@/etc/hostname"]));
        assert_eq!(r.code, 1, "{root}: {}", r.stderr);
        assert!(r.stderr.contains("E_OUTSIDE"), "{root}: {}", r.stderr);
        assert!(
            r.stderr.contains("warning[W_CONFIG]: ctx.toml (allow) asks for /")
                && r.stderr.contains("it is never opened"),
            "{root}: {}",
            r.stderr
        );
        assert!(!r.stdout.contains("<file"), "{root}: {}", r.stdout);
    }
    // The same file named by the user is the user's own, and --allow is always the user's.
    dir.child("ctx.toml").write_str("allow = [\"/etc\"]\n").unwrap();
    let r = run(ctx(&dir).args(["--config", "ctx.toml", "expand", "hi"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    dir.child("ctx.toml").write_str("").unwrap();
    let r = run(ctx(&dir).args(["--allow", "/etc", "expand", "hi"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn diagnostics_past_a_thousand_are_counted_not_shown() {
    let dir = TempDir::new().unwrap();
    dir.child("many.md").write_str(&"@[nope.md]\n".repeat(1500)).unwrap();
    let r = run(ctx(&dir).args(["assemble", "many.md"]));
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr.lines().filter(|l| l.contains("E_NOT_FOUND")).count(), 1000);
    assert!(
        r.stderr.ends_with("ctx: 500 more diagnostics not shown\n"),
        "{}",
        &r.stderr[r.stderr.len() - 200..]
    );
    let r = run(ctx(&dir).args(["check", "many.md"]));
    assert_eq!(r.stdout.lines().count(), 1000);
    assert!(
        r.stderr.starts_with("ctx: 500 more diagnostics not shown\n1500 errors"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_top_level_input_is_bounded_by_the_size_cap() {
    let dir = workspace();
    let big = "x".repeat(2000);
    for args in [&["expand"][..], &["assemble", "-"], &["check", "-"], &["parse", "-"]] {
        let r =
            run(ctx(&dir).args(["--max-file-bytes", "1000"]).args(args).write_stdin(big.clone()));
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains("larger than the size cap of 1000 bytes"), "{}", r.stderr);
        let r = run(ctx(&dir).args(["--max-file-bytes", "0"]).args(args).write_stdin(big.clone()));
        assert_ne!(r.code, 2, "{args:?}: {}", r.stderr);
    }
    let r = run(ctx(&dir).args(["--max-file-bytes", "1000", "expand", &big]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("the prompt is larger"), "{}", r.stderr);
}

#[test]
fn tokens_are_counted_only_where_they_are_shown() {
    let dir = workspace();
    let json = |args: &[&str]| -> Value {
        serde_json::from_str(&run(ctx(&dir).args(args)).stdout).unwrap()
    };
    let counted = json(&["assemble", "main.md", "--tokens", "--format", "json"]);
    assert!(counted["stats"]["tokens"].as_u64().unwrap() > 0);
    // The refs tree shows them too.
    let r = run(ctx(&dir).args(["refs", "main.md", "--tokens"]));
    assert!(r.stdout.contains(" tokens"), "{}", r.stdout);
    // A token budget counts whatever the format.
    let r = run(ctx(&dir).args(["assemble", "main.md", "--max-tokens", "1"]));
    assert!(r.stderr.contains("W_BUDGET"), "{}", r.stderr);
}

/// syntax.md §3: quotes carry a name with a colon (`@["notes:v2.md":2]`), which is a plain
/// name (only a stream's type suffix and a drive letter are refused, assembly.md §3), and a
/// prose `@f.txt:2` names no file: an unresolved mention with the `#L` hint.
#[cfg(not(windows))]
#[test]
fn a_colon_is_part_of_a_quoted_name() {
    let dir = TempDir::new().unwrap();
    dir.child("notes:v2.md").write_str("one\ntwo\nthree\n").unwrap();
    dir.child("ab").write_str("the file\n").unwrap();
    dir.child("f.txt").write_str("x\n").unwrap();
    dir.child("m.md")
        .write_str("[@[\"notes:v2.md\":2]]\nsee @f.txt:2 here\n@[ab:c.txt] @[ab::$DATA]\n")
        .unwrap();
    let out = run(ctx(&dir).args(["assemble", "m.md", "--on-error", "keep"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stdout, "[two]\nsee @f.txt:2 here\n@[ab:c.txt] @[ab::$DATA]\n");
    // `ab:c.txt` is no file here; `ab::$DATA` would read `ab` on Windows: refused everywhere.
    assert!(
        out.stderr.contains("E_NOT_FOUND") && out.stderr.contains("ab:c.txt"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.matches("E_BAD_PATH").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("W_UNRESOLVED") && out.stderr.contains("write f.txt#L2"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("the file"));
}

/// syntax.md: in append mode the prompt is kept exactly as written; front matter is split off
/// Markdown files only (assembly.md §5), so a prompt that starts with `---` lines keeps them,
/// whether given as an argument or on standard input, and says nothing of front matter.
#[test]
fn a_prompt_that_looks_like_front_matter_is_kept_as_written() {
    let dir = TempDir::new().unwrap();
    dir.child("a.txt").write_str("x\n").unwrap();
    let prompt = "---\nplease review this\n---\nand @a.txt";
    let r = run(ctx(&dir).args(["expand", "--", prompt]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with(prompt), "{}", r.stdout);
    assert!(!r.stderr.contains("FRONT_MATTER"), "{}", r.stderr);
    let r = run(ctx(&dir).arg("expand").write_stdin("---\na: b: c\n---\nhi\n"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("---\na: b: c\n---\nhi\n"), "{}", r.stdout);
    // A document on standard input is Markdown: its front matter is split off.
    let r = run(ctx(&dir).args(["assemble", "-"]).write_stdin("---\ntitle: t\n---\nbody\n"));
    assert_eq!(r.stdout, "body\n", "{}", r.stderr);
}

/// syntax.md §2: a path ending in `/` names a directory, so a file written with one is not
/// found: an error for an include, an unresolved mention in prose.
#[test]
fn a_trailing_slash_names_a_directory_only() {
    let dir = TempDir::new().unwrap();
    dir.child("b.txt").write_str("B\n").unwrap();
    dir.child("d/x.txt").write_str("X\n").unwrap();
    dir.child("m.md").write_str("[@[b.txt/]] @b.txt/\n").unwrap();
    let out = run(ctx(&dir).args(["assemble", "m.md"]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("[<!-- ctx: E_NOT_FOUND: not a directory: b.txt/"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.ends_with("] @b.txt/\n"), "{}", out.stdout);
    assert!(out.stderr.contains("W_UNRESOLVED"), "{}", out.stderr);
    let out = run(ctx(&dir).args(["expand", "@d/"]));
    assert!(out.stdout.contains("<file path=\"d/x.txt\">"), "{}", out.stdout);
}

/// `--strict` stops at the first error: in `check`, across the files too.
#[test]
fn strict_check_stops_at_the_first_error_of_all_files() {
    let dir = workspace();
    dir.child("other.md").write_str("@[gone.md]\n").unwrap();
    let r = run(ctx(&dir).args(["--strict", "check", "broken.md", "other.md"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout.lines().filter(|l| l.contains("error[")).count(), 1, "{}", r.stdout);
    assert!(!r.stdout.contains("other.md"), "{}", r.stdout);
}

/// A backslash typed in a path being completed is a separator, as in every path.
#[test]
fn completion_takes_a_backslash_as_a_separator() {
    let dir = workspace();
    let slash = run(ctx(&dir).args(["complete", "src/li"]));
    let backslash = run(ctx(&dir).args(["complete", "src\\li"]));
    assert!(slash.stdout.contains("@src/lib.rs"), "{}", slash.stdout);
    assert_eq!(backslash.stdout, slash.stdout);
}

/// `-` as the prompt reads standard input, as `-` as a document does; it is never sent as the
/// text "-".
#[test]
fn a_dash_prompt_is_read_from_standard_input() {
    let dir = workspace();
    let expand = run(ctx(&dir).args(["expand", "-"]).write_stdin("hello from stdin\n"));
    assert_eq!(expand.code, 0, "{}", expand.stderr);
    assert!(expand.stdout.contains("hello from stdin"), "{}", expand.stdout);
    let messages = run(ctx(&dir).args(["messages", "-"]).write_stdin("hello from stdin\n"));
    assert_eq!(messages.code, 0, "{}", messages.stderr);
    let body: Value = serde_json::from_str(&messages.stdout).unwrap();
    let sent = body["messages"].to_string();
    assert!(sent.contains("hello from stdin") && !sent.contains(r#""content":"-""#), "{sent}");
}

/// `check` of a document that cannot be read: exit 2, and the summary and JSON say which.
#[test]
fn check_names_the_documents_it_could_not_read() {
    let dir = workspace();
    let r = run(ctx(&dir).args(["check", "gone.md", "main.md", "-DNAME=x"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("in 2 files (1 could not be read)"), "{}", r.stderr);
    let r = run(ctx(&dir).args(["check", "--format", "json", "gone.md", "main.md"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["unreadable"], serde_json::json!(["gone.md"]));
    // Standard input that is not text is one document not read; the others are checked.
    let r = run(ctx(&dir)
        .args(["check", "--format", "json", "-", "main.md"])
        .write_stdin(vec![b'c', b'a', b'f', 0xe9, b'\n']));
    assert_eq!(r.code, 2, "{}", r.stderr);
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["unreadable"], serde_json::json!(["-"]));
    assert_eq!(json["files"], 2);
    assert!(r.stderr.contains("ctx: error: -: ") && r.stderr.contains("not UTF-8"), "{}", r.stderr);
}

/// A workspace's configuration may tighten the bounds of a run but not lift or raise them:
/// a cloned repository cannot turn an include bomb loose. Such a setting is ignored with a
/// warning that points at it; the user's own configuration may.
#[test]
fn a_workspace_configuration_cannot_lift_the_run_bounds() {
    let dir = workspace();
    // A chain of 25 includes: the default depth (20) stops it.
    for i in 0..25 {
        dir.child(format!("chain/{i}.md")).write_str(&format!("@[{}.md]\n", i + 1)).unwrap();
    }
    dir.child("chain/25.md").write_str("bottom\n").unwrap();
    dir.child("big.txt").write_str(&"x".repeat(2 << 20)).unwrap();
    dir.child("big.md").write_str("@[big.txt]\n").unwrap();
    for (line, doc, code) in [
        ("max_includes = 0", "main.md", ""),
        ("max_output_bytes = 0", "main.md", ""),
        ("max_scan_bytes = 0", "main.md", ""),
        ("max_depth = 1000", "chain/0.md", "E_DEPTH"),
        ("max_file_bytes = 0", "big.md", "E_TOO_LARGE"),
        ("max_file_bytes = 300000000", "big.md", "E_TOO_LARGE"),
        ("max_image_bytes = 300000000", "main.md", ""),
        ("max_lines = 0", "main.md", ""),
        ("history_tokens = 99999999", "main.md", ""),
    ] {
        dir.child("ctx.toml").write_str(&format!("strict = false\n{line}\n")).unwrap();
        let r = run(ctx(&dir).args(["assemble", doc]));
        assert_ne!(r.code, 2, "{line}: {}", r.stderr);
        let key = line.split(' ').next().unwrap();
        assert!(
            r.stderr.contains(&format!("ctx.toml:2:1: warning[W_CONFIG]: `{line}` ignored"))
                && r.stderr.contains("may lower this bound"),
            "{key}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(code), "{line}: the default bound holds: {}", r.stderr);
        // -q from the workspace's own configuration does not hide it.
        dir.child("ctx.toml").write_str(&format!("quiet = true\n{line}\n")).unwrap();
        let r = run(ctx(&dir).args(["assemble", doc]));
        assert!(r.stderr.contains("W_CONFIG"), "{line}: {}", r.stderr);
    }
    dir.child("ctx.toml").write_str("max_includes = 5\nmax_depth = 3\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "chain/0.md"]));
    assert!(!r.stderr.contains("W_CONFIG") && r.stderr.contains("E_DEPTH"), "{}", r.stderr);
    let own = TempDir::new().unwrap();
    own.child("mine.toml").write_str("max_depth = 1000\nmax_file_bytes = 0\n").unwrap();
    let mine = own.path().join("mine.toml");
    let r = run(ctx(&dir).args(["--config", mine.to_str().unwrap(), "assemble", "chain/0.md"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("bottom"), "{}", r.stdout);
}
