//! The edges of the symbol graph, gathered file by file and turned into the graph's arrays
//! (see [`GraphParts`](super::blob::GraphParts)) within a fixed budget of memory.

use super::blob::{GraphParts, Section};
use super::postings::{PostingIter, put_varint};

/// Values of the graph's arrays made at once: the arrays by symbol are made a window of
/// symbols at a time, each window one pass over the edges, so that turning the edges by file
/// into edges by symbol holds the edges and one window, not a second copy of every edge.
pub(super) const WINDOW: usize = 1 << 22;

/// The edges of the symbol graph by file, in file order, as varints (a few bytes an edge):
/// the symbols each file defines (each once) and the symbols it references with how often.
pub(super) struct Edges {
    /// The symbols file `f` defines, ascending, as varint deltas: `defs[def_at[f]..def_at[f +
    /// 1]]`.
    defs: Vec<u8>,
    def_at: Vec<u64>,
    /// The symbols file `f` references, ascending, each a varint delta and a varint count:
    /// `refs[ref_at[f]..ref_at[f + 1]]`.
    refs: Vec<u8>,
    ref_at: Vec<u64>,
    /// The last file that defined each symbol, so that a file defines it once.
    seen: Vec<u32>,
    /// The symbols of the file being added.
    scratch: Vec<u32>,
    definitions: u64,
}

impl Default for Edges {
    fn default() -> Edges {
        Edges {
            defs: Vec::new(),
            def_at: vec![0],
            refs: Vec::new(),
            ref_at: vec![0],
            seen: Vec::new(),
            scratch: Vec::new(),
            definitions: 0,
        }
    }
}

impl Edges {
    /// Adds the definitions and references of file `file`, which comes after the files added
    /// (files skipped in between have none); symbols from `limit` up (a damaged part's) count
    /// as definitions but are left out.
    pub(super) fn add(
        &mut self,
        file: u32,
        defs: impl Iterator<Item = u32>,
        refs: impl Iterator<Item = (u32, u32)>,
        limit: usize,
    ) {
        while self.def_at.len() <= file as usize {
            self.def_at.push(self.defs.len() as u64);
            self.ref_at.push(self.refs.len() as u64);
        }
        self.scratch.clear();
        for sym in defs {
            self.definitions += 1;
            let at = sym as usize;
            if at >= limit {
                continue;
            }
            if at >= self.seen.len() {
                self.seen.resize(at + 1, u32::MAX);
            }
            if self.seen[at] != file {
                self.seen[at] = file;
                self.scratch.push(sym);
            }
        }
        self.scratch.sort_unstable();
        let mut prev = 0u32;
        for &sym in &self.scratch {
            put_varint(&mut self.defs, sym - prev);
            prev = sym;
        }
        let mut prev = 0u32;
        for (sym, count) in refs.filter(|(sym, _)| (*sym as usize) < limit) {
            // A damaged part's references may not ascend: the deltas wrap and decode the same.
            put_varint(&mut self.refs, sym.wrapping_sub(prev));
            put_varint(&mut self.refs, count);
            prev = sym;
        }
        self.def_at.push(self.defs.len() as u64);
        self.ref_at.push(self.refs.len() as u64);
    }

