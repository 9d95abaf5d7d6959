//! The base protocol's framing, read defensively: a header part of ASCII lines ended by CRLF
//! (bounded in number and length) with a `Content-Length`, a blank line, then that many bytes
//! of body.
//!
//! The length is checked against a cap before any byte of the body is read, and the body is
//! read in chunks as they arrive, so the buffer grows only with data received (never past
//! twice what came, never past the length): a client that announces a terabyte and sends ten
//! bytes costs ten bytes. A frame that cannot be read cannot be skipped either (the next
//! message's start is unknown), so every [`FrameError`] ends the session.

use std::fmt;
use std::io::{self, BufRead};

/// Longest header line, its CRLF included.
const MAX_HEADER_LINE: usize = 1024;
/// Most header lines of one message (LSP defines two).
const MAX_HEADERS: usize = 32;
/// Most characters of a client's text quoted in an error.
const QUOTED: usize = 40;

/// Why a frame could not be read.
#[derive(Debug)]
pub(crate) enum FrameError {
    /// Reading the input failed.
    Io(io::Error),
    /// A header line longer than [`MAX_HEADER_LINE`].
    LongHeader,
    /// More than [`MAX_HEADERS`] header lines.
    TooManyHeaders,
    /// A header line that is not `Name: value` in printable ASCII ended by CRLF.
    BadHeader(String),
    /// The blank line came without a `Content-Length`.
    NoLength,
    /// A `Content-Length` that is not a decimal number.
    BadLength(String),
    /// Two `Content-Length` headers.
    TwoLengths,
    /// A `Content-Length` past the cap (written as the client wrote it, which may not fit
    /// in 64 bits).
    TooLarge { length: String, max: u64 },
    /// The input ended inside the header part.
    EndInHeaders,
    /// The input ended inside a body.
    EndInBody { read: usize, length: usize },
}

impl FrameError {
    /// The JSON-RPC error code of the answer sent before the session ends.
    pub(crate) fn code(&self) -> i32 {
        match self {
            FrameError::TooLarge { .. } => lsp_server::ErrorCode::InvalidRequest as i32,
            _ => lsp_server::ErrorCode::ParseError as i32,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Io(err) => write!(f, "reading the input failed: {err}"),
            FrameError::LongHeader => {
                write!(f, "a header line is longer than {MAX_HEADER_LINE} bytes")
            }
            FrameError::TooManyHeaders => write!(f, "more than {MAX_HEADERS} header lines"),
            FrameError::BadHeader(line) => write!(
                f,
                "malformed header {}: expected `Name: value` in ASCII, ended by CRLF",
                quote(line)
            ),
            FrameError::NoLength => write!(f, "a message without a Content-Length header"),
            FrameError::BadLength(value) => {
                write!(f, "the Content-Length {} is not a number", quote(value))
            }
            FrameError::TwoLengths => write!(f, "a message with two Content-Length headers"),
            FrameError::TooLarge { length, max } => write!(
                f,
                "a message of {} bytes, more than the {max} bytes the server reads \
                 (--max-message-bytes)",
                quote(length).trim_matches('"')
            ),
            FrameError::EndInHeaders => write!(f, "the input ended inside a message's headers"),
            FrameError::EndInBody { read, length } => {
                write!(f, "the input ended inside a message: {read} of {length} bytes came")
            }
        }
    }
}

impl std::error::Error for FrameError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FrameError::Io(err) => Some(err),
            _ => None,
        }
    }
}

impl From<io::Error> for FrameError {
    fn from(err: io::Error) -> FrameError {
        FrameError::Io(err)
    }
}

/// A client's text in an error: clipped, with anything but printable ASCII escaped.
fn quote(text: &str) -> String {
    let clipped: String = text.chars().take(QUOTED).collect();
    let mut out = format!("{clipped:?}");
    if clipped.len() < text.len() {
        out.push('…');
    }
    out
}

/// Reads one frame's body; `None` when the input ends between two frames. `max` is the
/// largest body accepted (`u64::MAX` for no cap).
pub(crate) fn read(input: &mut impl BufRead, max: u64) -> Result<Option<Vec<u8>>, FrameError> {
    let Some(length) = read_headers(input, max)? else { return Ok(None) };
    read_body(input, length).map(Some)
}

