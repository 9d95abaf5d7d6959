//! The counts of short pieces met before, kept per thread: the pieces of code and prose repeat
//! heavily (` the`, `self`, `);\n`, an identifier used on every line), and a piece found here
//! costs one load from a table that stays in the processor's cache, where a piece counted
//! costs at least one lookup in the rank table (hash slots, offsets and token bytes: three
//! loads from 4 MB, most of them misses) and a multi-token piece a lookup per pair merged.
//!
//! Exact: an entry holds the whole piece (at most [`MEMO_LEN`] bytes) and its length, and
//! answers only a piece equal to it; a piece that maps to a taken slot replaces its entry.

/// The longest piece remembered, in bytes: two words hold it, with its length and count.
pub(crate) const MEMO_LEN: usize = 14;

/// Slots of the table: 512 KiB a thread (on the cargo registry's sources, 8 192 slots counted
/// 10% slower, 65 536 3% faster).
const SLOTS: usize = 1 << 15;

/// The bits of an entry's second word that hold the rest of the piece and its length.
const KEY_MASK: u64 = (1 << 56) - 1;

/// A direct-mapped table from short pieces to their counts.
pub(crate) struct Memo {
    /// Per slot: the piece's first eight bytes; then its next six, its length at bit 48 and
    /// its count at bit 56. A length of 0 marks a free slot (no piece looked up is empty).
    slots: Box<[(u64, u64)]>,
}

impl Memo {
    pub(crate) fn new() -> Memo {
        Memo { slots: vec![(0, 0); SLOTS].into_boxed_slice() }
    }

    /// The count of the piece of `len` bytes (2 to [`MEMO_LEN`]) at the start of `tail`,
    /// from the table or from `count`, which is then remembered.
    #[inline]
    pub(crate) fn count(
        &mut self,
        tail: &[u8],
        len: usize,
        count: impl FnOnce(&[u8]) -> usize,
    ) -> usize {
        debug_assert!((2..=MEMO_LEN).contains(&len) && len <= tail.len());
        let (first, rest) = words(tail, len);
        let key = rest | (len as u64) << 48;
        let h = (first ^ key.rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = &mut self.slots[(h >> (64 - SLOTS.trailing_zeros())) as usize];
        if slot.0 == first && slot.1 & KEY_MASK == key {
            return (slot.1 >> 56) as usize;
        }
        let n = count(&tail[..len]);
        // A piece of at most 14 bytes has at most 14 tokens: the count fits its byte.
        *slot = (first, key | (n as u64) << 56);
        n
    }
}

/// The first `len` bytes of `tail` (at most [`MEMO_LEN`]) as two little-endian words, the
/// bytes past `len` zero.
#[inline]
fn words(tail: &[u8], len: usize) -> (u64, u64) {
    if let Some(bytes) = tail.first_chunk::<16>() {
        // Sixteen bytes to read at once: two loads, then the bytes past the piece masked off.
        let lo = u64::from_le_bytes(*bytes.first_chunk::<8>().unwrap_or(&[0; 8]));
        let hi = u64::from_le_bytes(*bytes.last_chunk::<8>().unwrap_or(&[0; 8]));
        return match len {
            ..8 => (lo & ((1 << (8 * len)) - 1), 0),
            8 => (lo, 0),
            _ => (lo, hi & ((1 << (8 * (len - 8))) - 1)),
        };
    }
    // Near the end of the text: gathered a byte at a time, in a register.
    let gather = |bytes: &[u8]| bytes.iter().rev().fold(0u64, |word, &b| word << 8 | u64::from(b));
    let piece = &tail[..len];
    let (lo, hi) = piece.split_at(len.min(8));
    (gather(lo), gather(hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_same_near_the_end_and_far_from_it() {
        let text = b"abcdefghijklmnopqrstuvwxyz";
        for len in 2..=MEMO_LEN {
            let far = words(text, len);
            let near = words(&text[..len], len);
            assert_eq!(far, near, "{len}");
        }
        assert_eq!(words(b"ab", 2), (0x6261, 0));
    }

    #[test]
    fn only_the_same_piece_is_answered() {
        let mut memo = Memo::new();
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
    }
}
