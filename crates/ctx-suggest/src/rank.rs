//! Ranking: BM25F over the five fields, exact identifier and path matches,
//! demotion by file class, then a personalised PageRank over the symbol
//! graph seeded with the best files.

use crate::classify::FileClass;
use crate::hash::FxHashMap;
use crate::index::{
    BOUND_B, BOUND_FIELD, FileHits, FileRec, Hits, Index, match_postings, weighted,
};
use crate::query::{Query, Wants};
use crate::top;

mod gains;

use gains::{Gain, apply_gains, gains};

/// The ranking's weights; [`Weights::default`] holds the values decided on
/// the development set (docs/suggest.md).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Weights {
    /// BM25F weight of each field: path, definitions, references,
    /// comments, body.
    pub field: [f64; 5],
    /// BM25F length normalisation of each field.
    pub b: [f64; 5],
    /// BM25 saturation.
    pub k1: f64,
    /// Bonus, as a share of the best text score, for a file that defines
    /// an identifier written in the prompt.
    pub ident: f64,
    /// Bonus, as a share of the best text score, for a file whose path the
    /// prompt names.
    pub path: f64,
    /// Bonus, as a share of the best text score, for a file whose name
    /// (without extension; the directory's for `index`, `mod`, `lib` and
    /// `__init__` files) is a word of the prompt.
    pub name: f64,
    /// Share of the final score that comes from the symbol graph.
    pub graph: f64,
    /// Damping of the personalised PageRank.
    pub damping: f64,
    /// Weight of an edge from a definition back to its referencing file,
    /// relative to the edge from a reference to its definition.
    pub reverse: f64,
    /// Multipliers for tests, docs, lock files, generated or vendored
    /// files and other non-source files, when the prompt does not ask for
    /// them.
    pub demote: Demotions,
}

/// Multipliers applied to files that are not program source.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Demotions {
    /// Tests, fixtures, benchmarks.
    pub test: f64,
    /// Documentation.
    pub doc: f64,
    /// Lock files.
    pub lock: f64,
    /// Generated and vendored code.
    pub generated: f64,
    /// Configuration and other text.
    pub other: f64,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            field: BOUND_FIELD,
            b: BOUND_B,
            k1: 1.2,
            ident: 0.5,
            path: 1.0,
            name: 0.3,
            graph: 0.3,
            damping: 0.5,
            reverse: 0.5,
            demote: Demotions { test: 0.3, doc: 0.2, lock: 0.05, generated: 0.3, other: 0.5 },
        }
    }
}

/// One scored file, with what made its score.
#[derive(Clone, Debug)]
pub(crate) struct Scored {
    pub(crate) file: usize,
    pub(crate) score: f64,
    pub(crate) why: Vec<String>,
    /// Query terms that matched (indices into the terms [`rank`] returns), with their
    /// weight × idf.
    pub(crate) matched: Matched,
}

/// A scored file's matched terms: its share of one buffer that all the files of a ranking
/// share, so that a file's record costs no allocation of its own.
#[derive(Clone, Debug, Default)]
pub(crate) struct Matched {
    all: Option<std::sync::Arc<[(u32, f64)]>>,
    range: std::ops::Range<usize>,
}

impl std::ops::Deref for Matched {
    type Target = [(u32, f64)];

    fn deref(&self) -> &[(u32, f64)] {
        self.all.as_deref().and_then(|a| a.get(self.range.clone())).unwrap_or_default()
    }
}

/// The scored files of a question: only the files its terms, bonuses and walk reach, each at
/// its slot, so that a question's state follows them and not the tree.
#[derive(Default)]
struct Board {
    /// The files the terms reached (the first `hit` slots, in file order), then the others.
    slots: Vec<Scored>,
    hit: usize,
    /// The slots of the files the terms did not reach.
    at: FxHashMap<usize, usize>,
}

