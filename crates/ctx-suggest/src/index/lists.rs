//! Postings by term: for each term, the files that hold it with its frequency per field,
//! built in memory from the files' postings by a process that keeps its index (the index
//! service), so that a query reads the lists of its terms instead of every file's postings.
//!
//! They are not stored: a stored form would have to follow the segment log, and the lists are
//! built in two passes over the postings (docs/suggest.md, "The index service"). An update
//! that neither renumbers the terms nor rewrites the blob keeps them: the files it read are
//! then looked up in their own postings, the others through a map from the files the lists
//! were built on to their place now.

use super::change::{Change, GONE};
use super::names::{Names, lookup};
use super::postings::{PostingIter, match_postings, put_varint, split_postings};
use super::{FileRec, Index};
use crate::classify::FileClass;

/// The files of each term, as varints: the file id's delta from the term's previous file, a
/// byte of the fields present, then a frequency per present field; with what keeps them
/// valid across updates.
#[derive(Debug, Default)]
pub(crate) struct TermLists {
    /// Where each term's list starts in `bytes`; one more entry than there are terms.
    starts: Vec<u64>,
    bytes: Vec<u8>,
    /// The place now of each file the lists were built on; [`GONE`] when it was removed or
    /// read again since.
    map: Vec<u32>,
    /// The files read since the lists were built (places now, ascending): their own postings
    /// answer for them.
    fresh: Vec<u32>,
    /// How many files the index holds now.
    files: usize,
    /// Each term's list in blocks of [`BLOCK`] files, all terms' blocks one after the other.
    blocks: Vec<Block>,
    /// Where each term's blocks start in `blocks`; one more entry than there are terms.
    first_block: Vec<u32>,
    /// How many files each term's list holds.
    counts: Vec<u32>,
    /// Each field's average length over the collection when the lists were built.
    avg: [f64; 5],
    /// The files the lists were built on that are gone or read since (ascending): their
    /// entries are passed over.
    dead: Vec<u32>,
    /// The same, one bit a file the lists were built on.
    dead_bits: Vec<u64>,
    /// The terms by their names' hashes.
    finder: TermFinder,
    /// Each file's field lengths and class, as the lists were built (a file kept since keeps
    /// them), so that the ranking reads them in file order instead of each file's record.
    lengths: Vec<[u32; 5]>,
    classes: Vec<FileClass>,
}

/// The terms of the table by a hash of their names, made with the lists, so that a question
/// finds its terms by binary searches instead of a pass over every name.
#[derive(Debug, Default)]
struct TermFinder {
    /// 32 bits of a hash of each name above its id, sorted: a name's ids come together, the
    /// first first.
    by_hash: Vec<u64>,
    /// Where each name starts in the table's bytes, by id.
    at: Vec<u32>,
    /// The bytes of the table when they were made: the names added since are looked for in
    /// one pass over them.
    bytes: usize,
}

/// Files of a term's list in one block: a query looking for a file passes over the blocks that
/// end before it without decoding them.
const BLOCK: usize = if cfg!(test) { 4 } else { 64 };

/// The field weights (path, definitions, references, comments, body) the bounds of the lists
/// are made with: the default ranking's, which takes them from here.
pub(crate) const BOUND_FIELD: [f64; 5] = [3.0, 3.0, 1.0, 1.0, 1.0];

/// The length normalisation of each field the bounds of the lists are made with (the default
/// ranking's).
pub(crate) const BOUND_B: [f64; 5] = [0.3, 0.5, 0.75, 0.75, 0.75];

/// A block of a term's list.
#[derive(Clone, Copy, Debug, Default)]
struct Block {
    /// The last file of the block (as the lists were built).
    last: u32,
    /// At least what the term weighs in any file of the block: BM25F's weighted, normalised
    /// frequency `t` with [`BOUND_FIELD`], [`BOUND_B`] and the averages at the build, rounded
    /// up.
    max_t: f32,
    /// Where its first entry starts in the lists' bytes.
    at: u64,
}

/// What a term weighs in a file: each field's frequency weighted and normalised by the
/// field's length against its average, summed (BM25F before its saturation).
pub(crate) fn weighted(
    tf: &[u32; 5],
    len: &[u32; 5],
    field: &[f64; 5],
    b: &[f64; 5],
    avg: &[f64; 5],
) -> f64 {
    let mut t = 0.0;
    for k in 0..5 {
        if tf[k] > 0 {
            let norm = 1.0 - b[k] + b[k] * f64::from(len[k]) / avg[k];
            t += field[k] * f64::from(tf[k]) / norm;
        }
    }
    t
}

/// `x` as an `f32` no smaller than it.
fn up(x: f64) -> f32 {
    let v = x as f32;
    if f64::from(v) < x { v.next_up() } else { v }
}

/// The end of a cursor's list.
pub(crate) const END: u32 = u32::MAX;

/// A reader of one term's list, file by file in the order the lists were built (the order of
/// the files now), passing over the files that are gone or read since.
pub(crate) struct Cursor<'a> {
    it: PostingIter<'a>,
    bytes: &'a [u8],
    blocks: &'a [Block],
    /// Where the term's list starts in the lists' bytes.
    base: u64,
    dead: &'a [u64],
    /// Entries decoded so far, dead ones included.
    read: usize,
    /// The current file, as the lists were built ([`TermLists::place`] gives its place now);
    /// [`END`] past the last.
    pub(crate) file: u32,
    /// Its frequency per field.
    pub(crate) tf: [u32; 5],
}

