//! The best window of lines in a suggested file, and its one-line summary.

use crate::hash::SeededMap;
use crate::index::{DefRec, FileRec, Index};
use crate::tokenize;

/// A range of lines, 1-based and inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineRange {
    /// First line.
    pub start: u32,
    /// Last line.
    pub end: u32,
}

/// Most ranges proposed for one file.
pub(crate) const MAX_RANGES: usize = 4;

/// Lines of context kept around a line that scored outside any definition that fits.
const CONTEXT: u32 = 3;

/// Lines of context the fitter's block keeps on each side of such a line: fewer than a
/// proposed range keeps, since the pieces next to a block ([`NEAR`] lines, then more) let
/// the fitter add the lines around it where they are worth their tokens.
const PIECE_CONTEXT: u32 = 2;

/// How a term's evidence is shared among the lines that hold it in a small plan (below
/// [`crate::reduce::VIEW_MIN_BUDGET`]): each line's weight is divided by the number of lines
/// holding the term to this power, so that a word of the prompt written on a hundred lines
/// of a file does not outweigh, on its many lines, a rarer one written on a single line
/// (`add '*.sass' to sass type` points at the line of `sass`, not at the doc comments full of
/// `type`). A plan of a few pieces must
/// land where the rare words are; a larger one takes many pieces, and there the spread of
/// the common words says which lines around them are worth taking (on the development set,
/// the same rule at 8 000 tokens lost what it gained at 2 000).
const SMALL_PLAN_SHARE: f64 = 0.5;

/// How much more a line where several words of the prompt meet weighs in a larger plan: its
/// weight times the number of distinct terms on it to this power (the square root).
const MEETING: f64 = 0.5;

/// [`MEETING`] in a small plan (below [`crate::reduce::VIEW_MIN_BUDGET`]): the square. A plan
/// of a few pieces does best to take the lines where the prompt's words meet; a larger one
/// takes many pieces, and a line of one word (a new entry of a table) can be what it needs
/// (on the development set the stronger meeting gained at 2 000 tokens and lost at 8 000,
/// docs/suggest.md).
const SMALL_PLAN_MEETING: f64 = 2.0;

/// A range and the matched weight it holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scored {
    pub(crate) range: LineRange,
    pub(crate) weight: f64,
}

/// The lines of `text`, how many, and `cap` made at least 1; `None` for an empty text, which
/// gets no range and no piece.
fn lines_of(text: &str, cap: u32) -> Option<(Vec<&str>, u32, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let total = u32::try_from(lines.len()).unwrap_or(u32::MAX);
    (total > 0).then_some((lines, total, cap.max(1)))
}

/// The ranges of a file built around its evidence, best first: each line that scored for
/// the prompt and each definition whose name did is taken with the innermost definition
/// around it that fits in `cap` lines (else with three lines of context), blocks that touch
/// are merged while they fit, and the heaviest blocks are kept, at most `most`. A file
/// of at most `cap` lines is proposed whole; an empty file gets no range; a file where nothing
/// scored gets its first `cap` lines. `named` says whether a definition's name matched, and
/// with what weight.
pub(crate) fn ranges(
    text: &str,
    defs: &[DefRec],
    matched: &[(String, f64)],
    named: impl Fn(&DefRec) -> f64,
    cap: u32,
    most: usize,
) -> Vec<Scored> {
    let Some((lines, total, cap)) = lines_of(text, cap) else { return Vec::new() };
    let weights = evidence(&lines, defs, matched, named);
    let sum: f64 = weights.iter().sum();
    if total <= cap {
        return vec![Scored { range: LineRange { start: 1, end: total }, weight: sum }];
    }
    if sum <= 0.0 {
        return vec![Scored { range: LineRange { start: 1, end: cap }, weight: 0.0 }];
    }
    let mut scored: Vec<Scored> = blocks(&weights, defs, cap, CONTEXT)
        .into_iter()
        .map(|range| {
            let weight = weights[range.start as usize - 1..range.end as usize].iter().sum();
            Scored { range, weight }
        })
        .collect();
    // Heaviest first; for equal weights, shorter, then earlier.
    scored.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then((a.range.end - a.range.start).cmp(&(b.range.end - b.range.start)))
            .then(a.range.start.cmp(&b.range.start))
    });
    scored.truncate(most);
    scored
}

/// The evidence of each line: the matched weight of its words, and twice the weight of a
/// definition's name on the definition's first line.
fn evidence(
    lines: &[&str],
    defs: &[DefRec],
    matched: &[(String, f64)],
    named: impl Fn(&DefRec) -> f64,
) -> Vec<f64> {
    let weights = line_weights(lines, matched, 0.0).0;
    with_names(weights, defs, named)
}

/// The evidence of [`evidence`] for the fitter's pieces: each line's matched weight times the
/// number of distinct terms of the prompt that meet on it to the power [`MEETING`], so that the lines where
/// the prompt's words meet weigh more than as many lines that each hold one of them (term
/// proximity, as in ranked retrieval), without one line of many words taking all. In a
/// `small` plan a term's weight is shared among the lines that hold it ([`SMALL_PLAN_SHARE`])
/// and the meeting counts more ([`SMALL_PLAN_MEETING`]).
fn evidence_met(
    lines: &[&str],
    defs: &[DefRec],
    matched: &[(String, f64)],
    named: impl Fn(&DefRec) -> f64,
    small: bool,
) -> Vec<f64> {
    let (share, meeting) =
        if small { (SMALL_PLAN_SHARE, SMALL_PLAN_MEETING) } else { (0.0, MEETING) };
    let (mut weights, found) = line_weights(lines, matched, share);
    let mut seen = vec![usize::MAX; matched.len()];
    for (i, (weight, terms)) in weights.iter_mut().zip(&found).enumerate() {
        let mut distinct = 0u32;
        for &m in terms {
            if seen[m] != i {
                seen[m] = i;
                distinct += 1;
            }
        }
        if distinct > 1 {
            *weight *= f64::from(distinct).powf(meeting);
        }
    }
    with_names(weights, defs, named)
}

