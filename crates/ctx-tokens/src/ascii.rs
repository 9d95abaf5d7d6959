//! o200k's pre-tokenisation of ASCII text, by hand: the piece that starts at a position, found
//! with a table of byte classes instead of a search of the lazy DFA (o200k.rs), which costs
//! more per piece than the piece's own bytes do.
//!
//! It follows the patterns of o200k.rs as the regex engine runs them (the first alternative
//! that matches, each repetition greedy, backtracking as a leftmost-first search does), for
//! ASCII only: whenever its answer would depend on a byte that is not ASCII (a letter or
//! digit of another script may continue a run, a no-break space is white space, a long `s`
//! matches `'s`), it gives up and the caller asks the DFA. The tests compare the two on every
//! short ASCII text of a small alphabet and on random text.

/// A lower-case ASCII letter.
const LOWER: u8 = 1;
/// An upper-case ASCII letter.
const UPPER: u8 = 2;
/// An ASCII digit.
const DIGIT: u8 = 4;
/// White space (`\s`): tab, line feed, vertical tab, form feed, carriage return, space.
const SPACE: u8 = 8;
/// A line ending byte: carriage return or line feed (also [`SPACE`]).
const NEWLINE: u8 = 16;
/// Any other ASCII byte: punctuation, symbols, control characters (`[^\s\p{L}\p{N}]`).
const OTHER: u8 = 32;
/// A byte that is not ASCII: the DFA decides.
const FOREIGN: u8 = 64;
/// Past the end of the text.
const END: u8 = 128;

const LETTER: u8 = LOWER | UPPER;

/// The class of every byte.
static CLASSES: [u8; 256] = {
    let mut classes = [FOREIGN; 256];
    let mut b = 0;
    while b < 128 {
        classes[b] = match b as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            b'\n' | b'\r' => SPACE | NEWLINE,
            b'\t' | 0x0b | 0x0c | b' ' => SPACE,
            _ => OTHER,
        };
        b += 1;
    }
    classes
};

/// The class of the byte at `at`, [`END`] past the end.
#[inline]
fn class(text: &[u8], at: usize) -> u8 {
    text.get(at).map_or(END, |&b| CLASSES[usize::from(b)])
}

/// The end of the run of bytes of `classes` from `at`, or `None` when the run stops at a byte
/// that is not ASCII (which might continue it).
#[inline]
fn run(text: &[u8], mut at: usize, classes: u8) -> Option<usize> {
    loop {
        let c = class(text, at);
        if c & classes == 0 {
            return (c != FOREIGN).then_some(at);
        }
        at += 1;
    }
}

/// The high bit of every byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Every byte of a word set to `b`.
const fn splat(b: u8) -> u64 {
    u64::from_le_bytes([b; 8])
}

