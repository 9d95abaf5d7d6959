//! An exact o200k token counter: tiktoken's pre-tokenisation, then byte-pair merging by rank
//! within each piece, over a rank table compiled into the binary in a form used in place
//! (table.rs).
//!
//! Merging follows tiktoken: every piece starts as single bytes and the adjacent pair whose
//! concatenation has the lowest rank is merged, the leftmost of equal ranks first, until no
//! pair is a token.
//! Short pieces do this with a linear scan on the stack; long ones (a run of letters or
//! spaces can be megabytes) with a heap of candidate pairs, so the work stays
//! `O(n log n)` where tiktoken's is quadratic.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::LazyLock;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::meta::Regex;
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::{Anchored, Input};

use crate::table::{self, EMPTY, MAX_TOKEN_LEN, RANK_BITS, SLOTS, TOKENS};

static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k.table"));

const RANK_MASK: u32 = (1 << RANK_BITS) - 1;

/// Pieces up to this many bytes are merged by linear scans.
const SHORT: usize = 64;

/// What the first count lays out from [`TABLE`] (table.rs).
struct Layout {
    /// Where each token's bytes start in `bytes`; one more entry for the end of the last.
    starts: Box<[u32]>,
    /// The hash table from a token's bytes to its rank.
    slots: Box<[u32]>,
    /// Every token's bytes, in rank order.
    bytes: &'static [u8],
}

static LAYOUT: LazyLock<Layout> = LazyLock::new(|| {
    let (lengths, rest) = TABLE.split_at(TOKENS);
    let (probes, bytes) = rest.split_at(TOKENS);
    let mut starts = Vec::with_capacity(TOKENS + 1);
    let mut slots = vec![EMPTY; SLOTS].into_boxed_slice();
    let mut at = 0usize;
    starts.push(0);
    for (rank, (&len, &probe)) in lengths.iter().zip(probes).enumerate() {
        let end = at + usize::from(len);
        let h = table::hash(&bytes[at..end]);
        // Ranks are below 2^RANK_BITS and offsets below 4 GiB (table.rs), so the casts
        // keep them whole.
        slots[(table::home(h) + usize::from(probe)) & (SLOTS - 1)] = table::tag(h) | rank as u32;
        starts.push(end as u32);
        at = end;
    }
    Layout { starts: starts.into_boxed_slice(), slots, bytes }
});

impl Layout {
    fn token(&self, rank: u32) -> &[u8] {
        let r = rank as usize;
        &self.bytes[self.starts[r] as usize..self.starts[r + 1] as usize]
    }

    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let h = table::hash(bytes);
        let tag = table::tag(h);
        let mut i = table::home(h);
        loop {
            let slot = self.slots[i];
            if slot == EMPTY {
                return None;
            }
            if slot & !RANK_MASK == tag && self.token(slot & RANK_MASK) == bytes {
                return Some(slot & RANK_MASK);
            }
            i = (i + 1) & (SLOTS - 1);
        }
    }
}

/// The rank of a byte string, when it is a token.
pub(crate) fn rank(bytes: &[u8]) -> Option<u32> {
    if bytes.len() > MAX_TOKEN_LEN {
        return None;
    }
    LAYOUT.rank(bytes)
}

/// The pre-tokenisation patterns of o200k_base (tiktoken's), with its one look-ahead,
/// `\s+(?!\S)`, written as a second pattern whose last character is given back.
const PATTERNS: [&str; 3] = [
    concat!(
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|\p{N}{1,3}",
        r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"|\s*[\r\n]+",
        r"|\s+$",
    ),
    // `\s+(?!\S)`: whitespace up to, not including, the last one before a non-space.
    r"\s+\s",
    r"\s+",
];

/// Which pattern ends with a look-ahead character to give back.
const LOOKAHEAD: [bool; 3] = [false, true, false];

/// The splitter: a lazy DFA, forward only, since every search is anchored where the last
/// piece ended and needs only the end and the pattern of the match.
/// It compiles in about half the time of a `meta::Regex`, which also builds a reverse
/// automaton to find where matches start; a first count costs about 1 ms.
static SPLITTER: LazyLock<DFA> = LazyLock::new(|| {
    DFA::builder()
        .thompson(thompson::Config::new().which_captures(WhichCaptures::None))
        .build_many(&PATTERNS)
        .expect("the o200k patterns compile")
});