/// `weights` and twice the weight of a definition's name on its first line.
fn with_names(mut weights: Vec<f64>, defs: &[DefRec], named: impl Fn(&DefRec) -> f64) -> Vec<f64> {
    for d in defs {
        let w = named(d);
        if w > 0.0
            && let Some(slot) = weights.get_mut(d.start.saturating_sub(1) as usize)
        {
            *slot += 2.0 * w;
        }
    }
    weights
}

/// The blocks around the lines that scored, in line order and apart: each such line with
/// the innermost definition around it that fits in `cap` lines, else with `context` lines on
/// each side; blocks that touch or lie within two lines are merged while they fit in `cap`.
fn blocks(weights: &[f64], defs: &[DefRec], cap: u32, context: u32) -> Vec<LineRange> {
    let total = u32::try_from(weights.len()).unwrap_or(u32::MAX);
    let mut blocks: Vec<LineRange> = Vec::new();
    for (i, &w) in weights.iter().enumerate() {
        if w <= 0.0 {
            continue;
        }
        let line = i as u32 + 1;
        let inner = defs
            .iter()
            .filter(|d| d.start <= line && line <= d.end && d.end - d.start < cap)
            .min_by_key(|d| (d.end - d.start, d.start));
        let block = match inner {
            Some(d) => LineRange { start: d.start, end: d.end.min(total) },
            None => {
                // Context on each side, within the cap.
                let context = context.min((cap - 1) / 2);
                LineRange {
                    start: line.saturating_sub(context).max(1),
                    end: (line + context).min(total),
                }
            }
        };
        blocks.push(block);
    }
    blocks.sort_by_key(|b| (b.start, b.end));
    let mut merged: Vec<LineRange> = Vec::new();
    for b in blocks {
        let Some(last) = merged.last_mut() else {
            merged.push(b);
            continue;
        };
        if b.start <= last.end + 2 && b.end.max(last.end) - last.start < cap {
            last.end = last.end.max(b.end);
        } else if b.end <= last.end {
            // A block inside the last one adds nothing.
        } else if b.start <= last.end {
            let start = last.end + 1;
            merged.push(LineRange { start, end: b.end });
        } else {
            merged.push(b);
        }
    }
    merged
}

/// A piece of a file for the fitter, and the share of the file's evidence near it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Piece {
    pub(crate) range: LineRange,
    /// Its share of the file's evidence once spread to the lines around it; the pieces of a
    /// file share 1.
    pub(crate) evidence: f64,
}

/// The share of a piece's evidence that the blocks it holds give; the rest is the evidence
/// spread to the lines around the blocks.
const HELD: f64 = 0.75;

/// Lines over which the evidence of a block fades by a factor of e on each side: a change
/// lies near the words of the prompt that it answers more often than far from them.
const SPREAD: f64 = 20.0;

/// A file cut into pieces of at most `cap` lines, in line order, covering every line once:
/// the blocks built around its evidence (as [`ranges`] builds them, all of them), and
/// between them runs of lines cut before a definition where one starts in the second half
/// of a run. Each piece holds a share of the evidence: [`HELD`] by the blocks it holds (a
/// block's weight shared by its lines), the rest by the same weight spread, fading by a
/// factor of e every [`SPREAD`] lines on each side, so that the lines next to the evidence
/// are worth more than the lines far from it. A file
/// where nothing scored takes its first line as its evidence (its head: imports, the
/// module's doc, its first definitions). An empty file has no piece.
#[cfg(test)]
pub(crate) fn pieces(
    text: &str,
    defs: &[DefRec],
    matched: &[(String, f64)],
    named: impl Fn(&DefRec) -> f64,
    cap: u32,
) -> Vec<Piece> {
    pieces_and_peak(text, defs, (matched, &[]), named, cap, false).0
}

/// [`pieces`], and the line with the most evidence in the piece with the most (the first of
/// equals): a file's cheapest sight. `small`: for a plan below
/// [`crate::reduce::VIEW_MIN_BUDGET`] ([`SMALL_PLAN_SHARE`], [`SMALL_PLAN_MEETING`]).
pub(crate) fn pieces_and_peak(
    text: &str,
    defs: &[DefRec],
    (matched, new): (&[(String, f64)], &[String]),
    named: impl Fn(&DefRec) -> f64,
    cap: u32,
    small: bool,
) -> (Vec<Piece>, u32) {
    let Some((lines, total, cap)) = lines_of(text, cap) else { return (Vec::new(), 1) };
    let mut weights = evidence_met(&lines, defs, matched, named, small);
    insertions(&lines, matched, new, &mut weights);
    if weights.iter().sum::<f64>() <= 0.0 {
        // The head, from its first line that shows something.
        let first = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
        weights[first] = 1.0;
    }
    let cores = blocks(&weights, defs, cap, PIECE_CONTEXT);
    // Each block's weight shared by its lines.
    let mut mass = vec![0.0; weights.len()];
    for b in &cores {
        let lines = b.start as usize - 1..b.end as usize;
        let each = weights[lines.clone()].iter().sum::<f64>() / lines.len() as f64;
        mass[lines].fill(each);
    }
    let spread = spread(&mass);
    let sum: f64 = spread.iter().sum();
    let own: f64 = mass.iter().sum();
    let mut starts: Vec<u32> = defs.iter().map(|d| d.start).collect();
    starts.sort_unstable();
    let mut ranges = Vec::new();
    let mut next = 1;
    for (i, b) in cores.iter().enumerate() {
        let gap = Gap { start: next, end: b.start.saturating_sub(1), after: i > 0, before: true };
        gap.split(cap, &starts, &mut ranges);
        ranges.push(*b);
        next = b.end + 1;
    }
    let after = !cores.is_empty();
    Gap { start: next, end: total, after, before: false }.split(cap, &starts, &mut ranges);
    let out: Vec<Piece> = join_blank(ranges, &lines)
        .into_iter()
        .map(|range| {
            let lines = range.start as usize - 1..range.end as usize;
            let near: f64 = spread[lines.clone()].iter().sum();
            let held: f64 = mass[lines].iter().sum();
            let evidence = if sum > 0.0 && own > 0.0 {
                HELD * held / own + (1.0 - HELD) * near / sum
            } else {
                0.0
            };
            Piece { range, evidence }
        })
        .collect();
    let mut lead: Option<&Piece> = None;
    for p in &out {
        if lead.is_none_or(|l| p.evidence > l.evidence) {
            lead = Some(p);
        }
    }
    let peak = lead.map_or(1, |l| {
        // A piece starts on a line that shows something, but at the head of the file.
        let shows = |n: &u32| !lines[*n as usize - 1].trim().is_empty();
        let mut best = (l.range.start..=l.range.end).find(shows).unwrap_or(l.range.start);
        for line in l.range.start..=l.range.end {
            if weights[line as usize - 1] > weights[best as usize - 1] {
                best = line;
            }
        }
        best
    });
    (out, peak)
}

