//! The symbol graph: for each symbol, the files that define it and the files that reference
//! it; built from every file's parts once, then followed in place by updates, and read in
//! place by the ranking.
//!
//! An update does not build the graph again (one pass over every file's definitions and
//! references): it patches it ([`Patch`]). The symbols that the files removed, read again or
//! added name get lists of their own, the built graph's entries of that file dropped and the
//! new file's added at its place; the other symbols read the built graph through a map from
//! the places of the files it was built on to their places now (kept files keep their order,
//! so the map is monotone and every list stays in file order). The lists are then exactly the
//! ones a graph built from scratch holds, which is what a whole write stores
//! ([`Index::graph_bytes`]); past [`MAX_PATCHED_FILES`] files changed since it was built, the
//! graph is built again.

use std::borrow::Cow;
use std::ops::Range;

use super::Index;
use super::blob::{GraphParts, Section};
use super::change::GONE;
use super::edges::Edges;
use super::parts::{Defs, Parts, Refs};
use crate::hash::{FxHashMap, FxHashSet};

/// Files removed, read again or added since the graph was built past which an update builds
/// it again instead of patching it.
const MAX_PATCHED_FILES: usize = 4096;

/// The changes to a built graph since it was built (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct Patch {
    /// Where the built graph lies in the blob's graph bytes.
    base: GraphParts,
    /// The place now of each file the built graph names.
    map: Vec<u32>,
    /// The definers, in file order, of the symbols that have lists of their own.
    defs: FxHashMap<u32, Vec<u32>>,
    /// The referencers and counts, in file order, of the symbols that have lists of their own.
    refs: FxHashMap<u32, Vec<(u32, u32)>>,
    /// Entries of all definers and referencers lists now.
    def_entries: u64,
    ref_entries: u64,
    /// Files removed, read again or added since the graph was built.
    changed: usize,
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

impl Index {
    /// Builds the symbol graph of the files (see [`GraphParts`]) in place of the blob's, and
    /// records the blob's length; called when the graph cannot be followed in place.
    pub(super) fn seal(&mut self) {
        let (graph, bytes, definitions) = self.build_graph();
        self.data.definitions = definitions;
        self.data.blob_len = self.blob.len() as u64;
        self.data.graph = graph;
        self.blob.graph = Some(bytes);
        self.patch = None;
    }

    /// The symbol graph of the files from scratch, and how many definitions they hold.
    fn build_graph(&self) -> (GraphParts, Vec<u8>, u64) {
        let nsym = self.data.symbols.len();
        // One pass over the files' parts.
        let mut edges = Edges::default();
        for (i, f) in self.data.files.iter().enumerate() {
            edges.add(i as u32, self.defs(f).map(|d| d.sym), self.refs(f), nsym);
        }
        let mut blob = Vec::new();
        let (graph, definitions) = edges.write(nsym, usize::MAX, |values| {
            blob.extend(values.iter().flat_map(|v| v.to_le_bytes()))
        });
        (graph, blob, definitions)
    }

