//! Line selection over a file's text: ranges, anchors and heading sections, the cut of
//! unranged files and line numbers (assembly.md §7, "Line ranges and whole files").
//!
//! A line is a run of text ended by `\n` (its ending, `\n` or `\r\n`, belongs to it) or by
//! the end of the text; an empty text has no lines and `a\n` has one.
//! A whole file is inserted as it is; a selection inserts the selected lines, each with its
//! own line ending except the last, so `2:3` of `1\n2\n3\n4\n` is `2\n3`.

use std::borrow::Cow;

use ctx_syntax::{LineEnd, Selector};

use crate::{Error, ErrorKind};

/// The default number of lines after which an unranged file is cut.
pub const DEFAULT_MAX_LINES: usize = 2000;

pub use crate::selection::{LineRange, Selection};

/// Applies a selector to a file's text.
///
/// `markdown` says whether the file is Markdown ([`crate::is_markdown`]): there a
/// [`Selector::Fragment`] names a heading section first and an anchor second; elsewhere it is
/// an anchor.
///
/// # Errors
///
/// `E_RANGE` errors for a range that starts at 0, ends before it starts or starts past the
/// last line, and for an anchor or heading that is not there.
pub fn select<'a>(
    text: &'a str,
    selector: &Selector<'_>,
    markdown: bool,
) -> Result<Selection<'a>, Error> {
    match *selector {
        Selector::Lines { start, end } => lines(text, start, end),
        Selector::Anchor(name) => anchor(text, name)
            .ok_or_else(|| Error::new(ErrorKind::NoAnchor { name: name.into(), headings: false })),
        Selector::Fragment(name) => {
            let found = if markdown { section(text, name) } else { None };
            found.or_else(|| anchor(text, name)).ok_or_else(|| {
                Error::new(ErrorKind::NoAnchor { name: name.into(), headings: markdown })
            })
        }
        Selector::Book(part) => Ok(crate::book::select(text, &part)),
    }
}

/// Selects lines `start..=end`, 1-based; the end is clamped to the last line.
///
/// # Errors
///
/// `E_RANGE` when `start` is 0, when `end` comes before `start`, or when `start` is past the
/// last line.
pub fn lines(text: &str, start: u32, end: LineEnd) -> Result<Selection<'_>, Error> {
    if start == 0 {
        return Err(Error::new(ErrorKind::ZeroLine));
    }
    if let LineEnd::Line(end) = end
        && end < start
    {
        return Err(Error::new(ErrorKind::Reversed { start, end }));
    }
    let mut from = None;
    let mut taken = 0u32;
    let mut to = text.len();
    for (no, (line_start, line_end)) in line_spans(text).enumerate() {
        let no = u32::try_from(no + 1).unwrap_or(u32::MAX);
        if no == start {
            from = Some(line_start);
        }
        if no >= start {
            taken = no;
            to = line_end;
            if end == LineEnd::Line(no) {
                break;
            }
        }
    }
    let Some(from) = from else {
        return Err(Error::new(ErrorKind::PastEnd { start, lines: count_lines(text) }));
    };
    Ok(Selection {
        text: Cow::Borrowed(trim_line_end(&text[from..to])),
        lines: Some(LineRange { start, end: taken }),
        skipped: Vec::new(),
    })
}

/// Byte spans of the lines of `text`, each including its line ending.
fn line_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= text.len() {
            return None;
        }
        let start = pos;
        pos = match text[start..].find('\n') {
            Some(i) => start + i + 1,
            None => text.len(),
        };
        Some((start, pos))
    })
}

