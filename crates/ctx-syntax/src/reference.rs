//! Paths, line ranges and fragments: the bodies of includes and mentions.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::digit1;
use nom::combinator::{all_consuming, map, opt, value};
use nom::sequence::{pair, preceded};
use nom::{IResult, Parser};

use crate::ast::{Include, LineEnd, PathText, Reference, Selector, TargetKind, ToolCall};

type PResult<'a, T> = IResult<&'a str, T>;

/// Parses a decimal line number, saturating at `u32::MAX`.
fn line(input: &str) -> PResult<'_, u32> {
    map(digit1, |digits: &str| {
        digits.bytes().fold(0u32, |n, d| n.saturating_mul(10).saturating_add(u32::from(d - b'0')))
    })
    .parse(input)
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

fn name(input: &str) -> PResult<'_, &str> {
    take_while1(is_name_char).parse(input)
}

/// `#L10`, `#L10-20`, `#L10-L20`, `#L10-`.
fn hash_lines(input: &str) -> PResult<'_, Selector<'_>> {
    let (rest, start) = preceded(tag("#L"), line).parse(input)?;
    let (rest, range) = opt(preceded(tag("-"), preceded(opt(tag("L")), opt(line)))).parse(rest)?;
    let end = match range {
        None => LineEnd::Line(start),
        Some(Some(end)) => LineEnd::Line(end),
        Some(None) => LineEnd::Eof,
    };
    Ok((rest, Selector::Lines { start, end }))
}

/// Whichever of two parses of `input` takes more of it, the first on a tie: `#L2x` is the
/// name `L2x`, not lines 2 followed by text, and `#L2` stays a line.
fn longer<'a>(
    first: PResult<'a, Selector<'a>>,
    second: PResult<'a, Selector<'a>>,
) -> PResult<'a, Selector<'a>> {
    match (first, second) {
        (Ok(a), Ok(b)) => Ok(if b.0.len() < a.0.len() { b } else { a }),
        (Ok(a), Err(_)) => Ok(a),
        (Err(_), second) => second,
    }
}

/// A mention fragment: `#L…` or `#name`, whichever is longer.
fn fragment(input: &str) -> PResult<'_, Selector<'_>> {
    longer(hash_lines(input), map(preceded(tag("#"), name), Selector::Fragment).parse(input))
}

/// The colon forms of an include range, or an anchor (`:2x` is the anchor `2x`).
fn colon_range(input: &str) -> PResult<'_, Selector<'_>> {
    longer(colon_lines(input), map(preceded(tag(":"), name), Selector::Anchor).parse(input))
}

/// The colon forms of a range of lines.
fn colon_lines(input: &str) -> PResult<'_, Selector<'_>> {
    alt((
        map(preceded(tag("::"), line), |end| Selector::Lines { start: 1, end: LineEnd::Line(end) }),
        map(
            pair(
                preceded(tag(":"), line),
                opt(alt((
                    map(preceded(alt((tag(":"), tag("-"))), line), LineEnd::Line),
                    value(LineEnd::Eof, alt((tag(":"), tag("-")))),
                ))),
            ),
            |(start, end)| Selector::Lines { start, end: end.unwrap_or(LineEnd::Line(start)) },
        ),
    ))
    .parse(input)
}

/// A whole include selector; must consume its input entirely.
fn include_selector(input: &str) -> Option<Selector<'_>> {
    all_consuming(alt((colon_range, fragment))).parse(input).ok().map(|(_, s)| s)
}

/// A whole mention fragment; must consume its input entirely.
pub(crate) fn mention_fragment(input: &str) -> Option<Selector<'_>> {
    all_consuming(fragment).parse(input).ok().map(|(_, s)| s)
}

/// The longest prefix of `input` that is a mention fragment, with its length.
pub(crate) fn fragment_prefix(input: &str) -> Option<(Selector<'_>, usize)> {
    fragment(input).ok().map(|(rest, s)| (s, input.len() - rest.len()))
}

pub(crate) fn target_kind(path: &str) -> TargetKind {
    if path.contains(['*', '?']) {
        TargetKind::Glob
    } else if path.ends_with(['/', '\\']) {
        TargetKind::Directory
    } else {
        TargetKind::File
    }
}

/// Splits a quoted string at the start of `input` (which must start with `"`):
/// returns the raw contents and the byte length including both quotes.
/// Only `\"` and `\\` are escapes; a line break or the end of input ends nothing.
pub(crate) fn quoted_prefix(input: &str) -> Option<(&str, usize)> {
    let bytes = input.as_bytes();
    debug_assert_eq!(bytes.first(), Some(&b'"'));
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some((&input[1..i], i + 1)),
            b'\\' if matches!(bytes.get(i + 1), Some(b'"' | b'\\')) => i += 2,
            b'\n' | b'\r' => return None,
            _ => i += 1,
        }
    }
    None
}