/// The eight bytes of `text` from `at` as a little-endian word, when there are eight.
#[inline]
fn word(text: &[u8], at: usize) -> Option<u64> {
    let bytes: [u8; 8] = text.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// The high bit of each byte of `x` that is a lower-case ASCII letter. No byte's sum carries
/// into the next: the high bits are cleared before the additions, and each sum stays below
/// 256.
#[inline]
fn lower_bytes(x: u64) -> u64 {
    let low = x & !HIGH;
    // At least `a` (0x61 + 0x1f = 0x80), at least `{` (0x7b + 0x05 = 0x80), and ASCII.
    let from_a = low.wrapping_add(splat(0x1f));
    let from_brace = low.wrapping_add(splat(0x05));
    from_a & !from_brace & !x & HIGH
}

/// The high bit of each byte of `x` that is an ASCII space.
#[inline]
fn space_bytes(x: u64) -> u64 {
    // The bytes that differ from a space are those left non-zero by the xor; a byte is zero
    // when adding 0x7f to its low bits leaves the high bit clear and its own high bit is clear.
    let diff = x ^ splat(b' ');
    !((diff & !HIGH).wrapping_add(splat(0x7f)) | diff) & HIGH
}

/// The end of the run of lower-case letters from `at`, as [`run`] finds it with
/// [`LOWER`], eight bytes at a time: a word's letters are most of the bytes of prose and code.
#[inline]
fn run_lower(text: &[u8], mut at: usize) -> Option<usize> {
    while let Some(x) = word(text, at) {
        let stop = !lower_bytes(x) & HIGH;
        if stop != 0 {
            let end = at + (stop.trailing_zeros() / 8) as usize;
            return (class(text, end) != FOREIGN).then_some(end);
        }
        at += 8;
    }
    run(text, at, LOWER)
}

/// The first byte from `at` that is not an ASCII space (the end of the text when there is
/// none), eight bytes at a time: indentation is most of the white space of code.
#[inline]
fn skip_spaces(text: &[u8], mut at: usize) -> usize {
    while let Some(x) = word(text, at) {
        let stop = !space_bytes(x) & HIGH;
        if stop != 0 {
            return at + (stop.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while text.get(at) == Some(&b' ') {
        at += 1;
    }
    at
}

/// The end of the piece that starts at `at` (`at < text.len()`), as the patterns of o200k.rs
/// would split it, or `None` when that depends on a byte that is not ASCII.
#[inline]
pub(crate) fn piece(text: &[u8], at: usize) -> Option<usize> {
    let c = class(text, at);
    if c == FOREIGN {
        return None;
    }
    // A run of letters, after one byte that is neither a letter, a digit nor a line ending:
    // `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+('s|…)?` or the same with `+` and `*` swapped.
    let letters = if c & LETTER != 0 {
        Some(at)
    } else if c & (OTHER | SPACE) != 0 && c & NEWLINE == 0 {
        match class(text, at + 1) {
            FOREIGN => return None,
            next if next & LETTER != 0 => Some(at + 1),
            _ => None,
        }
    } else {
        None
    };
    if let Some(start) = letters {
        let upper = run(text, start, UPPER)?;
        let end = run_lower(text, upper)?;
        return contraction(text, end);
    }
    if c == DIGIT {
        // `\p{N}{1,3}`.
        let mut end = at + 1;
        while end < at + 3 {
            match class(text, end) {
                DIGIT => end += 1,
                FOREIGN => return None,
                _ => break,
            }
        }
        return Some(end);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`.
    let others = if c == OTHER {
        Some(at)
    } else if text[at] == b' ' {
        match class(text, at + 1) {
            FOREIGN => return None,
            OTHER => Some(at + 1),
            _ => None,
        }
    } else {
        None
    };
    if let Some(start) = others {
        let mut end = run(text, start, OTHER)?;
        while matches!(text.get(end), Some(b'\r' | b'\n' | b'/')) {
            end += 1;
        }
        return Some(end);
    }
    // White space: `\s*[\r\n]+`, then `\s+$`, then `\s+(?!\S)`, then `\s+`.
    // The spaces first, a word at a time: no line ending is among them.
    let spaces = skip_spaces(text, at);
    let end = run(text, spaces, SPACE)?;
    if let Some(last) = text[spaces..end].iter().rposition(|&b| b == b'\r' || b == b'\n') {
        return Some(spaces + last + 1);
    }
    if end == text.len() || end - at == 1 {
        return Some(end);
    }
    Some(end - 1)
}

/// The end of a run of letters ending at `end`, with `'s`, `'t`, `'re`, `'ve`, `'m`, `'ll` or
/// `'d` after it (in any case) when there is one.
#[inline]
fn contraction(text: &[u8], end: usize) -> Option<usize> {
    match text.get(end) {
        None => return Some(end),
        Some(&b) if !b.is_ascii() => return None,
        Some(b'\'') => {}
        Some(_) => return Some(end),
    }
    // The byte at `at` in lower case (`Some(None)` past the end), `None` when not ASCII.
    let lower = |at: usize| match text.get(at) {
        Some(b) if !b.is_ascii() => None,
        b => Some(b.map(u8::to_ascii_lowercase)),
    };
    Some(match lower(end + 1)? {
        Some(b's' | b't' | b'm' | b'd') => end + 2,
        Some(b'r' | b'v') if lower(end + 2)? == Some(b'e') => end + 3,
        Some(b'l') if lower(end + 2)? == Some(b'l') => end + 3,
        _ => end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_masks_agree_with_the_classes_on_every_byte() {
        for b in 0..=255u8 {
            // The byte in every lane, beside neighbours that would carry into it if a sum did.
            for other in [0u8, 0x7f, 0x80, 0xff, b'a', b' '] {
                let x = u64::from_le_bytes([other, b, other, b, other, other, b, other]);
                let lanes = |mask: u64| mask.to_le_bytes().map(|lane| lane == 0x80);
                let lower = lanes(lower_bytes(x));
                let space = lanes(space_bytes(x));
                for (i, lane) in x.to_le_bytes().into_iter().enumerate() {
                    assert_eq!(lower[i], lane.is_ascii_lowercase(), "{b:#x} {other:#x} {i}");
                    assert_eq!(space[i], lane == b' ', "{b:#x} {other:#x} {i}");
                }
            }
        }
    }

    /// A megabyte-long word or run of spaces, the attack on a splitter that would rescan: one
    /// piece found in one pass, its end where the byte loop puts it.
    #[test]
    fn a_megabyte_run_is_one_piece() {
        let word = vec![b'q'; 1 << 20];
        assert_eq!(piece(&word, 0), Some(word.len()));
        let mut spaces = vec![b' '; 1 << 20];
        assert_eq!(piece(&spaces, 0), Some(spaces.len()));
        spaces.push(b'x');
        // `\s+(?!\S)`: the last space goes with the word after it.
        assert_eq!(piece(&spaces, 0), Some(spaces.len() - 2));
        // A letter of another script inside the first word read may go on with the run.
        assert_eq!(run_lower("qqqqqéqqqqqqqqqq".as_bytes(), 0), None);
        assert_eq!(run_lower("qqqqq-qqqqqqqqqq".as_bytes(), 0), Some(5));
    }

    proptest::proptest! {
        #[test]
        fn word_runs_are_the_byte_runs(
            text in "[a-z]{0,20}[ a-zA-Z\n\té語\u{a0}]{0,4}[ ]{0,20}[a-z \t]{0,20}"
        ) {
            let bytes = text.as_bytes();
            for at in 0..=bytes.len() {
                proptest::prop_assert_eq!(run_lower(bytes, at), run(bytes, at, LOWER));
                let spaces = at + bytes[at..].iter().take_while(|&&b| b == b' ').count();
                proptest::prop_assert_eq!(skip_spaces(bytes, at), spaces);
            }
        }
    }
}
