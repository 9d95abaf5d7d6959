//! Helpers shared by the modules of the suite.

use assert_cmd::Command;
use assert_fs::TempDir;

/// The binary in `dir`, with no colour, no forced terminal and no logging from the
/// environment, and its cache inside `dir`.
pub(crate) fn ctx_in(dir: &TempDir) -> Command {
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("CTX_CACHE_DIR", dir.path().join(".cache"))
        .env_remove("CTX_FORCE_TTY")
        .env_remove("RUST_LOG");
    cmd
}

/// Exit code, standard output and standard error.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `cmd` to its end.
pub(crate) fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Fails when `text` holds a hidden or control character raw (a terminal would obey it):
/// what comes from files must reach the reader made visible.
#[track_caller]
pub(crate) fn assert_no_raw_hidden(text: &str) {
    let raw = |c: char| {
        matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
            || matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            || matches!(c, '\u{e0000}'..='\u{e007f}')
    };
    assert!(!text.chars().any(raw), "raw hidden or control characters in {text:?}");
}

/// Runs `cmd` (a `ctx mcp`) with `script` as its standard input, one message a line, and
/// returns its answers ordered by id: calls run concurrently, so they come in any order, and
/// a client matches them by id.
#[cfg(feature = "mcp")]
pub(crate) fn mcp_answers(
    cmd: &mut Command,
    script: &[serde_json::Value],
) -> Vec<serde_json::Value> {
    let input: String = script.iter().map(|m| format!("{m}\n")).collect();
    let out = cmd.arg("mcp").write_stdin(input).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    answers.sort_by_key(|r| r["id"].as_u64());
    answers
}
