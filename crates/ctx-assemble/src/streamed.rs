//! A large file attached whole, written part by part without ever being held whole
//! ([`ctx_fs::TextStream`]).
//!
//! Only when nothing needs the whole text at once: no line limit, no token count, no output
//! budget, no token budget that may not hold the file (each would cut or weigh the content),
//! not a document assembled in place, and a format that writes content part by part (not
//! JSON, whose record holds it). The file is read twice: once to tell UTF-8 text from the rest
//! (and, for Markdown, to find its fence), then again to write it, each part sanitised and, in
//! XML, its wrapper tags neutralised as the whole would be. The output is byte for byte what
//! reading it whole gives. A file that is not UTF-8 is read whole instead: binary, or text in
//! another encoding, which only a whole read tells and decodes.

use std::ops::ControlFlow;

use ctx_fs::{Ended, Streamed, TextStream, WalkEntry};
use ctx_syntax::Code;

use crate::out::Place;
use crate::printer::FileHead;
use crate::render::{BacktickRuns, neutralize_tags};
use crate::resolve::{Resolved, display_in};
use crate::run::{Item, Run};
use crate::sanitize::{Tally, sanitize};

/// Files at least this large are written part by part when nothing needs them whole; smaller
/// ones are read whole, which costs less than reading them twice.
pub(crate) const STREAM_MIN_BYTES: u64 = 8 << 20;

/// What became of a file offered to [`Run::stream_file`].
pub(crate) enum Outcome {
    /// Written (or failed, reported): nothing more to do.
    Done,
    /// Not streamed, nothing written: read it whole.
    Whole,
}

/// How writing a stream went.
enum Wrote {
    /// The text was written; its sanitised length in bytes.
    Text(u64),
    /// The first reading found bytes that are not UTF-8: nothing was written.
    NotUtf8,
    /// Reading failed before anything was written, or the file changed under the second
    /// reading (its frame was closed).
    Failed(ctx_fs::Error),
    /// The second reading found bytes that are no longer text (its frame was closed).
    Changed,
    /// The output refused a part.
    Spent(String),
    /// The format does not write content part by part: nothing was written.
    Unframed,
}

