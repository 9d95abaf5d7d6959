//! Text decoding: byte order marks, UTF-16 with and without one, legacy encodings
//! (windows-1252, GBK, Shift_JIS, …) and binary detection.
//!
//! The rule, in order (docs/assembly.md, "Reading"):
//!
//! 1. A UTF-32 or UTF-16 byte order mark: decoded strictly, binary on an invalid sequence.
//! 2. A NUL byte in the first 8 KiB: UTF-16 without a byte order mark when the NUL bytes of
//!    those 8 KiB stand on one side in at least a quarter of the code units (so mostly ASCII
//!    text), at least eight times and more than four times as often as on the other side,
//!    none makes a code unit
//!    with another, and the whole file decodes to text (below); binary otherwise.
//! 3. Valid UTF-8 (a UTF-8 byte order mark stripped): the text, unchanged.
//! 4. Anything else without a UTF-8 byte order mark: a legacy encoding, as
//!    [chardetng](https://docs.rs/chardetng) guesses it from 128 KiB from the first byte that
//!    is not ASCII on (from all of the bytes when the whole does not decode in that guess),
//!    decoded by encoding_rs without replacement, when no byte is NUL and the decoded result
//!    is text.
//!
//! Decoded text (steps 2 and 4) is text when it holds no U+0000, no noncharacter
//! U+FFFE/U+FFFF, and at most one control character (C0 but tab, line feed, vertical
//! tab, form feed and carriage return; DEL; C1) for every [`CONTROL_SHARE`] characters; one
//! SUB (U+001A) at the very end, the end-of-file mark of old DOS editors, is not counted.
//! Real binaries (compressed streams, executables, images) hold a control character in about
//! one byte of ten, and NUL bytes, so none of them passes.

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use ctx_diagnostics::Code;

use crate::Text;

/// How many leading bytes are searched for a NUL byte.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Decoded text (not UTF-8 to begin with) may hold one control character per this many
/// characters; more make it binary.
pub const CONTROL_SHARE: usize = 256;

/// The text encoding a file was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    /// UTF-8 without a byte order mark.
    Utf8,
    /// UTF-8 with a byte order mark, which was stripped.
    Utf8Bom,
    /// UTF-16 little endian, with a byte order mark.
    Utf16Le,
    /// UTF-16 big endian, with a byte order mark.
    Utf16Be,
    /// UTF-32 little endian, with a byte order mark.
    Utf32Le,
    /// UTF-32 big endian, with a byte order mark.
    Utf32Be,
    /// UTF-16 little endian without a byte order mark, told by where its NUL bytes stand.
    Utf16LeUnmarked,
    /// UTF-16 big endian without a byte order mark, told by where its NUL bytes stand.
    Utf16BeUnmarked,
    /// A legacy encoding, detected.
    Legacy(Legacy),
}

/// A legacy (not Unicode) encoding a text was detected in and decoded from: one of those of
/// the [Encoding Standard](https://encoding.spec.whatwg.org/) that chardetng detects
/// (windows-1250 to windows-1258, GBK, Big5, EUC-KR, Shift_JIS, EUC-JP, KOI8-U, IBM866,
/// ISO-8859-x, windows-874).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Legacy(&'static encoding_rs::Encoding);

impl Legacy {
    /// The encoding's name as the Encoding Standard writes it (`windows-1252`, `GBK`,
    /// `Shift_JIS`).
    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

impl Encoding {
    /// The encoding's name: `UTF-8`, `UTF-16LE`, `UTF-16BE`, `UTF-32LE`, `UTF-32BE`, or a
    /// legacy encoding's ([`Legacy::name`]).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 | Encoding::Utf8Bom => "UTF-8",
            Encoding::Utf16Le | Encoding::Utf16LeUnmarked => "UTF-16LE",
            Encoding::Utf16Be | Encoding::Utf16BeUnmarked => "UTF-16BE",
            Encoding::Utf32Le => "UTF-32LE",
            Encoding::Utf32Be => "UTF-32BE",
            Encoding::Legacy(legacy) => legacy.name(),
        }
    }

    /// Whether the text was UTF-8 (with or without a byte order mark), so read as it is.
    pub fn is_utf8(self) -> bool {
        matches!(self, Encoding::Utf8 | Encoding::Utf8Bom)
    }

    /// The name to tell the reader (warning `W_ENCODING` and a note in the output): that of
    /// any encoding but UTF-8.
    pub fn note(self) -> Option<&'static str> {
        (!self.is_utf8()).then(|| self.name())
    }
}

