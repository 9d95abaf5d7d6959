//! The index: per file, the terms of five fields, the symbols it defines
//! and references, and the stamp (length, modification time, inode) that
//! tells when it must be read again; persisted in a [`ctx_fs::Store`].
//!
//! A file's terms lie in its postings ([`postings`]), beside its definitions, references and
//! doc lines ([`parts`]), all in one blob ([`blob`]) after the name tables ([`names`]) and
//! followed by the symbol graph ([`graph`]). [`parse`] reads a file into its fields' terms,
//! [`refresh`] brings the index up to date with the workspace, and [`store`] writes and
//! loads its stored form: a base and a log of the segments later updates appended
//! ([`segment`]).

mod blob;
mod change;
mod edges;
mod graph;
mod intern;
mod lists;
mod names;
mod parse;
mod partial;
mod parts;
mod postings;
mod refresh;
mod segment;
mod store;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use blob::{Blob, GraphParts};
pub(crate) use lists::{
    BOUND_B, BOUND_FIELD, Cursor, END, FileHits, Hits, TermLists, file_name_key_into, weighted,
};
use names::{Names, Table, lookup};
pub use partial::MAX_PARTIAL_FOLDERS;
pub(crate) use parts::DefRec;
use parts::{Defs, Parts, Refs};
pub(crate) use postings::match_postings;
use postings::{PostingIter, split_postings};

use crate::classify::FileClass;
use crate::symbols::{Lang, SymbolSource};

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

/// What an index takes in, fixed when it is built: a stored index built with other settings is
/// rebuilt. A [`SymbolSource`] converts into the settings with data files left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IndexSettings {
    /// Where the files' symbols come from.
    pub symbols: SymbolSource,
    /// Whether data files, lock files, minified and generated code
    /// ([`is_data_path`](crate::is_data_path), [`is_generated`](crate::is_generated)) are
    /// read and searched like the others. Off by default: they are listed with their stamps
    /// ([`FileClass::LeftOut`]) and never suggested.
    pub data_files: bool,
}

impl From<SymbolSource> for IndexSettings {
    fn from(symbols: SymbolSource) -> IndexSettings {
        IndexSettings { symbols, data_files: false }
    }
}

impl IndexSettings {
    /// These settings with data files taken in or left out.
    pub fn data_files(self, data_files: bool) -> IndexSettings {
        IndexSettings { data_files, ..self }
    }
}

/// Everything of an index but its blob.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Data {
    root: String,
    /// Where the files' symbols come from.
    symbol_source: SymbolSource,
    /// Whether data files are read and searched ([`IndexSettings::data_files`]).
    data_files: bool,
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
    /// What the last refresh changed, for storing it as a segment; once the index was loaded
    /// or stored, what all refreshes changed since.
    change: Option<change::Change>,
    /// Whether the last walk of the whole workspace reached anything through a link; `None`
    /// before one.
    walked_links: Option<bool>,
    /// The postings by term, once [`Index::keep_term_lists`] built them; dropped by any change.
    lists: std::sync::OnceLock<lists::TermLists>,
    /// Each file's place in the order of the paths as strings, built with the lists; dropped
    /// by any change.
    path_order: std::sync::OnceLock<Vec<u32>>,
    /// The files by the name they go by and the collection's statistics, built with the
    /// lists; dropped by any change.
    keys: std::sync::OnceLock<lists::FileKeys>,
    /// What updates changed in the symbol graph since it was built ([`graph::Patch`]).
    patch: Option<Box<graph::Patch>>,
    /// The stored file as this index last loaded or stored it; `change` is then what changed
    /// since (see [`Index::store`]).
    stored: Option<segment::Stored>,
}

impl Index {
    /// An empty index that will take in files as `settings` say (a [`SymbolSource`], or
    /// [`IndexSettings`]).
    pub fn new(settings: impl Into<IndexSettings>) -> Index {
        let settings = settings.into();
        let mut index = Index::default();
        index.data.symbol_source = settings.symbols;
        index.data.data_files = settings.data_files;
        index
    }

    /// Where this index takes its files' symbols from.
    pub fn symbol_source(&self) -> SymbolSource {
        self.data.symbol_source
    }

