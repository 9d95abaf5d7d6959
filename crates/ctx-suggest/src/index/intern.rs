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
use crate::hash::SeededMap;
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
    pub(super) syms: SeededMap<String, u32>,
    /// The index's term table, lent to the interner while files are read, so that the
    /// readers find the terms in it.
    pub(super) names: Names,
    /// Whether the readers leave every name to the ordered step, as a single interning
    /// thread would (the tests compare the two).
    #[cfg(test)]
    serial: bool,
}

#[cfg(test)]
thread_local! {
    /// Whether the interners made on this thread are [`Interner::serial`].
    static SERIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The ids of the terms met in a refresh, without a string a term (a cold build meets about a
/// million): each is kept by a 64-bit hash of its name with where the name lies in the
/// dictionary, which confirms a match; a name whose hash another took first is kept with its
/// string (hardly ever). The hash's seed is fixed, so a hostile tree can hold names made to
/// share one: those are kept by a hash of random seed, and each is still found at once.
#[derive(Default)]
pub(super) struct TermIds {
    by_hash: SeededMap<u64, (u32, usize)>,
    clashes: std::collections::HashMap<String, u32>,
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
            let id = it.get_term(&term).unwrap_or_else(|| {
                found.new_terms.push((found.terms.len() as u32, term));
                UNSET
            });
            found.terms.push((id, tf));
        }
    }
    let names = defs.iter_mut().map(|d| std::mem::take(&mut d.name));
    let names: Vec<String> = names
        .chain(refs.into_iter().map(|(name, n)| {
            found.ref_counts.push(n);
            name
        }))
        .collect();
    let mut names = names.into_iter().peekable();
    while names.peek().is_some() {
        let it = read(shared);
        for name in names.by_ref().take(LOOKUPS) {
            let id = it.get_sym(&name).unwrap_or_else(|| {
                found.new_syms.push((found.syms.len() as u32, name));
                UNSET
            });
            found.syms.push(id);
        }
    }
    found.defs = defs;
    found
}

impl Interner {
    /// The interner of a refresh over the term table `names` (lent by the index) and a
    /// symbol table of `base_syms` names.
    pub(super) fn new(names: Names, base_syms: usize) -> Interner {
        Interner {
            base_terms: names.len(),
            base_syms,
            names,
            #[cfg(test)]
            serial: SERIAL.with(std::cell::Cell::get),
            ..Interner::default()
        }
    }

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

    /// The id of `term` as a reader finds it.
    fn get_term(&self, term: &str) -> Option<u32> {
        #[cfg(test)]
        if self.serial {
            return None;
        }
        self.terms.get(&self.names, term)
    }