/// Number of lines of a text: `""` has 0, `"a"` and `"a\n"` have 1.
pub fn count_lines(text: &str) -> u32 {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    let n = newlines + usize::from(!text.is_empty() && !text.ends_with('\n'));
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Removes one final `\n` or `\r\n`.
fn trim_line_end(s: &str) -> &str {
    match s.strip_suffix('\n') {
        Some(s) => s.strip_suffix('\r').unwrap_or(s),
        None => s,
    }
}

/// What an `ANCHOR:` or `ANCHOR_END:` marker on a line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker<'a> {
    Start(&'a str),
    End(&'a str),
}

/// Finds mdBook anchor markers on a line: `ANCHOR: name` or `ANCHOR_END: name` anywhere in it
/// (so `// ANCHOR: x` and `<!-- ANCHOR: x -->` both count).
fn markers(line: &str) -> impl Iterator<Item = Marker<'_>> {
    let mut rest = line;
    std::iter::from_fn(move || {
        loop {
            let i = rest.find("ANCHOR")?;
            let after = &rest[i + "ANCHOR".len()..];
            let (end, after) = if let Some(a) = after.strip_prefix(':') {
                (false, a)
            } else if let Some(a) = after.strip_prefix("_END:") {
                (true, a)
            } else {
                rest = after;
                continue;
            };
            let after = after.trim_start_matches([' ', '\t']);
            let len = after
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(after.len());
            rest = &after[len..];
            if len == 0 {
                continue;
            }
            let name = &after[..len];
            return Some(if end { Marker::End(name) } else { Marker::Start(name) });
        }
    })
}

/// Selects the mdBook-style region between `ANCHOR: name` and `ANCHOR_END: name`, without
/// the marker lines and without marker lines of other anchors inside it. An anchor that is
/// never closed runs to the end of the file, as in mdBook.
pub fn anchor<'a>(text: &'a str, name: &str) -> Option<Selection<'a>> {
    let mut spans = line_spans(text).enumerate();
    spans.by_ref().find(|&(_, (s, e))| markers(&text[s..e]).any(|m| m == Marker::Start(name)))?;
    let mut parts: Vec<(usize, usize, u32)> = Vec::new();
    for (i, (start, end)) in spans {
        let line = &text[start..end];
        let mut is_marker = false;
        let mut closes = false;
        for m in markers(line) {
            is_marker = true;
            closes |= m == Marker::End(name);
        }
        if closes {
            break;
        }
        if !is_marker {
            parts.push((start, end, u32::try_from(i + 1).unwrap_or(u32::MAX)));
        }
    }
    Some(join_parts(text, &parts))
}

/// Joins selected line spans: borrowed when they are contiguous.
fn join_parts<'a>(text: &'a str, parts: &[(usize, usize, u32)]) -> Selection<'a> {
    let (Some(&(first, _, first_no)), Some(&(_, last, last_no))) = (parts.first(), parts.last())
    else {
        return Selection { text: Cow::Borrowed(""), lines: None, skipped: Vec::new() };
    };
    let contiguous = parts.windows(2).all(|w| w[0].1 == w[1].0);
    let text = if contiguous {
        Cow::Borrowed(trim_line_end(&text[first..last]))
    } else {
        let mut out = String::new();
        for &(s, e, _) in parts {
            out.push_str(&text[s..e]);
        }
        let len = trim_line_end(&out).len();
        out.truncate(len);
        Cow::Owned(out)
    };
    // The lines of the range that are not among the parts (in order, as the parts are).
    let mut skipped = Vec::new();
    for pair in parts.windows(2) {
        skipped.extend(pair[0].2 + 1..pair[1].2);
    }
    Selection { text, lines: Some(LineRange { start: first_no, end: last_no }), skipped }
}

/// An ATX heading: its level and its text without the `#` marks.
fn atx_heading(line: &str) -> Option<(usize, &str)> {
    let line = line.trim_end_matches(['\n', '\r']);
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &rest[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut title = rest.trim_matches([' ', '\t']);
    // An optional closing sequence of `#`s, preceded by a space, is not part of the title.
    let without = title.trim_end_matches('#');
    if without.is_empty() {
        title = "";
    } else if without.len() < title.len() && without.ends_with([' ', '\t']) {
        title = without.trim_end_matches([' ', '\t']);
    }
    Some((level, title))
}

/// The level of a setext underline (`===` is 1, `---` is 2), at most three spaces in.
fn setext_level(line: &str) -> Option<usize> {
    let line = line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']);
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    if indent > 3 || rest.is_empty() {
        return None;
    }
    if rest.bytes().all(|b| b == b'=') {
        Some(1)
    } else if rest.bytes().all(|b| b == b'-') {
        Some(2)
    } else {
        None
    }
}

/// The text of a line that may be a setext heading's: not blank, not indented code, and not
/// a list item, block quote, ATX heading or thematic break.
fn paragraph_line(line: &str) -> Option<&str> {
    let text = line.trim_end_matches(['\n', '\r']);
    let indent = text.len() - text.trim_start_matches(' ').len();
    let rest = text[indent..].trim_end();
    if indent > 3 || rest.is_empty() || setext_level(line).is_some() {
        return None;
    }
    let first = rest.as_bytes()[0];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let ordered = digits > 0 && matches!(rest.as_bytes().get(digits), Some(b'.' | b')'));
    let marker = matches!(first, b'-' | b'*' | b'+')
        && matches!(rest.as_bytes().get(1), None | Some(b' ' | b'\t'));
    if marker || ordered || first == b'>' || first == b'#' {
        return None;
    }
    Some(rest)
}

/// How many lines the front matter takes at the start of `text` (its `---` lines included),
/// or 0 without one.
fn front_matter_lines(text: &str) -> usize {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return 0;
    }
    lines.position(|l| matches!(l.trim_end(), "---" | "...")).map_or(0, |closing| closing + 2)
}

