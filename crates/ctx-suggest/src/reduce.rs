//! The reduced view of one file: its outline ([`crate::outline`]) and the ranges that matter
//! for a prompt (the lines that share its rarest terms, a few lines around each), or its first
//! lines without a prompt, as much as fits a token budget. What a mention that does not fit
//! whole becomes, and the fitter's "outline with ranges" view. No I/O.

use std::collections::HashMap;

use crate::lines::LineRange;
use crate::outline::{self, FileOutline};
use crate::tokenize;

/// Lines kept on each side of a line that shares the prompt's terms.
pub const CONTEXT_LINES: u32 = 3;

/// Bytes of a line whose terms are read: a longer line is matched on its start.
pub const MAX_LINE_BYTES: usize = 4096;

/// Longest range made by joining the lines around neighbouring matches.
pub const MAX_RANGE_LINES: u32 = 40;

/// Most ranges kept beside the outline.
pub const MAX_RANGES: usize = 16;

/// Share of the room the outline takes first (in fifths); the ranges fill the rest, and an
/// outline that was cut gets back what they leave.
const OUTLINE_FIFTHS: usize = 2;

/// What was kept of a file.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Reduced {
    /// The outline, then each range headed by its lines (`[lines 200-240]`).
    pub text: String,
    /// Its o200k tokens.
    pub tokens: usize,
    /// The ranges shown, in line order.
    pub ranges: Vec<LineRange>,
    /// Definitions the outline shows.
    pub shown: usize,
    /// Definitions the file has.
    pub definitions: usize,
}

/// The outline view the fitter may choose for a ranked file ([`crate::fit`]): the o200k
/// tokens its content is held to (a quarter of the budget, from 300 to 3 000) and the ranges
/// of `preferred` (best first) the view shows at that size; `None` when the whole file fits
/// the budget (`whole` is its tokens, `None` past the budget), the budget is under
/// [`VIEW_MIN_BUDGET`], or the file has no outline. The ranges are as the
/// assembler will find them within the same room less its marker's, near enough: the plan is
/// assembled, and the ranges it reports are the ones written.
pub fn view(
    path: &str,
    text: &str,
    (prompt, preferred): (&str, &[LineRange]),
    whole: Option<usize>,
    budget: usize,
) -> Option<(usize, Vec<LineRange>)> {
    let cap = (budget / 4).clamp(300, 3000);
    // Only a file that does not fit whole (one that does is worth more whole than its map),
    // and only in a budget that holds a map beside the ranges of other files.
    if whole.is_some() || budget < VIEW_MIN_BUDGET {
        return None;
    }
    let show = |lines: &str, _: u32| ctx_fs::sanitize::sanitize(lines).text.into_owned();
    let room = cap.saturating_sub(MARKER_TOKENS);
    let reduced = reduce(path, text, (Some(prompt), preferred), room, &show)?;
    Some((cap, reduced.ranges))
}

/// The smallest budget in which the fitter offers outline views: below it, on the
/// development set, the tokens of a map hold fewer of the changed lines than ranges do
/// (docs/suggest.md, "The fitter").
pub const VIEW_MIN_BUDGET: usize = 8000;

/// About the tokens of the marker that ends a reduced file.
const MARKER_TOKENS: usize = 80;

/// The file `text` shown as `path`, reduced to its outline and its ranges within `room` o200k
/// tokens: the `preferred` ranges (best first) when there are any, else those around the lines
/// that share the terms of `prompt`; `show(lines, first)` renders the lines of a range starting
/// at line `first` as they are shown (made visible, numbered). `None` when the file has no
/// outline with definitions, or not even its outline's heading fits.
pub fn reduce(
    path: &str,
    text: &str,
    (prompt, preferred): (Option<&str>, &[LineRange]),
    room: usize,
    show: &dyn Fn(&str, u32) -> String,
) -> Option<Reduced> {
    let mut file = outline::of_text(path, text)?;
    if file.entries.is_empty() {
        return None;
    }
    let definitions = file.entries.len() + file.not_outlined;
    outline::rank(std::slice::from_mut(&mut file), prompt);
    let starts = line_starts(text);
    let lines = u32::try_from(starts.len() - usize::from(text.is_empty() || text.ends_with('\n')))
        .unwrap_or(u32::MAX);
    let ranked = if preferred.is_empty() {
        evidence(text, &starts[..lines as usize], prompt)
    } else {
        given(preferred, lines)
    };
    let first = fit_outline(&file, room * OUTLINE_FIFTHS / 5)?;
    let left = room.saturating_sub(first.tokens + 1);
    let mut pieces = pick(text, &starts, lines, &ranked, left, show);
    let used: usize = pieces.iter().map(|p| p.2).sum();
    // An outline that was cut takes back what the ranges left.
    let outline = if first.left_out > 0 && used + pieces.len() < left {
        fit_outline(&file, room.saturating_sub(used + pieces.len() + 1)).unwrap_or(first)
    } else {
        first
    };
    loop {
        let mut shown = pieces.clone();
        shown.sort_by_key(|p| p.0.start);
        let mut out = outline.text.clone();
        for (_, piece, _) in &shown {
            out.push_str(piece);
        }
        let tokens = ctx_tokens::count(&out);
        if tokens <= room || pieces.is_empty() {
            if tokens > room {
                return None;
            }
            let kept: usize = outline.files.iter().map(|f| f.entries.len()).sum();
            return Some(Reduced {
                text: out,
                tokens,
                ranges: shown.iter().map(|p| p.0).collect(),
                shown: kept,
                definitions,
            });
        }
        // Tokens merged across a boundary: the last range taken goes.
        pieces.pop();
    }
}

