//! Makes hidden content visible (assembly.md §7, "Hidden and control characters").
//!
//! File content can hide instructions from the person who reviews it (the "rules file
//! backdoor"), and can drive the terminal it is printed on. So:
//! - Unicode Tag characters (U+E0000–U+E007F), bidi controls (U+202A–U+202E,
//!   U+2066–U+2069) and zero-width characters (U+200B–U+200D, U+2060, U+FEFF) are written
//!   as `\u{E0049}`, upper-case hex as in the spec, with `W_HIDDEN_TEXT`;
//! - C0 control characters other than tab, line feed, carriage return and form feed, DEL
//!   (U+007F) and the C1 controls (U+0080–U+009F) are written as `\u{1b}`, lower-case hex as
//!   in the spec (and as Rust's `{:?}` writes them), with `W_CONTROL`.
//!
//! The zero-width characters, DEL and the C1 controls go past the shared spec, which names
//! only the first two sets: a zero-width joiner hides text as well as a Tag character does,
//! and some terminals obey 8-bit C1 controls (U+009B is CSI).
//! U+FEFF is a byte order mark only as the very first character of a file, and the reading
//! of a file removes it there ([`crate::decode()`]), so every U+FEFF that reaches [`sanitize`]
//! is past the start and made visible. Nothing else is altered.
//!
//! The common case, clean text, is one pass over the bytes, 64 at a time, and returns the
//! input borrowed; text with something to make visible is copied in runs between the
//! characters rewritten.
//!
//! It lives beside the decoding of file text, below every crate that shows such text: the
//! assembler (which re-exports it as `ctx_assemble::sanitize`), a conversation's history and
//! transcripts, the servers and the command line make the same set visible with it.

use std::borrow::Cow;
use std::fmt::Write;

use ctx_diagnostics::Code;

/// Text with hidden and control characters made visible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sanitized<'a> {
    /// The text; borrowed when nothing changed.
    pub text: Cow<'a, str>,
    /// How many Tag, bidi and zero-width characters were made visible.
    pub hidden: usize,
    /// 1-based line of the first of them, 0 when there is none.
    pub hidden_line: u32,
    /// How many control characters were made visible.
    pub control: usize,
    /// 1-based line of the first of them, 0 when there is none.
    pub control_line: u32,
    /// Byte offsets in the given text of the first hidden and the first control character.
    first_at: [Option<usize>; 2],
}

impl Sanitized<'_> {
    /// Whether anything was changed.
    pub fn changed(&self) -> bool {
        self.hidden + self.control > 0
    }

    /// The warnings to report, with the 1-based line and column (in characters) of each one's
    /// first occurrence in `text`, the text given to [`sanitize`].
    pub fn warnings_at(&self, text: &str) -> Vec<(Code, u32, u32, String)> {
        let mut found: Vec<(Code, u32, u32, String)> = self
            .warnings()
            .into_iter()
            .map(|(code, line, message)| {
                let at = self.first_at[usize::from(code == Code::Control)].unwrap_or(0);
                let before = &text[..at.min(text.len())];
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                let column = 1 + u32::try_from(before[line_start..].chars().count()).unwrap_or(0);
                (code, line, column, message)
            })
            .collect();
        // In the order of the text, as the walk meets them.
        found.sort_by_key(|(_, line, column, _)| (*line, *column));
        found
    }

    /// The warnings to report, `W_HIDDEN_TEXT` then `W_CONTROL`, each with the 1-based line of
    /// its first occurrence (in the text given to [`sanitize`]) and a lower-case message.
    pub fn warnings(&self) -> Vec<(Code, u32, String)> {
        let mut out = Vec::new();
        if self.hidden > 0 {
            out.push((Code::HiddenText, self.hidden_line, message(Code::HiddenText, self.hidden)));
        }
        if self.control > 0 {
            out.push((Code::Control, self.control_line, message(Code::Control, self.control)));
        }
        out
    }
}

