//! A file's postings: its terms sorted by id, each with its frequency per field, as varints
//! with a skip table in front, so that a query decodes only the blocks that may hold its
//! terms; and the varints the other parts of a file are written in too.

/// Postings in a block between two skip entries.
const SKIP_BLOCK: usize = 32;

/// A file's postings part: the length of its skip table, the skip table, then the postings.
///
/// The postings are sorted by term: varint term-id delta, a byte of fields present, then a
/// varint frequency per present field. Every [`SKIP_BLOCK`] postings, the skip table has an
/// entry (the term id before the block and the block's byte offset in the postings, each as
/// a varint delta from the previous entry), so that a query passes over the blocks that
/// cannot hold its terms instead of decoding them.
pub(super) fn encode_postings(ids: &[(u32, [u32; 5])]) -> Vec<u8> {
    let mut stream = Vec::with_capacity(ids.len() * 3);
    let mut skips = Vec::new();
    let (mut prev, mut last_skip) = (0u32, (0u32, 0u32));
    for (k, (id, tf)) in ids.iter().enumerate() {
        if k > 0 && k % SKIP_BLOCK == 0 {
            let offset = u32::try_from(stream.len()).unwrap_or(u32::MAX);
            put_varint(&mut skips, prev - last_skip.0);
            put_varint(&mut skips, offset - last_skip.1);
            last_skip = (prev, offset);
        }
        put_varint(&mut stream, id - prev);
        prev = *id;
        let mask = tf.iter().enumerate().fold(0u8, |m, (i, n)| if *n > 0 { m | 1 << i } else { m });
        stream.push(mask);
        for n in tf.iter().filter(|n| **n > 0) {
            put_varint(&mut stream, *n);
        }
    }
    let mut out = Vec::with_capacity(skips.len() + stream.len() + 3);
    put_varint(&mut out, u32::try_from(skips.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(&skips);
    out.extend_from_slice(&stream);
    out
}

/// The skip table and the postings of a postings part (see [`encode_postings`]); a damaged
/// part gives what it can.
pub(super) fn split_postings(part: &[u8]) -> (Skips<'_>, PostingIter<'_>) {
    let mut header = PostingIter::new(part);
    let len = header.varint().unwrap_or(0) as usize;
    let start = header.pos.min(part.len());
    let end = start.saturating_add(len).min(part.len());
    let skips = Skips { varints: PostingIter::new(&part[start..end]), last: (0, 0) };
    (skips, PostingIter::new(&part[end..]))
}

/// The entries of a skip table: the term id before a block and the block's offset.
pub(crate) struct Skips<'a> {
    varints: PostingIter<'a>,
    last: (u32, usize),
}

impl Iterator for Skips<'_> {
    type Item = (u32, usize);

    fn next(&mut self) -> Option<(u32, usize)> {
        let (prev, offset) = (self.varints.varint()?, self.varints.varint()?);
        self.last = (self.last.0.wrapping_add(prev), self.last.1.saturating_add(offset as usize));
        Some(self.last)
    }
}

/// Appends to `hits` a file's frequencies of the query terms `query` (term id and query
/// index, sorted by id), found in its postings part, as (query index, frequency per field):
/// the postings are read only in the blocks that may hold a query term.
pub(crate) fn match_postings(
    part: &[u8],
    query: &[(u32, usize)],
    hits: &mut Vec<(usize, [u32; 5])>,
) {
    let (mut skips, mut it) = split_postings(part);
    let mut pending = skips.next();
    let mut cur = it.next();
    for &(q, at) in query {
        let Some((id, _)) = cur else { return };
        if id < q {
            // The furthest block ahead that starts after a term below `q`: nothing before it
            // can be `q`.
            let mut target = None;
            while let Some((prev, offset)) = pending {
                if prev >= q {
                    break;
                }
                if offset > it.pos {
                    target = Some((prev, offset));
                }
                pending = skips.next();
            }
            if let Some((prev, offset)) = target {
                it.pos = offset;
                it.prev = prev;
                cur = it.next();
            }
            while cur.is_some_and(|(id, _)| id < q) {
                cur = it.next();
            }
        }
        match cur {
            Some((id, tf)) if id == q => hits.push((at, tf)),
            Some(_) => {}
            None => return,
        }
    }
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Decodes a posting list: `(term id, frequency per field)`.
pub(crate) struct PostingIter<'a> {
    bytes: &'a [u8],
    pos: usize,
    prev: u32,
}

impl<'a> PostingIter<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> PostingIter<'a> {
        PostingIter { bytes, pos: 0, prev: 0 }
    }

    /// Decodes `bytes` from `pos`, where the entry before had id `prev`.
    pub(super) fn resume(bytes: &'a [u8], pos: usize, prev: u32) -> PostingIter<'a> {
        PostingIter { bytes, pos, prev }
    }

    pub(super) fn varint(&mut self) -> Option<u32> {
        let mut n = 0u32;
        let mut shift = 0;
        loop {
            let b = *self.bytes.get(self.pos)?;
            self.pos += 1;
            n |= u32::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(n);
            }
            shift += 7;
            if shift > 28 {
                return None;
            }
        }
    }
}

impl Iterator for PostingIter<'_> {
    type Item = (u32, [u32; 5]);

    fn next(&mut self) -> Option<Self::Item> {
        let delta = self.varint()?;
        self.prev = self.prev.checked_add(delta)?;
        let mask = *self.bytes.get(self.pos)?;
        self.pos += 1;
        let mut tf = [0u32; 5];
        for (i, slot) in tf.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *slot = self.varint()?;
            }
        }
        Some((self.prev, tf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn skipping_finds_what_a_full_merge_finds(
            ids in proptest::collection::btree_set(0u32..5_000, 0..400),
            query in proptest::collection::btree_set(0u32..5_200, 0..40),
            seed in 0u32..1000,
        ) {
            let postings: Vec<(u32, [u32; 5])> = ids
                .iter()
                .map(|&id| (id, [id % 3, 0, (id + seed) % 2, 1, id % 200]))
                .collect();
            let query: Vec<(u32, usize)> = query.into_iter().enumerate().map(|(i, q)| (q, i)).collect();
            let part = encode_postings(&postings);
            let mut found = Vec::new();
            match_postings(&part, &query, &mut found);
            let want: Vec<(usize, [u32; 5])> = query
                .iter()
                .filter_map(|&(q, at)| postings.iter().find(|(id, _)| *id == q).map(|(_, tf)| (at, *tf)))
                .collect();
            proptest::prop_assert_eq!(found, want);
            proptest::prop_assert_eq!(split_postings(&part).1.collect::<Vec<_>>(), postings);
        }
    }

    #[test]
    fn postings_round_trip() {
        let ids = vec![(0, [1, 0, 0, 0, 2]), (5, [0, 0, 300, 0, 0]), (1000, [0, 1, 0, 1, 0])];
        assert_eq!(split_postings(&encode_postings(&ids)).1.collect::<Vec<_>>(), ids);
    }
}
