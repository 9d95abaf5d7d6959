//! Positions: LSP counts UTF-16 code units within a line; ctx counts bytes (spans) and
//! Unicode scalar values (diagnostic columns). Every conversion clamps, so a client that
//! sends a position past the end of a line or of the text gets the nearest valid place.

use lsp_types::{Position, Range};

/// The byte offsets where the lines of `text` after the first start, as LSP counts lines:
/// after every `\n`, and after a `\r` that no `\n` follows (its line endings are `\n`,
/// `\r\n` and `\r`).
fn lsp_line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'\n', b'\r', bytes)
        .filter(move |&i| !(bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n')))
        .map(|i| i + 1)
}

/// The text of the LSP line starting at byte `start`, without its line ending.
fn lsp_line_at(text: &str, start: usize) -> &str {
    let rest = &text[start..];
    memchr::memchr2(b'\n', b'\r', rest.as_bytes()).map_or(rest, |n| &rest[..n])
}

/// The byte offset of an LSP position in `text`, clamped to the end of its line (and of the
/// text).
pub(crate) fn offset(text: &str, position: Position) -> usize {
    let start = match position.line {
        0 => 0,
        n => match lsp_line_starts(text).nth(n as usize - 1) {
            Some(start) => start,
            None => return text.len(),
        },
    };
    let line = lsp_line_at(text, start);
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= position.character as usize {
            return start + i;
        }
        units += c.len_utf16();
    }
    start + line.len()
}

/// Positions of one text, for converting many of them: the start of every line, and for a
/// text that is not ASCII, how many characters and UTF-16 units lie before every
/// [`MARK_STEP`]th byte of its line. A conversion then costs a binary search and a scan of
/// at most that many bytes, however long the line: a one-line megabyte with a thousand
/// diagnostics costs a millisecond, not a second.
#[derive(Debug)]
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    /// The byte offset where each line starts, as LSP counts lines (`\n`, `\r\n`, `\r`).
    starts: Vec<usize>,
    /// The same as ctx counts lines, for its diagnostics (`\n` alone).
    ctx_starts: Vec<usize>,
    /// Whether the text is ASCII, where bytes, characters and units agree (and there are
    /// no marks).
    ascii: bool,
    marks: Vec<Mark>,
}

/// A place in a line and what lies before it: the characters since its line began as ctx
/// counts lines, the UTF-16 units since it began as LSP does.
#[derive(Debug, Clone, Copy)]
struct Mark {
    byte: usize,
    chars: usize,
    units: usize,
}

/// Bytes between two marks.
const MARK_STEP: usize = 1024;

