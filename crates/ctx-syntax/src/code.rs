//! Code that is literal: CommonMark fenced code blocks and inline code spans.

use memchr::{memchr, memchr2};

/// Whether only up to three spaces stand between the start of the line and byte `at`.
pub(crate) fn fence_indent_ok(bytes: &[u8], at: usize) -> bool {
    let mut i = at;
    let mut spaces = 0;
    while i > 0 {
        match bytes[i - 1] {
            b' ' if spaces < 3 => {
                spaces += 1;
                i -= 1;
            }
            b'\n' => return true,
            _ => return false,
        }
    }
    true
}

/// The length of the run of `c` starting at `at`.
pub(crate) fn run_len(bytes: &[u8], at: usize, c: u8) -> usize {
    bytes[at..].iter().take_while(|&&b| b == c).count()
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i)
}

/// If a fence opens at `at` (a backtick or tilde at the start of a line indented at most
/// three spaces, or after the markers of the block quotes and list items it lies in), returns
/// the end of the whole block and whether it was closed: after the closing fence line's fence
/// characters and trailing blanks (before its line ending); before the first line that leaves
/// the block's container (closed with it, as CommonMark closes it); at the end of the text
/// when unclosed.
pub(crate) fn fence_at(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
    if run_len(bytes, at, bytes[at]) < 3 {
        return None;
    }
    if fence_indent_ok(bytes, at) {
        return fenced_block(bytes, at, &[]);
    }
    // Back to the start of the line over the bytes a prefix of containers holds only, so that
    // a run after other text costs nothing more.
    let prefix = bytes[..at].iter().rev().take_while(|&&b| container_byte(b)).count();
    let line_start = at - prefix;
    if line_start > 0 && bytes[line_start - 1] != b'\n' {
        return None;
    }
    let containers = containers(&bytes[line_start..at])?;
    fenced_block(bytes, at, &containers)
}

/// The byte ranges of the fenced code blocks of `text`, as the scanner reads them: each from
/// its opening fence (after any block quote and list item markers) to the end of its closing
/// fence, to the end of the last line its container holds, or to the end of the text, in
/// order.
pub fn fenced_blocks(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line = 0;
    while line < bytes.len() {
        let end = line_end(bytes, line);
        let run = bytes[line..end].iter().position(|&b| !container_byte(b)).map(|p| line + p);
        if let Some(at) = run.filter(|&at| matches!(bytes[at], b'`' | b'~'))
            && let Some((stop, _)) = fence_at(bytes, at)
        {
            out.push(at..stop);
            line = line_end(bytes, stop) + 1;
            continue;
        }
        line = end + 1;
    }
    out
}

/// Whether `b` can be part of the container markers before a fence ([`containers`]).
fn container_byte(b: u8) -> bool {
    matches!(b, b' ' | b'>' | b'-' | b'*' | b'+' | b'.' | b')' | b'0'..=b'9')
}

/// A container a fence can lie in, as each of its lines must continue it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    /// A block quote: up to three spaces, `>` and an optional space.
    Quote,
    /// A list item whose content starts this many columns in: a line continues it when it
    /// is blank or starts with as many spaces.
    Item(usize),
}