/// What reading a file as text gave.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Content {
    /// Decoded text, byte order mark removed; cloning it is cheap.
    Text {
        /// The text.
        text: Text,
        /// The encoding it was decoded from.
        encoding: Encoding,
    },
    /// Binary content (see the rule of this module): to be left out with warning
    /// [`Code::Binary`] (`W_BINARY`).
    Binary,
}

impl Content {
    /// The text, unless the content is binary.
    pub fn text(&self) -> Option<&Text> {
        match self {
            Content::Text { text, .. } => Some(text),
            Content::Binary => None,
        }
    }

    /// The warning this content calls for: `W_BINARY` for binary content, `W_ENCODING` for
    /// text that was not UTF-8.
    pub fn warning_code(&self) -> Option<Code> {
        match self {
            Content::Text { encoding, .. } => encoding.note().map(|_| Code::Encoding),
            Content::Binary => Some(Code::Binary),
        }
    }

    /// Bytes of memory held, used to weigh cache entries.
    pub(crate) fn weight(&self) -> usize {
        self.text().map_or(0, |t| t.len())
    }
}

/// Decodes raw file bytes.
pub fn decode(bytes: &[u8]) -> Content {
    decode_owned(bytes.to_vec())
}

/// Decodes raw file bytes, keeping UTF-8 text in the buffer it was read into
/// (no copy, whatever the size).
pub fn decode_owned(mut bytes: Vec<u8>) -> Content {
    // UTF-32 marks first: the UTF-32 LE mark starts with the UTF-16 LE one.
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE, 0, 0]) {
        return utf32(rest, u32::from_le_bytes, Encoding::Utf32Le);
    }
    if let Some(rest) = bytes.strip_prefix(&[0, 0, 0xFE, 0xFF]) {
        return utf32(rest, u32::from_be_bytes, Encoding::Utf32Be);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, u16::from_le_bytes, Encoding::Utf16Le);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, u16::from_be_bytes, Encoding::Utf16Be);
    }
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some() {
        return utf16_unmarked(&bytes);
    }
    let bom = bytes.starts_with(&[0xEF, 0xBB, 0xBF]);
    if bom {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(text) => {
            let encoding = if bom { Encoding::Utf8Bom } else { Encoding::Utf8 };
            Content::Text { text: Text::from(text), encoding }
        }
        // A UTF-8 byte order mark says what the rest is: bytes that are not UTF-8 after it
        // are not text.
        Err(_) if bom => Content::Binary,
        Err(err) => legacy(err.as_bytes()),
    }
}

/// What the first bytes of a file say about how it can be read part by part, for
/// [`crate::TextStream`]: as UTF-8 (which the whole file must then be), as binary, or only
/// whole (UTF-16 or UTF-32, with or without a byte order mark).
pub(crate) enum Sniffed {
    /// Maybe UTF-8: its text starts after this many bytes (a UTF-8 byte order mark).
    Utf8(u64),
    /// A NUL byte that no UTF-16 text would hold where it stands.
    Binary,
    /// Another Unicode encoding: to be decoded whole.
    Wide,
}

/// Tells how a file that starts with `head` (its first [`BINARY_SNIFF_BYTES`] at most) can be
/// read, as [`decode`] would read the whole.
pub(crate) fn sniff(head: &[u8]) -> Sniffed {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        // UTF-16 and UTF-32 (whose little-endian mark starts like UTF-16's).
        return Sniffed::Wide;
    }
    if head.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return Sniffed::Wide;
    }
    let head = &head[..head.len().min(BINARY_SNIFF_BYTES)];
    if memchr::memchr(0, head).is_some() {
        return match unmarked_order(head) {
            Some(_) => Sniffed::Wide,
            None => Sniffed::Binary,
        };
    }
    Sniffed::Utf8(if head.starts_with(&[0xEF, 0xBB, 0xBF]) { 3 } else { 0 })
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16, encoding: Encoding) -> Content {
    if !bytes.len().is_multiple_of(2) {
        return Content::Binary;
    }
    let units = bytes.chunks_exact(2).map(|c| unit([c[0], c[1]]));
    match char::decode_utf16(units).collect::<Result<String, _>>() {
        Ok(text) => Content::Text { text: Text::from(text), encoding },
        Err(_) => Content::Binary,
    }
}