    /// The id of the symbol `name` as a reader finds it.
    fn get_sym(&self, name: &str) -> Option<u32> {
        #[cfg(test)]
        if self.serial {
            return None;
        }
        self.syms.get(name).copied()
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

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // The tests write their trees.
mod tests {
    use std::path::Path;

    use ctx_fs::{Limits, Sandbox, Store};
    use proptest::prelude::*;

    use super::super::Index;
    use super::SERIAL;

    /// `f` with the readers leaving every name to the ordered step, as one interning thread
    /// giving every name its id did.
    fn serially<T>(f: impl FnOnce() -> T) -> T {
        SERIAL.with(|s| s.set(true));
        let out = f();
        SERIAL.with(|s| s.set(false));
        out
    }

    fn sandbox(root: &Path, limits: Limits) -> Sandbox {
        Sandbox::builder(root.to_str().unwrap())
            .limits(limits)
            .open(cap_std::ambient_authority())
            .unwrap()
    }

    /// A step of xorshift: the trees are random but the same for a seed.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// A word of letters alone (the tokenizer splits at digits), distinct for each `n`.
    fn word(mut n: u64) -> String {
        let mut w = String::from("q");
        loop {
            w.push(char::from(b'a' + (n % 26) as u8));
            n /= 26;
            if n == 0 {
                return w;
            }
        }
    }

    /// Writes file `i` of a random tree: Rust, Python or Markdown, whose words and names are
    /// drawn from a vocabulary of `vocab` words, so that files share most of their names and
    /// each brings a few of its own.
    fn write_file(root: &Path, i: usize, vocab: u64, state: &mut u64) {
        let pick = |state: &mut u64| word(next(state) % vocab);
        let (dir, ext) = (format!("m{}", i % 5), ["rs", "py", "md"][i % 3]);
        let mut text = String::new();
        for _ in 0..1 + next(state) % 6 {
            let (name, called, doc) = (pick(state), pick(state), pick(state));
            text.push_str(&match ext {
                "rs" => format!("/// {doc} it.\npub fn {name}_{i}() {{ {called}(); }}\n"),
                "py" => format!("def {name}():\n    \"\"\"{doc} it.\"\"\"\n    {called}()\n"),
                _ => format!("# {name}\n{doc} and {called} for {}.\n", word(vocab + i as u64)),
            });
        }
        std::fs::create_dir_all(root.join(&dir)).unwrap();
        std::fs::write(root.join(dir).join(format!("f{i}.{ext}")), text).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(8))]

        /// Readers on every core look names up while the ordered step gives ids to others:
        /// whatever they found, the index is byte for byte the one of a single interning
        /// thread, built in memory, streamed to the store, and after an update.
        #[test]
        fn the_index_is_the_serial_builds(
            seed in 1u64..,
            files in 64usize..300,
            vocab in 8u64..2000,
        ) {
            let (tree, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let mut state = seed;
            for i in 0..files {
                write_file(tree.path(), i, vocab, &mut state);
            }
            let sandbox = sandbox(tree.path(), Limits::default());
            let (mut serial, _) = serially(|| Index::build(&sandbox)).unwrap();
            let (mut built, stats) = Index::build(&sandbox).unwrap();
            prop_assert_eq!(stats.indexed, files);
            prop_assert!(built.encode() == serial.encode());
            let store =
                Store::open(cache.path().to_str().unwrap(), cap_std::ambient_authority()).unwrap();
            let (opened, _) = Index::open(&sandbox, &store).unwrap();
            prop_assert!(opened.encode() == serial.encode(), "streamed");
            // The ids follow the files' order and each file's terms by name.
            let names: Vec<&str> = built.data.terms.iter().collect();
            let mut seen = vec![false; names.len()];
            let mut fresh = 0;
            for f in built.files() {
                let mut ids: Vec<u32> = built.postings(f).map(|(id, _)| id).collect();
                ids.sort_by_key(|&id| names[id as usize]);
                for id in ids {
                    if !seen[id as usize] {
                        prop_assert_eq!(id, fresh);
                        seen[id as usize] = true;
                        fresh += 1;
                    }
                }
            }
            prop_assert_eq!(fresh as usize, names.len());
            // An update: files changed, added and removed, some names new, read by the
            // readers against the stored tables.
            for i in (0..files).step_by(3) {
                write_file(tree.path(), i + files * (i % 2), vocab * 2, &mut state);
            }
            for i in (1..files).step_by(7) {
                let dir = tree.path().join(format!("m{}", i % 5));
                for ext in ["rs", "py", "md"] {
                    let _ = std::fs::remove_file(dir.join(format!("f{i}.{ext}")));
                }
            }
            let want = serially(|| serial.refresh(&sandbox)).unwrap();
            prop_assert!(want.indexed > 0 && want.removed > 0);
            prop_assert_eq!(built.refresh(&sandbox).unwrap().indexed, want.indexed);
            prop_assert!(built.encode() == serial.encode(), "updated");
        }
    }

    /// A file of two hundred thousand distinct terms among ordinary ones: its reader lets the
    /// ordered step in every few thousand names, the build ends, and every term is given one
    /// id, the one a single thread gives.
    #[test]
    fn a_file_of_many_distinct_terms_is_read_like_the_others() {
        let tree = tempfile::tempdir().unwrap();
        let mut state = 7;
        for i in 0..150 {
            write_file(tree.path(), i, 300, &mut state);
        }
        let words: Vec<String> = (0..200_000).map(|n| word(1_000_000 + n)).collect();
        std::fs::write(tree.path().join("m0/huge.md"), words.join("\n")).unwrap();
        let mut limits = Limits::default();
        limits.max_file_bytes = 4 << 20;
        let sandbox = sandbox(tree.path(), limits);
        let (built, stats) = Index::build(&sandbox).unwrap();
        assert_eq!(stats.indexed, 151);
        assert!(built.term_count() > 150_000, "{}", built.term_count());
        let (serial, _) = serially(|| Index::build(&sandbox)).unwrap();
        assert_eq!(built.term_count(), serial.term_count());
        assert!(built.encode() == serial.encode());
    }

    /// A hostile tree: names that are prefixes of each other, names of thousands of
    /// characters, the same names in every file and as terms and symbols alike, text in
    /// other scripts, files empty, binary, or over the size limit. Read on every core, it
    /// is the serial build's, byte for byte.
    #[test]
    fn a_hostile_tree_is_read_like_the_serial_build() {
        let tree = tempfile::tempdir().unwrap();
        let root = tree.path();
        let long = "x".repeat(5_000);
        for i in 0..200 {
            let dir = root.join(format!("d{}", i % 4));
            std::fs::create_dir_all(&dir).unwrap();
            let prefix: String = "abcdefghij".chars().take(1 + i % 10).collect();
            let text = match i % 6 {
                0 => String::new(),
                1 => format!("\0binary\0{i}"),
                2 => "word ".repeat(300_000),
                3 => format!(
                    "fn {prefix}() {{ {prefix}_{i}(); shared(); }}\nfn shared() {{}}\n\
                     fn {long}{i}() {{ {long}(); }}\n// {prefix} {long}\n"
                ),
                4 => {
                    format!("def {prefix}():\n    \"\"\"Été {i} ☃ \u{202e}ñ.\"\"\"\n    shared()\n")
                }
                _ => format!("# {prefix} {i}\nπλάτος {prefix}{i} Straße shared\n"),
            };
            std::fs::write(
                dir.join(format!("f{i}.{}", ["rs", "bin", "txt", "rs", "py", "md"][i % 6])),
                text,
            )
            .unwrap();
        }
        let sandbox = sandbox(root, Limits::default());
        let (built, stats) = Index::build(&sandbox).unwrap();
        assert_eq!(stats.indexed, 200);
        let (serial, _) = serially(|| Index::build(&sandbox)).unwrap();
        assert_eq!(
            (built.term_count(), built.symbol_count()),
            (serial.term_count(), serial.symbol_count())
        );
        assert!(built.encode() == serial.encode());
    }
}