/// The GitHub slug of a heading: lower case, punctuation removed, spaces as `-`.
pub fn slug(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut chars = title.chars().peekable();
    while let Some(c) = chars.next() {
        // Drop the target of inline links, keep their text: `[text](url)` is `text`.
        if c == ']' && chars.peek() == Some(&'(') {
            for c in chars.by_ref() {
                if c == ')' {
                    break;
                }
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' || c == '-' {
            out.extend(c.to_lowercase());
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

/// Selects the Markdown section whose heading slug is `name`: from the heading line up to
/// the next heading of the same or a higher level. ATX (`## Title`) and setext (`Title` over
/// `===` or `---`) headings count; headings in fenced code blocks and in the front matter do
/// not; repeated slugs are told apart as GitHub does (`intro`, `intro-1`, …).
pub fn section<'a>(text: &'a str, name: &str) -> Option<Selection<'a>> {
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let mut found: Option<(usize, usize, u32)> = None;
    let mut end = text.len();
    let mut last_no = 0u32;
    let front_matter_end = front_matter_lines(text);
    // The fenced code blocks after the front matter, as the scanner reads them (in block
    // quotes and list items too), each with the lines it touches.
    let body = line_spans(text).nth(front_matter_end).map_or(text.len(), |(start, _)| start);
    let mut fences =
        ctx_syntax::fenced_blocks(&text[body..]).into_iter().map(|f| f.start + body..f.end + body);
    let mut fence = fences.next();
    // The line before, when it could be the text of a setext heading: start, number, text.
    let mut paragraph: Option<(usize, u32, &str)> = None;
    for (i, (start, line_end)) in line_spans(text).enumerate() {
        let no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let line = &text[start..line_end];
        if i < front_matter_end {
            last_no = no;
            continue;
        }
        while fence.as_ref().is_some_and(|f| f.end < start) {
            fence = fences.next();
        }
        if fence.as_ref().is_some_and(|f| f.start < line_end) {
            paragraph = None;
            last_no = no;
            continue;
        }
        let heading = match (atx_heading(line), paragraph.take(), setext_level(line)) {
            (Some((level, title)), _, _) => Some((level, title, start, no)),
            (None, Some((p_start, p_no, p_text)), Some(level)) => {
                Some((level, p_text.trim(), p_start, p_no))
            }
            _ => {
                paragraph = paragraph_line(line).map(|text| (start, no, text));
                None
            }
        };
        if let Some((level, title, h_start, h_no)) = heading {
            if let Some((_, found_level, _)) = found {
                if level <= found_level {
                    // A setext heading begins on the line before its underline.
                    end = h_start;
                    last_no = h_no.saturating_sub(1);
                    break;
                }
            } else {
                let base = slug(title);
                let count = seen.entry(base.clone()).or_insert(0);
                let unique = if *count == 0 { base } else { format!("{base}-{count}") };
                *count += 1;
                if unique == name {
                    found = Some((h_start, level, h_no));
                }
            }
        }
        last_no = no;
    }
    let (start, _, first_no) = found?;
    Some(Selection {
        text: Cow::Borrowed(trim_line_end(&text[start..end])),
        lines: Some(LineRange { start: first_no, end: last_no.max(first_no) }),
        skipped: Vec::new(),
    })
}

/// A text cut at a number of lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut<'a> {
    /// The lines kept, with their line endings.
    pub text: &'a str,
    /// How many lines were cut off; 0 when the text was short enough.
    pub cut: usize,
}

impl Cut<'_> {
    /// The marker that replaces the lines cut off, `[... truncated N lines ...]`, or `None`
    /// when nothing was cut.
    pub fn marker(&self) -> Option<String> {
        (self.cut > 0).then(|| truncation_marker(self.cut))
    }
}