    /// What this index takes in.
    pub fn settings(&self) -> IndexSettings {
        IndexSettings { symbols: self.data.symbol_source, data_files: self.data.data_files }
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

    /// Builds the postings by term (each term's files), unless they are built, so that the
    /// ranking reads the lists of the prompt's terms instead of every file's postings; for a
    /// process that keeps the index and asks it often. Any change to the index drops them;
    /// its answers are the same with them or without.
    pub fn keep_term_lists(&self) {
        self.lists.get_or_init(|| {
            // A damaged table may say it holds more names than its bytes can.
            let terms = self.term_count().min(self.data.terms.byte_len());
            let lists = lists::TermLists::build(&self.data.files, |f| self.postings_part(f), terms);
            lists.with_terms(&self.data.terms)
        });
        self.path_order.get_or_init(|| {
            let files = &self.data.files;
            let mut by_path: Vec<u32> = (0..files.len() as u32).collect();
            by_path.sort_unstable_by(|&a, &b| files[a as usize].path.cmp(&files[b as usize].path));
            let mut order = vec![0u32; files.len()];
            for (place, &i) in by_path.iter().enumerate() {
                order[i as usize] = place as u32;
            }
            order
        });
        self.keys.get_or_init(|| lists::FileKeys::build(&self.data.files));
    }

    /// The files by name and the collection's statistics, when they are kept.
    pub(crate) fn file_keys(&self) -> Option<&lists::FileKeys> {
        self.keys.get().filter(|k| k.files == self.data.files.len())
    }

    /// Each file's place in the order of the paths as strings, when it is kept.
    pub(crate) fn path_order(&self) -> Option<&[u32]> {
        self.path_order.get().map(Vec::as_slice).filter(|o| o.len() == self.data.files.len())
    }

    /// Bytes the postings by term hold in memory (0 when they are not built).
    pub fn term_lists_bytes(&self) -> usize {
        let order = self.path_order.get().map_or(0, |o| o.len() * 4);
        let keys = self.keys.get().map_or(0, lists::FileKeys::heap_bytes);
        self.lists.get().map_or(0, lists::TermLists::heap_bytes) + order + keys
    }

    /// The postings by term, when they are built.
    pub(crate) fn term_lists(&self) -> Option<&lists::TermLists> {
        self.lists.get()
    }

    pub(crate) fn files(&self) -> &[FileRec] {
        &self.data.files
    }

    /// The bytes of one of a file's parts: `which` counts from the postings (0) to the docs (3).
    fn part(&self, f: &FileRec, which: usize) -> &[u8] {
        self.part_of(&f.parts, which)
    }

    /// The bytes of one of the parts `p` places: `which` counts from the postings (0) to the
    /// docs (3).
    fn part_of(&self, p: &Parts, which: usize) -> &[u8] {
        let lens = [p.postings, p.defs, p.refs, p.docs].map(u64::from);
        self.blob.get(p.start + lens[..which].iter().sum::<u64>(), lens[which])
    }

    /// A file's postings: term ids in ascending order, each with its frequency per field.
    pub(crate) fn postings(&self, f: &FileRec) -> PostingIter<'_> {
        split_postings(self.part(f, 0)).1
    }

    /// A file's postings part (see [`postings::encode_postings`]).
    pub(crate) fn postings_part(&self, f: &FileRec) -> &[u8] {
        self.part(f, 0)
    }

    /// A file's definitions, in source order.
    pub(crate) fn defs(&self, f: &FileRec) -> Defs<'_> {
        Defs::new(self.part(f, 1))
    }

    /// The symbols a file references and how often, by symbol id.
    pub(crate) fn refs(&self, f: &FileRec) -> Refs<'_> {
        Refs::new(self.part(f, 2))
    }

    /// The first doc line of one of a file's definitions.
    pub(crate) fn doc(&self, f: &FileRec, def: &DefRec) -> Option<&str> {
        let (start, end) = def.doc;
        let docs = self.part(f, 3).get(start as usize..end as usize)?;
        (start < end).then(|| std::str::from_utf8(docs).ok()).flatten()
    }

    /// The ids of `names` in the term table: by the terms' hashes kept with the lists, else in
    /// one pass over it.
    pub(crate) fn term_ids(&self, names: &[&str]) -> Vec<Option<u32>> {
        let kept = self.lists.get().and_then(|l| l.term_ids(&self.data.terms, names));
        kept.unwrap_or_else(|| lookup(self.data.terms.iter_bytes(), names))
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
