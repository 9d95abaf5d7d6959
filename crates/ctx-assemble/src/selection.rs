//! What a selection of a file's lines gives back (the types that the line selectors of
//! `select.rs` and mdBook's parts in `book.rs` share).

use std::borrow::Cow;

/// The lines a selection took, 1-based and inclusive, numbered in the original file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineRange {
    /// First line taken.
    pub start: u32,
    /// Last line taken.
    pub end: u32,
}

/// The text a selector picked out of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection<'a> {
    /// The selected lines, the last one without its line ending. Borrowed unless lines had
    /// to be dropped from the middle (nested anchor markers).
    pub text: Cow<'a, str>,
    /// The lines actually taken; `None` for an empty anchor region.
    pub lines: Option<LineRange>,
}
