//! The counts of short pieces met before: the pieces of code and prose repeat
//! heavily (` the`, `self`, `);\n`, an identifier used on every line), and a piece found here
//! costs one load from a table that stays in the processor's cache, where a piece counted
//! costs at least one lookup in the rank table (hash slots, offsets and token bytes: three
//! loads from 4 MB, most of them misses) and a multi-token piece a lookup per pair merged.
//!
//! Exact: an entry holds the whole piece and its length, and answers only a piece equal to it;
//! a piece that maps to a taken slot replaces its entry. Three tables: pieces of up to 6 bytes
//! (one word an entry: most pieces, and a table half the size of one of two words misses the
//! cache less; one table for every thread, [`Shared`], since an entry of one word is read and
//! written whole), of 7 to 14 (two words) and of 15 to 30 (four words), which are rarer (long
//! identifiers, indentation) but cost a rank lookup a pair merged when counted, one of each a
//! thread ([`Memo`]).

use std::sync::atomic::{AtomicU64, Ordering};

/// The bits of an entry's last word that hold the rest of the piece and its length.
const KEY_MASK: u64 = (1 << 56) - 1;

/// A direct-mapped table from pieces of up to `8 * W - 2` bytes to their counts.
pub(crate) struct Memo<const W: usize> {
    /// Per slot: the piece's bytes in `W` little-endian words, zero past its end, with its
    /// length at bit 48 and its count at bit 56 of the last word. A length of 0 marks a free
    /// slot (no piece looked up is empty).
    slots: Box<[[u64; W]]>,
    /// The number of slots is `1 << bits`.
    bits: u32,
}

impl<const W: usize> Memo<W> {
    /// The longest piece remembered, in bytes: the last word keeps two bytes for the length
    /// and the count.
    pub(crate) const MAX_LEN: usize = 8 * W - 2;

    /// A table of `1 << bits` slots.
    pub(crate) fn new(bits: u32) -> Memo<W> {
        Memo { slots: vec![[0; W]; 1 << bits].into_boxed_slice(), bits }
    }

    /// The count of the piece of `len` bytes (2 to [`Memo::MAX_LEN`]) at the start of `tail`,
    /// from the table or from `count`, which is then remembered.
    #[inline]
    pub(crate) fn count(
        &mut self,
        tail: &[u8],
        len: usize,
        count: impl FnOnce(&[u8]) -> usize,
    ) -> usize {
        debug_assert!((2..=Self::MAX_LEN).contains(&len) && len <= tail.len());
        let key = key::<W>(tail, len);
        let slot = &mut self.slots[slot_of(&key, self.bits)];
        let mut stored = *slot;
        stored[W - 1] &= KEY_MASK;
        if stored == key {
            return (slot[W - 1] >> 56) as usize;
        }
        let n = count(&tail[..len]);
        // A piece of at most 254 bytes has at most as many tokens: the count fits its byte.
        let mut entry = key;
        entry[W - 1] |= (n as u64) << 56;
        *slot = entry;
        n
    }
}

/// A table of one word an entry, as [`Memo<1>`], shared by every thread that counts: the
/// pieces of up to six bytes are most pieces, and the threads of one run meet the same ones,
/// so each thread finds what the others counted, and the cores' caches hold one table instead
/// of one a thread. An entry is one word, read and written whole: a thread never sees half of
/// another's entry.
pub(crate) struct Shared {
    slots: Box<[AtomicU64]>,
    bits: u32,
}

impl Shared {
    /// The longest piece remembered, in bytes.
    pub(crate) const MAX_LEN: usize = Memo::<1>::MAX_LEN;

    /// A table of `1 << bits` slots.
    pub(crate) fn new(bits: u32) -> Shared {
        Shared { slots: (0..1u64 << bits).map(|_| AtomicU64::new(0)).collect(), bits }
    }

    /// The count of the piece of `len` bytes (2 to [`Shared::MAX_LEN`]) at the start of
    /// `tail`, from the table or from `count`, which is then remembered.
    #[inline]
    pub(crate) fn count(
        &self,
        tail: &[u8],
        len: usize,
        count: impl FnOnce(&[u8]) -> usize,
    ) -> usize {
        debug_assert!((2..=Self::MAX_LEN).contains(&len) && len <= tail.len());
        let key = key::<1>(tail, len);
        let slot = &self.slots[slot_of(&key, self.bits)];
        let key = key[0];
        let stored = slot.load(Ordering::Relaxed);
        if stored & KEY_MASK == key {
            return (stored >> 56) as usize;
        }
        let n = count(&tail[..len]);
        slot.store(key | (n as u64) << 56, Ordering::Relaxed);
        n
    }
}

/// The key of the piece of `len` bytes at the start of `tail`: its bytes as [`words`], with
/// its length at bit 48 of the last word.
#[inline]
fn key<const W: usize>(tail: &[u8], len: usize) -> [u64; W] {
    let mut key = words::<W>(tail, len);
    key[W - 1] |= (len as u64) << 48;
    key
}

