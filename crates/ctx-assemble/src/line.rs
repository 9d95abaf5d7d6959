//! An include alone on its line (assembly.md §7): the line prefix it carries over to every
//! inserted line, and where the rest of its line ends.
//!
//! ```text
//! prefix = *( WS | ">" | marker 1*WS ) [ leader " " *WS ]    ; WS: space or tab
//! marker = "-" | "*" | "+" | 1*9DIGIT ( "." | ")" )
//! leader = "#" | "//" | "--" | ";"
//! ```

use std::ops::Range;

/// An item alone on its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Alone {
    /// What starts every further inserted line: the prefix with list markers as spaces.
    pub(crate) continuation: String,
    /// The end of the item's line, its line ending included.
    pub(crate) line_end: usize,
}

/// Whether the item at `span` of `text` stands alone on its line: a prefix (possibly empty)
/// before it, only spaces or tabs after it.
pub(crate) fn alone_on_line(text: &str, span: Range<usize>) -> Option<Alone> {
    let bytes = text.as_bytes();
    let after = &bytes[span.end..];
    let blanks = after.iter().take_while(|&&b| matches!(b, b' ' | b'\t')).count();
    let line_end = match &after[blanks..] {
        [] => text.len(),
        [b'\n', ..] => span.end + blanks + 1,
        [b'\r', b'\n', ..] => span.end + blanks + 2,
        _ => return None,
    };
    // Only the last item of a line gets here, so the line is looked through once, not once
    // for each of its items.
    let line_start = memchr::memrchr(b'\n', &bytes[..span.start]).map_or(0, |i| i + 1);
    let continuation = continuation(&text[line_start..span.start])?;
    Some(Alone { continuation, line_end })
}

/// The continuation of `before` when it is a prefix: whitespace, `>` and a comment leader
/// as written, list-item markers as spaces of the same width.
pub(crate) fn continuation(before: &str) -> Option<String> {
    let b = before.as_bytes();
    let ws = |i: usize| b.get(i).is_some_and(|c| matches!(c, b' ' | b'\t'));
    let mut out = String::with_capacity(before.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'>' => {
                out.push(b[i] as char);
                i += 1;
            }
            b'-' | b'*' | b'+' if ws(i + 1) => {
                out.push(' ');
                i += 1;
            }
            b'0'..=b'9' => {
                let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                let marker = digits <= 9
                    && matches!(b.get(i + digits), Some(b'.' | b')'))
                    && ws(i + digits + 1);
                if !marker {
                    break;
                }
                out.extend(std::iter::repeat_n(' ', digits + 1));
                i += digits + 1;
            }
            _ => break,
        }
    }
    let rest = &before[i..];
    if rest.is_empty() {
        return Some(out);
    }
    let leader = ["//", "--", "#", ";"].iter().find(|l| rest.starts_with(**l))?;
    let tail = &rest[leader.len()..];
    let spaced = tail.starts_with(' ') && tail.bytes().all(|c| matches!(c, b' ' | b'\t'));
    spaced.then(|| out + rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alone(line: &str) -> Option<(String, usize)> {
        let start = line.find("@[").unwrap();
        let end = line[start..].find(']').unwrap() + start + 1;
        alone_on_line(line, start..end).map(|a| (a.continuation, a.line_end))
    }

    #[test]
    fn the_table_of_the_spec() {
        assert_eq!(alone("@[a.txt]\nnext"), Some((String::new(), 9)));
        assert_eq!(alone("> @[a.txt]\n"), Some(("> ".into(), 11)));
        assert_eq!(alone("  - @[a.txt]\n"), Some(("    ".into(), 13)));
        assert_eq!(alone("1. @[a.txt]\n"), Some(("   ".into(), 12)));
        assert_eq!(alone("# @[a.txt]\n"), Some(("# ".into(), 11)));
        assert_eq!(alone("See @[a.txt]\n"), None);
    }

    #[test]
    fn what_may_follow() {
        assert_eq!(alone("@[a] \t\r\nx"), Some((String::new(), 8)));
        assert_eq!(alone("@[a]"), Some((String::new(), 4)));
        assert_eq!(alone("@[a] x\n"), None);
        assert_eq!(alone("x\n  @[a]\n"), Some(("  ".into(), 9)));
    }

    #[test]
    fn prefixes() {
        for (before, cont) in [
            ("", Some("")),
            ("> > ", Some("> > ")),
            (">- ", Some(">  ")),
            ("* ", Some("  ")),
            ("+\t", Some(" \t")),
            ("10) ", Some("    ")),
            ("123456789. ", Some("           ")),
            ("1234567890. ", None),
            ("// ", Some("// ")),
            ("  --  ", Some("  --  ")),
            ("; ", Some("; ")),
            ("> # ", Some("> # ")),
            ("## ", None),
            ("#", None),
            ("-", None),
            ("1.", None),
            ("see ", None),
            ("- see ", None),
        ] {
            assert_eq!(continuation(before).as_deref(), cont, "{before:?}");
        }
    }
}
