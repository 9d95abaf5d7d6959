//! What each agent counts as code in a Markdown rule file (where an `@` import is not an
//! import), and Claude Code's removal of block-level HTML comments.
//!
//! The agents disagree (docs/agents.md, "Imports"): Claude Code lexes CommonMark (fenced
//! blocks of backticks or tildes, indented blocks, code spans, block-level HTML comments);
//! Gemini CLI skips backtick runs only, with a regular expression; Copilot CLI was seen to
//! skip code spans and both kinds of fences, and to follow imports in indented blocks and in
//! comments.

/// What kind of code a region is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CodeKind {
    /// A code span (`` `@x` ``).
    Span,
    /// A fenced block.
    Fence,
    /// An indented block.
    Indented,
    /// A block-level HTML comment.
    Comment,
}

impl CodeKind {
    /// How the kind is named in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            CodeKind::Span => "a code span",
            CodeKind::Fence => "a fenced code block",
            CodeKind::Indented => "an indented code block",
            CodeKind::Comment => "an HTML comment",
        }
    }
}

/// Whose reading of code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// CommonMark, as Claude Code's `marked` lexer reads it.
    Claude,
    /// Gemini CLI's backtick regular expression.
    Gemini,
    /// Copilot CLI: code spans and fences.
    Copilot,
}

/// Byte ranges of code in `text`, in order, as `flavor` tells them.
pub(crate) fn code_regions(text: &str, flavor: Flavor) -> Vec<(usize, usize, CodeKind)> {
    match flavor {
        Flavor::Gemini => backtick_runs(text),
        Flavor::Claude => blocks(text, true, true),
        Flavor::Copilot => blocks(text, false, false),
    }
}

/// The kind of code `at` lies in, if any.
pub(crate) fn in_code(regions: &[(usize, usize, CodeKind)], at: usize) -> Option<CodeKind> {
    let i = regions.partition_point(|r| r.1 <= at);
    regions.get(i).filter(|r| r.0 <= at).map(|r| r.2)
}

/// Gemini's `` /(`+)([\s\S]*?)\1/g ``: a run of backticks, then the nearest later run of as
/// many, the opening run shortened (as the expression backtracks) when no closing run of its
/// length follows.
fn backtick_runs(text: &str) -> Vec<(usize, usize, CodeKind)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let mut matched = None;
        for len in (1..=run).rev() {
            let needle = &bytes[i..i + len];
            if let Some(pos) = find(&bytes[i + len..], needle) {
                matched = Some(i + len + pos + len);
                break;
            }
        }
        match matched {
            Some(end) => {
                let kind = if run >= 3 { CodeKind::Fence } else { CodeKind::Span };
                out.push((i, end, kind));
                i = end;
            }
            None => i += run,
        }
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// One line of a text: its byte range without the line end, and where the next starts.
fn lines(text: &str) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let content_end =
            if end > start && text.as_bytes()[end - 1] == b'\r' { end - 1 } else { end };
        out.push((start, content_end, (end + 1).min(text.len())));
        start = end + 1;
    }
    out
}

/// The indentation of a line in columns (a tab to the next multiple of four), and where its
/// content starts.
fn indent(line: &str) -> (usize, usize) {
    let mut cols = 0;
    for (i, b) in line.bytes().enumerate() {
        match b {
            b' ' => cols += 1,
            b'\t' => cols += 4 - cols % 4,
            _ => return (cols, i),
        }
    }
    (cols, line.len())
}

/// The fence a line opens: its character and length.
fn fence(line: &str) -> Option<(u8, usize)> {
    let (cols, at) = indent(line);
    if cols > 3 {
        return None;
    }
    let rest = &line.as_bytes()[at..];
    let c = *rest.first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.iter().take_while(|&&b| b == c).count();
    // A backtick fence's info string holds no backtick.
    (n >= 3 && !(c == b'`' && rest[n..].contains(&b'`'))).then_some((c, n))
}

/// Fenced blocks, indented blocks (with `indented`), block-level comments (with `comments`),
/// then code spans in what is left, as CommonMark reads them line by line.
fn blocks(text: &str, comments: bool, indented: bool) -> Vec<(usize, usize, CodeKind)> {
    let mut out = Vec::new();
    let all = lines(text);
    let mut i = 0;
    // Whether the previous line is paragraph text (an indented line then continues it).
    let mut paragraph = false;
    let mut prose_start: Option<usize> = None;
    let flush = |out: &mut Vec<_>, from: Option<usize>, to: usize| {
        if let Some(from) = from {
            spans(text, from, to, out);
        }
    };
    while i < all.len() {
        let (start, end, _) = all[i];
        let line = &text[start..end];
        if let Some((c, n)) = fence(line) {
            flush(&mut out, prose_start.take(), start);
            let mut j = i + 1;
            while j < all.len() {
                let l = &text[all[j].0..all[j].1];
                if fence(l).is_some_and(|(c2, n2)| c2 == c && n2 >= n)
                    && l.trim_start().trim_start_matches(c as char).trim().is_empty()
                {
                    break;
                }
                j += 1;
            }
            let close = all.get(j).map_or(text.len(), |l| l.1);
            out.push((start, close, CodeKind::Fence));
            i = j + 1;
            paragraph = false;
            continue;
        }
        let (cols, at) = indent(line);
        let blank = at == line.len();
        if comments && cols <= 3 && line[at..].starts_with("<!--") {
            flush(&mut out, prose_start.take(), start);
            let from = start + at;
            let end_at = text[from..].find("-->").map_or(text.len(), |p| from + p + 3);
            out.push((from, end_at, CodeKind::Comment));
            // The block ends at the line holding `-->`.
            let j = all.iter().position(|l| l.1 >= end_at).unwrap_or(all.len());
            i = j.max(i) + 1;
            paragraph = false;
            continue;
        }
        if indented && !blank && cols >= 4 && !paragraph {
            flush(&mut out, prose_start.take(), start);
            out.push((start, end, CodeKind::Indented));
            i += 1;
            continue;
        }
        if blank {
            flush(&mut out, prose_start.take(), start);
            paragraph = false;
        } else {
            prose_start.get_or_insert(start);
            paragraph = !line[at..].starts_with('#');
        }
        i += 1;
    }
    flush(&mut out, prose_start.take(), text.len());
    out.sort_by_key(|r| r.0);
    out
}