    /// Bytes the edges hold.
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        self.defs.capacity()
            + self.refs.capacity()
            + 4 * (self.seen.capacity() + self.scratch.capacity())
            + 8 * (self.def_at.capacity() + self.ref_at.capacity())
    }

    /// The graph of `nsym` symbols, its four arrays given to `put` in order as they are made
    /// (a window at a time), and the definitions counted. Every symbol added must be below
    /// `nsym`.
    /// The arrays by symbol are made in windows of at most `budget` values (or one symbol's):
    /// [`WINDOW`] where memory is to stay within a budget (a cold build), `usize::MAX` for
    /// one pass over the edges.
    pub(super) fn write(
        self,
        nsym: usize,
        budget: usize,
        mut put: impl FnMut(&[u32]),
    ) -> (GraphParts, u64) {
        let Edges { defs, def_at, refs, ref_at, definitions, .. } = self;
        // Bytes given to `put` so far.
        let at = std::cell::Cell::new(0u64);
        let mut counted = |values: &[u32]| {
            put(values);
            at.set(at.get() + 4 * values.len() as u64);
        };
        let mut sections = Vec::with_capacity(4);
        for (bytes, spans, width) in [(&defs, &def_at, 1), (&refs, &ref_at, 2)] {
            let edges = ByFile { bytes, spans, width };
            let start = starts(nsym, &edges);
            let begin = at.get();
            counted(&start);
            sections.push(Section { start: begin, len: at.get() - begin });
            let begin = at.get();
            by_symbol(&edges, &start, budget, &mut counted);
            sections.push(Section { start: begin, len: at.get() - begin });
        }
        let graph = GraphParts {
            def_start: sections[0],
            def_files: sections[1],
            ref_start: sections[2],
            ref_files: sections[3],
        };
        (graph, definitions)
    }
}

/// Edges by file as [`Edges`] keeps them: a varint delta of symbol, then `width - 1` varints
/// (the count of a reference), an entry.
struct ByFile<'a> {
    bytes: &'a [u8],
    spans: &'a [u64],
    width: usize,
}

impl ByFile<'_> {
    /// Each entry as (file, symbol, count), in file order.
    fn each(&self, mut f: impl FnMut(u32, u32, u32)) {
        for (file, span) in self.spans.windows(2).enumerate() {
            let part = self.bytes.get(span[0] as usize..span[1] as usize).unwrap_or_default();
            let mut varints = PostingIter::new(part);
            let mut sym = 0u32;
            while let Some(delta) = varints.varint() {
                sym = sym.wrapping_add(delta);
                let count = match self.width {
                    1 => 0,
                    _ => match varints.varint() {
                        Some(count) => count,
                        None => break,
                    },
                };
                f(file as u32, sym, count);
            }
        }
    }
}

/// For each of `nsym` symbols, where its entries start in the array by symbol, then the
/// total: a counting sort's offsets.
fn starts(nsym: usize, edges: &ByFile<'_>) -> Vec<u32> {
    let mut counts = vec![0u32; nsym + 1];
    edges.each(|_, sym, _| {
        if let Some(c) = counts.get_mut(sym as usize) {
            *c += 1;
        }
    });
    let mut sum = 0u32;
    for c in &mut counts[..nsym] {
        let n = *c;
        *c = sum;
        sum += n;
    }
    counts[nsym] = sum;
    counts
}

