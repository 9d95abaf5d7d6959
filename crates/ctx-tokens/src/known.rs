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
//! of fixed-size entries, searched by halving. The table names the counter that took its
//! counts (a hash of the ranks and of the counter's sources, made by the build script), so a
//! table of another build of the counter is no table; it carries a checksum of its entries
//! (SHA-256, its first 8 bytes), checked at the first lookup, so a table cut short or changed
//! by accident is no table either, never a source of wrong counts, and never a panic. A table
//! rewritten on purpose with its checksum made again is trusted as what it is: the cache of
//! the user whose folder it is in.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// Texts shorter than this are counted, never looked up.
pub const MIN_BYTES: usize = 1024;

/// The most counts kept: about 1.3 MB stored. Past it, the counts used or taken by the run
/// that stores them are kept first.
pub const MAX_ENTRIES: usize = 65_536;

/// The most bytes a stored table can hold ([`MAX_ENTRIES`] entries): a caller may refuse to
/// read more.
pub const MAX_STORED_BYTES: usize = HEADER + MAX_ENTRIES * ENTRY;

/// The stored form's first bytes: its name and version.
const MAGIC: &[u8; 8] = b"CTXTOKN\x02";

/// The counter that took the counts: the build script's hash of the ranks and of the
/// counter's sources.
const COUNTER: u64 = match u64::from_str_radix(env!("CTX_TOKENS_COUNTER"), 16) {
    Ok(counter) => counter,
    Err(_) => panic!("the build script names the counter in hexadecimal"),
};

/// The header: the magic, the counter, the number of entries, the checksum of the entries.
const HEADER: usize = 8 + 8 + 4 + 8;

/// An entry: a key, then a count (u32, little-endian).
const ENTRY: usize = KEY + 4;
const KEY: usize = 16;

type Key = [u8; KEY];

/// Token counts remembered by content; safe to share between threads.
pub struct KnownCounts {
    /// The stored table as handed over, checked at its first use.
    stored: Option<Box<dyn AsRef<[u8]> + Send + Sync>>,
    /// The number of entries of `stored` once checked (0 for bytes that are no table).
    entries: OnceLock<usize>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Counts taken by this run that the stored table does not hold.
    added: HashMap<Key, u32>,
    /// How many of them were stored already ([`KnownCounts::mark_stored`]).
    stored_added: usize,
    /// Which of the stored entries this run used, a bit each.
    used: Vec<u64>,
    hits: usize,
}

