//! The symbol graph: for each symbol, the files that define it and the files that reference
//! it, built when the files change and read in place by the ranking.

use super::Index;
use super::blob::Section;
use super::edges::Edges;

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
        // One pass over the files' parts.
        let mut edges = Edges::default();
        for (i, f) in self.data.files.iter().enumerate() {
            edges.add(i as u32, self.defs(f).map(|d| d.sym), self.refs(f), nsym);
        }
        let mut blob = Vec::new();
        let (graph, definitions) = edges.write(nsym, usize::MAX, |values| {
            blob.extend(values.iter().flat_map(|v| v.to_le_bytes()))
        });
        self.data.definitions = definitions;
        self.data.blob_len = self.blob.len() as u64;
        self.data.graph = graph;
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