/// The message of a warning about `n` characters made visible: `code` is
/// [`Code::HiddenText`] or [`Code::Control`]. For callers that sanitise many values and
/// report them together.
pub fn message(code: Code, n: usize) -> String {
    if code == Code::HiddenText {
        format!(
            "{n} hidden unicode character{} (tag, bidi control or zero-width) made visible",
            plural(n)
        )
    } else {
        format!("{n} control character{} made visible", plural(n))
    }
}

/// What was made visible in a text sanitised part by part, for the warnings of the whole.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    counts: [usize; 2],
    /// The line and column of the first of each kind in the whole text.
    first: [Option<(u32, u32)>; 2],
}

impl Tally {
    /// Adds what sanitising `part` found; `first_line` is the line of the whole text the part
    /// starts on, and `first_column` how many characters of that line came before the part.
    pub fn add(&mut self, part: &str, found: &Sanitized<'_>, first_line: u32, first_column: u32) {
        if !found.changed() {
            return;
        }
        for (code, line, column, _) in found.warnings_at(part) {
            let kind = usize::from(code == Code::Control);
            let column = if line == 1 { column.saturating_add(first_column) } else { column };
            self.first[kind].get_or_insert((first_line + line.saturating_sub(1), column));
        }
        self.counts[0] += found.hidden;
        self.counts[1] += found.control;
    }

    /// Whether the first of each kind was met: the parts after it change only the counts, so
    /// the line they start on no longer matters.
    pub fn settled(&self) -> bool {
        self.first.iter().all(Option::is_some)
    }

    /// The warnings of the whole text, as [`Sanitized::warnings_at`] gives them for a text
    /// sanitised at once.
    pub fn warnings(&self) -> Vec<(Code, u32, u32, String)> {
        let mut found: Vec<(Code, u32, u32, String)> = [Code::HiddenText, Code::Control]
            .into_iter()
            .enumerate()
            .filter_map(|(kind, code)| {
                let (line, column) = self.first[kind]?;
                Some((code, line, column, message(code, self.counts[kind])))
            })
            .collect();
        // In the order of the text, as the walk meets them.
        found.sort_by_key(|(_, line, column, _)| (*line, *column));
        found
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Bytes that may start something to make visible: C0 controls other than tab, LF, FF and CR;
/// DEL; 0xC2, the lead byte of the C1 controls; 0xE2, the lead byte of U+200B–U+200D, U+2060,
/// U+202A–U+202E and U+2066–U+2069; 0xEF, the lead byte of U+FEFF; and 0xF3, the lead byte of
/// the Tag characters.
static LEAD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = !matches!(b, 0x09 | 0x0a | 0x0c | 0x0d);
        b += 1;
    }
    table[0x7f] = true;
    table[0xc2] = true;
    table[0xe2] = true;
    table[0xef] = true;
    table[0xf3] = true;
    table
};

/// The offset of the first character at or after `from` that [`sanitize`] makes visible.
///
/// Clean text is the common case, so blocks of [`BLOCK`] bytes are looked at together: a
/// block where no byte is [`suspect`] holds nothing to make visible and is skipped whole
/// (the compiler checks its bytes sixteen at a time, or 32 with AVX2), so tabs and line ends
/// do not slow the search. In the other blocks each [`LEAD`] byte is checked with the bytes
/// after it ([`hidden_at`]): text full of other characters with the same lead bytes (Latin-1
/// symbols, dashes and quotes, full-width punctuation) is never decoded.
fn next_hidden(bytes: &[u8], from: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, the one thing the function asks beyond what any
        // caller may do; its body is the safe code of `next_hidden_in`.
        #[allow(unsafe_code)]
        return unsafe { next_hidden_avx2(bytes, from) };
    }
    next_hidden_in(bytes, from)
}

/// [`next_hidden_in`] compiled for AVX2: the same search, twice the bytes an instruction.
/// Half the time of the baseline's on a large file of source text.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn next_hidden_avx2(bytes: &[u8], from: usize) -> Option<usize> {
    next_hidden_in(bytes, from)
}

