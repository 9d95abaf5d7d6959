//! The maps of short strings and ids that indexing and ranking fill, with foldhash's fast
//! hasher (the standard `SipHash` cost a tenth of a warm query). A map whose order is used
//! has a fixed seed, so what is made from it is the same from run to run; a map keyed by the
//! names read from files, whose order is never used, has a seed of its own (foldhash's
//! random state), so that a tree whose names were made to fall into one bucket under a known
//! seed cannot make indexing it slow.

use std::collections::{HashMap, HashSet};

/// A map with foldhash's fast hasher, seeded the same in every run.
pub(crate) type FxHashMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// A set with foldhash's fast hasher, seeded the same in every run.
pub(crate) type FxHashSet<K> = HashSet<K, foldhash::fast::FixedState>;

/// A map with foldhash's fast hasher and a random seed of its own, for keys read from files:
/// never iterated where the order matters.
pub(crate) type SeededMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A set with foldhash's fast hasher and a random seed of its own (see [`SeededMap`]).
pub(crate) type SeededSet<K> = HashSet<K, foldhash::fast::RandomState>;

/// The checksum of a stored index or segment, over `parts` one after the other (see [`Sum`]).
pub(crate) fn payload_sum(parts: &[&[u8]]) -> u64 {
    let mut sum = Sum::default();
    for part in parts {
        sum.update(part);
    }
    sum.finish()
}

/// The checksum of a stored index or segment, fed piece by piece as it is written: four
/// independent lanes of eight bytes, so the multiplies overlap instead of waiting on each
/// other and a 20 MB index is checked in about a millisecond; the length is mixed in at the
/// end, so an index streamed to its file is summed as it goes. It catches torn and damaged
/// files, not tampering.
#[derive(Clone, Debug)]
pub(crate) struct Sum {
    lanes: [u64; 4],
    /// The bytes of a block of 32 not yet whole.
    pending: [u8; 32],
    held: usize,
    total: u64,
}

const SEED: u64 = 0x243f_6a88_85a3_08d3;
const K: u64 = 0x9e37_79b9_7f4a_7c15;

fn mix(h: u64, word: u64) -> u64 {
    (h ^ word).wrapping_mul(K).rotate_left(29)
}

impl Default for Sum {
    fn default() -> Sum {
        let lanes = [SEED, SEED.rotate_left(16), SEED.rotate_left(32), SEED.rotate_left(48)];
        Sum { lanes, pending: [0; 32], held: 0, total: 0 }
    }
}

impl Sum {
    /// Adds `part` after the bytes summed so far.
    pub(crate) fn update(&mut self, mut part: &[u8]) {
        self.total += part.len() as u64;
        if self.held > 0 {
            let take = (32 - self.held).min(part.len());
            self.pending[self.held..self.held + take].copy_from_slice(&part[..take]);
            self.held += take;
            part = &part[take..];
            if self.held < 32 {
                return;
            }
            let block = self.pending;
            self.block(&block);
            self.held = 0;
        }
        let mut blocks = part.chunks_exact(32);
        for b in &mut blocks {
            self.block(b);
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    fn block(&mut self, block: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
            *lane = mix(*lane, u64::from_le_bytes(word.try_into().unwrap_or_default()));
        }
    }

    /// The checksum of every byte summed.
    pub(crate) fn finish(&self) -> u64 {
        let mut h = self.lanes.iter().fold(SEED ^ self.total, |h, lane| mix(h, *lane));
        for &b in &self.pending[..self.held] {
            h = mix(h, u64::from(b));
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_of_names_read_from_files_each_have_a_seed_of_their_own() {
        use std::hash::BuildHasher;
        // Names made to share a bucket under one known seed: under a seed of each map's own,
        // the hashes of one map are not another's, while the fixed maps agree from run to run.
        let names: Vec<String> = (0..64).map(|i| format!("name_{i}")).collect();
        let hashes = |state: &foldhash::fast::RandomState| -> Vec<u64> {
            names.iter().map(|n| state.hash_one(n)).collect()
        };
        let (a, b) = (SeededMap::<String, u32>::default(), SeededSet::<String>::default());
        assert_ne!(hashes(a.hasher()), hashes(b.hasher()), "two maps, two seeds");
        let fixed = |m: &FxHashMap<String, u32>| -> Vec<u64> {
            names.iter().map(|n| m.hasher().hash_one(n)).collect()
        };
        let (c, d) = (FxHashMap::default(), FxHashMap::default());
        assert_eq!(fixed(&c), fixed(&d), "fixed maps hash alike");
    }

    #[test]
    fn the_checksum_of_pieces_is_the_checksum_of_their_whole() {
        let whole: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        let sum = payload_sum(&[&whole]);
        for a in [0, 1, 7, 31, 32, 33, 100, 299, 300] {
            for b in [a, a + 1, a + 40, 300].into_iter().filter(|b| *b <= 300 && *b >= a) {
                assert_eq!(payload_sum(&[&whole[..a], &whole[a..b], &whole[b..]]), sum, "{a} {b}");
            }
        }
        let mut streamed = Sum::default();
        for piece in whole.chunks(13) {
            streamed.update(piece);
        }
        assert_eq!(streamed.finish(), sum);
        assert_ne!(payload_sum(&[&whole[..299]]), sum, "the length counts");
        let mut damaged = whole.clone();
        damaged[150] ^= 1;
        assert_ne!(payload_sum(&[&damaged]), sum);
    }
}
