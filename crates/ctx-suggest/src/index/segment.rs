//! The segments of a stored index: an update that changed a few files appends one segment
//! to the index's log instead of writing the whole index again; a load reads the base index,
//! then each segment of the log in order.
//!
//! A segment holds what one update added: the terms, symbols and kinds named for the first
//! time (appended to the tables, so every id the base gave stays), the changed and new
//! files' records with the place of each in the new file order, the parts they point to
//! (after the blob's bytes), and a tombstone (the path) for every file removed or replaced.
//! Applied to the index it was made from, it gives the very index the update held in memory,
//! so a query answers the same as on an index written whole; the symbol graph, which depends
//! on every file, is built again after the last segment.
//!
//! The log follows the base in the same file of the store (the base's header says where the
//! base ends), so that replacing the base drops its log with it. Each segment starts with a
//! header: magic, version, the checksum of the base it applies to, its length and its
//! checksum. The log is its own manifest: a segment counts only once all its bytes are there
//! and its checksum holds, so an update stopped while it appends leaves the stored index as
//! it was before that update (the next walk finds its changes again). A segment of another
//! base, cut short, damaged or out of shape ends the log there: the segments before it are
//! used, and the next open writes the whole index.
//!
//! Merge policy ([`Plan`]): an update writes the whole index (and empties the log) when there
//! is no base yet, when the base was damaged, when the log could not be read whole, when the
//! update rebuilt the blob or compacted the dictionary, when the log already holds
//! [`MAX_SEGMENTS`] segments, or when the log would grow past a quarter of the base
//! ([`LOG_SHARE`]).

use serde::{Deserialize, Serialize};

use super::change::{Change, Mark};
use super::parts::{Defs, Parts, Refs};
use super::postings::split_postings;
use super::{FileRec, Index};
use crate::hash::{SeededSet, payload_sum};

const MAGIC: &[u8; 8] = b"CTXSEGM\0";
/// The segment format version; a segment of another version ends the log.
const VERSION: u32 = 1;
/// Magic, version, base checksum, payload length, payload checksum.
const HEADER: usize = 8 + 4 + 8 + 8 + 8;

/// Segments a log holds at most; the update that would add one more merges.
pub(super) const MAX_SEGMENTS: usize = 8;

/// The log's share of the base's bytes past which an update merges, as a divisor.
const LOG_SHARE: u64 = 4;

/// Where the stored index came from, as far as the log is concerned.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Stored {
    /// The checksum in the base's header.
    pub(super) base_sum: u64,
    /// The base's length in bytes.
    pub(super) base_len: u64,
    /// Segments applied and the log's length in bytes.
    pub(super) segments: usize,
    pub(super) log_len: u64,
    /// Whether the log was read whole (false: a segment was cut short, damaged or of
    /// another base, and the next write merges).
    pub(super) log_whole: bool,
}

/// The tables of a segment; its parts follow them.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Tables {
    before: Mark,
    terms: Vec<String>,
    symbols: Vec<String>,
    kinds: Vec<String>,
    removed: Vec<String>,
    fresh: Vec<u32>,
    files: Vec<FileRec>,
    live_terms: u32,
    parts_len: u64,
}

/// What the graph needs to follow a segment ([`Index::follow_graph`]).
type Applied = (Vec<(u32, Parts)>, Vec<u32>, usize);

/// How an update is stored.
pub(super) enum Plan {
    /// Append these bytes to the log.
    Append(Vec<u8>),
    /// Write the whole index and empty the log.
    Merge,
}

impl Index {
    /// The sizes of the index's tables and blob now.
    pub(super) fn mark(&self) -> Mark {
        Mark {
            terms: self.data.terms.len() as u32,
            symbols: self.data.symbols.len() as u32,
            kinds: self.data.kinds.len() as u32,
            blob: self.blob.len() as u64,
            files: self.data.files.len() as u32,
        }
    }