/// The slot of `key` in a table of `1 << bits` slots.
#[inline]
fn slot_of<const W: usize>(key: &[u64; W], bits: u32) -> usize {
    let h = key
        .iter()
        .fold(0u64, |h, &w| (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - bits)) as usize
}

/// The first `len` bytes of `tail` (at most `8 * W - 2`) as `W` little-endian words, the
/// bytes past `len` zero.
#[inline]
fn words<const W: usize>(tail: &[u8], len: usize) -> [u64; W] {
    let mut out = [0u64; W];
    if tail.len() >= 8 * W {
        // Enough bytes to read whole words: one load each, then the bytes past the piece
        // masked off.
        for (i, word) in out.iter_mut().enumerate() {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&tail[8 * i..8 * i + 8]);
            let keep = len.saturating_sub(8 * i).min(8);
            let mask = if keep == 8 { u64::MAX } else { (1u64 << (8 * keep)) - 1 };
            *word = u64::from_le_bytes(bytes) & mask;
        }
        return out;
    }
    // Near the end of the text: gathered a byte at a time, in a register.
    for (word, chunk) in out.iter_mut().zip(tail[..len].chunks(8)) {
        *word = chunk.iter().rev().fold(0u64, |word, &b| word << 8 | u64::from(b));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_same_near_the_end_and_far_from_it() {
        let text = b"abcdefghijklmnopqrstuvwxyz";
        for len in 2..=Memo::<1>::MAX_LEN {
            assert_eq!(words::<1>(text, len), words::<1>(&text[..len], len), "{len}");
        }
        for len in 2..=Memo::<2>::MAX_LEN {
            assert_eq!(words::<2>(text, len), words::<2>(&text[..len], len), "{len}");
        }
        for len in 2..=Memo::<4>::MAX_LEN {
            let text = text.repeat(2);
            assert_eq!(words::<4>(&text, len), words::<4>(&text[..len], len), "{len}");
        }
        assert_eq!(words::<2>(b"ab", 2), [0x6261, 0]);
    }

    #[test]
    fn the_shared_table_answers_only_the_same_piece() {
        let shared = Shared::new(4);
        let calls = std::cell::Cell::new(0);
        let count = |piece: &[u8]| {
            calls.set(calls.get() + 1);
            piece.len()
        };
        // One word an entry: six bytes, the length and the count.
        assert_eq!(shared.count(b"abcdef!", 6, count), 6);
        assert_eq!(shared.count(b"abcdef", 6, count), 6);
        assert_eq!(calls.get(), 1);
        // Not by a piece of the same length or a shorter one of the same bytes.
        assert_eq!(shared.count(b"abcdeg", 6, count), 6);
        assert_eq!(shared.count(b"abcde", 5, count), 5);
        assert_eq!(shared.count(b"ab\0", 2, count), 2);
        assert_eq!(calls.get(), 4);
    }

    /// Threads racing on a table of four slots, each piece's count its own (not its length):
    /// whatever one thread reads while another writes, the answer is the piece's.
    #[test]
    fn threads_racing_on_the_shared_table_never_get_another_pieces_count() {
        let shared = Shared::new(2);
        let pieces: Vec<Vec<u8>> = (0..64u8)
            .map(|i| (0..2 + usize::from(i % 5)).map(|k| b'a' + (i + k as u8) % 26).collect())
            .collect();
        // A count that tells the pieces apart: a sum of their bytes, within a byte.
        let own = |piece: &[u8]| piece.iter().map(|&b| usize::from(b)).sum::<usize>() % 200 + 1;
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (shared, pieces) = (&shared, &pieces);
                scope.spawn(move || {
                    for round in 0..2000 {
                        let piece = &pieces[(round * 7 + t * 13) % pieces.len()];
                        assert_eq!(shared.count(piece, piece.len(), own), own(piece));
                    }
                });
            }
        });
    }

    #[test]
    fn only_the_same_piece_is_answered() {
        let mut memo = Memo::<2>::new(4);
        let mut calls = 0;
        let mut count = |piece: &[u8]| {
            calls += 1;
            piece.len()
        };
        assert_eq!(memo.count(b"abc def", 3, &mut count), 3);
        assert_eq!(memo.count(b"abc", 3, &mut count), 3);
        assert_eq!(memo.count(b"abcd", 4, &mut count), 4);
        assert_eq!(memo.count(b"abd", 3, &mut count), 3);
        assert_eq!(memo.count(b"ab", 2, &mut count), 2);
        assert_eq!(memo.count(b"ab\0", 2, &mut count), 2);
        // The second `abc` and the second `ab` were answered from the table.
        assert_eq!(calls, 4);
        // Entries of one word: `the_shared_table_answers_only_the_same_piece`.
        let mut long = Memo::<4>::new(4);
        let mut calls = 0;
        let mut count = |piece: &[u8]| {
            calls += 1;
            piece.len()
        };
        let piece = b"a_rather_long_identifier_name_";
        assert_eq!(long.count(piece, 30, &mut count), 30);
        assert_eq!(long.count(piece, 30, &mut count), 30);
        assert_eq!(long.count(piece, 29, &mut count), 29);
        assert_eq!(calls, 2);
    }
}
