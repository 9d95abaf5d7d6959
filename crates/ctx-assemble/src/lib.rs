//! Assembly of ctx documents and prompts (assembly.md): the recursive walk and the pieces it
//! is built from.
//!
//! [`Assembler`] assembles a file or a string through a ctx-fs sandbox, in inline mode
//! (documents: every item replaced in place) or append mode (prompts: the text, then what it
//! mentions), in one of four formats, into a string or streamed to a writer; the result is an
//! [`Assembly`], which is also the JSON output.
//!
//! Properties:
//! - every byte is read through the sandbox; nothing else here touches the file system;
//! - one pass in document order, one macro context flowing through the recursion; files of
//!   inactive branches are never opened; records come in depth-first pre-order;
//! - bounded: depth, includes, output bytes and tokens are budgets checked before the work
//!   they bound; front matter is parsed with limits on size, depth and alias expansion;
//! - deterministic: reads may run ahead on worker threads, the output never changes.
//!
//! Public modules, usable alone (no I/O):
//! - [`record`]: the records of an assembly, which are the JSON schema;
//! - [`front_matter`]: splits YAML front matter off Markdown files and extracts
//!   `description`, `params` and `metadata` (assembly.md §5);
//! - [`select`]: line ranges, anchors and heading sections, the 2 000-line cut and line
//!   numbers (assembly.md §7, "Line ranges and whole files");
//! - [`sanitize`]: makes hidden Unicode and terminal control characters visible (ctx-fs's,
//!   re-exported: the one definition of that set);
//! - [`render`]: XML escaping, wrapper-tag neutralising, failure markers, Markdown fences
//!   and languages;
//! - [`tools`]: the built-in tools and the [`tools::Tool`] trait for one's own.
//!
//! Tokens are counted with ctx-tokens, images told by their content with `ctx_fs::image`.
//!
//! # Example
//!
//! ```
//! use ctx_assemble::{front_matter, select};
//! use ctx_syntax::{LineEnd, Selector};
//!
//! let file = "---\ndescription: notes\n---\none\ntwo\nthree\n";
//! let parsed = front_matter::parse(file);
//! assert_eq!(parsed.front_matter.unwrap().description, "notes");
//! let selector = Selector::Lines { start: 2, end: LineEnd::Line(3) };
//! let selection = select::select(parsed.body, &selector, false).unwrap();
//! assert_eq!(selection.text, "two\nthree");
//! ```

use std::fmt;

use ctx_syntax::Code;

mod assembler;
mod attach;
mod book;
mod budget;
mod cut;
mod document;
mod fit;
pub mod front_matter;
mod line;
mod many;
mod memo;
mod options;
mod out;
mod printer;
pub mod record;
mod reduced;
mod reducer;
mod reference;
pub mod render;
mod resolve;
mod run;
pub mod select;
mod selection;
mod setup;
mod streamed;
mod tool_budget;
mod tool_error;
pub mod tools;

pub use assembler::{AssembleError, Assembler};
pub use attach::{Attachment, AttachmentReason, Attachments};
pub use ctx_fs::sanitize;
pub use options::{BudgetSetting, DEFAULT_MAX_TOKENS, Format, Limits, Mode, OnError, Options};
pub use record::Assembly;
pub use reducer::{Reduce, Reduced, Reducer};
pub use resolve::{Resolution, Resolver};

/// An error of one of the leaf operations, with the diagnostic code it maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A line range starting at line 0.
    ZeroLine,
    /// A line range whose end comes before its start.
    Reversed {
        /// The first line asked for.
        start: u32,
        /// The last line asked for.
        end: u32,
    },
    /// A line range starting after the last line of the file.
    PastEnd {
        /// The first line asked for.
        start: u32,
        /// How many lines the file has.
        lines: u32,
    },
    /// An anchor or heading fragment that the file does not have.
    NoAnchor {
        /// The name asked for.
        name: String,
        /// Whether headings were searched too (Markdown files).
        headings: bool,
    },
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Error {
        Error { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The diagnostic code of the error.
    pub fn code(&self) -> Code {
        match self.kind {
            ErrorKind::ZeroLine
            | ErrorKind::Reversed { .. }
            | ErrorKind::PastEnd { .. }
            | ErrorKind::NoAnchor { .. } => Code::Range,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::ZeroLine => f.write_str("line numbers start at 1, not 0"),
            ErrorKind::Reversed { start, end } => {
                write!(f, "line range {start}-{end} ends before it starts")
            }
            ErrorKind::PastEnd { start, lines } => {
                let s = if *lines == 1 { "" } else { "s" };
                write!(f, "line range starts at line {start} but the file has {lines} line{s}")
            }
            ErrorKind::NoAnchor { name, headings: false } => {
                write!(f, "no anchor named {name:?} (expected an `ANCHOR: {name}` line)")
            }
            ErrorKind::NoAnchor { name, headings: true } => {
                write!(f, "no heading or anchor named {name:?}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Whether a path names a Markdown file (`.md`, `.markdown`, `.mdc`, any letter case), the
/// files that may carry front matter and whose `#name` fragments are heading sections.
pub fn is_markdown(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let ext = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext,
        _ => return false,
    };
    ["md", "markdown", "mdc"].iter().any(|m| ext.eq_ignore_ascii_case(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_extensions() {
        for p in ["a.md", "docs/A.MD", "x.markdown", "rules/r.mdc", "a.b.Md"] {
            assert!(is_markdown(p), "{p}");
        }
        for p in ["a.txt", "md", ".md/x", "a.md/b", "a.mdx", "a", "dir/.md"] {
            assert!(!is_markdown(p), "{p}");
        }
    }

    #[test]
    fn error_messages() {
        let e = Error::new(ErrorKind::PastEnd { start: 9, lines: 1 });
        assert_eq!(e.to_string(), "line range starts at line 9 but the file has 1 line");
        assert_eq!(e.code(), Code::Range);
        let e = Error::new(ErrorKind::Reversed { start: 5, end: 2 });
        assert_eq!(e.to_string(), "line range 5-2 ends before it starts");
    }
}
