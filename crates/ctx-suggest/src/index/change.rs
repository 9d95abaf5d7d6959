//! What an update changed, kept so that it can be stored as a segment ([`super::segment`]).

use serde::{Deserialize, Serialize};

use super::parts::Parts;

/// The sizes of an index's tables and blob, which a segment is checked against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Mark {
    pub(super) terms: u32,
    pub(super) symbols: u32,
    pub(super) kinds: u32,
    pub(super) blob: u64,
    pub(super) files: u32,
}

/// What the last refresh changed, kept so that the update can be stored as a segment.
#[derive(Clone, Debug, Default)]
pub(super) struct Change {
    /// The index before the refresh.
    pub(super) before: Mark,
    /// Paths of the files removed or read again.
    pub(super) removed: Vec<String>,
    /// Places in the new file order of the files read.
    pub(super) fresh: Vec<u32>,
    /// Places in the old file order of the files removed or read again, with their parts
    /// (which stay in the blob until it is rebuilt), so that the symbol graph can drop their
    /// edges; in any order.
    pub(super) gone: Vec<(u32, Parts)>,
    /// Whether the refresh rebuilt the blob or renumbered the terms: only a whole write
    /// stores that.
    pub(super) rewritten: bool,
}
