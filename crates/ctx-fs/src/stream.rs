//! Large text files read part by part, never whole
//! ([`Sandbox::text_stream`](crate::Sandbox::text_stream)).
//!
//! A caller that only passes a file's text on (a whole-file attachment written out) does not
//! need it in memory at once. A [`TextStream`] reads it in parts of a quarter of a mebibyte into
//! one buffer, checks each part as UTF-8 while the part is still in the processor's cache, and
//! hands it over. Whether a file is UTF-8 text depends on all of its bytes (invalid UTF-8
//! anywhere makes it binary or text in a legacy encoding, which only a whole read tells), so a
//! caller reads the stream twice: once to learn that, writing nothing, then again to write it. Both reads check every byte; a file that changed between them in a
//! way the second read sees (its length, or bytes that are no longer text) is an error then.

use std::io;
use std::ops::ControlFlow;

use crate::decode::{Sniffed, sniff};
use crate::error::{Error, ErrorKind, Result};

/// The size of a part, in bytes.
pub const STREAM_PART_BYTES: usize = 1 << 18;

/// How far after a `<` a part that has to end inside a line may not end, so that a short
/// markup tag is never split between two parts.
const TAG_MARGIN: usize = 64;

/// What [`Sandbox::text_stream`](crate::Sandbox::text_stream) found at the start of a file.
#[derive(Debug)]
#[non_exhaustive]
pub enum Streamed {
    /// UTF-8 text so far (with or without a byte order mark): read it part by part. Should
    /// reading it through meet bytes that are not UTF-8 ([`Ended::Binary`]), the file may be
    /// text in a legacy encoding, which only [`Sandbox::read_text`](crate::Sandbox::read_text)
    /// tells and decodes.
    Text(TextStream),
    /// Binary content (a NUL byte in the first 8 KiB that no UTF-16 text would hold, as
    /// [`crate::decode()`] tells it).
    Binary,
    /// Text in another encoding (a UTF-16 or UTF-32 byte order mark, or UTF-16 told by its
    /// NUL bytes), or an unsaved text held in the overlay: to be read whole with
    /// [`Sandbox::read_text`](crate::Sandbox::read_text).
    Whole,
}

/// How reading a stream through ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// Every part was UTF-8 text and was handed over, or the caller stopped.
    Text,
    /// Bytes that are not UTF-8 were met: the file is binary or text in a legacy encoding
    /// (which [`Sandbox::read_text`](crate::Sandbox::read_text) tells). Parts before them
    /// were handed over.
    Binary,
}

/// An opened regular file inside the sandbox, its text read in parts.
#[derive(Debug)]
pub struct TextStream {
    file: std::fs::File,
    /// The path as the caller wrote it, for errors.
    written: String,
    /// Where the text starts (after a UTF-8 byte order mark).
    start: u64,
    /// The file's length when it was opened.
    len: u64,
}

impl TextStream {
    pub(crate) fn open(file: std::fs::File, written: &str, head: &[u8], len: u64) -> Streamed {
        match sniff(head) {
            Sniffed::Utf8(start) => {
                Streamed::Text(TextStream { file, written: written.to_owned(), start, len })
            }
            Sniffed::Binary => Streamed::Binary,
            Sniffed::Wide => Streamed::Whole,
        }
    }

