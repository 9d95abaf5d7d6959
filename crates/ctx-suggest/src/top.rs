//! The best files of a question without scoring every file its terms reach: MaxScore over the
//! postings by term (docs/suggest.md, "Ranking", "Stopping early"). Each term has a bound of
//! what it can add to a file's score; a file is scored only while what its terms can still add
//! could bring it among the best found so far, and a term whose bound, with the bounds of the
//! terms weaker than it, cannot is only looked up for the files the others bring.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::index::{Cursor, END, TermLists};

/// A term of the question: its reader and a bound of the score it gives any file.
pub(crate) struct Term<'a> {
    /// Its index among the question's terms.
    pub(crate) q: usize,
    pub(crate) cursor: Cursor<'a>,
    /// At least the score it gives any file of its list (every score it gives is ≥ 0).
    pub(crate) bound: f64,
    /// The bound of the score it gives a file it weighs `t` in (BM25F's `t`, before the
    /// lists' growth): a block's bound from the block's [`Cursor::block`].
    pub(crate) saturate: &'a dyn Fn(f64) -> f64,
}

/// How the files are scored and which are scored apart.
pub(crate) struct Scoring<'a> {
    pub(crate) lists: &'a TermLists,
    /// The score term `q` gives a file of the lists (as they were built) with these
    /// frequencies.
    pub(crate) score: &'a dyn Fn(usize, &[u32; 5], u32) -> f64,
    /// The multiplier of a file of the lists, by its class (in 0..=1).
    pub(crate) demotion: &'a dyn Fn(u32) -> f64,
    /// Files scored apart (their places), passed over here.
    pub(crate) apart: &'a dyn Fn(usize) -> bool,
    /// How many of the best files are wanted.
    pub(crate) k: usize,
}

/// The files scored, in the order of their places, with their text scores and the score of
/// each term that matched.
#[derive(Default)]
pub(crate) struct Top {
    /// (place, text score, where its terms lie in `matched`).
    pub(crate) files: Vec<(usize, f64, std::ops::Range<usize>)>,
    /// (term, score), each file's in term order.
    pub(crate) matched: Vec<(u32, f64)>,
    /// Whether a file the terms reach was left unscored.
    pub(crate) pruned: bool,
    /// A file left unscored scores (its text score, demoted) below this, and its text score
    /// is below the best one found.
    pub(crate) below: f64,
}

/// A margin for the rounding of sums taken in another order than the score's.
const SLACK: f64 = 1.0 + 1e-9;

/// An `f64` ordered by `total_cmp`.
#[derive(Clone, Copy, PartialEq)]
struct Total(f64);

impl Eq for Total {}

impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Total) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Total {
    fn cmp(&self, other: &Total) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The `k` best scores seen (demoted), as lower bounds of the files' final scores before the
/// walk: the least of them is the score a file must reach.
struct Best {
    heap: BinaryHeap<Reverse<Total>>,
    k: usize,
    /// The best text score seen.
    text: f64,
}

impl Best {
    fn push(&mut self, score: f64) {
        self.heap.push(Reverse(Total(score)));
        if self.heap.len() > self.k {
            self.heap.pop();
        }
    }

    /// The score a file must reach to be among the best (0 until `k` were seen).
    fn theta(&self) -> f64 {
        if self.heap.len() < self.k { 0.0 } else { self.heap.peek().map_or(0.0, |r| r.0.0) }
    }
}

/// The demoted score of a text score: the ranking's own step.
pub(crate) fn demoted(text: f64, m: f64) -> f64 {
    if m < 1.0 && text > 0.0 { text * m } else { text }
}

/// Scores the files the terms reach that can be among the `k` best, or have the best text
/// score; `floor` holds lower bounds of the demoted scores of the files scored apart, `best`
/// their best text score. `terms` are in the order of their ids.
pub(crate) fn top(mut terms: Vec<Term<'_>>, s: &Scoring<'_>, floor: &[f64], best: f64) -> Top {
    let mut seen = Best { heap: BinaryHeap::new(), k: s.k.max(1), text: best };
    for &f in floor {
        seen.push(f);
    }
    let m = terms.len();
    // The terms by bound, the weakest first, and the sum of the bounds up to each.
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| terms[a].bound.total_cmp(&terms[b].bound).then(a.cmp(&b)));
    let mut prefix = Vec::with_capacity(m);
    let mut sum = 0.0;
    for &j in &order {
        sum += terms[j].bound;
        prefix.push(sum * SLACK);
    }
    let mut out = Top::default();
    // The terms before `weak` in `order` cannot bring a file among the best by themselves.
    let mut weak = 0;
    let mut got: Vec<(usize, f64)> = Vec::with_capacity(m);
    // Each term's block and its bound, once worked out.
    let mut blocks: Vec<(usize, f64)> = vec![(usize::MAX, 0.0); m];
    loop {
        let theta = seen.theta();
        while weak < m && prefix[weak] < theta {
            weak += 1;
            out.pruned = true;
        }
        let Some(file) = order[weak..].iter().map(|&j| terms[j].cursor.file).min() else { break };
        if file == END {
            break;
        }
        // The bounds of the blocks the file is in first: most files end there, before their
        // record is read.
        let mut bound = if weak == 0 { 0.0 } else { prefix[weak - 1] };
        for &j in &order[weak..] {
            let t = &terms[j];
            if t.cursor.file == file {
                let (block, max_t) = t.cursor.block();
                if blocks[j].0 != block {
                    blocks[j] = (block, (t.saturate)(max_t).min(t.bound));
                }
                bound += blocks[j].1;
            }
        }
        if bound * SLACK < theta && bound * SLACK < seen.text {
            for &j in &order[weak..] {
                if terms[j].cursor.file == file {
                    terms[j].cursor.next();
                }
            }
            out.pruned = true;
            continue;
        }
        let place = s.lists.place(file);
        let apart = (s.apart)(place);
        got.clear();
        let mut partial = 0.0;
        for &j in &order[weak..] {
            let t = &mut terms[j];
            if t.cursor.file == file {
                if !apart {
                    let score = (s.score)(t.q, &t.cursor.tf, file);
                    partial += score;
                    got.push((j, score));
                }
                t.cursor.next();
            }
        }
        if apart {
            continue;
        }
        let m = (s.demotion)(file);
        let eff = m.min(1.0);
        let cut = |bound: f64| eff * bound * SLACK < theta && bound * SLACK < seen.text;
        if cut(partial + if weak == 0 { 0.0 } else { prefix[weak - 1] }) {
            out.pruned = true;
            continue;
        }
        let mut pruned = false;
        for r in (0..weak).rev() {
            let j = order[r];
            let t = &mut terms[j];
            // What this term and the weaker ones can add.
            let below = if r == 0 { 0.0 } else { prefix[r - 1] };
            if cut(partial + below + t.bound) {
                pruned = true;
                break;
            }
            t.cursor.seek(file);
            if t.cursor.file == file {
                let score = (s.score)(t.q, &t.cursor.tf, file);
                partial += score;
                got.push((j, score));
            }
        }
        if pruned || cut(partial) {
            out.pruned = true;
            continue;
        }
        // The score as the ranking sums it: the terms in the order of their ids.
        got.sort_unstable_by_key(|g| g.0);
        let start = out.matched.len();
        let mut text = 0.0;
        for &(j, score) in &got {
            text += score;
            out.matched.push((terms[j].q as u32, score));
        }
        seen.text = seen.text.max(text);
        seen.push(demoted(text, m));
        out.files.push((place, text, start..out.matched.len()));
    }
    if order.iter().any(|&j| terms[j].cursor.file != END) {
        out.pruned = true;
    }
    out.below = seen.theta();
    out
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // The tests write their trees with std::fs.
mod tests {
    use crate::index::Index;
    use crate::query::Query;
    use crate::rank::{Ranked, Weights, rank};

    /// Words the trees and prompts are made of: a few common ones, more rare ones.
    const WORDS: &[&str] = &[
        "error", "file", "parse", "config", "buffer", "retry", "timeout", "client", "server",
        "token", "cache", "stream", "header", "router", "handler", "empty", "custom", "value",
    ];

    /// A tree of `files` files made from `seed`, each a few of [`WORDS`] (common words in most
    /// files), some defining and calling functions named after them, in folders of sources,
    /// tests and docs; with its index and the postings by term kept.
    fn tree(files: usize, seed: u64) -> (tempfile::TempDir, ctx_fs::Sandbox, Index) {
        let dir = tempfile::tempdir().unwrap();
        let mut r = seed;
        let mut next = |n: usize| {
            r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (r >> 33) as usize % n.max(1)
        };
        for i in 0..files {
            let folder = ["src", "src/net", "tests", "docs", "lib"][next(5)];
            let ext = if folder == "docs" { "md" } else { ["rs", "py", "ts"][next(3)] };
            let name = WORDS[next(WORDS.len())];
            let path = dir.path().join(folder).join(format!("{name}_{i}.{ext}"));
            let mut text = String::new();
            for _ in 0..1 + next(12) {
                // Common words often, rare ones seldom.
                let w = WORDS[next(WORDS.len()).min(next(WORDS.len()))];
                let callee = WORDS[next(WORDS.len())];
                match next(4) {
                    0 => text.push_str(&format!("pub fn {w}_{callee}() {{ {callee}_{w}(); }}\n")),
                    1 => text.push_str(&format!("// {w} the {callee} {w}\n")),
                    _ => text.push_str(&format!("let {w} = {callee}({w});\n")),
                }
            }
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let root = dir.path().to_str().unwrap();
        let sandbox = ctx_fs::Sandbox::builder(root).open(cap_std::ambient_authority()).unwrap();
        let (index, _) = Index::build(&sandbox).unwrap();
        index.keep_term_lists();
        (dir, sandbox, index)
    }

    /// A ranked file as the comparison sees it: its path, its score's bits, its reasons, its
    /// matched terms with their scores' bits.
    type Shown = (String, u64, Vec<String>, Vec<(u32, u64)>);

    /// The first `k` files of a ranking that stopped early are the whole ranking's first
    /// ones: the same files, scores to the bit, reasons and matched terms.
    fn same_start(index: &Index, prompt: &str, k: usize) -> bool {
        let query = Query::parse(prompt);
        let w = Weights::default();
        let all = rank(index, &query, &w, true, None);
        let best: Ranked = rank(index, &query, &w, true, Some(k));
        assert!(all.whole);
        assert_eq!(best.terms, all.terms);
        let shown = |r: &Ranked, n: usize| -> Vec<Shown> {
            r.files
                .iter()
                .take(n)
                .map(|s| {
                    let matched = s.matched.iter().map(|&(q, v)| (q, v.to_bits())).collect();
                    (index.files()[s.file].path.clone(), s.score.to_bits(), s.why.clone(), matched)
                })
                .collect()
        };
        let n = if best.whole { usize::MAX } else { k };
        assert!(best.whole || best.files.len() >= k, "{} files for {k}", best.files.len());
        assert_eq!(shown(&best, n), shown(&all, n), "{prompt:?}, the first {k}");
        !best.whole
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// The attack: random trees and prompts, and the tree changed after the lists were
        /// built (files added, removed and saved again, which the lists follow). What must not
        /// happen: a ranking that stopped early answering other than the whole ranking's first
        /// files.
        #[test]
        fn stopping_early_answers_as_the_whole_ranking(
            files in 25usize..90,
            seed in 0u64..1_000_000,
            prompts in proptest::collection::vec(
                proptest::collection::vec(0usize..WORDS.len(), 1..7), 1..4),
            k in 1usize..30,
        ) {
            let (dir, sandbox, mut index) = tree(files, seed);
            for round in 0..2 {
                for words in &prompts {
                    let mut prompt: Vec<String> = words.iter().map(|&w| WORDS[w].to_owned()).collect();
                    if words[0] % 3 == 0 {
                        prompt.push(format!("`{}_{}`", WORDS[words[0]], WORDS[*words.last().unwrap()]));
                    }
                    if words[0] % 4 == 1 {
                        prompt.push("src/net".to_owned());
                    }
                    same_start(&index, &prompt.join(" "), k);
                }
                if round == 0 {
                    // A file saved again, one added, one removed: the lists follow.
                    let mut some = std::fs::read_dir(dir.path().join("src")).unwrap().flatten();
                    if let Some(f) = some.find(|e| e.path().is_file()) {
                        std::fs::write(f.path(), "let error = file(parse); // buffer error\n").unwrap();
                    }
                    std::fs::write(dir.path().join("src/added.rs"), "pub fn error_file() {}\n").unwrap();
                    if let Some(f) = std::fs::read_dir(dir.path().join("docs")).ok().and_then(|mut d| d.next()) {
                        std::fs::remove_file(f.unwrap().path()).unwrap();
                    }
                    index.refresh(&sandbox).unwrap();
                    index.keep_term_lists();
                }
            }
        }
    }

    /// A tree where a common word is in every file and a rare one in a few: a ranking asked
    /// for its best file stops early (it does not score every file), and answers as the whole
    /// ranking does.
    #[test]
    fn a_prompt_of_a_common_and_a_rare_word_stops_early() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..300 {
            let rare = if i % 10 == 0 { " needle needle" } else { "" };
            let text = format!("// the error of file {i}{rare}\nlet error = {i};\n");
            std::fs::write(dir.path().join(format!("f{i:03}.rs")), text).unwrap();
        }
        let root = dir.path().to_str().unwrap();
        let sandbox = ctx_fs::Sandbox::builder(root).open(cap_std::ambient_authority()).unwrap();
        let (index, _) = Index::build(&sandbox).unwrap();
        index.keep_term_lists();
        assert!(same_start(&index, "the needle error", 1), "scored every file");
        let ranked =
            rank(&index, &Query::parse("the needle error"), &Weights::default(), false, Some(1));
        assert!(ranked.files.len() < 100, "{} files scored", ranked.files.len());
    }
}
