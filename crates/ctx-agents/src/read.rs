//! Reading rule files through a place's sandbox within ctx's budget, and making pieces of
//! them: every byte comes through `ctx_fs`, and every refusal becomes a reason, never an
//! error of the view.

use ctx_fs::{Code, Content, Encoding, ErrorKind, Location, Sandbox};

use crate::env::{Bounds, Place};
use crate::model::{Cut, Piece, Placement, Reason, Why};

/// What is left of ctx's bounds for one view.
#[derive(Debug)]
pub(crate) struct Budget {
    bytes: u64,
    files: usize,
    imports: usize,
    /// Whether a bound was reached (the view notes it once).
    pub(crate) spent: bool,
}

impl Budget {
    pub(crate) fn new(bounds: &Bounds) -> Budget {
        Budget {
            bytes: bounds.max_bytes,
            files: bounds.max_files,
            imports: bounds.max_imports,
            spent: false,
        }
    }

    /// Takes one import from the budget; false (and spent) when none is left.
    pub(crate) fn import(&mut self) -> bool {
        if self.imports == 0 {
            self.spent = true;
            return false;
        }
        self.imports -= 1;
        true
    }

    /// The reason for what is left out once the budget is spent.
    pub(crate) fn reason() -> Reason {
        Reason::Unreadable {
            code: Code::Limit.as_str().to_owned(),
            message: "ctx's budget for one view is spent (files, bytes or imports); not read"
                .to_owned(),
        }
    }
}

/// A rule file as read.
#[derive(Clone, Debug)]
pub(crate) struct File {
    /// Its text, the byte order mark taken off.
    pub(crate) text: String,
    /// Whether it started with a UTF-8 byte order mark.
    pub(crate) bom: bool,
}

impl File {
    /// The bytes as on disk, for an agent that reads bytes (Codex): the byte order mark
    /// put back.
    pub(crate) fn raw(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.text.len() + 3);
        if self.bom {
            bytes.extend_from_slice("\u{feff}".as_bytes());
        }
        bytes.extend_from_slice(self.text.as_bytes());
        bytes
    }
}

/// Reads `rel` of `place` as text within `budget`. A missing file is `Ok(None)`; any other
/// refusal is the reason it is not read.
pub(crate) fn read(
    place: &Place<'_>,
    rel: &str,
    budget: &mut Budget,
) -> Result<Option<File>, Reason> {
    let written = if rel.is_empty() { "." } else { rel };
    match place.sandbox.resolve(written, None) {
        // A folder of that name is no rule file: the agents pass over it.
        Ok(location)
            if place.sandbox.stat(&location).is_ok_and(|s| s.kind == ctx_fs::FileKind::Dir) =>
        {
            Ok(None)
        }
        Ok(location) => read_at(place.sandbox, &location, budget).map(Some),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        Err(err) => Err(refusal(&err)),
    }
}

/// The reason a sandbox refusal gives.
pub(crate) fn refusal(err: &ctx_fs::Error) -> Reason {
    Reason::Unreadable { code: err.code().as_str().to_owned(), message: err.to_string() }
}

/// Reads the file at `location` of `sandbox` as text within `budget`.
pub(crate) fn read_at(
    sandbox: &Sandbox,
    location: &Location,
    budget: &mut Budget,
) -> Result<File, Reason> {
    if budget.files == 0 || budget.bytes == 0 {
        budget.spent = true;
        return Err(Budget::reason());
    }
    // Whatever the sandbox's own cap (none, if the user chose so), a file larger than what is
    // left of the view's budget is not read into memory at all.
    if let Ok(stat) = sandbox.stat(location)
        && stat.len > budget.bytes
    {
        return Err(Reason::Unreadable {
            code: Code::TooLarge.as_str().to_owned(),
            message: format!(
                "{} bytes, more than is left of ctx's budget for one view ({} bytes); not read",
                stat.len, budget.bytes
            ),
        });
    }
    let content = sandbox.read_text(location).map_err(|e| refusal(&e))?;
    budget.files -= 1;
    match content {
        Content::Text { text, encoding } => {
            let len = text.len() as u64;
            if len > budget.bytes {
                budget.spent = true;
                budget.bytes = 0;
                return Err(Budget::reason());
            }
            budget.bytes -= len;
            Ok(File { text: text.as_str().to_owned(), bom: encoding == Encoding::Utf8Bom })
        }
        _ => Err(Reason::Unreadable {
            code: Code::Binary.as_str().to_owned(),
            message: "binary content, left out".to_owned(),
        }),
    }
}

/// Makes a piece of `text` from the file `rel` of `place`.
pub(crate) fn piece(
    place: &Place<'_>,
    rel: &str,
    line: u32,
    why: Why,
    placement: Placement,
    text: String,
) -> Piece {
    let bytes = text.len() as u64;
    let tokens = ctx_tokens::count(&text) as u64;
    Piece {
        path: place.shown(rel),
        abs: place.abs(rel),
        scope: place.scope,
        line,
        why,
        placement,
        name: None,
        text,
        bytes,
        tokens,
        cut: None,
        depth: 0,
        inlined: false,
    }
}

impl Piece {
    /// The same piece with its name.
    pub(crate) fn named(mut self, name: impl Into<String>) -> Piece {
        self.name = Some(name.into());
        self
    }

    /// The same piece, cut.
    pub(crate) fn cut(mut self, cut: Cut) -> Piece {
        self.cut = Some(cut);
        self
    }

    /// The same piece, sent inside the piece that imports it.
    pub(crate) fn inlined(mut self) -> Piece {
        self.inlined = true;
        self
    }

    /// The same piece, found `depth` imports deep.
    pub(crate) fn at_depth(mut self, depth: u32) -> Piece {
        self.depth = depth;
        self
    }
}

/// The text with CRLF and lone CR line ends made LF.
pub(crate) fn lf(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_owned();
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// The first `max` characters of `text`, and whether it had more.
pub(crate) fn head_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_and_heads() {
        assert_eq!(lf("a\r\nb\rc\n"), "a\nb\nc\n");
        assert_eq!(head_chars("héllo", 2), ("hé", true));
        assert_eq!(head_chars("hé", 2), ("hé", false));
    }
}