    /// The bytes of text, byte order mark excluded, as the file's length said when it was
    /// opened.
    pub fn len(&self) -> u64 {
        self.len - self.start
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the text from its start and calls `part` with each part in order: whole
    /// characters always, and whole lines unless a line is longer than a part (then the part
    /// ends at a character boundary, never within 64 bytes after a `<`). `part` may stop the
    /// reading early with [`ControlFlow::Break`].
    ///
    /// Returns [`Ended::Binary`] when bytes that are not UTF-8 are met (the parts before them
    /// were handed over). A file whose length is no longer the one it had when opened is an
    /// error ([`ErrorKind::Io`]), as is any failed read.
    pub fn read_parts(&self, part: impl FnMut(&str) -> ControlFlow<()>) -> Result<Ended> {
        self.read_range(self.start, self.len, part)
    }

    /// Tells whether the file is text, as reading it through with [`TextStream::read_parts`]
    /// would, without handing anything over: a large file is read in two halves on two
    /// threads, the second starting at the first character boundary past the middle.
    pub fn check(&self) -> Result<Ended> {
        let len = self.len();
        if len < 4 * STREAM_PART_BYTES as u64 {
            return self.read_parts(|_| ControlFlow::Continue(()));
        }
        let middle = self.start + len / 2;
        let mut head = [0u8; 4];
        let n = self.read_at(&mut head, middle)?;
        // At most three continuation bytes end a character; a fourth is invalid where it
        // stands, which the second half then finds.
        let skip = head[..n].iter().take_while(|&&b| b & 0xC0 == 0x80).count().min(3);
        let split = middle + skip as u64;
        let through = |_: &str| ControlFlow::Continue(());
        let (first, second) = std::thread::scope(|scope| {
            let second = scope.spawn(|| self.read_range(split, self.len, through));
            let first = self.read_range(self.start, split, through);
            (first, second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        match (first?, second?) {
            (Ended::Text, Ended::Text) => Ok(Ended::Text),
            _ => Ok(Ended::Binary),
        }
    }

    /// Reads the bytes from `from` to `to` (a character boundary, or the end of the file) as
    /// [`TextStream::read_parts`] reads them all.
    fn read_range(
        &self,
        from: u64,
        to: u64,
        mut part: impl FnMut(&str) -> ControlFlow<()>,
    ) -> Result<Ended> {
        let mut buf = vec![0u8; STREAM_PART_BYTES + TAG_MARGIN];
        // Bytes carried over from the last read, at the start of `buf`.
        let mut carried = 0;
        let mut at = from;
        loop {
            let want = (buf.len() - carried).min(usize::try_from(to - at).unwrap_or(usize::MAX));
            let read = self.read_at(&mut buf[carried..carried + want], at)?;
            at += read as u64;
            let filled = carried + read;
            let end_of_file = at == to;
            if read == 0 && !end_of_file {
                return Err(self.changed());
            }
            // Each byte is checked once: up to the last line ending when there is one (a
            // line ending is a character boundary in valid text, and the rest waits for the
            // next read), else the whole read with its incomplete last character held back.
            let newline = if end_of_file { None } else { memchr::memrchr(b'\n', &buf[..filled]) };
            let (text, cut) = match newline {
                Some(nl) => match utf8(&buf[..=nl]) {
                    Ok(text) => (text, nl + 1),
                    Err(_) => return Ok(Ended::Binary),
                },
                None => {
                    let text = match utf8(&buf[..filled]) {
                        Ok(text) => text,
                        Err(e) if e.error_len().is_none() && !end_of_file => {
                            std::str::from_utf8(&buf[..e.valid_up_to()])
                                .map_err(|_| self.changed())?
                        }
                        Err(_) => return Ok(Ended::Binary),
                    };
                    let cut = if end_of_file { text.len() } else { tag_cut(text.as_bytes()) };
                    (&text[..cut], cut)
                }
            };
            if !text.is_empty() && part(text).is_break() {
                return Ok(Ended::Text);
            }
            if end_of_file {
                return if to == self.len && self.grew()? {
                    Err(self.changed())
                } else {
                    Ok(Ended::Text)
                };
            }
            buf.copy_within(cut..filled, 0);
            carried = filled - cut;
        }
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match read_at(&self.file, &mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&self.written, e)),
            }
        }
        Ok(done)
    }

    /// Whether bytes lie past the length the file had when opened.
    fn grew(&self) -> Result<bool> {
        let mut probe = [0u8; 1];
        Ok(self.read_at(&mut probe, self.len)? > 0)
    }

    fn changed(&self) -> Error {
        Error::new(ErrorKind::Io, &self.written).with_detail("the file changed while it was read")
    }
}

/// `bytes` as text when they are UTF-8, as [`std::str::from_utf8`] says: checked with the
/// processor's vector instructions (chosen at run time), and again by the standard library
/// only when that check fails, for where and why.
fn utf8(bytes: &[u8]) -> std::result::Result<&str, std::str::Utf8Error> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => std::str::from_utf8(bytes),
    }
}

/// Where a part of valid text that holds no line ending ends: at its end, or before a `<`
/// in its last [`TAG_MARGIN`] bytes (an ASCII byte, so a character boundary).
fn tag_cut(valid: &[u8]) -> usize {
    let tail = valid.len().saturating_sub(TAG_MARGIN);
    match memchr::memrchr(b'<', &valid[tail..]) {
        Some(p) if tail + p > 0 => tail + p,
        _ => valid.len(),
    }
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_end_before_a_late_tag() {
        assert_eq!(tag_cut(b"abcd"), 4);
        let long = [b"x".repeat(100), b"</file".to_vec()].concat();
        assert_eq!(tag_cut(&long), 100);
        let early = [b"<".to_vec(), b"x".repeat(100)].concat();
        assert_eq!(tag_cut(&early), 101);
        // A `<` at the very start: the part is kept whole rather than empty.
        assert_eq!(tag_cut(b"<abc"), 4);
    }
}