    /// Applies the segments of `log` made from the base whose checksum is `base_sum`, in
    /// order, stopping at the first that is cut short, damaged, of another base or does not
    /// fit the index; then builds the graph again. Returns how many were applied and whether
    /// the log was read whole.
    pub(super) fn apply_log(&mut self, log: &[u8], base_sum: u64) -> (usize, bool) {
        self.lists.take();
        self.path_order.take();
        self.keys.take();
        let mut at = 0;
        let mut applied = 0;
        // The graph follows each segment in place; once it cannot, it is built after the last.
        let mut followed = true;
        let whole = loop {
            let Some(rest) = log.get(at..).filter(|r| !r.is_empty()) else { break true };
            let Some((payload, len)) = segment(rest, base_sum) else { break false };
            let Some((gone, fresh, before)) = self.apply(payload) else { break false };
            let moved = super::change::moves(before, &gone, &fresh);
            followed = followed && self.follow_graph(&gone, &fresh, before, moved.as_deref());
            applied += 1;
            at += len;
        };
        if applied > 0 && !followed {
            self.seal();
        }
        (applied, whole)
    }

    /// Applies one segment's payload; `None` (the index unchanged) when it does not fit. Returns
    /// what the graph needs to follow it: the places and parts of the files it dropped, the
    /// places of its files, and how many files there were before it.
    fn apply(&mut self, payload: &[u8]) -> Option<Applied> {
        let (tables, parts) = postcard::take_from_bytes::<Tables>(payload).ok()?;
        if tables.before != self.mark() || tables.parts_len != parts.len() as u64 {
            return None;
        }
        if !self.merge_fits(&tables) {
            return None;
        }
        let terms = self.data.terms.len() + tables.terms.len();
        let symbols = self.data.symbols.len() + tables.symbols.len();
        let blob_end = self.blob.len() as u64 + parts.len() as u64;
        let blob_start = self.blob.len() as u64;
        let name_ok = |n: &String| !n.is_empty() && !n.contains('\0');
        let names_ok = tables.terms.iter().chain(&tables.symbols).all(name_ok)
            && tables.kinds.len() + self.data.kinds.len() <= usize::from(u16::MAX);
        // Every new file's parts lie in the segment's bytes, and every id it names exists.
        let fits = |f: &FileRec| {
            let end = f.parts.start.checked_add(f.parts.len());
            f.parts.start >= blob_start && end.is_some_and(|e| e <= blob_end)
        };
        if !names_ok || !tables.files.iter().all(fits) {
            return None;
        }
        // Every id the new files name exists once the segment's names are added.
        let at = |f: &FileRec, which: usize| {
            let p = &f.parts;
            let lens = [p.postings, p.defs, p.refs, p.docs].map(u64::from);
            let start = f.parts.start - blob_start + lens[..which].iter().sum::<u64>();
            let (start, len) = (start as usize, lens[which] as usize);
            parts.get(start..start + len).unwrap_or_default()
        };
        let ids_ok = tables.files.iter().all(|f| {
            split_postings(at(f, 0)).1.all(|(id, _)| (id as usize) < terms)
                && Defs::new(at(f, 1)).all(|d| (d.sym as usize) < symbols)
                && Refs::new(at(f, 2)).all(|(s, _)| (s as usize) < symbols)
        });
        if !ids_ok {
            return None;
        }
        for t in &tables.terms {
            self.data.terms.push(t);
        }
        for s in &tables.symbols {
            self.data.symbols.push(s);
        }
        self.data.kinds.extend(tables.kinds.iter().cloned());
        self.blob.extra.extend_from_slice(parts);
        self.data.live_terms = tables.live_terms;
        let before = self.data.files.len();
        let gone = self.merge_files(&tables.removed, &tables.fresh, tables.files);
        Some((gone, tables.fresh, before))
    }

