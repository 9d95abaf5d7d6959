//! Suggests the files and line ranges of a workspace that matter for a
//! prompt, ranked locally with no model and no network.
//!
//! - [`Index`]: every file of the workspace (ignore-aware, read through a
//!   [`ctx_fs::Sandbox`]) split into five fields (path, definitions,
//!   references, comments, body) with identifier-aware terms
//!   ([`tokenize`]), the symbols from a lexical scanner or from tree-sitter
//!   tags queries ([`symbols`], [`SymbolSource`]; one grammar per cargo
//!   feature) and a stamp per file for
//!   incremental updates; stored in a [`ctx_fs::Store`] keyed by the root,
//!   replaced atomically under a lock, rebuilt when corrupt.
//! - Ranking: BM25F over the fields, bonuses for identifiers and paths
//!   written in the prompt, demotion of tests, docs, lock files, generated
//!   and vendored code unless the prompt asks for them, then a personalised
//!   PageRank over the symbol graph ([`Weights`]).
//! - Each [`Suggestion`] has the densest window of lines, snapped to the
//!   enclosing definition and capped, and a one-line summary.
//!
//! # Example
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # std::fs::create_dir(dir.path().join("src"))?;
//! # std::fs::write(dir.path().join("src/retry.rs"), "/// Retries until the deadline.\nfn retry_with_timeout() {}\n")?;
//! # std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n")?;
//! let sandbox = ctx_fs::Sandbox::builder(dir.path().to_str().unwrap())
//!     .open(cap_std::ambient_authority())?;
//! let (index, _stats) = ctx_suggest::Index::build(&sandbox)?;
//! let found = index.suggest(&sandbox, "fix the retry timeout", &ctx_suggest::Options::default());
//! assert_eq!(found[0].path, "src/retry.rs");
//! assert_eq!(found[0].summary, "fn retry_with_timeout: Retries until the deadline.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod classify;
mod error;
pub mod fit;
mod hash;
mod index;
mod lines;
pub mod outline;
mod par;
mod query;
mod rank;
pub mod reduce;
pub mod symbols;
pub mod tokenize;
mod top;

pub use classify::{FileClass, classify, is_data_path, is_generated};
pub use error::{Error, ErrorKind, Result};
pub use index::{FIELDS, Field, Index, IndexSettings, MAX_PARTIAL_FOLDERS, UpdateStats};
pub use lines::LineRange;
pub use rank::{Demotions, Weights};
pub use symbols::SymbolSource;

use ctx_fs::{Content, Sandbox};

/// Options of a suggestion query.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// How many files to suggest at most.
    pub limit: usize,
    /// The longest range proposed, in lines.
    pub max_lines: u32,
    /// A budget for the suggested ranges together, in o200k tokens counted
    /// exactly as the assembler counts what it includes (ctx-tokens);
    /// suggestions that do not fit are left out.
    pub max_tokens: Option<usize>,
    /// Whether to say why each file scored.
    pub explain: bool,
    /// The ranking's weights.
    pub weights: Weights,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            limit: 10,
            max_lines: 80,
            max_tokens: None,
            explain: false,
            weights: Weights::default(),
        }
    }
}

impl Options {
    /// Sets the number of files.
    pub fn limit(mut self, limit: usize) -> Options {
        self.limit = limit;
        self
    }

    /// Sets the longest range, in lines.
    pub fn max_lines(mut self, lines: u32) -> Options {
        self.max_lines = lines;
        self
    }

    /// Sets the token budget.
    pub fn max_tokens(mut self, tokens: Option<usize>) -> Options {
        self.max_tokens = tokens;
        self
    }

    /// Asks for explanations.
    pub fn explain(mut self, on: bool) -> Options {
        self.explain = on;
        self
    }

    /// Sets the weights.
    pub fn weights(mut self, weights: Weights) -> Options {
        self.weights = weights;
        self
    }
}

/// A suggested file and range.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Suggestion {
    /// The path, relative to the workspace root, `/`-separated.
    pub path: String,
    /// The proposed lines: the range that holds the most evidence.
    pub lines: LineRange,
    /// Every range proposed, in line order (`lines` among them): one per place where the
    /// evidence lies, at most four.
    #[serde(default)]
    pub ranges: Vec<LineRange>,
    /// The ranking score (only its order means something).
    pub score: f64,
    /// One line: the matched symbols and the first doc comment.
    pub summary: String,
    /// Why the file scored (filled when explanations are asked for).
    pub why: Vec<String>,
}

