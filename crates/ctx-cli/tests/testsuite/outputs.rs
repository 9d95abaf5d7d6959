//! Closed and full outputs: a closed standard output is success, a full one is one clean
//! error line and exit 2, and the exit status never depends on whether standard error is open.

use std::fs::File;
use std::io::Read;
use std::process::{Command, Output, Stdio};

use assert_fs::TempDir;
use assert_fs::prelude::*;

fn ctx_bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("ctx")
}

/// A workspace with a document that has one error and a large text file.
fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    dir.child("bad.md").write_str("@[nope.md]\n").unwrap();
    dir.child("big.md").write_str(&"hello and some more words\n".repeat(30_000)).unwrap();
    dir
}

/// Runs ctx with standard output a pipe whose reading end is already closed.
fn with_closed_stdout(dir: &TempDir, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(ctx_bin())
        .current_dir(dir.path())
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// Runs ctx with standard output on `/dev/full`.
#[allow(clippy::disallowed_methods)] // The test opens a device, not a user path.
fn with_full_stdout(dir: &TempDir, args: &[&str]) -> Output {
    Command::new(ctx_bin())
        .current_dir(dir.path())
        .args(args)
        .stdout(File::options().write(true).open("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// Runs ctx through `sh` with standard error closed (not redirected: closed).
fn with_closed_stderr(dir: &TempDir, args: &[&str]) -> Option<i32> {
    Command::new("sh")
        .current_dir(dir.path())
        .arg("-c")
        .arg(r#"exec "$0" "$@" 2>&- >/dev/null"#)
        .arg(ctx_bin())
        .args(args)
        .status()
        .unwrap()
        .code()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn closed_stdout_is_success_for_every_writer() {
    let dir = workspace();
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["parse", "big.md"],
        &["parse", "--format", "text", "big.md"],
        &["assemble", "big.md"],
        &["expand", "@big.md"],
        &["refs", "big.md"],
        &["--help"],
    ] {
        let out = with_closed_stdout(&dir, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{args:?}: {}", stderr(&out));
    }
}

/// A closed standard output is not an error, and it hides none: the errors a run found still
/// give exit 1, and their diagnostics still reach standard error.
#[test]
fn closed_stdout_keeps_the_status_of_the_errors_found() {
    let dir = workspace();
    for args in [&["check", "bad.md"][..], &["assemble", "bad.md"], &["refs", "bad.md"]] {
        let out = with_closed_stdout(&dir, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
    }
    let out = with_closed_stdout(&dir, &["assemble", "bad.md"]);
    assert!(stderr(&out).contains("E_NOT_FOUND"), "{}", stderr(&out));
    // The commands that know their status before they write keep it too (a query not found,
    // a request with errors), and a success stays one.
    for (args, code) in [
        (&["resolve", "nothere.c"][..], 1),
        (&["resolve", "--format", "json", "nothere.c"], 1),
        (&["resolve", "big.md"], 0),
        (&["messages", "x ![a](fake.png)"], 1),
        (&["messages", "hello"], 0),
        (&["outline", "nothere.rs"], 1),
    ] {
        let out = with_closed_stdout(&dir, args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    }
    // Its problems reach standard error all the same.
    let out = with_closed_stdout(&dir, &["outline", "nothere.rs"]);
    assert!(stderr(&out).contains("ctx: error[E_NOT_FOUND]"), "{}", stderr(&out));
}

#[test]
fn full_stdout_is_one_clean_line_and_exit_2() {
    let dir = workspace();
    let cases: [&[&str]; 5] = [
        &["completions", "bash"],
        &["parse", "big.md"],
        &["assemble", "big.md"],
        &["--help"],
        &["--version"],
    ];
    for args in cases {
        let out = with_full_stdout(&dir, args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("ctx: error: ") && err.contains("No space left"), "{err}");
    }
}

#[test]
fn exit_status_does_not_depend_on_stderr() {
    let dir = workspace();
    for (args, code) in [
        (&["assemble", "bad.md"][..], 1),
        (&["expand", "@[nope.md]"], 1),
        (&["check", "bad.md"], 1),
        (&["assemble", "missing.md"], 2),
        (&["assemble", "big.md"], 0),
    ] {
        let open = Command::new(ctx_bin())
            .current_dir(dir.path())
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(open.status.code(), Some(code), "{args:?} open: {}", stderr(&open));
        assert_eq!(with_closed_stderr(&dir, args), Some(code), "{args:?} with stderr closed");
    }
}

#[test]
fn diagnostics_are_capped_with_a_count_of_the_rest() {
    let dir = TempDir::new().unwrap();
    dir.child("many.md").write_str(&"@[nope.md]\n".repeat(1_500)).unwrap();
    let mut child = Command::new(ctx_bin())
        .current_dir(dir.path())
        .args(["assemble", "many.md"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let lines: Vec<_> = err.lines().collect();
    assert_eq!(lines.len(), 1_001, "{}", lines.last().unwrap_or(&""));
    assert_eq!(lines[1_000], "ctx: 500 more diagnostics not shown");
}

#[test]
fn a_top_level_input_that_cannot_be_read_writes_nothing_in_any_format() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    std::fs::write(dir.path().join("blob.md"), b"\x00\x01binary").unwrap();
    for input in ["missing.md", "folder", "blob.md"] {
        for format in ["json", "xml", "markdown", "inline"] {
            let out = Command::new(ctx_bin())
                .current_dir(dir.path())
                .args(["--format", format, "assemble", input])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{input} {format}: {}", stderr(&out));
            assert!(
                out.stdout.is_empty(),
                "{input} {format}: {:?}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}