/// `ranges` (in line order, covering the file) with each range of blank lines alone joined to
/// the range before it (or, at the head of the file, to the one after it): a piece that shows
/// nothing is never offered on its own. A file of blank lines alone has no range.
fn join_blank(ranges: Vec<LineRange>, lines: &[&str]) -> Vec<LineRange> {
    let blank = |r: &LineRange| {
        lines[r.start as usize - 1..r.end as usize].iter().all(|l| l.trim().is_empty())
    };
    let mut out: Vec<LineRange> = Vec::with_capacity(ranges.len());
    let mut head: Option<u32> = None;
    for mut range in ranges {
        if blank(&range) {
            match out.last_mut() {
                Some(last) => last.end = range.end,
                None => {
                    head.get_or_insert(range.start);
                }
            }
            continue;
        }
        if let Some(start) = head.take() {
            range.start = start;
        }
        out.push(range);
    }
    out
}

/// The words of `prompt` that no file of the workspace holds: each word (lower case, once)
/// that has terms, none of which is among `known` (the prompt's terms the index has). Such a
/// word names something new, often the entry the change adds ([`insertions`]).
pub(crate) fn new_words(prompt: &str, known: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, word) in tokenize::words(prompt) {
        if out.len() == MOST_NEW_WORDS {
            break;
        }
        let (mut terms, mut found) = (0, false);
        tokenize::word_terms(word, |t| {
            terms += 1;
            found |= known.contains(&t);
        });
        let lower = word.to_ascii_lowercase();
        if terms > 0 && !found && !out.contains(&lower) {
            out.push(lower);
        }
    }
    out
}

/// Most new words of a prompt placed in a file's sorted runs: a prompt of many words the
/// workspace lacks says little through each, and the search stays bounded.
const MOST_NEW_WORDS: usize = 16;

/// Entries a run must hold to count as sorted: fewer in order could be chance.
const SORTED_RUN: usize = 8;

/// The sort key of a line: its first word, lower-cased, when the line starts with it (after
/// its indentation and at most two marks such as `("` or `- `, or up to four that open a
/// literal, as `(&["` in `(&["vue"], &["*.vue"]),`), and its indentation.
fn sort_key(line: &str) -> Option<(usize, String)> {
    let indent = line.len() - line.trim_start().len();
    let (at, word) = tokenize::words(line).next()?;
    let marks = &line[indent..at.max(indent)];
    let opening = marks.len() <= 4 && marks.bytes().all(|b| b"([{&\"'`<".contains(&b));
    ((marks.len() <= 2 || opening) && word.bytes().any(|b| b.is_ascii_alphabetic()))
        .then(|| (indent, word.to_ascii_lowercase()))
}

/// The runs of entries sorted by their key: lines at one indentation whose keys do not go
/// down, the lines between them deeper (an entry's continuation, or a nested block with runs
/// of its own), blank or without a key; a line less indented or a key that goes down ends a
/// run. Only runs of at least [`SORTED_RUN`] entries with as many distinct keys are kept (a
/// run of `use` or `import` lines is not a sorted table). Each run: its entries' lines
/// (0-based) and keys.
fn sorted_runs(lines: &[&str]) -> Vec<Vec<(usize, String)>> {
    let mut runs: Vec<Vec<(usize, String)>> = Vec::new();
    // The runs open at each indentation, the least indented first.
    let mut open: Vec<(usize, Vec<(usize, String)>)> = Vec::new();
    let mut close = |run: Vec<(usize, String)>| {
        let distinct = 1 + run.windows(2).filter(|w| w[0].1 != w[1].1).count();
        if run.len() >= SORTED_RUN && distinct >= SORTED_RUN {
            runs.push(run);
        }
    };
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let depth = line.len() - line.trim_start().len();
        // A line ends the runs more indented than it.
        while open.last().is_some_and(|(d, _)| *d > depth) {
            close(open.pop().map(|o| o.1).unwrap_or_default());
        }
        let Some((_, key)) = sort_key(line) else { continue };
        match open.last_mut() {
            Some((d, run)) if *d == depth => {
                if run.last().is_some_and(|(_, k)| *k > key) {
                    close(std::mem::take(run));
                }
                run.push((i, key));
            }
            _ => open.push((depth, vec![(i, key)])),
        }
    }
    while let Some((_, run)) = open.pop() {
        close(run);
    }
    runs
}

