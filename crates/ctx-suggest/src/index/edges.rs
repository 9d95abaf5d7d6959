//! The edges of the symbol graph, gathered file by file and turned into the graph's arrays
//! (see [`GraphParts`](super::blob::GraphParts)) within a fixed budget of memory.

use super::blob::{GraphParts, Section};

/// Values of the graph's arrays made at once: the arrays by symbol are made a window of
/// symbols at a time, each window one pass over the edges, so that turning the edges by file
/// into edges by symbol holds the edges and one window, not a second copy of every edge.
pub(super) const WINDOW: usize = 1 << 22;

/// The edges of the symbol graph by file, in file order: the symbols each file defines (each
/// once) and the symbols it references with how often.
pub(super) struct Edges {
    /// The symbols file `f` defines are `defs[def_at[f]..def_at[f + 1]]`.
    defs: Vec<u32>,
    def_at: Vec<u64>,
    /// The (symbol, count) pairs of file `f` are `refs[2 * ref_at[f]..2 * ref_at[f + 1]]`.
    refs: Vec<u32>,
    ref_at: Vec<u64>,
    /// The last file that defined each symbol, so that a file defines it once.
    seen: Vec<u32>,
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
            self.ref_at.push(self.refs.len() as u64 / 2);
        }
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
                self.defs.push(sym);
            }
        }
        for (sym, count) in refs.filter(|(sym, _)| (*sym as usize) < limit) {
            self.refs.extend([sym, count]);
        }
        self.def_at.push(self.defs.len() as u64);
        self.ref_at.push(self.refs.len() as u64 / 2);
    }

    /// Bytes the edges hold.
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        4 * (self.defs.capacity() + self.refs.capacity() + self.seen.capacity())
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
        for (values, spans, width) in [(&defs, &def_at, 1), (&refs, &ref_at, 2)] {
            let start = starts(nsym, values.iter().step_by(width).copied());
            let begin = at.get();
            counted(&start);
            sections.push(Section { start: begin, len: at.get() - begin });
            let begin = at.get();
            by_symbol((values, spans, width), &start, budget, &mut counted);
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

/// For each of `nsym` symbols, where its entries start in the array by symbol, then the
/// total: a counting sort's offsets.
fn starts(nsym: usize, syms: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut counts = vec![0u32; nsym + 1];
    for sym in syms {
        counts[sym as usize] += 1;
    }
    let mut sum = 0u32;
    for c in &mut counts {
        let n = *c;
        *c = sum;
        sum += n;
    }
    counts
}

/// The entries of `values` (by file, `width` values an entry, the first its symbol, file `f`'s
/// being the entries `spans[f]..spans[f + 1]`) by symbol, each symbol's in file order, as the
/// file and the entry's other values: given to `put` a window of symbols at a time.
fn by_symbol(
    (values, spans, width): (&[u32], &[u64], usize),
    start: &[u32],
    budget: usize,
    put: &mut dyn FnMut(&[u32]),
) {
    let nsym = start.len() - 1;
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
        for (file, span) in spans.windows(2).enumerate() {
            let entries = values.get(span[0] as usize * width..span[1] as usize * width);
            for entry in entries.unwrap_or_default().chunks_exact(width) {
                let sym = entry[0] as usize;
                if (lo..hi).contains(&sym) {
                    let at = (fill[sym - lo] as usize - base) * width;
                    window[at] = file as u32;
                    window[at + 1..at + width].copy_from_slice(&entry[1..]);
                    fill[sym - lo] += 1;
                }
            }
        }
        put(&window);
        lo = hi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Edges of `files` files over `nsym` symbols, made up but spread unevenly (symbol 0 is
    /// referenced by every file).
    fn edges(files: u32, nsym: u32) -> Edges {
        let mut edges = Edges::default();
        for f in 0..files {
            let defs = (0..f % 4).map(|k| (f * 7 + k * 3) % nsym);
            let mut refs: Vec<(u32, u32)> =
                (0..f % 6).map(|k| ((f * 13 + k * 5) % nsym, k + 1)).collect();
            refs.push((0, 2));
            refs.sort_unstable();
            refs.dedup_by_key(|r| r.0);
            // A damaged part's symbol past the table counts as a definition only.
            edges.add(
                f,
                defs.chain([nsym + 5]),
                refs.into_iter().chain([(nsym + 9, 1)]),
                nsym as usize,
            );
        }
        edges
    }

    /// The graph's arrays built the plain way: every edge sorted by symbol, then file.
    fn naive(files: u32, nsym: u32) -> Vec<Vec<u32>> {
        let e = edges(files, nsym);
        let mut defined = Vec::new();
        let mut referenced = Vec::new();
        for f in 0..files as usize {
            let defs = &e.defs[e.def_at[f] as usize..e.def_at[f + 1] as usize];
            defined.extend(defs.iter().map(|&s| (s, f as u32)));
            let refs = &e.refs[2 * e.ref_at[f] as usize..2 * e.ref_at[f + 1] as usize];
            referenced.extend(refs.chunks(2).map(|r| (r[0], f as u32, r[1])));
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
