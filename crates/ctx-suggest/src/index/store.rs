//! The stored form of an index: a header (magic, version, checksum, length), the blob (the
//! files' parts, then the graph), the tables and their length, then the log of segments later
//! updates appended ([`super::segment`]); written as a stream (a cold build streams the parts
//! as it makes them);
//! opened mapped, the base checked on another thread while it is asked, the log applied; an
//! update appends a segment or writes the whole index back, under the store's lock.

use std::time::Instant;

use ctx_fs::{Sandbox, Store};

use super::blob::{Blob, Buf, Stream};
use super::segment::{Plan, Stored};
use super::{Data, FileRec, Index, IndexSettings, UpdateStats};
use crate::error::{Error, Result};
use crate::hash::payload_sum;
use crate::symbols::SymbolSource;

/// The format version; a file of another version is rebuilt.
const VERSION: u32 = 14;
const MAGIC: &[u8; 8] = b"CTXSUGG\0";
/// Magic, version, checksum and the length of the base's payload (the log follows it).
const HEADER: usize = 28;
/// The length of the tables, the payload's last bytes.
const TRAILER: usize = 8;

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
    /// anything changed, or the stored index turns out damaged (its checksum is checked after
    /// the first run, while the walk goes on), `f` runs again on the updated or rebuilt index: `f` may run twice,
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
        // The walk that finds changed files runs while the index is decoded, its log applied,
        // asked, and then its checksum checked (the walk, the longer, is left to end alone);
        // the answer is dropped if the checksum fails.
        let (walk, stored, intact) = std::thread::scope(|scope| {
            let walk = scope.spawn(|| sandbox.walk_parallel(&sandbox.workspace()));
            let decoded = mapped.clone().and_then(Index::load);
            let early = match &decoded {
                Some((index, _)) if fits(index) && !index.is_empty() => Some(f(index)),
                _ => None,
            };
            let intact = mapped.as_deref().map(|m| Index::intact(m));
            (walk.join(), (decoded, early), intact)
        });
        let walk = match walk {
            Ok(walk) => walk,
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
        let at = At { store, lock: &lock, name: &name, stored_len };
        let mut stats = index.update_stored(sandbox, walk, &at, loaded, corrupt)?;
        stats.rebuilt_corrupt = corrupt;
        let changed = stats.indexed > 0 || stats.removed > 0;
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

    /// Brings the index up to date with `walk` and stores it in `at`: a cold build streamed to
    /// the store as it is made ([`Index::build_streamed`]), or the update of an index `loaded`
    /// from it stored as a segment or whole; nothing when nothing changed.
    fn update_stored(
        &mut self,
        sandbox: &Sandbox,
        walk: ctx_fs::Walk,
        at: &At<'_>,
        loaded: Option<Stored>,
        corrupt: bool,
    ) -> Result<UpdateStats> {
        if self.is_blank() {
            let out = at.store.writer(at.lock, at.name).map_err(Error::store)?;
            let mut out = Stream::store(out, HEADER);
            let mut stats = self.build_streamed(sandbox, walk, &mut out)?;
            let now = self.finish_stream(out)?;
            stats.bytes = now.base_len;
            self.stored = Some(now);
            return Ok(stats);
        }
        let mut stats = self.refresh_from(sandbox, &walk)?;
        super::refresh::drop_aside(walk);
        let changed = stats.indexed > 0 || stats.removed > 0;
        let unmerged = loaded.is_some_and(|l| !l.log_whole);
        // An empty workspace is stored once, so that the next query finds its index.
        if changed || corrupt || unmerged || (loaded.is_none() && self.is_empty()) {
            let now = self.store_update(at.store, at.lock, at.name, loaded)?;
            stats.bytes = now.base_len + now.log_len;
            self.stored = Some(now);
        } else {
            stats.bytes = loaded.map_or(at.stored_len, |l| l.base_len + l.log_len);
            self.stored = loaded;
        }
        Ok(stats)
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
            Plan::Merge => self.write(store, lock, name),
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
        // Nothing to store: no file changed and the tables and blob are the stored ones. A file
        // read and dropped again since leaves no file changed but its parts and new names
        // behind, and those go in a segment, so that the stored index is the one held.
        let mark = self.mark();
        let nothing = self
            .change
            .as_ref()
            .is_none_or(|c| c.removed.is_empty() && c.fresh.is_empty() && c.before == mark);
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

    /// Ends the stream of a cold build (the parts and graph are in it): the tables, then the
    /// header; the index then reads its parts and graph where they lie in the stored file,
    /// mapped. Returns what is stored (a base, no log).
    fn finish_stream(&mut self, out: Stream<'_>) -> Result<Stored> {
        let mut out = out;
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let (parts, graph_end) = (size(self.data.blob_len), size(out.len()));
        self.put_tables(&mut out);
        let header = header_of(&out);
        let (base_sum, base_len) = (out.sum(), HEADER as u64 + out.len());
        let buf = out.finish_mapped(&header).map_err(Error::store)?;
        let (parts_end, graph_end) =
            (HEADER.saturating_add(parts), HEADER.saturating_add(graph_end));
        let (stored, stored_graph) = (HEADER..parts_end, parts_end..graph_end);
        self.blob = Blob { buf, stored, stored_graph, ..Blob::default() };
        Ok(Stored { base_sum, base_len, segments: 0, log_len: 0, log_whole: true })
    }

    /// Whether nothing was ever put in the index: no file, no name, no part (a cold build).
    fn is_blank(&self) -> bool {
        self.data.files.is_empty()
            && self.data.terms.len() == 0
            && self.data.symbols.len() == 0
            && self.blob.len() == 0
    }

    /// Stores the index in `store`, replacing the stored copy atomically
    /// under the root's lock; returns its size in bytes.
    pub fn save(&self, store: &Store) -> Result<u64> {
        let name = store_name(&self.data.root);
        let lock = store.lock(&name).map_err(Error::store)?;
        Ok(self.write(store, &lock, &name)?.base_len)
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
        let (data, start, blob_end) = Index::decode_unchecked(&buf)?;
        let parts_end = start.checked_add(usize::try_from(data.blob_len).ok()?)?;
        if parts_end > blob_end {
            return None;
        }
        let size = data.blob_len;
        let fits =
            |f: &FileRec| f.parts.start.checked_add(f.parts.len()).is_some_and(|e| e <= size);
        if !data.files.iter().all(fits) {
            return None;
        }
        let graph = parts_end..blob_end;
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

    /// The tables of a stored index, and where its blob starts and ends in `bytes`, without
    /// checking the checksum (see [`Index::intact`]): a damaged index decodes to tables that
    /// hold together (every file's parts inside the blob) and answers wrongly but never
    /// panics, so it may be asked while its checksum is checked elsewhere.
    fn decode_unchecked(bytes: &[u8]) -> Option<(Data, usize, usize)> {
        let (version, _, payload, _) = header(bytes)?;
        if version != VERSION {
            return None;
        }
        // The blob, the tables, then the tables' length.
        let (body, trailer) = payload.split_at_checked(payload.len().checked_sub(TRAILER)?)?;
        let tables = usize::try_from(u64::from_le_bytes(trailer.try_into().ok()?)).ok()?;
        let (blob, tables) = body.split_at_checked(body.len().checked_sub(tables)?)?;
        let (data, rest): (Data, &[u8]) = postcard::take_from_bytes(tables).ok()?;
        if !rest.is_empty() {
            return None;
        }
        Some((data, HEADER, HEADER + blob.len()))
    }

    /// Encodes the index for storage.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Stream::memory(HEADER);
        self.put_all(&mut out);
        let header = header_of(&out);
        out.finish(&header).ok().flatten().unwrap_or_default()
    }

    /// The payload of the stored form: the files' parts as they lie in memory (they are not
    /// copied into one buffer first), the graph, then the tables.
    fn put_all(&self, out: &mut Stream<'_>) {
        let [stored, extra, _] = self.blob.pieces();
        out.put(stored);
        out.put(extra);
        // The graph as a build from scratch would lay it out, also when updates patched it.
        out.put(&self.graph_bytes());
        self.put_tables(out);
    }

    /// The tables, encoded as they are put, then their length.
    fn put_tables(&self, out: &mut Stream<'_>) {
        let start = out.len();
        // The stream never fails a write (it keeps the first error for its end).
        let _ = postcard::to_io(&self.data, &mut *out);
        let tables = out.len() - start;
        out.put(&tables.to_le_bytes());
    }

    /// Writes the index to `store` under `name`, whose lock is `lock`; returns what is stored
    /// (a base of its size in bytes, no log).
    fn write(&self, store: &Store, lock: &ctx_fs::StoreLock, name: &str) -> Result<Stored> {
        // A new file: the log of the base it replaces goes with it.
        let mut out = Stream::store(store.writer(lock, name).map_err(Error::store)?, HEADER);
        self.put_all(&mut out);
        let header = header_of(&out);
        let (base_sum, base_len) = (out.sum(), HEADER as u64 + out.len());
        out.finish(&header).map_err(Error::store)?;
        Ok(Stored { base_sum, base_len, segments: 0, log_len: 0, log_whole: true })
    }
}

/// The header of the stored form whose payload `out` holds.
fn header_of(out: &Stream<'_>) -> [u8; HEADER] {
    let mut header = [0; HEADER];
    header[..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&VERSION.to_le_bytes());
    header[12..20].copy_from_slice(&out.sum().to_le_bytes());
    header[20..].copy_from_slice(&out.len().to_le_bytes());
    header
}

/// Where an index is stored: its store, its lock there, its name, the length stored.
struct At<'a> {
    store: &'a Store,
    lock: &'a ctx_fs::StoreLock,
    name: &'a str,
    stored_len: u64,
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

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // The test writes its tree.
mod tests {
    use super::*;
    use crate::Options;

    #[test]
    fn a_cold_build_that_frees_its_walk_as_it_reads_is_the_build_in_memory() {
        let (tree, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let files = 3 * super::super::refresh::COLD_CHUNK + 17;
        for i in 0..files {
            let dir = tree.path().join(format!("src/m{}", i % 7));
            std::fs::create_dir_all(&dir).unwrap();
            let text = format!(
                "/// Sends request {i}.\npub fn send_{i}() {{ encode_{}(); retry(); }}\n\
                 pub fn encode_{i}() {{}}\n",
                (i * 5 + 1) % files
            );
            std::fs::write(dir.join(format!("f{i}.rs")), text).unwrap();
        }
        let sandbox = Sandbox::builder(tree.path().to_str().unwrap())
            .open(cap_std::ambient_authority())
            .unwrap();
        let store =
            Store::open(cache.path().to_str().unwrap(), cap_std::ambient_authority()).unwrap();
        let (opened, stats) = Index::open(&sandbox, &store).unwrap();
        assert_eq!(stats.indexed, files);
        // The parts and the graph were streamed: the index reads them where they are stored.
        assert!(opened.blob.extra.is_empty() && opened.blob.graph.is_none());
        let stored = store.read(&store_name(&opened.data.root)).unwrap().unwrap();
        assert_eq!(stats.bytes, stored.len() as u64);
        let (built, _) = Index::build(&sandbox).unwrap();
        assert!(
            stored == built.encode(),
            "its walk freed as it reads, the index is the one built at once"
        );
        let opts = Options::default().explain(true);
        for prompt in ["send request 250", "encode_16", "retry"] {
            let want = built.suggest(&sandbox, prompt, &opts);
            assert!(!want.is_empty(), "{prompt}");
            assert_eq!(opened.suggest(&sandbox, prompt, &opts), want, "{prompt}");
        }
    }
}
