//! The index: per file, the terms of five fields, the symbols it defines
//! and references, and the stamp (length, modification time, inode) that
//! tells when it must be read again; persisted in a [`Store`].

use std::time::{Duration, Instant, UNIX_EPOCH};

use ctx_fs::{Content, Sandbox, Store, Walk, WalkEntry};
use serde::{Deserialize, Serialize};

use crate::classify::{FileClass, classify};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::{FxHashMap, FxHashSet};
use crate::symbols::{self, Def, Lang, SymbolSource};
use crate::tokenize;

/// The fields of a file, in the order of [`FIELDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// The path's tokens.
    Path,
    /// Names the file defines.
    Defs,
    /// Names the file references.
    Refs,
    /// Comment and doc lines.
    Comments,
    /// Everything else.
    Body,
}

/// Every field, in index order.
pub const FIELDS: [Field; 5] =
    [Field::Path, Field::Defs, Field::Refs, Field::Comments, Field::Body];

impl Field {
    /// The field's name in explanations.
    pub fn name(self) -> &'static str {
        match self {
            Field::Path => "path",
            Field::Defs => "definitions",
            Field::Refs => "references",
            Field::Comments => "comments",
            Field::Body => "body",
        }
    }
}

/// The format version; a file of another version is rebuilt.
const VERSION: u32 = 11;
const MAGIC: &[u8; 8] = b"CTXSUGG\0";
/// Magic, version and checksum.
const HEADER: usize = 20;

/// A definition as stored: its name is an index into the symbol table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DefRec {
    pub(crate) sym: u32,
    pub(crate) kind: u16,
    pub(crate) start: u32,
    pub(crate) end: u32,
    /// The first line of its doc comment: a byte range in the file's doc lines (the last of
    /// its [`Parts`]), empty when it has none (a doc line is never empty).
    pub(crate) doc: (u32, u32),
}

/// One file of the index.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct FileRec {
    pub(crate) path: String,
    pub(crate) len: u64,
    pub(crate) mtime: u64,
    pub(crate) inode: u64,
    pub(crate) lang: Lang,
    pub(crate) class: FileClass,
    pub(crate) lines: u32,
    pub(crate) field_len: [u32; 5],
    /// Where the file's postings, definitions, references and doc lines lie in the index's
    /// blob.
    parts: Parts,
}

/// The byte lengths of a file's four parts, one after the other in the index's blob from
/// `start`:
/// - postings, sorted by term: varint term-id delta, a byte of fields present, then a varint
///   frequency per present field;
/// - definitions, in source order: varints of symbol, kind, first line, length in lines and
///   doc range (see [`Index::defs`]);
/// - references, sorted by symbol: varints of symbol-id delta and count;
/// - the doc lines of the definitions, one after the other.
///
/// A stored index is mapped and used in place: loading it copies and allocates nothing a
/// file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Parts {
    start: u64,
    postings: u32,
    defs: u32,
    refs: u32,
    docs: u32,
}

impl Parts {
    fn len(&self) -> u64 {
        u64::from(self.postings)
            + u64::from(self.defs)
            + u64::from(self.refs)
            + u64::from(self.docs)
    }
}

/// The parts of one file before they are placed in a blob.
#[derive(Default)]
struct Owned {
    postings: Vec<u8>,
    defs: Vec<u8>,
    refs: Vec<u8>,
    docs: String,
}

impl Owned {
    /// Appends the parts to `blob`; returns where they lie.
    fn place(&self, blob: &mut Vec<u8>) -> Parts {
        let start = blob.len() as u64;
        blob.extend_from_slice(&self.postings);
        blob.extend_from_slice(&self.defs);
        blob.extend_from_slice(&self.refs);
        blob.extend_from_slice(self.docs.as_bytes());
        let len = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Parts {
            start,
            postings: len(self.postings.len()),
            defs: len(self.defs.len()),
            refs: len(self.refs.len()),
            docs: len(self.docs.len()),
        }
    }
}

/// The bytes the files' parts and the symbol graph lie in.
///
/// A loaded index reads the parts and graph of the stored index where they lie in its buffer
/// (mapped, so nothing is copied); the parts of files read since are added after the stored
/// ones, and a rebuilt graph replaces the stored one. An update thus writes the stored parts
/// back as they are, beside the new ones, and copies nothing in memory; once the parts of
/// changed and removed files take more than a fifth of the blob, it is rebuilt with the
/// files' parts in file order.
#[derive(Debug, Default)]
struct Blob {
    /// The stored index, or nothing.
    buf: Buf,
    /// Where its files' parts lie in `buf`.
    stored: std::ops::Range<usize>,
    /// Where its graph lies in `buf`.
    stored_graph: std::ops::Range<usize>,
    /// Parts added since, addressed after the stored ones.
    extra: Vec<u8>,
    /// The graph, when built since.
    graph: Option<Vec<u8>>,
}

#[derive(Debug)]
enum Buf {
    Owned(Vec<u8>),
    /// A mapped stored index, shared with the thread that checks its checksum.
    Mapped(std::sync::Arc<ctx_fs::Mapped>),
}

impl Default for Buf {
    fn default() -> Buf {
        Buf::Owned(Vec::new())
    }
}

impl std::ops::Deref for Buf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Buf::Owned(bytes) => bytes,
            Buf::Mapped(map) => map.as_ref(),
        }
    }
}

/// A run of little-endian `u32` values in the blob.
#[derive(Clone, Copy)]
struct U32s<'a>(&'a [u8]);

impl U32s<'_> {
    fn len(&self) -> usize {
        self.0.len() / 4
    }

    /// The value at `i`; 0 past the end (a damaged index answers wrong, never panics).
    fn get(&self, i: usize) -> u32 {
        let at = i.saturating_mul(4);
        self.0.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Entries `i` and `i + 1` of a table of starts (one entry a symbol, then the total),
    /// capped at `len`; empty for a symbol past the table.
    fn span(&self, i: usize, len: usize) -> std::ops::Range<usize> {
        if i >= self.len().saturating_sub(1) {
            return 0..0;
        }
        let (start, end) = (self.get(i) as usize, (self.get(i + 1) as usize).min(len));
        start.min(end)..end
    }
}

impl Blob {
    fn stored(&self) -> &[u8] {
        self.buf.get(self.stored.clone()).unwrap_or_default()
    }

    /// Bytes of parts, stored and added.
    fn len(&self) -> usize {
        self.stored.len() + self.extra.len()
    }

