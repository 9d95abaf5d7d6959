//! Reading one file of the walk: its class, its symbols, and the terms of its five fields
//! counted, before they are given ids.

use std::time::UNIX_EPOCH;

use ctx_fs::{Content, Sandbox, WalkEntry};

use super::parts::Parts;
use super::{Field, FileRec, IndexSettings};
use crate::classify::{FileClass, classify, is_data_path, is_generated};
use crate::hash::SeededMap;
use crate::symbols::{self, Def, Lang};
use crate::tokenize;

/// Per-file terms before interning: term -> frequency per field.
/// A file's terms with their count in each field, sorted by term.
pub(super) type Bag = Vec<(String, [u32; 5])>;

/// A file read and counted, before its names are given ids.
pub(super) struct Parsed {
    pub(super) rec: FileRec,
    pub(super) bag: Bag,
    pub(super) defs: Vec<Def>,
    /// The names the file refers to, each with how often, in the names' order.
    pub(super) refs: Vec<(String, u32)>,
}

/// The modification time of a walked file in nanoseconds since the epoch (0 when unknown),
/// part of its stamp.
pub(super) fn mtime_of(entry: &WalkEntry) -> u64 {
    entry
        .modified
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Reads and parses one file of the walk (a refresh runs this on every core). Unless
/// `settings` take data files in, a data file is not read and a generated one not counted:
/// each is listed as [`FileClass::LeftOut`], with its stamp and no terms.
pub(super) fn parse_entry(sandbox: &Sandbox, entry: &WalkEntry, settings: IndexSettings) -> Parsed {
    let path = entry.path.as_str();
    let mut rec = FileRec {
        path: path.to_owned(),
        len: entry.len,
        mtime: mtime_of(entry),
        inode: entry.inode,
        lang: Lang::of(path),
        class: FileClass::Unreadable,
        lines: 0,
        field_len: [0; 5],
        parts: Parts::default(),
    };
    let left_out = |mut rec: FileRec| {
        rec.class = FileClass::LeftOut;
        Parsed { rec, bag: Bag::new(), defs: Vec::new(), refs: Vec::new() }
    };
    if !settings.data_files && is_data_path(path) {
        return left_out(rec);
    }
    let mut counter = Counter::default();
    for t in tokenize::path_terms(path) {
        counter.add_term(Field::Path, &t);
    }
    let text = match sandbox.read_text(&entry.location) {
        Ok(Content::Text { text, .. }) => text,
        // Binary, too large or unreadable: listed by its path alone.
        _ => {
            rec.field_len = counter.field_len;
            return Parsed { rec, bag: counter.into_bag(), defs: Vec::new(), refs: Vec::new() };
        }
    };
    let head: String = text.chars().take(600).collect();
    if !settings.data_files && is_generated(&head) {
        return left_out(rec);
    }
    rec.class = classify(path, &head);
    rec.lines = u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
    // Only program source is parsed: tests, docs and generated code are demoted anyway, and
    // parsing them would cost as much as the source.
    let lang = if rec.class == FileClass::Source { rec.lang } else { Lang::Other };
    let mut syms = settings.symbols.find(lang, &text);
    let mut comment_lines = Vec::new();
    symbols::split_comments(rec.lang, &text, |line, comment| {
        comment_lines.push(comment);
        let field = if comment { Field::Comments } else { Field::Body };
        for (_, word) in tokenize::words(line) {
            counter.add_word(field, word);
        }
    });
    let lines: Vec<&str> = text.lines().collect();
    for def in &mut syms.defs {
        if def.doc.is_none() {
            def.doc = doc_near(&lines, &comment_lines, def.start as usize);
        }
        tokenize::for_each_term(&def.name, |t| counter.add_term(Field::Defs, t));
    }
    let mut counted: SeededMap<&str, u32> = SeededMap::default();
    for r in syms.refs {
        counter.add_word(Field::Refs, r);
        *counted.entry(r).or_default() += 1;
    }
    // In the names' order, not the map's: the order gives new symbols their ids.
    let mut refs: Vec<(String, u32)> =
        counted.into_iter().map(|(r, n)| (r.to_owned(), n)).collect();
    refs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    rec.field_len = counter.field_len;
    Parsed { rec, bag: counter.into_bag(), defs: syms.defs, refs }
}

/// The term counts of one file. The terms of each distinct word are kept as slots of the
/// file's counts: words repeat a lot, and splitting, lower-casing and stemming them again, or
/// looking each of their terms up again, was most of the indexing work.
#[derive(Default)]
struct Counter<'t> {
    slots: SeededMap<String, u32>,
    counts: Vec<[u32; 5]>,
    /// Each distinct word's slots, a range of `word_slots`.
    words: SeededMap<&'t str, (u32, u32)>,
    word_slots: Vec<u32>,
    field_len: [u32; 5],
}