impl Board {
    /// The slot of file `i`, if it has one.
    fn slot(&self, i: usize) -> Option<usize> {
        match self.slots[..self.hit].binary_search_by_key(&i, |s| s.file) {
            Ok(k) => Some(k),
            Err(_) => self.at.get(&i).copied(),
        }
    }

    /// Puts in the record of a file that has none.
    fn push(&mut self, s: Scored) {
        self.at.insert(s.file, self.slots.len());
        self.slots.push(s);
    }

    /// The record of file `i`, made with a score of 0 when it has none.
    fn get(&mut self, i: usize) -> &mut Scored {
        let k = match self.slot(i) {
            Some(k) => k,
            None => {
                let empty = Matched::default();
                self.slots.push(Scored { file: i, score: 0.0, why: Vec::new(), matched: empty });
                self.at.insert(i, self.slots.len() - 1);
                self.slots.len() - 1
            }
        };
        &mut self.slots[k]
    }
}

/// The size of the collection (files not left out) and each field's average length: kept with
/// the index by a process that keeps it, else counted.
fn collection(index: &Index) -> (usize, [f64; 5]) {
    let files = index.files();
    let (n, sums) = match index.file_keys() {
        Some(keys) => (keys.collection, keys.field_sums.map(|s| s as f64)),
        None => {
            let n = files.iter().filter(|f| f.class != FileClass::LeftOut).count();
            let mut avg = [0f64; 5];
            for f in files {
                for (k, len) in f.field_len.iter().enumerate() {
                    avg[k] += f64::from(*len);
                }
            }
            (n, avg)
        }
    };
    (n, sums.map(|a| (a / n as f64).max(1.0)))
}

/// A ranking: the scored files best first and the query terms found in the index (the
/// [`Scored::matched`] terms point into them).
pub(crate) struct Ranked {
    pub(crate) files: Vec<Scored>,
    pub(crate) terms: Vec<String>,
    /// Whether `files` are every file the prompt reaches; else they are the first ones of
    /// that list, as many as asked for at least.
    pub(crate) whole: bool,
}

/// The text score (BM25F) of a question's terms in a file.
pub(crate) struct Text<'a> {
    files: &'a [FileRec],
    w: &'a Weights,
    avg: [f64; 5],
    /// Each term's weight in the prompt and its idf.
    weight: Vec<f64>,
    idf: Vec<f64>,
}

impl Text<'_> {
    /// The score term `q` gives file `i` with frequencies `tf`.
    pub(crate) fn score(&self, q: usize, tf: &[u32; 5], i: usize) -> f64 {
        self.score_len(q, tf, &self.files[i].field_len)
    }

    /// The score term `q` gives a file with field lengths `len` and frequencies `tf`.
    pub(crate) fn score_len(&self, q: usize, tf: &[u32; 5], len: &[u32; 5]) -> f64 {
        let w = self.w;
        let t = weighted(tf, len, &w.field, &w.b, &self.avg);
        self.weight[q] * self.idf[q] * t * (w.k1 + 1.0) / (w.k1 + t)
    }

    /// A file's score and the score of each term that matched (pushed to `matched`).
    fn of(&self, i: usize, hits: &[(usize, [u32; 5])], matched: &mut Vec<(u32, f64)>) -> f64 {
        let mut score = 0.0;
        for (q, tf) in hits {
            let s = self.score(*q, tf, i);
            score += s;
            matched.push((*q as u32, s));
        }
        score
    }
}

/// What a ranking looks at: the index, the query, the weights, whether to explain, the query
/// terms found in the index (their names, and their ids with their indices, sorted by id) and
/// the size of the collection.
#[derive(Clone, Copy)]
struct Question<'a> {
    index: &'a Index,
    query: &'a Query,
    w: &'a Weights,
    explain: bool,
    names: &'a [String],
    sorted: &'a [(u32, usize)],
    n: usize,
}