    /// The `len` bytes at `start`; empty when they are not all there.
    fn get(&self, start: u64, len: u64) -> &[u8] {
        let (Ok(start), Ok(len)) = (usize::try_from(start), usize::try_from(len)) else {
            return &[];
        };
        let stored = self.stored();
        let end = start.saturating_add(len);
        if end <= stored.len() {
            return &stored[start..end];
        }
        let Some(start) = start.checked_sub(stored.len()) else { return &[] };
        self.extra.get(start..end - stored.len()).unwrap_or_default()
    }

    fn graph(&self) -> &[u8] {
        match &self.graph {
            Some(graph) => graph,
            None => self.buf.get(self.stored_graph.clone()).unwrap_or_default(),
        }
    }

    /// What is written after the tables: the parts, then the graph.
    fn pieces(&self) -> [&[u8]; 3] {
        [self.stored(), &self.extra, self.graph()]
    }
}

/// Everything of an index but its blob.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Data {
    root: String,
    /// Where the files' symbols come from.
    symbol_source: SymbolSource,
    terms: Names,
    symbols: Table,
    kinds: Vec<String>,
    files: Vec<FileRec>,
    /// Terms in use when the dictionary was last compacted (or built).
    live_terms: u32,
    /// Definitions in all files, counted when the graph is built.
    definitions: u64,
    /// Bytes of the files' parts in the stored form; the graph follows them.
    blob_len: u64,
    /// Where the symbol graph lies in the blob.
    graph: GraphParts,
}

/// A run of bytes in the blob.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Section {
    start: u64,
    len: u64,
}

/// The symbol graph, stored after the files' parts as four arrays of little-endian `u32`:
/// for each symbol id `s`, the files defining it are `def_files[def_start[s]..def_start[s +
/// 1]]` (each once, in file order) and the files referencing it, with how often, are the
/// pairs `ref_files[2 * ref_start[s]..2 * ref_start[s + 1]]`. Built when the files change,
/// so a query looks up the neighbours of the files it reaches without a pass over every file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct GraphParts {
    def_start: Section,
    def_files: Section,
    ref_start: Section,
    ref_files: Section,
}

/// What an update did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UpdateStats {
    /// Files in the index after the update.
    pub files: usize,
    /// Files read and indexed by this update.
    pub indexed: usize,
    /// Files whose entry was kept (same length, time and inode).
    pub reused: usize,
    /// Files that were gone and were dropped.
    pub removed: usize,
    /// Whether a stored index was found damaged (not merely of another version) and rebuilt.
    pub rebuilt_corrupt: bool,
    /// Whether the walk stopped at the sandbox's entry limit, so that some
    /// files are not in the index.
    pub truncated: bool,
    /// Size of the stored index in bytes (0 when not stored).
    pub bytes: u64,
    /// Wall time of the update.
    pub elapsed: Duration,
}

/// A suggestion index of one workspace.
#[derive(Debug, Default)]
pub struct Index {
    data: Data,
    blob: Blob,
}

/// The ids of the names met in one refresh. Names of the stored tables are found by one pass
/// over them per batch of files, so an update that reads a few files never builds a map of
/// the whole dictionary.
struct Interner {
    /// Table sizes before the refresh: names added since are all in the maps.
    base_terms: usize,
    base_syms: usize,
    terms: FxHashMap<String, u32>,
    syms: FxHashMap<String, u32>,
}

/// Per-file terms before interning: term -> frequency per field.
/// A file's terms with their count in each field, sorted by term.
type Bag = Vec<(String, [u32; 5])>;

struct Parsed {
    rec: FileRec,
    bag: Bag,
    defs: Vec<Def>,
    refs: FxHashMap<String, u32>,
}

impl Index {
    /// An empty index whose files' symbols will come from `source`.
    pub fn new(source: SymbolSource) -> Index {
        let mut index = Index::default();
        index.data.symbol_source = source;
        index
    }

    /// Where this index takes its files' symbols from.
    pub fn symbol_source(&self) -> SymbolSource {
        self.data.symbol_source
    }

    /// Builds a fresh in-memory index of the sandbox's workspace, its symbols scanned
    /// ([`SymbolSource::Scan`]).
    pub fn build(sandbox: &Sandbox) -> Result<(Index, UpdateStats)> {
        Index::build_with(sandbox, SymbolSource::default())
    }

    /// [`Index::build`] with the symbols from `source`.
    pub fn build_with(sandbox: &Sandbox, source: SymbolSource) -> Result<(Index, UpdateStats)> {
        let mut index = Index::new(source);
        let stats = index.refresh(sandbox)?;
        Ok((index, stats))
    }

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

