//! Choosing what of the ranked files fills a token budget: per file, nothing, its peek line,
//! some of its ranges, its outline with its ranges, or the whole file, by value per token.
//! No I/O: the candidates come measured ([`crate::Index::candidates`]).

use serde::Serialize;

use crate::lines::LineRange;

/// A ranked file and what each way of showing it costs.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Candidate {
    /// The path, relative to the workspace root.
    pub path: String,
    /// Its ranking score (only the order means something).
    pub score: f64,
    /// Its one-line summary.
    pub summary: String,
    /// Its number of lines.
    pub lines: u32,
    /// The o200k tokens of the whole file; `None` when they pass the budget.
    pub whole: Option<usize>,
    /// Its pieces, in line order: each a range, its share of the file's evidence (the
    /// pieces of a file share 1) and its tokens. Together they cover the file, but for the
    /// pieces with the least evidence of a file longer than the budget, which are not
    /// measured.
    pub ranges: Vec<(LineRange, f64, usize)>,
    /// Its outline view, when it has one and it is smaller than the whole file: the o200k
    /// tokens its content is held to, and the ranges it shows beside the outline
    /// ([`crate::reduce`]).
    pub outline: Option<(usize, Vec<LineRange>)>,
    /// Its cheapest sight, offered in a budget of at least [`crate::reduce::VIEW_MIN_BUDGET`]
    /// tokens: the line with the most evidence (in the piece with the most), and its tokens.
    pub peek: Option<(u32, usize)>,
}

/// Files measured at a time by [`crate::Index::candidates`].
pub const BATCH: usize = 4;

/// How many times the budget the measured files must be able to fill before
/// [`crate::Index::candidates`] stops measuring.
pub const MATERIAL: usize = 5;

/// What seeing a file at all is worth, as a share of seeing all of it: its first piece tells
/// the model that the file exists, where it lies and what it is about, which more of it
/// does not tell again. So the value of a file's lines is concave: a first glimpse of a
/// file ranked lower can be worth more than the far corners of one ranked higher.
pub const GLIMPSE: f64 = 0.15;

/// The share of a file's value that follows its evidence; the rest follows its lines alike
/// (the evidence says where a change lies, but not all of it).
pub const EVIDENCE: f64 = 0.75;

impl Candidate {
    /// The tokens this file could fill at most: the whole file, else all its pieces.
    #[must_use]
    pub fn material(&self) -> usize {
        self.whole.unwrap_or_else(|| self.ranges.iter().map(|r| r.2).sum())
    }

    /// The share of the file that piece `i` holds: [`EVIDENCE`] by its evidence, the rest by
    /// its lines.
    fn share(&self, i: usize) -> f64 {
        let (range, evidence, _) = self.ranges[i];
        let lines = f64::from(range.end - range.start + 1) / f64::from(self.lines.max(1));
        EVIDENCE * evidence + (1.0 - EVIDENCE) * lines
    }

    /// The piece with the most evidence: the one a file is first seen by (the earliest of
    /// equals).
    fn lead(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, r) in self.ranges.iter().enumerate() {
            if best.is_none_or(|b| r.1 > self.ranges[b].1) {
                best = Some(i);
            }
        }
        best
    }

    /// Whether piece `i` ends right before the next piece starts.
    fn touch(&self, i: usize) -> bool {
        self.ranges.get(i + 1).is_some_and(|next| self.ranges[i].0.end + 1 == next.0.start)
    }

    /// Whether the pieces cover every line of the file.
    fn covered(&self) -> bool {
        self.ranges.first().is_some_and(|r| r.0.start == 1)
            && self.ranges.last().is_some_and(|r| r.0.end >= self.lines)
            && (0..self.ranges.len() - 1).all(|i| self.touch(i))
    }
}

/// How a chosen file is shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "view", content = "lines")]
pub enum View {
    /// The whole file.
    Whole,
    /// These ranges, in line order.
    Ranges(Vec<LineRange>),
    /// Its outline and these ranges, in line order, within the choice's tokens.
    Outline(Vec<LineRange>),
}

