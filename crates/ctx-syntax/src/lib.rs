//! The ctx grammar: finds mentions (`@src/a.rs#L10-20`), includes (`@[a.md:2:4]`,
//! `@[grep{"pattern":"TODO"}]`) and directives (`@{ifdef DEBUG}`) in text.
//!
//! Properties:
//! - no I/O, and no dependency on the rest of ctx but `ctx-diagnostics` (the one set of
//!   codes);
//! - zero-copy: every [`Item`] borrows from the scanned text;
//! - lossless: the items' spans are contiguous, so concatenating them gives back the input;
//! - total: malformed input never panics and never fails the scan; it yields text and
//!   [`Diagnostic`]s with stable [`Code`]s;
//! - fast: candidates are found with `memchr`, each is parsed with `nom`, and line and column
//!   are counted only between consecutive items.
//!
//! The main entry points are [`scan`] and [`scan_with`]; [`check`] asserts the invariants
//! above and is what the fuzzer and the property tests call.
//!
//! The grammar also writes itself back: [`mention_of`] gives the mention that scans back to
//! a path (quoted when it must be), [`typed_path`] the path a partly typed mention names,
//! and with the `serde` feature a [`Scan`] serialises to the JSON form that `ctx parse`
//! prints.
//!
//! # Example
//!
//! ```
//! use ctx_syntax::{ItemKind, scan};
//!
//! let text = "explain @src/agent.rs#L100-150 and @[notes.md:2:4]";
//! let scan = scan(text);
//! let kinds: Vec<&str> = scan.items.iter().map(|item| item.kind.name()).collect();
//! assert_eq!(kinds, ["text", "mention", "text", "include"]);
//! if let ItemKind::Mention(reference) = &scan.items[1].kind {
//!     assert_eq!(reference.path.raw, "src/agent.rs");
//! }
//! ```

mod ast;
mod book;
mod check;
mod code;
mod diagnostic;
mod directive;
mod dump;
mod json;
mod reference;
mod scanner;
#[cfg(feature = "serde")]
mod serialize;
mod write;

pub use ast::{
    BookPart, BookRange, CodeKind, Condition, Directive, DirectiveKind, Escape, Include, Item,
    ItemKind, LineEnd, Op, Operand, PathText, Position, Reference, Selector, Span, StrLit,
    TargetKind, ToolCall,
};
pub use check::check;
pub use code::fenced_blocks;
pub use diagnostic::{Code, Diagnostic, Severity};
pub use reference::{parse_include_body, parse_reference};
pub use scanner::{LineIndex, scan, scan_with};
pub use write::{mention_of, typed_path};

/// Which parts of the syntax a scan recognises. Everything is on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    /// Recognise `@path` mentions.
    pub mentions: bool,
    /// Recognise `@[...]` includes and tool calls.
    pub includes: bool,
    /// Recognise `@{...}` directives.
    pub directives: bool,
    /// Treat fenced code blocks and inline code spans as literal text.
    pub code_skip: bool,
    /// Recognise the one exception to literal code (syntax.md §1): a line inside a fenced
    /// block that holds nothing but one path include (`@[path]`, with or without a range or
    /// anchor), or its escaped form `\@[path]`. Off by default; inline assembly turns it on.
    pub fence_includes: bool,
    /// Read mdBook's `{{#include}}` family too (the `mdbook` dialect, docs/dialects.md),
    /// also inside fenced code, as mdBook does.
    pub mdbook: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            mentions: true,
            includes: true,
            directives: true,
            code_skip: true,
            fence_includes: false,
            mdbook: false,
        }
    }
}

impl Options {
    /// Options with every family and code-skipping on.
    pub fn all() -> Options {
        Options::default()
    }
}

/// The result of scanning one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan<'a> {
    /// The scanned text.
    pub text: &'a str,
    /// Every piece of the text, in order, covering it without gaps.
    pub items: Vec<Item<'a>>,
    /// Problems found, in order of position.
    pub diagnostics: Vec<Diagnostic>,
}