impl Index {
    /// The files and line ranges that matter for `prompt`, best first.
    pub fn suggest(&self, sandbox: &Sandbox, prompt: &str, opts: &Options) -> Vec<Suggestion> {
        let query = query::Query::parse(prompt);
        // The best files first; the whole ranking only if they run out before the answer is
        // full (files passed over for the budget or for being empty).
        let ranking = rank::rank(self, &query, &opts.weights, opts.explain, Some(opts.limit));
        let (terms, mut whole) = (ranking.terms, ranking.whole);
        let mut out = Vec::new();
        let mut budget = opts.max_tokens;
        let mut ranked = ranking.files.into_iter();
        let mut taken = 0;
        // The windows of as many files as are still wanted, on every core; a file over the
        // token budget is passed over and the next ones are taken. A window is counted only up
        // to what the budget had left when its round began: what goes past it cannot fit.
        while out.len() < opts.limit {
            let want = opts.limit - out.len();
            let mut round: Vec<rank::Scored> = ranked.by_ref().take(want).collect();
            if round.len() < want && !whole {
                let mut all = rank::rank(self, &query, &opts.weights, opts.explain, None).files;
                all.drain(..taken.min(all.len()));
                (ranked, whole) = (all.into_iter(), true);
                round = ranked.by_ref().take(want).collect();
            }
            if round.is_empty() {
                break;
            }
            taken += round.len();
            let left_at_start = budget;
            let windows = par::map(&round, 2, |scored| {
                self.window(sandbox, scored, &terms, opts.max_lines, left_at_start)
            });
            for (scored, window) in round.into_iter().zip(windows) {
                // An empty file has no lines to propose.
                let Some(range) = window.best else {
                    continue;
                };
                if let Some(left) = budget.as_mut() {
                    match window.tokens {
                        Some(tokens) if tokens <= *left => *left -= tokens,
                        _ => continue,
                    }
                }
                out.push(Suggestion {
                    path: self.files()[scored.file].path.clone(),
                    lines: range,
                    ranges: window.ranges,
                    score: (scored.score * 1000.0).round() / 1000.0,
                    summary: window.summary,
                    why: scored.why,
                });
            }
        }
        out
    }

    /// The `opts.limit` best ranked files for `prompt`, each measured for a budget of
    /// `budget` o200k tokens: its whole text (when it fits), and its ranges with the evidence
    /// each holds and its tokens. Empty files are left out. For [`fit::choose`]. Files are
    /// measured in rank order, [`fit::BATCH`] at a time, and no further once those measured
    /// hold [`fit::MATERIAL`] times the budget: the fitter values a file by its rank, so the
    /// files past that point could only replace better ranked ones.
    pub fn candidates(
        &self,
        sandbox: &Sandbox,
        prompt: &str,
        opts: &Options,
        budget: usize,
    ) -> Vec<fit::Candidate> {
        let query = query::Query::parse(prompt);
        let ranking = rank::rank(self, &query, &opts.weights, false, Some(opts.limit));
        let terms = ranking.terms;
        let round: Vec<rank::Scored> = ranking.files.into_iter().take(opts.limit).collect();
        // The prompt's words no file holds: where they would go in a file's sorted tables.
        let new = lines::new_words(prompt, &terms);
        let mut out = Vec::new();
        // The tokens the measured files could fill: whole, or all their ranges.
        let mut material = 0usize;
        for batch in round.chunks(fit::BATCH) {
            let found = par::map(batch, 2, |scored| {
                self.measure(sandbox, scored, (prompt, &terms, &new), opts, budget)
            });
            for c in found.into_iter().flatten() {
                material += c.material().min(budget / 2);
                out.push(c);
            }
            if material >= budget.saturating_mul(fit::MATERIAL) {
                break;
            }
        }
        out
    }