    /// Follows an update in the graph instead of building it again: `gone` are the places
    /// before the update of the files removed or read again, ascending, with their parts;
    /// `fresh` the places now of the files read, ascending; `before` how many files there
    /// were; `moved` each place before to its place now (`change::moves`). False, the graph
    /// untouched, when it must be built again instead: there is none, or too many files
    /// changed since it was built.
    pub(super) fn follow_graph(
        &mut self,
        gone: &[(u32, Parts)],
        fresh: &[u32],
        before: usize,
        moved: Option<&[u32]>,
    ) -> bool {
        let built = self.blob.graph.is_some() || !self.blob.stored_graph.is_empty();
        let changed = self.patch.as_ref().map_or(0, |p| p.changed) + gone.len() + fresh.len();
        let now = self.data.files.len();
        let fits = before.checked_sub(gone.len()).and_then(|k| k.checked_add(fresh.len()));
        if !built || changed > MAX_PATCHED_FILES || fits != Some(now) || before > GONE as usize {
            return false;
        }
        let mut patch = self.patch.take().unwrap_or_else(|| {
            let base = self.data.graph;
            Box::new(Patch {
                base,
                map: (0..before as u32).collect(),
                // What the graph holds, not what its sections say (a damaged one says more).
                def_entries: self.u32s(base.def_files).len() as u64,
                ref_entries: (self.u32s(base.ref_files).len() / 2) as u64,
                ..Patch::default()
            })
        });
        patch.changed = changed;
        let nsym = self.data.symbols.len();
        let mut definitions = self.data.definitions;
        // The files that went: their entries dropped (places before the update).
        for &(file, parts) in gone {
            let mut syms = FxHashSet::default();
            for d in Defs::new(self.part_of(&parts, 1)) {
                definitions = definitions.saturating_sub(1);
                if (d.sym as usize) < nsym && syms.insert(d.sym) {
                    let list = self.own_defs(&mut patch, d.sym);
                    let before = list.len();
                    list.retain(|&f| f != file);
                    let dropped = (before - list.len()) as u64;
                    // A damaged graph's lists may share entries: counts never wrap.
                    patch.def_entries = patch.def_entries.saturating_sub(dropped);
                }
            }
            for (sym, _) in Refs::new(self.part_of(&parts, 2)).filter(|(s, _)| (*s as usize) < nsym)
            {
                let list = self.own_refs(&mut patch, sym);
                let before = list.len();
                list.retain(|&(f, _)| f != file);
                let dropped = (before - list.len()) as u64;
                patch.ref_entries = patch.ref_entries.saturating_sub(dropped);
            }
        }
        // Every file kept, at its place now.
        if let Some(moved) = moved {
            let to = |f: u32| moved.get(f as usize).copied().unwrap_or(GONE);
            patch.map.iter_mut().for_each(|f| *f = to(*f));
            patch.defs.values_mut().flatten().for_each(|f| *f = to(*f));
            patch.refs.values_mut().flatten().for_each(|(f, _)| *f = to(*f));
        }
        // The files read: their entries added at their places now.
        for &file in fresh {
            let Some(parts) = self.data.files.get(file as usize).map(|f| f.parts) else { continue };
            let mut syms = FxHashSet::default();
            for d in Defs::new(self.part_of(&parts, 1)) {
                definitions += 1;
                if (d.sym as usize) < nsym && syms.insert(d.sym) {
                    let list = self.own_defs(&mut patch, d.sym);
                    let at = list.partition_point(|&f| f < file);
                    list.insert(at, file);
                    patch.def_entries += 1;
                }
            }
            for (sym, count) in
                Refs::new(self.part_of(&parts, 2)).filter(|(s, _)| (*s as usize) < nsym)
            {
                let list = self.own_refs(&mut patch, sym);
                let at = list.partition_point(|&(f, _)| f <= file);
                list.insert(at, (file, count));
                patch.ref_entries += 1;
            }
        }
        self.data.definitions = definitions;
        self.data.blob_len = self.blob.len() as u64;
        self.data.graph = layout(nsym, patch.def_entries, patch.ref_entries);
        self.patch = Some(patch);
        true
    }