impl std::fmt::Debug for KnownCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownCounts")
            .field("stored", &self.entries.get())
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
        KnownCounts { stored: None, entries: OnceLock::new(), state: Mutex::default() }
    }

    /// The counts of a table stored by [`KnownCounts::to_bytes`], read in place and checked
    /// at the first lookup. Bytes that do not hold together give no counts.
    pub fn from_stored(bytes: impl AsRef<[u8]> + Send + Sync + 'static) -> KnownCounts {
        KnownCounts { stored: Some(Box::new(bytes)), ..KnownCounts::new() }
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

    /// Whether this run took counts that were not stored yet: worth storing.
    pub fn changed(&self) -> bool {
        let state = self.lock();
        state.added.len() > state.stored_added
    }

    /// Says that the counts taken so far were stored ([`KnownCounts::changed`] is false until
    /// more are taken).
    pub fn mark_stored(&self) {
        let mut state = self.lock();
        state.stored_added = state.added.len();
    }

    /// How many counts this run found remembered.
    pub fn hits(&self) -> usize {
        self.lock().hits
    }

    /// The table to store: the stored counts and this run's, at most [`MAX_ENTRIES`] (the
    /// ones this run took or used first, then the others in the order of their keys).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.merged_bytes(&[])
    }

    /// [`KnownCounts::to_bytes`] merged with the table stored now (`current`, as another run
    /// may have stored it since this one started): this run's counts and those it used first,
    /// then the current table's, then the rest of the one this run started from. Bytes that
    /// are no table add nothing.
    pub fn merged_bytes(&self, current: &[u8]) -> Vec<u8> {
        let state = self.lock();
        let (stored, entries) = self.table();
        let used = |i: usize| state.used.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0);
        let mut kept: Vec<(Key, u32)> = state.added.iter().map(|(k, n)| (*k, *n)).collect();
        kept.extend((0..entries).filter(|&i| used(i)).filter_map(|i| entry(stored, i)));
        let others = table_entries(current).unwrap_or(0);
        kept.extend((0..others).filter_map(|i| entry(current, i)));
        kept.extend((0..entries).filter(|&i| !used(i)).filter_map(|i| entry(stored, i)));
        kept.truncate(MAX_ENTRIES);
        kept.sort_unstable_by_key(|e| e.0);
        // A key held twice (by this run and by the current table) counts the same bytes with
        // the same counter: kept once.
        kept.dedup_by(|a, b| a.0 == b.0);
        let mut body = Vec::with_capacity(kept.len() * ENTRY);
        for (key, n) in &kept {
            body.extend_from_slice(key);
            body.extend_from_slice(&n.to_le_bytes());
        }
        let mut out = Vec::with_capacity(HEADER + body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&COUNTER.to_le_bytes());
        out.extend_from_slice(&u32::try_from(kept.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(&checksum(&body));
        out.extend_from_slice(&body);
        out
    }

    fn get(&self, key: &Key) -> Option<usize> {
        if let Some((i, n)) = self.find(key) {
            let mut state = self.lock();
            state.hits += 1;
            let word = i / 64;
            if state.used.len() <= word {
                state.used.resize(word + 1, 0);
            }
            state.used[word] |= 1 << (i % 64);
            return Some(n as usize);
        }
        let mut state = self.lock();
        let n = *state.added.get(key)?;
        state.hits += 1;
        Some(n as usize)
    }

    /// The index and count of `key` in the stored table.
    fn find(&self, key: &Key) -> Option<(usize, u32)> {
        let (stored, entries) = self.table();
        let (mut lo, mut hi) = (0, entries);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (at, n) = entry(stored, mid)?;
            match at.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some((mid, n)),
            }
        }
        None
    }

    /// The stored table's bytes and its number of entries, checked once; nothing for bytes
    /// that are no table, or that are no longer the bytes checked.
    fn table(&self) -> (&[u8], usize) {
        let Some(stored) = &self.stored else { return (&[], 0) };
        let bytes = (**stored).as_ref();
        let entries = *self.entries.get_or_init(|| table_entries(bytes).unwrap_or(0));
        if entries == 0 || bytes.len() != HEADER + entries * ENTRY {
            return (&[], 0);
        }
        (bytes, entries)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The `i`-th entry of a table's bytes.
fn entry(table: &[u8], i: usize) -> Option<(Key, u32)> {
    let at = HEADER.checked_add(i.checked_mul(ENTRY)?)?;
    let bytes = table.get(at..at.checked_add(ENTRY)?)?;
    let key: Key = bytes[..KEY].try_into().ok()?;
    Some((key, u32::from_le_bytes(bytes[KEY..].try_into().ok()?)))
}

/// The key of a text: SHA-256 of the encoding's name and the text, its first 16 bytes.
fn key_of(text: &str) -> Key {
    let digest = Sha256::new().chain_update(b"o200k\0").chain_update(text.as_bytes()).finalize();
    let mut key = [0; KEY];
    key.copy_from_slice(&digest[..KEY]);
    key
}

/// The checksum of a table's entries: the first 8 bytes of their SHA-256.
fn checksum(body: &[u8]) -> [u8; 8] {
    let digest = Sha256::digest(body);
    let mut sum = [0; 8];
    sum.copy_from_slice(&digest[..8]);
    sum
}

/// The number of entries of a stored table, when it holds together: its magic and counter,
/// a length that is exactly its entries', at most [`MAX_ENTRIES`] of them, and the checksum
/// of its entries.
fn table_entries(bytes: &[u8]) -> Option<usize> {
    let header = bytes.get(..HEADER)?;
    if &header[..8] != MAGIC || header[8..16] != COUNTER.to_le_bytes() {
        return None;
    }
    let entries = u32::from_le_bytes(header[16..20].try_into().ok()?) as usize;
    if entries > MAX_ENTRIES || bytes.len() != HEADER + entries * ENTRY {
        return None;
    }
    (header[20..28] == checksum(&bytes[HEADER..])).then_some(entries)
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

    /// A valid table of `entries`, in their order.
    fn table_of(entries: &[(Key, u32)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (key, n) in entries {
            body.extend_from_slice(key);
            body.extend_from_slice(&n.to_le_bytes());
        }
        let mut out = Vec::from(*MAGIC);
        out.extend_from_slice(&COUNTER.to_le_bytes());
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&checksum(&body));
        out.extend_from_slice(&body);
        out
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
        let flipped = |at: usize| {
            let mut bad = good.clone();
            bad[at] ^= 1;
            bad
        };
        // The magic, the counter, the number of entries, the checksum, a key, a count.
        let mut bad = vec![good[..good.len() - 1].to_vec(), Vec::new(), good[..HEADER].to_vec()];
        bad.extend([0, 8, 16, 20, HEADER, HEADER + KEY].map(flipped));
        let mut unordered = good.clone();
        let (a, b) = unordered[HEADER..].split_at_mut(ENTRY);
        a.swap_with_slice(&mut b[..ENTRY]);
        bad.push(unordered);
        for bytes in bad {
            let known = KnownCounts::from_stored(bytes);
            assert_eq!(known.count(&text(1)), crate::count(&text(1)));
            assert_eq!(known.count(&text(2)), crate::count(&text(2)));
            assert_eq!(known.hits(), 0);
        }
    }

    #[test]
    fn the_table_keeps_what_the_run_used_first_within_its_cap() {
        // A stored table at the cap: the run's own counts take the place of unused ones.
        let full: Vec<(Key, u32)> =
            (0..MAX_ENTRIES as u128).map(|i| ((i << 8).to_be_bytes(), 1)).collect();
        let known = KnownCounts::from_stored(table_of(&full));
        let new = text(7);
        known.count(&new);
        let stored = known.to_bytes();
        assert_eq!(stored.len(), MAX_STORED_BYTES);
        assert_eq!(table_entries(&stored), Some(MAX_ENTRIES));
        let next = KnownCounts::from_stored(stored);
        next.count(&new);
        assert_eq!(next.hits(), 1, "the run's count was kept");
    }

    #[test]
    fn runs_at_once_store_each_others_counts() {
        let start = KnownCounts::new().to_bytes();
        let (a, b) = (KnownCounts::from_stored(start.clone()), KnownCounts::from_stored(start));
        a.count(&text(1));
        b.count(&text(2));
        // `a` stores first; `b` stores after it, merged with what it finds.
        let first = a.to_bytes();
        a.mark_stored();
        assert!(!a.changed(), "nothing new since it was stored");
        let second = b.merged_bytes(&first);
        assert_eq!(table_entries(&second), Some(2));
        let next = KnownCounts::from_stored(second);
        next.count(&text(1));
        next.count(&text(2));
        assert_eq!(next.hits(), 2);
        a.count(&text(3));
        assert!(a.changed(), "a count taken after the store is new");
    }

    proptest! {
        /// Any bytes given as a stored table, with a header that holds or not: no panic, and
        /// every count is the count.
        #[test]
        fn any_stored_bytes_give_true_counts(
            bytes in prop::collection::vec(any::<u8>(), 0..400),
            header in any::<bool>(),
        ) {
            let stored = if header {
                let body = &bytes[..bytes.len() / ENTRY * ENTRY];
                let mut out = Vec::from(*MAGIC);
                out.extend_from_slice(&COUNTER.to_le_bytes());
                out.extend_from_slice(&((body.len() / ENTRY) as u32).to_le_bytes());
                out.extend_from_slice(&checksum(body));
                out.extend_from_slice(body);
                out
            } else {
                bytes.clone()
            };
            let known = KnownCounts::from_stored(stored);
            let t = text(bytes.len());
            prop_assert_eq!(known.count(&t), crate::count(&t));
            prop_assert!(table_entries(&known.to_bytes()).is_some());
        }
    }
}