/// The entries of `edges` by symbol, each symbol's in file order, as the file and, for a
/// reference, its count: given to `put` a window of symbols at a time.
fn by_symbol(edges: &ByFile<'_>, start: &[u32], budget: usize, put: &mut dyn FnMut(&[u32])) {
    let (nsym, width) = (start.len() - 1, edges.width);
    let mut window = Vec::new();
    let mut lo = 0;
    while lo < nsym {
        // The symbols of this window: at least one, else as many as fit the budget.
        let mut hi = lo + 1;
        while hi < nsym && (start[hi + 1] - start[lo]) as usize * width <= budget {
            hi += 1;
        }
        let base = start[lo] as usize;
        window.clear();
        window.resize((start[hi] as usize - base) * width, 0);
        let mut fill: Vec<u32> = start[lo..hi].to_vec();
        edges.each(|file, sym, count| {
            let sym = sym as usize;
            if (lo..hi).contains(&sym) {
                let at = (fill[sym - lo] as usize - base) * width;
                window[at] = file;
                if width == 2 {
                    window[at + 1] = count;
                }
                fill[sym - lo] += 1;
            }
        });
        put(&window);
        lo = hi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definitions and references of file `f` of the made-up edges: spread unevenly
    /// (symbol 0 is referenced by every file), with a damaged part's symbol past the table
    /// in each, which counts as a definition only.
    fn file_edges(f: u32, nsym: u32) -> (Vec<u32>, Vec<(u32, u32)>) {
        let mut defs: Vec<u32> = (0..f % 4).map(|k| (f * 7 + k * 3) % nsym).collect();
        defs.push(nsym + 5);
        let mut refs: Vec<(u32, u32)> =
            (0..f % 6).map(|k| ((f * 13 + k * 5) % nsym, k + 1)).collect();
        refs.push((0, 2));
        refs.sort_unstable();
        refs.dedup_by_key(|r| r.0);
        refs.push((nsym + 9, 1));
        (defs, refs)
    }

    fn edges(files: u32, nsym: u32) -> Edges {
        let mut edges = Edges::default();
        for f in 0..files {
            let (defs, refs) = file_edges(f, nsym);
            edges.add(f, defs.into_iter(), refs.into_iter(), nsym as usize);
        }
        edges
    }

    /// The graph's arrays built the plain way: every edge sorted by symbol, then file.
    fn naive(files: u32, nsym: u32) -> Vec<Vec<u32>> {
        let mut defined = Vec::new();
        let mut referenced = Vec::new();
        for f in 0..files {
            let (mut defs, refs) = file_edges(f, nsym);
            defs.sort_unstable();
            defs.dedup();
            defined.extend(defs.into_iter().filter(|&s| s < nsym).map(|s| (s, f)));
            referenced.extend(refs.into_iter().filter(|r| r.0 < nsym).map(|(s, c)| (s, f, c)));
        }
        defined.sort_by_key(|&(s, f)| (s, f));
        referenced.sort_by_key(|&(s, f, _)| (s, f));
        let start = |syms: Vec<u32>| -> Vec<u32> {
            (0..=nsym).map(|s| syms.iter().filter(|&&x| x < s).count() as u32).collect()
        };
        vec![
            start(defined.iter().map(|d| d.0).collect()),
            defined.iter().map(|d| d.1).collect(),
            start(referenced.iter().map(|r| r.0).collect()),
            referenced.iter().flat_map(|r| [r.1, r.2]).collect(),
        ]
    }

    #[test]
    fn the_graph_made_in_windows_is_the_graph() {
        let (files, nsym) = (500, 37);
        let want = naive(files, nsym);
        for budget in [1, 2, 7, 64, WINDOW, usize::MAX] {
            let mut bytes = Vec::new();
            let mut largest = 0;
            let (graph, definitions) = edges(files, nsym).write(nsym as usize, budget, |values| {
                largest = largest.max(values.len());
                bytes.extend_from_slice(values);
            });
            let arrays: Vec<Vec<u32>> =
                [graph.def_start, graph.def_files, graph.ref_start, graph.ref_files]
                    .iter()
                    .map(|s| bytes[s.start as usize / 4..(s.start + s.len) as usize / 4].to_vec())
                    .collect();
            assert_eq!(arrays, want, "budget {budget}");
            // Every definition counts, those past the table too (one a file).
            let defined: u64 = (0..files).map(|f| u64::from(f % 4) + 1).sum();
            assert_eq!(definitions, defined);
            // A window holds the budget, or one symbol's edges: symbol 0's, referenced by
            // every file, two values each; the arrays of starts are whole.
            let bound = budget.max(2 * files as usize).max(nsym as usize + 1);
            assert!(largest <= bound, "budget {budget}: {largest} > {bound}");
        }
    }

    #[test]
    fn files_with_no_edges_keep_their_place() {
        let mut e = Edges::default();
        e.add(3, [1].into_iter(), [(0, 4)].into_iter(), 2);
        let mut bytes = Vec::new();
        let (graph, definitions) = e.write(2, WINDOW, |v| bytes.extend_from_slice(v));
        let at = |s: Section| bytes[s.start as usize / 4..(s.start + s.len) as usize / 4].to_vec();
        assert_eq!(definitions, 1);
        assert_eq!(at(graph.def_files), [3]);
        assert_eq!(at(graph.ref_files), [3, 4]);
        assert!(Edges::default().heap_bytes() < 64);
    }
}
