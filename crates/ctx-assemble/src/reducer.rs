//! The seam through which a mentioned file that does not fit the token budget whole is
//! reduced rather than cut at its head (assembly.md §7, "Limits on content"): a [`Reducer`]
//! the embedder installs ([`crate::Assembler::with_reducer`]; the facade's shows the file's
//! outline and the ranges that matter for the prompt). The assembler trusts it with nothing:
//! it makes the text visible again, counts it, adds the marker, and cuts at the head as
//! before when the reduction does not fit or there is none.

use crate::record::Lines;

/// A file to reduce.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Reduce<'a> {
    /// The path as shown.
    pub path: &'a str,
    /// Its whole text as read (not yet made visible).
    pub text: &'a str,
    /// The prompt the file was mentioned by, when the run assembles one (none for a document
    /// file): the ranges worth keeping are the ones that share its words.
    pub prompt: Option<&'a str>,
    /// The o200k tokens the reduced text may take at most.
    pub room: usize,
    /// Whether the lines shown are numbered (`--line-numbers`).
    pub line_numbers: bool,
    /// The ranges to keep first beside the outline, best first (an attachment's, chosen by
    /// a ranking); empty: the reducer's own.
    pub ranges: &'a [Lines],
}

/// What a reducer kept of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reduced {
    /// The text shown in place of the file's: its outline, then the ranges kept, each headed
    /// by its lines.
    pub text: String,
    /// The ranges of lines of the file the text shows, in line order.
    pub ranges: Vec<Lines>,
    /// The definitions the outline shows.
    pub shown: usize,
    /// The definitions the file has.
    pub definitions: usize,
}

impl Reduced {
    /// A reduction: its text, its ranges, the definitions shown of the file's.
    pub fn new(text: String, ranges: Vec<Lines>, shown: usize, definitions: usize) -> Reduced {
        Reduced { text, ranges, shown, definitions }
    }
}

/// Reduces a file that does not fit whole to what matters most.
pub trait Reducer: Send + Sync {
    /// The reduced form of `file` within `file.room` tokens; `None` when the file has none
    /// (no definitions the reducer reads, or not even its outline's heading fits): it is then
    /// cut at its head.
    fn reduce(&self, file: &Reduce<'_>) -> Option<Reduced>;
}