impl Cursor<'_> {
    /// Moves to the next file that is still there.
    pub(crate) fn next(&mut self) {
        loop {
            let Some((file, tf)) = self.it.next() else {
                self.file = END;
                return;
            };
            self.read += 1;
            if !is_set(self.dead, file) {
                (self.file, self.tf) = (file, tf);
                return;
            }
        }
    }

    /// Moves to the first file at or after `target`, passing over the blocks that end before
    /// it.
    pub(crate) fn seek(&mut self, target: u32) {
        if self.file >= target {
            return;
        }
        let cur = self.read.saturating_sub(1) / BLOCK;
        let rest = self.blocks.get(cur..).unwrap_or(&[]);
        let to = cur + rest.partition_point(|b| b.last < target);
        if to >= self.blocks.len() {
            self.file = END;
            return;
        }
        if to > cur {
            let at = usize::try_from(self.blocks[to].at - self.base).unwrap_or(usize::MAX);
            self.it = PostingIter::resume(self.bytes, at, self.blocks[to - 1].last);
            self.read = to * BLOCK;
        }
        while self.file < target {
            self.next();
        }
    }

    /// The block of the current file, and what the term weighs in it at most
    /// ([`Block::max_t`]).
    pub(crate) fn block(&self) -> (usize, f64) {
        let cur = self.read.saturating_sub(1) / BLOCK;
        (cur, self.blocks.get(cur).map_or(f64::INFINITY, |b| f64::from(b.max_t)))
    }
}

/// Whether bit `i` of `bits` is set.
fn is_set(bits: &[u64], i: u32) -> bool {
    bits.get(i as usize / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
}

/// One file's frequencies of a query's terms: (query index, frequency per field).
pub(crate) type FileHits = Vec<(usize, [u32; 5])>;

/// The frequencies of a query's terms in the files that hold any, as (query index, frequency
/// per field), all in one buffer; sized by the files the terms reach, not by the tree.
#[derive(Debug, Default)]
pub(crate) struct Hits {
    /// The files with hits, ascending, each with where its hits start in `all`.
    files: Vec<(usize, usize)>,
    all: Vec<(usize, [u32; 5])>,
}

impl Hits {
    /// The hits of file `i`.
    #[cfg(test)]
    pub(crate) fn of(&self, i: usize) -> &[(usize, [u32; 5])] {
        match self.files.binary_search_by_key(&i, |f| f.0) {
            Ok(k) => &self.all[self.files[k].1..self.end(k)],
            Err(_) => &[],
        }
    }

    /// Where the hits of the `k`-th file with hits end.
    fn end(&self, k: usize) -> usize {
        self.files.get(k + 1).map_or(self.all.len(), |f| f.1)
    }

    /// Each file with hits, ascending, with its hits.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &[(usize, [u32; 5])])> {
        (0..self.files.len()).map(|k| (self.files[k].0, &self.all[self.files[k].1..self.end(k)]))
    }

    /// The hits of every file.
    pub(crate) fn all(&self) -> &[(usize, [u32; 5])] {
        &self.all
    }

    /// The hits of each file, in file order.
    pub(crate) fn from_files(files: Vec<FileHits>) -> Hits {
        let mut hits =
            Hits { files: Vec::new(), all: Vec::with_capacity(files.iter().map(Vec::len).sum()) };
        for (i, f) in files.into_iter().enumerate().filter(|(_, f)| !f.is_empty()) {
            hits.files.push((i, hits.all.len()));
            hits.all.extend(f);
        }
        hits
    }

    /// The hits of `entries` (file, query index, frequencies), sorted by file and in their
    /// order within each file.
    fn from_entries(mut entries: Vec<(u32, u32, [u32; 5])>) -> Hits {
        // Stable, and each term's files come in runs mostly ascending: a merge of runs.
        entries.sort_by_key(|e| e.0);
        let mut hits = Hits { files: Vec::new(), all: Vec::with_capacity(entries.len()) };
        for (f, q, tf) in entries {
            if hits.files.last().is_none_or(|l| l.0 != f as usize) {
                hits.files.push((f as usize, hits.all.len()));
            }
            hits.all.push((q as usize, tf));
        }
        hits
    }
}

/// What the ranking reads of every file, made once per index by a process that keeps it: the
/// files by the name they go by ([`file_name_key_into`]), and the collection's size and field
/// lengths.
#[derive(Debug, Default)]
pub(crate) struct FileKeys {
    /// How many files the index held when they were made.
    pub(super) files: usize,
    /// Files not left out of the collection.
    pub(crate) collection: usize,
    /// Each field's length summed over every file.
    pub(crate) field_sums: [u64; 5],
    /// A hash of each file's name (32 bits) above the file's place, sorted, so that each
    /// name's files come together in file order; files left out are not there. A hash shared
    /// by other names costs a comparison of their keys, not a wrong answer.
    by_name: Vec<u64>,
}

impl FileKeys {
    pub(super) fn build(files: &[FileRec]) -> FileKeys {
        let mut keys = FileKeys { files: files.len(), ..FileKeys::default() };
        let mut key = String::new();
        for (i, f) in files.iter().enumerate() {
            for (sum, len) in keys.field_sums.iter_mut().zip(f.field_len) {
                *sum += u64::from(len);
            }
            if f.class != FileClass::LeftOut {
                keys.collection += 1;
                key.clear();
                file_name_key_into(&f.path, &mut key);
                keys.by_name.push(name_hash(&key) << 32 | i as u64);
            }
        }
        keys.by_name.sort_unstable();
        keys
    }

