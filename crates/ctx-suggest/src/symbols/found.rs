//! What a symbol source finds in a file: definitions with their lines, and the names it
//! references.

use serde::{Deserialize, Serialize};

/// One symbol definition, with its lines (1-based, inclusive).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Def {
    /// The name as written.
    pub name: String,
    /// The tags query's kind (`function`, `class`, `method`, …).
    pub kind: String,
    /// First line of the definition.
    pub start: u32,
    /// Last line of the definition.
    pub end: u32,
    /// The first line of its doc comment, if any.
    pub doc: Option<String>,
}

/// What a file defines and references.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Symbols {
    /// Definitions, in source order.
    pub defs: Vec<Def>,
    /// Names referenced, in source order, repeated.
    pub refs: Vec<String>,
}

/// What a file defines and references, the names referenced borrowed from its text.
#[derive(Debug, Default)]
pub(crate) struct Found<'s> {
    pub(crate) defs: Vec<Def>,
    pub(crate) refs: Vec<&'s str>,
}

impl Found<'_> {
    pub(super) fn into_owned(self) -> Symbols {
        Symbols { defs: self.defs, refs: self.refs.into_iter().map(str::to_owned).collect() }
    }
}
