//! Where a file's parts lie in the index's blob, and how its definitions and references are
//! written there.

use serde::{Deserialize, Serialize};

use super::blob::Stream;
use super::postings::{PostingIter, put_varint};

/// A definition as stored: its name is an index into the symbol table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DefRec {
    pub(crate) sym: u32,
    pub(crate) kind: u16,
    pub(crate) start: u32,
    pub(crate) end: u32,
    /// The first line of its doc comment: a byte range in the file's doc lines (the last of
    /// its [`Parts`]), empty when it has none (a doc line is never empty).
    pub(crate) doc: (u32, u32),
}

/// The byte lengths of a file's four parts, one after the other in the index's blob from
/// `start`:
/// - postings, sorted by term behind a skip table: varint term-id delta, a byte of fields
///   present, then a varint frequency per present field (see
///   [`encode_postings`](super::postings::encode_postings));
/// - definitions, in source order: varints of symbol, kind, first line, length in lines and
///   doc range (see [`encode_defs`]);
/// - references, sorted by symbol: varints of symbol-id delta and count;
/// - the doc lines of the definitions, one after the other.
///
/// A stored index is mapped and used in place: loading it copies and allocates nothing a
/// file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Parts {
    pub(super) start: u64,
    pub(super) postings: u32,
    pub(super) defs: u32,
    pub(super) refs: u32,
    pub(super) docs: u32,
}

impl Parts {
    pub(super) fn len(&self) -> u64 {
        u64::from(self.postings)
            + u64::from(self.defs)
            + u64::from(self.refs)
            + u64::from(self.docs)
    }
}

/// The parts of one file before they are placed in a blob.
#[derive(Default)]
pub(super) struct Owned {
    pub(super) postings: Vec<u8>,
    pub(super) defs: Vec<u8>,
    pub(super) refs: Vec<u8>,
    pub(super) docs: String,
}

impl Owned {
    /// Appends the parts to `blob`; returns where they lie.
    pub(super) fn place(&self, blob: &mut Vec<u8>) -> Parts {
        let start = blob.len() as u64;
        self.put_each(start, |part| blob.extend_from_slice(part))
    }

    /// Adds the parts to a stream (see [`Stream`]); returns where they lie in its payload.
    pub(super) fn place_in(&self, out: &mut Stream<'_>) -> Parts {
        let start = out.len();
        self.put_each(start, |part| out.put(part))
    }

    /// Hands the parts to `put` in their stored order; returns where they lie from `start`.
    fn put_each(&self, start: u64, mut put: impl FnMut(&[u8])) -> Parts {
        for part in [&self.postings[..], &self.defs, &self.refs, self.docs.as_bytes()] {
            put(part);
        }
        let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Parts {
            start,
            postings: len(self.postings.len()),
            defs: len(self.defs.len()),
            refs: len(self.refs.len()),
            docs: len(self.docs.len()),
        }
    }
}

/// Definitions as stored in a file's part: per definition, varints of symbol, kind, first
/// line, length in lines, and doc range (start, length).
pub(super) fn encode_defs(defs: &[DefRec]) -> Vec<u8> {
    let mut out = Vec::with_capacity(defs.len() * 8);
    for d in defs {
        put_varint(&mut out, d.sym);
        put_varint(&mut out, u32::from(d.kind));
        put_varint(&mut out, d.start);
        put_varint(&mut out, d.end.wrapping_sub(d.start));
        put_varint(&mut out, d.doc.0);
        put_varint(&mut out, d.doc.1.wrapping_sub(d.doc.0));
    }
    out
}

/// References as stored in a file's part: symbol ids as deltas (the list is sorted), each
/// followed by its count.
pub(super) fn encode_refs(refs: &[(u32, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(refs.len() * 3);
    let mut prev = 0u32;
    for &(sym, count) in refs {
        put_varint(&mut out, sym.wrapping_sub(prev));
        put_varint(&mut out, count);
        prev = sym;
    }
    out
}

/// The definitions of a file, decoded as they are read (see [`encode_defs`]); a truncated
/// one ends the list.
pub(crate) struct Defs<'a>(PostingIter<'a>);

impl Defs<'_> {
    /// The definitions in a file's definitions part.
    pub(super) fn new(part: &[u8]) -> Defs<'_> {
        Defs(PostingIter::new(part))
    }
}

impl Iterator for Defs<'_> {
    type Item = DefRec;

    fn next(&mut self) -> Option<DefRec> {
        let v = &mut self.0;
        let (sym, kind, start) = (v.varint()?, v.varint()?, v.varint()?);
        let (lines, doc, doc_len) = (v.varint()?, v.varint()?, v.varint()?);
        Some(DefRec {
            sym,
            kind: u16::try_from(kind).unwrap_or(u16::MAX),
            start,
            end: start.wrapping_add(lines),
            doc: (doc, doc.wrapping_add(doc_len)),
        })
    }
}

/// The references of a file, decoded as they are read (see [`encode_refs`]).
pub(crate) struct Refs<'a> {
    varints: PostingIter<'a>,
    prev: u32,
}

impl Refs<'_> {
    /// The references in a file's references part.
    pub(super) fn new(part: &[u8]) -> Refs<'_> {
        Refs { varints: PostingIter::new(part), prev: 0 }
    }
}

impl Iterator for Refs<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        let (delta, count) = (self.varints.varint()?, self.varints.varint()?);
        self.prev = self.prev.wrapping_add(delta);
        Some((self.prev, count))
    }
}
