//! Positions: LSP counts UTF-16 code units within a line; ctx counts bytes (spans) and
//! Unicode scalar values (diagnostic columns). Every conversion clamps, so a client that
//! sends a position past the end of a line or of the text gets the nearest valid place.

use lsp_types::{Position, Range};

/// The byte offset of an LSP position in `text`, clamped to the end of its line (and of the
/// text).
pub(crate) fn offset(text: &str, position: Position) -> usize {
    let mut start = 0;
    for _ in 0..position.line {
        match text[start..].find('\n') {
            Some(n) => start += n + 1,
            None => return text.len(),
        }
    }
    let line = line_at(text, start);
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= position.character as usize {
            return start + i;
        }
        units += c.len_utf16();
    }
    start + line.len()
}

/// The LSP position of a byte offset (clamped to the text, and down to a character
/// boundary).
pub(crate) fn position(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    let line = before.matches('\n').count();
    let character: usize = before[line_start..].chars().map(char::len_utf16).sum();
    Position::new(to_u32(line), to_u32(character))
}

/// The LSP range of a byte span.
pub(crate) fn range(text: &str, start: usize, end: usize) -> Range {
    Range::new(position(text, start), position(text, end))
}

/// The byte offset of a 1-based line and a 1-based column counted in Unicode scalar values
/// (ctx's diagnostics), clamped.
pub(crate) fn offset_of_line_column(text: &str, line: u32, column: u32) -> usize {
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

/// The text of the line starting at byte `start`, without its line ending.
pub(crate) fn line_at(text: &str, start: usize) -> &str {
    let rest = &text[start..];
    let line = rest.find('\n').map_or(rest, |n| &rest[..n]);
    line.strip_suffix('\r').unwrap_or(line)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn astral_characters_take_two_units() {
        let text = "a😀b @[x.md]\nsecond";
        // `😀` is one scalar value, four bytes and two UTF-16 units.
        assert_eq!(offset(text, Position::new(0, 3)), 5);
        assert_eq!(offset(text, Position::new(0, 5)), 7);
        assert_eq!(position(text, 7), Position::new(0, 5));
        assert_eq!(offset_of_line_column(text, 1, 4), 6);
        assert_eq!(position(text, offset_of_line_column(text, 1, 5)), Position::new(0, 5));
    }

    #[test]
    fn positions_clamp() {
        let text = "ab\ncd";
        assert_eq!(offset(text, Position::new(0, 99)), 2);
        assert_eq!(offset(text, Position::new(7, 0)), 5);
        assert_eq!(position(text, 99), Position::new(1, 2));
        assert_eq!(offset_of_line_column(text, 9, 9), 5);
        // Inside a code point: down to its start.
        assert_eq!(position("😀", 2), Position::new(0, 0));
    }

    #[test]
    fn round_trip() {
        let text = "é😀\r\nx\n";
        for i in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            if i > 0 && text.as_bytes()[i - 1] == b'\r' {
                continue;
            }
            assert_eq!(offset(text, position(text, i)), i, "{i}");
        }
    }
}
