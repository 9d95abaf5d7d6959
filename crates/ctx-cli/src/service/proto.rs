//! The messages between `ctx index --watch` and the commands that ask it, and how they travel:
//! one frame each way per connection, a four-byte big-endian length then that many bytes of
//! JSON, parsed strictly (unknown fields, a wrong version or a frame over its bound end the
//! connection). Every read and write has a deadline, so a slow or silent peer costs its own
//! connection a bounded time and nothing more.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The protocol's version; a request of another version is refused.
pub(crate) const VERSION: u32 = 1;

/// Longest request: a prompt longer than this is ranked without the service.
pub(crate) const MAX_REQUEST: usize = 256 * 1024;

/// Longest answer the client takes.
pub(crate) const MAX_ANSWER: usize = 32 * 1024 * 1024;

/// How long a peer may take to send or take one frame.
pub(crate) const IO_DEADLINE: Duration = Duration::from_secs(5);

/// A question for the service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Request {
    /// [`VERSION`].
    pub(crate) version: u32,
    /// The canonical path of the workspace the asker ranks; the service answers only for its
    /// own.
    pub(crate) root: String,
    /// What else decides the answer (settings, configuration, ctx's version), hashed; the
    /// service answers only when it was started with the same.
    pub(crate) fingerprint: String,
    /// The question.
    pub(crate) ask: Ask,
}

/// The questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum Ask {
    /// `ctx suggest` and `ctx expand --auto`: the ranked files.
    Suggest {
        /// The prompt.
        prompt: String,
        /// Most files.
        limit: usize,
        /// Longest range in lines.
        max_lines: u32,
        /// Budget of the ranges together.
        max_tokens: Option<usize>,
        /// Whether to say why each file scored.
        explain: bool,
    },
    /// `ctx index`: the index brought up to date and stored, and what it holds.
    Status,
}

/// The service's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum Answer {
    /// The ranked files, from an index current when the question came.
    Suggestions(Vec<ctx::Suggestion>),
    /// The index's figures, current when the question came.
    Status(Status),
    /// The service does not answer this question (another root or settings, a watch that
    /// cannot vouch for its index, a malformed request); the asker ranks by itself.
    Refused(String),
}

/// What `ctx index` prints of an index kept by the service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Status {
    pub(crate) files: usize,
    pub(crate) terms: usize,
    pub(crate) symbols: usize,
    pub(crate) definitions: usize,
    pub(crate) classes: Vec<(String, usize)>,
    pub(crate) symbol_source: String,
    pub(crate) data_files: bool,
    pub(crate) truncated: bool,
    pub(crate) bytes: u64,
}

/// Writes one frame, within [`IO_DEADLINE`].
pub(crate) fn send(stream: &mut UnixStream, value: &impl Serialize) -> io::Result<()> {
    let body = serde_json::to_vec(value).map_err(io::Error::other)?;
    let len = u32::try_from(body.len()).map_err(io::Error::other)?;
    stream.set_write_timeout(Some(IO_DEADLINE))?;
    stream.write_all(&len.to_be_bytes())?;
    stream.write_all(&body)?;
    stream.flush()
}

/// Reads one frame of at most `max` bytes, the whole of it within [`IO_DEADLINE`] (however
/// slowly the peer sends), and parses it strictly.
pub(crate) fn receive<T: for<'de> Deserialize<'de>>(
    stream: &mut UnixStream,
    max: usize,
) -> io::Result<T> {
    let deadline = Instant::now() + IO_DEADLINE;
    let mut len = [0u8; 4];
    read_by(stream, &mut len, deadline)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "frame over its bound"));
    }
    let mut body = vec![0u8; len];
    read_by(stream, &mut body, deadline)?;
    serde_json::from_slice(&body).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Fills `buf` before `deadline`.
fn read_by(stream: &mut UnixStream, buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "peer too slow"));
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (UnixStream, UnixStream) {
        UnixStream::pair().unwrap()
    }

    #[test]
    fn a_request_goes_through() {
        let (mut a, mut b) = pair();
        let req = Request {
            version: VERSION,
            root: "/w".into(),
            fingerprint: "f".into(),
            ask: Ask::Suggest {
                prompt: "retry".into(),
                limit: 3,
                max_lines: 80,
                max_tokens: None,
                explain: false,
            },
        };
        send(&mut a, &req).unwrap();
        assert_eq!(receive::<Request>(&mut b, MAX_REQUEST).unwrap(), req);
    }

    #[test]
    fn a_frame_over_its_bound_is_refused_before_it_is_read() {
        let (mut a, mut b) = pair();
        a.write_all(&u32::MAX.to_be_bytes()).unwrap();
        let err = receive::<Request>(&mut b, MAX_REQUEST).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn unknown_fields_and_other_shapes_are_refused() {
        for body in [
            r#"{"version":1,"root":"/","fingerprint":"f","ask":"status","more":1}"#,
            r#"{"version":1,"root":"/","fingerprint":"f","ask":"read_file"}"#,
            r#"{"version":1,"root":"/","ask":"status"}"#,
            "not json",
        ] {
            let (mut a, mut b) = pair();
            a.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
            a.write_all(body.as_bytes()).unwrap();
            let err = receive::<Request>(&mut b, MAX_REQUEST).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{body}");
        }
    }

    #[test]
    fn a_silent_peer_ends_at_the_deadline() {
        let (mut a, mut b) = pair();
        a.write_all(&[0, 0]).unwrap();
        let started = Instant::now();
        let err = receive::<Request>(&mut b, MAX_REQUEST).unwrap_err();
        assert!(matches!(err.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock));
        // A hang guard, not a speed test: the deadline ends the read.
        assert!(started.elapsed() < IO_DEADLINE * 4);
        drop(a);
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let (mut a, mut b) = pair();
            a.write_all(&(bytes.len() as u32).to_be_bytes()).unwrap();
            a.write_all(&bytes).unwrap();
            let _ = receive::<Request>(&mut b, MAX_REQUEST);
        }
    }
}