/// Evidence where the prompt's new words ([`new_words`]) would go in the file's sorted runs
/// ([`sorted_runs`]): a word that sorts between two entries of a run marks both lines, where
/// an entry of that name would be added. Together the words weigh what one term of the
/// prompt weighs in the file (the evidence of its lines, over the matched terms), shared
/// alike by the words placed and, for each, by its places: the more new words, the less each
/// says where the change lies. A word before a run's first entry or after its last is not
/// placed (it may belong to another run). Nothing is added to a file where no term matched.
fn insertions(lines: &[&str], matched: &[(String, f64)], new: &[String], weights: &mut [f64]) {
    if new.is_empty() || matched.is_empty() {
        return;
    }
    let runs = sorted_runs(lines);
    let places: Vec<Vec<usize>> = new
        .iter()
        .map(|word| {
            let mut at = Vec::new();
            for run in &runs {
                let after = run.partition_point(|(_, k)| k.as_str() <= word.as_str());
                if after > 0 && after < run.len() {
                    at.extend([run[after - 1].0, run[after].0]);
                }
            }
            at
        })
        .collect();
    let words = places.iter().filter(|p| !p.is_empty()).count();
    if words == 0 {
        return;
    }
    // What one term of the prompt weighs in the file, on all its lines together.
    let term = weights.iter().sum::<f64>() / matched.len() as f64;
    for at in places.iter().filter(|p| !p.is_empty()) {
        let each = term / words as f64 / at.len() as f64;
        for &line in at {
            weights[line] += each;
        }
    }
}

/// `mass` spread to the lines around it: each line's mass fades by a factor of e every
/// [`SPREAD`] lines on each side (a forward and a backward pass).
fn spread(mass: &[f64]) -> Vec<f64> {
    let fade = (-1.0 / SPREAD).exp();
    let mut forward = vec![0.0; mass.len()];
    let mut carry = 0.0;
    for (i, m) in mass.iter().enumerate() {
        carry = carry * fade + m;
        forward[i] = carry;
    }
    carry = 0.0;
    for (i, m) in mass.iter().enumerate().rev() {
        carry = carry * fade + m;
        // The line's own mass is in both passes.
        forward[i] += carry - m;
    }
    forward
}

/// Lines between two blocks (or a block and an end of the file).
struct Gap {
    start: u32,
    end: u32,
    /// Whether a block ends right before it.
    after: bool,
    /// Whether a block starts right after it.
    before: bool,
}

/// The first piece next to a block, in lines; each next one away from the block is twice as
/// long, up to the cap: the fitter can take the lines around the evidence a few at a time.
const NEAR: u32 = 4;

impl Gap {
    /// Cuts the gap into pieces: next to a block, pieces of [`NEAR`] lines, then twice as many
    /// each time away from it, up to `cap`; the rest in runs of at most `cap` lines, each ended
    /// before a definition that starts in its second half when there is one (`starts`: the
    /// definitions' first lines, sorted).
    fn split(&self, cap: u32, starts: &[u32], out: &mut Vec<LineRange>) {
        let (mut s, mut e) = (self.start, self.end);
        let mut tail = Vec::new();
        let mut step = NEAR;
        while s <= e && step < cap && (self.after || self.before) {
            if self.after {
                let n = step.min(e - s + 1);
                out.push(LineRange { start: s, end: s + n - 1 });
                s += n;
            }
            if self.before && s <= e {
                let n = step.min(e - s + 1);
                tail.push(LineRange { start: e + 1 - n, end: e });
                e -= n;
            }
            step *= 2;
        }
        runs(s, e, cap, starts, out);
        out.extend(tail.into_iter().rev());
    }
}

/// Cuts lines `start..=end` into runs of at most `cap` lines, each ended before a definition
/// that starts in its second half when there is one (`starts`: the definitions' first lines,
/// sorted).
fn runs(start: u32, end: u32, cap: u32, starts: &[u32], out: &mut Vec<LineRange>) {
    let mut s = start;
    while s <= end && s > 0 {
        let mut e = s.saturating_add(cap - 1).min(end);
        if e < end {
            // The last definition that starts in the run's second half.
            let half = s + cap / 2;
            let upto = starts.partition_point(|&d| d <= e);
            if let Some(&d) = starts[..upto].last()
                && d > half
            {
                e = d - 1;
            }
        }
        out.push(LineRange { start: s, end: e });
        s = e + 1;
    }
}

/// The matched weight of each line: each matched word's weight, times how rare its term is
/// among the file's lines (`ln(1 + lines / lines holding it)`), so that a term on every other
/// line of a file says less about where in it a change lies than one on three of its lines;
/// and the matched terms of each line, by their place in `matched`. Each term's weight on a
/// line is also divided by the number of lines holding it to the power `share` (0: not at
/// all; [`SMALL_PLAN_SHARE`] in a small plan).
fn line_weights(
    lines: &[&str],
    matched: &[(String, f64)],
    share: f64,
) -> (Vec<f64>, Vec<Vec<usize>>) {
    // The matched terms of each distinct word, found once: words repeat a lot, and splitting
    // and stemming them again was most of a warm query.
    let mut seen: SeededMap<&str, Vec<usize>> = SeededMap::default();
    let mut holding = vec![0usize; matched.len()];
    let mut last = vec![usize::MAX; matched.len()];
    let found: Vec<Vec<usize>> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let mut found = Vec::new();
            for (_, word) in tokenize::words(line) {
                let terms = seen.entry(word).or_insert_with(|| {
                    let mut terms = Vec::new();
                    tokenize::word_terms(word, |t| {
                        if let Some(m) = matched.iter().position(|(m, _)| *m == t) {
                            terms.push(m);
                        }
                    });
                    terms
                });
                for &m in terms.iter() {
                    if last[m] != i {
                        last[m] = i;
                        holding[m] += 1;
                    }
                    found.push(m);
                }
            }
            found
        })
        .collect();
    let total = lines.len().max(1) as f64;
    let rarity: Vec<f64> = matched
        .iter()
        .zip(&holding)
        .map(|((_, v), &n)| {
            let n = n.max(1) as f64;
            v * (1.0 + total / n).ln() * n.powf(-share)
        })
        .collect();
    (found.iter().map(|terms| terms.iter().map(|&m| rarity[m]).sum()).collect(), found)
}