impl<'t> Counter<'t> {
    fn slot(slots: &mut SeededMap<String, u32>, counts: &mut Vec<[u32; 5]>, term: &str) -> u32 {
        if let Some(&slot) = slots.get(term) {
            return slot;
        }
        let slot = counts.len() as u32;
        counts.push([0; 5]);
        slots.insert(term.to_owned(), slot);
        slot
    }

    fn add_term(&mut self, field: Field, term: &str) {
        let i = field as usize;
        let slot = Counter::slot(&mut self.slots, &mut self.counts, term);
        self.counts[slot as usize][i] += 1;
        self.field_len[i] += 1;
    }

    fn add_word(&mut self, field: Field, word: &'t str) {
        let i = field as usize;
        let Counter { slots, counts, words, word_slots, field_len } = self;
        let &mut (start, end) = words.entry(word).or_insert_with(|| {
            let start = word_slots.len() as u32;
            tokenize::for_each_term(word, |t| word_slots.push(Counter::slot(slots, counts, t)));
            (start, word_slots.len() as u32)
        });
        for &slot in &word_slots[start as usize..end as usize] {
            counts[slot as usize][i] += 1;
        }
        field_len[i] += end - start;
    }

    /// The terms with their counts, sorted by term.
    fn into_bag(self) -> Bag {
        let Counter { slots, counts, .. } = self;
        let mut bag: Bag = slots.into_iter().map(|(t, slot)| (t, counts[slot as usize])).collect();
        bag.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        bag
    }
}

/// The first line of the comment block right above line `start` (1-based),
/// or of a docstring right below it.
fn doc_near(lines: &[&str], comment: &[bool], start: usize) -> Option<String> {
    let at = start.checked_sub(1)?;
    let mut first = None;
    let mut i = at;
    while i > 0 && comment.get(i - 1) == Some(&true) {
        i -= 1;
        first = Some(i);
    }
    let pick = |i: usize| clean_doc(lines.get(i)?);
    if let Some(i) = first {
        return (i..at).find_map(pick);
    }
    let mut j = at + 1;
    while j < lines.len() && j <= at + 3 {
        if comment.get(j) == Some(&true) {
            return (j..lines.len().min(j + 3)).find_map(pick);
        }
        j += 1;
    }
    None
}

fn clean_doc(line: &str) -> Option<String> {
    let t = line
        .trim()
        .trim_start_matches(['/', '*', '#', '!', '"', '\'', '-', ' '])
        .trim_end_matches(['*', '/', '"', '\'', ' '])
        .trim();
    let useful = t.chars().filter(|c| c.is_alphanumeric()).count() >= 3;
    useful.then(|| t.chars().take(160).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_above_and_below() {
        let lines = ["// Retries.", "fn a() {}", "def b():", "    \"\"\"Sends it.\"\"\""];
        let comment = [true, false, false, true];
        assert_eq!(doc_near(&lines, &comment, 2).as_deref(), Some("Retries."));
        assert_eq!(doc_near(&lines, &comment, 3).as_deref(), Some("Sends it."));
    }
}
