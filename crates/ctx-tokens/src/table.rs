//! The layout of the o200k rank table, shared by the build script that writes it and the
//! tokenizer that reads it.
//!
//! The binary holds three sections: `TOKENS` one-byte lengths; `TOKENS` one-byte probe
//! distances; every token's bytes in rank order (1.8 MB in all). The first count lays out the
//! rest once (o200k.rs): the `u32` offset of every token, and an open-addressing hash table
//! with linear probing whose `SLOTS` entries are `EMPTY` or a rank in the low `RANK_BITS`
//! bits with the next bits of the hash above it, so that most probes are settled without
//! looking at the token's bytes. Token `r` lies its probe distance past its home slot, as
//! the build script found inserting the tokens in rank order, so laying the table out needs
//! no probing. The two tables would be 1.9 MB more in the binary; laying them out takes a
//! few milliseconds.

/// The number of tokens of o200k_base (ranks 0 to 199 997, without gaps).
pub(crate) const TOKENS: usize = 199_998;

/// The longest token, in bytes; a longer piece is never a single token.
pub(crate) const MAX_TOKEN_LEN: usize = 128;

/// Slots of the hash table: a power of two, about 0.76 full.
pub(crate) const SLOTS: usize = 1 << 18;

/// Bits of a slot holding the rank.
pub(crate) const RANK_BITS: u32 = 18;

/// A free slot.
pub(crate) const EMPTY: u32 = u32::MAX;

/// A 64-bit hash of a byte string: eight bytes at a time, each step a multiply and rotate,
/// the length mixed in at the end.
/// It only has to spread o200k's tokens well; the build script checks the longest probe.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]);
        h = (h ^ word).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // The little-endian word of the last bytes, zero-padded, built in a register: a copy
        // into a padded array went through memory and stalled the load that read it back.
        let tail = rest.iter().rev().fold(0u64, |word, &b| word << 8 | u64::from(b));
        h = (h ^ tail).wrapping_mul(K).rotate_left(29);
    }
    h ^= bytes.len() as u64;
    h = (h ^ (h >> 32)).wrapping_mul(K);
    h ^ (h >> 29)
}

/// The first slot to probe for a hash.
pub(crate) fn home(hash: u64) -> usize {
    (hash >> (64 - SLOTS.trailing_zeros())) as usize
}

/// The bits of the hash kept in a slot beside the rank.
pub(crate) fn tag(hash: u64) -> u32 {
    (hash as u32) << RANK_BITS
}