    /// Follows an update that read the files at places `fresh` again and left every path at
    /// its place (`files`: the index's files after it): the statistics counted again (one
    /// pass over the records, no name made), the files by name kept. False, nothing kept,
    /// when the list's length moved or a file read again went in or out of the collection.
    pub(super) fn follow(&mut self, files: &[FileRec], fresh: &[u32]) -> bool {
        if files.len() != self.files {
            return false;
        }
        let mut key = String::new();
        for &place in fresh {
            let Some(f) = files.get(place as usize) else { return false };
            key.clear();
            file_name_key_into(&f.path, &mut key);
            let entry = name_hash(&key) << 32 | u64::from(place);
            if self.by_name.binary_search(&entry).is_ok() != (f.class != FileClass::LeftOut) {
                return false;
            }
        }
        self.field_sums = [0; 5];
        self.collection = 0;
        for f in files {
            for (sum, len) in self.field_sums.iter_mut().zip(f.field_len) {
                *sum += u64::from(len);
            }
            self.collection += usize::from(f.class != FileClass::LeftOut);
        }
        true
    }

    /// The files whose name is `name`, in file order (`files`: the index's files).
    pub(crate) fn named(&self, files: &[FileRec], name: &str) -> Vec<usize> {
        let h = name_hash(name);
        let start = self.by_name.partition_point(|&e| e >> 32 < h);
        let mut key = String::new();
        let mut same = |i: usize| {
            key.clear();
            files.get(i).is_some_and(|f| {
                file_name_key_into(&f.path, &mut key);
                key == name
            })
        };
        (self.by_name[start..].iter())
            .take_while(|&&e| e >> 32 == h)
            .map(|&e| (e & u64::from(u32::MAX)) as usize)
            .filter(|&i| same(i))
            .collect()
    }

    /// Bytes they hold.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.by_name.len() * 8
    }
}

/// 32 bits of a hash of a file's name.
fn name_hash(name: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(name) >> 32
}

/// 32 bits of a hash of a term's name.
fn bytes_hash(name: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(name) >> 32
}

/// The name a file goes by: its stem, or its directory's name for the files that stand
/// for their directory; lower case, without `-` and `_`.
/// Written to `key`.
pub(crate) fn file_name_key_into(path: &str, key: &mut String) {
    let mut comps = path.rsplit('/');
    let file = comps.next().unwrap_or("");
    let stem = file.split('.').next().unwrap_or(file);
    let name = match stem {
        "index" | "mod" | "lib" | "__init__" | "init" | "main" => comps.next().unwrap_or(stem),
        _ => stem,
    };
    if name.is_ascii() {
        let bytes = name.bytes().filter(|c| *c != b'-' && *c != b'_');
        key.extend(bytes.map(|c| char::from(c.to_ascii_lowercase())));
    } else {
        key.extend(name.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase));
    }
}

/// Files gone or read since the lists were built beyond which a term's files still there
/// are counted by reading its list, not by a look in a block for each.
const MAX_DEAD_LOOKUPS: usize = 256;

/// Each field's average length over the collection (the files not left out), at least 1, as
/// the ranking counts it.
pub(crate) fn averages(files: &[FileRec]) -> [f64; 5] {
    let n = files.iter().filter(|f| f.class != FileClass::LeftOut).count();
    let mut avg = [0f64; 5];
    for f in files {
        for (k, len) in f.field_len.iter().enumerate() {
            avg[k] += f64::from(*len);
        }
    }
    avg.map(|a| (a / n.max(1) as f64).max(1.0))
}

/// Files read since the lists were built, beyond which they are dropped (and built again):
/// each is looked up in its own postings by every query.
const MAX_FRESH: usize = 4096;

/// The postings of a file's postings part: each term and its frequency per field, without
/// what a damaged part holds (a term past the table, or not after the file's previous term).
fn postings_of(part: &[u8], terms: usize) -> impl Iterator<Item = (u32, [u32; 5])> + '_ {
    let mut prev: Option<u32> = None;
    split_postings(part).1.filter(move |&(id, _)| {
        let fits = (id as usize) < terms && prev.is_none_or(|p| id > p);
        if fits {
            prev = Some(id);
        }
        fits
    })
}

/// Bytes a varint of `n` takes.
fn varint_len(n: u32) -> u64 {
    match n {
        0..0x80 => 1,
        0x80..0x4000 => 2,
        0x4000..0x20_0000 => 3,
        0x20_0000..0x1000_0000 => 4,
        _ => 5,
    }
}