/// The search of [`next_hidden`], for any processor.
#[inline(always)]
fn next_hidden_in(bytes: &[u8], from: usize) -> Option<usize> {
    let found = |at: usize| LEAD[usize::from(bytes[at])] && hidden_at(bytes, at);
    let (blocks, _) = bytes[from..].as_chunks::<BLOCK>();
    let mut offset = from;
    for block in blocks {
        if block_suspect(block)
            && let Some(at) = (offset..offset + BLOCK).find(|&at| found(at))
        {
            return Some(at);
        }
        offset += BLOCK;
    }
    (offset..bytes.len()).find(|&at| found(at))
}

/// How many bytes [`next_hidden`] looks at together.
const BLOCK: usize = 64;

/// Whether a block may hold a [`LEAD`] byte; `false` means it certainly does not.
#[inline(always)]
fn block_suspect(block: &[u8; BLOCK]) -> bool {
    // No early exit and no table: the loop becomes vector compares.
    block.iter().fold(0u8, |any, &b| any | u8::from(suspect(b))) != 0
}

/// Whether `b` may be a [`LEAD`] byte: exact below 0x80 (a C0 control other than tab, line
/// feed, form feed and carriage return, or DEL), and `true` for every byte from 0x80.
#[inline(always)]
fn suspect(b: u8) -> bool {
    // Below 0x20 or from 0x7F: one more than the byte, read as signed, is below 0x21.
    let outside = i8::from_ne_bytes([b.wrapping_add(1)]) < 0x21;
    // Tab, line feed, form feed and carriage return: 0x09..=0x0D but 0x0B.
    let spacing = (b.wrapping_sub(0x09) < 5) & (b != 0x0b);
    outside & !spacing
}

/// Whether the character starting at `at`, a [`LEAD`] byte, is one to make visible
/// ([`class`] on the encoded character, compared byte by byte).
#[inline(always)]
fn hidden_at(bytes: &[u8], at: usize) -> bool {
    let next = |n: usize| bytes.get(at + n).copied().unwrap_or(0);
    match bytes[at] {
        // C1 controls: U+0080–U+009F.
        0xc2 => matches!(next(1), 0x80..=0x9f),
        // U+200B–U+200D, U+202A–U+202E; U+2060, U+2066–U+2069.
        0xe2 => match next(1) {
            0x80 => matches!(next(2), 0x8b..=0x8d | 0xaa..=0xae),
            0x81 => matches!(next(2), 0xa0 | 0xa6..=0xa9),
            _ => false,
        },
        // U+FEFF.
        0xef => next(1) == 0xbb && next(2) == 0xbf,
        // Tag characters: U+E0000–U+E007F.
        0xf3 => next(1) == 0xa0 && matches!(next(2), 0x80 | 0x81),
        // C0 controls but tab, line feed, form feed and carriage return; DEL.
        _ => true,
    }
}

/// Whether `text` may hold something [`sanitize`] would make visible; `false` means it
/// certainly does not.
pub fn may_change(text: &str) -> bool {
    next_hidden(text.as_bytes(), 0).is_some()
}

/// What a character is, for sanitising.
fn class(c: char) -> Option<Code> {
    match c {
        '\u{E0000}'..='\u{E007F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200B}'..='\u{200D}'
        | '\u{2060}'
        | '\u{FEFF}' => Some(Code::HiddenText),
        '\t' | '\n' | '\x0c' | '\r' => None,
        '\0'..='\x1f' | '\u{7f}'..='\u{9f}' => Some(Code::Control),
        _ => None,
    }
}