/// Scores the files the prompt reaches and returns them best first: every one, or, with
/// `top`, at least the `top` best (the first ones of the whole ranking, the same files with
/// the same scores and reasons), scoring only the files that can be among them when the
/// index keeps its postings by term (docs/suggest.md, "Stopping early").
pub(crate) fn rank(
    index: &Index,
    query: &Query,
    w: &Weights,
    explain: bool,
    top: Option<usize>,
) -> Ranked {
    let files = index.files();
    // Files left out (data, lock and generated files) are no part of the collection.
    let (n, avg) = collection(index);
    if n == 0 {
        return Ranked { files: Vec::new(), terms: Vec::new(), whole: true };
    }
    // Query terms by id, with their weights.
    let mut qid: FxHashMap<u32, usize> = FxHashMap::default();
    let (mut names, mut weight) = (Vec::new(), Vec::new());
    let words: Vec<&str> = query.terms.iter().map(|t| t.term.as_str()).collect();
    for (t, id) in query.terms.iter().zip(index.term_ids(&words)) {
        if let Some(id) = id {
            qid.insert(id, names.len());
            names.push(t.term.clone());
            weight.push(t.weight);
        }
    }
    let mut sorted: Vec<(u32, usize)> = qid.into_iter().collect();
    sorted.sort_unstable();
    let mut text = Text { files, w, avg, weight, idf: Vec::new() };
    let question = Question { index, query, w, explain, names: &names, sorted: &sorted, n };
    if let Some(k) = top
        && let Some((files, whole)) = rank_best(&question, &mut text, k)
    {
        return Ranked { files, terms: names, whole };
    }
    let hits = scan_postings(index, &sorted);
    let mut df = vec![0usize; names.len()];
    for (q, _) in hits.all() {
        df[*q] += 1;
    }
    text.idf = idf(n, &df);
    let mut board = Board::default();
    let mut all_matched: Vec<(u32, f64)> = Vec::with_capacity(hits.all().len());
    for (i, file_hits) in hits.iter() {
        let start = all_matched.len();
        let score = text.of(i, file_hits, &mut all_matched);
        let matched = Matched { all: None, range: start..all_matched.len() };
        board.slots.push(Scored { file: i, score, why: Vec::new(), matched });
    }
    drop(hits);
    let gains = gains(index, query, w);
    let files = finish(&question, board, all_matched, &gains, None).unwrap_or_default();
    Ranked { files, terms: names, whole: true }
}

/// Each term's idf, from its document frequency in a collection of `n` files.
fn idf(n: usize, df: &[usize]) -> Vec<f64> {
    df.iter()
        .map(|&df| {
            let df = df as f64;
            ((n as f64 - df + 0.5) / (df + 0.5) + 1.0).ln()
        })
        .collect()
}

/// Most terms a question may have for the ranking to stop early (each file it looks at
/// costs a pass over them).
const MAX_TERMS: usize = 64;

/// Whether the weights keep every score a sum of parts that are never below 0 and grow with
/// what they add up, the demotions at most 1: what stopping early needs to be exact.
fn bounded(w: &Weights) -> bool {
    let d = &w.demote;
    let finite = |x: f64| x.is_finite() && x >= 0.0;
    w.k1.is_finite()
        && w.k1 > 0.0
        && w.field.iter().all(|f| finite(*f))
        && w.b.iter().all(|b| (0.0..1.0).contains(b))
        && [w.ident, w.path, w.name, w.damping, w.reverse].into_iter().all(finite)
        && (0.0..1.0).contains(&w.graph)
        && [d.test, d.doc, d.lock, d.generated, d.other].iter().all(|m| (0.0..=1.0).contains(m))
}

