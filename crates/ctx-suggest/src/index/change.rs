//! What an update changed, kept so that it can be stored as a segment ([`super::segment`]).

use std::collections::BTreeSet;

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
    /// Paths of the files read, kept once the index was stored so that the next change can
    /// follow this one ([`Change::then`]).
    pub(super) read: BTreeSet<String>,
    /// Whether the refresh rebuilt the blob or renumbered the terms: only a whole write
    /// stores that.
    pub(super) rewritten: bool,
}

impl Change {
    /// This change, then `next` (whose update moved each place as `moved` says): one change
    /// from this one's starting point to where `next` ends, so that a segment of it applies to
    /// the stored index this one started from. A tombstone of `next` counts only for a file of
    /// that index (not one read since); the files read by either are placed where they are now.
    pub(super) fn then(mut self, next: Change, moved: Option<&[u32]>) -> Change {
        let stored = |p: &String| !self.read.contains(p);
        let removed: Vec<String> = next.removed.into_iter().filter(stored).collect();
        self.removed.extend(removed);
        let place = |f: u32| match moved {
            Some(moved) => moved.get(f as usize).copied().filter(|&m| m != GONE),
            None => Some(f),
        };
        let mut fresh: Vec<u32> = self.fresh.iter().filter_map(|&f| place(f)).collect();
        fresh.extend(next.fresh);
        fresh.sort_unstable();
        fresh.dedup();
        self.fresh = fresh;
        self.read.extend(next.read);
        self.gone = next.gone;
        self.rewritten |= next.rewritten;
        self
    }
}

/// In a map of places, a file removed or read again.
pub(super) const GONE: u32 = u32::MAX;

/// Each place before an update to its place after it (`GONE` for the files of `gone`); `None`
/// when every kept file keeps its place (each file read again where it was).
pub(super) fn moves(before: usize, gone: &[(u32, Parts)], fresh: &[u32]) -> Option<Vec<u32>> {
    if gone.len() == fresh.len() && gone.iter().zip(fresh).all(|(g, f)| g.0 == *f) {
        return None;
    }
    let mut moved = vec![GONE; before];
    let (mut gone, mut fresh) = (gone.iter().map(|g| g.0).peekable(), fresh.iter().peekable());
    let mut now = 0u32;
    for (place, to) in moved.iter_mut().enumerate() {
        if gone.next_if(|&g| g as usize == place).is_some() {
            continue;
        }
        while fresh.next_if(|&&f| f == now).is_some() {
            now += 1;
        }
        *to = now;
        now += 1;
    }
    Some(moved)
}
