//! The bytes the files' parts and the symbol graph lie in: the stored index, mapped or owned,
//! and what was added since.

use serde::{Deserialize, Serialize};

/// The bytes the files' parts and the symbol graph lie in.
///
/// A loaded index reads the parts and graph of the stored index where they lie in its buffer
/// (mapped, so nothing is copied); the parts of files read since are added after the stored
/// ones, and a rebuilt graph replaces the stored one. An update thus writes the stored parts
/// back as they are, beside the new ones, and copies nothing in memory; once the parts of
/// changed and removed files take more than a fifth of the blob, it is rebuilt with the
/// files' parts in file order.
#[derive(Debug, Default)]
pub(super) struct Blob {
    /// The stored index, or nothing.
    pub(super) buf: Buf,
    /// Where its files' parts lie in `buf`.
    pub(super) stored: std::ops::Range<usize>,
    /// Where its graph lies in `buf`.
    pub(super) stored_graph: std::ops::Range<usize>,
    /// Parts added since, addressed after the stored ones.
    pub(super) extra: Vec<u8>,
    /// The graph, when built since.
    pub(super) graph: Option<Vec<u8>>,
}

#[derive(Debug)]
pub(super) enum Buf {
    Owned(Vec<u8>),
    /// A mapped stored index, shared with the thread that checks its checksum.
    Mapped(std::sync::Arc<ctx_fs::Mapped>),
}

impl Default for Buf {
    fn default() -> Buf {
        Buf::Owned(Vec::new())
    }
}

impl std::ops::Deref for Buf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Buf::Owned(bytes) => bytes,
            Buf::Mapped(map) => map.as_ref(),
        }
    }
}

impl Blob {
    pub(super) fn stored(&self) -> &[u8] {
        self.buf.get(self.stored.clone()).unwrap_or_default()
    }

    /// Bytes of parts, stored and added.
    pub(super) fn len(&self) -> usize {
        self.stored.len() + self.extra.len()
    }

    /// The `len` bytes at `start`; empty when they are not all there.
    pub(super) fn get(&self, start: u64, len: u64) -> &[u8] {
        let (Ok(start), Ok(len)) = (usize::try_from(start), usize::try_from(len)) else {
            return &[];
        };
        let stored = self.stored();
        let end = start.saturating_add(len);
        if end <= stored.len() {
            return &stored[start..end];
        }
        let Some(start) = start.checked_sub(stored.len()) else { return &[] };
        self.extra.get(start..end - stored.len()).unwrap_or_default()
    }

    pub(super) fn graph(&self) -> &[u8] {
        match &self.graph {
            Some(graph) => graph,
            None => self.buf.get(self.stored_graph.clone()).unwrap_or_default(),
        }
    }

    /// What is written after the tables: the parts, then the graph.
    pub(super) fn pieces(&self) -> [&[u8]; 3] {
        [self.stored(), &self.extra, self.graph()]
    }
}

/// A run of bytes in the blob.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Section {
    pub(super) start: u64,
    pub(super) len: u64,
}

/// The symbol graph, stored after the files' parts as four arrays of little-endian `u32`:
/// for each symbol id `s`, the files defining it are `def_files[def_start[s]..def_start[s +
/// 1]]` (each once, in file order) and the files referencing it, with how often, are the
/// pairs `ref_files[2 * ref_start[s]..2 * ref_start[s + 1]]`. Built when the files change,
/// so a query looks up the neighbours of the files it reaches without a pass over every file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct GraphParts {
    pub(super) def_start: Section,
    pub(super) def_files: Section,
    pub(super) ref_start: Section,
    pub(super) ref_files: Section,
}
