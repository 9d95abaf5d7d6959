//! Choosing what of the ranked files fills a token budget: per file, nothing, some of its
//! ranges, its outline with its ranges, or the whole file, by value per token. No I/O: the candidates come measured
//! ([`crate::Index::candidates`]).

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
    /// Its ranges, heaviest evidence first: each with its evidence weight and its tokens.
    pub ranges: Vec<(LineRange, f64, usize)>,
    /// Its outline view, when it has one and it is smaller than the whole file: the o200k
    /// tokens its content is held to, and the ranges it shows beside the outline
    /// ([`crate::reduce`]).
    pub outline: Option<(usize, Vec<LineRange>)>,
}

/// Files measured at a time by [`crate::Index::candidates`].
pub const BATCH: usize = 4;

/// How many times the budget the measured files must be able to fill before
/// [`crate::Index::candidates`] stops measuring.
pub const MATERIAL: usize = 5;

impl Candidate {
    /// The tokens this file could fill at most: the whole file, else all its ranges.
    #[must_use]
    pub fn material(&self) -> usize {
        self.whole.unwrap_or_else(|| self.ranges.iter().map(|r| r.2).sum())
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
#[derive(Clone, Copy, Default)]
struct State {
    /// Ranges taken, heaviest first; `usize::MAX` once the whole file is.
    taken: usize,
    value: f64,
    tokens: usize,
}

const WHOLE: usize = usize::MAX;
const OUTLINE: usize = usize::MAX - 1;

/// What the outline itself is worth beside the ranges it shows, as a share of the file.
const OUTLINE_SHARE: f64 = 0.2;

/// Fills `budget` tokens from `candidates` (best ranked first): each step takes, for some
/// file, its next range or the whole file in place of its ranges, whichever gives the most
/// value per token and still fits; until nothing fits. A file's value is its score relative
/// to the best divided by its rank (the chance that a ranked file is needed falls with the
/// files ranked above it, as 1/rank in the usual prior of ranked retrieval); a set of ranges is worth the share of it that they hold, half by the evidence
/// they hold, half by the lines. Each element shown costs `overhead(path)` tokens besides its
/// lines (its tags, as measured by the caller). The result lists the files in rank order.
pub fn choose(
    candidates: &[Candidate],
    budget: usize,
    overhead: &dyn Fn(&str) -> usize,
) -> Vec<Choice> {
    let best = candidates.iter().map(|c| c.score).fold(0.0_f64, f64::max);
    let mut states = vec![State::default(); candidates.len()];
    let mut left = budget;
    let wrap: Vec<usize> = candidates.iter().map(|c| overhead(&c.path)).collect();
    loop {
        let mut pick: Option<(usize, f64, State)> = None;
        for (i, c) in candidates.iter().enumerate() {
            let state = states[i];
            // How close the file came to the best, discounted by how many came before it.
            let ratio = if best > 0.0 { c.score / best } else { 1.0 };
            let value = ratio / (i + 1) as f64;
            for next in steps(c, state, value, wrap[i]) {
                let cost = next.tokens.saturating_sub(state.tokens);
                let gain = next.value - state.value;
                if cost > left || gain <= 0.0 {
                    continue;
                }
                let ratio = gain / cost.max(1) as f64;
                if pick.as_ref().is_none_or(|(_, r, _)| ratio > *r) {
                    pick = Some((i, ratio, next));
                }
            }
        }
        let Some((i, _, next)) = pick else { break };
        left -= next.tokens - states[i].tokens;
        states[i] = next;
    }
    candidates
        .iter()
        .zip(states)
        .filter(|(_, s)| s.taken > 0)
        .map(|(c, s)| {
            let view = if s.taken == WHOLE {
                View::Whole
            } else if s.taken == OUTLINE {
                View::Outline(c.outline.as_ref().map(|o| o.1.clone()).unwrap_or_default())
            } else {
                let mut ranges: Vec<LineRange> = c.ranges[..s.taken].iter().map(|r| r.0).collect();
                ranges.sort_by_key(|r| r.start);
                View::Ranges(ranges)
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

/// The states one step past `state`: the next range, and the whole file.
fn steps(c: &Candidate, state: State, value: f64, wrap: usize) -> Vec<State> {
    let mut out = Vec::with_capacity(2);
    if state.taken == WHOLE {
        return out;
    }
    let evidence: f64 = c.ranges.iter().map(|r| r.1).sum();
    let lines = f64::from(c.lines.max(1));
    if let Some(&(range, weight, tokens)) = c.ranges.get(state.taken) {
        let taken = &c.ranges[..=state.taken];
        let held: f64 = taken.iter().map(|r| r.1).sum();
        let spanned: f64 = taken.iter().map(|r| f64::from(r.0.end - r.0.start + 1)).sum();
        let share =
            if evidence > 0.0 { 0.5 * held / evidence } else { 0.0 } + 0.5 * spanned / lines;
        let _ = (range, weight);
        out.push(State {
            taken: state.taken + 1,
            value: value * share.min(1.0),
            tokens: state.tokens + tokens + wrap,
        });
    }
    if let Some(whole) = c.whole {
        out.push(State { taken: WHOLE, value, tokens: whole + wrap });
    }
    if state.taken == 0
        && let Some(next) = outline_step(c, value, wrap)
    {
        out.push(next);
    }
    out
}

/// The outline view of a file not yet taken: worth the share of the file its ranges hold, as
/// ranges are, and [`OUTLINE_SHARE`] for the map of the rest.
fn outline_step(c: &Candidate, value: f64, wrap: usize) -> Option<State> {
    let (tokens, shown) = c.outline.as_ref()?;
    let evidence: f64 = c.ranges.iter().map(|r| r.1).sum();
    let overlaps = |r: &LineRange| shown.iter().any(|s| s.start <= r.end && r.start <= s.end);
    let held: f64 = c.ranges.iter().filter(|r| overlaps(&r.0)).map(|r| r.1).sum();
    let spanned: f64 = shown.iter().map(|r| f64::from(r.end - r.start + 1)).sum();
    let lines = f64::from(c.lines.max(1));
    let share = if evidence > 0.0 { 0.5 * held / evidence } else { 0.0 }
        + 0.5 * spanned / lines
        + OUTLINE_SHARE;
    Some(State { taken: OUTLINE, value: value * share.min(1.0), tokens: tokens + wrap })
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
            candidate("big.rs", 9.0, None, &[(200, 240, 5.0, 400), (10, 20, 1.0, 100)]),
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
}

#[cfg(test)]
mod outline_tests {
    use super::*;

    /// A long file whose evidence is spread over ten places: ten ranges cost more than its
    /// outline view, which holds most of them.
    fn spread(outline: Option<(usize, Vec<LineRange>)>) -> Candidate {
        let ranges = (0..10)
            .map(|i| (LineRange { start: i * 200 + 1, end: i * 200 + 40 }, 1.0, 400))
            .collect();
        Candidate {
            path: "src/spread.rs".to_owned(),
            score: 5.0,
            summary: String::new(),
            lines: 2000,
            whole: None,
            ranges,
            outline,
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