/// The marker for `n` lines cut off an unranged file.
pub fn truncation_marker(n: usize) -> String {
    format!("[... truncated {n} lines ...]")
}

/// Keeps the first `max_lines` lines of a text (0 = no limit), with their line endings.
pub fn cut(text: &str, max_lines: usize) -> Cut<'_> {
    if max_lines == 0 {
        return Cut { text, cut: 0 };
    }
    let mut spans = line_spans(text);
    let Some((_, keep_end)) = spans.by_ref().nth(max_lines - 1) else {
        return Cut { text, cut: 0 };
    };
    let rest = &text[keep_end..];
    Cut { text: &text[..keep_end], cut: count_lines(rest) as usize }
}

/// Prefixes every line with its number, `N: line`, counting from `first` (the number of the
/// first line in the original file). Line endings are kept.
pub fn number_lines(text: &str, first: u32) -> String {
    number_lines_over(text, first, &[])
}

/// [`number_lines`] of a selection whose lines `skipped` (in order) were left out of `text`:
/// each line keeps its own number in its file.
pub fn number_lines_over(text: &str, first: u32, skipped: &[u32]) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8 + 8);
    let mut no = first;
    let mut gaps = skipped.iter().peekable();
    for (s, e) in line_spans(text) {
        while gaps.next_if(|&&gap| gap <= no).is_some() {
            no = no.saturating_add(1);
        }
        out.push_str(&no.to_string());
        out.push_str(": ");
        out.push_str(&text[s..e]);
        no = no.saturating_add(1);
    }
    out
}

#[cfg(test)]
mod tests {
    use ctx_syntax::Code;
    use proptest::prelude::*;

    use super::*;

    fn range(text: &str, start: u32, end: Option<u32>) -> Result<(String, u32, u32), String> {
        let end = end.map_or(LineEnd::Eof, LineEnd::Line);
        match select(text, &Selector::Lines { start, end }, false) {
            Ok(s) => {
                let l = s.lines.unwrap();
                Ok((s.text.into_owned(), l.start, l.end))
            }
            Err(e) => {
                assert_eq!(e.code(), Code::Range);
                Err(e.to_string())
            }
        }
    }

    #[test]
    fn ranges() {
        let t = "1\n2\n3\n4\n";
        assert_eq!(range(t, 2, Some(3)), Ok(("2\n3".into(), 2, 3)));
        assert_eq!(range(t, 2, Some(2)), Ok(("2".into(), 2, 2)));
        assert_eq!(range(t, 3, None), Ok(("3\n4".into(), 3, 4)));
        assert_eq!(range(t, 3, Some(99)), Ok(("3\n4".into(), 3, 4)));
        assert_eq!(range(t, 1, None), Ok(("1\n2\n3\n4".into(), 1, 4)));
        assert_eq!(range("a\r\nb\r\nc", 1, Some(2)), Ok(("a\r\nb".into(), 1, 2)));
        assert_eq!(range("a\r\nb\r\nc", 3, Some(3)), Ok(("c".into(), 3, 3)));
        assert_eq!(range("a\n\n", 2, None), Ok(("".into(), 2, 2)));
        assert_eq!(range(t, 0, Some(2)), Err("line numbers start at 1, not 0".into()));
        assert_eq!(range(t, 3, Some(2)), Err("line range 3-2 ends before it starts".into()));
        assert_eq!(
            range(t, 5, None),
            Err("line range starts at line 5 but the file has 4 lines".into())
        );
        assert_eq!(
            range("", 1, None),
            Err("line range starts at line 1 but the file has 0 lines".into())
        );
    }