/// Parses the body of an `@[...]` reference (everything between the brackets), or the
/// string of `@{include "..."}`.
///
/// A colon starts a range only when the rest of the body is a whole range or name
/// (`C:\src\a.rs` keeps its drive letter; `a.md:2:4` is lines 2 to 4). A quoted path may be
/// followed by a range (`"notes:v2.md":2`). A body that fits no form is taken whole as a
/// path, so that the assembler reports it as a path that does not resolve.
pub fn parse_reference(body: &str) -> Reference<'_> {
    let body = body.trim_matches(is_ws);
    if body.starts_with('"')
        && let Some((raw, len)) = quoted_prefix(body)
    {
        let rest = body[len..].trim_start_matches(is_ws);
        let (selector, raw) = if rest.is_empty() {
            split_selector(raw, true)
        } else {
            match include_selector(rest) {
                Some(selector) => (Some(selector), raw),
                None => return raw_reference(body),
            }
        };
        return Reference {
            path: PathText { raw, quoted: true },
            selector,
            target: target_kind(raw),
        };
    }
    raw_reference(body)
}

fn raw_reference(body: &str) -> Reference<'_> {
    let (selector, raw) = split_selector(body, false);
    Reference { path: PathText { raw, quoted: false }, selector, target: target_kind(raw) }
}

/// Finds the leftmost `:` or `#` after which the rest of `text` is a whole selector.
/// Inside quotes only `#` fragments are looked for (`"a.md#L2"`), so a colon in a quoted
/// name stays part of it.
fn split_selector(text: &str, quoted: bool) -> (Option<Selector<'_>>, &str) {
    let mut from = 0;
    while let Some(off) = text[from..].find(if quoted { &['#'][..] } else { &[':', '#'][..] }) {
        let at = from + off;
        if at > 0 {
            let parsed =
                if quoted { mention_fragment(&text[at..]) } else { include_selector(&text[at..]) };
            if let Some(selector) = parsed {
                return (Some(selector), &text[..at]);
            }
        }
        from = at + 1;
    }
    (None, text)
}

pub(crate) fn is_ws(c: char) -> bool {
    c.is_ascii_whitespace()
}

/// Whether `c` may start a tool or macro name.
pub(crate) fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// Parses the body of an `@[...]` include: a tool call `name{json}` when the whole body has
/// that shape, otherwise a reference.
pub fn parse_include_body(body: &str) -> Include<'_> {
    let trimmed = body.trim_matches(is_ws);
    let bytes = trimmed.as_bytes();
    if bytes.first().is_some_and(|&b| is_ident_start(b)) {
        let ident_len = bytes
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
            .unwrap_or(bytes.len());
        let rest = trimmed[ident_len..].trim_start_matches(is_ws);
        if rest.starts_with('{')
            && let Some(len) = json_object_len(rest.as_bytes())
            && rest[len..].trim_matches(is_ws).is_empty()
        {
            return Include::Tool(ToolCall { name: &trimmed[..ident_len], args: &rest[..len] });
        }
    }
    Include::Reference(parse_reference(body))
}

/// The length of the JSON object at the start of `input`, scanned string-aware, or `None` if
/// it does not close. Outside strings only characters that JSON allows are accepted, which
/// keeps a scan from running far over text that is not JSON.
pub(crate) fn json_object_len(bytes: &[u8]) -> Option<usize> {
    match json_object_scan(bytes) {
        JsonScan::Closed(len) => Some(len),
        JsonScan::Open | JsonScan::Invalid => None,
    }
}

/// How a scan of the JSON object at the start of `bytes` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonScan {
    /// It closes after this many bytes.
    Closed(usize),
    /// The bytes end before it does, nothing in them out of place: cut by a limit.
    Open,
    /// A byte no JSON object holds there.
    Invalid,
}

