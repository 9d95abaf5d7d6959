//! The bytes the files' parts and the symbol graph lie in: the stored index, mapped or owned,
//! and what was added since.

use serde::{Deserialize, Serialize};

use crate::hash::Sum;

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

/// The stored form of an index as it is written, after its header: the payload (the files'
/// parts, the graph, the tables and their length), summed as it goes, into memory or into a
/// new entry of the store. A cold build streams the parts of the files it reads to the store
/// as they are made, so that they are never all held in memory.
pub(super) struct Stream<'s> {
    to: To<'s>,
    sum: Sum,
    /// Bytes of payload so far.
    len: u64,
    /// The first write that failed; what follows it is dropped.
    error: Option<ctx_fs::Error>,
}

enum To<'s> {
    Memory(Vec<u8>),
    Store(ctx_fs::StoreWriter<'s>),
}

impl<'s> Stream<'s> {
    /// A stream into memory, `header` bytes kept for the header.
    pub(super) fn memory(header: usize) -> Stream<'static> {
        Stream { to: To::Memory(vec![0; header]), sum: Sum::default(), len: 0, error: None }
    }

    /// A stream into a new entry of the store, `header` bytes kept for the header.
    pub(super) fn store(mut out: ctx_fs::StoreWriter<'s>, header: usize) -> Stream<'s> {
        let error = out.write_all(&vec![0; header]).err();
        Stream { to: To::Store(out), sum: Sum::default(), len: 0, error }
    }

    /// Adds `bytes` to the payload.
    pub(super) fn put(&mut self, bytes: &[u8]) {
        self.sum.update(bytes);
        self.len += bytes.len() as u64;
        match &mut self.to {
            To::Memory(out) => out.extend_from_slice(bytes),
            To::Store(out) if self.error.is_none() => self.error = out.write_all(bytes).err(),
            To::Store(_) => {}
        }
    }

    /// Adds `values` as little-endian `u32`, a few kilobytes at a time.
    pub(super) fn put_u32s(&mut self, values: &[u32]) {
        let mut chunk = Vec::with_capacity(4096);
        for part in values.chunks(1024) {
            chunk.clear();
            chunk.extend(part.iter().flat_map(|v| v.to_le_bytes()));
            self.put(&chunk);
        }
    }

    /// Bytes of payload so far.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The checksum of the payload so far.
    pub(super) fn sum(&self) -> u64 {
        self.sum.finish()
    }

    /// Puts `header` in its place and ends the stream: the bytes in memory, or the entry of
    /// the store replaced by them (`None`); the first error of a write, if any.
    pub(super) fn finish(self, header: &[u8]) -> ctx_fs::Result<Option<Vec<u8>>> {
        Ok(match self.end(header, false)? {
            Buf::Owned(bytes) => Some(bytes),
            Buf::Mapped(_) => None,
        })
    }

    /// [`Stream::finish`], and the bytes as an index reads them: in memory, or the stored
    /// entry mapped (the file written, whatever replaces the entry later).
    pub(super) fn finish_mapped(self, header: &[u8]) -> ctx_fs::Result<Buf> {
        self.end(header, true)
    }

    fn end(self, header: &[u8], map: bool) -> ctx_fs::Result<Buf> {
        if let Some(error) = self.error {
            return Err(error);
        }
        match self.to {
            To::Memory(mut out) => {
                out[..header.len()].copy_from_slice(header);
                Ok(Buf::Owned(out))
            }
            To::Store(mut out) => {
                out.write_at(0, header)?;
                if map {
                    return Ok(Buf::Mapped(std::sync::Arc::new(out.commit_mapped()?)));
                }
                out.commit()?;
                Ok(Buf::Owned(Vec::new()))
            }
        }
    }
}

impl std::io::Write for Stream<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.put(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