/// The outline fitted to `room` tokens, without a note of its own (the caller's marker says
/// how many definitions it shows); `None` when not even its heading fits.
fn fit_outline(file: &FileOutline, room: usize) -> Option<outline::Fitted> {
    let fitted = outline::fit_in(std::slice::from_ref(file), Some(room), None);
    (!fitted.files.is_empty()).then_some(fitted)
}

/// Byte offsets where each line starts.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1)).collect()
}

/// The ranges around the lines that share the prompt's terms, best first: a line is worth
/// the rarity in the file of each prompt term it holds, a range the sum of its lines. Empty
/// without a prompt, or when no line shares its terms.
fn evidence(text: &str, starts: &[usize], prompt: Option<&str>) -> Vec<(LineRange, f64)> {
    let Some(prompt) = prompt else { return Vec::new() };
    let mut wanted: Vec<String> = tokenize::terms(prompt);
    wanted.sort_unstable();
    wanted.dedup();
    if wanted.is_empty() {
        return Vec::new();
    }
    let index: HashMap<&str, usize> =
        wanted.iter().enumerate().map(|(i, t)| (t.as_str(), i)).collect();
    // Per line, the prompt terms it holds; per term, the lines that hold it.
    let mut hits: Vec<(u32, Vec<usize>)> = Vec::new();
    let mut df = vec![0usize; wanted.len()];
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let line = &text[start..end];
        let line = &line[..floor_char(line, MAX_LINE_BYTES)];
        // Matched as it is shown: a hidden character splits no word it does not show.
        let line = ctx_fs::sanitize::sanitize(line).text;
        let mut found: Vec<usize> =
            tokenize::terms(&line).iter().filter_map(|t| index.get(t.as_str()).copied()).collect();
        found.sort_unstable();
        found.dedup();
        if found.is_empty() {
            continue;
        }
        for &t in &found {
            df[t] += 1;
        }
        hits.push((u32::try_from(i + 1).unwrap_or(u32::MAX), found));
    }
    let n = starts.len() as f64;
    let idf: Vec<f64> = df.iter().map(|&d| (1.0 + n / d.max(1) as f64).ln()).collect();
    let last = u32::try_from(starts.len()).unwrap_or(u32::MAX);
    let mut ranges: Vec<(LineRange, f64)> = Vec::new();
    for (line, found) in hits {
        let score: f64 = found.iter().map(|&t| idf[t]).sum();
        let start = line.saturating_sub(CONTEXT_LINES).max(1);
        let end = line.saturating_add(CONTEXT_LINES).min(last);
        match ranges.last_mut() {
            Some((r, s)) if start <= r.end + 1 && end - r.start < MAX_RANGE_LINES => {
                r.end = r.end.max(end);
                *s += score;
            }
            // Past the longest range, the next starts where the last ended.
            Some((r, _)) if start <= r.end => {
                let start = r.end + 1;
                ranges.push((LineRange { start, end: end.max(start) }, score));
            }
            _ => ranges.push((LineRange { start, end }, score)),
        }
    }
    ranges.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.start.cmp(&b.0.start)));
    ranges
}

/// Ranges given best first, within the file's `lines`, ranked in their order; ranges that
/// overlap one ranked before them are left out.
fn given(preferred: &[LineRange], lines: u32) -> Vec<(LineRange, f64)> {
    let mut out: Vec<(LineRange, f64)> = Vec::new();
    for (i, r) in preferred.iter().enumerate().take(MAX_RANGES) {
        let range = LineRange { start: r.start.max(1), end: r.end.min(lines) };
        let taken = |o: &(LineRange, f64)| o.0.start <= range.end && range.start <= o.0.end;
        if range.start <= range.end && !out.iter().any(taken) {
            out.push((range, (MAX_RANGES - i) as f64));
        }
    }
    out
}

