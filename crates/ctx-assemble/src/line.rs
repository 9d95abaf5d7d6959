//! An include alone on its line (assembly.md §7): the line prefix it carries over to every
//! inserted line, and where the rest of its line ends; and the same prefix read before the
//! mdBook links of a line (docs/dialects.md), as the line grows.
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

/// Where the reading of a line against the prefix grammar stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Every byte read is part of a whole token: a blank, `>` or a list marker.
    Tokens,
    /// A comment leader was read: a space must follow, then blanks only.
    Leader,
    /// Not a prefix, however the line goes on.
    Prose,
}

/// One token of the prefix grammar at the start of some bytes.
enum Token {
    /// A blank, `>` or a list marker (`true`), of this length.
    Whole(usize, bool),
    /// A comment leader of this length.
    Leader(usize),
    /// The bytes end inside what may still become a token.
    Unfinished,
    /// No token: the text is prose.
    Not,
}

fn token(b: &[u8]) -> Token {
    let ws = |i: usize| b.get(i).map(|c| matches!(c, b' ' | b'\t'));
    match b[0] {
        b' ' | b'\t' | b'>' => Token::Whole(1, false),
        b'#' | b';' => Token::Leader(1),
        b'-' | b'*' | b'+' => match (ws(1), b.get(1)) {
            (None, _) => Token::Unfinished,
            (Some(true), _) => Token::Whole(1, true),
            (Some(false), Some(b'-')) if b[0] == b'-' => Token::Leader(2),
            _ => Token::Not,
        },
        b'/' => match b.get(1) {
            None => Token::Unfinished,
            Some(b'/') => Token::Leader(2),
            Some(_) => Token::Not,
        },
        b'0'..=b'9' => {
            // Ten digits are past any marker: the run is not read further.
            let digits = b.iter().take(10).take_while(|c| c.is_ascii_digit()).count();
            if digits > 9 {
                return Token::Not;
            }
            match (b.get(digits), ws(digits + 1)) {
                (None, _) | (Some(b'.' | b')'), None) => Token::Unfinished,
                (Some(b'.' | b')'), Some(true)) => Token::Whole(digits + 1, true),
                _ => Token::Not,
            }
        }
        _ => Token::Not,
    }
}

/// The text a line holds before the mdBook links that stand on it, read against the prefix
/// grammar as the line grows: a line's bytes are read once (the few of a marker cut short by
/// the end of the text again), however many links the line holds.
#[derive(Debug, Clone)]
pub(crate) struct LineScan {
    /// The text read: the number of the line it is on and where it starts there.
    key: (u64, usize),
    /// Bytes read: to the end of the last whole token, or of the blanks after a leader.
    read: usize,
    phase: Phase,
    /// Whether a list marker was read.
    markers: bool,
    /// Whether the space after the leader was read.
    spaced: bool,
}

impl Default for LineScan {
    fn default() -> LineScan {
        LineScan { key: (0, 0), read: 0, phase: Phase::Tokens, markers: false, spaced: false }
    }
}

impl LineScan {
    /// Whether `text` is a prefix: `Some(markers)` when it is, `markers` saying whether it
    /// holds list markers (which [`continuation`] turns into spaces). `text` is the text of
    /// the line `key` names; a later call with the same key gives the same text grown at its
    /// end, and only what was added is read.
    pub(crate) fn prefix(&mut self, key: (u64, usize), text: &str) -> Option<bool> {
        if self.key != key || text.len() < self.read {
            *self = LineScan { key, ..LineScan::default() };
        }
        let b = text.as_bytes();
        loop {
            let rest = &b[self.read..];
            match self.phase {
                Phase::Prose => return None,
                Phase::Tokens if rest.is_empty() => return Some(self.markers),
                Phase::Tokens => match token(rest) {
                    Token::Whole(len, marker) => {
                        self.read += len;
                        self.markers |= marker;
                    }
                    Token::Leader(len) => {
                        self.read += len;
                        self.phase = Phase::Leader;
                    }
                    Token::Unfinished => return None,
                    Token::Not => self.phase = Phase::Prose,
                },
                Phase::Leader => {
                    let blanks = rest
                        .iter()
                        .enumerate()
                        .take_while(|&(i, c)| *c == b' ' || (*c == b'\t' && (self.spaced || i > 0)))
                        .count();
                    self.spaced |= blanks > 0;
                    self.read += blanks;
                    if blanks < rest.len() {
                        self.phase = Phase::Prose;
                    } else {
                        return self.spaced.then_some(self.markers);
                    }
                }
            }
        }
    }
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

#[cfg(test)]
mod scan_tests {
    use proptest::prelude::*;

    use super::*;

    /// What `continuation` says of `text`, in the terms of [`LineScan::prefix`].
    fn oracle(text: &str) -> Option<bool> {
        continuation(text).map(|c| c != text)
    }

    /// The scan's answer for `text` read whole, and read grown at every split point first.
    fn scanned(text: &str) -> (Option<bool>, Option<bool>) {
        let whole = LineScan::default().prefix((1, 0), text);
        let mut scan = LineScan::default();
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            scan.prefix((1, 0), &text[..end]);
        }
        (whole, scan.prefix((1, 0), text))
    }

    #[test]
    fn it_reads_as_continuation_does() {
        for text in [
            "",
            "  ",
            "> > ",
            ">- ",
            "* ",
            "+\t",
            "10) ",
            "123456789. ",
            "1234567890. ",
            "// ",
            "  --  ",
            "; ",
            "> # ",
            "## ",
            "#",
            "-",
            "1.",
            "see ",
            "- see ",
            "[",
            "  [",
            "#\t",
            "# \t ",
            "--",
            "-- x",
            "/",
            "/ ",
            "1",
            "1)",
            "1)x",
            "- - ",
            "> 2. // ",
        ] {
            let (whole, grown) = scanned(text);
            assert_eq!(whole, oracle(text), "{text:?} read whole");
            assert_eq!(grown, oracle(text), "{text:?} read as it grows");
        }
    }

    #[test]
    fn a_new_line_or_start_is_read_afresh() {
        let mut scan = LineScan::default();
        assert_eq!(scan.prefix((1, 0), "see "), None);
        assert_eq!(scan.prefix((2, 0), "> "), Some(false));
        assert_eq!(scan.prefix((2, 2), "- "), Some(true));
    }

    #[test]
    fn a_long_line_is_read_once() {
        // Ten thousand links on a line of a megabyte of blanks: the scan reads each byte
        // once, so `read` only grows by what was added.
        let mut scan = LineScan::default();
        let mut text = " ".repeat(1 << 20);
        for _ in 0..10_000 {
            let before = scan.read;
            assert_eq!(scan.prefix((1, 0), &text), Some(false));
            assert!(scan.read >= before && scan.read == text.len());
            text.push(' ');
        }
    }

    proptest! {
        #[test]
        fn it_agrees_with_continuation(text in "[ \t>#/;*+.)0-9a-]{0,12}") {
            let (whole, grown) = scanned(&text);
            prop_assert_eq!(whole, oracle(&text));
            prop_assert_eq!(grown, oracle(&text));
        }
    }
}
