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

/// If a fence opens at `at` (which holds a backtick or tilde at the start of a line, indented
/// at most three spaces), returns the end of the whole block and whether it was closed.
/// The block ends after the closing fence line's fence characters and trailing blanks (before
/// its line ending), or at the end of the text when unclosed.
pub(crate) fn fenced_block(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
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
        let line = &bytes[line_start..end];
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
/// at `from`. The span may run over line breaks but not over a blank line (the end of a
/// paragraph). Returns the end of the closing run, or `Err(limit)` with the position where
/// the search stopped, so that a later opener of the same length before `limit` can fail at
/// once.
pub(crate) fn code_span_close(bytes: &[u8], from: usize, len: usize) -> Result<usize, usize> {
    let mut i = from;
    while let Some(off) = memchr2(b'`', b'\n', &bytes[i..]) {
        let at = i + off;
        if bytes[at] == b'\n' {
            let rest = &bytes[at + 1..];
            let blank = rest.iter().take_while(|&&b| matches!(b, b' ' | b'\t' | b'\r')).count();
            if blank == rest.len() || rest[blank] == b'\n' {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences() {
        let t = b"```rust\nlet a = 1;\n```\nafter";
        assert_eq!(fenced_block(t, 0), Some((22, true)));
        let t = b"~~~~\n~~~\n~~~~~  \nx";
        assert_eq!(fenced_block(t, 0), Some((16, true)));
        let t = b"```\nnever closed\n";
        assert_eq!(fenced_block(t, 0), Some((t.len(), false)));
        assert_eq!(fenced_block(b"``` a`b\n```", 0), None);
        assert_eq!(fenced_block(b"``x", 0), None);
        let t = b"```\r\nx\r\n```\r\n";
        assert_eq!(fenced_block(t, 0), Some((11, true)));
        let t = b"```\n    ```\n```";
        assert_eq!(fenced_block(t, 0), Some((t.len(), true)));
    }

    #[test]
    fn indents() {
        assert!(fence_indent_ok(b"   ```", 3));
        assert!(!fence_indent_ok(b"    ```", 4));
        assert!(fence_indent_ok(b"a\n ```", 3));
        assert!(!fence_indent_ok(b"a ```", 2));
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