/// The largest index at most `max` that is a character boundary of `s`.
fn floor_char(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The ranges taken within `left` tokens, in the order taken: each with its text (headed by
/// its lines) and its tokens. Without evidence, the file's first lines.
fn pick(
    text: &str,
    starts: &[usize],
    lines: u32,
    ranked: &[(LineRange, f64)],
    mut left: usize,
    show: &dyn Fn(&str, u32) -> String,
) -> Vec<(LineRange, String, usize)> {
    let slice = |r: LineRange| {
        let from = starts[(r.start - 1) as usize];
        let to = starts.get(r.end as usize).copied().unwrap_or(text.len());
        &text[from..to]
    };
    let mut out = Vec::new();
    if ranked.is_empty() {
        // No evidence: the first lines, as many as fit.
        if lines == 0 {
            return out;
        }
        let head = format!("[lines 1-{lines}]\n");
        let Some(room) = left.checked_sub(ctx_tokens::count(&head) + 1) else { return out };
        let shown = show(slice(LineRange { start: 1, end: lines }), 1);
        let cut = ctx_tokens::truncate_to_budget(&shown, room);
        let kept = count_lines(cut.text);
        if kept == 0 {
            return out;
        }
        let range = LineRange { start: 1, end: kept.min(lines) };
        let mut piece = format!("[lines 1-{}]\n", range.end);
        piece.push_str(cut.text);
        if !piece.ends_with('\n') {
            piece.push('\n');
        }
        let tokens = ctx_tokens::count(&piece);
        out.push((range, piece, tokens));
        return out;
    }
    for &(range, _) in ranked {
        if out.len() == MAX_RANGES || left == 0 {
            break;
        }
        let mut piece = format!("[lines {}-{}]\n", range.start, range.end);
        piece.push_str(&show(slice(range), range.start));
        if !piece.ends_with('\n') {
            piece.push('\n');
        }
        // One token of slack for each boundary.
        if let Some(tokens) = ctx_tokens::count_at_most(&piece, left.saturating_sub(1)) {
            left -= tokens + 1;
            out.push((range, piece, tokens));
        }
    }
    out
}

/// The lines of a text (a last line without an ending counts).
fn count_lines(text: &str) -> u32 {
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    u32::try_from(ends + usize::from(!text.is_empty() && !text.ends_with('\n'))).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn plain(lines: &str, _first: u32) -> String {
        ctx_fs::sanitize::sanitize(lines).text.into_owned()
    }

    /// 60 helpers of 9 lines, then the one the prompt is about.
    fn pool() -> String {
        let mut text = String::from("//! A pool of workers.\n");
        for i in 0..60 {
            text.push_str(&format!("pub fn helper_{i}(x: u32) -> u32 {{\n"));
            for j in 0..6 {
                text.push_str(&format!("    let v{j} = x + {j} * {i};\n"));
            }
            text.push_str("    x\n}\n");
        }
        text.push_str("pub struct Pool;\nimpl Pool {\n    pub fn shutdown_timeout(&self) -> u32 {\n        42\n    }\n}\n");
        text
    }

    #[test]
    fn the_outline_and_the_lines_the_prompt_names_fit_the_room() {
        let text = pool();
        let r = reduce("src/pool.rs", &text, (Some("fix shutdown_timeout"), &[]), 300, &plain)
            .expect("reduced");
        assert!(r.tokens <= 300 && r.tokens == ctx_tokens::count(&r.text), "{}", r.tokens);
        assert!(r.text.starts_with("src/pool.rs (547 lines)\n"), "{}", r.text);
        assert!(r.text.contains("L544-546 pub fn shutdown_timeout(&self) -> u32 {"), "{}", r.text);
        assert_eq!(r.ranges, vec![LineRange { start: 541, end: 547 }]);
        assert!(r.text.contains("[lines 541-547]\n"), "{}", r.text);
        assert_eq!(r.definitions, 62);
        assert!(r.shown < 62);
        // The same inputs, the same bytes.
        assert_eq!(
            reduce("src/pool.rs", &text, (Some("fix shutdown_timeout"), &[]), 300, &plain),
            Some(r)
        );
    }

    #[test]
    fn without_a_prompt_the_first_lines() {
        let text = pool();
        let r = reduce("src/pool.rs", &text, (None, &[]), 300, &plain).expect("reduced");
        assert!(r.tokens <= 300);
        assert_eq!(r.ranges.len(), 1);
        assert_eq!(r.ranges[0].start, 1);
        assert!(r.text.contains(&format!("[lines 1-{}]\n//! A pool", r.ranges[0].end)));
        // A prompt no line shares is the same as none.
        let none =
            reduce("src/pool.rs", &text, (Some("zebra"), &[]), 300, &plain).expect("reduced");
        assert_eq!(none.ranges, r.ranges);
    }

    #[test]
    fn no_outline_no_reduction() {
        assert_eq!(reduce("notes.txt", "a\nb\n", (None, &[]), 300, &plain), None);
        assert_eq!(reduce("a.rs", "// only a comment\n", (None, &[]), 300, &plain), None);
        // Not even the heading fits.
        assert_eq!(reduce("src/pool.rs", &pool(), (None, &[]), 3, &plain), None);
    }

    #[test]
    fn the_lines_are_shown_as_the_caller_shows_them() {
        let text = pool();
        let numbered = |lines: &str, first: u32| {
            lines.lines().enumerate().map(|(i, l)| format!("{}: {l}\n", first + i as u32)).collect()
        };
        let r =
            reduce("src/pool.rs", &text, (Some("shutdown_timeout"), &[]), 400, &numbered).unwrap();
        assert!(r.text.contains("544:     pub fn shutdown_timeout"), "{}", r.text);
    }

    #[test]
    fn attack_one_line_of_fifty_megabytes() {
        let text = format!("fn f() {{}}\nconst S: &str = \"{}\";\n", "ab ".repeat((50 << 20) / 3));
        let r = reduce("a.rs", &text, (Some("ab const"), &[]), 500, &plain).expect("reduced");
        assert!(r.tokens <= 500, "{}", r.tokens);
        assert!(r.text.len() < 10_000);
    }

    #[test]
    fn attack_a_hundred_thousand_definitions() {
        let mut text: String = (0..50_000).map(|i| format!("fn function_{i}() {{}}\n")).collect();
        text.push_str("fn retry_timeout() {}\n");
        text.extend((0..50_000).map(|i| format!("fn function_{i}() {{}}\n")));
        let r =
            reduce("a.rs", &text, (Some("the function retry_timeout"), &[]), 2000, &plain).unwrap();
        assert!(r.tokens <= 2000);
        assert_eq!(r.definitions, 100_001);
        assert!(r.ranges.iter().any(|l| l.start <= 50_001 && 50_001 <= l.end), "{:?}", r.ranges);
        assert!(r.ranges.len() <= MAX_RANGES);
    }

    #[test]
    fn attack_hidden_characters_in_a_signature_and_a_range() {
        let text = "fn admin\u{202E}() {}\nfn f\u{1b}[31m() { let evil = 1; }\n";
        let r = reduce("a.rs", text, (Some("evil"), &[]), 200, &plain).expect("reduced");
        assert!(!r.text.contains('\u{202E}') && !r.text.contains('\u{1b}'), "{}", r.text);
        assert!(r.text.contains("\\u{202E}"), "{}", r.text);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_file_reduces_within_its_room(
            text in "(fn [a-c]{1,3}\\(\\) \\{\n|    let [a-c] = [0-9];\n|\\}\n|// [a-c ]{0,20}\n){0,80}",
            prompt in proptest::option::of("[a-c ]{0,8}"),
            room in 1usize..400,
        ) {
            if let Some(r) = reduce("a.rs", &text, (prompt.as_deref(), &[]), room, &plain) {
                prop_assert!(r.tokens <= room);
                prop_assert_eq!(r.tokens, ctx_tokens::count(&r.text));
                for w in r.ranges.windows(2) {
                    prop_assert!(w[0].end < w[1].start);
                }
            }
        }
    }
}

#[cfg(test)]
mod preferred_tests {
    use super::*;

    #[test]
    fn ranges_given_are_kept_first_in_their_order() {
        let text: String = (0..300).map(|i| format!("fn f{i}() {{ let x = {i}; }}\n")).collect();
        let plain = |lines: &str, _: u32| lines.to_owned();
        let given = [
            LineRange { start: 200, end: 204 },
            LineRange { start: 10, end: 12 },
            LineRange { start: 201, end: 220 },
            LineRange { start: 299, end: 900 },
        ];
        let r = reduce("a.rs", &text, (Some("f5"), &given), 400, &plain).expect("reduced");
        assert!(r.tokens <= 400);
        // The overlapping one is left out, the one past the end clamped; in line order.
        assert_eq!(
            r.ranges,
            vec![
                LineRange { start: 10, end: 12 },
                LineRange { start: 200, end: 204 },
                LineRange { start: 299, end: 300 }
            ]
        );
        assert!(r.text.contains("[lines 200-204]\nfn f199() { let x = 199; }\n"), "{}", r.text);
        // A small room keeps the best first.
        let r = reduce("a.rs", &text, (None, &given), 120, &plain).expect("reduced");
        assert_eq!(r.ranges.first(), Some(&LineRange { start: 200, end: 204 }), "{}", r.text);
    }
}