    /// Whether a segment's files fit the current ones: every tombstone names a file, once,
    /// and its places ascend within the new list.
    fn merge_fits(&self, tables: &Tables) -> bool {
        let removed: SeededSet<&str> = tables.removed.iter().map(String::as_str).collect();
        if removed.len() != tables.removed.len() || tables.fresh.len() != tables.files.len() {
            return false;
        }
        let found = self.data.files.iter().filter(|f| removed.contains(f.path.as_str())).count();
        let Some(total) = (self.data.files.len() - found).checked_add(tables.files.len()) else {
            return false;
        };
        found == removed.len()
            && tables.fresh.windows(2).all(|w| w[0] < w[1])
            && tables.fresh.last().is_none_or(|&p| (p as usize) < total)
    }

    /// The files after a segment that fits ([`Index::merge_fits`]): the current ones but its
    /// tombstones, its files at their places, moved rather than copied. Returns the places
    /// and parts of the files its tombstones dropped.
    fn merge_files(
        &mut self,
        removed: &[String],
        fresh: &[u32],
        files: Vec<FileRec>,
    ) -> Vec<(u32, Parts)> {
        let removed: SeededSet<&str> = removed.iter().map(String::as_str).collect();
        let old = std::mem::take(&mut self.data.files);
        let mut gone = Vec::with_capacity(removed.len());
        let mut kept = old.into_iter().enumerate().filter_map(|(i, f)| {
            if removed.contains(f.path.as_str()) {
                gone.push((i as u32, f.parts));
                return None;
            }
            Some(f)
        });
        let total = kept.size_hint().1.unwrap_or(0) + files.len();
        let mut out = Vec::with_capacity(total);
        let mut fresh = fresh.iter().zip(files).peekable();
        loop {
            match fresh.peek() {
                Some((p, _)) if **p as usize == out.len() => {
                    out.extend(fresh.next().map(|(_, f)| f));
                }
                _ => match kept.next() {
                    Some(f) => out.push(f),
                    None => {
                        out.extend(fresh.map(|(_, f)| f));
                        break;
                    }
                },
            }
        }
        drop(kept);
        self.data.files = out;
        gone
    }

    /// How to store the update of an index loaded as `stored` (`None`: built anew).
    pub(super) fn plan(&self, stored: Option<Stored>) -> Plan {
        let (Some(stored), Some(change)) = (stored, &self.change) else { return Plan::Merge };
        let nothing = change.removed.is_empty() && change.fresh.is_empty();
        if nothing || !stored.log_whole || change.rewritten || stored.segments >= MAX_SEGMENTS {
            return Plan::Merge;
        }
        let bytes = self.segment_bytes(change, stored.base_sum);
        if stored.log_len + bytes.len() as u64 > stored.base_len / LOG_SHARE {
            return Plan::Merge;
        }
        Plan::Append(bytes)
    }

    /// The segment of `change`: header, tables, parts.
    fn segment_bytes(&self, change: &Change, base_sum: u64) -> Vec<u8> {
        let (tables, parts) = self.tables_of(change);
        frame(&tables, parts, base_sum)
    }

    /// The tables of the segment of `change`, and the parts it adds.
    fn tables_of(&self, change: &Change) -> (Tables, &[u8]) {
        let before = change.before;
        let stored = self.blob.stored.len() as u64;
        let from = usize::try_from(before.blob.saturating_sub(stored)).unwrap_or(usize::MAX);
        let parts = self.blob.extra.get(from..).unwrap_or_default();
        let tables = Tables {
            before,
            terms: self.data.terms.iter().skip(before.terms as usize).map(str::to_owned).collect(),
            symbols: (before.symbols..self.data.symbols.len() as u32)
                .map(|i| self.data.symbols.get(i).to_owned())
                .collect(),
            kinds: self.data.kinds.iter().skip(before.kinds as usize).cloned().collect(),
            removed: change.removed.clone(),
            fresh: change.fresh.clone(),
            files: change
                .fresh
                .iter()
                .filter_map(|&p| self.data.files.get(p as usize).cloned())
                .collect(),
            live_terms: self.data.live_terms,
            parts_len: parts.len() as u64,
        };
        (tables, parts)
    }
}