fn utf32(bytes: &[u8], unit: fn([u8; 4]) -> u32, encoding: Encoding) -> Content {
    if !bytes.len().is_multiple_of(4) {
        return Content::Binary;
    }
    let text: Option<String> =
        bytes.chunks_exact(4).map(|c| char::from_u32(unit([c[0], c[1], c[2], c[3]]))).collect();
    match text {
        Some(text) => Content::Text { text: Text::from(text), encoding },
        None => Content::Binary,
    }
}

/// The NUL bytes on one side of the code units that UTF-16 without a byte order mark needs
/// before its order is guessed: eight characters of ASCII.
const MIN_UNMARKED_NULS: usize = 8;

/// The byte order of UTF-16 without a byte order mark that `head` (which holds a NUL byte)
/// may be: little endian when its NUL bytes stand second in a code unit in at least a quarter
/// of the units and more than four times as often as first, big endian the other way round;
/// `None` for an odd length, a start that is a UTF-8 byte order mark, too few NUL bytes or on
/// both sides alike, or a NUL code unit (two NUL bytes that make one unit, which no text
/// holds).
fn unmarked_order(head: &[u8]) -> Option<Encoding> {
    if !head.len().is_multiple_of(2) || head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return None;
    }
    let (mut first, mut second) = (0usize, 0usize);
    for unit in head.chunks(2) {
        match unit {
            [0, 0] => return None,
            [0, _] => first += 1,
            [_, 0] => second += 1,
            _ => {}
        }
    }
    // ASCII characters put their NUL byte on one side; the few characters of the form
    // U+xx00 (`一` is U+4E00) put theirs on the other. Text read as UTF-16 without a mark
    // must be a quarter ASCII at least: bytes of ASCII with a NUL here and there (a list
    // of names separated by NULs) make CJK-looking characters out of ASCII pairs, with few
    // NUL bytes.
    // A few NUL bytes tell no byte order: `a\0b\n` is binary, as NUL without a mark is
    // (assembly.md §3), not the two characters it would decode to.
    if first.max(second) < MIN_UNMARKED_NULS {
        return None;
    }
    let units = head.len() / 2;
    if second > 4 * first && 4 * second >= units {
        Some(Encoding::Utf16LeUnmarked)
    } else if first > 4 * second && 4 * first >= units {
        Some(Encoding::Utf16BeUnmarked)
    } else {
        None
    }
}

/// UTF-16 without a byte order mark: text when the order its NUL bytes tell decodes the whole
/// of it to text.
fn utf16_unmarked(bytes: &[u8]) -> Content {
    if !bytes.len().is_multiple_of(2) {
        return Content::Binary;
    }
    let unit: fn([u8; 2]) -> u16 =
        match unmarked_order(&bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]) {
            Some(Encoding::Utf16LeUnmarked) => u16::from_le_bytes,
            Some(Encoding::Utf16BeUnmarked) => u16::from_be_bytes,
            _ => return Content::Binary,
        };
    let encoding =
        if unit([1, 0]) == 1 { Encoding::Utf16LeUnmarked } else { Encoding::Utf16BeUnmarked };
    match utf16(bytes, unit, encoding) {
        Content::Text { text, encoding } if is_text(&text) => Content::Text { text, encoding },
        _ => Content::Binary,
    }
}

/// Bytes that are neither UTF-8 nor start with a byte order mark: the legacy encoding
/// chardetng guesses from all of them, when they hold no NUL and decode to text.
fn legacy(bytes: &[u8]) -> Content {
    if memchr::memchr(0, bytes).is_some() {
        return Content::Binary;
    }
    // The guess is made from a window of the bytes that starts at the first one that is not
    // ASCII (the detector learns nothing from ASCII): a long file costs the same as a short
    // one. Should the whole not decode in the encoding guessed, which a window cannot rule
    // out, the guess is made again from all of the bytes.
    let first = encoding_rs::Encoding::ascii_valid_up_to(bytes).saturating_sub(2);
    let window = &bytes[first..bytes.len().min(first + GUESS_WINDOW_BYTES)];
    let found = guess(window, first + window.len() == bytes.len());
    let text = match found.decode_without_bom_handling_and_without_replacement(bytes) {
        Some(text) => Some((found, text)),
        None if window.len() < bytes.len() => {
            let found = guess(bytes, true);
            found.decode_without_bom_handling_and_without_replacement(bytes).map(|t| (found, t))
        }
        None => None,
    };
    let Some((found, text)) = text else {
        return Content::Binary;
    };
    if !is_text(&text) {
        return Content::Binary;
    }
    Content::Text { text: Text::from(text.into_owned()), encoding: Encoding::Legacy(Legacy(found)) }
}