/// The best `k` files of a question (at least: ties and the files a bonus goes to come too),
/// scored from the postings by term with MaxScore ([`crate::top`]), and whether they are every
/// file it reaches; `None` when the index keeps no lists or the question cannot stop early
/// exactly, for the whole ranking to answer.
fn rank_best(q: &Question<'_>, text: &mut Text<'_>, k: usize) -> Option<(Vec<Scored>, bool)> {
    let Question { index, query, w, sorted, .. } = *q;
    let lists = index.term_lists()?;
    let files = index.files();
    let positive = |x: &f64| x.is_finite() && *x > 0.0;
    let usable = lists.fits(files.len()) && (1..=MAX_TERMS).contains(&sorted.len());
    if !usable || !bounded(w) || !text.weight.iter().all(positive) {
        return None;
    }
    // A file's frequencies of the terms, from its own postings.
    let own = |i: usize| {
        let mut hits = Vec::new();
        match_postings(index.postings_part(&files[i]), sorted, &mut hits);
        hits
    };
    // The files read since the lists were built answer from their own postings.
    let mut apart: Vec<(usize, FileHits)> =
        lists.fresh().iter().map(|&f| (f as usize, own(f as usize))).collect();
    let mut df = vec![0usize; q.names.len()];
    for &(id, at) in sorted {
        df[at] = lists.live(id);
    }
    for (_, hits) in &apart {
        for (at, _) in hits {
            df[*at] += 1;
        }
    }
    text.idf = idf(q.n, &df);
    if !text.idf.iter().all(positive) {
        return None;
    }
    // The files a bonus goes to are scored whole, apart.
    let gains = gains(index, query, w);
    for g in &gains {
        apart.extend(g.files.iter().map(|&f| (f, own(f))));
    }
    apart.sort_by_key(|a| a.0);
    apart.dedup_by_key(|a| a.0);
    let mult = |i: usize| demotion(files[i].class, query.wants, &w.demote);
    let (mut slots, mut matched, mut floor, mut best) = (Vec::new(), Vec::new(), Vec::new(), 0f64);
    for (i, hits) in apart.iter().filter(|a| !a.1.is_empty()) {
        let start = matched.len();
        let score = text.of(*i, hits, &mut matched);
        floor.push(top::demoted(score, mult(*i)));
        best = best.max(score);
        let m = Matched { all: None, range: start..matched.len() };
        slots.push(Scored { file: *i, score, why: Vec::new(), matched: m });
    }
    let growth = lists.growth(&w.field, &w.b, &text.avg);
    // What a term gives at most a file it weighs at most `t` in, as the blocks say.
    let saturate: Vec<Box<dyn Fn(f64) -> f64>> = sorted
        .iter()
        .map(|&(_, at)| {
            let (wi, k1) = (text.weight[at] * text.idf[at], w.k1);
            Box::new(move |t: f64| {
                let t = if growth.is_finite() { t * growth } else { f64::INFINITY };
                let bound =
                    if t.is_finite() { wi * t * (k1 + 1.0) / (k1 + t) } else { wi * (k1 + 1.0) };
                bound * (1.0 + 1e-9)
            }) as Box<dyn Fn(f64) -> f64>
        })
        .collect();
    let terms: Vec<top::Term<'_>> = sorted
        .iter()
        .zip(&saturate)
        .map(|(&(id, at), saturate)| {
            let bound = saturate(lists.max_t(id));
            top::Term { q: at, cursor: lists.cursor(id), bound, saturate: saturate.as_ref() }
        })
        .collect();
    let is_apart = |i: usize| apart.binary_search_by_key(&i, |a| a.0).is_ok();
    // A file of the lists kept its lengths and class since they were built (a file read
    // since is scored apart): the lists' copies of them are read in file order.
    let score = |at: usize, tf: &[u32; 5], f: u32| text.score_len(at, tf, lists.lengths(f));
    let by_class = |f: u32| demotion(lists.class(f), query.wants, &w.demote);
    let k = k.max(SEEDS);
    let scoring = top::Scoring { lists, score: &score, demotion: &by_class, apart: &is_apart, k };
    let found = top::top(terms, &scoring, &floor, best);
    for (i, score, range) in found.files {
        let range = range.start + matched.len()..range.end + matched.len();
        slots.push(Scored {
            file: i,
            score,
            why: Vec::new(),
            matched: Matched { all: None, range },
        });
    }
    matched.extend_from_slice(&found.matched);
    slots.sort_unstable_by_key(|s| s.file);
    let board = Board { slots, hit: 0, at: FxHashMap::default() };
    if !found.pruned {
        return Some((finish(q, board, matched, &gains, None)?, true));
    }
    // A file the walk reaches that was not scored, scored as the whole ranking would.
    let exact = |i: usize| {
        let mut matched = Vec::new();
        let score = text.of(i, &own(i), &mut matched);
        let range = 0..matched.len();
        let mut s = Scored {
            file: i,
            score,
            why: Vec::new(),
            matched: Matched { all: Some(matched.into()), range },
        };
        if q.explain {
            explain_terms(&mut s, q.names);
        }
        demote(&mut s, mult(i), files[i].class, q.explain);
        s
    };
    let unscored = Unscored { below: found.below, k, exact: &exact };
    Some((finish(q, board, matched, &gains, Some(&unscored))?, false))
}