/// A segment of `tables` and `parts` made from the base whose checksum is `base_sum`.
fn frame(tables: &Tables, parts: &[u8], base_sum: u64) -> Vec<u8> {
    let tables = postcard::to_allocvec(tables).unwrap_or_default();
    let mut out = Vec::with_capacity(HEADER + tables.len() + parts.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&base_sum.to_le_bytes());
    out.extend_from_slice(&((tables.len() + parts.len()) as u64).to_le_bytes());
    out.extend_from_slice(&payload_sum(&[&tables, parts]).to_le_bytes());
    out.extend_from_slice(&tables);
    out.extend_from_slice(parts);
    out
}

/// The payload of the segment at the start of `bytes` and the segment's whole length, when
/// it is all there, of this version and base, and its checksum holds.
fn segment(bytes: &[u8], base_sum: u64) -> Option<(&[u8], usize)> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let word = |b: &[u8], at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
    };
    let version = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?);
    let (base, len, sum) = (word(rest, 4)?, word(rest, 12)?, word(rest, 20)?);
    if version != VERSION || base != base_sum {
        return None;
    }
    let len = usize::try_from(len).ok()?;
    let payload = bytes.get(HEADER..HEADER.checked_add(len)?)?;
    (payload_sum(&[payload]) == sum).then_some((payload, HEADER + len))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // The tests write their trees with std::fs.
mod tests {
    use super::*;
    use crate::Options;

    const PROMPT: &str = "retry the request with a deadline";

    /// A tree, its index as stored, and the same index after one file changed, one was
    /// added and one removed, with the change that made it.
    struct Setup {
        _tree: tempfile::TempDir,
        sandbox: ctx_fs::Sandbox,
        base: Vec<u8>,
        updated: Index,
        change: Change,
    }

    fn setup() -> Setup {
        let tree = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = tree.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("src/retry.rs", "/// Retries.\npub fn retry_with_timeout() { send(); }\n");
        write("src/http.rs", "pub fn send() {}\n");
        write("src/main.rs", "fn main() { retry_with_timeout(); }\n");
        // Enough files that two changed ones do not make the blob worth rebuilding.
        for i in 0..20 {
            write(&format!("lib/m{i}.rs"), &format!("/// Item {i}.\npub fn item_{i}() {{}}\n"));
        }
        let root = tree.path().to_str().unwrap();
        let sandbox = ctx_fs::Sandbox::builder(root).open(cap_std::ambient_authority()).unwrap();
        let (index, _) = Index::build(&sandbox).unwrap();
        let base = index.encode();
        write("src/http.rs", "/// Sends with a deadline.\npub fn send_with_deadline() {}\n");
        write("src/deadline.rs", "pub fn deadline() { send_with_deadline(); }\n");
        std::fs::remove_file(tree.path().join("src/main.rs")).unwrap();
        let mut updated = Index::decode(&base).unwrap();
        updated.refresh(&sandbox).unwrap();
        let change = updated.change.clone().unwrap();
        assert!(!change.rewritten);
        Setup { _tree: tree, sandbox, base, updated, change }
    }

    fn base_sum(base: &[u8]) -> u64 {
        u64::from_le_bytes(base[12..20].try_into().unwrap())
    }

    /// The base with `log` applied: how many segments, whether whole, and its answer.
    fn apply(s: &Setup, log: &[u8]) -> (usize, bool, Index) {
        let mut index = Index::decode(&s.base).unwrap();
        let (n, whole) = index.apply_log(log, base_sum(&s.base));
        (n, whole, index)
    }

    fn answer(s: &Setup, index: &Index) -> Vec<crate::Suggestion> {
        index.suggest(&s.sandbox, PROMPT, &Options::default().explain(true))
    }

