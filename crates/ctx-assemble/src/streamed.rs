//! A large file attached whole, written part by part without ever being held whole
//! (ctx_fs::TextStream).
//!
//! Only when nothing needs the whole text at once: no line limit, no token count, no output
//! budget (each would cut or weigh the content), not a document assembled in place, and a
//! format that writes content part by part (not JSON, whose record holds it). The file is
//! read twice: once to tell text from binary (and, for Markdown, to find its fence), then
//! again to write it, each part sanitised and, in XML, its wrapper tags neutralised as the
//! whole would be. The output is byte for byte what reading it whole gives.

use std::ops::ControlFlow;

use ctx_fs::{Ended, Streamed, TextStream};
use ctx_syntax::Code;

use crate::printer::FileHead;
use crate::render::{BacktickRuns, neutralize_tags};
use crate::resolve::Resolved;
use crate::sanitize::{Tally, sanitize};
use crate::walk::{Item, Walk, reference_text};

/// Files at least this large are written part by part when nothing needs them whole; smaller
/// ones are read whole, which costs less than reading them twice.
pub(crate) const STREAM_MIN_BYTES: u64 = 8 << 20;

/// What became of a file offered to [`Walk::stream_file`].
pub(crate) enum Outcome {
    /// Written (or failed, reported): nothing more to do.
    Done,
    /// Not streamed, nothing written: read it whole.
    Whole,
}

impl Walk<'_> {
    /// Whether a whole file placed now may be written part by part.
    pub(crate) fn may_stream(&self, path: &str) -> bool {
        let opts = self.opts();
        let assembled_in_place = self.out.inline() && opts.is_recursive(path);
        let whole_needed = assembled_in_place || opts.line_numbers;
        !whole_needed
            && opts.limits.max_lines == 0
            && self.out.budget.output_unlimited()
            && !self.out.budget.counting()
    }

    /// Writes a whole file part by part when it is large and the format allows it.
    pub(crate) fn stream_file(&mut self, resolved: &Resolved, item: &mut Item<'_>) -> Outcome {
        let path = resolved.path.as_str();
        let reference = reference_text(item.raw);
        let head = FileHead { path, reference: &reference, lines: None };
        let mut wants_fence = false;
        let mut asked = || {
            wants_fence = true;
            String::new()
        };
        if self.out.file_frame(head, &mut asked).is_none() {
            return Outcome::Whole;
        }
        let stream = match self.sandbox().text_stream(&resolved.location) {
            Ok(Streamed::Text(stream)) if stream.len() >= STREAM_MIN_BYTES => stream,
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
            Ok(_) => {
                self.binary(resolved, item);
                return Outcome::Done;
            }
            Err(err) => {
                self.fs_fail(item, &err, path);
                return Outcome::Done;
            }
        }
        let Some(frame) = self.out.file_frame(head, &mut || runs.fence()) else {
            return Outcome::Whole;
        };
        self.assembly.stats.files += 1;
        if let Err(message) = self.out.open_parts(&frame) {
            self.budget_spent_at(message, Some(item));
            return Outcome::Done;
        }
        // Second reading: each part sanitised, neutralised in XML, written.
        let (mut tally, mut bytes, mut escaped) = (Tally::default(), 0u64, 0);
        // The line the next part starts on, counted from the first part with something made
        // visible (most files have none, and are not counted through).
        let mut line: Option<u32> = None;
        let mut offset = 0u64;
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
                line = Some(1u32.saturating_add(newlines_before(&stream, offset)));
            }
            if let Some(first) = line.as_mut() {
                tally.add(part, &clean, *first);
                *first = first.saturating_add(newlines(part.as_bytes()));
            }
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
        item.record.bytes = bytes;
        if let Some(message) = spent {
            return self.spent_then(message, item);
        }
        // The frame closes even when the file changed under the second reading, so that the
        // output stays well formed; the error follows.
        let mut close = String::new();
        if frame.end_line && bytes > 0 && !ends_line {
            close.push('\n');
        }
        close.push_str(&frame.tail);
        if let Err(message) = self.out.write(&close) {
            return self.spent_then(message, item);
        }
        match second {
            Ok(Ended::Text) => {}
            Ok(_) => {
                let message = format!("{path}: the file changed while it was read");
                self.fail(item, Code::Io, message);
            }
            Err(err) => self.fs_fail(item, &err, path),
        }
        Outcome::Done
    }

    fn spent_then(&mut self, message: String, item: &mut Item<'_>) -> Outcome {
        self.budget_spent_at(message, Some(item));
        Outcome::Done
    }
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
