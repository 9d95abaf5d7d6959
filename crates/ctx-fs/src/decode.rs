//! Text decoding: BOM handling, UTF-16/32 and binary detection.

use ctx_diagnostics::Code;

use crate::Text;

/// How many leading bytes are searched for a NUL byte.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

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
    /// Binary content (a NUL byte in the first 8 KiB without a UTF-16/32
    /// byte order mark, or invalid UTF-8 or UTF-16/32): to be left out with
    /// warning [`Code::Binary`] (`W_BINARY`).
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

    /// The warning this content calls for: `W_BINARY` for binary content.
    pub fn warning_code(&self) -> Option<Code> {
        match self {
            Content::Text { .. } => None,
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
        return Content::Binary;
    }
    let encoding = if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
        Encoding::Utf8Bom
    } else {
        Encoding::Utf8
    };
    match String::from_utf8(bytes) {
        Ok(text) => Content::Text { text: Text::from(text), encoding },
        Err(_) => Content::Binary,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> (String, Encoding) {
        match decode(bytes) {
            Content::Text { text, encoding } => (text.to_string(), encoding),
            Content::Binary => panic!("binary: {bytes:?}"),
        }
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
    }

    #[test]
    fn binary() {
        assert_eq!(decode(b"a\0b"), Content::Binary);
        assert_eq!(decode(b"\xEF\xBB\xBFa\0b"), Content::Binary);
        assert_eq!(decode(b"\xC3\x28"), Content::Binary);
        assert_eq!(decode(b"\xFF\xFEa"), Content::Binary);
        assert_eq!(decode(b"\xFF\xFE\x00\xD8"), Content::Binary);
        // A NUL past the sniffed prefix is valid UTF-8 text.
        let mut late = vec![b'a'; BINARY_SNIFF_BYTES];
        late.push(0);
        assert!(matches!(decode(&late), Content::Text { .. }));
    }
}