    fn measure(
        &self,
        sandbox: &Sandbox,
        scored: &rank::Scored,
        (prompt, terms, new): (&str, &[String], &[String]),
        opts: &Options,
        budget: usize,
    ) -> Option<fit::Candidate> {
        let file = &self.files()[scored.file];
        let text = read(sandbox, &file.path);
        let matched: Vec<(String, f64)> =
            scored.matched.iter().map(|&(q, s)| (terms[q as usize].clone(), s)).collect();
        let defs: Vec<index::DefRec> = self.defs(file).collect();
        let cap = (opts.max_lines / 2).max(1);
        let named = |d: &index::DefRec| self.named(d, &matched);
        // A plan below the views' budget shows a few pieces and no peek line.
        let small = budget < reduce::VIEW_MIN_BUDGET;
        let (pieces, peak) =
            lines::pieces_and_peak(&text, &defs, (&matched, new), named, cap, small);
        // A file's cheapest sight, its peek line, in a budget large enough to show many files.
        let peek = (!small).then(|| {
            (peak, ctx_tokens::count(lines_of(&text, LineRange { start: peak, end: peak })))
        });
        // The summary names what the piece with the most evidence holds.
        let best = pieces.iter().max_by(|a, b| {
            a.evidence.total_cmp(&b.evidence).then(b.range.start.cmp(&a.range.start))
        })?;
        let mut summary = lines::summary(self, file, &defs, best.range, &matched);
        if summary.is_empty() {
            summary = first_comment(file, &text).unwrap_or_default();
        }
        // The pieces are measured by their evidence per line, the most first, until they
        // pass the budget (the others could only follow them); when every piece fits, the
        // whole file is their sum (a line's tokens never merge with the next line's, but for
        // runs of blank lines, so the sum is the whole or a little more).
        let mut order: Vec<usize> = (0..pieces.len()).collect();
        let density = |p: &lines::Piece| p.evidence / f64::from(p.range.end - p.range.start + 1);
        order.sort_by(|&a, &b| density(&pieces[b]).total_cmp(&density(&pieces[a])).then(a.cmp(&b)));
        let mut tokens: Vec<Option<usize>> = vec![None; pieces.len()];
        let mut measured = 0usize;
        for i in order {
            let Some(n) = ctx_tokens::count_at_most(lines_of(&text, pieces[i].range), budget)
            else {
                measured = usize::MAX;
                break;
            };
            measured = measured.saturating_add(n);
            tokens[i] = Some(n);
            if measured > budget {
                break;
            }
        }
        let whole = (measured <= budget).then_some(measured);
        let ranges: Vec<(lines::LineRange, f64, usize)> = pieces
            .iter()
            .zip(tokens)
            .filter_map(|(p, tokens)| Some((p.range, p.evidence, tokens?)))
            .collect();
        Some(fit::Candidate {
            path: file.path.clone(),
            score: (scored.score * 1000.0).round() / 1000.0,
            summary,
            lines: u32::try_from(text.lines().count()).unwrap_or(u32::MAX),
            outline: {
                // The outline view shows the pieces with the most evidence per line first.
                let mut preferred: Vec<(lines::LineRange, f64)> = ranges
                    .iter()
                    .filter(|r| r.1 > 0.0)
                    .map(|r| (r.0, r.1 / f64::from(r.0.end - r.0.start + 1)))
                    .collect();
                preferred.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.start.cmp(&b.0.start)));
                let preferred: Vec<lines::LineRange> = preferred.into_iter().map(|r| r.0).collect();
                reduce::view(&file.path, &text, (prompt, &preferred), whole, budget)
            },
            whole,
            ranges,
            peek,
        })
    }

    /// The matched weight of a definition's name.
    fn named(&self, d: &index::DefRec, matched: &[(String, f64)]) -> f64 {
        let mut w = 0.0;
        tokenize::word_terms(self.symbol(d.sym), |t| {
            if let Some((_, v)) = matched.iter().find(|(m, _)| *m == t) {
                w += v;
            }
        });
        w
    }

    /// The line range and summary of a ranked file, and the tokens of the range when they are
    /// at most `budget`.
    fn window(
        &self,
        sandbox: &Sandbox,
        scored: &rank::Scored,
        terms: &[String],
        max_lines: u32,
        budget: Option<usize>,
    ) -> Window {
        let file = &self.files()[scored.file];
        let text = read(sandbox, &file.path);
        let matched: Vec<(String, f64)> =
            scored.matched.iter().map(|&(q, s)| (terms[q as usize].clone(), s)).collect();
        let defs: Vec<index::DefRec> = self.defs(file).collect();
        let found = lines::ranges(
            &text,
            &defs,
            &matched,
            |d| self.named(d, &matched),
            max_lines,
            lines::MAX_RANGES,
        );
        let Some(best) = found.first() else {
            return Window {
                best: None,
                ranges: Vec::new(),
                summary: String::new(),
                tokens: Some(0),
            };
        };
        let mut summary = lines::summary(self, file, &defs, best.range, &matched);
        if summary.is_empty() {
            summary = first_comment(file, &text).unwrap_or_default();
        }
        let mut ranges: Vec<LineRange> = found.iter().map(|s| s.range).collect();
        ranges.sort_by_key(|r| r.start);
        let tokens = budget.and_then(|max| {
            ranges.iter().try_fold(0, |sum, &r| {
                ctx_tokens::count_at_most(lines_of(&text, r), max - sum).map(|n| sum + n)
            })
        });
        Window { best: Some(best.range), ranges, summary, tokens }
    }
}

