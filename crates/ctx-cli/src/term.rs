//! Text from files, printed: every printer of the command line passes what can come from a
//! file (paths and names from project files, summaries, reference text, messages) through
//! [`visible`] before it reaches a terminal or a pipe.
//!
//! The set made visible is assembly.md's, defined once in `ctx_assemble::sanitize`: Tag
//! characters, bidi controls and zero-width characters are written `\u{202E}`, C0 controls
//! (but tab and line ends), DEL and C1 controls `\u{1b}`. So a name like `\e]0;title\a` from a
//! `compile_commands.json` cannot retitle the terminal, clear it or reorder what the reader
//! sees, and what was hidden shows as what it is. Each character is rewritten where it stands,
//! so the text before a character rewrites the same wherever the text is cut (carets under a
//! diagnostic's source line stay in place).
//!
//! JSON output goes through [`visible_json`]: JSON escapes C0 controls itself, but passes DEL,
//! C1 controls, bidi, zero-width and Tag characters raw, and a program that prints a value
//! would hand them on. Paths holding them cannot be opened through the sandbox anyway (they are
//! `E_BAD_PATH`), so escaping them loses nothing a path is used for.

use std::borrow::Cow;
use std::io::{self, Write};

use serde_json::Value;

/// `text` with the hidden and control characters of assembly.md written visibly; borrowed
/// when there are none.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    ctx::assemble::sanitize::sanitize(text).text
}

/// [`visible`] on every string of `value`, the keys of its objects included.
pub(crate) fn visible_json(value: &mut Value) {
    ctx::assemble::sanitize::sanitize_json(value);
}

/// `value` as pretty JSON, every string made visible ([`visible_json`]).
pub(crate) fn json_pretty(value: &impl serde::Serialize) -> serde_json::Result<String> {
    let mut value = serde_json::to_value(value)?;
    visible_json(&mut value);
    serde_json::to_string_pretty(&value)
}

/// A writer whose formatted writes are made visible ([`visible`]) before they reach the
/// writer beneath: `let mut out = Visible(&mut out);` before a run of `writeln!(out, …)`, so
/// that none of them can forget it.
pub(crate) struct Visible<'a>(pub(crate) &'a mut dyn Write);

impl Visible<'_> {
    /// What `write!` and `writeln!` call: the whole formatted text, made visible, in one write.
    pub(crate) fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> io::Result<()> {
        let text = std::fmt::format(args);
        self.0.write_all(visible(&text).as_bytes())
    }
}

/// What writing a run's output came to: a closed standard output (`ctx check x | head -1`)
/// is not an error (cli.md), so the run goes on to report its diagnostics and exit with its
/// own status, errors found included; any other failure to write (a full disk) is the error.
pub(crate) fn unless_closed(written: anyhow::Result<()>) -> anyhow::Result<()> {
    match written {
        Err(err) if !is_broken_pipe(&err) => Err(err),
        _ => Ok(()),
    }
}

/// Whether the error comes from writing to a closed standard output (`ctx … | head`), which
/// is not a failure.
/// The exit status a command's work gives, set before it writes its result: a standard output
/// closed while it writes (`ctx resolve x | head`) ends the command with this status, so that
/// the status never depends on whether a reader is still there. 0 until a command sets it.
static STATUS_IF_CLOSED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Sets the status of [`STATUS_IF_CLOSED`]: 1 when the work `failed`.
pub(crate) fn status_if_closed(failed: bool) {
    STATUS_IF_CLOSED.store(u8::from(failed), std::sync::atomic::Ordering::Relaxed);
}

/// The status a command ends with when its standard output closed.
pub(crate) fn closed_status() -> std::process::ExitCode {
    std::process::ExitCode::from(STATUS_IF_CLOSED.load(std::sync::atomic::Ordering::Relaxed))
}

pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let kind = if let Some(io) = cause.downcast_ref::<io::Error>() {
            Some(io.kind())
        } else if let Some(json) = cause.downcast_ref::<serde_json::Error>() {
            json.io_error_kind()
        } else if let Some(ctx::ErrorKind::Io(io)) =
            cause.downcast_ref::<ctx::Error>().map(|e| e.kind())
        {
            Some(io.kind())
        } else {
            None
        };
        kind == Some(io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_characters_are_shown_not_obeyed() {
        assert_eq!(visible("plain\ttext\r\n"), "plain\ttext\r\n");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
        assert_eq!(visible("a\u{1b}]0;title\u{7}b"), "a\\u{1b}]0;title\\u{7}b");
        assert_eq!(visible("x\u{202e}y\u{e0041}\u{200b}"), "x\\u{202E}y\\u{E0041}\\u{200B}");
        assert_eq!(visible("\u{7f}\u{9b}2J"), "\\u{7f}\\u{9b}2J");
    }

    #[test]
    fn formatted_writes_are_made_visible() {
        let mut bytes = Vec::new();
        let mut out = Visible(&mut bytes);
        let (path, project) = ("a\u{1b}[2J.c".to_owned(), "p\u{202e}".to_owned());
        writeln!(out, "missing: {path} ({project}, line {})", 3).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "missing: a\\u{1b}[2J.c (p\\u{202E}, line 3)\n"
        );
    }
}
