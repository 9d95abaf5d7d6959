//! Bringing an index up to date with its workspace: the files whose stamp changed are read
//! again on every core and given term and symbol ids in the files' order, the files that are
//! gone are dropped, and the blob, the dictionary and the graph are rebuilt when worth it.

use std::sync::{PoisonError, RwLock};
use std::time::Instant;

use ctx_fs::{FileKind, Sandbox, Walk, WalkEntry};

use super::blob::{Blob, Stream};
use super::change::{Change, moves};
use super::edges::{Edges, WINDOW};
use super::intern::{Found, Interner, look_up};
use super::lists::TermLists;
use super::names::{Names, find};
use super::parse::{mtime_of, parse_entry};
use super::parts::{DefRec, Owned, Parts, encode_defs, encode_refs};
use super::postings::{encode_postings, split_postings};
use super::{FileRec, Index, IndexSettings, UpdateStats};
use crate::error::{Error, Result};
use crate::hash::{SeededMap, SeededSet};
use crate::symbols::SymbolSource;

/// Where the parts of the files read go: memory (placed in the blob after the interning), or
/// the stream of a cold build with the edges of its graph.
enum Sink<'a, 's> {
    Memory(Vec<u8>),
    Stream(&'a mut Stream<'s>, Edges),
}

/// What the files read so far went to: the names met, where the parts went, the counts.
struct Intake<'a, 's> {
    it: Interner,
    sink: Sink<'a, 's>,
    stats: UpdateStats,
}

/// What an update found, before the files it must read are read: the new file list from
/// place `at` (a kept record, or a slot for a file to read; the index's files are the others,
/// the list goes in at `at`), the files to read with their slots, the change so far
/// (tombstones) and the counts.
pub(super) struct Listed<'w> {
    pub(super) files: Vec<Option<(FileRec, bool)>>,
    pub(super) at: usize,
    pub(super) todo: Vec<(usize, &'w WalkEntry)>,
    pub(super) change: Change,
    pub(super) stats: UpdateStats,
    pub(super) started: Instant,
}

/// Whether a record's stamp is the entry's: the file need not be read again.
pub(super) fn same_stamp(rec: &FileRec, entry: &WalkEntry) -> bool {
    rec.len == entry.len && rec.mtime == mtime_of(entry) && rec.inode == entry.inode
}

/// Frees a walk on a thread of its own: a walk of 10^6 files holds two strings a file, whose
/// freeing (about a tenth of a second) the answer need not wait for.
pub(super) fn drop_aside(walk: Walk) {
    if walk.entries.len() < 10_000 {
        return drop(walk);
    }
    // When no thread can be started, the walk is freed here, as the closure is dropped.
    let _ = std::thread::Builder::new().name("ctx-free".into()).spawn(move || drop(walk));
}

/// Files read and parsed together before their terms are interned.
const PARSE_BATCH: usize = if cfg!(test) { 16 } else { 512 };

/// Entries of the walk a cold build may hold beyond those left to read before it gives
/// their memory back ([`Index::build_streamed`]).
pub(super) const COLD_CHUNK: usize = if cfg!(test) { 100 } else { 32_768 };

/// The files of a walk handed out one at a time from the end of a list kept in reverse, whose
/// memory is given back as it empties (at most [`COLD_CHUNK`] entries' worth held beyond
/// those left).
struct Shrinking(Vec<WalkEntry>);

impl Iterator for Shrinking {
    type Item = WalkEntry;

    fn next(&mut self) -> Option<WalkEntry> {
        let entry = self.0.pop()?;
        if self.0.capacity() > 2 * self.0.len() + COLD_CHUNK {
            self.0.shrink_to_fit();
        }
        Some(entry)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.0.len(), Some(self.0.len()))
    }
}

impl Index {
    /// Builds a fresh in-memory index of the sandbox's workspace, its symbols scanned
    /// ([`SymbolSource::Scan`]) and data files left out.
    pub fn build(sandbox: &Sandbox) -> Result<(Index, UpdateStats)> {
        Index::build_with(sandbox, SymbolSource::default())
    }

    /// [`Index::build`] with other settings: the symbols from another source (a
    /// [`SymbolSource`]), data files taken in ([`IndexSettings`]).
    pub fn build_with(
        sandbox: &Sandbox,
        settings: impl Into<IndexSettings>,
    ) -> Result<(Index, UpdateStats)> {
        let mut index = Index::new(settings);
        let stats = index.refresh(sandbox)?;
        Ok((index, stats))
    }