/// What a ranking that stopped early knows of the files it did not score: their scores
/// before the walk are below `below`; `exact` scores one of them as the whole ranking would
/// (up to its demotion); the first `k` files are wanted.
struct Unscored<'a> {
    below: f64,
    k: usize,
    exact: &'a dyn Fn(usize) -> Scored,
}

/// Explains a file's text score: its best matched terms.
fn explain_terms(s: &mut Scored, names: &[String]) {
    let mut m = s.matched.to_vec();
    m.sort_by(|a, b| b.1.total_cmp(&a.1));
    if !m.is_empty() {
        let terms: Vec<String> =
            m.iter().take(6).map(|(q, v)| format!("{} {v:.2}", names[*q as usize])).collect();
        s.why.push(format!("terms: {}", terms.join(", ")));
    }
}

/// Demotes a file by its class's multiplier `m`.
fn demote(s: &mut Scored, m: f64, class: FileClass, explain: bool) {
    if m < 1.0 && s.score > 0.0 {
        s.score *= m;
        if explain {
            s.why.push(format!("{} file: ×{m}", class.name()));
        }
    }
}

/// The steps after the text score: the bonuses `gains`, the demotions, the walk, the order.
/// With `unscored`, the first `unscored.k` files, exact, or `None` when the files not
/// scored could be among them.
fn finish(
    q: &Question<'_>,
    mut board: Board,
    all_matched: Vec<(u32, f64)>,
    gains: &[Gain],
    unscored: Option<&Unscored<'_>>,
) -> Option<Vec<Scored>> {
    let Question { index, query, w, explain, .. } = *q;
    let files = index.files();
    board.hit = board.slots.len();
    let all_matched: std::sync::Arc<[(u32, f64)]> = all_matched.into();
    for s in &mut board.slots {
        s.matched.all = Some(all_matched.clone());
    }
    let best = board.slots.iter().map(|s| s.score).fold(0.0, f64::max).max(1e-9);
    if explain {
        for s in &mut board.slots {
            explain_terms(s, q.names);
        }
    }
    apply_gains(gains, best, explain, &mut board);
    let mult = |i: usize| demotion(files[i].class, query.wants, &w.demote);
    for s in &mut board.slots {
        demote(s, mult(s.file), files[s.file].class, explain);
    }
    let scale =
        if w.graph > 0.0 { propagate(index, w, &mult, &mut board, explain, unscored) } else { 1.0 };
    let mut scored = board.slots;
    scored.retain(|s| s.score > 0.0);
    let mut scored = best_first(index, scored);
    if let Some(u) = unscored {
        // A file not scored ends below `below × scale`: the first `k` must end above it.
        let last = scored.get(u.k.checked_sub(1)?)?;
        if last.score <= u.below * scale {
            return None;
        }
        scored.truncate(u.k);
    }
    Some(scored)
}