    /// The definers list of its own of `sym`, made from the built graph when it has none.
    fn own_defs<'p>(&self, patch: &'p mut Patch, sym: u32) -> &'p mut Vec<u32> {
        let (files, span) = self.base_span(patch.base.def_start, patch.base.def_files, sym, 1);
        let map = &patch.map;
        patch.defs.entry(sym).or_insert_with(|| {
            span.map(|i| map.get(files.get(i) as usize).copied().unwrap_or(GONE)).collect()
        })
    }

    /// The referencers list of its own of `sym`, made from the built graph when it has none.
    fn own_refs<'p>(&self, patch: &'p mut Patch, sym: u32) -> &'p mut Vec<(u32, u32)> {
        let (pairs, span) = self.base_span(patch.base.ref_start, patch.base.ref_files, sym, 2);
        let map = &patch.map;
        patch.refs.entry(sym).or_insert_with(|| {
            span.map(|i| {
                let file = map.get(pairs.get(2 * i) as usize).copied().unwrap_or(GONE);
                (file, pairs.get(2 * i + 1))
            })
            .collect()
        })
    }

    /// The values of a built graph's list and the span of `sym`'s entries in it (entries of
    /// `width` values).
    fn base_span(
        &self,
        starts: Section,
        values: Section,
        sym: u32,
        width: usize,
    ) -> (U32s<'_>, Range<usize>) {
        let values = self.u32s(values);
        let span = self.u32s(starts).span(sym as usize, values.len() / width);
        (values, span)
    }

    /// The bytes of the graph as a graph built from scratch lays them out (what a whole write
    /// stores): the built graph's own when no update patched it.
    pub(super) fn graph_bytes(&self) -> Cow<'_, [u8]> {
        if self.patch.is_none() {
            return Cow::Borrowed(self.blob.graph());
        }
        let nsym = self.data.symbols.len() as u32;
        let (mut def_start, mut def_files) = (Vec::new(), Vec::new());
        let (mut ref_start, mut ref_files) = (Vec::new(), Vec::new());
        for sym in 0..nsym {
            def_start.push(def_files.len() as u32);
            def_files.extend(self.definers(sym));
            ref_start.push((ref_files.len() / 2) as u32);
            ref_files.extend(self.referencers(sym).flat_map(|(f, n)| [f, n]));
        }
        def_start.push(def_files.len() as u32);
        ref_start.push((ref_files.len() / 2) as u32);
        Cow::Owned(graph_of(&def_start, &def_files, &ref_start, &ref_files).1)
    }

    /// The `u32` values of a section of the blob.
    fn u32s(&self, section: Section) -> U32s<'_> {
        let start = usize::try_from(section.start).unwrap_or(usize::MAX);
        let end = start.saturating_add(usize::try_from(section.len).unwrap_or(usize::MAX));
        U32s(self.blob.graph().get(start..end).unwrap_or_default())
    }

    /// Where the built graph lies: the patch's base when an update patched it.
    fn built(&self) -> GraphParts {
        self.patch.as_ref().map_or(self.data.graph, |p| p.base)
    }

    /// The files defining symbol `sym`, each once, in file order.
    pub(crate) fn definers(&self, sym: u32) -> Definers<'_> {
        let last = (self.data.files.len() as u32).saturating_sub(1);
        let own = self.patch.as_ref().and_then(|p| p.defs.get(&sym));
        let g = self.built();
        let files = self.u32s(g.def_files);
        // A damaged index names no file past the last (its answers may be asked for before
        // its checksum is known).
        let span = match own {
            Some(_) => 0..0,
            None if self.data.files.is_empty() => 0..0,
            None => self.u32s(g.def_start).span(sym as usize, files.len()),
        };
        let own = own.map_or(&[][..], Vec::as_slice);
        let map = self.patch.as_ref().map(|p| p.map.as_slice());
        Definers { own: own.iter(), span, files, map, last }
    }

    /// The files referencing symbol `sym`, with how often, in file order.
    pub(crate) fn referencers(&self, sym: u32) -> Referencers<'_> {
        let last = (self.data.files.len() as u32).saturating_sub(1);
        let own = self.patch.as_ref().and_then(|p| p.refs.get(&sym));
        let g = self.built();
        let pairs = self.u32s(g.ref_files);
        let span = match own {
            Some(_) => 0..0,
            None if self.data.files.is_empty() => 0..0,
            None => self.u32s(g.ref_start).span(sym as usize, pairs.len() / 2),
        };
        let own = own.map_or(&[][..], Vec::as_slice);
        let map = self.patch.as_ref().map(|p| p.map.as_slice());
        Referencers { own: own.iter(), span, pairs, map, last }
    }
}