/// `kind name, name: first doc line`, from the definitions in the range
/// whose names matched (else the first definition in it) and the first
/// doc comment among them.
pub(crate) fn summary(
    index: &Index,
    file: &FileRec,
    defs: &[DefRec],
    range: LineRange,
    matched: &[(String, f64)],
) -> String {
    let inside: Vec<_> =
        defs.iter().filter(|d| d.start >= range.start && d.start <= range.end).collect();
    let enclosing: Vec<_> =
        defs.iter().filter(|d| d.start <= range.start && range.end <= d.end).collect();
    let name_matches = |sym: u32| {
        let mut hit = false;
        tokenize::word_terms(index.symbol(sym), |t| hit |= matched.iter().any(|(m, _)| *m == t));
        hit
    };
    let mut picked: Vec<_> =
        inside.iter().copied().filter(|d| name_matches(d.sym)).take(3).collect();
    if picked.is_empty() {
        picked =
            enclosing.last().copied().or_else(|| inside.first().copied()).into_iter().collect();
    }
    let names: Vec<String> = picked
        .iter()
        .map(|d| {
            let kind = short_kind(index.kind(d.kind));
            format!("{kind} {}", index.symbol(d.sym)).trim().to_owned()
        })
        .collect();
    let doc = picked.iter().find_map(|d| index.doc(file, d).map(str::to_owned));
    match (names.is_empty(), doc) {
        (false, Some(doc)) => format!("{}: {doc}", names.join(", ")),
        (false, None) => names.join(", "),
        (true, Some(doc)) => doc,
        (true, None) => String::new(),
    }
}

