//! Counts remembered by content, across runs ([`KnownCounts`]): a text counted once is not
//! counted again while its bytes are the same, whatever file they came from.
//!
//! A text is known by the SHA-256 of its bytes (the first 16 bytes of the digest, after the
//! name of the encoding), so a count can only stand for the very bytes it was taken of: two
//! texts that share a key would need a collision of SHA-256 truncated to 128 bits, which no
//! file of a repository, hostile or not, can be made to give. Only texts of at least
//! [`MIN_BYTES`] are remembered: a shorter one costs less to count than to look up.
//!
//! The remembered counts are kept as bytes ([`KnownCounts::to_bytes`]), which the caller
//! stores where it keeps its caches (ctx's own cache folder; this crate does no I/O) and
//! hands back on the next run ([`KnownCounts::from_stored`]), read in place: a sorted table
//! of fixed-size entries, searched by halving, so that a run that looks up a few texts pays
//! for no parsing of the rest. Stored bytes that do not hold together (another version,
//! another counter, a cut or altered file) stand for no counts at all, never for wrong ones
//! read as right, and never for a panic.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// Texts shorter than this are counted, never looked up.
pub const MIN_BYTES: usize = 1024;

/// The most counts kept: about 1.3 MB stored. Past it, the counts used or taken by the run
/// that stores them are kept first.
pub const MAX_ENTRIES: usize = 65_536;

/// The stored form's first bytes: its name and version.
const MAGIC: &[u8; 8] = b"CTXTOKN\x01";

/// Changes whenever the counts of a text could change (the encoding's tables or the rules of
/// the counter), so that counts taken by a counter before are never read by one after.
const COUNTER_REVISION: u32 = 1;

/// The header: the magic, the counter's revision, the number of entries.
const HEADER: usize = 8 + 4 + 4;

/// An entry: a key, then a count (u32, little-endian).
const ENTRY: usize = KEY + 4;
const KEY: usize = 16;

type Key = [u8; KEY];

/// Token counts remembered by content; safe to share between threads.
pub struct KnownCounts {
    /// The stored table (checked: its header, its length, its keys in strictly increasing
    /// order), or nothing.
    stored: Option<Box<dyn AsRef<[u8]> + Send + Sync>>,
    /// The number of entries of `stored`.
    entries: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Counts taken by this run that the stored table does not hold.
    added: HashMap<Key, u32>,
    /// Which of the stored entries this run used, a bit each.
    used: Vec<u64>,
    hits: usize,
}

impl std::fmt::Debug for KnownCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownCounts")
            .field("stored", &self.entries)
            .field("added", &self.lock().added.len())
            .finish()
    }
}

impl Default for KnownCounts {
    fn default() -> KnownCounts {
        KnownCounts::new()
    }
}

impl KnownCounts {
    /// No count known yet.
    pub fn new() -> KnownCounts {
        KnownCounts { stored: None, entries: 0, state: Mutex::default() }
    }

    /// The counts of a table stored by [`KnownCounts::to_bytes`], read in place. Bytes that do
    /// not hold together give no counts.
    pub fn from_stored(bytes: impl AsRef<[u8]> + Send + Sync + 'static) -> KnownCounts {
        match table_entries(bytes.as_ref()) {
            Some(entries) => KnownCounts {
                stored: Some(Box::new(bytes)),
                entries,
                state: Mutex::new(State {
                    used: vec![0; entries.div_ceil(64)],
                    ..State::default()
                }),
            },
            None => KnownCounts::new(),
        }
    }

    /// The o200k count of `text`: the one remembered for its bytes, or counted (and then
    /// remembered, for a text of at least [`MIN_BYTES`]).
    pub fn count(&self, text: &str) -> usize {
        if text.len() < MIN_BYTES {
            return crate::count(text);
        }
        let key = key_of(text);
        if let Some(n) = self.get(&key) {
            return n;
        }
        let n = crate::count(text);
        // A count too large for the table is not kept (a text of more than 4 G tokens), nor
        // one past the table's cap: a long-lived caller's memory stays bounded.
        if let Ok(stored) = u32::try_from(n) {
            let mut state = self.lock();
            if state.added.len() < MAX_ENTRIES {
                state.added.insert(key, stored);
            }
        }
        n
    }