    /// [`Index::open`] with the symbols from `source` (a stored index whose symbols came
    /// from another source is rebuilt), and `f` on the up-to-date index.
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
        source: SymbolSource,
        f: impl Fn(&Index) -> T + Sync,
    ) -> Result<(Index, UpdateStats, T)> {
        let started = Instant::now();
        let root = sandbox.root_path(sandbox.workspace().root()).as_str().to_owned();
        let name = store_name(&root);
        let lock = store.lock(&name).map_err(Error::store)?;
        let mapped = store.map(&name).map_err(Error::store)?.map(std::sync::Arc::new);
        let stored_len = mapped.as_ref().map_or(0, |m| m.len() as u64);
        let stored_version = mapped.as_deref().and_then(|m| Index::version_of(m));
        // A stored index is used for this root with symbols from this source only.
        let fits = |index: &Index| index.data.root == root && index.data.symbol_source == source;
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
            (Some(Some(_)), Some(true)) | (None, _) => (Index::new(source), false),
            // An index of another version of ctx is rebuilt, but it was not damaged.
            _ if stored_version != Some(VERSION) => (Index::new(source), stored_version.is_none()),
            _ => (Index::new(source), true),
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

    /// Number of files indexed.
    pub fn len(&self) -> usize {
        self.data.files.len()
    }

    /// Whether the index holds no file.
    pub fn is_empty(&self) -> bool {
        self.data.files.is_empty()
    }

    /// Number of distinct terms.
    pub fn term_count(&self) -> usize {
        self.data.terms.len()
    }

    /// Number of distinct symbol names.
    pub fn symbol_count(&self) -> usize {
        self.data.symbols.len()
    }

    /// Number of definitions in all files.
    pub fn definition_count(&self) -> usize {
        usize::try_from(self.data.definitions).unwrap_or(usize::MAX)
    }

    /// Files per class, in a stable order.
    pub fn class_counts(&self) -> Vec<(FileClass, usize)> {
        let mut counts: Vec<(FileClass, usize)> = Vec::new();
        for f in &self.data.files {
            match counts.iter_mut().find(|(c, _)| *c == f.class) {
                Some((_, n)) => *n += 1,
                None => counts.push((f.class, 1)),
            }
        }
        counts.sort_by_key(|(c, _)| c.name());
        counts
    }

    /// Brings the index up to date with the workspace: walks it, reads the
    /// files whose stamp changed, drops the files that are gone.
    pub fn refresh(&mut self, sandbox: &Sandbox) -> Result<UpdateStats> {
        let walk = sandbox.walk(&sandbox.workspace()).map_err(Error::fs)?;
        self.refresh_from(sandbox, &walk)
    }

    /// [`Index::refresh`], and `f` on the refreshed index: `f` runs on the index as it is
    /// while the workspace is walked for changes, and again after the update only when the
    /// walk found some (as [`Index::open_with`] does for a stored index).
    pub fn refresh_with<T: Send>(
        &mut self,
        sandbox: &Sandbox,
        f: impl Fn(&Index) -> T + Sync,
    ) -> Result<(UpdateStats, T)> {
        let this = &*self;
        let (walk, early) = std::thread::scope(|scope| {
            let walk = scope.spawn(|| sandbox.walk(&sandbox.workspace()));
            let early = (!this.is_empty()).then(|| f(this));
            (walk.join(), early)
        });
        let walk = match walk {
            Ok(walk) => walk.map_err(Error::fs)?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let stats = self.refresh_from(sandbox, &walk)?;
        let answer = match early {
            Some(answer) if stats.indexed == 0 && stats.removed == 0 => answer,
            _ => f(self),
        };
        Ok((stats, answer))
    }

    /// [`Index::refresh`] with the walk of the workspace already made.
    fn refresh_from(&mut self, sandbox: &Sandbox, walk: &Walk) -> Result<UpdateStats> {
        let started = Instant::now();
        self.data.root = sandbox.root_path(sandbox.workspace().root()).as_str().to_owned();
        let entries: Vec<&WalkEntry> = walk.files().collect();
        let truncated = walk.truncated;
        // Keyed by the path moved out of each entry (and put back when it is kept).
        let mut old: FxHashMap<String, FileRec> = std::mem::take(&mut self.data.files)
            .into_iter()
            .map(|mut f| (std::mem::take(&mut f.path), f))
            .collect();
        let mut stats = UpdateStats { truncated, ..UpdateStats::default() };
        let mut files = Vec::with_capacity(entries.len());
        let mut todo = Vec::new();
        for entry in &entries {
            let path = entry.path.as_str();
            match old.remove_entry(path) {
                Some((path, mut rec))
                    if rec.len == entry.len
                        && rec.mtime == mtime_of(entry)
                        && rec.inode == entry.inode =>
                {
                    rec.path = path;
                    stats.reused += 1;
                    files.push(Some((rec, false)));
                }
                _ => {
                    todo.push(files.len());
                    files.push(None);
                }
            }
        }
        stats.removed = old.len();
        let mut interner = Interner {
            base_terms: self.data.terms.len(),
            base_syms: self.data.symbols.len(),
            terms: FxHashMap::default(),
            syms: FxHashMap::default(),
        };
        // The parts of the files read now, placed in the blob below.
        let mut fresh = Vec::new();
        // Read on every core by threads that live through the whole update, interned here in
        // the files' order (so the index does not depend on timing) and in batches, so that
        // only the terms of a batch and the files read ahead of it are held as strings.
        let source = self.data.symbol_source;
        let mut batch: Vec<Parsed> = Vec::with_capacity(PARSE_BATCH.min(todo.len()));
        let mut take = |batch: &mut Vec<Parsed>, first: usize| {
            stats.indexed += batch.len();
            self.resolve(&mut interner, batch);
            for (k, parsed) in batch.drain(..).enumerate() {
                let slot = todo[first + k];
                files[slot] = Some((self.intern(&mut interner, parsed, &mut fresh), true));
            }
        };
        let mut first = 0;
        crate::par::for_each_ordered(
            &todo,
            64,
            |&i| parse_entry(sandbox, entries[i], source),
            |k, parsed| {
                batch.push(parsed);
                if batch.len() == PARSE_BATCH {
                    take(&mut batch, first);
                    first = k + 1;
                }
            },
        );
        take(&mut batch, first);
        // The new parts go after the ones the blob holds.
        let base = self.blob.len() as u64;
        self.blob.extra.extend_from_slice(&fresh);
        self.data.files = files
            .into_iter()
            .flatten()
            .map(|(mut f, is_fresh)| {
                if is_fresh {
                    f.parts.start += base;
                }
                f
            })
            .collect();
        let live: u64 = self.data.files.iter().map(|f| f.parts.len()).sum();
        let changed = stats.indexed > 0 || stats.removed > 0;
        if changed && self.blob.len() as u64 > live + live / 4 {
            self.rebuild_blob(|parts, bytes| (parts.postings, bytes.to_vec()));
        }
        if interner.base_terms == 0 {
            self.data.live_terms = self.data.terms.len() as u32;
        } else if self.data.terms.len() > 2 * self.data.live_terms as usize {
            self.compact();
        }
        // A rebuilt blob has no graph yet.
        let graphless = self.blob.graph.is_none() && self.blob.stored_graph.is_empty();
        if changed || (graphless && !self.data.files.is_empty()) {
            self.seal();
        }
        stats.files = self.data.files.len();
        stats.elapsed = started.elapsed();
        Ok(stats)
    }

    /// Finds the names of `parsed` that the stored tables already hold, in one pass over each.
    /// With no stored tables (a build from nothing) there is nothing to find.
    fn resolve(&self, it: &mut Interner, parsed: &[Parsed]) {
        if it.base_terms > 0 {
            let mut terms: FxHashSet<&[u8]> = FxHashSet::default();
            for p in parsed {
                let unknown = p.bag.iter().map(|(t, _)| t).filter(|t| !it.terms.contains_key(*t));
                terms.extend(unknown.map(|t| t.as_bytes()));
            }
            find(self.data.terms.iter_bytes().take(it.base_terms), &mut terms, &mut it.terms);
        }
        if it.base_syms > 0 {
            let mut syms: FxHashSet<&[u8]> = FxHashSet::default();
            for p in parsed {
                let names = p.defs.iter().map(|d| d.name.as_str());
                let names = names.chain(p.refs.keys().map(String::as_str));
                syms.extend(names.filter(|n| !it.syms.contains_key(*n)).map(str::as_bytes));
            }
            let symbols = self.data.symbols.names.iter_bytes().take(it.base_syms);
            find(symbols, &mut syms, &mut it.syms);
        }
    }

    /// Gives a parsed file its term and symbol ids.
    fn intern(&mut self, it: &mut Interner, parsed: Parsed, fresh: &mut Vec<u8>) -> FileRec {
        let Parsed { mut rec, bag, defs, refs } = parsed;
        // The bag is sorted by term, so that the same tree gives the same ids and bytes.
        let mut ids: Vec<(u32, [u32; 5])> =
            bag.into_iter().map(|(term, tf)| (self.term_id(it, term), tf)).collect();
        ids.sort_unstable_by_key(|(id, _)| *id);
        let mut owned = Owned { postings: encode_postings(&ids), ..Owned::default() };
        let mut docs = String::new();
        let defs: Vec<DefRec> = defs
            .into_iter()
            .map(|d| {
                let doc = match d.doc {
                    Some(doc) => {
                        let start = docs.len() as u32;
                        docs.push_str(&doc);
                        (start, docs.len() as u32)
                    }
                    None => (0, 0),
                };
                DefRec {
                    sym: self.sym_id(it, d.name),
                    kind: self.kind_id(d.kind),
                    start: d.start,
                    end: d.end,
                    doc,
                }
            })
            .collect();
        owned.defs = encode_defs(&defs);
        owned.docs = docs;
        let mut refs: Vec<(u32, u32)> =
            refs.into_iter().map(|(s, n)| (self.sym_id(it, s), n)).collect();
        refs.sort_unstable();
        owned.refs = encode_refs(&refs);
        rec.parts = owned.place(fresh);
        rec
    }

    fn term_id(&mut self, it: &mut Interner, term: String) -> u32 {
        if let Some(&id) = it.terms.get(&term) {
            return id;
        }
        let id = self.data.terms.len() as u32;
        self.data.terms.push(&term);
        it.terms.insert(term, id);
        id
    }

    fn sym_id(&mut self, it: &mut Interner, sym: String) -> u32 {
        if let Some(&id) = it.syms.get(&sym) {
            return id;
        }
        let id = self.data.symbols.len() as u32;
        self.data.symbols.push(&sym);
        it.syms.insert(sym, id);
        id
    }

    fn kind_id(&mut self, kind: String) -> u16 {
        match self.data.kinds.iter().position(|k| *k == kind) {
            Some(i) => i as u16,
            None => {
                self.data.kinds.push(kind);
                (self.data.kinds.len() - 1) as u16
            }
        }
    }

    /// Incremental updates leave the terms of changed files behind in the
    /// dictionary; once it has doubled since it was last compacted, the terms
    /// in use are counted and, if fewer than half, renumbered.
    fn compact(&mut self) {
        let mut used = vec![false; self.data.terms.len()];
        for f in &self.data.files {
            for (id, _) in self.postings(f) {
                used[id as usize] = true;
            }
        }
        let live = used.iter().filter(|u| **u).count();
        self.data.live_terms = live as u32;
        if live * 2 >= used.len() {
            return;
        }
        let mut remap = vec![u32::MAX; used.len()];
        let mut terms = Names::default();
        for (i, term) in self.data.terms.iter().enumerate() {
            if used[i] {
                remap[i] = terms.len() as u32;
                terms.push(term);
            }
        }
        self.data.terms = terms;
        self.rebuild_blob(|parts, bytes| {
            let (postings, rest) = bytes.split_at((parts.postings as usize).min(bytes.len()));
            let mut ids: Vec<(u32, [u32; 5])> =
                split_postings(postings).1.map(|(id, tf)| (remap[id as usize], tf)).collect();
            ids.sort_unstable_by_key(|(id, _)| *id);
            let mut bytes = encode_postings(&ids);
            let postings = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
            bytes.extend_from_slice(rest);
            (postings, bytes)
        });
    }

    pub(crate) fn files(&self) -> &[FileRec] {
        &self.data.files
    }

    /// Rebuilds the blob with the files' parts in file order, each passed through `map`
    /// (which returns the new length of the postings and the new bytes); the graph is built
    /// again after it.
    fn rebuild_blob(&mut self, map: impl Fn(&Parts, &[u8]) -> (u32, Vec<u8>)) {
        let live: u64 = self.data.files.iter().map(|f| f.parts.len()).sum();
        let mut parts = Vec::with_capacity(usize::try_from(live).unwrap_or(0));
        let mut starts = Vec::with_capacity(self.data.files.len());
        for f in &self.data.files {
            let (postings, bytes) = map(&f.parts, self.blob.get(f.parts.start, f.parts.len()));
            starts.push((parts.len() as u64, postings));
            parts.extend_from_slice(&bytes);
        }
        for (f, (start, postings)) in self.data.files.iter_mut().zip(starts) {
            f.parts.start = start;
            f.parts.postings = postings;
        }
        self.blob = Blob { extra: parts, ..Blob::default() };
    }

    /// Builds the symbol graph of the files (see [`GraphParts`]) in place of the blob's, and
    /// records the blob's length; called whenever the files changed.
    fn seal(&mut self) {
        let nsym = self.data.symbols.len();
        // Every (symbol, file) definition once and every (symbol, file, count) reference, in
        // file order, from one pass over the files' parts.
        let mut defined: Vec<(u32, u32)> = Vec::new();
        let mut referenced: Vec<(u32, u32, u32)> = Vec::new();
        let mut seen = vec![u32::MAX; nsym];
        let mut definitions = 0u64;
        for (i, f) in self.data.files.iter().enumerate() {
            for d in self.defs(f).inspect(|_| definitions += 1).filter(|d| (d.sym as usize) < nsym)
            {
                if seen[d.sym as usize] != i as u32 {
                    seen[d.sym as usize] = i as u32;
                    defined.push((d.sym, i as u32));
                }
            }
            let refs = self.refs(f).filter(|(s, _)| (*s as usize) < nsym);
            referenced.extend(refs.map(|(sym, count)| (sym, i as u32, count)));
        }
        // A counting sort by symbol keeps the file order within each symbol.
        let starts = |syms: &mut dyn Iterator<Item = u32>| -> Vec<u32> {
            let mut counts = vec![0u32; nsym + 1];
            for sym in syms {
                counts[sym as usize] += 1;
            }
            let mut sum = 0u32;
            counts
                .iter()
                .map(|c| {
                    let start = sum;
                    sum += c;
                    start
                })
                .collect()
        };
        let def_start = starts(&mut defined.iter().map(|(s, _)| *s));
        let ref_start = starts(&mut referenced.iter().map(|(s, _, _)| *s));
        let mut def_files = vec![0u32; defined.len()];
        let mut ref_files = vec![0u32; 2 * referenced.len()];
        let mut fill = def_start.clone();
        for &(sym, file) in &defined {
            def_files[fill[sym as usize] as usize] = file;
            fill[sym as usize] += 1;
        }
        let mut fill = ref_start.clone();
        for &(sym, file, count) in &referenced {
            let at = 2 * fill[sym as usize] as usize;
            ref_files[at] = file;
            ref_files[at + 1] = count;
            fill[sym as usize] += 1;
        }
        let mut blob = Vec::new();
        let mut put = |values: &[u32]| {
            let start = blob.len() as u64;
            blob.extend(values.iter().flat_map(|v| v.to_le_bytes()));
            Section { start, len: blob.len() as u64 - start }
        };
        self.data.definitions = definitions;
        self.data.blob_len = self.blob.len() as u64;
        self.data.graph = GraphParts {
            def_start: put(&def_start),
            def_files: put(&def_files),
            ref_start: put(&ref_start),
            ref_files: put(&ref_files),
        };
        self.blob.graph = Some(blob);
    }

    /// The `u32` values of a section of the blob.
    fn u32s(&self, section: Section) -> U32s<'_> {
        let start = usize::try_from(section.start).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(section.len).unwrap_or(usize::MAX));
        U32s(self.blob.graph().get(start..end).unwrap_or_default())
    }

    /// The files defining symbol `sym`, each once, in file order.
    pub(crate) fn definers(&self, sym: u32) -> impl ExactSizeIterator<Item = u32> + '_ {
        let g = &self.data.graph;
        let files = self.u32s(g.def_files);
        let n = self.data.files.len() as u32;
        let span = self.u32s(g.def_start).span(sym as usize, files.len());
        // A damaged index names no file past the last (its answers may be asked for before
        // its checksum is known).
        let span = if n == 0 { 0..0 } else { span };
        span.map(move |i| files.get(i).min(n - 1))
    }

    /// The files referencing symbol `sym`, with how often, in file order.
    pub(crate) fn referencers(&self, sym: u32) -> impl ExactSizeIterator<Item = (u32, u32)> + '_ {
        let g = &self.data.graph;
        let pairs = self.u32s(g.ref_files);
        let span = self.u32s(g.ref_start).span(sym as usize, pairs.len() / 2);
        let n = self.data.files.len() as u32;
        let span = if n == 0 { 0..0 } else { span };
        span.map(move |i| (pairs.get(2 * i).min(n - 1), pairs.get(2 * i + 1)))
    }

    /// The bytes of one of a file's parts: `which` counts from the postings (0) to the docs (3).
    fn part(&self, f: &FileRec, which: usize) -> &[u8] {
        let p = &f.parts;
        let lens = [p.postings, p.defs, p.refs, p.docs].map(u64::from);
        self.blob.get(p.start + lens[..which].iter().sum::<u64>(), lens[which])
    }

    /// A file's postings: term ids in ascending order, each with its frequency per field.
    pub(crate) fn postings(&self, f: &FileRec) -> PostingIter<'_> {
        split_postings(self.part(f, 0)).1
    }

    /// A file's postings part (see [`encode_postings`]).
    pub(crate) fn postings_part(&self, f: &FileRec) -> &[u8] {
        self.part(f, 0)
    }

    /// A file's definitions, in source order.
    pub(crate) fn defs(&self, f: &FileRec) -> Defs<'_> {
        Defs(PostingIter::new(self.part(f, 1)))
    }

    /// The symbols a file references and how often, by symbol id.
    pub(crate) fn refs(&self, f: &FileRec) -> Refs<'_> {
        Refs { varints: PostingIter::new(self.part(f, 2)), prev: 0 }
    }

    /// The first doc line of one of a file's definitions.
    pub(crate) fn doc(&self, f: &FileRec, def: &DefRec) -> Option<&str> {
        let (start, end) = def.doc;
        let docs = self.part(f, 3).get(start as usize..end as usize)?;
        (start < end).then(|| std::str::from_utf8(docs).ok()).flatten()
    }

    /// The ids of `names` in the term table, in one pass over it.
    pub(crate) fn term_ids(&self, names: &[&str]) -> Vec<Option<u32>> {
        lookup(self.data.terms.iter_bytes(), names)
    }

    pub(crate) fn symbol(&self, id: u32) -> &str {
        self.data.symbols.get(id)
    }

    /// The length in bytes of a symbol's name.
    pub(crate) fn symbol_len_of(&self, id: u32) -> usize {
        self.data.symbols.get_bytes(id).len()
    }

    /// The ids of `names` in the symbol table, in one pass over it.
    pub(crate) fn symbol_ids(&self, names: &[&str]) -> Vec<Option<u32>> {
        lookup(self.data.symbols.names.iter_bytes(), names)
    }

    pub(crate) fn kind(&self, id: u16) -> &str {
        self.data.kinds.get(id as usize).map_or("", String::as_str)
    }
}