/// Makes hidden and control characters in `text` visible.
pub fn sanitize(text: &str) -> Sanitized<'_> {
    let bytes = text.as_bytes();
    let mut out = Sanitized {
        text: Cow::Borrowed(text),
        hidden: 0,
        hidden_line: 0,
        control: 0,
        control_line: 0,
        first_at: [None; 2],
    };
    // Fast path: find the first character that needs rewriting, if any.
    let Some(first) = next_hidden(bytes, 0) else {
        return out;
    };
    let mut buf = String::with_capacity(text.len() + 16);
    // The text up to `copied` is in `buf`; the line of `counted` is `line`.
    let (mut copied, mut counted, mut line) = (0, 0, 1u32);
    let mut next = Some(first);
    // From one character to make visible to the next: the clean text between is copied whole.
    while let Some(at) = next {
        buf.push_str(&text[copied..at]);
        let Some(c) = text[at..].chars().next() else { break };
        copied = at + c.len_utf8();
        next = next_hidden(bytes, copied);
        let kind = match class(c) {
            Some(Code::HiddenText) => 0,
            Some(_) => 1,
            None => {
                buf.push(c);
                continue;
            }
        };
        if out.first_at[kind].is_none() {
            // Lines are counted only for the first of each kind.
            let ends = memchr::memchr_iter(b'\n', &bytes[counted..at]).count();
            line = line.saturating_add(u32::try_from(ends).unwrap_or(u32::MAX));
            counted = at;
            out.first_at[kind] = Some(at);
            if kind == 0 {
                out.hidden_line = line;
            } else {
                out.control_line = line;
            }
        }
        if kind == 0 {
            out.hidden += 1;
            let _ = write!(buf, "\\u{{{:X}}}", u32::from(c));
        } else {
            out.control += 1;
            let _ = write!(buf, "\\u{{{:x}}}", u32::from(c));
        }
    }
    buf.push_str(&text[copied..]);
    out.text = Cow::Owned(buf);
    out
}

/// Makes hidden and control characters visible in every string of a JSON value, the keys of
/// its objects included, for values that carry file text on (transcript turns, tool results,
/// JSON output); returns how many hidden and how many control characters were made visible.
pub fn sanitize_json(value: &mut serde_json::Value) -> (usize, usize) {
    let mut found = (0, 0);
    sanitize_value(value, &mut found);
    found
}