/// The same patterns as a full regex, for a search the lazy DFA gives up on.
/// With its default settings and these patterns (no Unicode word boundary) it never does.
static FALLBACK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new_many(&PATTERNS).expect("the o200k patterns compile"));

thread_local! {
    /// The lazy DFA's states, built as texts need them, kept for the thread's next texts.
    static CACHE: RefCell<Option<Cache>> = const { RefCell::new(None) };
}

/// The end and the pattern of the match anchored at `at`.
fn find(cache: &mut Cache, text: &str, at: usize) -> Option<(usize, usize)> {
    let input = Input::new(text).range(at..).anchored(Anchored::Yes);
    match SPLITTER.try_search_fwd(cache, &input) {
        Ok(found) => found.map(|m| (m.offset(), m.pattern().as_usize())),
        Err(_) => FALLBACK.find(input).map(|m| (m.end(), m.pattern().as_usize())),
    }
}

/// Splits a text into the pieces that are merged separately, calling `each` on each while it
/// returns true: at each position the first of [`PATTERNS`] that matches there,
/// longest-first within it as the regex says.
fn pieces(text: &str, mut each: impl FnMut(&str) -> bool) {
    CACHE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let cache = cell.get_or_insert_with(|| SPLITTER.create_cache());
        let mut at = 0;
        while let Some((mut end, pattern)) = find(cache, text, at) {
            if LOOKAHEAD[pattern] {
                end -= text[at..end].chars().next_back().map_or(0, char::len_utf8);
            }
            // Every pattern consumes at least one character; a look-ahead match at least two.
            debug_assert!(end > at);
            if !each(&text[at..end]) {
                return;
            }
            at = end;
        }
    });
}

/// The number of o200k tokens of a text.
pub(crate) fn count(text: &str) -> usize {
    let mut scratch = Scratch::default();
    let mut total = 0;
    pieces(text, |piece| {
        total += count_piece(piece.as_bytes(), &mut scratch);
        true
    });
    total
}

/// The number of o200k tokens of a text if it is at most `max`: the pieces are counted apart
/// (a token never spans two), so the count stops at the first piece that takes it past, and
/// a piece too long to fit in what is left (a token is at most [`MAX_TOKEN_LEN`] bytes) is
/// not merged at all.
pub(crate) fn count_at_most(text: &str, max: usize) -> Option<usize> {
    let mut scratch = Scratch::default();
    let mut total = 0;
    let mut over = false;
    pieces(text, |piece| {
        over = piece.len().div_ceil(MAX_TOKEN_LEN) > max - total;
        if !over {
            total += count_piece(piece.as_bytes(), &mut scratch);
            over = total > max;
        }
        !over
    });
    (!over).then_some(total)
}

fn count_piece(piece: &[u8], scratch: &mut Scratch) -> usize {
    // Every single byte is a token.
    if piece.len() <= 1 || rank(piece).is_some() {
        return piece.len().min(1);
    }
    if piece.len() <= SHORT { count_short(piece) } else { scratch.count(piece) }
}

fn pair_rank(piece: &[u8], start: usize, end: usize) -> u32 {
    rank(&piece[start..end]).unwrap_or(u32::MAX)
}

/// tiktoken's merge loop: the parts' boundaries and the rank of each adjacent pair in
/// arrays, the lowest found by a scan.
fn count_short(piece: &[u8]) -> usize {
    let n = piece.len();
    // bounds[..=parts] are the parts' boundaries; ranks[k] belongs to parts k and k + 1.
    let mut bounds = [0u8; SHORT + 1];
    let mut ranks = [u32::MAX; SHORT];
    for (k, b) in bounds.iter_mut().enumerate().take(n + 1) {
        *b = k as u8;
    }
    for (k, r) in ranks.iter_mut().enumerate().take(n - 1) {
        *r = pair_rank(piece, k, k + 2);
    }
    let mut parts = n;
    loop {
        let pairs = parts - 1;
        let mut best = 0;
        for k in 1..pairs {
            if ranks[k] < ranks[best] {
                best = k;
            }
        }
        if pairs == 0 || ranks[best] == u32::MAX {
            return parts;
        }
        // Parts best and best + 1 become one: drop the boundary between them and the pair.
        bounds.copy_within(best + 2..=parts, best + 1);
        ranks.copy_within(best + 1..pairs, best);
        parts -= 1;
        let at = |k: usize| usize::from(bounds[k]);
        if best + 1 < parts {
            ranks[best] = pair_rank(piece, at(best), at(best + 2));
        }
        if best > 0 {
            ranks[best - 1] = pair_rank(piece, at(best - 1), at(best + 1));
        }
    }
}