/// The scored files best first, ties in the order of their paths.
fn best_first(index: &Index, mut scored: Vec<Scored>) -> Vec<Scored> {
    let files = index.files();
    // Paths are unique, so the order is total and an unstable sort gives the same one.
    match index.path_order() {
        // The files' places in path order, kept with the term lists, order ties as their paths
        // do: the sort moves small keys, then the files once.
        Some(order) => {
            let mut keys: Vec<(f64, u32, u32)> = scored
                .iter()
                .enumerate()
                .map(|(k, s)| (s.score, order[s.file], k as u32))
                .collect();
            keys.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut slots: Vec<Option<Scored>> = scored.into_iter().map(Some).collect();
            keys.iter().filter_map(|k| slots[k.2 as usize].take()).collect()
        }
        None => {
            scored.sort_unstable_by(|a, b| {
                let by_path = || files[a.file].path.cmp(&files[b.file].path);
                b.score.total_cmp(&a.score).then_with(by_path)
            });
            scored
        }
    }
}

/// The multiplier of a file class given what the prompt asks for.
fn demotion(class: FileClass, wants: Wants, d: &Demotions) -> f64 {
    let asked = |yes: bool, m: f64| if yes { m.max(0.9) } else { m };
    match class {
        FileClass::Source => 1.0,
        FileClass::Test => asked(wants.tests, d.test),
        FileClass::Doc => asked(wants.docs, d.doc),
        FileClass::Lock => asked(wants.locks, d.lock),
        FileClass::Generated | FileClass::Vendored => asked(wants.generated, d.generated),
        FileClass::Other => d.other,
        FileClass::Unreadable | FileClass::LeftOut => 0.0,
    }
}

/// Each file's frequencies of the query terms (`query`: term id and query index, sorted by
/// id), as (query index, frequency per field): from the postings by term when the index keeps
/// them, else from every file's postings, the files shared among the cores.
fn scan_postings(index: &Index, query: &[(u32, usize)]) -> Hits {
    let files = index.files();
    let part = |i: usize| index.postings_part(&files[i]);
    if let Some(hits) = index.term_lists().and_then(|l| l.hits(query, files.len(), part)) {
        return hits;
    }
    let scan = |part: &[FileRec]| -> Vec<Vec<(usize, [u32; 5])>> {
        part.iter()
            .map(|f| {
                let mut hits = Vec::new();
                crate::index::match_postings(index.postings_part(f), query, &mut hits);
                hits
            })
            .collect()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = files.len().div_ceil(threads).max(PARALLEL_MIN_FILES);
    let parts: Vec<&[FileRec]> = files.chunks(chunk).collect();
    Hits::from_files(crate::par::map(&parts, 2, |part| scan(part)).into_iter().flatten().collect())
}

/// Below this many files a share, the postings are scanned on one thread.
const PARALLEL_MIN_FILES: usize = 2048;

/// Personalised PageRank over the symbol graph: a file referencing a
/// symbol links to the files defining it (and back, weaker); the walk
/// restarts at the best files in proportion to their scores. The final
/// score mixes the text score with the rank each file gains.
///
/// The walk is sparse: only files the walk reaches are expanded, so its cost
/// follows the neighbourhood of the best files, not the size of the tree.
fn propagate(
    index: &Index,
    w: &Weights,
    mult: &dyn Fn(usize) -> f64,
    board: &mut Board,
    explain: bool,
    unscored: Option<&Unscored<'_>>,
) -> f64 {
    let Some(mut walk) = walk(index, w, board) else { return 1.0 };
    let rank = std::mem::take(&mut walk.rank);
    let rank_of = |i: usize| rank.get(&i).copied().unwrap_or(0.0);
    let best_rank = walk.active.iter().map(|&i| rank_of(i)).fold(0.0, f64::max);
    let best_score = board.slots.iter().map(|s| s.score).fold(0.0, f64::max);
    if best_rank <= 0.0 {
        return 1.0;
    }
    let scale = 1.0 - w.graph;
    for s in board.slots.iter_mut() {
        s.score *= scale;
    }
    let gain = |i: usize| w.graph * rank_of(i) / best_rank * best_score * mult(i);
    let active = std::mem::take(&mut walk.active);
    // With a ranking that stopped early, the files it did not score come last.
    let mut later = Vec::new();
    for &i in &active {
        if unscored.is_some() && board.slot(i).is_none() {
            later.push(i);
            continue;
        }
        walk.add(index, board.get(i), gain(i), w, explain);
    }
    if let Some(u) = unscored
        && !later.is_empty()
    {
        // One can be among the first `k` only if its score before the walk, at most
        // `below`, and its share of the walk pass the `k`-th score so far.
        let mut scores: Vec<f64> =
            board.slots.iter().map(|s| s.score).filter(|&s| s > 0.0).collect();
        let cut = match u.k.checked_sub(1).filter(|&k| k < scores.len()) {
            Some(k) => *scores.select_nth_unstable_by(k, |a, b| b.total_cmp(a)).1,
            None => f64::NEG_INFINITY,
        };
        for i in later {
            if u.below * scale + gain(i) >= cut {
                let mut s = (u.exact)(i);
                s.score *= scale;
                walk.add(index, &mut s, gain(i), w, explain);
                board.push(s);
            }
        }
    }
    scale
}

/// What the walk found: the files it reached (`active`, ascending) and their ranks, the
/// seeds' shares of the restart, and the edges of the files it expanded.
struct Walk<'a> {
    rank: FxHashMap<usize, f64>,
    active: Vec<usize>,
    seed: FxHashMap<usize, f64>,
    memo: FxHashMap<usize, (Vec<(usize, f64)>, f64)>,
    graph: Graph<'a>,
}

