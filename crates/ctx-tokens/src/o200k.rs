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
use std::sync::{LazyLock, Mutex};

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::meta::Regex;
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::{Anchored, Input};

use crate::ascii;
use crate::memo::{Memo, Shared};
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
    /// The rank of every string of two bytes, `u32::MAX` for those that are no token: two
    /// thirds of the lookups of a merge are of two bytes, and this table answers them in one
    /// load, its ASCII quarter staying in the cache, where the hash table takes three.
    pairs: Box<[u32]>,
}

static LAYOUT: LazyLock<Layout> = LazyLock::new(|| {
    let (lengths, rest) = TABLE.split_at(TOKENS);
    let (probes, bytes) = rest.split_at(TOKENS);
    let mut starts = Vec::with_capacity(TOKENS + 1);
    let mut slots = vec![EMPTY; SLOTS].into_boxed_slice();
    let mut pairs = vec![u32::MAX; 1 << 16].into_boxed_slice();
    let mut at = 0usize;
    starts.push(0);
    for (rank, (&len, &probe)) in lengths.iter().zip(probes).enumerate() {
        let end = at + usize::from(len);
        let h = table::hash(&bytes[at..end]);
        // Ranks are below 2^RANK_BITS and offsets below 4 GiB (table.rs), so the casts
        // keep them whole.
        slots[(table::home(h) + usize::from(probe)) & (SLOTS - 1)] = table::tag(h) | rank as u32;
        if let &[a, b] = &bytes[at..end] {
            pairs[usize::from(a) << 8 | usize::from(b)] = rank as u32;
        }
        starts.push(end as u32);
        at = end;
    }
    Layout { starts: starts.into_boxed_slice(), slots, bytes, pairs }
});

impl Layout {
    fn token(&self, rank: u32) -> &[u8] {
        let r = rank as usize;
        &self.bytes[self.starts[r] as usize..self.starts[r + 1] as usize]
    }

    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if let &[a, b] = bytes {
            let rank = self.pairs[usize::from(a) << 8 | usize::from(b)];
            return (rank != u32::MAX).then_some(rank);
        }
        self.hashed(bytes)
    }

    /// The rank of a byte string, looked up in the hash table.
    fn hashed(&self, bytes: &[u8]) -> Option<u32> {
        let h = table::hash(bytes);
        let tag = table::tag(h);
        let mut i = table::home(h);
        loop {
            let slot = self.slots[i];
            if slot == EMPTY {
                return None;
            }
            if slot & !RANK_MASK == tag && same(self.token(slot & RANK_MASK), bytes) {
                return Some(slot & RANK_MASK);
            }
            i = (i + 1) & (SLOTS - 1);
        }
    }
}

/// Whether two byte strings are equal: a loop the compiler keeps inline, where `==` calls
/// `memcmp`, whose call costs more than comparing the few bytes of a token.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
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
    /// What counting keeps between texts on a thread: the lazy DFA's states, built as texts
    /// need them, the counts of short pieces met, the buffers of long merges.
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

struct State {
    dfa: Cache,
    /// Counts of pieces of 7 to 14 bytes, then of 15 to 30 (those of up to 6 are in
    /// [`TINY_MEMO_SHARED`]).
    memo: Memo<2>,
    long_memo: Memo<4>,
    scratch: Scratch,
}

/// Counts of pieces of up to 6 bytes, most pieces, for every thread: 256 KiB of one word an
/// entry (a table of two words an entry for them and the pieces of 7 to 14 bytes counted 1.1x
/// the CPU: its loads missed the cache twice as often). The threads of a run meet the same
/// short pieces, and one table in the cores' caches misses them less than one a thread.
static TINY_MEMO_SHARED: LazyLock<Shared> = LazyLock::new(|| Shared::new(15));

/// The states of threads that ended counting (the workers of `count_many`), for the next
/// threads: their DFA states and counts met stay warm from one call to the next. At most
/// [`MAX_SPARE`] are kept.
static SPARE: Mutex<Vec<State>> = Mutex::new(Vec::new());

const MAX_SPARE: usize = 8;

impl State {
    fn new() -> State {
        let spare = SPARE.lock().ok().and_then(|mut spare| spare.pop());
        spare.unwrap_or_else(|| State {
            dfa: SPLITTER.create_cache(),
            // 512 KiB for the pieces of 7 to 14 bytes (on the cargo registry's sources,
            // 8 192 slots counted 10% slower, 65 536 3% faster), then 256 KiB.
            memo: Memo::new(15),
            long_memo: Memo::new(13),
            scratch: Scratch::default(),
        })
    }
}