fn sanitize_value(value: &mut serde_json::Value, found: &mut (usize, usize)) {
    use serde_json::Value;
    match value {
        Value::String(text) => sanitize_string(text, found),
        Value::Array(items) => items.iter_mut().for_each(|item| sanitize_value(item, found)),
        Value::Object(map) if map.keys().any(|key| may_change(key)) => {
            for (mut key, mut item) in std::mem::take(map) {
                sanitize_string(&mut key, found);
                sanitize_value(&mut item, found);
                map.insert(key, item);
            }
        }
        Value::Object(map) => map.values_mut().for_each(|item| sanitize_value(item, found)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn sanitize_string(text: &mut String, found: &mut (usize, usize)) {
    let clean = sanitize(text);
    if clean.changed() {
        found.0 += clean.hidden;
        found.1 += clean.control;
        let shown = clean.text.into_owned();
        *text = shown;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn warnings_say_line_and_column() {
        let text = "ab\ncd\u{1b}e\u{202e}f";
        assert_eq!(
            sanitize(text).warnings_at(text),
            [
                (Code::Control, 2, 3, "1 control character made visible".to_owned()),
                (
                    Code::HiddenText,
                    2,
                    5,
                    "1 hidden unicode character (tag, bidi control or zero-width) made visible"
                        .to_owned()
                ),
            ]
        );
    }

    #[test]
    fn table() {
        let cases = [
            ("plain ascii\ttab\r\nform\x0cfeed", "plain ascii\ttab\r\nform\x0cfeed", 0, 0),
            ("esc \x1b[31mred", "esc \\u{1b}[31mred", 0, 1),
            ("nul\0bell\x07", "nul\\u{0}bell\\u{7}", 0, 2),
            (
                "del \x7f, c1 \u{80}\u{9b}[2J\u{9f}",
                "del \\u{7f}, c1 \\u{80}\\u{9b}[2J\\u{9f}",
                0,
                4,
            ),
            // Characters beside the C1 controls and DEL are untouched.
            ("~ \u{a0}\u{a9}\u{ff} \u{100}", "~ \u{a0}\u{a9}\u{ff} \u{100}", 0, 0),
            (
                "zw a\u{200B}b\u{200C}c\u{200D}d\u{2060}e\u{FEFF}",
                "zw a\\u{200B}b\\u{200C}c\\u{200D}d\\u{2060}e\\u{FEFF}",
                5,
                0,
            ),
            // A U+FEFF that reaches the check is never a byte order mark: reading a file
            // removes that one.
            ("\u{FEFF}start", "\\u{FEFF}start", 1, 0),
            ("tag \u{E0049}\u{E0020}", "tag \\u{E0049}\\u{E0020}", 2, 0),
            ("bidi \u{202E}abc\u{202C}", "bidi \\u{202E}abc\\u{202C}", 2, 0),
            ("iso \u{2066}x\u{2069}", "iso \\u{2066}x\\u{2069}", 2, 0),
            // Other characters with the same lead bytes are untouched.
            (
                "dash \u{2014} \u{200A}\u{200E}\u{2029}\u{205F}\u{2061} \u{2070} \u{E0080} \u{F0000} \u{FEFE}\u{FF0C}",
                "dash \u{2014} \u{200A}\u{200E}\u{2029}\u{205F}\u{2061} \u{2070} \u{E0080} \u{F0000} \u{FEFE}\u{FF0C}",
                0,
                0,
            ),
            ("ünïcödé – ok", "ünïcödé – ok", 0, 0),
            ("", "", 0, 0),
        ];
        for (input, expect, hidden, control) in cases {
            let s = sanitize(input);
            assert_eq!(s.text, expect, "{input:?}");
            assert_eq!((s.hidden, s.control), (hidden, control), "{input:?}");
            assert_eq!(matches!(s.text, Cow::Borrowed(_)), !s.changed(), "{input:?}");
        }
    }

    #[test]
    fn warnings_name_first_line() {
        let s = sanitize("a\nb \u{2014}\nc\x1b\n\u{E0041}\u{E0042}\x1b");
        assert_eq!(
            s.warnings(),
            [
                (
                    Code::HiddenText,
                    4,
                    "2 hidden unicode characters (tag, bidi control or zero-width) made visible"
                        .to_string()
                ),
                (Code::Control, 3, "2 control characters made visible".to_string()),
            ]
        );
        assert!(sanitize("clean").warnings().is_empty());
    }

    #[test]
    fn the_block_filter_sees_every_lead_byte_at_every_position() {
        for b in 0..=255u8 {
            for at in 0..BLOCK {
                let mut block = [b'a'; BLOCK];
                block[at] = b;
                // Exact for the bytes below 0x80; every byte from 0x80 is let through.
                let want = LEAD[usize::from(b)] || b >= 0x80;
                assert_eq!(block_suspect(&block), want, "byte {b:#04x} at {at}");
            }
        }
    }

    #[test]
    fn every_string_of_a_json_value() {
        let mut value = serde_json::json!({
            "path": "src/\u{1b}[2Ja.c",
            "list": ["ok", "b\u{202e}c", 3, null],
            "k\u{200d}": { "deep": "\u{9b}" },
        });
        assert_eq!(sanitize_json(&mut value), (2, 2));
        assert_eq!(
            value,
            serde_json::json!({
                "path": "src/\\u{1b}[2Ja.c",
                "list": ["ok", "b\\u{202E}c", 3, null],
                "k\\u{200D}": { "deep": "\\u{9b}" },
            })
        );
        let mut clean = serde_json::json!({"a": ["b", 1]});
        assert_eq!(sanitize_json(&mut clean), (0, 0));
    }

    #[test]
    fn the_byte_check_agrees_with_the_classes_for_every_character() {
        let mut buf = [0u8; 4];
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let encoded = c.encode_utf8(&mut buf).as_bytes();
            let found = LEAD[usize::from(encoded[0])] && hidden_at(encoded, 0);
            assert_eq!(found, class(c).is_some(), "{c:?}");
            // Followed by more text, too.
            let mut text = c.to_string();
            text.push_str("\u{80}x");
            assert_eq!(next_hidden(text.as_bytes(), 0) == Some(0), class(c).is_some(), "{c:?}");
        }
    }

    proptest! {
        /// The block-at-a-time search finds exactly the first character a plain scan finds,
        /// from any start, in bytes mixing ASCII, controls, lead bytes and the bytes that
        /// follow them.
        #[test]
        fn block_search_agrees_with_a_plain_scan(
            bytes in proptest::collection::vec(
                prop_oneof![
                    4 => 0x20u8..=0x7f,
                    1 => 0u8..0x20,
                    1 => 0x80u8..=0xff,
                    2 => prop::sample::select(vec![0xc2u8, 0xe2, 0xef, 0xf3, 0x80, 0x81, 0x8b, 0x9f, 0xa0, 0xbb, 0xbf]),
                ],
                0..160,
            ),
            from in 0usize..160,
        ) {
            let from = from.min(bytes.len());
            let plain = (from..bytes.len())
                .find(|&i| LEAD[usize::from(bytes[i])] && hidden_at(&bytes, i));
            prop_assert_eq!(next_hidden(&bytes, from), plain);
            // Whichever build of the search the processor runs, the other agrees.
            prop_assert_eq!(next_hidden_in(&bytes, from), plain);
        }

        /// Clean text comes back borrowed and unchanged.
        #[test]
        fn identity_on_clean(text in "[^\u{0}-\u{8}\u{b}\u{e}-\u{1f}\u{7f}-\u{9f}\u{200b}-\u{200d}\u{2060}\u{202a}-\u{202e}\u{2066}-\u{2069}\u{feff}\u{e0000}-\u{e007f}]*") {
            let s = sanitize(&text);
            prop_assert!(matches!(s.text, Cow::Borrowed(_)));
            prop_assert_eq!(s.text.as_ref(), text.as_str());
        }

        /// The rewrite that copies clean runs whole gives what rewriting character by
        /// character gives: the text, the counts and the line of the first of each kind.
        #[test]
        fn the_rewrite_agrees_with_a_character_by_character_one(
            pieces in proptest::collection::vec(
                prop_oneof![
                    4 => "[a-z <>]{0,80}",
                    2 => Just("\n".to_owned()),
                    1 => "[\u{0}-\u{1f}\u{7f}-\u{9f}]",
                    1 => "[\u{200b}-\u{200d}\u{2060}\u{202a}-\u{202e}\u{2066}-\u{2069}\u{feff}\u{e0000}-\u{e007f}]",
                    1 => "[\u{a0}-\u{3000}\u{e0080}]",
                ],
                0..40,
            ),
        ) {
            let text = pieces.concat();
            let s = sanitize(&text);
            let (mut want, mut line) = (String::new(), 1u32);
            let (mut counts, mut lines) = ([0usize; 2], [0u32; 2]);
            for c in text.chars() {
                match class(c) {
                    None => want.push(c),
                    Some(code) => {
                        let kind = usize::from(code == Code::Control);
                        counts[kind] += 1;
                        if lines[kind] == 0 {
                            lines[kind] = line;
                        }
                        if kind == 0 {
                            want.push_str(&format!("\\u{{{:X}}}", u32::from(c)));
                        } else {
                            want.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
                        }
                    }
                }
                if c == '\n' {
                    line += 1;
                }
            }
            prop_assert_eq!(s.text.as_ref(), want.as_str());
            prop_assert_eq!((s.hidden, s.control), (counts[0], counts[1]));
            prop_assert_eq!((s.hidden_line, s.control_line), (lines[0], lines[1]));
        }

        /// The output never contains a character to hide, and the counts match the input.
        #[test]
        fn output_is_clean(text in any::<String>()) {
            let s = sanitize(&text);
            prop_assert!(s.text.chars().all(|c| class(c).is_none()));
            let hidden = text.chars().filter(|&c| class(c) == Some(Code::HiddenText)).count();
            let control = text.chars().filter(|&c| class(c) == Some(Code::Control)).count();
            prop_assert_eq!((s.hidden, s.control), (hidden, control));
        }
    }
}