fn short_kind(kind: &str) -> &str {
    match kind {
        "function" => "fn",
        "method" => "method",
        "class" => "class",
        "interface" => "interface",
        "module" => "mod",
        "macro" => "macro",
        "constant" => "const",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(start: u32, end: u32) -> DefRec {
        DefRec { sym: 0, kind: 0, start, end, doc: (0, 0) }
    }

    fn matched(terms: &[&str]) -> Vec<(String, f64)> {
        terms.iter().map(|t| ((*t).to_owned(), 1.0)).collect()
    }

    fn found(text: &str, defs: &[DefRec], terms: &[&str], cap: u32) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> =
            ranges(text, defs, &matched(terms), |_| 0.0, cap, MAX_RANGES)
                .into_iter()
                .map(|s| (s.range.start, s.range.end))
                .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn an_empty_file_has_no_range() {
        assert!(ranges("", &[], &matched(&["retry"]), |_| 0.0, 80, MAX_RANGES).is_empty());
        // A file of one line is proposed whole.
        assert_eq!(found("retry\n", &[], &["retry"], 80), [(1, 1)]);
    }

    #[test]
    fn spread_evidence_gives_a_range_around_each_place() {
        let mut lines = vec!["filler"; 400];
        lines[19] = "fn retry() {";
        lines[20] = "    timeout";
        lines[21] = "}";
        lines[299] = "let x = timeout;";
        let text = lines.join("\n");
        let defs = [def(20, 22), def(250, 399)];
        // The definition around the first evidence, three lines around the second (its own
        // definition is longer than the cap).
        assert_eq!(found(&text, &defs, &["retry", "timeout"], 80), [(20, 22), (297, 303)]);
    }

    #[test]
    fn a_definition_whose_name_scored_lies_in_a_range() {
        let mut lines = vec!["filler"; 600];
        for (i, line) in lines.iter_mut().enumerate().take(200).skip(150) {
            if i % 2 == 0 {
                *line = "retry retry";
            }
        }
        lines[462] = "fn abort_all() {";
        let text = lines.join("\n");
        let defs = [def(463, 470)];
        let named = |d: &DefRec| if d.start == 463 { 5.0 } else { 0.0 };
        let got = ranges(&text, &defs, &matched(&["retry"]), named, 80, MAX_RANGES);
        assert!(got.iter().any(|s| s.range.start <= 463 && 463 <= s.range.end), "{got:?}");
        assert!(got.len() <= MAX_RANGES);
        assert!(got.iter().all(|s| s.range.end - s.range.start < 80));
    }

    proptest::proptest! {
        #[test]
        fn ranges_lie_in_the_file_within_the_cap_and_apart(
            words in proptest::collection::vec(proptest::sample::select(vec!["retry", "x", "timeout", "y", ""]), 0..400),
            spans in proptest::collection::vec((1u32..400, 0u32..120), 0..20),
            cap in 1u32..100,
        ) {
            let text = words.join("\n");
            let total = text.lines().count() as u32;
            let defs: Vec<DefRec> = spans.iter().map(|&(start, len)| def(start, start + len)).collect();
            let got = ranges(&text, &defs, &matched(&["retry", "timeout"]), |_| 0.0, cap, MAX_RANGES);
            proptest::prop_assert!(got.len() <= MAX_RANGES);
            proptest::prop_assert_eq!(got.is_empty(), total == 0);
            let mut sorted: Vec<LineRange> = got.iter().map(|s| s.range).collect();
            sorted.sort_by_key(|r| r.start);
            for r in &sorted {
                proptest::prop_assert!(1 <= r.start && r.start <= r.end && r.end <= total);
                proptest::prop_assert!(r.end - r.start < cap.max(1) || (r.start == 1 && r.end == total));
            }
            for w in sorted.windows(2) {
                proptest::prop_assert!(w[0].end < w[1].start, "{:?}", sorted);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn pieces_cover_the_file_once_in_order_within_the_cap(
            words in proptest::collection::vec(proptest::sample::select(vec!["retry", "x", "timeout", "y", ""]), 0..400),
            spans in proptest::collection::vec((1u32..400, 0u32..120), 0..20),
            cap in 1u32..100,
        ) {
            let text = words.join("\n");
            let total = text.lines().count() as u32;
            let defs: Vec<DefRec> = spans.iter().map(|&(start, len)| def(start, start + len)).collect();
            let got = pieces(&text, &defs, &matched(&["retry", "timeout"]), |_| 0.0, cap);
            let lines: Vec<&str> = text.lines().collect();
            let shown = |n: u32| !lines[n as usize - 1].trim().is_empty();
            proptest::prop_assert_eq!(got.is_empty(), !(1..=total).any(shown));
            let mut next = 1;
            for p in &got {
                proptest::prop_assert_eq!(p.range.start, next);
                proptest::prop_assert!(p.range.start <= p.range.end);
                // Every piece shows something; without the blank lines joined to it (at its
                // end, and at the head of the file), it is within the cap.
                let first = (p.range.start..=p.range.end).find(|&n| shown(n)).unwrap();
                let last = (p.range.start..=p.range.end).rev().find(|&n| shown(n)).unwrap();
                let start = if p.range.start == 1 { first } else { p.range.start };
                proptest::prop_assert!(last - start < cap.max(1), "{:?}", p.range);
                proptest::prop_assert!(p.evidence >= 0.0);
                next = p.range.end + 1;
            }
            if !got.is_empty() {
                // A file's cheapest sight shows something.
                let terms = matched(&["retry", "timeout"]);
                let (_, peak) = pieces_and_peak(&text, &defs, (&terms, &[]), |_| 0.0, cap, false);
                proptest::prop_assert!(shown(peak), "{}", peak);
                proptest::prop_assert_eq!(next, total + 1);
                let sum: f64 = got.iter().map(|p| p.evidence).sum();
                proptest::prop_assert!((sum - 1.0).abs() < 1e-9, "{}", sum);
            }
        }
    }

    #[test]
    fn the_fitters_block_around_a_line_is_narrower_and_its_neighbours_are_pieces() {
        let mut lines = vec!["filler"; 400];
        lines[299] = "let x = timeout;";
        let text = lines.join("\n");
        let defs = [def(250, 399)];
        // A proposed range keeps three lines on each side of a line outside a definition that
        // fits; the fitter's block keeps two, and the lines next to it are pieces of their own.
        assert_eq!(found(&text, &defs, &["timeout"], 80), [(297, 303)]);
        let got = pieces(&text, &defs, &matched(&["timeout"]), |_| 0.0, 40);
        let at = |start: u32, end: u32| got.iter().any(|p| p.range == LineRange { start, end });
        assert!(at(298, 302) && at(294, 297) && at(303, 306), "{got:?}");
        let lead = got.iter().max_by(|a, b| a.evidence.total_cmp(&b.evidence)).unwrap();
        assert_eq!(lead.range, LineRange { start: 298, end: 302 }, "{got:?}");
        // At the ends of the file the block is held to its lines.
        let got =
            pieces("timeout\nfiller\nfiller\nfiller\n", &[], &matched(&["timeout"]), |_| 0.0, 40);
        assert_eq!(got[0].range, LineRange { start: 1, end: 3 }, "{got:?}");
    }

    /// The pieces of a 600-line file with a definition named by the prompt at line 463.
    fn spread_file() -> Vec<Piece> {
        let mut lines = vec!["filler"; 600];
        lines[462] = "fn abort_all() {";
        let text = lines.join("\n");
        let defs = [def(463, 470), def(310, 320)];
        let named = |d: &DefRec| if d.start == 463 { 5.0 } else { 0.0 };
        pieces(&text, &defs, &matched(&["retry"]), named, 40)
    }

    #[test]
    fn the_scoring_definition_is_a_piece_of_its_own_with_the_most_evidence() {
        let got = spread_file();
        let lead = got.iter().max_by(|a, b| a.evidence.total_cmp(&b.evidence)).unwrap();
        assert_eq!(lead.range, LineRange { start: 463, end: 470 }, "{got:?}");
        // A run of lines is cut before a definition that starts in its second half.
        assert!(got.iter().any(|p| p.range == LineRange { start: 281, end: 309 }), "{got:?}");
    }

    #[test]
    fn the_peak_is_the_line_with_the_most_evidence_in_the_lead_piece() {
        let mut lines = vec!["filler"; 600];
        lines[462] = "fn abort_all() {";
        lines[465] = "    retry";
        let text = lines.join("\n");
        let defs = [def(463, 470), def(310, 320)];
        let named = |d: &DefRec| if d.start == 463 { 5.0 } else { 0.0 };
        let (got, peak) =
            pieces_and_peak(&text, &defs, (&matched(&["retry"]), &[]), named, 40, false);
        assert_eq!(got, pieces(&text, &defs, &matched(&["retry"]), named, 40));
        // The definition's first line holds twice its name's weight, more than `retry`.
        assert_eq!(peak, 463);
        // Nothing scored: the head.
        let (_, peak) =
            pieces_and_peak(&text, &defs, (&matched(&["zzz"]), &[]), |_| 0.0, 40, false);
        assert_eq!(peak, 1);
        // An empty file has no piece; its peak names no line that a piece holds.
        assert!(
            pieces_and_peak("", &[], (&matched(&["retry"]), &[]), |_| 0.0, 40, false).0.is_empty()
        );
    }

    /// Where two words of the prompt meet, the line weighs its terms' weights times 2 to the
    /// power of the meeting: the square root of 2 in a larger plan, 4 in a small one.
    #[test]
    fn a_small_plan_weighs_the_meeting_of_words_more() {
        let lines = ["fetch here", "budget here", "fetch the budget", "nothing"];
        let terms = vec![("fetch".to_owned(), 1.0), ("budget".to_owned(), 1.0)];
        for (small, factor) in [(false, 2f64.sqrt()), (true, 4.0)] {
            let w = evidence_met(&lines, &[], &terms, |_| 0.0, small);
            assert!((w[0] - w[1]).abs() < 1e-9, "{w:?}");
            assert!((w[2] - factor * (w[0] + w[1])).abs() < 1e-9, "small {small}: {w:?}");
            assert_eq!(w[3], 0.0);
        }
    }

    /// In a small plan a common word of the prompt on a hundred lines weighs less in all than
    /// a rare one on one line: the piece with the most evidence, and its peak, are the rare
    /// word's; in a larger plan the common word's lines lead, as before.
    #[test]
    fn a_small_plan_leads_with_the_rare_word() {
        let text: String = (1..=200)
            .map(|i| match i {
                1..=100 => format!("// the type number {i}\n"),
                150 => "    (\"sass\", &[\"*.scss\"]),\n".to_owned(),
                _ => format!("let x{i} = {i};\n"),
            })
            .collect();
        let matched = vec![("sass".to_owned(), 3.84), ("type".to_owned(), 2.35)];
        let lead = |small: bool| {
            let (pieces, peak) = pieces_and_peak(&text, &[], (&matched, &[]), |_| 0.0, 40, small);
            let best = pieces.iter().max_by(|a, b| a.evidence.total_cmp(&b.evidence)).unwrap();
            (best.range, peak)
        };
        let (range, peak) = lead(true);
        assert!(range.start <= 150 && 150 <= range.end, "{range:?}");
        assert_eq!(peak, 150);
        let (range, _) = lead(false);
        assert!(range.end <= 100, "{range:?}");
    }

    #[test]
    fn the_line_where_the_prompt_words_meet_leads_the_pieces() {
        // Two lines that each hold one word of the prompt, and one line far from them where
        // both meet: alone they weigh the same in all (each term as rare), but the fitter's
        // first sight and peek line go where the words meet.
        let mut lines = vec!["filler"; 300];
        lines[49] = "let a = socket;";
        lines[99] = "let b = timeout;";
        lines[249] = "socket(timeout);";
        lines[250] = "socket(x);";
        lines[150] = "timeout(y);";
        let text = lines.join("\n");
        let terms = matched(&["socket", "timeout"]);
        let plain = evidence(&lines, &[], &terms, |_| 0.0);
        let met = evidence_met(&lines, &[], &terms, |_| 0.0, false);
        assert_eq!(met[49], plain[49]);
        assert!((met[249] - plain[249] * 2f64.sqrt()).abs() < 1e-9, "{met:?}");
        let (pieces, peak) = pieces_and_peak(&text, &[], (&terms, &[]), |_| 0.0, 40, false);
        assert_eq!(peak, 250);
        let lead = pieces.iter().max_by(|a, b| a.evidence.total_cmp(&b.evidence)).unwrap();
        assert!(lead.range.start <= 250 && 250 <= lead.range.end, "{pieces:?}");
        // The ranges `ctx suggest` proposes keep the plain evidence.
        let lone = ranges(&text, &[], &terms, |_| 0.0, 80, MAX_RANGES);
        assert!(lone.iter().any(|s| s.range.start <= 50 && 50 <= s.range.end), "{lone:?}");
    }

    #[test]
    fn a_word_repeated_on_a_line_is_not_a_meeting() {
        // The attack: one term written many times on one line. What must not happen: that
        // line counted as many terms meeting (its weight is its words', not more).
        let lines = ["socket socket socket socket", "filler", "socket timeout"];
        let terms = matched(&["socket", "timeout"]);
        let plain = evidence(&lines, &[], &terms, |_| 0.0);
        let met = evidence_met(&lines, &[], &terms, |_| 0.0, false);
        assert_eq!(met[0], plain[0]);
        assert_eq!(met[1], 0.0);
        assert!(met[2] > plain[2]);
    }

    #[test]
    fn evidence_fades_away_from_where_it_lies() {
        let got = spread_file();
        let per_line = |line: u32| {
            let p = got.iter().find(|p| p.range.start <= line && line <= p.range.end).unwrap();
            p.evidence / f64::from(p.range.end - p.range.start + 1)
        };
        // Near the definition, then farther and farther from it.
        assert!(per_line(475) > per_line(520), "{got:?}");
        assert!(per_line(520) > per_line(590), "{got:?}");
        assert!(per_line(430) > per_line(380), "{got:?}");
        // Lines far from any evidence still hold a little of it.
        assert!(per_line(590) > 0.0);
    }

    #[test]
    fn a_long_file_where_every_line_scores_gives_bounded_pieces() {
        // The attack: 200 000 lines, each holding a word of the prompt. What must not happen:
        // pieces that overlap, pass the file or the cap, or more pieces than lines.
        let text = "retry timeout\n".repeat(200_000);
        let got = pieces(&text, &[], &matched(&["timeout"]), |_| 0.0, 40);
        assert!(!got.is_empty() && got.len() <= 200_000);
        assert_eq!(got.last().map(|p| p.range.end), Some(200_000));
        assert!(got.iter().all(|p| p.range.end - p.range.start < 40));
        let sum: f64 = got.iter().map(|p| p.evidence).sum();
        assert!((sum - 1.0).abs() < 1e-6, "{sum}");
    }

    #[test]
    fn nothing_scored_gives_the_head() {
        let text = "a\n".repeat(300);
        assert_eq!(found(&text, &[], &["zzz"], 80), [(1, 80)]);
    }

    /// A file of code, then a sorted table of file types (one entry over three lines), then
    /// more code; `type` is on the code's lines.
    fn table() -> String {
        let mut lines = vec!["fn matcher_for_type() {", "    let t = type_of(x);", "}", ""];
        lines.push("const TYPES: &[(&str, &[&str])] = &[");
        for entry in ["agda", "asm", "awk", "c", "cbor", "clojure", "cmake", "cpp"] {
            lines.push(Box::leak(format!("    (\"{entry}\", &[\"*.{entry}\"]),").into_boxed_str()));
        }
        lines.extend(["    (\"cs\", &[", "        \"*.cs\", \"*.csx\",", "    ]),"]);
        lines.extend(["    (\"css\", &[\"*.css\"]),", "    (\"dart\", &[\"*.dart\"]),", "];"]);
        lines.extend(["", "fn add_type() {", "    type_of(y)", "}"]);
        lines.join("\n")
    }

    #[test]
    fn a_sorted_table_is_one_run_across_its_long_entries() {
        let text = table();
        let lines: Vec<&str> = text.lines().collect();
        let runs = sorted_runs(&lines);
        assert_eq!(runs.len(), 1, "{runs:?}");
        let keys: Vec<&str> = runs[0].iter().map(|(_, k)| k.as_str()).collect();
        assert_eq!(
            keys,
            ["agda", "asm", "awk", "c", "cbor", "clojure", "cmake", "cpp", "cs", "css", "dart"]
        );
        // A table whose entries open with more marks, each a list of names.
        let listed: Vec<String> = text
            .lines()
            .map(|l| l.replacen("(\"", "(&[\"", 1).replacen("\",", "\"],", 1))
            .collect();
        assert!(listed.iter().any(|l| l.starts_with("    (&[\"agda\"], &[")), "{listed:?}");
        let listed: Vec<&str> = listed.iter().map(String::as_str).collect();
        assert_eq!(sorted_runs(&listed), runs);
        // Lines of one key (`use`, `import`) or out of order are no sorted table.
        let uses = "use a::b;\n".repeat(12);
        assert!(sorted_runs(&uses.lines().collect::<Vec<_>>()).is_empty());
        let shuffled: Vec<String> = (0..12).map(|i| format!("k{} = 1", (i * 7) % 12)).collect();
        let shuffled: Vec<&str> = shuffled.iter().map(String::as_str).collect();
        assert!(sorted_runs(&shuffled).is_empty());
    }

    #[test]
    fn a_new_word_marks_where_it_would_go_in_a_sorted_table() {
        let text = table();
        let matched = vec![("type".to_owned(), 1.0)];
        let new = vec!["cshtml".to_owned()];
        let (got, peak) = pieces_and_peak(&text, &[], (&matched, &new), |_| 0.0, 40, false);
        // Between `cs` (line 14) and `css` (line 17): the lines a new entry goes between.
        assert!(peak == 14 || peak == 17, "{peak} {got:?}");
        let lead = got.iter().max_by(|a, b| a.evidence.total_cmp(&b.evidence)).unwrap();
        assert!(lead.range.start <= 14 && 17 <= lead.range.end, "{got:?}");
        let sum: f64 = got.iter().map(|p| p.evidence).sum();
        assert!((sum - 1.0).abs() < 1e-9, "{sum}");
        // Without the new word, the table holds no evidence of its own.
        let (before, _) = pieces_and_peak(&text, &[], (&matched, &[]), |_| 0.0, 40, false);
        assert_eq!(before, pieces(&text, &[], &matched, |_| 0.0, 40));
        let at = |ps: &[Piece]| {
            ps.iter().find(|p| p.range.start <= 15 && 15 <= p.range.end).unwrap().evidence
        };
        assert!(at(&got) > at(&before), "{got:?} {before:?}");
    }

    #[test]
    fn a_word_outside_every_run_adds_nothing() {
        let text = table();
        let lines: Vec<&str> = text.lines().collect();
        let matched = vec![("type".to_owned(), 1.0)];
        let base = evidence(&lines, &[], &matched, |_| 0.0);
        for new in [vec!["aaa".to_owned()], vec!["zzz".to_owned()], vec![]] {
            let mut weights = base.clone();
            insertions(&lines, &matched, &new, &mut weights);
            assert_eq!(weights, base, "{new:?}");
        }
        // A file where no term matched gets no evidence from its tables either.
        let mut weights = vec![0.0; lines.len()];
        insertions(&lines, &[], &["cshtml".to_owned()], &mut weights);
        assert!(weights.iter().all(|w| *w == 0.0));
    }

    #[test]
    fn new_words_are_the_prompts_words_the_index_lacks() {
        let known = vec!["add".to_owned(), "ignor".to_owned(), "type".to_owned()];
        assert_eq!(new_words("Add a cshtml ignore type", &known), ["cshtml"]);
        assert_eq!(new_words("add the CSHTML type, cshtml", &known), ["cshtml"]);
        assert!(new_words("", &known).is_empty());
        // The attack: a prompt of ten thousand words that no file holds. What must not happen:
        // more than a bounded number of them searched in each file.
        let long: String = (0..10_000).map(|i| format!("w{i}x ")).collect();
        assert_eq!(new_words(&long, &known).len(), MOST_NEW_WORDS);
    }

    #[test]
    fn a_long_sorted_file_and_many_new_words_give_bounded_pieces() {
        // The attack: 200 000 sorted entries and the most new words, each sorting inside the
        // run. What must not happen: pieces that overlap or pass the file, evidence that does
        // not sum to one, or a weight that is not finite.
        let text: String = (0..200_000).map(|i| format!("  k{i:07} = retry\n")).collect();
        let new: Vec<String> = (0..MOST_NEW_WORDS).map(|i| format!("k{:07}x", i * 9_000)).collect();
        let matched = vec![("retri".to_owned(), 1.0)];
        let (got, peak) = pieces_and_peak(&text, &[], (&matched, &new), |_| 0.0, 40, false);
        assert_eq!(got.last().map(|p| p.range.end), Some(200_000));
        assert!(got.windows(2).all(|w| w[0].range.end + 1 == w[1].range.start));
        let sum: f64 = got.iter().map(|p| p.evidence).sum();
        assert!(sum.is_finite() && (sum - 1.0).abs() < 1e-6, "{sum}");
        assert!((1..=200_000).contains(&peak));
    }
}