    #[test]
    fn ranges_borrow() {
        let t = "1\n2\n3\n";
        let s = lines(t, 1, LineEnd::Line(2)).unwrap();
        assert!(matches!(s.text, Cow::Borrowed(_)));
    }

    const ANCHORS: &str = "\
fn main() {
    // ANCHOR: all
    let a = 1;
    // ANCHOR: inner
    let b = 2;
    // ANCHOR_END: inner
    let c = 3;
    // ANCHOR_END: all
}
<!-- ANCHOR:open -->
tail
";

    #[test]
    fn anchors() {
        let s = anchor(ANCHORS, "inner").unwrap();
        assert_eq!(s.text, "    let b = 2;");
        assert!(matches!(s.text, Cow::Borrowed(_)));
        assert_eq!(s.lines, Some(LineRange { start: 5, end: 5 }));

        let s = anchor(ANCHORS, "all").unwrap();
        assert_eq!(s.text, "    let a = 1;\n    let b = 2;\n    let c = 3;");
        assert!(matches!(s.text, Cow::Owned(_)));
        assert_eq!(s.lines, Some(LineRange { start: 3, end: 7 }));

        // Unclosed: to the end of the file.
        assert_eq!(anchor(ANCHORS, "open").unwrap().text, "tail");
        assert_eq!(anchor(ANCHORS, "in"), None);
        assert_eq!(anchor(ANCHORS, "missing"), None);

        let empty = anchor("ANCHOR: e\nANCHOR_END: e\n", "e").unwrap();
        assert_eq!(empty, Selection { text: Cow::Borrowed(""), lines: None, skipped: Vec::new() });

        let err = select(ANCHORS, &Selector::Anchor("nope"), false).unwrap_err();
        assert_eq!(err.code(), Code::Range);
        assert_eq!(err.to_string(), "no anchor named \"nope\" (expected an `ANCHOR: nope` line)");
        // A fragment on a non-Markdown file is an anchor.
        let s = select(ANCHORS, &Selector::Fragment("inner"), false).unwrap();
        assert_eq!(s.text, "    let b = 2;");
    }

    #[test]
    fn marker_parsing() {
        let m: Vec<_> = markers("x ANCHOR: a-b_1 ANCHOR_END:c ANCHORX: d ANCHOR: ").collect();
        assert_eq!(m, [Marker::Start("a-b_1"), Marker::End("c")]);
    }

    const DOC: &str = "\
# Title

intro

## Install Guide

steps

```sh
# not a heading
```

### Details

more

## Usage

use it

## Install Guide