/// A file chosen to fill a budget.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Choice {
    /// The path, relative to the workspace root.
    pub path: String,
    /// How it is shown.
    #[serde(flatten)]
    pub view: View,
    /// The o200k tokens it takes, its wrappers included.
    pub tokens: usize,
    /// Its ranking score.
    pub score: f64,
    /// Its one-line summary.
    pub summary: String,
}

/// What one file holds so far in [`choose`].
#[derive(Clone, Default)]
struct State {
    /// Which pieces are taken.
    taken: Vec<bool>,
    /// Whether the whole file is.
    whole: bool,
    /// Whether its outline view is (its first sight, in place of any piece).
    outline: bool,
    /// Whether its peek line is (its first sight, before any piece).
    peeked: bool,
    /// The share of the file the pieces hold.
    share: f64,
    tokens: usize,
}

/// A step of [`choose`]: a piece of a file, the whole file in place of its pieces, or, as its
/// first sight, its peek line or its outline view.
#[derive(Clone, Copy)]
enum Step {
    Peek,
    Piece(usize),
    Whole,
    Outline,
}

/// The value of holding `share` of a file worth `worth`: nothing for nothing, else a first
/// glimpse ([`GLIMPSE`]) and the share of the rest.
fn value(worth: f64, share: f64) -> f64 {
    if share <= 0.0 { 0.0 } else { worth * (GLIMPSE + (1.0 - GLIMPSE) * share.min(1.0)) }
}

/// What the outline itself is worth beside the ranges it shows, as a share of the file.
const OUTLINE_SHARE: f64 = 0.2;

/// Fills `budget` tokens from `candidates` (best ranked first): each step takes, for some
/// file, one of its pieces or the whole file in place of its pieces, whichever gives the
/// most value per token and still fits; until nothing fits. A file's worth is its score
/// relative to the best divided by its rank (the chance that a ranked file is needed falls
/// with the files ranked above it, as 1/rank in the usual prior of ranked retrieval); its
/// pieces hold a share of it, [`EVIDENCE`] by the evidence near them and the rest by their
/// lines, and the value of a share is concave (`value`: a first glimpse, then the share).
/// So a piece near the evidence comes before one far from it, and returns diminish along a
/// file. A file whose candidate has a peek line (its line with the most evidence) can be
/// first seen by that line alone, worth a glimpse: the cheapest sight of a file, so that in
/// a large budget the files ranked lower are seen without taking the lines of the first;
/// the piece that holds the line then takes its place. Each range shown costs
/// `overhead(path)` tokens besides its lines (its tags, as
/// measured by the caller): a piece next to one taken joins its range and costs no more
/// tags, one between two taken joins them and saves a range's. The result lists the files
/// in rank order, each whole or as its ranges in line order (pieces that touch joined); a
/// file all of whose pieces are taken is shown whole.
pub fn choose(
    candidates: &[Candidate],
    budget: usize,
    overhead: &dyn Fn(&str) -> usize,
) -> Vec<Choice> {
    let best = candidates.iter().map(|c| c.score).fold(0.0_f64, f64::max);
    let mut states: Vec<State> = candidates
        .iter()
        .map(|c| State { taken: vec![false; c.ranges.len()], ..State::default() })
        .collect();
    let mut left = as_signed(budget);
    let wrap: Vec<usize> = candidates.iter().map(|c| overhead(&c.path)).collect();
    // How close each file came to the best, discounted by how many came before it.
    let worth: Vec<f64> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| if best > 0.0 { c.score / best } else { 1.0 } / (i + 1) as f64)
        .collect();
    // Each file's best step that fits, kept until the file changes or the step no longer
    // fits (what is left only shrinks, so the best of the steps that fit stays the best).
    let mut best: Vec<Option<Option<Best>>> = vec![None; candidates.len()];
    loop {
        let mut pick: Option<(usize, Best)> = None;
        for (i, c) in candidates.iter().enumerate() {
            let fresh = match best[i] {
                Some(Some(b)) => b.cost <= left,
                Some(None) => true,
                None => false,
            };
            if !fresh {
                best[i] = Some(best_step(c, &states[i], worth[i], wrap[i], left));
            }
            if let Some(Some(b)) = best[i]
                && pick.as_ref().is_none_or(|(_, p)| b.ratio > p.ratio)
            {
                pick = Some((i, b));
            }
        }
        let Some((i, Best { step, cost, .. })) = pick else { break };
        let state = &mut states[i];
        // A piece that joins two ranges can cost less than nothing: it saves a range's tags,
        // and then a step of another file that did not fit may fit.
        left -= cost;
        if cost < 0 {
            best.fill(None);
        }
        best[i] = None;
        state.tokens = usize::try_from(as_signed(state.tokens) + cost).unwrap_or(0);
        match step {
            Step::Piece(p) => {
                state.taken[p] = true;
                state.share += candidates[i].share(p);
            }
            Step::Whole => state.whole = true,
            Step::Peek => state.peeked = true,
            Step::Outline => state.outline = true,
        }
    }
    candidates
        .iter()
        .zip(states)
        .filter(|(_, s)| s.whole || s.outline || s.peeked || s.taken.iter().any(|t| *t))
        .map(|(c, s)| {
            let all = s.taken.iter().all(|t| *t) && c.covered();
            let view = if s.outline {
                View::Outline(c.outline.as_ref().map(|o| o.1.clone()).unwrap_or_default())
            } else if s.whole || all {
                View::Whole
            } else if !s.taken.iter().any(|t| *t) {
                let line = c.peek.map_or(1, |p| p.0);
                View::Ranges(vec![LineRange { start: line, end: line }])
            } else {
                View::Ranges(joined(c, &s.taken))
            };
            Choice {
                path: c.path.clone(),
                view,
                tokens: s.tokens,
                score: c.score,
                summary: c.summary.clone(),
            }
        })
        .collect()
}