/// Finds each of `names` in `table` in one pass (the first occurrence wins).
/// Names are compared as bytes: they were stored from strings, and checking that each is
/// UTF-8 again was a tenth of the pass.
fn lookup<'t>(table: impl Iterator<Item = &'t [u8]>, names: &[&str]) -> Vec<Option<u32>> {
    let wanted: FxHashMap<&[u8], usize> =
        names.iter().enumerate().map(|(i, n)| (n.as_bytes(), i)).collect();
    // The lengths asked for (all from 64 bytes up share a bit): most names of the table are
    // passed over without hashing them.
    let lengths = names.iter().fold(0u64, |m, n| m | 1 << n.len().min(63));
    let mut found = vec![None; names.len()];
    let mut left = wanted.len();
    for (id, name) in table.enumerate() {
        if lengths & 1 << name.len().min(63) == 0 {
            continue;
        }
        if let Some(&i) = wanted.get(name)
            && found[i].is_none()
        {
            found[i] = Some(id as u32);
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    // Repeated names share the answer of their first occurrence.
    for (i, n) in names.iter().enumerate() {
        if found[i].is_none() {
            found[i] = wanted.get(n.as_bytes()).and_then(|&j| found[j]);
        }
    }
    found
}

/// Moves the names of `table` that `wanted` holds into `found`, with their ids. As in
/// [`lookup`], names are compared as bytes.
fn find<'t>(
    table: impl Iterator<Item = &'t [u8]>,
    wanted: &mut FxHashSet<&[u8]>,
    found: &mut FxHashMap<String, u32>,
) {
    for (id, name) in table.enumerate() {
        if wanted.is_empty() {
            break;
        }
        if wanted.remove(name)
            && let Ok(name) = std::str::from_utf8(name)
        {
            found.insert(name.to_owned(), id as u32);
        }
    }
}

/// A table of names, each ended by a NUL byte in one byte string, so that a stored index
/// decodes it with one copy instead of one allocation a name. Names never hold NUL: they are
/// made of word characters.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Names {
    #[serde(with = "serde_bytes")]
    bytes: Vec<u8>,
    len: u32,
}