/// Reads the header part; returns the body's length, or `None` at the end of the input.
fn read_headers(input: &mut impl BufRead, max: u64) -> Result<Option<usize>, FrameError> {
    let mut line = Vec::new();
    let mut length = None;
    for n in 0.. {
        if !read_line(input, &mut line)? {
            return if n == 0 { Ok(None) } else { Err(FrameError::EndInHeaders) };
        }
        if n == MAX_HEADERS {
            return Err(FrameError::TooManyHeaders);
        }
        let Some(text) = line.strip_suffix(b"\r\n").filter(|t| t.iter().all(printable)) else {
            return Err(FrameError::BadHeader(String::from_utf8_lossy(&line).into_owned()));
        };
        // Printable ASCII: valid UTF-8.
        let text = std::str::from_utf8(text).unwrap_or_default();
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':').filter(|(name, _)| is_token(name)) else {
            return Err(FrameError::BadHeader(text.to_owned()));
        };
        // Other headers (`Content-Type`) are read and ignored.
        if name.eq_ignore_ascii_case("content-length") {
            if length.is_some() {
                return Err(FrameError::TwoLengths);
            }
            length = Some(parse_length(value.trim_matches([' ', '\t']), max)?);
        }
    }
    length.map(Some).ok_or(FrameError::NoLength)
}

/// Whether a byte may appear in a header line (printable ASCII or a tab).
fn printable(byte: &u8) -> bool {
    matches!(byte, b' '..=b'~' | b'\t')
}

/// Whether a header name is an HTTP token.
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The length a `Content-Length` value gives, checked against the cap.
fn parse_length(value: &str, max: u64) -> Result<usize, FrameError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FrameError::BadLength(value.to_owned()));
    }
    let too_large = || FrameError::TooLarge { length: value.to_owned(), max };
    // Digits only: parsing fails only when the number does not fit.
    let length: u64 = value.parse().map_err(|_| too_large())?;
    if length > max {
        return Err(too_large());
    }
    usize::try_from(length).map_err(|_| too_large())
}

/// Reads one line, its `\n` included, into `line`; `false` at the end of the input before
/// any byte. Never holds more than [`MAX_HEADER_LINE`] bytes.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> Result<bool, FrameError> {
    line.clear();
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        if available.is_empty() {
            return if line.is_empty() { Ok(false) } else { Err(FrameError::EndInHeaders) };
        }
        let (take, done) = match available.iter().position(|&b| b == b'\n') {
            Some(n) => (n + 1, true),
            None => (available.len(), false),
        };
        if line.len() + take > MAX_HEADER_LINE {
            return Err(FrameError::LongHeader);
        }
        line.extend_from_slice(&available[..take]);
        input.consume(take);
        if done {
            return Ok(true);
        }
    }
}

/// Reads `length` bytes of body as they arrive.
fn read_body(input: &mut impl BufRead, length: usize) -> Result<Vec<u8>, FrameError> {
    let mut body: Vec<u8> = Vec::new();
    while body.len() < length {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        if available.is_empty() {
            return Err(FrameError::EndInBody { read: body.len(), length });
        }
        let take = available.len().min(length - body.len());
        reserve(&mut body, take, length);
        body.extend_from_slice(&available[..take]);
        input.consume(take);
    }
    Ok(body)
}