impl TermLists {
    /// The lists of an index of `terms` terms whose files are `files` (`part`: a file's
    /// postings part), in two passes over their postings: one to size each term's list, one
    /// to fill them and their blocks. Their size follows the postings' (a few bytes more a
    /// posting at most, and a block of 16 bytes every [`BLOCK`] postings or term), whatever a
    /// damaged index holds.
    pub(super) fn build<'a>(
        files: &'a [FileRec],
        part: impl Fn(&'a FileRec) -> &'a [u8],
        terms: usize,
    ) -> TermLists {
        let count = files.len();
        let map = (0..count).map(|i| u32::try_from(i).unwrap_or(GONE)).collect();
        // Pass 1: the bytes of each term's list, kept in `starts` shifted by one.
        let mut starts = vec![0u64; terms + 1];
        let mut counts = vec![0u32; terms];
        let mut last = vec![0u32; terms];
        for (i, f) in files.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for (id, tf) in postings_of(part(f), terms) {
                let t = id as usize;
                let tfs: u64 = tf.iter().filter(|n| **n > 0).map(|n| varint_len(*n)).sum();
                starts[t + 1] += varint_len(i - last[t]) + 1 + tfs;
                counts[t] = counts[t].saturating_add(1);
                last[t] = i;
            }
        }
        let mut first_block = vec![0u32; terms + 1];
        for t in 0..terms {
            starts[t + 1] += starts[t];
            let blocks = (counts[t] as usize).div_ceil(BLOCK);
            first_block[t + 1] = first_block[t].saturating_add(u32::try_from(blocks).unwrap_or(0));
        }
        let avg = averages(files);
        // Pass 2: each list written at its place, its blocks with it.
        let total = usize::try_from(starts[terms]).unwrap_or(usize::MAX);
        let mut bytes = vec![0u8; total];
        let mut blocks = vec![Block::default(); first_block[terms] as usize];
        let mut at: Vec<u64> = starts[..terms].to_vec();
        let mut written = vec![0u32; terms];
        last.fill(0);
        let mut one = Vec::with_capacity(32);
        for (i, f) in files.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for (id, tf) in postings_of(part(f), terms) {
                let t = id as usize;
                one.clear();
                put_varint(&mut one, i - last[t]);
                let mask = tf.iter().enumerate().fold(0u8, |m, (k, n)| m | u8::from(*n > 0) << k);
                one.push(mask);
                for n in tf.iter().filter(|n| **n > 0) {
                    put_varint(&mut one, *n);
                }
                let b = &mut blocks[first_block[t] as usize + written[t] as usize / BLOCK];
                if (written[t] as usize).is_multiple_of(BLOCK) {
                    b.at = at[t];
                }
                b.last = i;
                let weight = weighted(&tf, &f.field_len, &BOUND_FIELD, &BOUND_B, &avg);
                b.max_t = b.max_t.max(up(weight));
                written[t] += 1;
                let from = at[t] as usize;
                bytes[from..from + one.len()].copy_from_slice(&one);
                at[t] += one.len() as u64;
                last[t] = i;
            }
        }
        let (dead, dead_bits) = (Vec::new(), Vec::new());
        TermLists {
            starts,
            bytes,
            map,
            fresh: Vec::new(),
            files: count,
            blocks,
            first_block,
            counts,
            avg,
            dead,
            dead_bits,
            finder: TermFinder::default(),
            lengths: files.iter().map(|f| f.field_len).collect(),
            classes: files.iter().map(|f| f.class).collect(),
        }
    }

    /// Follows an update that kept the term ids: `before` files were there, `moved` maps each
    /// place before to its place now (`None`: every kept file kept its place), `fresh` are the
    /// places now of the files read, `files` how many there are now. The files kept are in
    /// the same order as before (both are in the walk's order). False, when the update does not
    /// fit the lists or read too many files since they were built: they must be built again.
    pub(super) fn follow(
        &mut self,
        before: usize,
        moved: Option<&[u32]>,
        fresh: &[u32],
        files: usize,
    ) -> bool {
        if before != self.files || moved.is_some_and(|m| m.len() != before) {
            return false;
        }
        let place = |m: u32| match moved {
            Some(moved) => moved.get(m as usize).copied().unwrap_or(GONE),
            None => m,
        };
        let mut read_since: Vec<u32> =
            self.fresh.iter().map(|&f| place(f)).filter(|&m| m != GONE).collect();
        read_since.extend_from_slice(fresh);
        read_since.sort_unstable();
        read_since.dedup();
        if read_since.len() > MAX_FRESH || read_since.last().is_some_and(|&f| f as usize >= files) {
            return false;
        }
        // A file read again where it was is fresh: the lists' entries that lead to its place
        // are passed over, so the map changes only when files moved.
        if moved.is_some() {
            for m in &mut self.map {
                *m = place(*m);
            }
        }
        (self.fresh, self.files) = (read_since, files);
        self.mark_dead();
        true
    }

    /// The lists, with the terms of `table` (the term table they were built with) by hash.
    pub(super) fn with_terms(mut self, table: &Names) -> TermLists {
        let mut finder = TermFinder { bytes: table.byte_len(), ..TermFinder::default() };
        let mut at = 0usize;
        for (id, name) in table.iter_bytes().enumerate() {
            let (Ok(id), Ok(start)) = (u32::try_from(id), u32::try_from(at)) else {
                return self;
            };
            finder.by_hash.push(bytes_hash(name) << 32 | u64::from(id));
            finder.at.push(start);
            at += name.len() + 1;
        }
        finder.by_hash.sort_unstable();
        self.finder = finder;
        self
    }

    /// The ids of `names` in `table` (the term table now, which has only grown since the lists
    /// were made, as the lists are kept only while the term ids are): each the first id of its
    /// name, as one pass over the table finds it. `None` when the table does not fit.
    pub(super) fn term_ids(&self, table: &Names, names: &[&str]) -> Option<Vec<Option<u32>>> {
        let f = &self.finder;
        if f.at.is_empty() || table.byte_len() < f.bytes {
            return None;
        }
        let mut found: Vec<Option<u32>> = names
            .iter()
            .map(|name| {
                let h = bytes_hash(name.as_bytes());
                let start = f.by_hash.partition_point(|&e| e >> 32 < h);
                (f.by_hash[start..].iter())
                    .take_while(|&&e| e >> 32 == h)
                    .map(|&e| e as u32)
                    .find(|&id| table.name_at(f.at[id as usize] as usize) == name.as_bytes())
            })
            .collect();
        // Names added since: one pass over them alone.
        let missing: Vec<usize> = (0..names.len()).filter(|&i| found[i].is_none()).collect();
        if !missing.is_empty() && table.byte_len() > f.bytes {
            let wanted: Vec<&str> = missing.iter().map(|&i| names[i]).collect();
            let first = u32::try_from(f.at.len()).ok()?;
            for (&i, id) in missing.iter().zip(lookup(table.iter_bytes_from(f.bytes), &wanted)) {
                found[i] = id.map(|id| id + first);
            }
        }
        Some(found)
    }

    /// Finds the files the lists were built on that are gone or read since.
    fn mark_dead(&mut self) {
        let mut fresh = vec![0u64; self.files.div_ceil(64)];
        for &f in &self.fresh {
            if let Some(w) = fresh.get_mut(f as usize / 64) {
                *w |= 1 << (f % 64);
            }
        }
        self.dead.clear();
        for (built, &now) in self.map.iter().enumerate() {
            if now as usize >= self.files || is_set(&fresh, now) {
                self.dead.push(built as u32);
            }
        }
        self.dead_bits =
            vec![0u64; if self.dead.is_empty() { 0 } else { self.map.len().div_ceil(64) }];
        for &d in &self.dead {
            self.dead_bits[d as usize / 64] |= 1 << (d % 64);
        }
    }

    /// Whether the lists are of an index of `files` files.
    pub(crate) fn fits(&self, files: usize) -> bool {
        files == self.files
    }

    /// The files read since the lists were built (places now, ascending): the lists pass
    /// over them, their own postings answer for them.
    pub(crate) fn fresh(&self) -> &[u32] {
        &self.fresh
    }

    /// The field lengths of file `built` (as the lists were built).
    pub(crate) fn lengths(&self, built: u32) -> &[u32; 5] {
        self.lengths.get(built as usize).unwrap_or(&[0; 5])
    }

    /// The class of file `built` (as the lists were built).
    pub(crate) fn class(&self, built: u32) -> FileClass {
        self.classes.get(built as usize).copied().unwrap_or(FileClass::Unreadable)
    }

    /// The place now of file `built` as the lists were built.
    pub(crate) fn place(&self, built: u32) -> usize {
        self.map.get(built as usize).map_or(usize::MAX, |&p| p as usize)
    }

    /// The blocks of term `term`.
    fn blocks_of(&self, term: u32) -> &[Block] {
        let t = term as usize;
        match (self.first_block.get(t), self.first_block.get(t + 1)) {
            (Some(&a), Some(&b)) => self.blocks.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// A reader of term `term`'s list, at its first file still there.
    pub(crate) fn cursor(&self, term: u32) -> Cursor<'_> {
        let t = term as usize;
        let bytes = match (self.starts.get(t), self.starts.get(t + 1)) {
            (Some(&a), Some(&b)) => self.bytes.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        };
        // The blocks say where they start in all the lists' bytes: here, in the term's.
        let base = self.starts.get(t).copied().unwrap_or(0);
        let blocks = self.blocks_of(term);
        let mut cursor = Cursor {
            it: PostingIter::new(bytes),
            bytes,
            blocks,
            base,
            dead: &self.dead_bits,
            read: 0,
            file: 0,
            tf: [0; 5],
        };
        cursor.next();
        cursor
    }

    /// How many files term `term`'s list holds that are still there (the files read since
    /// are counted apart).
    pub(crate) fn live(&self, term: u32) -> usize {
        self.live_with(term, MAX_DEAD_LOOKUPS)
    }

    /// [`TermLists::live`], the list read whole past `lookups` files gone.
    fn live_with(&self, term: u32, lookups: usize) -> usize {
        let all = self.counts.get(term as usize).copied().unwrap_or(0) as usize;
        if self.dead.is_empty() || all == 0 {
            return all;
        }
        let mut cursor = self.cursor(term);
        if self.dead.len() > lookups {
            let mut live = 0;
            while cursor.file != END {
                live += 1;
                cursor.next();
            }
            return live;
        }
        // Each file gone: a look in the one block that may hold it.
        let blocks = self.blocks_of(term);
        let mut gone = 0;
        for &d in &self.dead {
            let k = blocks.partition_point(|b| b.last < d);
            let Some(block) = blocks.get(k) else { break };
            let prev = if k == 0 { 0 } else { blocks[k - 1].last };
            let at = usize::try_from(block.at - cursor.base).unwrap_or(usize::MAX);
            let mut it = PostingIter::resume(cursor.bytes, at, prev);
            gone += usize::from((0..BLOCK).map_while(|_| it.next()).any(|(f, _)| f == d));
        }
        all.saturating_sub(gone)
    }

    /// At least what term `term` weighs (BM25F's `t`) in any file of its list still there,
    /// with the weights and averages the bounds were made with ([`TermLists::growth`] says
    /// how much more it may weigh now).
    pub(crate) fn max_t(&self, term: u32) -> f64 {
        f64::from(self.blocks_of(term).iter().map(|b| b.max_t).fold(0f32, f32::max))
    }

    /// How much more a term may weigh in a file now than when the bounds were made: a field
    /// whose average length grew normalises a file's frequency by less, by at most the
    /// growth; infinite for weights other than the bounds'.
    pub(crate) fn growth(&self, field: &[f64; 5], b: &[f64; 5], avg: &[f64; 5]) -> f64 {
        if *field != BOUND_FIELD || *b != BOUND_B {
            return f64::INFINITY;
        }
        let grow = (0..5).map(|k| (avg[k] / self.avg[k]).max(1.0)).fold(1.0, f64::max);
        if grow.is_finite() { grow * (1.0 + 1e-6) } else { f64::INFINITY }
    }

    /// Each file's frequencies of the query terms `query` (term id and query index, sorted by
    /// id), as (query index, frequency per field), for the `files` files of the index whose
    /// postings parts `part` gives: what [`match_postings`] finds in each file's postings, in
    /// the same order. `None` when the lists are not of an index of that many files.
    pub(crate) fn hits<'a>(
        &self,
        query: &[(u32, usize)],
        files: usize,
        part: impl Fn(usize) -> &'a [u8],
    ) -> Option<Hits> {
        if files != self.files {
            return None;
        }
        // The files of the query's terms, each at its place now; a file read since answers
        // from its own postings instead.
        let is_fresh = |f: usize| self.fresh.binary_search(&(f as u32)).is_ok();
        let mut entries: Vec<(u32, u32, [u32; 5])> = Vec::new();
        for &(id, q) in query {
            let t = id as usize;
            let (Some(&start), Some(&end)) = (self.starts.get(t), self.starts.get(t + 1)) else {
                continue;
            };
            let list = self.bytes.get(start as usize..end as usize).unwrap_or(&[]);
            // A list is a posting list whose "terms" are file ids.
            for (file, tf) in PostingIter::new(list) {
                let now = self.map.get(file as usize).copied().unwrap_or(GONE);
                if (now as usize) < files && !is_fresh(now as usize) {
                    entries.push((now, q as u32, tf));
                }
            }
        }
        let mut hits = Vec::new();
        for &f in self.fresh.iter().filter(|&&f| (f as usize) < files) {
            hits.clear();
            match_postings(part(f as usize), query, &mut hits);
            entries.extend(hits.iter().map(|&(q, tf)| (f, q as u32, tf)));
        }
        Some(Hits::from_entries(entries))
    }

    /// Bytes the lists hold.
    pub(crate) fn heap_bytes(&self) -> usize {
        let blocks = self.blocks.len() * std::mem::size_of::<Block>();
        let per_term = (self.first_block.len() + self.counts.len()) * 4;
        let dead = self.dead.len() * 4 + self.dead_bits.len() * 8;
        let finder = self.finder.by_hash.len() * 8 + self.finder.at.len() * 4;
        let per_file = self.lengths.len() * 20 + self.classes.len();
        self.bytes.len()
            + self.starts.len() * 8
            + (self.map.len() + self.fresh.len()) * 4
            + blocks
            + per_term
            + dead
            + finder
            + per_file
    }
}