impl Run<'_> {
    /// Whether a whole file referenced now may be written part by part.
    pub(crate) fn may_stream(&self, path: &str) -> bool {
        let assembled_in_place = self.out.inline() && self.opts().is_recursive(path);
        !assembled_in_place && self.nothing_needs_all()
    }

    /// Whether nothing of this run needs a file's text whole: no line limit, no line
    /// numbers, no output budget, no token count.
    fn nothing_needs_all(&self) -> bool {
        let opts = self.opts();
        !opts.line_numbers
            && opts.limits.max_lines == 0
            && self.out.budget.output_unlimited()
            && !self.out.budget.counting()
    }

    /// Whether a file of `len` bytes written part by part surely fits the token budget: an
    /// o200k token is at least one byte, and the frame and the closing note take less than
    /// a page. A file that may not fit is read whole and cut.
    fn stream_fits(&self, len: u64) -> bool {
        let bytes = usize::try_from(len).unwrap_or(usize::MAX);
        self.out.budget.fits_bytes(bytes.saturating_add(4096))
    }

    /// From which size (as the walk saw it) the files of a directory expansion are written
    /// part by part; `None` when none are. Such a file is alone in its batch (batches hold
    /// about 8 MiB), so the diagnostics come in the order of a whole read.
    pub(crate) fn stream_in_directory_from(&self) -> Option<u64> {
        let probe = FileHead { path: "", written: None, lines: None, encoding: None };
        (self.nothing_needs_all()
            && self.out.frame(Place::InDirectory, probe, &mut String::new).is_some())
        .then_some(STREAM_MIN_BYTES)
    }

    /// Writes a whole file part by part when it is large and the format allows it.
    pub(crate) fn stream_file(&mut self, resolved: &Resolved, item: &mut Item<'_>) -> Outcome {
        let path = resolved.path.as_str();
        let written = self.written(item);
        let head = FileHead { path, written: written.as_deref(), lines: None, encoding: None };
        if self.out.frame(Place::Entry, head, &mut String::new).is_none() {
            return Outcome::Whole;
        }
        let stream = match self.sandbox().text_stream(&resolved.location) {
            Ok(Streamed::Text(stream))
                if stream.len() >= STREAM_MIN_BYTES && self.stream_fits(stream.len()) =>
            {
                stream
            }
            Ok(Streamed::Binary) => {
                self.binary(resolved, item);
                return Outcome::Done;
            }
            Ok(_) => return Outcome::Whole,
            Err(err) => {
                self.fs_fail(item, &err, path);
                return Outcome::Done;
            }
        };
        match self.write_stream(&stream, head, Place::Entry) {
            Wrote::Text(bytes) => item.record.bytes = bytes,
            // Not UTF-8, nothing written yet: binary, or text in a legacy encoding, which only
            // a whole read tells and decodes.
            Wrote::NotUtf8 => return Outcome::Whole,
            Wrote::Failed(err) => self.fs_fail(item, &err, path),
            Wrote::Changed => {
                let message = format!("{path}: the file changed while it was read");
                self.fail(item, Code::Io, message);
            }
            Wrote::Spent(message) => self.budget_spent_at(message, Some(item)),
            Wrote::Unframed => return Outcome::Whole,
        }
        Outcome::Done
    }

    /// Writes a large file of a directory expansion part by part, as reading it whole would
    /// (see [`Run::stream_in_directory_from`]); whether the expansion goes on.
    pub(crate) fn stream_directory_file(&mut self, entry: &WalkEntry, item: &mut Item<'_>) -> bool {
        let shown = display_in(self.sandbox(), entry.location.root(), entry.path.as_str());
        let shown = shown.as_str();
        let head = FileHead { path: shown, written: None, lines: None, encoding: None };
        let stream = match self.sandbox().text_stream(&entry.location) {
            // A token budget that may not hold it whole needs it whole, to cut it.
            Ok(Streamed::Text(stream)) if !self.stream_fits(stream.len()) => {
                return self.directory_file_whole(entry, item);
            }
            Ok(Streamed::Text(stream)) => stream,
            Ok(Streamed::Binary) => {
                self.diagnose_item(item, Code::Binary, format!("binary file left out: {shown}"));
                return true;
            }
            Ok(_) => {
                // Another encoding, or a text the overlay or the cache holds: read whole.
                return self.directory_file_whole(entry, item);
            }
            Err(err) => {
                self.diagnose_item(item, err.code(), err.to_string());
                return true;
            }
        };
        match self.write_stream(&stream, head, Place::InDirectory) {
            Wrote::Text(bytes) => item.record.bytes += bytes,
            Wrote::NotUtf8 => return self.directory_file_whole(entry, item),
            Wrote::Failed(err) => self.diagnose_item(item, err.code(), err.to_string()),
            Wrote::Changed => {
                let message = format!("{shown}: the file changed while it was read");
                self.diagnose_item(item, Code::Io, message);
            }
            Wrote::Spent(message) => {
                self.budget_spent_at(message, Some(item));
                return false;
            }
            Wrote::Unframed => return self.directory_file_whole(entry, item),
        }
        true
    }

    /// Reads the text of `stream` once to tell text from binary (and to find the Markdown
    /// fence), then again to write it in `place`, sanitised and neutralised as the whole
    /// would be.
    fn write_stream(&mut self, stream: &TextStream, head: FileHead<'_>, place: Place) -> Wrote {
        let mut wants_fence = false;
        let mut asked = || {
            wants_fence = true;
            String::new()
        };
        if self.out.frame(place, head, &mut asked).is_none() {
            return Wrote::Unframed;
        }
        // First reading: text or binary, and the fence.
        let mut runs = BacktickRuns::default();
        let first = if wants_fence {
            stream.read_parts(|part| {
                runs.add(part);
                ControlFlow::Continue(())
            })
        } else {
            stream.check()
        };
        match first {
            Ok(Ended::Text) => {}
            Ok(_) => return Wrote::NotUtf8,
            Err(err) => return Wrote::Failed(err),
        }
        let Some(frame) = self.out.frame(place, head, &mut || runs.fence()) else {
            return Wrote::Unframed;
        };
        self.assembly.stats.files += 1;
        self.assembly.stats.streamed += 1;
        let opened = match place {
            Place::Entry => self.out.open_parts(&frame),
            Place::InDirectory => self.out.write(&frame.head),
        };
        if let Err(message) = opened {
            return Wrote::Spent(message);
        }
        let path = head.path;
        // Second reading: each part sanitised, neutralised in XML, written.
        let (mut tally, mut bytes, mut escaped) = (Tally::default(), 0u64, 0);
        // The line the next part starts on, counted from the first part with something made
        // visible (most files have none, and are not counted through).
        let mut line: Option<u32> = None;
        let mut offset = 0u64;
        // Characters of the current line in the parts before this one: a part starts inside
        // a line when the line is longer than a part.
        let mut column = 0u32;
        let mut ends_line = true;
        let mut spent = None;
        let second = stream.read_parts(|part| {
            if self.out.budget.stopped() {
                // Standard output closed (or `--strict` stopped the run): nothing more is
                // written, so nothing more is read.
                return ControlFlow::Break(());
            }
            let clean = sanitize(part);
            if clean.changed() && line.is_none() {
                line = Some(1u32.saturating_add(newlines_before(stream, offset)));
            }
            if let Some(first) = line.as_mut() {
                tally.add(part, &clean, *first, column);
                // Once the first of each kind is known, later lines are not counted.
                if !tally.settled() {
                    *first = first.saturating_add(newlines(part.as_bytes()));
                }
            }
            column = match memchr::memrchr(b'\n', part.as_bytes()) {
                Some(nl) => chars(&part[nl + 1..]),
                None => column.saturating_add(chars(part)),
            };
            offset += part.len() as u64;
            bytes += clean.text.len() as u64;
            ends_line = clean.text.ends_with('\n');
            let written = if frame.neutralize {
                let n = neutralize_tags(&clean.text);
                escaped += n.escaped;
                self.out.write(&n.text)
            } else {
                self.out.write(&clean.text)
            };
            match written {
                Ok(()) => ControlFlow::Continue(()),
                Err(message) => {
                    spent = Some(message);
                    ControlFlow::Break(())
                }
            }
        });
        self.report_visible(tally.warnings(), path, 1);
        if escaped > 0 {
            self.out.escaped.count += escaped;
            self.out.escaped.paths.push(path.to_owned());
        }
        if let Some(message) = spent {
            return Wrote::Spent(message);
        }
        // The frame closes even when the file changed under the second reading, so that the
        // output stays well formed; the error follows.
        let mut close = String::new();
        if frame.end_line && bytes > 0 && !ends_line {
            close.push('\n');
        }
        close.push_str(&frame.tail);
        if let Err(message) = self.out.write(&close) {
            return Wrote::Spent(message);
        }
        match second {
            Ok(Ended::Text) => Wrote::Text(bytes),
            Ok(_) => Wrote::Changed,
            Err(err) => Wrote::Failed(err),
        }
    }
}

fn chars(text: &str) -> u32 {
    u32::try_from(text.chars().count()).unwrap_or(u32::MAX)
}

fn newlines(bytes: &[u8]) -> u32 {
    u32::try_from(memchr::memchr_iter(b'\n', bytes).count()).unwrap_or(u32::MAX)
}

/// The line endings in the first `offset` bytes of a stream's text, read again for them.
fn newlines_before(stream: &TextStream, offset: u64) -> u32 {
    let (mut seen, mut count) = (0u64, 0u32);
    // A failed read leaves the count where it stopped: the line of a warning is then low,
    // and the read that writes reports the failure.
    let _ = stream.read_parts(|part| {
        let take = usize::try_from(offset - seen).unwrap_or(usize::MAX).min(part.len());
        count = count.saturating_add(newlines(&part.as_bytes()[..take]));
        seen += take as u64;
        if seen < offset { ControlFlow::Continue(()) } else { ControlFlow::Break(()) }
    });
    count
}
