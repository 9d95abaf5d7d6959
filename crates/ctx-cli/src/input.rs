//! Reading the top-level input from standard input, as UTF-8, and naming a document for the
//! sandbox (a named document is read through it).

use std::io::{IsTerminal, Read, Write};
use std::path::Path;

use anyhow::{Context, bail};

/// Reads at most `cap` bytes (0: no cap); one byte more is an error naming the cap.
fn read_capped(reader: impl Read, cap: u64, name: &str) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let limit = if cap == 0 { u64::MAX } else { cap + 1 };
    reader.take(limit).read_to_end(&mut bytes)?;
    if cap > 0 && bytes.len() as u64 > cap {
        bail!(
            "E_TOO_LARGE: {name} is larger than the size cap of {cap} bytes (raise it with \
             --max-file-bytes)"
        );
    }
    Ok(bytes)
}

/// Checks a prompt given on the command line against the size cap (0: no cap).
pub(crate) fn check_size(text: &str, cap: u64, name: &str) -> anyhow::Result<()> {
    if cap > 0 && text.len() as u64 > cap {
        bail!(
            "E_TOO_LARGE: {name} is larger than the size cap of {cap} bytes (raise it with \
             --max-file-bytes)"
        );
    }
    Ok(())
}

/// The prompt of `expand`, `messages` and `suggest`: the argument, or standard input when it is
/// left out or is `-` (as a document named `-` is), within the size cap.
pub(crate) fn prompt(arg: Option<&String>, cap: u64) -> anyhow::Result<String> {
    match arg.filter(|text| text.as_str() != "-") {
        Some(text) => {
            check_size(text, cap, "the prompt")?;
            Ok(text.clone())
        }
        None => read_stdin(cap),
    }
}

/// Reads all of standard input as UTF-8. On a terminal, says first how to end the input, so
/// a forgotten pipe does not look like a hang.
pub(crate) fn read_stdin(cap: u64) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let _ = writeln!(
            std::io::stderr(),
            "ctx: reading standard input (end with Ctrl-D; pass a file or text to skip this)"
        );
    }
    let bytes = read_capped(stdin.lock(), cap, "standard input").map_err(|e| {
        if e.downcast_ref::<std::io::Error>().is_some() {
            e.context("cannot read standard input")
        } else {
            e
        }
    })?;
    utf8(bytes, "standard input")
}

/// Reads standard input as a document; an empty input is an empty document (cli.md).
pub(crate) fn read_stdin_document(cap: u64) -> anyhow::Result<String> {
    read_stdin(cap)
}

/// The text of `bytes`, without a UTF-8 byte order mark at the start (as the sandbox reads
/// files: a U+FEFF anywhere else is made visible as hidden text).
fn utf8(mut bytes: Vec<u8>, name: &str) -> anyhow::Result<String> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(err) => {
            let at = err.utf8_error().valid_up_to();
            bail!("W_BINARY: {name} is not UTF-8 text (invalid byte at offset {at})")
        }
    }
}

/// The path to hand the sandbox for a document named on the command line: absolute paths
/// as they are; with `--root`, a relative path that exists from the current directory is
/// made absolute (it must still lie inside a root), otherwise it is taken from the root.
#[allow(clippy::disallowed_methods)] // Interprets a command-line path, before any sandbox exists.
pub(crate) fn document_path(root: &Path, file: &Path) -> anyhow::Result<String> {
    let to_str = |p: &Path| {
        p.to_str().map(str::to_owned).with_context(|| format!("path is not UTF-8: {}", p.display()))
    };
    if file.is_absolute() || root == Path::new(".") {
        return to_str(file);
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let from_cwd = cwd.join(file);
    if from_cwd.exists() { to_str(&from_cwd) } else { to_str(file) }
}

/// Runs `read` on the document `file` named on the command line, at the path
/// [`document_path`] makes of it; an error names the file as written, never the absolute path
/// made from the current directory (which may lie outside every root).
pub(crate) fn document<T>(
    root: &Path,
    file: &Path,
    read: impl FnOnce(&str) -> Result<T, ctx::Error>,
) -> anyhow::Result<T> {
    let path = document_path(root, file)?;
    read(&path).map_err(|err| as_written(err, &path, file))
}

/// `err`, about the document `file` read at `path` ([`document`]), naming it as written.
pub(crate) fn as_written(err: ctx::Error, path: &str, file: &Path) -> anyhow::Error {
    let written = file.display().to_string();
    if path == written {
        return err.into();
    }
    anyhow::anyhow!(err.to_string().replace(path, &written))
}

/// Whether the document `file` lies under a folder with a `book.toml` (an mdBook), looked for
/// from its folder up to the workspace root and never above it (nothing outside the roots is
/// looked at); for `--dialect auto`. The document is found as [`document_path`] finds it.
#[allow(clippy::disallowed_methods)] // Interprets a command-line path, before any sandbox exists.
pub(crate) fn in_book(root: &Path, file: &Path) -> bool {
    if file.as_os_str() == "-" {
        return false;
    }
    let Ok(document) = document_path(root, file) else {
        return false;
    };
    let document = Path::new(&document);
    let document =
        if document.is_absolute() { document.to_path_buf() } else { root.join(document) };
    let (Ok(document), Ok(root)) = (document.canonicalize(), root.canonicalize()) else {
        return false;
    };
    document
        .ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(&root))
        .any(|dir| dir.join("book.toml").is_file())
}
