//! The stored form of an index: a header (magic, version, checksum, length), the tables,
//! then the blob, then the log of segments later updates appended ([`super::segment`]);
//! opened mapped, the base checked on another thread while it is asked, the log applied; an
//! update appends a segment or writes the whole index back, under the store's lock.

use std::time::Instant;

use ctx_fs::{Sandbox, Store};

use super::blob::{Blob, Buf};
use super::segment::{Plan, Stored};
use super::{Data, FileRec, Index, IndexSettings, UpdateStats};
use crate::error::{Error, Result};
use crate::hash::payload_sum;
use crate::symbols::SymbolSource;

/// The format version; a file of another version is rebuilt.
const VERSION: u32 = 13;
const MAGIC: &[u8; 8] = b"CTXSUGG\0";
/// Magic, version, checksum and the length of the base's payload (the log follows it).
const HEADER: usize = 28;

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
        // the index is decoded, its log applied, and asked; the answer is dropped if the
        // checksum fails.
        let (checked, stored) = std::thread::scope(|scope| {
            let checked = scope.spawn(|| {
                let walk = sandbox.walk_parallel(&sandbox.workspace());
                (walk, mapped.as_deref().map(|m| Index::intact(m)))
            });
            let decoded = mapped.clone().and_then(Index::load);
            let early = match &decoded {
                Some((index, _)) if fits(index) && !index.is_empty() => Some(f(index)),
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
        let (mut index, corrupt, loaded) = match (decoded, intact) {
            (Some((index, loaded)), Some(true)) if fits(&index) => (index, false, Some(loaded)),
            (Some(_), Some(true)) => (Index::new(settings), false, None),
            _ if mapped.is_none() => (Index::new(settings), false, None),
            // An index of another version of ctx is rebuilt, but it was not damaged.
            _ if stored_version != Some(VERSION) => {
                (Index::new(settings), stored_version.is_none(), None)
            }
            _ => (Index::new(settings), true, None),
        };
        let early = early.filter(|_| !corrupt && !index.is_empty());
        let mut stats = index.refresh_from(sandbox, &walk)?;
        stats.rebuilt_corrupt = corrupt;
        let changed = stats.indexed > 0 || stats.removed > 0;
        let unmerged = loaded.is_some_and(|l| !l.log_whole);
        // An empty workspace is stored once, so that the next query finds its index.
        if changed || corrupt || unmerged || (loaded.is_none() && index.data.files.is_empty()) {
            let now = index.store_update(store, &lock, &name, loaded)?;
            stats.bytes = now.base_len + now.log_len;
            index.stored = Some(now);
        } else {
            stats.bytes = loaded.map_or(stored_len, |l| l.base_len + l.log_len);
            index.stored = loaded;
        }
        // What the update changed is stored: the next store starts from here.
        index.change = None;
        stats.elapsed = started.elapsed();
        // The store is up to date: other processes need not wait for a second answer.
        drop(lock);
        let answer = match early {
            Some(answer) if !changed => answer,
            _ => f(&index),
        };
        Ok((index, stats, answer))
    }

    /// The stored index in `mapped` (its checksum unchecked: see [`Index::decode_unchecked`])
    /// with the segments of its log applied, and what the log held; `None` when it does not
    /// decode.
    fn load(mapped: std::sync::Arc<ctx_fs::Mapped>) -> Option<(Index, Stored)> {
        let (_, base_sum, payload, log) = header(&mapped)?;
        let base_len = (HEADER + payload.len()) as u64;
        let log_len = log.len() as u64;
        let mut index = Index::decode_buf_unchecked(Buf::Mapped(mapped.clone()))?;
        let (segments, log_whole) = index.apply_log(&mapped[HEADER + payload.len()..], base_sum);
        Some((index, Stored { base_sum, base_len, segments, log_len, log_whole }))
    }

    /// Stores an update: a segment appended to the log, or the whole index written and the
    /// log removed (see [`super::segment`] for when); returns what is stored now.
    fn store_update(
        &self,
        store: &Store,
        lock: &ctx_fs::StoreLock,
        name: &str,
        loaded: Option<Stored>,
    ) -> Result<Stored> {
        match self.plan(loaded) {
            Plan::Append(bytes) => {
                store.append_locked(lock, name, &bytes).map_err(Error::store)?;
                let loaded = loaded.unwrap_or_default();
                let log_len = loaded.log_len + bytes.len() as u64;
                Ok(Stored { segments: loaded.segments + 1, log_len, ..loaded })
            }
            Plan::Merge => self.write(store, name),
        }
    }

    /// Stores what changed since the index was last stored or loaded ([`Index::open_with`],
    /// or this): one segment appended when the stored file is still the one it left (no other
    /// process wrote it since) and the merge policy allows, else the whole index written, as
    /// [`Index::save`] does. Returns the bytes stored (the whole file's length).
    ///
    /// For a process that keeps its index and updates it often (the index service): an update
    /// of a few files then costs a few hundred bytes, not a write of the whole index.
    ///
    /// # Errors
    ///
    /// When the store cannot be read or written.
    pub fn store(&mut self, store: &Store) -> Result<u64> {
        Ok(self.store_with(store, true)?.unwrap_or_default())
    }

    /// [`Index::store`], but only when what changed can be appended: `None`, nothing written
    /// and what changed kept for the next store, when the merge policy (or a stored file
    /// written by another process) asks for the whole index. For a process that answers
    /// questions while it stores and would rather write the whole index when none waits.
    ///
    /// # Errors
    ///
    /// As [`Index::store`].
    pub fn store_appending(&mut self, store: &Store) -> Result<Option<u64>> {
        self.store_with(store, false)
    }

    fn store_with(&mut self, store: &Store, whole: bool) -> Result<Option<u64>> {
        let name = store_name(&self.data.root);
        let lock = store.lock(&name).map_err(Error::store)?;
        let on_disk = store.map(&name).map_err(Error::store)?.and_then(|m| {
            let (_, sum, payload, log) = header(&m)?;
            Some((sum, (HEADER + payload.len()) as u64, log.len() as u64))
        });
        let stored = self.stored.filter(|s| on_disk == Some((s.base_sum, s.base_len, s.log_len)));
        let nothing =
            self.change.as_ref().is_none_or(|c| c.removed.is_empty() && c.fresh.is_empty());
        // Nothing to store (what changed is kept for the next time, if anything was read and
        // dropped again since).
        if let Some(stored) = stored
            && nothing
        {
            return Ok(Some(stored.base_len + stored.log_len));
        }
        if !whole && !matches!(self.plan(stored), Plan::Append(_)) {
            return Ok(None);
        }
        let now = self.store_update(store, &lock, &name, stored)?;
        self.stored = Some(now);
        self.change = None;
        Ok(Some(now.base_len + now.log_len))
    }

    /// Stores the index in `store`, replacing the stored copy atomically
    /// under the root's lock; returns its size in bytes.
    pub fn save(&self, store: &Store) -> Result<u64> {
        let name = store_name(&self.data.root);
        let _lock = store.lock(&name).map_err(Error::store)?;
        Ok(self.write(store, &name)?.base_len)
    }

    /// Decodes a stored index, the segments of its log applied; `None` when the bytes are not
    /// a whole index of this version.
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
        let (_, base_sum, payload, log) = header(&buf)?;
        let log = (!log.is_empty()).then(|| (HEADER + payload.len(), log.to_vec()));
        let mut index = Index::decode_buf_unchecked(buf)?;
        if let Some((_, log)) = log {
            index.apply_log(&log, base_sum);
        }
        Some(index)
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
        let base_end = HEADER + header(&buf)?.2.len();
        if parts_end > base_end {
            return None;
        }
        let graph = parts_end..base_end;
        let blob = Blob { buf, stored: start..parts_end, stored_graph: graph, ..Blob::default() };
        Some(Index { data, blob, ..Index::default() })
    }

    /// The format version of a stored index; `None` when the bytes are not one.
    fn version_of(bytes: &[u8]) -> Option<u32> {
        let version = bytes.strip_prefix(MAGIC)?.get(..4)?;
        Some(u32::from_le_bytes(version.try_into().ok()?))
    }

    /// Whether `bytes` are a stored index of this version whose checksum holds.
    fn intact(bytes: &[u8]) -> bool {
        header(bytes).is_some_and(|(version, sum, payload, _)| {
            version == VERSION && sum == payload_sum(&[payload])
        })
    }

    /// The tables of a stored index, and where its blob starts in `bytes`, without checking
    /// the checksum (see [`Index::intact`]): a damaged index decodes to tables that
    /// hold together (every file's parts inside the blob) and answers wrongly but never
    /// panics, so it may be asked while its checksum is checked elsewhere.
    fn decode_unchecked(bytes: &[u8]) -> Option<(Data, usize)> {
        let (version, _, payload, _) = header(bytes)?;
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
        let graph = self.graph_bytes();
        let (header, tables) = self.encode_tables(&graph);
        let [stored, extra, _] = self.blob.pieces();
        [&header[..], &tables, stored, extra, &graph].concat()
    }

    /// The header and the tables of the stored form; the blob's pieces follow them as they
    /// lie in memory (they are not copied into one buffer first), then the graph's bytes.
    fn encode_tables(&self, graph: &[u8]) -> ([u8; HEADER], Vec<u8>) {
        let tables = postcard::to_allocvec(&self.data).unwrap_or_default();
        let [stored, extra, _] = self.blob.pieces();
        let mut header = [0; HEADER];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        let sum = payload_sum(&[&tables, stored, extra, graph]);
        header[12..20].copy_from_slice(&sum.to_le_bytes());
        let len = [tables.len(), stored.len(), extra.len(), graph.len()].iter().sum::<usize>();
        header[20..].copy_from_slice(&(len as u64).to_le_bytes());
        (header, tables)
    }

    /// Writes the index to `store` under `name`; returns what is stored (a base of its size in
    /// bytes, no log).
    fn write(&self, store: &Store, name: &str) -> Result<Stored> {
        let graph = self.graph_bytes();
        let (header, tables) = self.encode_tables(&graph);
        let [stored, extra, _] = self.blob.pieces();
        let parts = [&header[..], &tables, stored, extra, &graph];
        // A new file: the log of the base it replaces goes with it.
        store.write_parts(name, &parts).map_err(Error::store)?;
        let base_sum = u64::from_le_bytes(header[12..20].try_into().unwrap_or_default());
        let base_len = parts.iter().map(|p| p.len() as u64).sum();
        Ok(Stored { base_sum, base_len, segments: 0, log_len: 0, log_whole: true })
    }
}

/// The version, checksum, payload and log of a stored index; `None` when the bytes do not
/// start with the magic number and a whole header, or its length runs past them.
fn header(bytes: &[u8]) -> Option<(u32, u64, &[u8], &[u8])> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (version, rest) = rest.split_at_checked(4)?;
    let (sum, rest) = rest.split_at_checked(8)?;
    let (len, rest) = rest.split_at_checked(8)?;
    let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
    let (payload, log) = rest.split_at_checked(len)?;
    Some((
        u32::from_le_bytes(version.try_into().ok()?),
        u64::from_le_bytes(sum.try_into().ok()?),
        payload,
        log,
    ))
}

/// The store entry of a root: a stable hash of its path.
fn store_name(root: &str) -> String {
    format!("suggest-{:016x}.idx", checksum(root.as_bytes()))
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
