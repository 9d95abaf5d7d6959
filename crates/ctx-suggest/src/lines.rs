//! The best window of lines in a suggested file, and its one-line summary.

use crate::hash::FxHashMap;
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

/// Picks the window of at most `cap` lines holding the most matched
/// weight, trims it to its matched lines (with three lines of context),
/// then widens each end to the outermost definition around it that still
/// fits in `cap` lines; a file of at most `cap` lines is proposed whole.
pub(crate) fn best_range(
    text: &str,
    defs: &[DefRec],
    matched: &[(String, f64)],
    cap: u32,
) -> LineRange {
    let lines: Vec<&str> = text.lines().collect();
    let total = u32::try_from(lines.len()).unwrap_or(u32::MAX).max(1);
    let cap = cap.max(1);
    if total <= cap {
        return LineRange { start: 1, end: total };
    }
    // The matched weights of each distinct word, found once: words repeat a lot, and
    // splitting and stemming them again was most of a warm query. They are added one by one,
    // in the same order as before, so that the sums come out the same to the last bit.
    let mut seen: FxHashMap<&str, Vec<f64>> = FxHashMap::default();
    let weights: Vec<f64> = lines
        .iter()
        .map(|line| {
            let mut w = 0.0;
            for (_, word) in tokenize::words(line) {
                let values = seen.entry(word).or_insert_with(|| {
                    let mut values = Vec::new();
                    tokenize::word_terms(word, |t| {
                        if let Some((_, v)) = matched.iter().find(|(m, _)| *m == t) {
                            values.push(*v);
                        }
                    });
                    values
                });
                for v in values.iter() {
                    w += v;
                }
            }
            w
        })
        .collect();
    let (mut best_start, mut best_sum, mut sum) = (0usize, -1.0, 0.0);
    let cap_us = cap as usize;
    for i in 0..lines.len() {
        sum += weights[i];
        if i >= cap_us {
            sum -= weights[i - cap_us];
        }
        if i + 1 >= cap_us.min(lines.len()) && sum > best_sum + 1e-9 {
            best_sum = sum;
            best_start = (i + 1).saturating_sub(cap_us);
        }
    }
    if best_sum <= 0.0 {
        return LineRange { start: 1, end: cap };
    }
    let window = best_start..(best_start + cap_us).min(lines.len());
    // Trim the window to its first and last matched lines, keeping a
    // little context.
    let first = window.clone().find(|&i| weights[i] > 0.0).unwrap_or(window.start);
    let last = window.clone().rev().find(|&i| weights[i] > 0.0).unwrap_or(window.end - 1);
    let mut start = first.saturating_sub(3).max(window.start) as u32 + 1;
    let mut end = ((last + 4).min(window.end) as u32).max(start);
    // Context lines never pull in a definition without matches: each end
    // stops short of one that does not reach the matched lines.
    let (first_line, last_line) = (first as u32 + 1, last as u32 + 1);
    let holds = |d: &&DefRec, line: u32| d.start <= line && line <= d.end;
    if let Some(d) =
        defs.iter().filter(|d| holds(d, start) && !holds(d, first_line)).max_by_key(|d| d.end)
    {
        start = (d.end + 1).min(first_line);
    }
    if let Some(d) =
        defs.iter().filter(|d| holds(d, end) && !holds(d, last_line)).min_by_key(|d| d.start)
    {
        end = d.start.saturating_sub(1).max(last_line);
    }
    // Then each end moves out to the outermost definition around it that
    // still fits within the cap, so the range holds whole items.
    let around = |line: u32| {
        defs.iter().filter(move |d| d.start <= line && line <= d.end && d.end - d.start < cap)
    };
    if let Some(d) =
        around(start).filter(|d| end.max(d.end) - d.start < cap).min_by_key(|d| d.start)
    {
        start = d.start;
    }
    if let Some(d) = around(end).filter(|d| d.end - start < cap).max_by_key(|d| d.end) {
        end = d.end;
    }
    LineRange { start, end }
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