impl Names {
    fn len(&self) -> usize {
        self.len as usize
    }

    fn push(&mut self, name: &str) {
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.len += 1;
    }

    /// The names in id order.
    fn iter(&self) -> impl Iterator<Item = &str> {
        self.iter_bytes().map(|n| std::str::from_utf8(n).unwrap_or(""))
    }

    /// The names in id order, as bytes.
    fn iter_bytes(&self) -> impl Iterator<Item = &[u8]> {
        let body = self.bytes.strip_suffix(&[0]).unwrap_or(&self.bytes);
        let empty = self.bytes.is_empty();
        body.split(|b| *b == 0).filter(move |_| !empty)
    }
}

/// [`Names`] that are also found by id: the end of each name is found once, when the table
/// is decoded (one pass over its bytes), and is not stored.
#[derive(Clone, Debug, Default)]
struct Table {
    names: Names,
    /// The offset of each name's NUL byte.
    ends: Vec<u32>,
}

impl Table {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn push(&mut self, name: &str) {
        self.names.push(name);
        self.ends.push(self.names.bytes.len() as u32 - 1);
    }

    /// The name of `id`; empty when there is none.
    fn get(&self, id: u32) -> &str {
        std::str::from_utf8(self.get_bytes(id)).unwrap_or("")
    }