    /// Brings the index up to date with the workspace: walks it, reads the
    /// files whose stamp changed, drops the files that are gone.
    pub fn refresh(&mut self, sandbox: &Sandbox) -> Result<UpdateStats> {
        let walk = sandbox.walk_parallel(&sandbox.workspace()).map_err(Error::fs)?;
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
            let walk = scope.spawn(|| sandbox.walk_parallel(&sandbox.workspace()));
            let early = (!this.is_empty()).then(|| f(this));
            (walk.join(), early)
        });
        let walk = match walk {
            Ok(walk) => walk.map_err(Error::fs)?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let stats = self.refresh_from(sandbox, &walk)?;
        drop_aside(walk);
        let answer = match early {
            Some(answer) if stats.indexed == 0 && stats.removed == 0 => answer,
            _ => f(self),
        };
        Ok((stats, answer))
    }

    /// [`Index::refresh`] with the walk of the workspace already made.
    pub(super) fn refresh_from(&mut self, sandbox: &Sandbox, walk: &Walk) -> Result<UpdateStats> {
        let started = Instant::now();
        let mut change = Change { before: self.mark(), ..Change::default() };
        self.data.root = sandbox.root_path(sandbox.workspace().root()).as_str().to_owned();
        // A file reached through a link changes without a change under its own path: only a
        // walk of everything sees it (see `Index::refresh_paths`).
        self.walked_links = Some(walk.entries.iter().any(|e| e.via_symlink));
        let mut stats = UpdateStats { truncated: walk.truncated, ..UpdateStats::default() };
        if self.unchanged(walk) {
            // Nothing to read or drop: the records stay where they are.
            stats.reused = self.data.files.len();
            let kept = (self.lists.take(), self.path_order.take());
            self.settle(change, &mut stats, self.data.terms.len(), kept);
            stats.elapsed = started.elapsed();
            return Ok(stats);
        }
        let mut entries = walk.files().peekable();
        let mut files = Vec::with_capacity(self.data.files.len());
        let mut todo = Vec::new();
        // The index lists its files in the walk's order: while the walk and the index name the
        // same path at the same place (every file, when nothing was added or removed), the
        // stamps are compared in that order, without a map of the paths.
        let mut records = std::mem::take(&mut self.data.files).into_iter().enumerate().peekable();
        while let Some((place, rec)) =
            records.next_if(|(_, rec)| entries.peek().is_some_and(|e| e.path.as_str() == rec.path))
        {
            let Some(entry) = entries.next() else { break };
            if same_stamp(&rec, entry) {
                stats.reused += 1;
                files.push(Some((rec, false)));
            } else {
                change.removed.push(rec.path);
                change.gone.push((place as u32, rec.parts));
                todo.push((files.len(), entry));
                files.push(None);
            }
        }
        // The rest by path: keyed by the path moved out of each record (and put back when it
        // is kept), with its place.
        let mut old: SeededMap<String, (u32, FileRec)> =
            records.map(|(i, mut f)| (std::mem::take(&mut f.path), (i as u32, f))).collect();
        for entry in entries {
            match old.remove_entry(entry.path.as_str()) {
                Some((path, (_, mut rec))) if same_stamp(&rec, entry) => {
                    rec.path = path;
                    stats.reused += 1;
                    files.push(Some((rec, false)));
                }
                found => {
                    // A file read again replaces its record: a tombstone for the old one.
                    if let Some((path, (place, rec))) = found {
                        change.removed.push(path);
                        change.gone.push((place, rec.parts));
                    }
                    todo.push((files.len(), entry));
                    files.push(None);
                }
            }
        }
        stats.removed = old.len();
        // In their places' order, not the map's.
        let mut old: Vec<_> = old.into_iter().collect();
        old.sort_unstable_by_key(|(_, (place, _))| *place);
        for (path, (place, rec)) in old {
            change.removed.push(path);
            change.gone.push((place, rec.parts));
        }
        self.take_in(sandbox, Listed { files, todo, change, stats, started, at: 0 })
    }

    /// Whether `walk` lists exactly the index's files, in its order, each with its stamp: the
    /// usual answer for a query, found without moving or hashing a record.
    fn unchanged(&self, walk: &Walk) -> bool {
        let mut entries = walk.files();
        let same = self.data.files.iter().all(|rec| {
            entries.next().is_some_and(|e| e.path.as_str() == rec.path && same_stamp(rec, e))
        });
        same && entries.next().is_none()
    }

    /// Builds a blank index ([`Index::is_blank`]: a cold build) from `walk`, the parts of its
    /// files and its symbol graph put in `out` as they are made instead of in memory (the
    /// index's blob stays empty until `out` is stored and mapped). The walk's entries are read
    /// a chunk at a time and each chunk dropped once read, so that memory holds the tables and
    /// the graph's edges, not the walk, the files' terms or their parts.
    pub(super) fn build_streamed(
        &mut self,
        sandbox: &Sandbox,
        walk: Walk,
        out: &mut Stream<'_>,
    ) -> Result<UpdateStats> {
        let started = Instant::now();
        let before = self.mark();
        self.data.root = sandbox.root_path(sandbox.workspace().root()).as_str().to_owned();
        self.walked_links = Some(walk.entries.iter().any(|e| e.via_symlink));
        let stats = UpdateStats { truncated: walk.truncated, ..UpdateStats::default() };
        let mut entries: Vec<WalkEntry> =
            walk.entries.into_iter().filter(|e| e.kind == FileKind::File).collect();
        // Files are taken from the end, so that the entries left keep their place.
        entries.reverse();
        let mut files = Vec::with_capacity(entries.len());
        let mut intake =
            Intake { it: self.interner(), sink: Sink::Stream(out, Edges::default()), stats };
        // One pass with threads started once: their memo of stems lasts the whole build.
        let taken = Shrinking(entries);
        self.read_in(sandbox, taken, |e| e, &mut intake, |_, rec| files.push(rec));
        let Intake { it, sink, mut stats } = intake;
        self.give_back(it);
        let edges = match sink {
            Sink::Stream(_, edges) => edges,
            Sink::Memory(_) => Edges::default(),
        };
        let change =
            Change { before, fresh: (0..files.len() as u32).collect(), ..Change::default() };
        self.data.files = files;
        self.seal_into(out, edges, change, &mut stats);
        stats.elapsed = started.elapsed();
        Ok(stats)
    }

    /// The interner of a refresh: empty maps over the tables as they are, the term table lent
    /// to it (given back by [`Index::give_back`]).
    fn interner(&mut self) -> Interner {
        Interner::new(std::mem::take(&mut self.data.terms), self.data.symbols.len())
    }

    /// Takes back the term table an interner was lent; returns the table's size before the
    /// refresh.
    fn give_back(&mut self, it: Interner) -> usize {
        self.data.terms = it.names;
        it.base_terms
    }

    /// Reads the files of `listed.todo` on every core, gives them ids and places their parts,
    /// then drops the files that are gone and rebuilds what is worth rebuilding.
    pub(super) fn take_in(&mut self, sandbox: &Sandbox, listed: Listed<'_>) -> Result<UpdateStats> {
        let Listed { mut files, at, todo, mut change, stats, started } = listed;
        let kept = (self.lists.take(), self.path_order.take());
        let keys = self.keys.take();
        let mut intake = Intake { it: self.interner(), sink: Sink::Memory(Vec::new()), stats };
        self.read_in(
            sandbox,
            todo.iter(),
            |t| t.1,
            &mut intake,
            |k, rec| {
                files[todo[k].0] = Some((rec, true));
            },
        );
        let Intake { it, sink, mut stats } = intake;
        let base_terms = self.give_back(it);
        let fresh = match sink {
            Sink::Memory(fresh) => fresh,
            Sink::Stream(..) => Vec::new(),
        };
        // The new parts go after the ones the blob holds.
        let base = self.blob.len() as u64;
        if self.blob.extra.is_empty() {
            self.blob.extra = fresh;
        } else {
            self.blob.extra.extend_from_slice(&fresh);
        }
        let files = files.into_iter().flatten().map(|(mut f, is_fresh)| {
            if is_fresh {
                f.parts.start += base;
            }
            f
        });
        self.data.files.splice(at..at, files);
        change.fresh = todo.iter().map(|&(i, _)| (at + i) as u32).collect();
        // The files by name stay when every path kept its place: the files read are the files
        // dropped, by path (a file saved again, the usual change).
        if let Some(mut keys) = keys
            && change.removed.len() == change.fresh.len()
            && {
                let removed: SeededSet<&str> = change.removed.iter().map(String::as_str).collect();
                let files = &self.data.files;
                change.fresh.iter().all(|&p| removed.contains(files[p as usize].path.as_str()))
            }
            && keys.follow(&self.data.files, &change.fresh)
        {
            self.keys = keys.into();
        }
        self.settle(change, &mut stats, base_terms, kept);
        stats.elapsed = started.elapsed();
        Ok(stats)
    }

    /// Reads the files of `items` (each an entry of the walk, by `entry`) on every core, by
    /// threads that live through the whole call, each of which also looks its file's names up
    /// in the ids given so far ([`look_up`]); the names not found are given ids here, in the
    /// files' order (so the index does not depend on timing) and in batches, so that only the
    /// new names of a batch and the files read ahead of it are held as strings. `put(k, rec)`
    /// takes the record of the `k`th item, whose parts went to the intake's sink and whose
    /// place in the new file list is `k` (as for a cold build) or says where it goes.
    fn read_in<T: Send>(
        &mut self,
        sandbox: &Sandbox,
        items: impl Iterator<Item = T> + Send,
        entry: impl Fn(&T) -> &WalkEntry + Sync,
        intake: &mut Intake<'_, '_>,
        mut put: impl FnMut(usize, FileRec),
    ) {
        let settings = self.settings();
        let shared = RwLock::new(std::mem::take(&mut intake.it));
        let mut batch: Vec<Found> = Vec::with_capacity(PARSE_BATCH.min(items.size_hint().0));
        let (stats, sink) = (&mut intake.stats, &mut intake.sink);
        let mut take = |batch: &mut Vec<Found>, start: usize| {
            stats.indexed += batch.len();
            {
                // The readers wait while the batch's new names are given ids.
                let mut it = shared.write().unwrap_or_else(PoisonError::into_inner);
                self.resolve(&mut it, batch);
                for found in batch.iter_mut() {
                    it.assign(&mut self.data.symbols, found);
                }
            }
            for (k, found) in batch.drain(..).enumerate() {
                let slot = (start + k) as u32;
                put(start + k, self.intern(found, sink, slot));
            }
        };
        let mut start = 0;
        crate::par::for_each_ordered(
            items,
            64,
            |item| look_up(&shared, parse_entry(sandbox, entry(&item), settings)),
            |k, found| {
                batch.push(found);
                if batch.len() == PARSE_BATCH {
                    take(&mut batch, start);
                    start = k + 1;
                }
            },
        );
        take(&mut batch, start);
        intake.it = shared.into_inner().unwrap_or_else(PoisonError::into_inner);
    }

    /// After the files changed: the blob and the dictionary rebuilt when worth it, the change
    /// kept for the store, the graph, the postings by term and the order of the paths (`kept`,
    /// taken before the update) followed in place (or built again when they cannot be).
    fn settle(
        &mut self,
        mut change: Change,
        stats: &mut UpdateStats,
        base_terms: usize,
        kept: (Option<TermLists>, Option<Vec<u32>>),
    ) {
        let live: u64 = self.data.files.iter().map(|f| f.parts.len()).sum();
        let changed = stats.indexed > 0 || stats.removed > 0;
        if changed && self.blob.len() as u64 > live + live / 4 {
            self.rebuild_blob(|parts, bytes| (parts.postings, bytes.to_vec()));
            change.rewritten = true;
        }
        if base_terms == 0 {
            self.data.live_terms = self.data.terms.len() as u32;
        } else if self.data.terms.len() > 2 * self.data.live_terms as usize {
            change.rewritten |= self.compact();
        }
        change.gone.sort_unstable_by_key(|(place, _)| *place);
        let before = change.before.files as usize;
        let moved = moves(before, &change.gone, &change.fresh);
        // A rebuilt blob has no graph yet (and the parts of the files gone are not in it).
        let followed = changed
            && !change.rewritten
            && self.follow_graph(&change.gone, &change.fresh, before, moved.as_deref());
        self.follow_lists(kept, &change, moved.as_deref());
        // Once stored, the index keeps what changed since, for the next store's segment.
        if self.stored.is_some() {
            let files = &self.data.files;
            let read = change.fresh.iter().filter_map(|&f| files.get(f as usize));
            change.read = read.map(|f| f.path.clone()).collect();
        }
        self.change = Some(match (self.stored.is_some(), self.change.take()) {
            (true, Some(before)) => before.then(change, moved.as_deref()),
            _ => change,
        });
        let graphless = self.blob.graph.is_none() && self.blob.stored_graph.is_empty();
        if (changed && !followed) || (graphless && !self.data.files.is_empty()) {
            self.seal();
        }
        stats.files = self.data.files.len();
    }

    /// Ends a streamed cold build: the symbol graph, from the edges gathered while the files
    /// were interned, goes to `out` after the parts (as [`Index::seal`] would build it from
    /// them), and the change is kept.
    fn seal_into(
        &mut self,
        out: &mut Stream<'_>,
        edges: Edges,
        change: Change,
        stats: &mut UpdateStats,
    ) {
        self.data.live_terms = self.data.terms.len() as u32;
        if stats.indexed > 0 {
            let parts = out.len();
            let (parts_graph, definitions) =
                edges.write(self.data.symbols.len(), WINDOW, |values| out.put_u32s(values));
            self.data.definitions = definitions;
            self.data.blob_len = parts;
            self.data.graph = parts_graph;
        }
        self.change = Some(change);
        stats.files = self.data.files.len();
    }

    /// Finds the names of `batch` that no reader found and the stored tables already hold, in
    /// one pass over each. With no stored tables (a build from nothing) there is nothing to
    /// find.
    fn resolve(&self, it: &mut Interner, batch: &[Found]) {
        if it.base_terms > 0 {
            let mut terms: SeededSet<&[u8]> = SeededSet::default();
            for f in batch {
                let new = f.new_terms.iter().map(|(_, t)| t.as_str());
                let known = |t: &&str| it.terms.get(&it.names, t).is_some();
                terms.extend(new.filter(|t| !known(t)).map(str::as_bytes));
            }
            let table = it.names.iter_bytes().take(it.base_terms);
            let ids = &mut it.terms;
            find(table, &mut terms, |name, id, at| ids.insert(name, id, at));
        }
        if it.base_syms > 0 {
            let mut syms: SeededSet<&[u8]> = SeededSet::default();
            for f in batch {
                let names = f.new_syms.iter().map(|(_, s)| s.as_str());
                syms.extend(names.filter(|n| !it.syms.contains_key(*n)).map(str::as_bytes));
            }
            let symbols = self.data.symbols.names.iter_bytes().take(it.base_syms);
            let ids = &mut it.syms;
            find(symbols, &mut syms, |name, id, _| {
                ids.insert(name.to_owned(), id);
            });
        }
    }

    /// Places the parts of a file whose names all have their ids.
    fn intern(&mut self, found: Found, sink: &mut Sink, slot: u32) -> FileRec {
        let Found { mut rec, mut terms, syms, defs, ref_counts, .. } = found;
        // The bag was sorted by term, so that the same tree gives the same ids and bytes.
        terms.sort_unstable_by_key(|(id, _)| *id);
        let mut owned = Owned { postings: encode_postings(&terms), ..Owned::default() };
        let mut docs = String::new();
        let defs: Vec<DefRec> = defs
            .into_iter()
            .zip(&syms)
            .map(|(d, &sym)| {
                let doc = match d.doc {
                    Some(doc) => {
                        let start = docs.len() as u32;
                        docs.push_str(&doc);
                        (start, docs.len() as u32)
                    }
                    None => (0, 0),
                };
                DefRec { sym, kind: self.kind_id(d.kind), start: d.start, end: d.end, doc }
            })
            .collect();
        owned.defs = encode_defs(&defs);
        owned.docs = docs;
        let mut refs: Vec<(u32, u32)> =
            syms.get(defs.len()..).unwrap_or_default().iter().copied().zip(ref_counts).collect();
        refs.sort_unstable();
        owned.refs = encode_refs(&refs);
        rec.parts = match sink {
            Sink::Memory(fresh) => owned.place(fresh),
            Sink::Stream(out, edges) => {
                let syms = defs.iter().map(|d| d.sym);
                edges.add(slot, syms, refs.iter().copied(), usize::MAX);
                owned.place_in(out)
            }
        };
        rec
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
    /// in use are counted and, if fewer than half, renumbered (then it returns true).
    fn compact(&mut self) -> bool {
        let mut used = vec![false; self.data.terms.len()];
        for f in &self.data.files {
            for (id, _) in self.postings(f) {
                used[id as usize] = true;
            }
        }
        let live = used.iter().filter(|u| **u).count();
        self.data.live_terms = live as u32;
        if live * 2 >= used.len() {
            return false;
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
        true
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
}
