//! The stored form of an index: a header (magic, version, checksum), the tables, then the
//! blob; opened mapped, checked on another thread while it is asked, and written back whole
//! under the store's lock.

use std::time::Instant;

use ctx_fs::{Sandbox, Store};

use super::blob::{Blob, Buf};
use super::{Data, FileRec, Index, IndexSettings, UpdateStats};
use crate::error::{Error, Result};
use crate::symbols::SymbolSource;

/// The format version; a file of another version is rebuilt.
const VERSION: u32 = 12;
const MAGIC: &[u8; 8] = b"CTXSUGG\0";
/// Magic, version and checksum.
const HEADER: usize = 20;

impl Index {
    /// Loads the stored index of the sandbox's workspace from `store`,
    /// brings it up to date (rebuilding it when it is missing, of another
    /// version or corrupt) and stores it again if anything changed.
    ///
    /// Two processes may do this at once: a lock file serialises them and
    /// the index is replaced atomically.
    pub fn open(sandbox: &Sandbox, store: &Store) -> Result<(Index, UpdateStats)> {
        Index::open_with(sandbox, store, SymbolSource::default(), |_| ())
            .map(|(index, stats, ())| (index, stats))
    }

    /// [`Index::open`] with other settings (a [`SymbolSource`], or [`IndexSettings`]; a stored
    /// index built with other settings is rebuilt), and `f` on the up-to-date index.
    ///
    /// `f` first runs on the stored index while the workspace is walked for changes; when
    /// the walk finds none (the common case of a query), that answer is returned, so a query
    /// on a warm index costs the longer of the walk and the query, not their sum. When
    /// anything changed, or the stored index turns out damaged (its checksum is checked on
    /// the walk's thread), `f` runs again on the updated or rebuilt index: `f` may run twice,
    /// and only the answer of an index known to be current and whole is returned. The first
    /// run holds the store's lock on this index, so `f` must not open or save an index of
    /// the same workspace in `store`.
    pub fn open_with<T: Send>(
        sandbox: &Sandbox,
        store: &Store,
        settings: impl Into<IndexSettings>,
        f: impl Fn(&Index) -> T + Sync,
    ) -> Result<(Index, UpdateStats, T)> {
        let settings = settings.into();
        let started = Instant::now();
        let root = sandbox.root_path(sandbox.workspace().root()).as_str().to_owned();
        let name = store_name(&root);
        let lock = store.lock(&name).map_err(Error::store)?;
        let mapped = store.map(&name).map_err(Error::store)?.map(std::sync::Arc::new);
        let stored_len = mapped.as_ref().map_or(0, |m| m.len() as u64);
        let stored_version = mapped.as_deref().and_then(|m| Index::version_of(m));
        // A stored index is used for this root with these settings only.
        let fits = |index: &Index| index.data.root == root && index.settings() == settings;
        // The walk that finds changed files, then the checksum of the stored index, run while
        // the index is decoded and asked; the answer is dropped if the checksum fails.
        let (checked, stored) = std::thread::scope(|scope| {
            let checked = scope.spawn(|| {
                let walk = sandbox.walk(&sandbox.workspace());
                (walk, mapped.as_deref().map(|m| Index::intact(m)))
            });
            let decoded = mapped.clone().map(|m| Index::decode_buf_unchecked(Buf::Mapped(m)));
            let early = match &decoded {
                Some(Some(index)) if fits(index) && !index.is_empty() => Some(f(index)),
                _ => None,
            };
            (checked.join(), (decoded, early))
        });
        let (walk, intact) = match checked {
            Ok(checked) => checked,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let walk = walk.map_err(Error::fs)?;
        let (decoded, early) = stored;
        let (mut index, corrupt) = match (decoded, intact) {
            (Some(Some(index)), Some(true)) if fits(&index) => (index, false),
            (Some(Some(_)), Some(true)) | (None, _) => (Index::new(settings), false),
            // An index of another version of ctx is rebuilt, but it was not damaged.
            _ if stored_version != Some(VERSION) => {
                (Index::new(settings), stored_version.is_none())
            }
            _ => (Index::new(settings), true),
        };
        let early = early.filter(|_| !corrupt && !index.is_empty());
        let mut stats = index.refresh_from(sandbox, &walk)?;
        stats.rebuilt_corrupt = corrupt;
        let changed = stats.indexed > 0 || stats.removed > 0;
        if changed || corrupt || index.data.files.is_empty() {
            stats.bytes = index.write(store, &name)?;
        } else {
            stats.bytes = stored_len;
        }
        stats.elapsed = started.elapsed();
        // The store is up to date: other processes need not wait for a second answer.
        drop(lock);
        let answer = match early {
            Some(answer) if !changed => answer,
            _ => f(&index),
        };
        Ok((index, stats, answer))
    }

    /// Stores the index in `store`, replacing the stored copy atomically
    /// under the root's lock; returns its size in bytes.
    pub fn save(&self, store: &Store) -> Result<u64> {
        let name = store_name(&self.data.root);
        let _lock = store.lock(&name).map_err(Error::store)?;
        self.write(store, &name)
    }

    /// Decodes a stored index; `None` when the bytes are not a whole index
    /// of this version.
    pub fn decode(bytes: &[u8]) -> Option<Index> {
        Index::decode_owned(bytes.to_vec())
    }

    /// [`Index::decode`] of a buffer the index keeps: its files' parts are used where they
    /// lie in it.
    pub fn decode_owned(bytes: Vec<u8>) -> Option<Index> {
        Index::decode_buf(Buf::Owned(bytes))
    }

    fn decode_buf(buf: Buf) -> Option<Index> {
        if !Index::intact(&buf) {
            return None;
        }
        Index::decode_buf_unchecked(buf)
    }

    /// [`Index::decode_buf`] without the checksum (see [`Index::decode_unchecked`]).
    fn decode_buf_unchecked(buf: Buf) -> Option<Index> {
        let (data, start) = Index::decode_unchecked(&buf)?;
        let parts_end = start.checked_add(usize::try_from(data.blob_len).ok()?)?;
        if parts_end > buf.len() {
            return None;
        }
        let size = data.blob_len;
        let fits =
            |f: &FileRec| f.parts.start.checked_add(f.parts.len()).is_some_and(|e| e <= size);
        if !data.files.iter().all(fits) {
            return None;
        }
        let graph = parts_end..buf.len();
        let blob = Blob { buf, stored: start..parts_end, stored_graph: graph, ..Blob::default() };
        Some(Index { data, blob })
    }

    /// The format version of a stored index; `None` when the bytes are not one.
    fn version_of(bytes: &[u8]) -> Option<u32> {
        header(bytes).map(|(version, _, _)| version)
    }

    /// Whether `bytes` are a stored index of this version whose checksum holds.
    fn intact(bytes: &[u8]) -> bool {
        header(bytes).is_some_and(|(version, sum, payload)| {
            version == VERSION && sum == payload_sum(&[payload])
        })
    }

    /// The tables of a stored index, and where its blob starts in `bytes`, without checking
    /// the checksum (see [`Index::intact`]): a damaged index decodes to tables that
    /// hold together (every file's parts inside the blob) and answers wrongly but never
    /// panics, so it may be asked while its checksum is checked elsewhere.
    fn decode_unchecked(bytes: &[u8]) -> Option<(Data, usize)> {
        let (version, _, payload) = header(bytes)?;
        if version != VERSION {
            return None;
        }
        // The tables, then the blob: the rest of the bytes.
        let (data, blob): (Data, &[u8]) = postcard::take_from_bytes(payload).ok()?;
        // The blob is a slice of `bytes`: its offset is the distance between the two.
        let start = (blob.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
        Some((data, start))
    }

    /// Encodes the index for storage.
    pub fn encode(&self) -> Vec<u8> {
        let (header, tables) = self.encode_tables();
        let [stored, extra, graph] = self.blob.pieces();
        [&header[..], &tables, stored, extra, graph].concat()
    }

    /// The header and the tables of the stored form; the blob's pieces follow them as they
    /// lie in memory (they are not copied into one buffer first).
    fn encode_tables(&self) -> ([u8; HEADER], Vec<u8>) {
        let tables = postcard::to_allocvec(&self.data).unwrap_or_default();
        let [stored, extra, graph] = self.blob.pieces();
        let mut header = [0; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        let sum = payload_sum(&[&tables, stored, extra, graph]);
        header[12..].copy_from_slice(&sum.to_le_bytes());
        (header, tables)
    }

    /// Writes the index to `store` under `name`; returns its size in bytes.
    fn write(&self, store: &Store, name: &str) -> Result<u64> {
        let (header, tables) = self.encode_tables();
        let [stored, extra, graph] = self.blob.pieces();
        let parts = [&header[..], &tables, stored, extra, graph];
        store.write_parts(name, &parts).map_err(Error::store)?;
        Ok(parts.iter().map(|p| p.len() as u64).sum())
    }
}

/// The version, checksum and payload of a stored index; `None` when the bytes do not start
/// with the magic number and a whole header.
fn header(bytes: &[u8]) -> Option<(u32, u64, &[u8])> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (version, rest) = rest.split_at_checked(4)?;
    let (sum, payload) = rest.split_at_checked(8)?;
    Some((
        u32::from_le_bytes(version.try_into().ok()?),
        u64::from_le_bytes(sum.try_into().ok()?),
        payload,
    ))
}

/// The store entry of a root: a stable hash of its path.
fn store_name(root: &str) -> String {
    format!("suggest-{:016x}.idx", checksum(root.as_bytes()))
}

/// The checksum of a stored index, over `parts` one after the other: four independent lanes
/// of eight bytes, so the multiplies overlap instead of waiting on each other and a 20 MB
/// index is checked in about a millisecond; it catches torn and damaged files, not tampering.
fn payload_sum(parts: &[&[u8]]) -> u64 {
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

fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
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