impl Walk<'_> {
    /// Adds a file's share of the walk, `gain`, to its score, and says why.
    fn add(&mut self, index: &Index, s: &mut Scored, gain: f64, w: &Weights, explain: bool) {
        let i = s.file;
        let before = s.score / (1.0 - w.graph).max(1e-9);
        s.score += gain;
        let seed_of = |i: usize| self.seed.get(&i).copied().unwrap_or(0.0);
        if explain && seed_of(i) == 0.0 && s.score > before {
            let graph = &self.graph;
            let (edges, _) = self.memo.entry(i).or_insert_with(|| graph.neighbours(i, w.reverse));
            let mut via: Vec<&str> = Vec::new();
            for (b, _) in edges.iter().filter(|(b, _)| seed_of(*b) > 0.0) {
                let path = index.files()[*b].path.as_str();
                if !via.contains(&path) && via.len() < 3 {
                    via.push(path);
                }
            }
            s.why.push(format!("linked to {} (+{:.2})", via.join(", "), s.score - before));
        }
    }
}

/// The walk from the best files of `board`; `None` when none has a score.
fn walk<'a>(index: &'a Index, w: &Weights, board: &Board) -> Option<Walk<'a>> {
    let mut best: Vec<(f64, usize)> =
        board.slots.iter().filter(|s| s.score > 0.0).map(|s| (s.score, s.file)).collect();
    // Best first, ties in file order: a total order, so the 20 best are picked first and
    // sorted alone.
    let better = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if best.len() > SEEDS {
        best.select_nth_unstable_by(SEEDS, better);
        best.truncate(SEEDS);
    }
    best.sort_unstable_by(better);
    let order: Vec<usize> = best.iter().map(|b| b.1).collect();
    let total: f64 = best.iter().map(|b| b.0).sum();
    if total <= 0.0 {
        return None;
    }
    let seed: FxHashMap<usize, f64> = best.iter().map(|&(s, i)| (i, s / total)).collect();
    let seed_of = |i: usize| seed.get(&i).copied().unwrap_or(0.0);
    let graph = Graph::new(index);
    let mut memo: FxHashMap<usize, (Vec<(usize, f64)>, f64)> = FxHashMap::default();
    // The ranks of the files they are non-zero for (`active`, in ascending order).
    let mut rank: FxHashMap<usize, f64> = seed.clone();
    let mut active: Vec<usize> = order.clone();
    active.sort_unstable();
    for _ in 0..ITERATIONS {
        // The ranks of the next step; a file is reached when it has one.
        let mut next: FxHashMap<usize, f64> = FxHashMap::default();
        let mut touched: Vec<usize> = Vec::new();
        for &i in &order {
            next.insert(i, (1.0 - w.damping) * seed_of(i));
            touched.push(i);
        }
        let mut dangling = 0.0;
        for &a in &active {
            let r = rank.get(&a).copied().unwrap_or(0.0);
            if r < PRUNE_BELOW {
                dangling += r;
                continue;
            }
            let (edges, out) = memo.entry(a).or_insert_with(|| graph.neighbours(a, w.reverse));
            if *out <= 0.0 {
                dangling += r;
                continue;
            }
            for &(b, x) in edges.iter() {
                let nb = next.entry(b).or_insert_with(|| {
                    touched.push(b);
                    0.0
                });
                *nb += w.damping * r * x / *out;
            }
        }
        for &i in &order {
            *next.entry(i).or_default() += w.damping * dangling * seed_of(i);
        }
        touched.sort_unstable();
        rank = next;
        active = touched;
    }
    Some(Walk { rank, active, seed, memo, graph })
}