/// The containers that `prefix` (the start of a line, before a fence) opens, outermost
/// first: block quote markers and list item markers (`-`, `*`, `+`, or one to nine digits and
/// `.` or `)`, followed by one to four spaces), each after at most three spaces; `None` when
/// the prefix is anything else or opens none. Tabs are not read as columns: a tab in it
/// makes it no prefix.
fn containers(prefix: &[u8]) -> Option<Vec<Container>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < prefix.len() {
        let start = i;
        while i < prefix.len() && prefix[i] == b' ' && i - start < 3 {
            i += 1;
        }
        // Up to three spaces before the fence, inside the last container.
        let Some(&next) = prefix.get(i) else { break };
        match next {
            b'>' => {
                i += 1;
                if prefix.get(i) == Some(&b' ') {
                    i += 1;
                }
                out.push(Container::Quote);
            }
            b'-' | b'*' | b'+' => {
                i = item_content(prefix, i + 1)?;
                out.push(Container::Item(i - start));
            }
            b'0'..=b'9' => {
                let digits = prefix[i..].iter().take_while(|b| b.is_ascii_digit()).count();
                i += digits;
                if digits > 9 || !matches!(prefix.get(i), Some(b'.' | b')')) {
                    return None;
                }
                i = item_content(prefix, i + 1)?;
                out.push(Container::Item(i - start));
            }
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Where a list item's content starts, past its marker (which ends before `at`) and the one
/// to four spaces after it; `None` with fewer or more.
fn item_content(prefix: &[u8], at: usize) -> Option<usize> {
    let spaces = prefix[at..].iter().take_while(|&&b| b == b' ').count();
    (1..=4).contains(&spaces).then_some(at + spaces)
}

/// What is left of `line` once it continues `containers`; `None` when it leaves one.
fn inside<'l>(line: &'l [u8], containers: &[Container]) -> Option<&'l [u8]> {
    let mut rest = line;
    for container in containers {
        match *container {
            Container::Quote => {
                let spaces = rest.iter().take(3).take_while(|&&b| b == b' ').count();
                if rest.get(spaces) != Some(&b'>') {
                    return None;
                }
                rest = &rest[spaces + 1..];
                if rest.first() == Some(&b' ') {
                    rest = &rest[1..];
                }
            }
            Container::Item(width) => {
                if rest.len() >= width && rest[..width].iter().all(|&b| b == b' ') {
                    rest = &rest[width..];
                } else if rest.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
                    // A blank line goes on an item (but ends a quote inside it).
                    rest = &rest[rest.len()..];
                } else {
                    return None;
                }
            }
        }
    }
    Some(rest)
}

/// The block of the fence at `at`, its lines read inside `containers` ([`fence_at`]).
fn fenced_block(bytes: &[u8], at: usize, containers: &[Container]) -> Option<(usize, bool)> {
    let c = bytes[at];
    let len = run_len(bytes, at, c);
    if len < 3 {
        return None;
    }
    let first_end = line_end(bytes, at + len);
    if c == b'`' && memchr(b'`', &bytes[at + len..first_end]).is_some() {
        return None;
    }
    let mut line_start = first_end + 1;
    while line_start < bytes.len() {
        let end = line_end(bytes, line_start);
        let Some(line) = inside(&bytes[line_start..end], containers) else {
            // The container ends before this line, and the block with it (before the line
            // ending of the line before).
            let mut close = line_start - 1;
            if close > 0 && bytes[close - 1] == b'\r' {
                close -= 1;
            }
            return Some((close, true));
        };
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        if indent <= 3 {
            let run = run_len(line, indent, c);
            if run >= len && line[indent + run..].iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
            {
                let mut close = end;
                if close > line_start && bytes[close - 1] == b'\r' {
                    close -= 1;
                }
                return Some((close, true));
            }
        }
        line_start = end + 1;
    }
    Some((bytes.len(), false))
}

/// Looks for the closing run of an inline code span whose opening run of `len` backticks ends
/// at `from`. The span may run over line breaks but not past its paragraph: not over a blank
/// line nor into a line that starts another block ([`interrupts`]). Returns the end of the
/// closing run, or `Err(limit)` with the position where the search stopped, so that a later
/// opener of the same length before `limit` can fail at once.
pub(crate) fn code_span_close(bytes: &[u8], from: usize, len: usize) -> Result<usize, usize> {
    // A span in a block quote goes on over the quote's lines: their markers are not text.
    // Counted at the first line break (a span closed on its own line needs no count), as
    // often as a forward search runs to one.
    let mut quotes = None;
    let mut i = from;
    while let Some(off) = memchr2(b'`', b'\n', &bytes[i..]) {
        let at = i + off;
        if bytes[at] == b'\n' {
            let quotes = *quotes.get_or_insert_with(|| {
                let opening = memchr::memrchr(b'\n', &bytes[..from]).map_or(0, |i| i + 1);
                quote_markers(&bytes[opening..from], usize::MAX).1
            });
            let next = &bytes[at + 1..];
            let line = quote_markers(&next[..line_end(next, 0)], quotes).0;
            if line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) || interrupts(line) {
                return Err(at);
            }
            i = at + 1;
            continue;
        }
        let run = run_len(bytes, at, b'`');
        if run == len {
            return Ok(at + run);
        }
        i = at + run;
    }
    Err(bytes.len())
}