    /// The name of `id` as bytes.
    fn get_bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        let Some(&end) = self.ends.get(i) else { return &[] };
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize + 1 };
        &self.names.bytes[start..end as usize]
    }

    /// The names in id order.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = &str> {
        self.names.iter()
    }
}

impl From<Names> for Table {
    fn from(names: Names) -> Table {
        let ends = names
            .bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == 0)
            .map(|(i, _)| i as u32)
            .collect();
        Table { names, ends }
    }
}

impl Serialize for Table {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.names.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Table {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Table, D::Error> {
        let table = Table::from(Names::deserialize(d)?);
        let whole = table.names.bytes.last().is_none_or(|b| *b == 0);
        if table.len() != table.names.len() || !whole {
            return Err(serde::de::Error::custom("a name table whose count is not its length"));
        }
        Ok(table)
    }
}

/// Files read and parsed together before their terms are interned.
const PARSE_BATCH: usize = 512;

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

fn mtime_of(entry: &WalkEntry) -> u64 {
    entry
        .modified
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Reads and parses the entries at `todo`, on as many threads as there are
/// cores, keeping their order.
fn parse_entry(sandbox: &Sandbox, entry: &WalkEntry, source: SymbolSource) -> Parsed {
    let path = entry.path.as_str();
    let mut rec = FileRec {
        path: path.to_owned(),
        len: entry.len,
        mtime: mtime_of(entry),
        inode: entry.inode,
        lang: Lang::of(path),
        class: FileClass::Unreadable,
        lines: 0,
        field_len: [0; 5],
        parts: Parts::default(),
    };
    let mut counter = Counter::default();
    for t in tokenize::path_terms(path) {
        counter.add_term(Field::Path, &t);
    }
    let text = match sandbox.read_text(&entry.location) {
        Ok(Content::Text { text, .. }) => text,
        // Binary, too large or unreadable: listed by its path alone.
        _ => {
            rec.field_len = counter.field_len;
            return Parsed {
                rec,
                bag: counter.into_bag(),
                defs: Vec::new(),
                refs: FxHashMap::default(),
            };
        }
    };
    let head: String = text.chars().take(600).collect();
    rec.class = classify(path, &head);
    rec.lines = u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
    // Only program source is parsed: tests, docs and generated code are demoted anyway, and
    // parsing them would cost as much as the source.
    let lang = if rec.class == FileClass::Source { rec.lang } else { Lang::Other };
    let mut syms = source.find(lang, &text);
    let mut comment_lines = Vec::new();
    symbols::split_comments(rec.lang, &text, |line, comment| {
        comment_lines.push(comment);
        let field = if comment { Field::Comments } else { Field::Body };
        for (_, word) in tokenize::words(line) {
            counter.add_word(field, word);
        }
    });
    let lines: Vec<&str> = text.lines().collect();
    for def in &mut syms.defs {
        if def.doc.is_none() {
            def.doc = doc_near(&lines, &comment_lines, def.start as usize);
        }
        tokenize::for_each_term(&def.name, |t| counter.add_term(Field::Defs, t));
    }
    let mut counted: FxHashMap<&str, u32> = FxHashMap::default();
    for r in syms.refs {
        counter.add_word(Field::Refs, r);
        *counted.entry(r).or_default() += 1;
    }
    let refs = counted.into_iter().map(|(r, n)| (r.to_owned(), n)).collect();
    rec.field_len = counter.field_len;
    Parsed { rec, bag: counter.into_bag(), defs: syms.defs, refs }
}

/// The term counts of one file. The terms of each distinct word are kept as slots of the
/// file's counts: words repeat a lot, and splitting, lower-casing and stemming them again, or
/// looking each of their terms up again, was most of the indexing work.
#[derive(Default)]
struct Counter<'t> {
    slots: FxHashMap<String, u32>,
    counts: Vec<[u32; 5]>,
    /// Each distinct word's slots, a range of `word_slots`.
    words: FxHashMap<&'t str, (u32, u32)>,
    word_slots: Vec<u32>,
    field_len: [u32; 5],
}

impl<'t> Counter<'t> {
    fn slot(slots: &mut FxHashMap<String, u32>, counts: &mut Vec<[u32; 5]>, term: &str) -> u32 {
        if let Some(&slot) = slots.get(term) {
            return slot;
        }
        let slot = counts.len() as u32;
        counts.push([0; 5]);
        slots.insert(term.to_owned(), slot);
        slot
    }

    fn add_term(&mut self, field: Field, term: &str) {
        let i = field as usize;
        let slot = Counter::slot(&mut self.slots, &mut self.counts, term);
        self.counts[slot as usize][i] += 1;
        self.field_len[i] += 1;
    }

    fn add_word(&mut self, field: Field, word: &'t str) {
        let i = field as usize;
        let Counter { slots, counts, words, word_slots, field_len } = self;
        let &mut (start, end) = words.entry(word).or_insert_with(|| {
            let start = word_slots.len() as u32;
            tokenize::for_each_term(word, |t| word_slots.push(Counter::slot(slots, counts, t)));
            (start, word_slots.len() as u32)
        });
        for &slot in &word_slots[start as usize..end as usize] {
            counts[slot as usize][i] += 1;
        }
        field_len[i] += end - start;
    }