/// What [`Index::window`] finds for a file.
struct Window {
    /// The range with the most evidence; `None` for an empty file.
    best: Option<LineRange>,
    /// Every range, in line order.
    ranges: Vec<LineRange>,
    summary: String,
    /// The o200k tokens of the range's lines, as the assembler counts them once included;
    /// `None` past the budget, or when there is none.
    tokens: Option<usize>,
}

/// A file's text, empty when it cannot be read as text.
fn read(sandbox: &Sandbox, path: &str) -> ctx_fs::Text {
    sandbox
        .read_path(path, None)
        .ok()
        .and_then(|(_, c)| match c {
            Content::Text { text, .. } => Some(text),
            _ => None,
        })
        .unwrap_or_default()
}

/// The lines of a range, with their line endings: what including the range adds.
fn lines_of(text: &str, range: LineRange) -> &str {
    let mut lines = text.split_inclusive('\n');
    let skip = range.start.saturating_sub(1) as usize;
    let start: usize = lines.by_ref().take(skip).map(str::len).sum();
    let len: usize =
        lines.take(range.end.saturating_sub(range.start) as usize + 1).map(str::len).sum();
    &text[start..start + len]
}

/// The first useful comment line near the top of a file; for plain text, its first line
/// with words.
fn first_comment(file: &index::FileRec, text: &str) -> Option<String> {
    let head: String = text.lines().take(40).collect::<Vec<_>>().join("\n");
    let mut found = None;
    symbols::split_comments(file.lang, &head, |line, comment| {
        if comment && found.is_none() {
            let t =
                line.trim().trim_start_matches(['/', '*', '#', '!', '"', '\'', '-', ' ']).trim();
            if t.chars().filter(|c| c.is_alphanumeric()).count() >= 3
                && !t.to_ascii_lowercase().contains("copyright")
            {
                found = Some(t.chars().take(160).collect());
            }
        }
    });
    if found.is_none() && !file.lang.is_code() {
        found = head
            .lines()
            .map(|l| l.trim().trim_start_matches(['#', '=', '-', '*', ' ']).trim())
            .find(|l| l.chars().filter(|c| c.is_alphanumeric()).count() >= 3)
            .map(|l| l.chars().take(160).collect());
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_of_a_range_keep_their_endings() {
        let range = |start, end| LineRange { start, end };
        let text = "one\r\ntwo\nthree\nfour";
        assert_eq!(lines_of(text, range(1, 1)), "one\r\n");
        assert_eq!(lines_of(text, range(2, 3)), "two\nthree\n");
        assert_eq!(lines_of(text, range(3, 4)), "three\nfour");
        assert_eq!(lines_of(text, range(1, 4)), text);
        // Past the end, or reversed: what lies within the text, never a panic.
        assert_eq!(lines_of(text, range(4, 9)), "four");
        assert_eq!(lines_of(text, range(7, 9)), "");
        assert_eq!(lines_of(text, range(3, 2)), "three\n");
        assert_eq!(lines_of("", range(1, 1)), "");
    }
}