/// Scans the JSON object at the start of `bytes` ([`json_object_len`]).
pub(crate) fn json_object_scan(bytes: &[u8]) -> JsonScan {
    debug_assert_eq!(bytes.first(), Some(&b'{'));
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return JsonScan::Closed(i + 1);
                }
            }
            b'"' => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return JsonScan::Open,
                        Some(b'"') => break,
                        Some(b'\\') if bytes.get(i + 1).is_none() => return JsonScan::Open,
                        Some(b'\\') if !matches!(bytes.get(i + 1), Some(b'\n' | b'\r')) => i += 2,
                        Some(b'\\' | b'\n' | b'\r') => return JsonScan::Invalid,
                        Some(_) => i += 1,
                    }
                }
            }
            b'[' | b']' | b':' | b',' | b'-' | b'+' | b'.' | b' ' | b'\t' | b'\n' | b'\r' => {}
            b if b.is_ascii_alphanumeric() => {}
            _ => return JsonScan::Invalid,
        }
        i += 1;
    }
    JsonScan::Open
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(start: u32, end: Option<u32>) -> Option<Selector<'static>> {
        Some(Selector::Lines { start, end: end.map_or(LineEnd::Eof, LineEnd::Line) })
    }

    #[track_caller]
    fn check(body: &str, path: &str, selector: Option<Selector<'_>>) {
        let r = parse_reference(body);
        assert_eq!(r.path.raw, path, "path of {body:?}");
        assert_eq!(r.selector, selector, "selector of {body:?}");
    }

    #[test]
    fn ranges() {
        check("a.rs", "a.rs", None);
        check("a.rs:10", "a.rs", lines(10, Some(10)));
        check("a.rs:10:20", "a.rs", lines(10, Some(20)));
        check("a.rs:10-20", "a.rs", lines(10, Some(20)));
        check("a.rs:10:", "a.rs", lines(10, None));
        check("a.rs:10-", "a.rs", lines(10, None));
        check("a.rs::5", "a.rs", lines(1, Some(5)));
        check("a.rs#L3", "a.rs", lines(3, Some(3)));
        check("a.rs#L3-9", "a.rs", lines(3, Some(9)));
        check("a.rs#L3-L9", "a.rs", lines(3, Some(9)));
        check("a.rs#L3-", "a.rs", lines(3, None));
        check("a.rs:intro", "a.rs", Some(Selector::Anchor("intro")));
        check("a.md#getting-started", "a.md", Some(Selector::Fragment("getting-started")));
        check("a.rs:0", "a.rs", lines(0, Some(0)));
        check("a.rs:99999999999", "a.rs", lines(u32::MAX, Some(u32::MAX)));
        // A name that starts as a range is a name (syntax.md: `name = 1*( ALNUM | "_" | "-" )`).
        check("la.rs#L2x", "la.rs", Some(Selector::Fragment("L2x")));
        check("x#L2-3-4", "x", Some(Selector::Fragment("L2-3-4")));
        check("a.rs:2x", "a.rs", Some(Selector::Anchor("2x")));
        check("a.rs:10-20x", "a.rs", Some(Selector::Anchor("10-20x")));
        assert_eq!(mention_fragment("#L2x"), Some(Selector::Fragment("L2x")));
        assert_eq!(fragment_prefix("#L2x and"), Some((Selector::Fragment("L2x"), 4)));
        assert_eq!(fragment_prefix("#L2-9."), Some((lines(2, Some(9)).unwrap(), 5)));
    }

    #[test]
    fn colons_that_are_not_ranges() {
        check(r"C:\src\a.rs", r"C:\src\a.rs", None);
        check("C:/src/a.rs:3", "C:/src/a.rs", lines(3, Some(3)));
        check("notes:v2.md", "notes:v2.md", None);
        check("a:b:10", "a:b", lines(10, Some(10)));
        check(":5", ":5", None);
        check("a.rs:10:x", "a.rs:10", Some(Selector::Anchor("x")));
    }

    #[test]
    fn quoted() {
        check(r#""notes:v2.md":2"#, "notes:v2.md", lines(2, Some(2)));
        check(r#""my file.md""#, "my file.md", None);
        check(r#" "my file.md#L2-3" "#, "my file.md", lines(2, Some(3)));
        check(r#""a\"b.md""#, r#"a\"b.md"#, None);
        check(r#""a.md" junk"#, r#""a.md" junk"#, None);
        check(r#""unclosed"#, r#""unclosed"#, None);
    }

    #[test]
    fn targets() {
        assert_eq!(parse_reference("src/").target, TargetKind::Directory);
        assert_eq!(parse_reference(r"src\").target, TargetKind::Directory);
        assert_eq!(parse_reference("src/*.rs").target, TargetKind::Glob);
        assert_eq!(parse_reference("a?.md").target, TargetKind::Glob);
        assert_eq!(parse_reference("a[1].md").target, TargetKind::File);
        assert_eq!(parse_reference("src/[ab]*.rs").target, TargetKind::Glob);
        assert_eq!(parse_reference(r#""a[1].md""#).target, TargetKind::File);
    }

    #[test]
    fn tool_calls() {
        assert_eq!(
            parse_include_body(r#"grep{"pattern":"TODO"}"#),
            Include::Tool(ToolCall { name: "grep", args: r#"{"pattern":"TODO"}"# })
        );
        assert_eq!(
            parse_include_body(r#" read_file {"uri": "a]}.md", "x": [1, {"y": null}]} "#),
            Include::Tool(ToolCall {
                name: "read_file",
                args: r#"{"uri": "a]}.md", "x": [1, {"y": null}]}"#
            })
        );
        assert!(matches!(parse_include_body("a{b}c"), Include::Reference(_)));
        assert!(matches!(parse_include_body("a.md"), Include::Reference(_)));
    }
}