/// How many bytes, from the first that is not ASCII, the legacy encoding is guessed from.
const GUESS_WINDOW_BYTES: usize = 128 * 1024;

/// The legacy encoding chardetng guesses for `bytes` (`last` when they end the file).
/// ISO-2022-JP is never guessed: its escape sequences switch what the same ASCII bytes mean.
fn guess(bytes: &[u8], last: bool) -> &'static encoding_rs::Encoding {
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
    detector.feed(bytes, last);
    detector.guess(None, Utf8Detection::Deny)
}

/// Whether decoded characters are text: no U+0000, no U+FFFE or U+FFFF, and at most one
/// control character per [`CONTROL_SHARE`] characters (a SUB at the very end not counted).
fn is_text(text: &str) -> bool {
    let text = text.strip_suffix('\u{1A}').unwrap_or(text);
    let (mut chars, mut controls) = (0usize, 0usize);
    for c in text.chars() {
        chars += 1;
        match c {
            '\0' | '\u{FFFE}' | '\u{FFFF}' => return false,
            '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' => {}
            c if c.is_control() => controls += 1,
            _ => {}
        }
    }
    controls <= chars / CONTROL_SHARE
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn text(bytes: &[u8]) -> (String, Encoding) {
        match decode(bytes) {
            Content::Text { text, encoding } => (text.to_string(), encoding),
            Content::Binary => panic!("binary: {bytes:?}"),
        }
    }

    fn named(bytes: &[u8]) -> (String, &'static str) {
        let (text, encoding) = text(bytes);
        (text, encoding.name())
    }

    #[test]
    fn encodings() {
        assert_eq!(text(b"hi"), ("hi".into(), Encoding::Utf8));
        assert_eq!(text(b"\xEF\xBB\xBFhi"), ("hi".into(), Encoding::Utf8Bom));
        assert_eq!(text(b"\xFF\xFEh\0i\0"), ("hi".into(), Encoding::Utf16Le));
        assert_eq!(text(b"\xFE\xFF\0h\0i"), ("hi".into(), Encoding::Utf16Be));
        assert_eq!(text(b"\xFF\xFE\0\0h\0\0\0"), ("h".into(), Encoding::Utf32Le));
        assert_eq!(text(b"\0\0\xFE\xFF\0\0\0h"), ("h".into(), Encoding::Utf32Be));
        assert_eq!(text(b""), (String::new(), Encoding::Utf8));
        let hello = "hello, world\n";
        let le: Vec<u8> = hello.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = hello.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(text(&le), (hello.into(), Encoding::Utf16LeUnmarked));
        assert_eq!(text(&be), (hello.into(), Encoding::Utf16BeUnmarked));
        // Too few NUL bytes to tell a byte order: binary, as NUL without a mark is.
        assert_eq!(decode(&le[..10]), Content::Binary);
        assert_eq!(decode(b"a\0b\n"), Content::Binary);
        assert_eq!(named(b"caf\xE9\n"), ("café\n".into(), "windows-1252"));
    }

    #[test]
    fn only_text_that_was_not_utf8_calls_for_a_note() {
        assert_eq!(decode(b"a").warning_code(), None);
        assert_eq!(decode(b"\xEF\xBB\xBFa").warning_code(), None);
        assert_eq!(decode(b"\xFF\xFEa\0").warning_code(), Some(Code::Encoding));
        assert_eq!(decode(b"caf\xE9").warning_code(), Some(Code::Encoding));
        assert_eq!(decode(b"\0\0").warning_code(), Some(Code::Binary));
        assert_eq!(Encoding::Utf16LeUnmarked.note(), Some("UTF-16LE"));
        assert_eq!(Encoding::Utf8Bom.note(), None);
    }

    #[test]
    fn binary() {
        assert_eq!(decode(b"a\0b"), Content::Binary);
        assert_eq!(decode(b"\xEF\xBB\xBFa\0b"), Content::Binary);
        assert_eq!(decode(b"\xFF\xFEa"), Content::Binary);
        assert_eq!(decode(b"\xFF\xFE\x00\xD8"), Content::Binary);
        // Not UTF-8 after a UTF-8 byte order mark.
        assert_eq!(decode(b"\xEF\xBB\xBF\xC3\x28"), Content::Binary);
        // A NUL code unit, a tie of NUL bytes on both sides, controls decoded from UTF-16.
        assert_eq!(decode(b"a\0\0\0"), Content::Binary);
        assert_eq!(decode(b"a\0\0b"), Content::Binary);
        assert_eq!(decode(b"\x01\0\x02\0\x03\0"), Content::Binary);
        // ASCII with a NUL here and there is not UTF-16 (it would read as CJK characters).
        assert_eq!(decode(b"match\0binary"), Content::Binary);
        assert_eq!(decode(b"name\0other\0"), Content::Binary);
        // Legacy bytes with a NUL past the sniffed prefix, or with control characters.
        let mut late = vec![0xE9; BINARY_SNIFF_BYTES];
        late.push(0);
        assert_eq!(decode(&late), Content::Binary);
        assert_eq!(decode(b"caf\xE9\x01"), Content::Binary);
        // A NUL past the sniffed prefix of valid UTF-8 is text.
        let mut late = vec![b'a'; BINARY_SNIFF_BYTES];
        late.push(0);
        assert!(matches!(decode(&late), Content::Text { encoding: Encoding::Utf8, .. }));
    }

    #[test]
    fn controls_are_counted_against_the_length() {
        // One control in 256 characters is text, two are binary; a final SUB is not counted.
        let mut one = b"caf\xE9".to_vec();
        one.resize(255, b'x');
        one.push(0x01);
        assert!(matches!(decode(&one), Content::Text { .. }));
        one.push(0x02);
        assert_eq!(decode(&one), Content::Binary);
        assert!(matches!(decode(b"caf\xE9\x1A"), Content::Text { .. }));
        assert_eq!(decode(b"caf\xE9\x1A\x1A"), Content::Binary);
        // C1 controls count too: windows-1252 leaves 0x81 unmapped, as U+0081.
        assert_eq!(decode(b"caf\xE9\x81"), Content::Binary);
    }

    #[test]
    fn a_guess_the_rest_of_the_file_refutes_is_made_again_from_all_of_it() {
        // GBK ("中文" is D6 D0 CE C4) past the window.
        let mut bytes = b"\xD6\xD0\xCE\xC4 text\n".repeat(GUESS_WINDOW_BYTES / 8);
        assert_eq!(named(&bytes[..90]), ("中文 text\n".repeat(9), "GBK"));
        // Then a byte GBK has no place for: the window's guess does not decode the whole, nor
        // does the guess from all of it (chardetng still says GBK), so the bytes are no text.
        bytes.extend_from_slice(b"\xFF\n");
        assert_eq!(guess(&bytes[..GUESS_WINDOW_BYTES], false).name(), "GBK");
        assert_eq!(decode(&bytes), Content::Binary);
    }

    #[test]
    fn the_stream_sniff_agrees_with_decode() {
        for head in [&b"\xFF\xFEa\0"[..], b"\xFE\xFF", b"\0\0\xFE\xFF", b"a\0b\0c\0d\0e\0f\0g\0h\0"]
        {
            assert!(matches!(sniff(head), Sniffed::Wide), "{head:?}");
        }
        for head in [&b"a\0\0\0"[..], b"a\0b", b"\0\0", b"a\0b\0"] {
            assert!(matches!(sniff(head), Sniffed::Binary), "{head:?}");
        }
        assert!(matches!(sniff(b"\xEF\xBB\xBFab"), Sniffed::Utf8(3)));
        assert!(matches!(sniff(b"caf\xE9"), Sniffed::Utf8(0)));
    }

    proptest! {
        /// Any bytes decode without a panic.
        #[test]
        fn decoding_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = decode(&bytes);
        }

        /// Bytes made mostly of legacy-looking high bytes and ASCII decode without a panic,
        /// and text decoded from them is never empty when they were not.
        #[test]
        fn legacy_looking_bytes_never_panic(
            bytes in proptest::collection::vec(prop_oneof![0x20u8..0x7F, 0x80u8..=0xFF], 1..512)
        ) {
            if let Content::Text { text, .. } = decode(&bytes) {
                prop_assert!(!text.is_empty());
            }
        }

        /// UTF-8 text without a NUL (and without a byte order mark, which is stripped) is read
        /// as UTF-8, unchanged.
        #[test]
        fn utf8_text_is_read_unchanged(text in "[^\u{0}\u{FEFF}]{0,300}") {
            prop_assert_eq!(
                decode(text.as_bytes()),
                Content::Text { text: Text::from(text.as_str()), encoding: Encoding::Utf8 }
            );
        }
    }
}