    /// The terms with their counts, sorted by term.
    fn into_bag(self) -> Bag {
        let Counter { slots, counts, .. } = self;
        let mut bag: Bag = slots.into_iter().map(|(t, slot)| (t, counts[slot as usize])).collect();
        bag.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        bag
    }
}

/// The first line of the comment block right above line `start` (1-based),
/// or of a docstring right below it.
fn doc_near(lines: &[&str], comment: &[bool], start: usize) -> Option<String> {
    let at = start.checked_sub(1)?;
    let mut first = None;
    let mut i = at;
    while i > 0 && comment.get(i - 1) == Some(&true) {
        i -= 1;
        first = Some(i);
    }
    let pick = |i: usize| clean_doc(lines.get(i)?);
    if let Some(i) = first {
        return (i..at).find_map(pick);
    }
    let mut j = at + 1;
    while j < lines.len() && j <= at + 3 {
        if comment.get(j) == Some(&true) {
            return (j..lines.len().min(j + 3)).find_map(pick);
        }
        j += 1;
    }
    None
}

fn clean_doc(line: &str) -> Option<String> {
    let t = line
        .trim()
        .trim_start_matches(['/', '*', '#', '!', '"', '\'', '-', ' '])
        .trim_end_matches(['*', '/', '"', '\'', ' '])
        .trim();
    let useful = t.chars().filter(|c| c.is_alphanumeric()).count() >= 3;
    useful.then(|| t.chars().take(160).collect())
}

/// Postings in a block between two skip entries.
const SKIP_BLOCK: usize = 32;

/// A file's postings part: the length of its skip table, the skip table, then the postings.
///
/// The postings are sorted by term: varint term-id delta, a byte of fields present, then a
/// varint frequency per present field. Every [`SKIP_BLOCK`] postings, the skip table has an
/// entry (the term id before the block and the block's byte offset in the postings, each as
/// a varint delta from the previous entry), so that a query passes over the blocks that
/// cannot hold its terms instead of decoding them.
fn encode_postings(ids: &[(u32, [u32; 5])]) -> Vec<u8> {
    let mut stream = Vec::with_capacity(ids.len() * 3);
    let mut skips = Vec::new();
    let (mut prev, mut last_skip) = (0u32, (0u32, 0u32));
    for (k, (id, tf)) in ids.iter().enumerate() {
        if k > 0 && k % SKIP_BLOCK == 0 {
            let offset = u32::try_from(stream.len()).unwrap_or(u32::MAX);
            put_varint(&mut skips, prev - last_skip.0);
            put_varint(&mut skips, offset - last_skip.1);
            last_skip = (prev, offset);
        }
        put_varint(&mut stream, id - prev);
        prev = *id;
        let mask = tf.iter().enumerate().fold(0u8, |m, (i, n)| if *n > 0 { m | 1 << i } else { m });
        stream.push(mask);
        for n in tf.iter().filter(|n| **n > 0) {
            put_varint(&mut stream, *n);
        }
    }
    let mut out = Vec::with_capacity(skips.len() + stream.len() + 3);
    put_varint(&mut out, u32::try_from(skips.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(&skips);
    out.extend_from_slice(&stream);
    out
}

/// The skip table and the postings of a postings part (see [`encode_postings`]); a damaged
/// part gives what it can.
fn split_postings(part: &[u8]) -> (Skips<'_>, PostingIter<'_>) {
    let mut header = PostingIter::new(part);
    let len = header.varint().unwrap_or(0) as usize;
    let start = header.pos.min(part.len());
    let end = start.saturating_add(len).min(part.len());
    let skips = Skips { varints: PostingIter::new(&part[start..end]), last: (0, 0) };
    (skips, PostingIter::new(&part[end..]))
}

/// The entries of a skip table: the term id before a block and the block's offset.
pub(crate) struct Skips<'a> {
    varints: PostingIter<'a>,
    last: (u32, usize),
}

impl Iterator for Skips<'_> {
    type Item = (u32, usize);

    fn next(&mut self) -> Option<(u32, usize)> {
        let (prev, offset) = (self.varints.varint()?, self.varints.varint()?);
        self.last = (self.last.0.wrapping_add(prev), self.last.1.saturating_add(offset as usize));
        Some(self.last)
    }
}

/// Appends to `hits` a file's frequencies of the query terms `query` (term id and query
/// index, sorted by id), found in its postings part, as (query index, frequency per field):
/// the postings are read only in the blocks that may hold a query term.
pub(crate) fn match_postings(
    part: &[u8],
    query: &[(u32, usize)],
    hits: &mut Vec<(usize, [u32; 5])>,
) {
    let (mut skips, mut it) = split_postings(part);
    let mut pending = skips.next();
    let mut cur = it.next();
    for &(q, at) in query {
        let Some((id, _)) = cur else { return };
        if id < q {
            // The furthest block ahead that starts after a term below `q`: nothing before it
            // can be `q`.
            let mut target = None;
            while let Some((prev, offset)) = pending {
                if prev >= q {
                    break;
                }
                if offset > it.pos {
                    target = Some((prev, offset));
                }
                pending = skips.next();
            }
            if let Some((prev, offset)) = target {
                it.pos = offset;
                it.prev = prev;
                cur = it.next();
            }
            while cur.is_some_and(|(id, _)| id < q) {
                cur = it.next();
            }
        }
        match cur {
            Some((id, tf)) if id == q => hits.push((at, tf)),
            Some(_) => {}
            None => return,
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Decodes a posting list: `(term id, frequency per field)`.
pub(crate) struct PostingIter<'a> {
    bytes: &'a [u8],
    pos: usize,
    prev: u32,
}

impl<'a> PostingIter<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> PostingIter<'a> {
        PostingIter { bytes, pos: 0, prev: 0 }
    }

    fn varint(&mut self) -> Option<u32> {
        let mut n = 0u32;
        let mut shift = 0;
        loop {
            let b = *self.bytes.get(self.pos)?;
            self.pos += 1;
            n |= u32::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(n);
            }
            shift += 7;
            if shift > 28 {
                return None;
            }
        }
    }
}

impl Iterator for PostingIter<'_> {
    type Item = (u32, [u32; 5]);

    fn next(&mut self) -> Option<Self::Item> {
        let delta = self.varint()?;
        self.prev = self.prev.checked_add(delta)?;
        let mask = *self.bytes.get(self.pos)?;
        self.pos += 1;
        let mut tf = [0u32; 5];
        for (i, slot) in tf.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *slot = self.varint()?;
            }
        }
        Some((self.prev, tf))
    }
}

impl Error {
    fn store(e: ctx_fs::Error) -> Error {
        Error::new(ErrorKind::Store, e)
    }

    fn fs(e: ctx_fs::Error) -> Error {
        Error::new(ErrorKind::Walk, e)
    }
}

/// Definitions as stored in a file's part: per definition, varints of symbol, kind, first
/// line, length in lines, and doc range (start, length).
fn encode_defs(defs: &[DefRec]) -> Vec<u8> {
    let mut out = Vec::with_capacity(defs.len() * 8);
    for d in defs {
        put_varint(&mut out, d.sym);
        put_varint(&mut out, u32::from(d.kind));
        put_varint(&mut out, d.start);
        put_varint(&mut out, d.end.wrapping_sub(d.start));
        put_varint(&mut out, d.doc.0);
        put_varint(&mut out, d.doc.1.wrapping_sub(d.doc.0));
    }
    out
}

