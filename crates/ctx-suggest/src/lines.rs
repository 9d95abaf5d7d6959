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

/// Most ranges proposed for one file.
pub(crate) const MAX_RANGES: usize = 4;

/// Most ranges the fitter may choose from in one file: finer pieces (of at most half the
/// longest range proposed, up to eight) let it fill a budget more closely.
pub(crate) const FIT_RANGES: usize = 8;

/// Lines of context kept around a line that scored outside any definition that fits.
const CONTEXT: u32 = 3;

/// A range and the matched weight it holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scored {
    pub(crate) range: LineRange,
    pub(crate) weight: f64,
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
    let lines: Vec<&str> = text.lines().collect();
    let total = u32::try_from(lines.len()).unwrap_or(u32::MAX);
    let cap = cap.max(1);
    if total == 0 {
        return Vec::new();
    }
    let mut weights = line_weights(&lines, matched);
    for d in defs {
        let w = named(d);
        if w > 0.0
            && let Some(slot) = weights.get_mut(d.start.saturating_sub(1) as usize)
        {
            *slot += 2.0 * w;
        }
    }
    let sum: f64 = weights.iter().sum();
    if total <= cap {
        return vec![Scored { range: LineRange { start: 1, end: total }, weight: sum }];
    }
    if sum <= 0.0 {
        return vec![Scored { range: LineRange { start: 1, end: cap }, weight: 0.0 }];
    }
    // One block per line that scored: the innermost definition around it that fits.
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
                let context = CONTEXT.min((cap - 1) / 2);
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
    let mut scored: Vec<Scored> = merged
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

/// The matched weight of each line.
fn line_weights(lines: &[&str], matched: &[(String, f64)]) -> Vec<f64> {
    // The matched weights of each distinct word, found once: words repeat a lot, and
    // splitting and stemming them again was most of a warm query.
    let mut seen: FxHashMap<&str, Vec<f64>> = FxHashMap::default();
    lines
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
        .collect()
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

    #[test]
    fn nothing_scored_gives_the_head() {
        let text = "a\n".repeat(300);
        assert_eq!(found(&text, &[], &["zzz"], 80), [(1, 80)]);
    }
}