/// Buffers for merging long pieces, reused across the pieces of one text.
#[derive(Default)]
struct Scratch {
    /// For the part starting at byte `i`: where the next part starts (`n` after the last).
    next: Vec<usize>,
    /// For the part starting at byte `i`: where the previous part starts.
    prev: Vec<usize>,
    /// For the part starting at byte `i`: the rank of it and the next part together, or
    /// `u32::MAX` when that is no token or there is no next part.
    pair: Vec<u32>,
    /// Whether a part still starts at byte `i`.
    live: Vec<bool>,
    /// Candidate merges as `rank << START_BITS | start`, lowest first. An entry is stale when
    /// its part is gone or its pair's rank has changed; an entry whose rank is still its
    /// part's pair rank is the merge tiktoken would make, however old it is.
    heap: BinaryHeap<Reverse<u64>>,
}

/// Bits of a heap entry for the start of a part: pieces up to 64 TiB.
const START_BITS: u32 = 46;

impl Scratch {
    fn count(&mut self, piece: &[u8]) -> usize {
        let n = piece.len();
        assert!(n < 1 << START_BITS, "a piece of {n} bytes");
        self.next.clear();
        self.next.extend(1..=n);
        self.prev.clear();
        self.prev.extend((0..n).map(|i| i.wrapping_sub(1)));
        self.live.clear();
        self.live.resize(n, true);
        self.pair.clear();
        self.pair
            .extend((0..n).map(|i| if i + 1 < n { pair_rank(piece, i, i + 2) } else { u32::MAX }));
        // Building the heap from all first pairs at once is linear.
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.clear();
        entries.extend(
            self.pair
                .iter()
                .enumerate()
                .filter(|(_, r)| **r != u32::MAX)
                .map(|(i, &r)| Reverse(key(r, i))),
        );
        self.heap = BinaryHeap::from(entries);
        let mut parts = n;
        while let Some(Reverse(entry)) = self.heap.pop() {
            let (rank, i) =
                ((entry >> START_BITS) as u32, (entry & ((1 << START_BITS) - 1)) as usize);
            if !self.live[i] || self.pair[i] != rank {
                continue;
            }
            let j = self.next[i];
            let end = self.next[j];
            self.live[j] = false;
            self.next[i] = end;
            if end < n {
                self.prev[end] = i;
            }
            parts -= 1;
            self.update(piece, i, if end < n { self.next[end] } else { n + 1 });
            if i > 0 {
                self.update(piece, self.prev[i], end);
            }
        }
        parts
    }

    /// Sets the pair rank of the part at `start`, whose next part ends at `end` (past the
    /// piece when there is none), and queues it when it is a token.
    fn update(&mut self, piece: &[u8], start: usize, end: usize) {
        let rank = if end <= piece.len() { pair_rank(piece, start, end) } else { u32::MAX };
        self.pair[start] = rank;
        if rank != u32::MAX {
            self.heap.push(Reverse(key(rank, start)));
        }
    }
}

fn key(rank: u32, start: usize) -> u64 {
    u64::from(rank) << START_BITS | start as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_is_found_and_is_one_token() {
        for r in 0..TOKENS as u32 {
            assert_eq!(rank(LAYOUT.token(r)), Some(r));
        }
        assert_eq!(rank(b"hello"), rank(b"hello"));
        assert_eq!(rank(&[b'a'; 129]), None);
    }

    #[test]
    fn short_and_long_merges_agree() {
        let texts = [
            "abcdefghijklmnopqrstuvwxyz",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "Antidisestablishmentarianism",
            "ünïcödé_wörds_ähnlich",
            "    ",
            "=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=",
            "日本語のテキストです",
        ];
        let mut scratch = Scratch::default();
        for text in texts {
            assert_eq!(count_short(text.as_bytes()), scratch.count(text.as_bytes()), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_two_merges_agree(text in "[ a-eA-E.=_é語😀\\n]{2,20}") {
            let bytes = &text.as_bytes()[..text.len().min(SHORT)];
            proptest::prop_assert_eq!(count_short(bytes), Scratch::default().count(bytes));
        }
    }
}