impl Index {
    /// After an update, the postings by term and the order of the paths taken before it
    /// (`kept`) put back when they can follow it: the lists when it kept the term ids
    /// ([`TermLists::follow`]), the order of the paths whenever the update changed nothing or
    /// the files it read are the ones it dropped, each where it was (the usual save of a
    /// file), else rebuilt from the order before in a few passes over the files' places
    /// ([`follow_order`]). What cannot follow is dropped and built again between questions.
    pub(super) fn follow_lists(
        &mut self,
        kept: (Option<TermLists>, Option<Vec<u32>>),
        change: &Change,
        moved: Option<&[u32]>,
    ) {
        let (lists, order) = kept;
        let (before, now) = (change.before.files as usize, self.data.files.len());
        if let Some(mut lists) = lists
            && !change.rewritten
            && lists.follow(before, moved, &change.fresh, now)
        {
            self.lists = lists.into();
        }
        if let Some(order) = order.filter(|o| o.len() == before)
            && let Some(order) = follow_order(order, &self.data.files, change, moved)
        {
            self.path_order = order.into();
        }
    }
}

/// Each file's place in the order of the paths as strings after an update, from `order`
/// before it: kept when each file read is one dropped at the same place with the same path;
/// else the kept files in their order before, the files read put in by binary searches, and
/// the places given back. `None` when the update does not fit `order`.
fn follow_order(
    order: Vec<u32>,
    files: &[FileRec],
    change: &Change,
    moved: Option<&[u32]>,
) -> Option<Vec<u32>> {
    // A file saved again (the usual change) keeps every place; only a few are compared.
    let same = moved.is_none()
        && change.fresh.len() <= 64
        && change.fresh.iter().all(|&f| {
            let path = files.get(f as usize).map(|r| r.path.as_str());
            path.is_some_and(|p| change.removed.iter().any(|r| r == p))
        });
    if same {
        return Some(order);
    }
    let mut is_fresh = vec![false; files.len()];
    for &f in &change.fresh {
        *is_fresh.get_mut(f as usize)? = true;
    }
    let now = |f: u32| match moved {
        Some(moved) => moved.get(f as usize).copied().unwrap_or(GONE),
        None => f,
    };
    // The files before, by path, then the kept ones at their places now.
    let mut by_path = vec![GONE; order.len()];
    for (file, &place) in order.iter().enumerate() {
        *by_path.get_mut(place as usize)? = file as u32;
    }
    let kept: Vec<u32> = by_path
        .iter()
        .map(|&f| now(f))
        .filter(|&f| is_fresh.get(f as usize) == Some(&false))
        .collect();
    let mut fresh: Vec<u32> = change.fresh.clone();
    let path = |f: u32| files.get(f as usize).map_or("", |r| r.path.as_str());
    fresh.sort_unstable_by(|&a, &b| path(a).cmp(path(b)));
    let mut all = Vec::with_capacity(files.len());
    let mut rest = &kept[..];
    for f in fresh {
        let at = rest.partition_point(|&k| path(k) < path(f));
        all.extend_from_slice(&rest[..at]);
        all.push(f);
        rest = &rest[at..];
    }
    all.extend_from_slice(rest);
    if all.len() != files.len() {
        return None;
    }
    let mut order = vec![0u32; files.len()];
    for (place, &f) in all.iter().enumerate() {
        *order.get_mut(f as usize)? = place as u32;
    }
    Some(order)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // The tests write their tree with std::fs.
mod tests {
    use super::super::Index;
    use super::super::postings::encode_postings;
    use super::*;

    /// An index of a small tree, and the tree.
    /// [`built`] with twelve more files, refreshed, its lists kept.
    fn built_with_more() -> (tempfile::TempDir, ctx_fs::Sandbox, Index) {
        let (tree, sandbox, mut index) = built();
        for i in 0..12 {
            let text = format!("/// Retries {i}.\npub fn retry_{i}() {{ send(); }}\n");
            std::fs::write(tree.path().join(format!("src/more{i}.rs")), text).unwrap();
        }
        index.refresh(&sandbox).unwrap();
        index.keep_term_lists();
        (tree, sandbox, index)
    }

    fn built() -> (tempfile::TempDir, ctx_fs::Sandbox, Index) {
        let tree = tempfile::tempdir().unwrap();
        for (path, text) in [
            ("src/retry.rs", "/// Retries until the deadline.\npub fn retry() { send(); }\n"),
            ("src/http.rs", "/// Sends one request.\npub fn send() {}\n"),
            ("README.md", "# Retry\nHow the request is retried.\n"),
        ] {
            let path = tree.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root = tree.path().to_str().unwrap();
        let sandbox = ctx_fs::Sandbox::builder(root).open(cap_std::ambient_authority()).unwrap();
        let (index, _) = Index::build(&sandbox).unwrap();
        (tree, sandbox, index)
    }

    #[test]
    fn the_lists_find_what_every_files_postings_hold() {
        let (_tree, _sandbox, index) = built();
        index.keep_term_lists();
        let lists = index.term_lists().unwrap();
        let query: Vec<(u32, usize)> =
            (0..index.term_count() as u32).map(|t| (t, t as usize)).collect();
        let want: Vec<Vec<(usize, [u32; 5])>> = index
            .files()
            .iter()
            .map(|f| {
                let mut hits = Vec::new();
                super::super::match_postings(index.postings_part(f), &query, &mut hits);
                hits
            })
            .collect();
        assert!(want.iter().all(|h| !h.is_empty()));
        let found = lists.hits(&query, index.len(), |_| &[]).unwrap();
        assert_eq!((0..index.len()).map(|i| found.of(i).to_vec()).collect::<Vec<_>>(), want);
    }

    /// The files by name answer as every file's key does, left-out files aside; the hits of
    /// a query hold the files its terms reach and no others.
    #[test]
    fn the_files_by_name_and_the_hits_follow_what_they_find() {
        let (_tree, _sandbox, index) = built();
        index.keep_term_lists();
        let (files, keys) = (index.files(), index.file_keys().unwrap());
        assert_eq!(keys.collection, files.len());
        for name in ["retry", "http", "readme", "src", "nothing", ""] {
            let want: Vec<usize> = (0..files.len())
                .filter(|&i| {
                    let mut key = String::new();
                    file_name_key_into(&files[i].path, &mut key);
                    key == name
                })
                .collect();
            assert_eq!(keys.named(files, name), want, "{name}");
        }
        let retry = index.term_ids(&["retri"])[0].unwrap();
        let hits = index.term_lists().unwrap().hits(&[(retry, 0)], files.len(), |_| &[]).unwrap();
        let reached: Vec<usize> = hits.iter().map(|(f, _)| f).collect();
        assert_eq!(reached.len(), 2, "{reached:?}");
        assert_eq!(hits.files.len(), hits.iter().count());
    }

    /// A file saved again keeps the files by name and counts the statistics again; an update
    /// that adds a file drops them. Either way they are what a fresh build of them gives.
    #[test]
    fn the_files_by_name_follow_a_file_saved_again() {
        let (tree, sandbox, mut index) = built();
        index.keep_term_lists();
        std::fs::write(
            tree.path().join("src/http.rs"),
            "/// Sends two requests.\npub fn send() { send(); }\n// and more words\n",
        )
        .unwrap();
        index.refresh(&sandbox).unwrap();
        let keys = index.file_keys().expect("kept through a file saved again");
        let fresh = FileKeys::build(index.files());
        assert_eq!((keys.collection, keys.field_sums), (fresh.collection, fresh.field_sums));
        assert_eq!(keys.by_name, fresh.by_name);
        std::fs::write(tree.path().join("src/new.rs"), "pub fn added() {}\n").unwrap();
        index.refresh(&sandbox).unwrap();
        assert!(index.file_keys().is_none(), "a file added moves the places");
    }

    /// After files are saved again, added and removed (the lists following), each term's
    /// files still there are counted the same by a look in a block for each file gone and by
    /// reading the list, and are what the lists find less the files read since; a reader
    /// sought to each of them lands on it.
    #[test]
    fn the_files_still_there_are_counted_and_found_through_the_blocks() {
        let (tree, sandbox, mut index) = built_with_more();
        std::fs::write(tree.path().join("src/more3.rs"), "pub fn other() {}\n").unwrap();
        std::fs::remove_file(tree.path().join("src/more7.rs")).unwrap();
        std::fs::write(tree.path().join("src/more5.rs"), "/// Retries.\npub fn retry() {}\n")
            .unwrap();
        index.refresh(&sandbox).unwrap();
        let lists = index.term_lists().expect("kept through the update");
        assert!(!lists.dead.is_empty() && !lists.fresh.is_empty());
        for term in 0..index.term_count() as u32 {
            let found = lists
                .hits(&[(term, 0)], index.len(), |f| index.postings_part(&index.files()[f]))
                .unwrap();
            let fresh = found.iter().filter(|(f, _)| lists.fresh.contains(&(*f as u32))).count();
            let live = found.iter().count() - fresh;
            assert_eq!(lists.live_with(term, 0), live, "term {term}, the list read");
            assert_eq!(lists.live_with(term, usize::MAX), live, "term {term}, by blocks");
            let mut cursor = lists.cursor(term);
            let mut places = Vec::new();
            while cursor.file != END {
                places.push(lists.place(cursor.file));
                cursor.next();
            }
            let want: Vec<usize> = found
                .iter()
                .map(|(f, _)| f)
                .filter(|f| !lists.fresh.contains(&(*f as u32)))
                .collect();
            assert_eq!(places, want, "term {term}");
            for (k, &p) in want.iter().enumerate() {
                let mut sought = lists.cursor(term);
                let built = (0..lists.map.len() as u32).find(|&b| lists.place(b) == p).unwrap();
                sought.seek(built);
                assert_eq!(lists.place(sought.file), p, "term {term}, file {k}");
            }
        }
    }

    /// A question's terms are found by their hashes as one pass over the table finds them,
    /// before and after an update that adds terms (found then in a pass over the new ones).
    #[test]
    fn terms_are_found_by_hash_as_by_a_pass() {
        let (tree, sandbox, mut index) = built_with_more();
        let check = |index: &Index| {
            let mut names: Vec<String> = index.data.terms.iter().map(str::to_owned).collect();
            names.extend(["absent", "", "zzzz", "retri"].map(str::to_owned));
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let lists = index.term_lists().expect("kept");
            let found = lists.term_ids(&index.data.terms, &names).expect("the table fits");
            assert_eq!(found, lookup(index.data.terms.iter_bytes(), &names));
            assert_eq!(index.term_ids(&names), found);
        };
        check(&index);
        let before = index.term_count();
        std::fs::write(tree.path().join("src/more4.rs"), "pub fn send() { brandnew(); }\n")
            .unwrap();
        index.refresh(&sandbox).unwrap();
        assert!(index.term_count() > before, "the update adds terms");
        check(&index);
        let found = index.term_ids(&["brandnew"]);
        assert!(found[0].is_some_and(|id| id as usize >= before), "{found:?}");
    }

    /// The attack: file names whose hashes collide (here every file's entry given one hash).
    /// What must not happen: a file of another name counted as named by the prompt.
    #[test]
    fn names_sharing_a_hash_are_told_apart() {
        let (_tree, _sandbox, index) = built();
        let files = index.files();
        let mut keys = FileKeys::build(files);
        let h = name_hash("retry");
        keys.by_name = (0..files.len() as u64).map(|i| h << 32 | i).collect();
        let retry: Vec<usize> =
            (0..files.len()).filter(|&i| files[i].path == "src/retry.rs").collect();
        assert_eq!(keys.named(files, "retry"), retry);
        assert!(keys.named(files, "http").is_empty());
        // A place past the files (a tampered entry) names nothing.
        keys.by_name.push(h << 32 | u64::from(u32::MAX));
        assert_eq!(keys.named(files, "retry"), retry);
    }

    /// The attack: a damaged (or tampered) index whose postings name terms past the table,
    /// repeat a term, or hold counts that do not fit 32 bits. What must not happen: a panic, a
    /// list of a term that is not there, memory beyond the postings' size.
    #[test]
    fn damaged_postings_build_bounded_lists_without_a_panic() {
        let (_tree, sandbox, mut index) = built();
        let terms = index.term_count() as u32;
        let mut part = encode_postings(&[(0, [u32::MAX, u32::MAX, 1, 0, u32::MAX]), (1, [1; 5])]);
        // Term 1 again with a count of 2^32 (five varint bytes, the last one overflowing), a
        // term past the table, and a varint cut short.
        part.extend_from_slice(&[0, 0b1, 0x80, 0x80, 0x80, 0x80, 0x10]);
        put_varint(&mut part, terms);
        part.extend_from_slice(&[0b1, 1, 0x7f, 0b1, 0xff]);
        let start = index.blob.len() as u64;
        index.blob.extra.extend_from_slice(&part);
        let postings = part.len() as u32;
        index.data.files[0].parts =
            super::super::Parts { start, postings, defs: 0, refs: 0, docs: 0 };
        let before = index.suggest(&sandbox, "retry the request", &crate::Options::default());
        index.keep_term_lists();
        let lists = index.term_lists().unwrap();
        // Terms 0 and 1 of the damaged file are listed, once each; nothing past the table.
        let query = [(0, 0), (1, 1), (terms, 2), (u32::MAX, 3)];
        let found = lists.hits(&query, index.len(), |_| &[]).unwrap();
        assert_eq!(found.of(0), vec![(0, [u32::MAX, u32::MAX, 1, 0, u32::MAX]), (1, [1; 5])]);
        assert_eq!(lists.starts.len(), terms as usize + 1);
        let postings: usize = index.files().iter().map(|f| index.postings_part(f).len()).sum();
        assert!(lists.bytes.len() <= 3 * postings, "{} > 3 × {postings}", lists.bytes.len());
        // The ranking with the lists answers as without them.
        assert_eq!(
            index.suggest(&sandbox, "retry the request", &crate::Options::default()),
            before
        );
    }

    /// The attack: a stored index whose term table says it holds 2^32 − 1 names. What must
    /// not happen: lists sized by that count (gigabytes), a panic.
    #[test]
    fn a_term_count_past_the_tables_bytes_sizes_nothing() {
        let (_tree, sandbox, mut index) = built();
        let bytes: Vec<u8> =
            index.data.terms.iter_bytes().flat_map(|n| n.iter().chain(&[0])).copied().collect();
        let tampered = postcard::to_allocvec(&(serde_bytes::Bytes::new(&bytes), u32::MAX)).unwrap();
        index.data.terms = postcard::from_bytes(&tampered).unwrap();
        assert_eq!(index.term_count(), u32::MAX as usize);
        index.keep_term_lists();
        let lists = index.term_lists().unwrap();
        assert!(lists.starts.len() <= bytes.len() + 1, "{} entries", lists.starts.len());
        assert!(index.term_lists_bytes() < 64 * 1024, "{} bytes", index.term_lists_bytes());
        index.suggest(&sandbox, "retry the request", &crate::Options::default());
    }
}