    /// [`KnownCounts::count`] of many texts, in parallel as [`crate::count_many`] counts.
    pub fn count_many<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<usize> {
        crate::count_many_by(texts, |text| self.count(text))
    }

    /// Whether this run took counts the stored table does not hold: worth storing again.
    pub fn changed(&self) -> bool {
        !self.lock().added.is_empty()
    }

    /// How many counts this run found remembered.
    pub fn hits(&self) -> usize {
        self.lock().hits
    }

    /// The table to store: the stored counts and this run's, at most [`MAX_ENTRIES`] (the
    /// ones this run took or used first, then the others in the order of their keys).
    pub fn to_bytes(&self) -> Vec<u8> {
        let state = self.lock();
        let stored = self.stored_bytes();
        let entry = |i: usize| -> (Key, u32) {
            let at = HEADER + i * ENTRY;
            let key: Key = stored[at..at + KEY].try_into().unwrap_or_default();
            let n = u32::from_le_bytes(stored[at + KEY..at + ENTRY].try_into().unwrap_or_default());
            (key, n)
        };
        let used = |i: usize| state.used.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0);
        let mut kept: Vec<(Key, u32)> = state.added.iter().map(|(k, n)| (*k, *n)).collect();
        kept.extend((0..self.entries).filter(|&i| used(i)).map(entry));
        kept.extend((0..self.entries).filter(|&i| !used(i)).map(entry));
        kept.truncate(MAX_ENTRIES);
        kept.sort_unstable_by_key(|e| e.0);
        // A key both stored and added (two runs at once) is kept once.
        kept.dedup_by(|a, b| a.0 == b.0);
        let mut out = Vec::with_capacity(HEADER + kept.len() * ENTRY);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&COUNTER_REVISION.to_le_bytes());
        out.extend_from_slice(&u32::try_from(kept.len()).unwrap_or(u32::MAX).to_le_bytes());
        for (key, n) in kept {
            out.extend_from_slice(&key);
            out.extend_from_slice(&n.to_le_bytes());
        }
        out
    }

    fn get(&self, key: &Key) -> Option<usize> {
        if let Some(i) = self.find(key) {
            let at = HEADER + i * ENTRY;
            let stored = self.stored_bytes();
            let n = u32::from_le_bytes(stored[at + KEY..at + ENTRY].try_into().ok()?);
            let mut state = self.lock();
            state.hits += 1;
            if let Some(word) = state.used.get_mut(i / 64) {
                *word |= 1 << (i % 64);
            }
            return Some(n as usize);
        }
        let mut state = self.lock();
        let n = *state.added.get(key)?;
        state.hits += 1;
        Some(n as usize)
    }

    /// The index of `key` in the stored table.
    fn find(&self, key: &Key) -> Option<usize> {
        let stored = self.stored_bytes();
        let (mut lo, mut hi) = (0, self.entries);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let at = HEADER + mid * ENTRY;
            match stored[at..at + KEY].cmp(key.as_slice()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    fn stored_bytes(&self) -> &[u8] {
        self.stored.as_ref().map_or(&[], |s| (**s).as_ref())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The key of a text: SHA-256 of the encoding's name and the text, its first 16 bytes.
fn key_of(text: &str) -> Key {
    let digest = Sha256::new().chain_update(b"o200k\0").chain_update(text.as_bytes()).finalize();
    let mut key = [0; KEY];
    key.copy_from_slice(&digest[..KEY]);
    key
}

/// The number of entries of a stored table, when it holds together: its magic and revision,
/// a length that is exactly its entries', at most [`MAX_ENTRIES`] of them, keys in strictly
/// increasing order.
fn table_entries(bytes: &[u8]) -> Option<usize> {
    let header = bytes.get(..HEADER)?;
    if &header[..8] != MAGIC || header[8..12] != COUNTER_REVISION.to_le_bytes() {
        return None;
    }
    let entries = u32::from_le_bytes(header[12..16].try_into().ok()?) as usize;
    if entries > MAX_ENTRIES || bytes.len() != HEADER + entries * ENTRY {
        return None;
    }
    let keys = bytes[HEADER..].chunks_exact(ENTRY).map(|e| &e[..KEY]);
    keys.clone().zip(keys.skip(1)).all(|(a, b)| a < b).then_some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn text(seed: usize) -> String {
        (0..200).map(|i| format!("let value_{seed}_{i} = compute({i});\n")).collect()
    }

    #[test]
    fn a_remembered_count_is_the_count_and_is_found_on_the_next_run() {
        let first = KnownCounts::new();
        let texts: Vec<String> = (0..20).map(text).collect();
        let counts = first.count_many(&texts);
        assert_eq!(counts, texts.iter().map(|t| crate::count(t)).collect::<Vec<_>>());
        assert_eq!(first.hits(), 0);
        assert!(first.changed());
        let next = KnownCounts::from_stored(first.to_bytes());
        assert_eq!(next.count_many(&texts), counts);
        assert_eq!(next.hits(), 20, "every text found remembered");
        assert!(!next.changed(), "nothing new to store");
        // A text not met before is counted, and the table grows by it.
        let new = text(99);
        assert_eq!(next.count(&new), crate::count(&new));
        assert!(next.changed());
        assert_eq!(table_entries(&next.to_bytes()), Some(21));
    }

    #[test]
    fn short_texts_are_counted_not_remembered() {
        let known = KnownCounts::new();
        assert_eq!(known.count("fn main() {}"), crate::count("fn main() {}"));
        assert!(!known.changed());
    }

    #[test]
    fn a_count_stands_for_its_bytes_only() {
        let known = KnownCounts::new();
        let a = text(1);
        let mut b = a.clone();
        b.replace_range(10..11, "Z");
        assert_eq!(known.count(&a), crate::count(&a));
        assert_eq!(known.count(&b), crate::count(&b), "one byte apart: counted afresh");
        assert_eq!(known.hits(), 0);
    }

    #[test]
    fn bytes_that_do_not_hold_together_give_no_counts() {
        let good = {
            let k = KnownCounts::new();
            k.count(&text(1));
            k.count(&text(2));
            k.to_bytes()
        };
        assert_eq!(table_entries(&good), Some(2));
        let mut unordered = good.clone();
        let (a, b) = unordered[HEADER..].split_at_mut(ENTRY);
        a.swap_with_slice(&mut b[..ENTRY]);
        let mut other_revision = good.clone();
        other_revision[8] ^= 1;
        let mut too_many = good.clone();
        too_many[12..16].copy_from_slice(&3u32.to_le_bytes());
        for bad in [&good[..good.len() - 1], &unordered, &other_revision, &too_many, &[][..]] {
            let known = KnownCounts::from_stored(bad.to_vec());
            assert_eq!(known.count(&text(1)), crate::count(&text(1)));
            assert_eq!(known.hits(), 0);
        }
    }

    #[test]
    fn the_table_keeps_what_the_run_used_first_within_its_cap() {
        // A stored table at the cap: the run's own counts take the place of unused ones.
        let mut bytes = Vec::from(*MAGIC);
        bytes.extend_from_slice(&COUNTER_REVISION.to_le_bytes());
        bytes.extend_from_slice(&(MAX_ENTRIES as u32).to_le_bytes());
        for i in 0..MAX_ENTRIES as u128 {
            bytes.extend_from_slice(&(i << 8).to_be_bytes());
            bytes.extend_from_slice(&1u32.to_le_bytes());
        }
        let known = KnownCounts::from_stored(bytes);
        let new = text(7);
        known.count(&new);
        let stored = known.to_bytes();
        assert_eq!(table_entries(&stored), Some(MAX_ENTRIES));
        let next = KnownCounts::from_stored(stored);
        next.count(&new);
        assert_eq!(next.hits(), 1, "the run's count was kept");
    }

    proptest! {
        /// Any bytes given as a stored table: no panic, and every count is the count.
        #[test]
        fn any_stored_bytes_give_true_counts(
            bytes in prop::collection::vec(any::<u8>(), 0..400),
            header in any::<bool>(),
        ) {
            let mut stored = Vec::new();
            if header {
                stored.extend_from_slice(MAGIC);
                stored.extend_from_slice(&COUNTER_REVISION.to_le_bytes());
                stored.extend_from_slice(&((bytes.len() / ENTRY) as u32).to_le_bytes());
            }
            stored.extend_from_slice(&bytes[..bytes.len() / ENTRY * ENTRY]);
            let known = KnownCounts::from_stored(stored);
            let t = text(bytes.len());
            prop_assert_eq!(known.count(&t), crate::count(&t));
        }
    }
}