/// A file's best step: its value per token, and its cost in tokens.
#[derive(Clone, Copy)]
struct Best {
    ratio: f64,
    step: Step,
    cost: isize,
}

/// The step of file `c` (in `state`, worth `worth`, each range costing `wrap` tokens of
/// tags) with the most value per token among those that cost at most `left` (the first of
/// equals): its peek line or its outline view as its first sight, a piece (while the file
/// has none, the one with the most evidence, or after its peek line the one that holds it),
/// or the whole file.
fn best_step(c: &Candidate, state: &State, worth: f64, wrap: usize, left: isize) -> Option<Best> {
    if state.whole || state.outline {
        return None;
    }
    // Seen by its peek line alone: worth a glimpse.
    let seen = state.share <= 0.0 && state.peeked;
    let now = if seen { worth * GLIMPSE } else { value(worth, state.share) };
    let mut pick: Option<Best> = None;
    let mut consider = |step: Step, gain: f64, cost: isize| {
        if gain <= 0.0 || cost > left {
            return;
        }
        let ratio = gain / cost.max(1) as f64;
        if pick.as_ref().is_none_or(|p| ratio > p.ratio) {
            pick = Some(Best { ratio, step, cost });
        }
    };
    // A file is first seen by its peek line, or by its piece with the most evidence; after
    // its peek line, by the piece that holds that line.
    let first = state.share <= 0.0;
    let lead = if seen {
        let line = c.peek.map_or(0, |p| p.0);
        c.ranges.iter().position(|r| r.0.start <= line && line <= r.0.end)
    } else {
        c.lead()
    };
    for (p, &(_, _, tokens)) in c.ranges.iter().enumerate() {
        if state.taken[p] || (first && Some(p) != lead) {
            continue;
        }
        let gain = value(worth, state.share + c.share(p)) - now;
        let joins = usize::from(p > 0 && state.taken[p - 1] && c.touch(p - 1))
            + usize::from(state.taken.get(p + 1) == Some(&true) && c.touch(p));
        let cost = if seen {
            // The piece takes the peek line's place: its tags are paid, its line counted.
            as_signed(tokens) - as_signed(c.peek.map_or(0, |p| p.1))
        } else {
            as_signed(tokens) + as_signed(wrap) * (1 - as_signed(joins))
        };
        consider(Step::Piece(p), gain, cost);
    }
    if first
        && !state.peeked
        && let Some((_, tokens)) = c.peek
    {
        consider(Step::Peek, worth * GLIMPSE, as_signed(tokens + wrap));
    }
    if let Some(whole) = c.whole {
        consider(Step::Whole, worth - now, as_signed(whole + wrap) - as_signed(state.tokens));
    }
    // The outline view, only as a file's first sight: in place of its first piece (not of its
    // peek line, whose file is seen already).
    if first
        && !state.peeked
        && let Some((share, tokens)) = outline_share(c)
    {
        consider(Step::Outline, value(worth, share), as_signed(tokens + wrap));
    }
    pick
}

