//! Giving the names of the files read their ids, split between the threads that read the
//! files and the one that takes them in the files' order. A reader looks each name of its
//! file up in the ids given so far (shared, read-only while it looks) and keeps the id of
//! every name found; the ordered step only gives ids to the names that were not found, in
//! the files' order and each file's order, so that the ids, and the stored bytes, are those
//! a single thread giving every name its id in that order would give.

use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use super::FileRec;
use super::names::{Names, Table};
use super::parse::Parsed;
use crate::hash::FxHashMap;
use crate::symbols::Def;

/// Names a reader looks up before it lets the ordered step in again: a file of a million
/// distinct terms holds the ids no longer than a file of this many.
const LOOKUPS: usize = 4096;

/// The ids of the names met in one refresh, and the term table they lie in. Names of the
/// stored tables are found by one pass over them per batch of files
/// ([`Index::resolve`](super::Index)), so an update that reads a few files never builds a map
/// of the whole dictionary.
#[derive(Default)]
pub(super) struct Interner {
    /// Table sizes before the refresh: names added since are all in the maps.
    pub(super) base_terms: usize,
    pub(super) base_syms: usize,
    pub(super) terms: TermIds,
    pub(super) syms: FxHashMap<String, u32>,
    /// The index's term table, lent to the interner while files are read, so that the
    /// readers find the terms in it.
    pub(super) names: Names,
}

/// The ids of the terms met in a refresh, without a string a term (a cold build meets about a
/// million): each is kept by a 64-bit hash of its name with where the name lies in the
/// dictionary, which confirms a match; a name whose hash another took first is kept with its
/// string (hardly ever).
#[derive(Default)]
pub(super) struct TermIds {
    by_hash: FxHashMap<u64, (u32, usize)>,
    clashes: FxHashMap<String, u32>,
}

impl TermIds {
    fn hash(term: &str) -> u64 {
        use std::hash::BuildHasher;
        foldhash::fast::FixedState::default().hash_one(term)
    }

    /// The id of `term`, whose name lies in `terms`.
    pub(super) fn get(&self, terms: &Names, term: &str) -> Option<u32> {
        match self.by_hash.get(&TermIds::hash(term)) {
            Some(&(id, at)) if terms.name_at(at) == term.as_bytes() => Some(id),
            Some(_) => self.clashes.get(term).copied(),
            None => None,
        }
    }

    /// Keeps `id` for `term`, whose name starts at byte `at` of the dictionary.
    pub(super) fn insert(&mut self, term: &str, id: u32, at: usize) {
        match self.by_hash.entry(TermIds::hash(term)) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert((id, at));
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.clashes.insert(term.to_owned(), id);
            }
        }
    }
}

/// An id not given yet: the name waits in [`Found::new_terms`] or [`Found::new_syms`].
const UNSET: u32 = u32::MAX;

/// A file read, with the ids of the names its reader found.
pub(super) struct Found {
    pub(super) rec: FileRec,
    /// The file's terms in the order of its bag (by term), each with its id and its count in
    /// each field.
    pub(super) terms: Vec<(u32, [u32; 5])>,
    /// The symbol ids of its definitions, then of its references.
    pub(super) syms: Vec<u32>,
    /// Its definitions, their names taken out (their ids are in `syms`).
    pub(super) defs: Vec<Def>,
    /// How often it references each symbol of `syms` past its definitions.
    pub(super) ref_counts: Vec<u32>,
    /// The terms not found, each with its place in `terms`, in that order.
    pub(super) new_terms: Vec<(u32, String)>,
    /// The symbol names not found, each with its place in `syms`, in that order.
    pub(super) new_syms: Vec<(u32, String)>,
}

fn read(shared: &RwLock<Interner>) -> RwLockReadGuard<'_, Interner> {
    shared.read().unwrap_or_else(PoisonError::into_inner)
}

/// Looks the names of `parsed` up in the ids given so far (a reader runs this on its file):
/// each name found is replaced by its id, the others are kept for the ordered step. The
/// names found are the same whenever the reader looks (an id once given never changes), so
/// what the ordered step gives is the same too.
pub(super) fn look_up(shared: &RwLock<Interner>, parsed: Parsed) -> Found {
    let Parsed { rec, bag, mut defs, refs } = parsed;
    let mut found = Found {
        rec,
        terms: Vec::with_capacity(bag.len()),
        syms: Vec::with_capacity(defs.len() + refs.len()),
        defs: Vec::new(),
        ref_counts: Vec::with_capacity(refs.len()),
        new_terms: Vec::new(),
        new_syms: Vec::new(),
    };
    let mut bag = bag.into_iter().peekable();
    while bag.peek().is_some() {
        let it = read(shared);
        for (term, tf) in bag.by_ref().take(LOOKUPS) {
            let id = it.terms.get(&it.names, &term).unwrap_or_else(|| {
                found.new_terms.push((found.terms.len() as u32, term));
                UNSET
            });
            found.terms.push((id, tf));
        }
    }
    let names = defs.iter_mut().map(|d| std::mem::take(&mut d.name));
    let mut names = names.chain(refs.into_iter().map(|(name, n)| {
        found.ref_counts.push(n);
        name
    }));
    let mut more = true;
    while more {
        let it = read(shared);
        more = false;
        for name in names.by_ref() {
            let id = it.syms.get(&name).copied().unwrap_or_else(|| {
                found.new_syms.push((found.syms.len() as u32, name));
                UNSET
            });
            found.syms.push(id);
            if found.syms.len() % LOOKUPS == 0 {
                more = true;
                break;
            }
        }
    }
    found.defs = defs;
    found
}

impl Interner {
    /// Gives the names of `found` that were not found their ids, in its order: a name met
    /// since it was looked up gets the id it was given, a name never met the next one.
    pub(super) fn assign(&mut self, symbols: &mut Table, found: &mut Found) {
        for (k, term) in std::mem::take(&mut found.new_terms) {
            found.terms[k as usize].0 = self.term_id(term);
        }
        for (k, name) in std::mem::take(&mut found.new_syms) {
            found.syms[k as usize] = self.sym_id(symbols, name);
        }
    }

    fn term_id(&mut self, term: String) -> u32 {
        if let Some(id) = self.terms.get(&self.names, &term) {
            return id;
        }
        let id = self.names.len() as u32;
        let at = self.names.push(&term);
        self.terms.insert(&term, id, at);
        id
    }

    fn sym_id(&mut self, symbols: &mut Table, sym: String) -> u32 {
        if let Some(&id) = self.syms.get(&sym) {
            return id;
        }
        let id = symbols.len() as u32;
        symbols.push(&sym);
        self.syms.insert(sym, id);
        id
    }
}