/// The symbol graph, as the index stores it: the files defining each symbol and the files
/// referencing it (with how often).
struct Graph<'a> {
    index: &'a Index,
}

/// Names defined in more files than this say little about any of them.
const MAX_DEFINERS: usize = 8;

/// A name used by more files than this is infrastructure: its users are not
/// linked back to its definition.
const MAX_REFERENCERS: usize = 64;

/// The best files the walk restarts at.
const SEEDS: usize = 20;

/// Rank below which a file does not pass its rank on: it goes back to the seeds, as a file
/// without links does. The seeds share a rank of 1, so what a pruned file would have passed
/// on moves a score by a few thousandths at most; without the cut, the walk reached 63% of a
/// 10 000-file tree for a prompt and expanded every file it reached. The development set
/// scores the same with and without it (docs/suggest.md).
const PRUNE_BELOW: f64 = 1e-4;

/// Iterations of the walk; with a damping of 0.5, what ten more would move
/// is below a thousandth.
const ITERATIONS: usize = 10;

impl<'a> Graph<'a> {
    fn new(index: &'a Index) -> Graph<'a> {
        Graph { index }
    }

    /// The edges out of file `a` and their total weight.
    fn neighbours(&self, a: usize, reverse: f64) -> (Vec<(usize, f64)>, f64) {
        let index = self.index;
        let file = &index.files()[a];
        let mut edges = Vec::new();
        let useful = |sym: u32, defs: usize| {
            (1..=MAX_DEFINERS).contains(&defs) && index.symbol_len_of(sym) >= 3
        };
        for (sym, count) in index.refs(file) {
            let defs = index.definers(sym);
            let n = defs.len();
            if !useful(sym, n) {
                continue;
            }
            let weight = f64::from(count).sqrt() / n as f64;
            edges.extend(defs.filter(|&b| b as usize != a).map(|b| (b as usize, weight)));
        }
        let mut last = u32::MAX;
        for d in index.defs(file) {
            if d.sym == last {
                continue;
            }
            last = d.sym;
            let defs = index.definers(d.sym).len();
            if !useful(d.sym, defs) {
                continue;
            }
            let users = index.referencers(d.sym);
            if users.len() > MAX_REFERENCERS {
                continue;
            }
            for (b, count) in users {
                if b as usize != a {
                    edges.push((b as usize, reverse * f64::from(count).sqrt() / defs as f64));
                }
            }
        }
        let out = edges.iter().map(|(_, x)| x).sum();
        (edges, out)
    }
}