/// Hands this thread's counting state to the next thread that counts: called by a worker
/// thread before it ends.
pub(crate) fn release_state() {
    let state = STATE.with(|cell| cell.borrow_mut().take());
    if let (Some(state), Ok(mut spare)) = (state, SPARE.lock())
        && spare.len() < MAX_SPARE
    {
        spare.push(state);
    }
}

/// The end and the pattern of the match anchored at `at`.
fn find(cache: &mut Cache, text: &str, at: usize) -> Option<(usize, usize)> {
    let input = Input::new(text).range(at..).anchored(Anchored::Yes);
    match SPLITTER.try_search_fwd(cache, &input) {
        Ok(found) => found.map(|m| (m.offset(), m.pattern().as_usize())),
        Err(_) => FALLBACK.find(input).map(|m| (m.end(), m.pattern().as_usize())),
    }
}

/// The end of the piece that starts at `at`, as the DFA finds it: at each position the first
/// of [`PATTERNS`] that matches there, longest-first within it as the regex says.
fn split(cache: &mut Cache, text: &str, at: usize) -> Option<usize> {
    let (mut end, pattern) = find(cache, text, at)?;
    if LOOKAHEAD[pattern] {
        end -= text[at..end].chars().next_back().map_or(0, char::len_utf8);
    }
    Some(end)
}

/// The number of o200k tokens of a text.
pub(crate) fn count(text: &str) -> usize {
    count_at_most(text, usize::MAX).unwrap_or(usize::MAX)
}

/// The number of o200k tokens of a text if it is at most `max`: the pieces are counted apart
/// (a token never spans two), so the count stops at the first piece that takes it past, and
/// a piece too long to fit in what is left (a token is at most [`MAX_TOKEN_LEN`] bytes) is
/// not merged at all.
///
/// Pieces are found by the ASCII splitter (ascii.rs) where it answers, else by the DFA;
/// short ones are counted through the thread's [`Memo`].
pub(crate) fn count_at_most(text: &str, max: usize) -> Option<usize> {
    STATE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let state = cell.get_or_insert_with(State::new);
        let tiny = &*TINY_MEMO_SHARED;
        let bytes = text.as_bytes();
        let (mut at, mut total) = (0, 0usize);
        while at < bytes.len() {
            let Some(end) = ascii::piece(bytes, at).or_else(|| split(&mut state.dfa, text, at))
            else {
                break;
            };
            // Every pattern consumes at least one character; a look-ahead match at least two.
            debug_assert!(end > at);
            let len = end - at;
            if len.div_ceil(MAX_TOKEN_LEN) > max - total {
                return None;
            }
            total += match len {
                // Every single byte is a token.
                ..=1 => len,
                2..=TINY_MEMO => tiny.count(&bytes[at..], len, count_piece_short),
                SHORT_MEMO_MIN..=SHORT_MEMO => {
                    state.memo.count(&bytes[at..], len, count_piece_short)
                }
                LONG_MEMO_MIN..=LONG_MEMO => {
                    state.long_memo.count(&bytes[at..], len, count_piece_short)
                }
                _ => count_piece(&bytes[at..end], &mut state.scratch),
            };
            if total > max {
                return None;
            }
            at = end;
        }
        Some(total)
    })
}

const TINY_MEMO: usize = Memo::<1>::MAX_LEN;
const SHORT_MEMO_MIN: usize = TINY_MEMO + 1;
const SHORT_MEMO: usize = Memo::<2>::MAX_LEN;
const LONG_MEMO_MIN: usize = SHORT_MEMO + 1;
const LONG_MEMO: usize = Memo::<4>::MAX_LEN;

/// The count of a piece of at most [`SHORT`] bytes.
fn count_piece_short(piece: &[u8]) -> usize {
    if rank(piece).is_some() { 1 } else { count_short(piece) }
}

fn count_piece(piece: &[u8], scratch: &mut Scratch) -> usize {
    if piece.len() <= 1 || rank(piece).is_some() {
        return piece.len().min(1);
    }
    if piece.len() <= SHORT {
        return count_short(piece);
    }
    let n = scratch.count(piece);
    if piece.len() > SCRATCH_KEPT {
        // The thread keeps its state: buffers grown for a megabyte-long piece are let go.
        *scratch = Scratch::default();
    }
    n
}

