//! The symbol graph: for each symbol, the files that define it and the files that reference
//! it, built when the files change and read in place by the ranking.

use super::Index;
use super::blob::{GraphParts, Section};

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
    /// records the blob's length; called whenever the files changed.
    pub(super) fn seal(&mut self) {
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