/// The place now of the built graph's file `file`.
fn placed(map: Option<&[u32]>, file: u32, last: u32) -> u32 {
    map.map_or(file, |m| m.get(file as usize).copied().unwrap_or(file)).min(last)
}

/// The files of a symbol's definers list, in file order.
pub(crate) struct Definers<'a> {
    own: std::slice::Iter<'a, u32>,
    span: Range<usize>,
    files: U32s<'a>,
    map: Option<&'a [u32]>,
    last: u32,
}

impl Iterator for Definers<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if let Some(&file) = self.own.next() {
            return Some(file.min(self.last));
        }
        let i = self.span.next()?;
        Some(placed(self.map, self.files.get(i), self.last))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.own.len() + self.span.len();
        (n, Some(n))
    }
}

impl ExactSizeIterator for Definers<'_> {}

/// The files of a symbol's referencers list with their counts, in file order.
pub(crate) struct Referencers<'a> {
    own: std::slice::Iter<'a, (u32, u32)>,
    span: Range<usize>,
    pairs: U32s<'a>,
    map: Option<&'a [u32]>,
    last: u32,
}

impl Iterator for Referencers<'_> {
    type Item = (u32, u32);

    fn next(&mut self) -> Option<(u32, u32)> {
        if let Some(&(file, count)) = self.own.next() {
            return Some((file.min(self.last), count));
        }
        let i = self.span.next()?;
        Some((placed(self.map, self.pairs.get(2 * i), self.last), self.pairs.get(2 * i + 1)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.own.len() + self.span.len();
        (n, Some(n))
    }
}

impl ExactSizeIterator for Referencers<'_> {}

/// The sections of a graph of `nsym` symbols with `defs` definers and `refs` referencers
/// entries, laid out as [`graph_of`] does.
fn layout(nsym: usize, defs: u64, refs: u64) -> GraphParts {
    let starts = 4 * (nsym as u64 + 1);
    let def_start = Section { start: 0, len: starts };
    let def_files = Section { start: starts, len: 4 * defs };
    let ref_start = Section { start: def_files.start + def_files.len, len: starts };
    let ref_files = Section { start: ref_start.start + starts, len: 8 * refs };
    GraphParts { def_start, def_files, ref_start, ref_files }
}

/// The four arrays of a graph one after the other, and where each lies.
fn graph_of(
    def_start: &[u32],
    def_files: &[u32],
    ref_start: &[u32],
    ref_files: &[u32],
) -> (GraphParts, Vec<u8>) {
    let mut blob = Vec::new();
    let mut put = |values: &[u32]| {
        let start = blob.len() as u64;
        blob.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        Section { start, len: blob.len() as u64 - start }
    };
    let graph = GraphParts {
        def_start: put(def_start),
        def_files: put(def_files),
        ref_start: put(ref_start),
        ref_files: put(ref_files),
    };
    (graph, blob)
}

#[cfg(test)]
mod tests {
    use ctx_fs::Sandbox;

    use super::*;

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
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // The tests write their trees with std::fs.
mod follow_tests {
    use std::time::{Duration, SystemTime};

    use ctx_fs::Sandbox;
    use proptest::prelude::*;

    use super::*;

    /// One change to the tree: which file (of a few slots in a few folders), and its new text
    /// as definitions and references of a few shared names; `None` removes it.
    type Op = (usize, Option<Vec<(bool, u8)>>);

    fn slot(i: usize) -> String {
        ["src", "src/net", "lib", ""].map(str::to_owned)[i % 4].clone() + &format!("/f{i}.rs")
    }

    fn text(items: &[(bool, u8)]) -> String {
        let mut out = String::new();
        for (def, sym) in items {
            match def {
                true => out.push_str(&format!("pub fn shared_{sym}() {{ helper_{sym}(); }}\n")),
                false => {
                    out.push_str(&format!("fn user() {{ shared_{sym}(); shared_{sym}(); }}\n"))
                }
            }
        }
        out
    }

    struct Tree {
        dir: tempfile::TempDir,
        sandbox: Sandbox,
        clock: u64,
    }

    impl Tree {
        fn new() -> Tree {
            let dir = tempfile::tempdir().unwrap();
            for d in ["src/net", "lib", "big"] {
                std::fs::create_dir_all(dir.path().join(d)).unwrap();
            }
            // Files no update touches, so that a few changed ones do not make the blob worth
            // rebuilding (which builds the graph again).
            for i in 0..40u8 {
                let items = [(i % 3 == 0, i % 6), (false, (i + 1) % 6), (true, 6 + i)];
                std::fs::write(dir.path().join(format!("big/g{i}.rs")), text(&items)).unwrap();
            }
            let root = dir.path().to_str().unwrap();
            let sandbox = Sandbox::builder(root).open(cap_std::ambient_authority()).unwrap();
            Tree { dir, sandbox, clock: 1_000_000 }
        }

        /// Applies `op`; returns the path it changed, relative to the root.
        fn apply(&mut self, (i, items): &Op) -> String {
            let rel = slot(*i).trim_start_matches('/').to_owned();
            let path = self.dir.path().join(&rel);
            match items {
                Some(items) => {
                    std::fs::write(&path, text(items)).unwrap();
                    // A time of its own, so that a rewrite of the same length is seen.
                    self.clock += 10;
                    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(self.clock);
                    std::fs::File::options()
                        .write(true)
                        .open(&path)
                        .unwrap()
                        .set_modified(when)
                        .unwrap();
                }
                None => {
                    let _ = std::fs::remove_file(&path);
                }
            }
            rel
        }
    }

    /// The graph `index` holds equals the one built from scratch from its files.
    #[track_caller]
    fn assert_graph_is_built_one(index: &Index) {
        let (graph, bytes, definitions) = index.build_graph();
        assert_eq!(index.graph_bytes().as_ref(), &bytes[..]);
        assert_eq!(index.data.graph, graph);
        assert_eq!(index.data.definitions, definitions);
        let stored = Index::decode(&index.encode()).unwrap();
        for sym in 0..index.symbol_count() as u32 {
            let defs: Vec<u32> = index.definers(sym).collect();
            assert_eq!(defs.len(), index.definers(sym).len());
            assert_eq!(defs, stored.definers(sym).collect::<Vec<_>>());
            let refs: Vec<(u32, u32)> = index.referencers(sym).collect();
            assert_eq!(refs.len(), index.referencers(sym).len());
            assert_eq!(refs, stored.referencers(sym).collect::<Vec<_>>());
        }
    }

    /// The postings by term and the order of the paths `index` kept through its updates, when
    /// it kept them, find what lists and an order built now find.
    #[track_caller]
    fn assert_lists_are_built_ones(index: &Index) {
        if let Some(order) = index.path_order() {
            let mut by_path: Vec<usize> = (0..index.len()).collect();
            by_path.sort_by(|&a, &b| index.files()[a].path.cmp(&index.files()[b].path));
            let want: Vec<u32> = (0..index.len())
                .map(|f| by_path.iter().position(|&p| p == f).unwrap() as u32)
                .collect();
            assert_eq!(order, &want[..]);
        }
        if let Some(lists) = index.term_lists() {
            let query: Vec<(u32, usize)> =
                (0..index.term_count() as u32).map(|t| (t, t as usize)).collect();
            let part = |i: usize| index.postings_part(&index.files()[i]);
            let found = lists.hits(&query, index.len(), part).unwrap();
            for (i, f) in index.files().iter().enumerate() {
                let mut want = Vec::new();
                crate::index::match_postings(index.postings_part(f), &query, &mut want);
                assert_eq!(found.of(i), &want[..], "{}", f.path);
            }
        }
    }

    /// The one index file of a cache folder.
    fn single_file(dir: &std::path::Path) -> std::path::PathBuf {
        let mut entries = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path());
        entries.find(|p| p.extension().is_some_and(|e| e == "idx")).unwrap()
    }

    /// The attack: a process that stores after every update until the log is full. What must
    /// not happen: a segment past the merge policy, a store that asks to append writing the
    /// whole index, or a change lost by the store that declined.
    #[test]
    fn a_full_log_is_left_to_a_whole_write() {
        let mut tree = Tree::new();
        let cache = tempfile::tempdir().unwrap();
        let root = cache.path().to_str().unwrap();
        let store = ctx_fs::Store::open(root, cap_std::ambient_authority()).unwrap();
        let (mut index, _) = Index::build(&tree.sandbox).unwrap();
        index.store(&store).unwrap();
        let len = || std::fs::metadata(single_file(cache.path())).unwrap().len();
        let base = len();
        for k in 0..=super::super::segment::MAX_SEGMENTS {
            tree.apply(&(k % 4, Some(vec![(true, k as u8), (false, 1)])));
            index.refresh(&tree.sandbox).unwrap();
            let before = len();
            let stored = index.store_appending(&store).unwrap();
            if k < super::super::segment::MAX_SEGMENTS {
                assert_eq!(stored, Some(len()), "{k}");
                assert!(len() > before && len() < before + 2048, "{k}: one segment");
            } else {
                assert_eq!((stored, len()), (None, before), "the log is full: nothing written");
            }
        }
        let stored = std::fs::read(single_file(cache.path())).unwrap();
        assert_ne!(Index::decode(&stored).unwrap().encode(), index.encode());
        // The change declined is kept: the whole write stores it, with an empty log.
        index.store(&store).unwrap();
        let stored = std::fs::read(single_file(cache.path())).unwrap();
        assert_eq!(Index::decode(&stored).unwrap().encode(), index.encode());
        assert!(len() < base + 2048);
    }

    /// The attack: a stored graph whose bytes are garbage (its checksum not checked yet, as
    /// when a query runs while it is), then updates that patch it. What must not happen: a
    /// panic, a file id past the files, a list longer than the graph's bytes.
    #[test]
    fn a_damaged_graph_is_patched_without_a_panic() {
        let mut tree = Tree::new();
        let (mut index, _) = Index::build(&tree.sandbox).unwrap();
        let bytes = index.blob.graph().len();
        let mut noise = 0x9e37_79b9_u32;
        let garbage: Vec<u8> = (0..bytes)
            .map(|_| {
                noise ^= noise << 13;
                noise ^= noise >> 17;
                noise ^= noise << 5;
                noise as u8
            })
            .collect();
        index.blob.graph = Some(garbage);
        for k in 0..6 {
            let changed = tree.apply(&(k, Some(vec![(true, k as u8), (false, 2)])));
            if index.refresh_paths(&tree.sandbox, &[&changed]).unwrap().is_none() {
                index.refresh(&tree.sandbox).unwrap();
            }
            let n = index.len() as u32;
            for sym in 0..index.symbol_count() as u32 + 2 {
                assert!(index.definers(sym).all(|f| f < n));
                assert!(index.referencers(sym).all(|(f, _)| f < n));
                assert!(index.referencers(sym).len() <= bytes);
            }
            assert!(index.graph_bytes().len() <= 2 * bytes + 4096);
            index.suggest(&tree.sandbox, "shared_1 helper_2", &crate::Options::default());
        }
    }

    /// A file removed, stored, then written again and removed again before the next store: no
    /// file changed since that store, but the file's parts and names were added in between.
    /// What must not happen: a store that writes nothing, leaving a stored index that loads as
    /// another one than the index held.
    #[test]
    fn a_file_read_and_dropped_between_stores_is_stored_as_held() {
        let mut tree = Tree::new();
        for i in 0..4 {
            tree.apply(&(i, Some(vec![(true, i as u8)])));
        }
        let cache = tempfile::tempdir().unwrap();
        let root = cache.path().to_str().unwrap();
        let store = ctx_fs::Store::open(root, cap_std::ambient_authority()).unwrap();
        let (mut index, _) = Index::build(&tree.sandbox).unwrap();
        index.store(&store).unwrap();
        for (op, store_now) in
            [((1, None), true), ((1, Some(vec![(true, 5), (false, 2)])), false), ((1, None), true)]
        {
            let changed = tree.apply(&op);
            assert!(index.refresh_paths(&tree.sandbox, &[&changed]).unwrap().is_some());
            if store_now {
                let bytes = index.store(&store).unwrap();
                let now = std::fs::read(single_file(cache.path())).unwrap();
                assert_eq!(bytes, now.len() as u64);
                assert_eq!(Index::decode(&now).unwrap().encode(), index.encode());
            }
        }
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let items = proptest::collection::vec((any::<bool>(), 0u8..6), 0..5);
        let op = (0usize..12, proptest::option::weighted(0.8, items));
        proptest::collection::vec(op, 1..10)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Over random updates (files rewritten, added, removed; each update by the folders of
        /// its change or by a whole walk), the graph followed in place is the graph built from
        /// scratch, stored or not, the postings by term and the order of the paths kept are
        /// the ones built anew, and the index answers as one built anew; stored now and then
        /// ([`Index::store`]: a segment of everything changed since the last store), the
        /// stored file loads as the index held.
        #[test]
        fn a_followed_graph_is_the_graph_built_from_scratch(
            first in proptest::collection::vec(proptest::collection::vec((any::<bool>(), 0u8..6), 0..5), 12),
            updates in ops(),
            whole in proptest::collection::vec(any::<bool>(), 10),
            stores in proptest::collection::vec(any::<bool>(), 10),
        ) {
            let mut tree = Tree::new();
            for (i, items) in first.into_iter().enumerate() {
                tree.apply(&(i, Some(items)));
            }
            let cache = tempfile::tempdir().unwrap();
            let store = ctx_fs::Store::open(cache.path().to_str().unwrap(), cap_std::ambient_authority()).unwrap();
            let (mut index, _) = Index::build(&tree.sandbox).unwrap();
            index.store(&store).unwrap();
            index.keep_term_lists();
            let mut appended = 0;
            let mut followed = 0;
            let mut lists_kept = 0;
            for (k, op) in updates.iter().enumerate() {
                let changed = tree.apply(op);
                let partial = match whole[k] {
                    true => None,
                    false => index.refresh_paths(&tree.sandbox, &[&changed]).unwrap(),
                };
                if partial.is_none() {
                    index.refresh(&tree.sandbox).unwrap();
                }
                followed += usize::from(index.patch.is_some());
                lists_kept += usize::from(index.term_lists().is_some());
                assert_graph_is_built_one(&index);
                assert_lists_are_built_ones(&index);
                // Kept or not, the lists are built again between questions.
                index.keep_term_lists();
                if stores[k] {
                    let stored = |_: ()| std::fs::read(single_file(cache.path())).unwrap();
                    let before = stored(()).len();
                    let bytes = index.store(&store).unwrap();
                    let now = stored(());
                    prop_assert_eq!(bytes, now.len() as u64);
                    appended += usize::from(now.len() > before && now.len() < before + 2048);
                    prop_assert_eq!(Index::decode(&now).unwrap().encode(), index.encode());
                }
                let (fresh, _) = Index::build(&tree.sandbox).unwrap();
                let paths = |i: &Index| i.files().iter().map(|f| f.path.clone()).collect::<Vec<_>>();
                prop_assert_eq!(paths(&index), paths(&fresh));
                let opts = crate::Options::default();
                for prompt in ["shared_1 helper_2 user", "shared_3 net"] {
                    prop_assert_eq!(
                        index.suggest(&tree.sandbox, prompt, &opts),
                        fresh.suggest(&tree.sandbox, prompt, &opts)
                    );
                }
            }
            // Small updates are followed, not built again.
            prop_assert!(followed > 0);
            prop_assert!(lists_kept > 0);
            let stored = stores.iter().zip(&updates).filter(|(s, _)| **s).count();
            prop_assert!(stored == 0 || appended > 0, "{stored} stores, none appended");
        }
    }
}