    #[test]
    fn a_segment_gives_the_index_the_update_held() {
        let s = setup();
        assert_eq!(s.change.removed.len(), 2, "{:?}", s.change.removed);
        assert_eq!(s.change.fresh.len(), 2);
        let seg = s.updated.segment_bytes(&s.change, base_sum(&s.base));
        let (n, whole, index) = apply(&s, &seg);
        assert_eq!((n, whole), (1, true));
        assert_eq!(answer(&s, &index), answer(&s, &s.updated));
        assert_eq!(index.encode(), s.updated.encode());
    }

    /// Each attack: the log, then what must hold: nothing applied past the bad segment, the
    /// log not whole, the index as the base was (or as the good segments left it).
    #[test]
    fn tampered_segments_are_refused_whole() {
        let s = setup();
        let sum = base_sum(&s.base);
        let good = s.updated.segment_bytes(&s.change, sum);
        let (tables, parts) = s.updated.tables_of(&s.change);
        let edit = |f: &dyn Fn(&mut Tables)| {
            let mut t = tables.clone();
            f(&mut t);
            frame(&t, parts, sum)
        };
        let mut cut = good.clone();
        cut.truncate(good.len() - 3);
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let mut huge_len = good.clone();
        huge_len[20..28].copy_from_slice(&u64::MAX.to_le_bytes());
        let mut past_end = good.clone();
        past_end[20..28].copy_from_slice(&(good.len() as u64).to_le_bytes());
        let attacks: Vec<(&str, Vec<u8>)> = vec![
            ("cut short (a crash while appending)", cut),
            ("a flipped byte", flipped),
            ("a length of 2^64 - 1", huge_len),
            ("a length past the file", past_end),
            ("another base", s.updated.segment_bytes(&s.change, sum ^ 1)),
            ("a tombstone of no file", edit(&|t| t.removed.push("src/nothere.rs".into()))),
            ("a tombstone twice", edit(&|t| t.removed.push(t.removed[0].clone()))),
            ("places out of order", edit(&|t| t.fresh.reverse())),
            ("a place past the end", edit(&|t| *t.fresh.last_mut().unwrap() = u32::MAX)),
            ("more files than places", edit(&|t| t.files.push(t.files[0].clone()))),
            ("parts past the segment", edit(&|t| t.files[0].parts.start = u64::MAX - 2)),
            ("parts before the segment", edit(&|t| t.files[0].parts.start = 0)),
            ("a term id past the table", edit(&|t| t.terms.clear())),
            ("a symbol id past the table", edit(&|t| t.symbols.clear())),
            ("a name with a NUL", edit(&|t| t.terms.push("a\0b".into()))),
            ("another starting point", edit(&|t| t.before.files += 1)),
            ("parts of another length", edit(&|t| t.parts_len += 1)),
        ];
        let base = Index::decode(&s.base).unwrap();
        for (what, log) in attacks {
            let (n, whole, index) = apply(&s, &log);
            assert_eq!((n, whole), (0, false), "{what}");
            assert_eq!(index.encode(), base.encode(), "{what}");
        }
        // Counts of 2^32 in the tables: the decoder runs out of bytes, it allocates nothing
        // of that size.
        let mut tables = postcard::to_allocvec(&tables).unwrap();
        tables.truncate(tables.len().min(40));
        tables.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        let mut log = good[..HEADER].to_vec();
        log[20..28].copy_from_slice(&(tables.len() as u64).to_le_bytes());
        log[28..36].copy_from_slice(&payload_sum(&[&tables]).to_le_bytes());
        log.extend_from_slice(&tables);
        assert_eq!(apply(&s, &log).0, 0);
        // The same segment twice (a cycle): the second no longer fits what the first left.
        let twice = [good.clone(), good.clone()].concat();
        let (n, whole, index) = apply(&s, &twice);
        assert_eq!((n, whole), (1, false));
        assert_eq!(index.encode(), s.updated.encode());
        // A good segment, then garbage: the good one stands.
        let (n, whole, _) = apply(&s, &[good, b"garbage".to_vec()].concat());
        assert_eq!((n, whole), (1, false));
    }
}