again
";

    #[test]
    fn sections() {
        let s = section(DOC, "install-guide").unwrap();
        assert_eq!(
            s.text,
            "## Install Guide\n\nsteps\n\n```sh\n# not a heading\n```\n\n### Details\n\nmore\n"
        );
        assert_eq!(s.lines, Some(LineRange { start: 5, end: 16 }));
        assert_eq!(section(DOC, "details").unwrap().text, "### Details\n\nmore\n");
        assert_eq!(section(DOC, "install-guide-1").unwrap().text, "## Install Guide\n\nagain");
        assert_eq!(section(DOC, "title").unwrap().text, DOC.trim_end_matches('\n'));
        assert_eq!(section(DOC, "not-a-heading"), None);

        let err = select(DOC, &Selector::Fragment("nope"), true).unwrap_err();
        assert_eq!(err.to_string(), "no heading or anchor named \"nope\"");
        // A fragment on Markdown falls back to anchors.
        let s = select(
            "a\n<!-- ANCHOR: x -->\nb\n<!-- ANCHOR_END: x -->\n",
            &Selector::Fragment("x"),
            true,
        );
        assert_eq!(s.unwrap().text, "b");
    }

    /// A fence in a list item or a block quote hides its lines from the headings, and ends with
    /// its container, as the scanner reads it.
    #[test]
    fn fences_in_list_items_and_quotes_hold_no_heading() {
        let text = "# Intro\n- ```sh\n  make\n  # not a heading\n  ```\n\n# Setup\nstep\n";
        assert_eq!(section(text, "setup").unwrap().text, "# Setup\nstep");
        assert_eq!(section(text, "not-a-heading"), None);
        let text = "> ```\n> # quoted code\n# Real\nr\n";
        assert_eq!(section(text, "real").unwrap().text, "# Real\nr");
        assert_eq!(section(text, "quoted-code"), None);
    }

    #[test]
    fn setext_headings_and_front_matter() {
        let text = "---\n# yaml comment\nk: v\n---\nTop\n===\nt\nSub\n---\ns\n## Closed ##\nc\nOther\n=====\no\n";
        let sub = section(text, "sub").unwrap();
        assert_eq!(sub.text, "Sub\n---\ns", "up to the next heading of its level");
        assert_eq!(sub.lines, Some(LineRange { start: 8, end: 10 }));
        assert_eq!(section(text, "closed").unwrap().text, "## Closed ##\nc");
        assert_eq!(section(text, "other").unwrap().text, "Other\n=====\no");
        assert!(section(text, "yaml-comment").is_none(), "front matter holds no headings");
        // A list item or a blank line over `---` is no heading: a thematic break.
        assert!(section("- item\n---\n", "item").is_none());
        assert!(section("a\n\n---\n", "a").is_none());
    }

    #[test]
    fn slugs() {
        let cases = [
            ("Install Guide", "install-guide"),
            ("What's new?", "whats-new"),
            ("API: `select()` & friends", "api-select--friends"),
            ("[Link text](http://x.y/z) here", "link-text-here"),
            ("Ünïcödé Straße", "ünïcödé-straße"),
            ("snake_case and-dash", "snake_case-and-dash"),
            ("**Bold** title", "bold-title"),
        ];
        for (title, expect) in cases {
            assert_eq!(slug(title), expect, "{title}");
        }
    }

    #[test]
    fn headings() {
        assert_eq!(atx_heading("## A ##\n"), Some((2, "A")));
        assert_eq!(atx_heading("#\n"), Some((1, "")));
        assert_eq!(atx_heading("   ### x"), Some((3, "x")));
        assert_eq!(atx_heading("    # code"), None);
        assert_eq!(atx_heading("#hashtag"), None);
        assert_eq!(atx_heading("####### seven"), None);
        assert_eq!(atx_heading("# C#"), Some((1, "C#")));
    }

    #[test]
    fn cuts() {
        let t = "1\n2\n3\n4\n5";
        assert_eq!(cut(t, 2), Cut { text: "1\n2\n", cut: 3 });
        assert_eq!(cut(t, 2).marker().unwrap(), "[... truncated 3 lines ...]");
        assert_eq!(cut(t, 5), Cut { text: t, cut: 0 });
        assert_eq!(cut(t, 0), Cut { text: t, cut: 0 });
        assert_eq!(cut(t, 5).marker(), None);
        assert_eq!(cut("a\nb\n", 1), Cut { text: "a\n", cut: 1 });
    }

    #[test]
    fn numbering() {
        assert_eq!(number_lines("a\nb\r\nc", 9), "9: a\n10: b\r\n11: c");
        assert_eq!(number_lines("", 1), "");
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
    }

    proptest! {
        /// A valid range equals the naive model: split into lines, take, join.
        #[test]
        fn range_matches_model(text in "[ab\r\n]{0,40}", start in 1u32..12, len in 0u32..12) {
            let model: Vec<&str> = text.split_inclusive('\n').collect();
            let end = start + len;
            let got = lines(&text, start, LineEnd::Line(end));
            if start as usize > model.len() {
                prop_assert!(got.is_err());
            } else {
                let last = (end as usize).min(model.len());
                let joined: String = model[start as usize - 1..last].concat();
                let s = got.unwrap();
                prop_assert_eq!(s.text.as_ref(), trim_line_end(&joined));
                prop_assert_eq!(s.lines, Some(LineRange { start, end: last as u32 }));
            }
        }

        /// The cut keeps a prefix and counts what it dropped.
        #[test]
        fn cut_model(text in "[ab\n]{0,40}", max in 0usize..10) {
            let c = cut(&text, max);
            prop_assert!(text.starts_with(c.text));
            prop_assert_eq!(count_lines(c.text) as usize + c.cut, count_lines(&text) as usize);
            if max > 0 {
                prop_assert!(count_lines(c.text) as usize <= max);
            }
        }
    }
}