/// Code spans in the prose `text[from..to]`: a run of backticks closed by the next run of the
/// same length.
fn spans(text: &str, from: usize, to: usize, out: &mut Vec<(usize, usize, CodeKind)>) {
    let bytes = &text.as_bytes()[..to];
    let mut i = from;
    while i < to {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let mut j = i + run;
        let mut closed = None;
        while j < to {
            if bytes[j] == b'`' {
                let n = bytes[j..].iter().take_while(|&&b| b == b'`').count();
                if n == run {
                    closed = Some(j + n);
                    break;
                }
                j += n;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => {
                out.push((i, end, CodeKind::Span));
                i = end;
            }
            None => i += run,
        }
    }
}

/// Claude Code's `stripHtmlComments`: block-level HTML comments (a line starting, after at
/// most three spaces, with `<!--`, up to the line holding `-->` and the blank lines after it)
/// are removed, keeping what stands after `-->` on that line when it is more than white
/// space; comments inside code, inline comments and unclosed ones stay. Like `marked`'s lexer
/// the result has LF line ends; a text without `<!--` is returned as it is.
pub(crate) fn strip_html_comments(text: &str) -> String {
    if !text.contains("<!--") {
        return text.to_owned();
    }
    let text = crate::read::lf(text);
    let regions = blocks(&text, true, true);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, kind) in regions {
        if kind != CodeKind::Comment || end > text.len() || !text[start..end].ends_with("-->") {
            continue;
        }
        // The token runs from the line's start to the end of the `-->` line and the
        // newlines after it.
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        let mut token_end = line_end;
        while token_end < text.len() && text.as_bytes()[token_end] == b'\n' {
            token_end += 1;
        }
        let raw = &text[line_start..token_end];
        let residue = remove_comments(raw);
        out.push_str(&text[at..line_start]);
        if !residue.trim().is_empty() {
            out.push_str(&residue);
        }
        at = token_end;
    }
    out.push_str(&text[at..]);
    out
}

/// `raw` with every `<!-- … -->` span taken out.
fn remove_comments(raw: &str) -> String {
    let mut out = String::new();
    let mut rest = raw;
    while let Some(open) = rest.find("<!--") {
        let Some(close) = rest[open + 4..].find("-->") else { break };
        out.push_str(&rest[..open]);
        rest = &rest[open + 4 + close + 3..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str, flavor: Flavor) -> Vec<(&str, CodeKind)> {
        code_regions(text, flavor).into_iter().map(|(s, e, k)| (&text[s..e], k)).collect()
    }

    #[test]
    fn claude_reads_commonmark() {
        let text = "a `@x` b\n```\n@f\n```\n~~~\n@t\n~~~\n    @i\n<!-- @c -->\npara\n    cont\n";
        let found = kinds(text, Flavor::Claude);
        assert_eq!(
            found,
            vec![
                ("`@x`", CodeKind::Span),
                ("```\n@f\n```", CodeKind::Fence),
                ("~~~\n@t\n~~~", CodeKind::Fence),
                ("    @i", CodeKind::Indented),
                ("<!-- @c -->", CodeKind::Comment),
            ]
        );
    }

    #[test]
    fn gemini_reads_backticks_only() {
        let text = "`@x` ```\n@f\n``` ~~~\n@t\n~~~\n    @i\n";
        let found: Vec<&str> = kinds(text, Flavor::Gemini).into_iter().map(|f| f.0).collect();
        assert_eq!(found, vec!["`@x`", "```\n@f\n```"]);
        // As the expression backtracks: an opening run with no closing run of its length is
        // shortened, and the shortened run may close on its own next backtick.
        assert_eq!(
            kinds("``a`", Flavor::Gemini).into_iter().map(|f| f.0).collect::<Vec<_>>(),
            vec!["``"]
        );
        assert!(kinds("```a", Flavor::Gemini).iter().any(|f| f.0 == "``"));
    }

    #[test]
    fn copilot_skips_fences_and_spans_only() {
        let text = "`@x`\n~~~\n@t\n~~~\n    @i\n<!-- @c -->\n";
        let found: Vec<CodeKind> = kinds(text, Flavor::Copilot).into_iter().map(|f| f.1).collect();
        assert_eq!(found, vec![CodeKind::Span, CodeKind::Fence]);
    }

    #[test]
    fn claude_strips_block_comments_only() {
        let text = "# T\r\nA\r\n<!-- block -->\r\nB <!-- inline --> C\r\n<!--\r\nmulti\r\n-->\r\n```\r\n<!-- fenced -->\r\n```\r\nZ";
        assert_eq!(
            strip_html_comments(text),
            "# T\nA\nB <!-- inline --> C\n```\n<!-- fenced -->\n```\nZ"
        );
        assert_eq!(strip_html_comments("<!-- note --> keep\nx\n"), " keep\nx\n");
        assert_eq!(strip_html_comments("<!-- open\nx\n"), "<!-- open\nx\n");
        assert_eq!(strip_html_comments("no comment\r\n"), "no comment\r\n");
    }
}