/// Makes room for `take` more bytes of a body of `length`: doubles what came, up to the
/// length, so the buffer is never ahead of the data by more than what came.
fn reserve(body: &mut Vec<u8>, take: usize, length: usize) {
    if body.capacity() - body.len() < take {
        let wanted = (body.len() * 2).clamp(body.len() + take, length);
        body.reserve_exact(wanted - body.len());
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use proptest::prelude::*;

    use super::*;

    fn frames(input: &[u8], max: u64) -> (Vec<Vec<u8>>, Option<FrameError>) {
        let mut reader = BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        loop {
            match read(&mut reader, max) {
                Ok(Some(body)) => out.push(body),
                Ok(None) => return (out, None),
                Err(err) => return (out, Some(err)),
            }
        }
    }

    fn error(input: &str, max: u64) -> String {
        frames(input.as_bytes(), max).1.expect("an error").to_string()
    }

    #[test]
    fn frames_and_headers() {
        let input = b"Content-Length: 2\r\n\r\n{}content-type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:3\r\n\r\n[1]";
        let (bodies, err) = frames(input, 100);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(bodies, [b"{}".to_vec(), b"[1]".to_vec()]);
        assert_eq!(frames(b"", 100).0.len(), 0);
        assert_eq!(frames(b"Content-Length: 0\r\n\r\n", 100).0, [Vec::<u8>::new()]);
    }

    #[test]
    fn lengths_past_the_cap_or_not_numbers() {
        let at = |n: &str| format!("Content-Length: {n}\r\n\r\n");
        assert!(
            error(&at("18446744073709551615"), 100)
                .starts_with("a message of 18446744073709551615 bytes, more than the 100")
        );
        assert!(error(&at("100000000000000000000000000"), 100).contains("more than the 100"));
        assert!(error(&at("101"), 100).contains("a message of 101 bytes"));
        assert_eq!(
            frames(at("100").as_bytes(), 100).1.unwrap().to_string(),
            "the input ended inside a message: 0 of 100 bytes came"
        );
        // No cap: still read only as bytes come.
        assert!(error(&at("100000000000000"), u64::MAX).contains("0 of 100000000000000"));
        for bad in ["-1", "+5", "0x10", "", "1e3", "12 3", "١٢"] {
            let message = error(&at(bad), 100);
            assert!(
                message.contains("not a number") || message.starts_with("malformed header"),
                "{bad}: {message}"
            );
        }
        assert_eq!(
            error("Content-Type: x\r\n\r\n{}", 100),
            "a message without a Content-Length header"
        );
        assert_eq!(
            error("Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 100),
            "a message with two Content-Length headers"
        );
    }

    #[test]
    fn malformed_and_endless_headers() {
        assert!(error("Content-Length: 2\n\n{}", 100).starts_with("malformed header"));
        assert!(error("Content-Length 2\r\n\r\n{}", 100).starts_with("malformed header"));
        assert!(
            error("Content-Length: 2\r\nX-\u{1b}]0;title\u{7}: 1\r\n\r\n{}", 100)
                .contains("\\u{1b}")
        );
        assert!(error(": 2\r\n\r\n", 100).starts_with("malformed header"));
        let long = format!("X-Pad: {}\r\n", "a".repeat(2000));
        assert_eq!(error(&long, 100), "a header line is longer than 1024 bytes");
        let flood = "X-Pad: 1\r\n".repeat(10_000);
        assert_eq!(error(&flood, 100), "more than 32 header lines");
        assert_eq!(
            error("Content-Length: 2\r\n", 100),
            "the input ended inside a message's headers"
        );
        assert_eq!(error("Content-Len", 100), "the input ended inside a message's headers");
        // A quoted value is clipped.
        let message = error(&format!("Content-Length: {}\r\n\r\n", "9x".repeat(100)), 100);
        assert!(message.len() < 120, "{message}");
    }

    #[test]
    fn the_buffer_grows_with_the_data_only() {
        let mut input = b"Content-Length: 1000000\r\n\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 1000));
        let err = frames(&input, u64::MAX).1.unwrap();
        assert!(matches!(err, FrameError::EndInBody { read: 1000, length: 1_000_000 }), "{err}");
        let length = 1_000_000;
        let mut body = Vec::new();
        for take in [1, 7, 64, 65536, 3, 65536, 65536].into_iter().cycle().take(100) {
            let take = take.min(length - body.len());
            reserve(&mut body, take, length);
            body.extend(std::iter::repeat_n(0u8, take));
            assert!(body.capacity() <= (2 * body.len()).min(length), "{}", body.len());
        }
    }

    proptest! {
        /// Any bytes: no panic, and every frame read is one the input held whole.
        #[test]
        fn never_panics(input in proptest::collection::vec(any::<u8>(), 0..300), max in 0u64..200) {
            let (bodies, _) = frames(&input, max);
            for body in bodies {
                prop_assert!(body.len() as u64 <= max);
            }
        }

        /// Framed bodies come back whole, whatever the chunking.
        #[test]
        fn round_trip(bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..50), 0..5)) {
            let mut input = Vec::new();
            for body in &bodies {
                input.extend(format!("Content-Length: {}\r\n\r\n", body.len()).bytes());
                input.extend(body);
            }
            let (read, err) = frames(&input, 50);
            prop_assert!(err.is_none());
            prop_assert_eq!(read, bodies);
        }
    }
}