/// Pieces up to this many bytes leave the buffers of their merge to the thread's next ones.
const SCRATCH_KEPT: usize = 64 * 1024;

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

    /// Checks the hand-written ASCII splitter against the DFA at every character boundary of
    /// `text`: where it answers, it answers as the DFA does.
    #[track_caller]
    fn splits_agree(text: &str, cache: &mut Cache) {
        for at in (0..text.len()).filter(|&at| text.is_char_boundary(at)) {
            if let Some(end) = ascii::piece(text.as_bytes(), at) {
                assert_eq!(Some(end), split(cache, text, at), "{text:?} at {at}");
            }
        }
    }

    /// The count with every piece found by the DFA, as before the ASCII splitter.
    fn count_plain(text: &str) -> usize {
        let mut cache = SPLITTER.create_cache();
        let mut scratch = Scratch::default();
        let (mut at, mut total) = (0, 0);
        while let Some(end) = split(&mut cache, text, at) {
            total += count_piece(&text.as_bytes()[at..end], &mut scratch);
            at = end;
        }
        total
    }

    #[test]
    fn ascii_splitter_agrees_on_every_short_text() {
        let mut cache = SPLITTER.create_cache();
        // Every pair of ASCII characters, with and without a letter after.
        for a in 0..128u8 {
            for b in 0..128u8 {
                let pair = String::from_utf8(vec![a, b]).unwrap();
                splits_agree(&pair, &mut cache);
                splits_agree(&format!("{pair}x"), &mut cache);
            }
        }
        // Every text of up to five characters of an alphabet of the patterns' edges.
        let alphabet: Vec<char> = "aZ \n\r\t'sLe1./\u{b}\u{1c}é\u{a0}ſ".chars().collect();
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            texts = texts
                .iter()
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            for text in &texts {
                splits_agree(text, &mut cache);
            }
        }
    }

    #[test]
    fn the_table_of_two_bytes_agrees_with_the_hash_table() {
        let layout = &*LAYOUT;
        let mut tokens = 0;
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let hashed = layout.hashed(&[a, b]);
                assert_eq!(layout.rank(&[a, b]), hashed, "{a} {b}");
                tokens += usize::from(hashed.is_some());
            }
        }
        let two = (0..TOKENS as u32).filter(|&r| layout.token(r).len() == 2).count();
        assert_eq!(tokens, two);
        assert!(two > 1000, "{two}");
    }

    #[test]
    fn a_long_piece_leaves_no_large_buffers_behind() {
        let word = "a".repeat(SCRATCH_KEPT + 1);
        assert_eq!(count(&word), count_plain(&word));
        let kept = STATE
            .with(|cell| cell.borrow().as_ref().map_or(0, |state| state.scratch.next.capacity()));
        assert_eq!(kept, 0);
    }

    #[test]
    fn a_state_handed_on_counts_the_same() {
        let text = "fn main() { let ünï = 語; }\n".repeat(50);
        let n = count_plain(&text);
        for _ in 0..3 {
            assert_eq!(count(&text), n);
            release_state();
            assert!(SPARE.lock().unwrap().len() <= MAX_SPARE);
        }
        assert_eq!(std::thread::spawn(move || count(&text)).join().unwrap(), n);
    }

    #[test]
    fn ascii_text_never_needs_the_dfa() {
        let text = include_str!("o200k.rs").replace(|c: char| !c.is_ascii(), "?");
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            at = ascii::piece(bytes, at).unwrap_or_else(|| panic!("the DFA asked at {at}"));
        }
        assert_eq!(count(&text), count_plain(&text));
    }

    proptest::proptest! {
        #[test]
        fn ascii_splitter_agrees(text in "[ -~\t\n\r\u{b}\u{c}é語\u{a0}ſ\u{301}٣]{0,60}") {
            splits_agree(&text, &mut SPLITTER.create_cache());
        }

        #[test]
        fn ascii_splitter_agrees_on_long_runs(
            text in "([a-z]{0,24}|[ ]{0,24}|[A-Z\n\t'.é語\u{a0}]){0,12}"
        ) {
            splits_agree(&text, &mut SPLITTER.create_cache());
            proptest::prop_assert_eq!(count(&text), count_plain(&text));
        }

        #[test]
        fn the_fast_count_is_the_plain_one(text in proptest::prelude::any::<String>()) {
            proptest::prop_assert_eq!(count(&text), count_plain(&text));
        }

        #[test]
        fn the_fast_count_is_the_plain_one_on_code(
            text in "[ a-zA-Z0-9'\n\r\t.,;:!?(){}<>=_/\\\"#*&|+-]{0,300}"
        ) {
            proptest::prop_assert_eq!(count(&text), count_plain(&text));
        }

        #[test]
        fn the_two_merges_agree(text in "[ a-eA-E.=_é語😀\\n]{2,20}") {
            let bytes = &text.as_bytes()[..text.len().min(SHORT)];
            proptest::prop_assert_eq!(count_short(bytes), Scratch::default().count(bytes));
        }
    }
}