impl<'a> LineIndex<'a> {
    /// The index of `text`: one pass over it.
    pub(crate) fn new(text: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(lsp_line_starts(text));
        let mut ctx_starts = vec![0];
        ctx_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|n| n + 1));
        let mut marks = Vec::new();
        let ascii = text.is_ascii();
        if !ascii {
            let bytes = text.as_bytes();
            let (mut chars, mut units, mut next) = (0, 0, MARK_STEP);
            for (i, c) in text.char_indices() {
                if i >= next {
                    marks.push(Mark { byte: i, chars, units });
                    next = i + MARK_STEP;
                }
                match c {
                    '\n' => (chars, units) = (0, 0),
                    // A lone `\r` ends an LSP line, not one of ctx's.
                    '\r' if bytes.get(i + 1) != Some(&b'\n') => (chars, units) = (chars + 1, 0),
                    c => (chars, units) = (chars + 1, units + c.len_utf16()),
                }
            }
        }
        LineIndex { text, starts, ctx_starts, ascii, marks }
    }

    /// The nearest mark at or before `offset` in the line that starts at `line_start`.
    fn mark_before(&self, line_start: usize, offset: usize) -> Mark {
        let n = self.marks.partition_point(|m| m.byte <= offset);
        match n.checked_sub(1).map(|n| self.marks[n]) {
            Some(mark) if mark.byte >= line_start => mark,
            _ => Mark { byte: line_start, chars: 0, units: 0 },
        }
    }

    /// The LSP position of a byte offset (clamped to the text, and down to a character
    /// boundary).
    pub(crate) fn position(&self, offset: usize) -> Position {
        let text = self.text;
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let units = if self.ascii {
            offset - start
        } else {
            let mark = self.mark_before(start, offset);
            mark.units + text[mark.byte..offset].chars().map(char::len_utf16).sum::<usize>()
        };
        Position::new(to_u32(line), to_u32(units))
    }

    /// The LSP range of a byte span.
    pub(crate) fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// The byte offset of a 1-based line and a 1-based column counted in Unicode scalar
    /// values (ctx's diagnostics), clamped to the end of the line (and of the text).
    pub(crate) fn offset_of_line_column(&self, line: u32, column: u32) -> usize {
        let text = self.text;
        let Some(&start) = self.ctx_starts.get(line.max(1) as usize - 1) else {
            return text.len();
        };
        let line = &text[start..];
        let line = line.find('\n').map_or(line, |n| &line[..n]);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let end = start + line.len();
        let skip = column.max(1) as usize - 1;
        if self.ascii {
            return start + skip.min(line.len());
        }
        let first = self.marks.partition_point(|m| m.byte < start);
        let last = self.marks.partition_point(|m| m.byte <= end);
        let within = &self.marks[first..last];
        let mark = match within.partition_point(|m| m.chars <= skip).checked_sub(1) {
            Some(n) => within[n],
            None => Mark { byte: start, chars: 0, units: 0 },
        };
        text[mark.byte..end]
            .char_indices()
            .nth(skip - mark.chars)
            .map_or(end, |(i, _)| mark.byte + i)
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The model of ctx's line: the text of the line starting at byte `start`, up to its `\n`
    /// and without a `\r` before it.
    fn line_at(text: &str, start: usize) -> &str {
        let rest = &text[start..];
        let line = rest.find('\n').map_or(rest, |n| &rest[..n]);
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// The model: where the LSP line holding `offset` starts, and its number: a line ends at
    /// `\n`, at `\r\n` and at a `\r` alone.
    fn lsp_line_of(text: &str, offset: usize) -> (usize, usize) {
        let (mut line, mut start) = (0, 0);
        for (i, c) in text[..offset].char_indices() {
            if c == '\n' || (c == '\r' && !text[i + 1..].starts_with('\n')) {
                (line, start) = (line + 1, i + 1);
            }
        }
        (line, start)
    }

    /// The model: the position of a byte offset, from the start of the text.
    fn position(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let (line, line_start) = lsp_line_of(text, offset);
        let character: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
        Position::new(to_u32(line), to_u32(character))
    }

    #[test]
    fn a_lone_carriage_return_ends_an_lsp_line_but_not_a_ctx_line() {
        let text = "title\r@other.md\r\nnext\ré@x";
        let index = LineIndex::new(text);
        // LSP: `title`, `@other.md`, `next`, `é@x`.
        assert_eq!(index.position(6), Position::new(1, 0));
        assert_eq!(offset(text, Position::new(1, 1)), 7);
        assert_eq!(offset(text, Position::new(1, 99)), 15);
        assert_eq!(offset(text, Position::new(2, 0)), 17);
        assert_eq!(offset(text, Position::new(3, 1)), 24);
        assert_eq!(index.position(24), Position::new(3, 1));
        // ctx: `title\r@other.md` is line 1, `next\ré@x` line 2 (columns in characters).
        assert_eq!(index.offset_of_line_column(1, 7), 6);
        assert_eq!(index.offset_of_line_column(2, 7), 24);
        assert_eq!(index.position(index.offset_of_line_column(2, 7)), Position::new(3, 1));
    }

    /// The model: the offset of a line and a column in characters.
    fn offset_of_line_column(text: &str, line: u32, column: u32) -> usize {
        let mut start = 0;
        for _ in 1..line.max(1) {
            match text[start..].find('\n') {
                Some(n) => start += n + 1,
                None => return text.len(),
            }
        }
        let line = line_at(text, start);
        let skip = column.max(1) as usize - 1;
        start + line.char_indices().nth(skip).map_or(line.len(), |(i, _)| i)
    }

    #[test]
    fn astral_characters_take_two_units() {
        let text = "a😀b @[x.md]\nsecond";
        let index = LineIndex::new(text);
        // `😀` is one scalar value, four bytes and two UTF-16 units.
        assert_eq!(offset(text, Position::new(0, 3)), 5);
        assert_eq!(offset(text, Position::new(0, 5)), 7);
        // Inside the pair of units: the next character.
        assert_eq!(offset(text, Position::new(0, 2)), 5);
        assert_eq!(index.position(7), Position::new(0, 5));
        assert_eq!(index.offset_of_line_column(1, 4), 6);
        assert_eq!(index.position(index.offset_of_line_column(1, 5)), Position::new(0, 5));
    }

    #[test]
    fn positions_clamp() {
        let text = "ab\ncd";
        let index = LineIndex::new(text);
        assert_eq!(offset(text, Position::new(0, 99)), 2);
        assert_eq!(offset(text, Position::new(7, 0)), 5);
        assert_eq!(offset(text, Position::new(u32::MAX, u32::MAX)), 5);
        assert_eq!(index.position(99), Position::new(1, 2));
        assert_eq!(index.offset_of_line_column(9, 9), 5);
        // Inside a code point: down to its start.
        assert_eq!(LineIndex::new("😀").position(2), Position::new(0, 0));
    }

    #[test]
    fn round_trip() {
        let text = "é😀\r\nx\n";
        let index = LineIndex::new(text);
        for i in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            if i > 0 && text.as_bytes()[i - 1] == b'\r' {
                continue;
            }
            assert_eq!(offset(text, index.position(i)), i, "{i}");
        }
    }

    #[test]
    fn a_long_line_uses_its_marks() {
        let text = format!("x\n{}", "é@a.md ".repeat(20_000));
        let index = LineIndex::new(&text);
        assert!(index.marks.len() > 100);
        for offset in [0, 2, 3, 1025, 50_001, 100_000, text.len()] {
            assert_eq!(index.position(offset), position(&text, offset), "{offset}");
        }
        for column in [1, 2, 1000, 70_000, 140_000, 140_001, 999_999] {
            assert_eq!(
                index.offset_of_line_column(2, column),
                offset_of_line_column(&text, 2, column),
                "{column}"
            );
        }
    }

    proptest! {
        /// The index agrees with the model on any text, at every offset and column.
        #[test]
        fn the_index_agrees_with_the_model(
            parts in proptest::collection::vec(prop_oneof!["[a-z ]{0,40}", "[é😀\r\n]{0,4}", "\\PC{0,8}"], 0..60),
            offsets in proptest::collection::vec(0usize..3000, 1..20),
            lines in proptest::collection::vec((0u32..20, 0u32..300), 1..20),
        ) {
            let text = parts.concat();
            let marked = LineIndex::new(&text);
            // Marks every few bytes, so that the model meets many of them.
            let mut dense = LineIndex::new(&text);
            if !text.is_ascii() {
                dense.marks = text.char_indices().filter(|(i, _)| i % 3 == 0).map(|(i, _)| {
                    let start = text[..i].rfind('\n').map_or(0, |n| n + 1);
                    let (_, lsp_start) = lsp_line_of(&text, i);
                    let units = text[lsp_start..i].chars().map(char::len_utf16).sum();
                    Mark { byte: i, chars: text[start..i].chars().count(), units }
                }).collect();
            }
            for offset in offsets {
                let expected = position(&text, offset);
                prop_assert_eq!(marked.position(offset), expected);
                prop_assert_eq!(dense.position(offset), expected);
            }
            for (line, column) in lines {
                let expected = offset_of_line_column(&text, line, column);
                prop_assert_eq!(marked.offset_of_line_column(line, column), expected);
                prop_assert_eq!(dense.offset_of_line_column(line, column), expected);
            }
        }
    }
}
