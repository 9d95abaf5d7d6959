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
    /// The lines within [`Selection::lines`] left out of the text (the marker lines of other
    /// anchors nested in an anchor's region), in order; empty when the text is every line of
    /// the range.
    pub skipped: Vec<u32>,
}

impl Selection<'_> {
    /// The line of the file that the `k`-th line of the text (1-based) is, counting from
    /// `first` over the lines `skipped` (in order).
    pub fn line_of(first: u32, skipped: &[u32], k: u32) -> u32 {
        let mut line = first.saturating_add(k.saturating_sub(1));
        for &gap in skipped {
            if gap <= line {
                line = line.saturating_add(1);
            } else {
                break;
            }
        }
        line
    }
}
