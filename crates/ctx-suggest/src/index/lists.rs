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
use super::postings::{PostingIter, match_postings, put_varint, split_postings};
use super::{FileRec, Index};

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
}

/// One file's frequencies of a query's terms: (query index, frequency per field).
pub(crate) type FileHits = Vec<(usize, [u32; 5])>;

/// Each file's frequencies of a query's terms, as (query index, frequency per field), all in
/// one buffer (a query may find most files of a tree).
#[derive(Debug, Default)]
pub(crate) struct Hits {
    /// Where each file's hits start in `all`; one more entry than there are files.
    at: Vec<usize>,
    all: Vec<(usize, [u32; 5])>,
}

impl Hits {
    /// The hits of file `i`.
    pub(crate) fn of(&self, i: usize) -> &[(usize, [u32; 5])] {
        match (self.at.get(i), self.at.get(i + 1)) {
            (Some(&start), Some(&end)) => self.all.get(start..end).unwrap_or_default(),
            _ => &[],
        }
    }

    /// The hits of every file.
    pub(crate) fn all(&self) -> &[(usize, [u32; 5])] {
        &self.all
    }

    /// The hits of each file, in file order.
    pub(crate) fn from_files(files: Vec<FileHits>) -> Hits {
        let mut at = Vec::with_capacity(files.len() + 1);
        at.push(0);
        let mut all = Vec::with_capacity(files.iter().map(Vec::len).sum());
        for f in files {
            all.extend(f);
            at.push(all.len());
        }
        Hits { at, all }
    }
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
    /// The lists of an index of `terms` terms whose files' postings parts are `files`, in
    /// file order, in two passes over them: one to size each term's list, one to fill them.
    /// Their size follows the postings' (a few bytes more a posting at most), whatever a
    /// damaged index holds.
    pub(super) fn build<'a>(
        files: impl Iterator<Item = &'a [u8]> + Clone,
        terms: usize,
    ) -> TermLists {
        let count = files.clone().count();
        let map = (0..count).map(|i| u32::try_from(i).unwrap_or(GONE)).collect();
        // Pass 1: the bytes of each term's list, kept in `starts` shifted by one.
        let mut starts = vec![0u64; terms + 1];
        let mut last = vec![0u32; terms];
        for (i, part) in files.clone().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for (id, tf) in postings_of(part, terms) {
                let t = id as usize;
                let tfs: u64 = tf.iter().filter(|n| **n > 0).map(|n| varint_len(*n)).sum();
                starts[t + 1] += varint_len(i - last[t]) + 1 + tfs;
                last[t] = i;
            }
        }
        for t in 0..terms {
            starts[t + 1] += starts[t];
        }
        // Pass 2: each list written at its place.
        let total = usize::try_from(starts[terms]).unwrap_or(usize::MAX);
        let mut bytes = vec![0u8; total];
        let mut at: Vec<u64> = starts[..terms].to_vec();
        last.fill(0);
        let mut one = Vec::with_capacity(32);
        for (i, part) in files.enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            for (id, tf) in postings_of(part, terms) {
                let t = id as usize;
                one.clear();
                put_varint(&mut one, i - last[t]);
                let mask = tf.iter().enumerate().fold(0u8, |m, (k, n)| m | u8::from(*n > 0) << k);
                one.push(mask);
                for n in tf.iter().filter(|n| **n > 0) {
                    put_varint(&mut one, *n);
                }
                let from = at[t] as usize;
                bytes[from..from + one.len()].copy_from_slice(&one);
                at[t] += one.len() as u64;
                last[t] = i;
            }
        }
        TermLists { starts, bytes, map, fresh: Vec::new(), files: count }
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
        true
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
        // The files read since answer from their own postings.
        let mut is_fresh = vec![false; files];
        let fresh: Vec<(usize, FileHits)> = (self.fresh.iter())
            .filter(|&&f| (f as usize) < files)
            .map(|&f| {
                is_fresh[f as usize] = true;
                let mut hits = Vec::new();
                match_postings(part(f as usize), query, &mut hits);
                (f as usize, hits)
            })
            .collect();
        // The files of the query's terms, each at its place now (a file read since is not).
        let listed = |each: &mut dyn FnMut(usize, usize, [u32; 5])| {
            for &(id, q) in query {
                let t = id as usize;
                let (Some(&start), Some(&end)) = (self.starts.get(t), self.starts.get(t + 1))
                else {
                    continue;
                };
                let list = self.bytes.get(start as usize..end as usize).unwrap_or(&[]);
                // A list is a posting list whose "terms" are file ids.
                for (file, tf) in PostingIter::new(list) {
                    let now = self.map.get(file as usize).copied().unwrap_or(GONE) as usize;
                    if is_fresh.get(now) == Some(&false) {
                        each(now, q, tf);
                    }
                }
            }
        };
        // Counted, then written in place.
        let mut at = vec![0usize; files + 1];
        listed(&mut |f, _, _| at[f + 1] += 1);
        for (f, hits) in &fresh {
            at[f + 1] += hits.len();
        }
        for f in 0..files {
            at[f + 1] += at[f];
        }
        let mut all = vec![(0, [0; 5]); at[files]];
        let mut next = at[..files].to_vec();
        listed(&mut |f, q, tf| {
            all[next[f]] = (q, tf);
            next[f] += 1;
        });
        for (f, hits) in fresh {
            all[next[f]..next[f] + hits.len()].copy_from_slice(&hits);
        }
        Some(Hits { at, all })
    }

    /// Bytes the lists hold.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.len() + self.starts.len() * 8 + (self.map.len() + self.fresh.len()) * 4
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