/// `line` past its first block quote markers (each after up to three spaces, with the space
/// after it), at most `most` of them, and how many there were.
fn quote_markers(line: &[u8], most: usize) -> (&[u8], usize) {
    let (mut rest, mut count) = (line, 0);
    while count < most {
        let spaces = rest.iter().take(3).take_while(|&&b| b == b' ').count();
        if rest.get(spaces) != Some(&b'>') {
            break;
        }
        rest = &rest[spaces + 1..];
        if rest.first() == Some(&b' ') {
            rest = &rest[1..];
        }
        count += 1;
    }
    (rest, count)
}

/// Whether `line` starts a block that ends a paragraph, as CommonMark reads it: after at most
/// three spaces, a fence, an ATX heading (`#` to `######` and a blank or the end), a block
/// quote, a list item with content (`-`, `*`, `+`, or `1.` or `1)`, and a space), a thematic
/// break (three or more `*`, `-` or `_`, blanks between) or a setext underline (a run of `=`
/// or `-`). HTML blocks are not told apart.
fn interrupts(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let indent = line.iter().take(4).take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let Some(&first) = rest.first() else { return false };
    let blank = |b: &u8| matches!(b, b' ' | b'\t');
    let only = |c: u8| {
        let body = rest.iter().rposition(|b| !blank(b)).map_or(rest, |i| &rest[..=i]);
        body.iter().all(|&b| b == c)
    };
    match first {
        b'`' | b'~' => {
            let run = run_len(rest, 0, first);
            run >= 3 && (first == b'~' || memchr(b'`', &rest[run..]).is_none())
        }
        b'#' => {
            let run = run_len(rest, 0, b'#');
            run <= 6 && rest.get(run).is_none_or(blank)
        }
        b'>' => true,
        b'=' => only(b'='),
        b'-' | b'*' | b'+' | b'_' => {
            let item = first != b'_'
                && rest.get(1).is_some_and(blank)
                && rest[1..].iter().any(|b| !blank(b));
            let setext = first == b'-' && only(b'-');
            let marks = rest.iter().filter(|&&b| b == first).count();
            let thematic =
                first != b'+' && marks >= 3 && rest.iter().all(|b| *b == first || blank(b));
            item || setext || thematic
        }
        b'1' => {
            matches!(rest.get(1), Some(b'.' | b')'))
                && rest.get(2).is_some_and(blank)
                && rest[2..].iter().any(|b| !blank(b))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences() {
        let t = b"```rust\nlet a = 1;\n```\nafter";
        assert_eq!(fenced_block(t, 0, &[]), Some((22, true)));
        let t = b"~~~~\n~~~\n~~~~~  \nx";
        assert_eq!(fenced_block(t, 0, &[]), Some((16, true)));
        let t = b"```\nnever closed\n";
        assert_eq!(fenced_block(t, 0, &[]), Some((t.len(), false)));
        assert_eq!(fenced_block(b"``` a`b\n```", 0, &[]), None);
        assert_eq!(fenced_block(b"``x", 0, &[]), None);
        let t = b"```\r\nx\r\n```\r\n";
        assert_eq!(fenced_block(t, 0, &[]), Some((11, true)));
        let t = b"```\n    ```\n```";
        assert_eq!(fenced_block(t, 0, &[]), Some((t.len(), true)));
    }

    #[test]
    fn indents() {
        assert!(fence_indent_ok(b"   ```", 3));
        assert!(!fence_indent_ok(b"    ```", 4));
        assert!(fence_indent_ok(b"a\n ```", 3));
        assert!(!fence_indent_ok(b"a ```", 2));
    }

    #[test]
    fn fences_in_block_quotes_and_list_items_end_with_them() {
        // The text before the block's end, and whether it was closed.
        fn fence(t: &str) -> Option<(&str, bool)> {
            let at = t.find(['`', '~'])?;
            fence_at(t.as_bytes(), at).map(|(end, closed)| (&t[..end], closed))
        }
        // Closed inside the item, and by the item's end.
        assert_eq!(fence("- ```\n  x\n\n  ```\n\nlater"), Some(("- ```\n  x\n\n  ```", true)));
        let t = "1.  ~~~\n    x\n    ~~~\nlater";
        assert_eq!(fence(t), Some(("1.  ~~~\n    x\n    ~~~", true)));
        // A block quote's fence ends with the quote.
        assert_eq!(fence("> ```\n> x\nfoo\n```"), Some(("> ```\n> x", true)));
        assert_eq!(fence("> - ~~~\n>   x\n>   ~~~\n"), Some(("> - ~~~\n>   x\n>   ~~~", true)));
        // Up to three spaces before the fence inside a quote; a blank line ends a quote in an
        // item; a CRLF stays whole.
        assert_eq!(fence(">  ```\n> a\n> ```\n> b"), Some((">  ```\n> a\n> ```", true)));
        assert_eq!(fence("- > ```\n\n  > b"), Some(("- > ```", true)));
        assert_eq!(fence("> ```\r\n> x\r\nfoo"), Some(("> ```\r\n> x", true)));
        // Not a container: prose before the run, a tab, too many spaces after a marker.
        for t in ["a ```\nx\n```", "-\t```\nx", "-     ```\nx", "**```\nx"] {
            assert_eq!(fence(t), None, "{t}");
        }
    }

    #[test]
    fn fenced_blocks_are_the_scanners() {
        let text = "a `x\n```\n# in\n```\n- ~~~\n  b\nc\n***\n";
        let blocks: Vec<&str> = fenced_blocks(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(blocks, ["```\n# in\n```", "~~~\n  b"]);
        assert!(fenced_blocks("``` a`b\n```x`\n").is_empty());
    }

    #[test]
    fn a_span_ends_with_its_paragraph() {
        for t in [
            &b"`a\n```\nx`"[..],
            b"`a\n- b `",
            b"`a\n# b `",
            b"`a\n> b `",
            b"`a\n***\nb `",
            b"`a\n===\nb `",
            b"`a\n1. b `",
            b"`a\n~~~\n~~~\n `",
        ] {
            assert_eq!(code_span_close(t, 1, 1), Err(2), "{}", String::from_utf8_lossy(t));
        }
        // In a block quote, the quote's own markers go on the paragraph; a blank quoted line
        // or a further block ends it.
        assert_eq!(code_span_close(b"> `a\n> b`", 3, 1), Ok(9));
        assert_eq!(code_span_close(b"> `a\nb`", 3, 1), Ok(7));
        assert_eq!(code_span_close(b"> `a\n>\n> b`", 3, 1), Err(4));
        assert_eq!(code_span_close(b"> `a\n> # b`", 3, 1), Err(4));
        // Lines that start no block: a paragraph goes on.
        for t in [&b"`a\n2. b`"[..], b"`a\n#hash`", b"`a\n    # code`", b"`a\n-b`", b"`a\n-`"] {
            assert_eq!(code_span_close(t, 1, 1), Ok(t.len()), "{}", String::from_utf8_lossy(t));
        }
    }

    #[test]
    fn spans() {
        assert_eq!(code_span_close(b"`a`", 1, 1), Ok(3));
        assert_eq!(code_span_close(b"``a`b``", 2, 2), Ok(7));
        assert_eq!(code_span_close(b"`a\nb`", 1, 1), Ok(5));
        assert_eq!(code_span_close(b"`a\n\nb`", 1, 1), Err(2));
        assert_eq!(code_span_close(b"`a``", 1, 1), Err(4));
    }
}