/// References as stored in a file's part: symbol ids as deltas (the list is sorted), each
/// followed by its count.
fn encode_refs(refs: &[(u32, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(refs.len() * 3);
    let mut prev = 0u32;
    for &(sym, count) in refs {
        put_varint(&mut out, sym.wrapping_sub(prev));
        put_varint(&mut out, count);
        prev = sym;
    }
    out
}

/// The definitions of a file, decoded as they are read (see [`encode_defs`]); a truncated
/// one ends the list.
pub(crate) struct Defs<'a>(PostingIter<'a>);

impl Iterator for Defs<'_> {
    type Item = DefRec;

    fn next(&mut self) -> Option<DefRec> {
        let v = &mut self.0;
        let (sym, kind, start) = (v.varint()?, v.varint()?, v.varint()?);
        let (lines, doc, doc_len) = (v.varint()?, v.varint()?, v.varint()?);
        Some(DefRec {
            sym,
            kind: u16::try_from(kind).unwrap_or(u16::MAX),
            start,
            end: start.wrapping_add(lines),
            doc: (doc, doc.wrapping_add(doc_len)),
        })
    }
}

/// The references of a file, decoded as they are read (see [`encode_refs`]).
pub(crate) struct Refs<'a> {
    varints: PostingIter<'a>,
    prev: u32,
}

impl Iterator for Refs<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        let (delta, count) = (self.varints.varint()?, self.varints.varint()?);
        self.prev = self.prev.wrapping_add(delta);
        Some((self.prev, count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let mut names = Names::default();
        assert_eq!(names.iter().count(), 0);
        for n in ["retri", "timeout", "é"] {
            names.push(n);
        }
        assert_eq!(names.iter().collect::<Vec<_>>(), ["retri", "timeout", "é"]);
        assert_eq!(names.len(), 3);
    }

    #[test]
    fn tables_find_names_by_id() {
        let mut table = Table::default();
        assert_eq!(table.get(0), "");
        for n in ["retri", "", "é"] {
            table.push(n);
        }
        let decoded: Table = postcard::from_bytes(&postcard::to_stdvec(&table).unwrap()).unwrap();
        for t in [&table, &decoded] {
            assert_eq!((t.get(0), t.get(1), t.get(2), t.get(3)), ("retri", "", "é", ""));
            assert_eq!(t.iter().collect::<Vec<_>>(), ["retri", "", "é"]);
        }
        let mut torn = Names::default();
        torn.push("a");
        torn.len = 2;
        assert!(postcard::from_bytes::<Table>(&postcard::to_stdvec(&torn).unwrap()).is_err());
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // The test writes its tree.
    fn the_stored_graph_names_definers_and_referencers() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write("a.rs", "pub fn shared_helper() {}\npub fn only_a() { shared_helper(); }\n");
        write("b.rs", "pub fn shared_helper() {}\n");
        write("c.rs", "fn main() { shared_helper(); shared_helper(); only_a(); }\n");
        let sandbox = Sandbox::builder(dir.path().to_str().unwrap())
            .open(cap_std::ambient_authority())
            .unwrap();
        let (index, _) = Index::build(&sandbox).unwrap();
        let id = |name: &str| index.symbol_ids(&[name])[0].unwrap();
        let paths = |files: Vec<u32>| -> Vec<&str> {
            files.into_iter().map(|i| index.files()[i as usize].path.as_str()).collect()
        };
        assert_eq!(paths(index.definers(id("shared_helper")).collect()), ["a.rs", "b.rs"]);
        assert_eq!(paths(index.definers(id("only_a")).collect()), ["a.rs"]);
        let users: Vec<(u32, u32)> = index.referencers(id("shared_helper")).collect();
        let c = index.files().iter().position(|f| f.path == "c.rs").unwrap() as u32;
        let a = index.files().iter().position(|f| f.path == "a.rs").unwrap() as u32;
        assert_eq!(users, [(a, 1), (c, 2)]);
        // A symbol past the table has neither.
        assert_eq!(index.definers(u32::MAX).len(), 0);
        assert_eq!(index.referencers(index.symbol_count() as u32).len(), 0);
        // The stored copy answers the same.
        let stored = Index::decode(&index.encode()).unwrap();
        let sym = id("shared_helper");
        assert_eq!(
            stored.definers(sym).collect::<Vec<_>>(),
            index.definers(sym).collect::<Vec<_>>()
        );
        assert_eq!(stored.referencers(sym).collect::<Vec<_>>(), users);
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
        let mut damaged = whole.clone();
        damaged[150] ^= 1;
        assert_ne!(payload_sum(&[&damaged]), sum);
    }

    proptest::proptest! {
        #[test]
        fn skipping_finds_what_a_full_merge_finds(
            ids in proptest::collection::btree_set(0u32..5_000, 0..400),
            query in proptest::collection::btree_set(0u32..5_200, 0..40),
            seed in 0u32..1000,
        ) {
            let postings: Vec<(u32, [u32; 5])> = ids
                .iter()
                .map(|&id| (id, [id % 3, 0, (id + seed) % 2, 1, id % 200]))
                .collect();
            let query: Vec<(u32, usize)> = query.into_iter().enumerate().map(|(i, q)| (q, i)).collect();
            let part = encode_postings(&postings);
            let mut found = Vec::new();
            match_postings(&part, &query, &mut found);
            let want: Vec<(usize, [u32; 5])> = query
                .iter()
                .filter_map(|&(q, at)| postings.iter().find(|(id, _)| *id == q).map(|(_, tf)| (at, *tf)))
                .collect();
            proptest::prop_assert_eq!(found, want);
            proptest::prop_assert_eq!(split_postings(&part).1.collect::<Vec<_>>(), postings);
        }
    }

    #[test]
    fn postings_round_trip() {
        let ids = vec![(0, [1, 0, 0, 0, 2]), (5, [0, 0, 300, 0, 0]), (1000, [0, 1, 0, 1, 0])];
        assert_eq!(split_postings(&encode_postings(&ids)).1.collect::<Vec<_>>(), ids);
    }

    #[test]
    fn docs_above_and_below() {
        let lines = ["// Retries.", "fn a() {}", "def b():", "    \"\"\"Sends it.\"\"\""];
        let comment = [true, false, false, true];
        assert_eq!(doc_near(&lines, &comment, 2).as_deref(), Some("Retries."));
        assert_eq!(doc_near(&lines, &comment, 3).as_deref(), Some("Sends it."));
    }
}
