//! The layout of the o200k rank table, shared by the build script that writes it and the
//! tokenizer that reads it.
//!
//! The table is three little-endian sections, each used in place (nothing is decoded at
//! start-up):
//! - `starts`: `TOKENS + 1` `u32` offsets into `bytes`; token `r` (whose rank is `r`) is
//!   `bytes[starts[r]..starts[r + 1]]`;
//! - `slots`: `SLOTS` `u32` entries of an open-addressing hash table with linear probing:
//!   `EMPTY`, or a rank in the low `RANK_BITS` bits and the next bits of the hash above it,
//!   so that most probes are settled without looking at the token's bytes;
//! - `bytes`: every token's bytes, in rank order.

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
        let mut tail = [0u8; 8];
        tail[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K).rotate_left(29);
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
