//! The maps of short strings and ids that indexing and ranking fill, with foldhash's fast
//! hasher and a fixed seed: the standard `SipHash` protects against chosen keys, which a local
//! index does not need, and cost a tenth of a warm query; a fixed seed keeps symbol ids, and
//! so the stored index, the same from run to run.

use std::collections::{HashMap, HashSet};

/// A map with foldhash's fast hasher, seeded the same in every run.
pub(crate) type FxHashMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// A set with foldhash's fast hasher, seeded the same in every run.
pub(crate) type FxHashSet<K> = HashSet<K, foldhash::fast::FixedState>;

/// The checksum of a stored index or segment, over `parts` one after the other: four independent lanes
/// of eight bytes, so the multiplies overlap instead of waiting on each other and a 20 MB
/// index is checked in about a millisecond; it catches torn and damaged files, not tampering.
pub(crate) fn payload_sum(parts: &[&[u8]]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |h: u64, word: u64| (h ^ word).wrapping_mul(K).rotate_left(29);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let seed = 0x243f_6a88_85a3_08d3 ^ total as u64;
    let mut lanes = [seed, seed.rotate_left(16), seed.rotate_left(32), seed.rotate_left(48)];
    let mut block = |block: &[u8]| {
        for (lane, part) in lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = mix(*lane, word(part));
        }
    };
    // Whole blocks of 32 bytes, a block that spans two parts put together first.
    let mut pending: Vec<u8> = Vec::with_capacity(32);
    for part in parts {
        let mut part: &[u8] = part;
        if !pending.is_empty() {
            let take = (32 - pending.len()).min(part.len());
            pending.extend_from_slice(&part[..take]);
            part = &part[take..];
            if pending.len() < 32 {
                continue;
            }
            block(&pending);
            pending.clear();
        }
        let mut blocks = part.chunks_exact(32);
        for b in &mut blocks {
            block(b);
        }
        pending.extend_from_slice(blocks.remainder());
    }
    let mut h = lanes.iter().fold(seed, |h, lane| mix(h, *lane));
    for &b in &pending {
        h = mix(h, u64::from(b));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_of_pieces_is_the_checksum_of_their_whole() {
        let whole: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        let sum = payload_sum(&[&whole]);
        for a in [0, 1, 7, 31, 32, 33, 100, 299, 300] {
            for b in [a, a + 1, a + 40, 300].into_iter().filter(|b| *b <= 300 && *b >= a) {
                assert_eq!(payload_sum(&[&whole[..a], &whole[a..b], &whole[b..]]), sum, "{a} {b}");
            }
        }
        let mut damaged = whole.clone();
        damaged[150] ^= 1;
        assert_ne!(payload_sum(&[&damaged]), sum);
    }
}