fn as_signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

/// The taken pieces of `c` as ranges in line order, pieces that touch joined.
fn joined(c: &Candidate, taken: &[bool]) -> Vec<LineRange> {
    let mut out: Vec<LineRange> = Vec::new();
    for (piece, _) in c.ranges.iter().zip(taken).filter(|(_, t)| **t) {
        let range = piece.0;
        match out.last_mut() {
            Some(last) if last.end + 1 == range.start => last.end = range.end,
            _ => out.push(range),
        }
    }
    out
}

/// The share of file `c` its outline view holds, and its content's tokens: the share of the
/// pieces its ranges overlap, and [`OUTLINE_SHARE`] for the map of the rest.
fn outline_share(c: &Candidate) -> Option<(f64, usize)> {
    let (tokens, shown) = c.outline.as_ref()?;
    let overlaps = |r: &LineRange| shown.iter().any(|s| s.start <= r.end && r.start <= s.end);
    let held: f64 =
        (0..c.ranges.len()).filter(|&p| overlaps(&c.ranges[p].0)).map(|p| c.share(p)).sum();
    Some(((held + OUTLINE_SHARE).min(1.0), *tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(
        path: &str,
        score: f64,
        whole: Option<usize>,
        ranges: &[(u32, u32, f64, usize)],
    ) -> Candidate {
        Candidate {
            path: path.to_owned(),
            score,
            summary: String::new(),
            lines: ranges.iter().map(|r| r.1).max().unwrap_or(1).max(100),
            whole,
            ranges: ranges
                .iter()
                .map(|&(start, end, w, t)| (LineRange { start, end }, w, t))
                .collect(),
            outline: None,
            peek: None,
        }
    }

    #[test]
    fn the_budget_is_filled_past_five_files_and_never_passed() {
        let candidates: Vec<Candidate> = (0..12)
            .map(|i| {
                candidate(
                    &format!("f{i}.rs"),
                    10.0 - i as f64 * 0.5,
                    Some(500),
                    &[(1, 10, 1.0, 60)],
                )
            })
            .collect();
        let chosen = choose(&candidates, 8000, &|_| 10);
        assert_eq!(chosen.len(), 12, "{chosen:?}");
        assert!(chosen.iter().all(|c| c.view == View::Whole));
        let spent: usize = chosen.iter().map(|c| c.tokens).sum();
        assert_eq!(spent, 12 * 510);
        for budget in [0, 50, 69, 70, 600, 2000] {
            let chosen = choose(&candidates, budget, &|_| 10);
            let spent: usize = chosen.iter().map(|c| c.tokens).sum();
            assert!(spent <= budget, "{budget}: {spent}");
        }
    }

    #[test]
    fn a_large_file_gives_its_ranges_and_the_order_is_the_ranking() {
        let candidates = vec![
            candidate("big.rs", 9.0, None, &[(10, 20, 0.2, 100), (200, 240, 0.8, 400)]),
            candidate("small.rs", 4.0, Some(300), &[(1, 30, 1.0, 300)]),
        ];
        let chosen = choose(&candidates, 1000, &|_| 12);
        assert_eq!(chosen[0].path, "big.rs");
        assert_eq!(
            chosen[0].view,
            View::Ranges(vec![
                LineRange { start: 10, end: 20 },
                LineRange { start: 200, end: 240 }
            ])
        );
        assert_eq!(chosen[0].tokens, 400 + 100 + 24);
        assert_eq!(chosen[1].view, View::Whole);
        // The same inputs, the same choice.
        assert_eq!(choose(&candidates, 1000, &|_| 12), chosen);
    }

    /// A long file cut into `n` pieces of ten lines and 100 tokens each, its evidence in
    /// piece `at`, fading on each side.
    fn long(path: &str, score: f64, n: u32, at: u32) -> Candidate {
        let weights: Vec<f64> = (0..n).map(|i| 0.5_f64.powi(i.abs_diff(at) as i32)).collect();
        let sum: f64 = weights.iter().sum();
        let pieces: Vec<(u32, u32, f64, usize)> =
            (0..n).map(|i| (i * 10 + 1, i * 10 + 10, weights[i as usize] / sum, 100)).collect();
        let mut c = candidate(path, score, None, &pieces);
        c.lines = n * 10;
        c
    }

    fn flat(path: &str, score: f64, n: u32) -> Candidate {
        let pieces: Vec<(u32, u32, f64, usize)> =
            (0..n).map(|i| (i * 10 + 1, i * 10 + 10, 1.0 / f64::from(n), 100)).collect();
        let mut c = candidate(path, score, None, &pieces);
        c.lines = n * 10;
        c
    }

    #[test]
    fn a_concave_first_glimpse_fills_more_files() {
        // The best file alone could fill the budget; its far pieces are worth less than a
        // first glimpse of each file below it, even of one whose evidence is spread evenly
        // (by its share alone, a tenth of a glimpse's value).
        let candidates = vec![
            long("a.rs", 10.0, 40, 20),
            long("b.rs", 9.0, 40, 5),
            long("c.rs", 8.0, 40, 30),
            // Evidence spread evenly: a first glimpse holds little of it, but says the file
            // is there.
            flat("d.rs", 7.0, 40),
        ];
        let chosen = choose(&candidates, 2000, &|_| 10);
        let paths: Vec<&str> = chosen.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["a.rs", "b.rs", "c.rs", "d.rs"], "{chosen:?}");
        // Each file is seen first by its piece with the most evidence, and the best file gets
        // the most.
        for (c, at) in chosen.iter().zip([20, 5, 30]) {
            let View::Ranges(ranges) = &c.view else { panic!("{c:?}") };
            let line = at * 10 + 1;
            assert!(ranges.iter().any(|r| r.start <= line && line <= r.end), "{c:?}");
        }
        assert!(chosen[0].tokens > chosen[3].tokens, "{chosen:?}");
        let spent: usize = chosen.iter().map(|c| c.tokens).sum();
        assert!(spent <= 2000, "{spent}");
    }

    #[test]
    fn returns_diminish_away_from_the_evidence_and_touching_pieces_join() {
        let candidates = vec![long("a.rs", 10.0, 40, 20)];
        let chosen = choose(&candidates, 600, &|_| 10);
        // Pieces 18 to 22 around the evidence (five of 100 tokens, one wrapper: 510), in one
        // range: the pieces nearest the evidence come first, and touching pieces share tags.
        assert_eq!(chosen[0].view, View::Ranges(vec![LineRange { start: 181, end: 230 }]));
        assert_eq!(chosen[0].tokens, 510);
    }

    #[test]
    fn a_file_all_of_whose_pieces_are_taken_is_shown_whole() {
        let mut c = candidate("a.rs", 1.0, None, &[(1, 50, 0.9, 40), (51, 100, 0.1, 40)]);
        c.lines = 100;
        let chosen = choose(&[c], 1000, &|_| 5);
        assert_eq!(chosen[0].view, View::Whole);
        assert_eq!(chosen[0].tokens, 85);
    }

    #[test]
    fn many_files_of_many_pieces_are_chosen_within_the_budget() {
        // The attack: sixty files of two thousand one-token pieces each, every piece worth
        // about the same. What must not happen: a pass over the budget, or work that grows
        // with the pieces times the steps of every file (each file's best step is kept).
        let candidates: Vec<Candidate> =
            (0..60).map(|i| flat(&format!("f{i}.rs"), 60.0 - f64::from(i), 2000)).collect();
        let candidates: Vec<Candidate> = candidates
            .into_iter()
            .map(|mut c| {
                c.ranges.iter_mut().for_each(|r| r.2 = 1);
                c
            })
            .collect();
        let chosen = choose(&candidates, 32_000, &|_| 3);
        let spent: usize = chosen.iter().map(|c| c.tokens).sum();
        assert!(spent <= 32_000, "{spent}");
        assert!(!chosen.is_empty());
    }

    #[test]
    fn the_same_inputs_give_the_same_choice_in_rank_then_line_order() {
        let candidates: Vec<Candidate> =
            (0..8).map(|i| long(&format!("f{i}.rs"), 10.0 - f64::from(i), 30, i * 3)).collect();
        for budget in [0, 150, 1000, 5000, 40000] {
            let chosen = choose(&candidates, budget, &|_| 10);
            assert_eq!(choose(&candidates, budget, &|_| 10), chosen);
            let ranks: Vec<usize> = chosen
                .iter()
                .map(|c| candidates.iter().position(|x| x.path == c.path).unwrap())
                .collect();
            assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
            for c in &chosen {
                if let View::Ranges(r) = &c.view {
                    assert!(r.windows(2).all(|w| w[0].end + 1 < w[1].start), "{r:?}");
                }
            }
            let spent: usize = chosen.iter().map(|c| c.tokens).sum();
            assert!(spent <= budget, "{budget}: {spent}");
        }
    }
}

#[cfg(test)]
mod peek_tests {
    use super::*;

    /// A long file of forty pieces of ten lines and 100 tokens, its evidence in piece `at`
    /// fading on each side, and its peek line, the first of that piece, of 5 tokens.
    fn peeked(path: &str, score: f64, at: u32) -> Candidate {
        let weights: Vec<f64> = (0..40_u32).map(|i| 0.5_f64.powi(i.abs_diff(at) as i32)).collect();
        let sum: f64 = weights.iter().sum();
        Candidate {
            path: path.to_owned(),
            score,
            summary: String::new(),
            lines: 400,
            whole: None,
            ranges: (0..40)
                .map(|i| {
                    (
                        LineRange { start: i * 10 + 1, end: i * 10 + 10 },
                        weights[i as usize] / sum,
                        100,
                    )
                })
                .collect(),
            outline: None,
            peek: Some((at * 10 + 1, 5)),
        }
    }

    #[test]
    fn a_file_is_first_seen_by_its_peek_line_and_its_piece_then_takes_its_place() {
        // The peek first (a glimpse for 15 tokens), then the piece that holds its line: the
        // line and the tags are counted once (five pieces and one wrapper: 510).
        let chosen = choose(&[peeked("a.rs", 10.0, 20)], 600, &|_| 10);
        assert_eq!(chosen[0].view, View::Ranges(vec![LineRange { start: 181, end: 230 }]));
        assert_eq!(chosen[0].tokens, 510);
    }

    #[test]
    fn a_file_ranked_lower_is_seen_by_its_peek_line_alone() {
        let candidates = [peeked("a.rs", 10.0, 20), peeked("b.rs", 9.0, 5)];
        let chosen = choose(&candidates, 150, &|_| 10);
        assert_eq!(chosen.len(), 2, "{chosen:?}");
        assert_eq!(chosen[0].view, View::Ranges(vec![LineRange { start: 201, end: 210 }]));
        assert_eq!(chosen[0].tokens, 110);
        assert_eq!(chosen[1].view, View::Ranges(vec![LineRange { start: 51, end: 51 }]));
        assert_eq!(chosen[1].tokens, 15);
    }

    #[test]
    fn many_peeked_files_never_pass_the_budget() {
        // The attack: sixty files whose peek costs one token (and a line longer than its
        // piece, which would make taking the piece cost less than nothing). What must not
        // happen: a pass over the budget, a file shown twice, or a peek beside its own piece.
        let candidates: Vec<Candidate> = (0..60)
            .map(|i| {
                let mut c = peeked(&format!("f{i}.rs"), 60.0 - f64::from(i), i % 40);
                c.peek = Some((c.peek.unwrap().0, if i % 7 == 0 { 500 } else { 1 }));
                c
            })
            .collect();
        for budget in [0, 1, 10, 11, 100, 2000, 8000, 40_000] {
            let chosen = choose(&candidates, budget, &|_| 10);
            let spent: usize = chosen.iter().map(|c| c.tokens).sum();
            assert!(spent <= budget, "{budget}: {spent}");
            for c in &chosen {
                if let View::Ranges(r) = &c.view {
                    assert!(r.windows(2).all(|w| w[0].end + 1 < w[1].start), "{r:?}");
                }
            }
            assert_eq!(choose(&candidates, budget, &|_| 10), chosen);
        }
    }
}

#[cfg(test)]
mod outline_tests {
    use super::*;

    /// A long file whose evidence is spread over ten places: ten ranges cost more than its
    /// outline view, which holds most of them.
    fn spread(outline: Option<(usize, Vec<LineRange>)>) -> Candidate {
        let ranges = (0..10)
            .map(|i| (LineRange { start: i * 200 + 1, end: i * 200 + 40 }, 0.1, 400))
            .collect();
        Candidate {
            path: "src/spread.rs".to_owned(),
            score: 5.0,
            summary: String::new(),
            lines: 2000,
            whole: None,
            ranges,
            outline,
            peek: None,
        }
    }

    #[test]
    fn a_spread_file_is_shown_as_its_outline_when_that_is_worth_more_per_token() {
        let shown: Vec<LineRange> =
            (0..8).map(|i| LineRange { start: i * 200 + 11, end: i * 200 + 20 }).collect();
        let candidates = vec![spread(Some((900, shown.clone())))];
        let chosen = choose(&candidates, 1000, &|_| 10);
        assert_eq!(chosen.len(), 1);
        assert_eq!(chosen[0].view, View::Outline(shown.clone()));
        assert_eq!(chosen[0].tokens, 910);
        let json = serde_json::to_value(&chosen[0]).unwrap();
        assert_eq!(json["view"], "outline");
        assert_eq!(json["lines"][0]["start"], 11);
        // Seen first by its peek line, the file goes on by its pieces, not by its outline
        // view: the first piece is the one that holds the peek line.
        let mut peeked = spread(Some((900, shown.clone())));
        peeked.peek = Some((11, 5));
        let chosen = choose(&[peeked], 1000, &|_| 10);
        let View::Ranges(ranges) = &chosen[0].view else { panic!("{chosen:?}") };
        assert_eq!(ranges[0], LineRange { start: 1, end: 40 }, "{chosen:?}");
        assert!(chosen[0].tokens <= 1000);
        // Without an outline view, two ranges.
        let chosen = choose(&[spread(None)], 1000, &|_| 10);
        assert!(matches!(&chosen[0].view, View::Ranges(r) if r.len() == 2), "{chosen:?}");
        // A budget that holds the outline view and more: the ranges left are not added to
        // it, and the budget is never passed.
        for budget in [0, 500, 909, 910, 4000, 10_000] {
            let chosen = choose(&[spread(Some((900, shown.clone())))], budget, &|_| 10);
            let spent: usize = chosen.iter().map(|c| c.tokens).sum();
            assert!(spent <= budget, "{budget}: {spent}");
        }
    }
}
