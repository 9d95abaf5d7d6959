//! Where the walk's output goes: through the output budget to the sink, laid out by the
//! format's printer. Inline mode writes each entry in place. Append mode writes the prompt's
//! text whole (never budgeted: the user's words are not cut), then streams each attachment
//! as soon as it is ready, in source order, so nothing but the current piece is held.

use std::borrow::Cow;

use ctx_syntax::Code;

use crate::budget::{Budget, Sink, Stop};
use crate::line::{self, LineScan};
use crate::options::{Mode, Options};
use crate::printer::{
    self, DirectoryHead, Entry, Escaped, Failure, FileHead, Frame, Pieces, Printer, Section,
};

/// An item being inserted with a line prefix.
struct Prefix {
    /// What every further inserted line starts with.
    continuation: String,
    /// For an mdBook link: its continuation is still these bytes of the line being written,
    /// copied out only when that line ends (a long line of links is not copied for each).
    on_line: Option<std::ops::Range<usize>>,
    /// Whether the list markers of `on_line` are repeated as spaces.
    spaced: bool,
    /// The reading of the line before the mdBook links that stand in what the item inserts.
    scan: LineScan,
    /// Whether an empty line gets the continuation without its trailing whitespace.
    trim_empty: bool,
    /// Where on the line being written the item began, and how many writes had ended a line
    /// then.
    start: usize,
    lines_ended: u64,
}

/// The output of one run.
pub(crate) struct Out<'s> {
    sink: &'s mut dyn Sink,
    pub(crate) budget: Budget,
    printer: Box<dyn Printer + Send + Sync>,
    inline: bool,
    /// Which attachments are being placed: the text's own, then those attached to it.
    section: Section,
    /// Append mode: whether the attachments of the section were opened.
    opened: bool,
    /// Whether the next text written starts a section after output that ended a line: one
    /// of the line endings it starts with is left out, so one blank line separates them.
    trim_lead: bool,
    /// Whether a directory expansion is open, to be closed even when the budget stops it.
    in_directory: bool,
    /// The notes the open directory expansion closes with (files omitted past the limit,
    /// entries skipped): part of what closing the output writes while it is open.
    dir_notes: Option<String>,
    /// The items being inserted with a line prefix, outermost first (assembly.md §7).
    prefixes: Vec<Prefix>,
    /// Whether the last byte written was a line ending.
    at_line_start: bool,
    /// What was written since the last line ending, and how many writes held a line ending
    /// (whether one came since an item began is all that is asked, so a write with many
    /// counts once and the text is not counted through): what an mdBook link takes as its
    /// prefix comes from them.
    line: String,
    lines_ended: u64,
    /// The reading of the line before the mdBook links of the document itself.
    scan: LineScan,
    failures: Vec<Failure>,
    pub(crate) escaped: Escaped,
    /// Files the token budget left out with no note of their own, for the section's end.
    pub(crate) left_out: crate::cut::LeftOut,
}

impl<'s> Out<'s> {
    pub(crate) fn new(
        options: &Options,
        known: Option<std::sync::Arc<ctx_tokens::KnownCounts>>,
        sink: &'s mut dyn Sink,
    ) -> Out<'s> {
        let mut budget = Budget::new(options);
        budget.known = known;
        Out {
            sink,
            budget,
            printer: printer::printer(options),
            inline: options.mode == Mode::Inline,
            section: Section::Mentioned,
            opened: false,
            trim_lead: false,
            in_directory: false,
            dir_notes: None,
            prefixes: Vec::new(),
            at_line_start: false,
            line: String::new(),
            lines_ended: 0,
            scan: LineScan::default(),
            failures: Vec::new(),
            escaped: Escaped::default(),
            left_out: crate::cut::LeftOut::default(),
        }
    }

    /// Whether entries are written in place.
    pub(crate) fn inline(&self) -> bool {
        self.inline
    }

    /// Whether the last write ended a line.
    pub(crate) fn at_line_start(&self) -> bool {
        self.at_line_start
    }

    /// What closing the output would write now: the directory open, the attachments' end.
    /// The token budget keeps room for it.
    pub(crate) fn closing(&self) -> String {
        let mut tail = Pieces::default();
        if self.in_directory {
            self.printer.directory_close(&mut tail, self.dir_notes.as_deref());
        }
        if !self.inline {
            self.printer.attachments_close(&mut tail);
        }
        tail.parts().concat()
    }

    /// What opening and closing a directory expansion (with its `notes`) writes, then what
    /// closing the output would: what the token budget must have room for before the
    /// expansion starts.
    pub(crate) fn directory_overhead(&self, head: &DirectoryHead, notes: Option<&str>) -> String {
        let mut pieces = Pieces::default();
        let mut escaped = Escaped::default();
        if self.inline {
            self.printer.directory_open(&mut pieces, head, &mut escaped);
        } else {
            if !self.opened {
                self.printer.attachments_open(&mut pieces, self.section);
            }
            self.printer.attachment_directory(&mut pieces, head, &mut escaped);
        }
        self.printer.directory_close(&mut pieces, notes);
        let mut all = pieces.parts().concat();
        all.push_str(&self.closing());
        all
    }

    /// What placing `entry` in `place` writes besides its content (its frame, the
    /// attachments' opening), then what closing the output would: what the token budget
    /// keeps room for with the content.
    pub(crate) fn overhead(&self, entry: &Entry<'_>, place: Place) -> String {
        let mut pieces = Pieces::default();
        let mut escaped = Escaped::default();
        match place {
            Place::InDirectory => self.printer.directory_file(&mut pieces, entry, &mut escaped),
            Place::Entry if self.inline => self.printer.entry(&mut pieces, entry, &mut escaped),
            Place::Entry => {
                if !self.opened {
                    self.printer.attachments_open(&mut pieces, self.section);
                }
                self.printer.attachment(&mut pieces, entry, &mut escaped);
            }
        }
        let mut all = pieces.parts().concat();
        all.push_str(&self.closing());
        all
    }

    /// Writes text within the output budget; when the budget is spent, the message of the
    /// `E_BUDGET` it calls for.
    pub(crate) fn write(&mut self, text: &str) -> Result<(), String> {
        let mut pieces = Pieces::default();
        pieces.push_content(Cow::Borrowed(text));
        self.emit(pieces)
    }

    /// Writes a printer's pieces within the output budget, all or nothing.
    fn emit(&mut self, mut pieces: Pieces<'_>) -> Result<(), String> {
        let leads = self.trim_lead && pieces.trim_leading_newline();
        let mut at_line_start = self.at_line_start;
        let parts: Vec<Cow<'_, str>> =
            pieces.parts().iter().map(|p| self.prefixed(p, &mut at_line_start)).collect();
        let written = self.budget.write_all(self.sink, &parts);
        if written.is_ok() && !self.budget.stopped() {
            self.trim_lead &= !leads;
        }
        if written.is_ok() {
            self.at_line_start = at_line_start;
            for part in &parts {
                self.note_line(part);
            }
        }
        written
    }

    /// Keeps track of the line being written.
    fn note_line(&mut self, written: &str) {
        match written.rfind('\n') {
            Some(last) => {
                self.lines_ended += 1;
                for prefix in &mut self.prefixes {
                    if let Some(range) = prefix.on_line.take() {
                        prefix.continuation = spaced(&self.line[range], prefix.spaced).into();
                    }
                }
                self.line.clear();
                self.line.push_str(&written[last + 1..]);
            }
            None => self.line.push_str(written),
        }
    }

    /// What the item being inserted (the document itself outside any) has written on the
    /// current line so far, without the continuations of the items around it: mdBook's
    /// prefix for a link that stands there, taken from the output built so far on the line
    /// rather than from the source, so that an earlier link on the line counts as what it
    /// inserted.
    pub(crate) fn line_so_far(&self) -> &str {
        let own = match self.prefixes.last() {
            None => 0,
            Some(item) if item.lines_ended == self.lines_ended => item.start,
            Some(_) => self.prefixes.iter().map(continuation_len).sum(),
        };
        self.line.get(own..).unwrap_or_default()
    }

    /// Writes a marker or closing text, whatever the output budget says.
    pub(crate) fn write_unbudgeted(&mut self, mut text: &str) {
        if self.trim_lead && !text.is_empty() {
            self.trim_lead = false;
            text = text.strip_prefix('\n').unwrap_or(text);
        }
        let mut at_line_start = self.at_line_start;
        let text = self.prefixed(text, &mut at_line_start);
        self.budget.write_unbudgeted(self.sink, &text);
        self.at_line_start = at_line_start;
        self.note_line(&text);
    }

    /// What every further line of the items being inserted starts with, outermost first.
    fn continuations(&self) -> String {
        self.prefixes.iter().map(|p| self.continuation(p)).collect()
    }

    /// What the further lines of `prefix`'s item start with.
    fn continuation<'p>(&'p self, prefix: &'p Prefix) -> Cow<'p, str> {
        match &prefix.on_line {
            Some(range) => spaced(self.line.get(range.clone()).unwrap_or_default(), prefix.spaced),
            None => Cow::Borrowed(&prefix.continuation),
        }
    }

    /// Starts inserting an mdBook link (docs/dialects.md). When what the item around it (the
    /// document outside any) has written on the current line so far ([`Out::line_so_far`])
    /// is a line prefix of assembly.md §7 (blanks, quote markers, list markers, a comment
    /// leader), it starts every further line of what the link inserts, list markers as
    /// spaces; prose before the link is not repeated.
    pub(crate) fn push_line_prefix(&mut self) {
        if self.at_line_start {
            // Nothing is written on the line yet.
            return self.push_prefix(String::new(), false);
        }
        let own = self.line.len() - self.line_so_far().len();
        let key = (self.lines_ended, own);
        let scan = match self.prefixes.last_mut() {
            Some(item) => &mut item.scan,
            None => &mut self.scan,
        };
        let found = scan.prefix(key, &self.line[own..]);
        let (start, lines_ended) = (self.line.len(), self.lines_ended);
        self.prefixes.push(Prefix {
            continuation: String::new(),
            on_line: found.map(|_| own..start),
            spaced: found == Some(true),
            trim_empty: false,
            start,
            lines_ended,
            scan: LineScan::default(),
        });
    }

    /// Starts inserting an item with a line prefix: its further lines get `continuation`,
    /// trimmed on empty lines when `trim_empty` says so.
    pub(crate) fn push_prefix(&mut self, continuation: String, trim_empty: bool) {
        if self.at_line_start {
            // The item opens a line of the items around it (an include at column 1 of an
            // included document's later line): their continuations start the line first.
            let joined = self.continuations();
            if !joined.is_empty() {
                self.budget.write_unbudgeted(self.sink, &joined);
                self.note_line(&joined);
            }
        }
        let (start, lines_ended) = (self.line.len(), self.lines_ended);
        self.prefixes.push(Prefix {
            continuation,
            on_line: None,
            spaced: false,
            trim_empty,
            start,
            lines_ended,
            scan: LineScan::default(),
        });
        self.at_line_start = false;
    }

    /// Ends the item begun by [`Out::push_prefix`]; whether what it inserted ended with a
    /// line ending.
    pub(crate) fn pop_prefix(&mut self) -> bool {
        self.prefixes.pop();
        self.at_line_start
    }

    /// `text` with the active continuations at the start of each line after the first (and
    /// of the first, when the last write ended a line); an empty line gets them without
    /// their trailing whitespace. `at_line_start` says whether a line just ended, before and
    /// after.
    fn prefixed<'t>(&self, text: &'t str, at_line_start: &mut bool) -> Cow<'t, str> {
        if text.is_empty() {
            return Cow::Borrowed(text);
        }
        if self.prefixes.iter().all(|p| continuation_len(p) == 0) {
            *at_line_start = text.ends_with('\n');
            return Cow::Borrowed(text);
        }
        if !*at_line_start && memchr::memchr(b'\n', text.as_bytes()).is_none() {
            // No line starts in it: nothing to put before any.
            return Cow::Borrowed(text);
        }
        let joined = self.continuations();
        let trim = self.prefixes.last().is_some_and(|p| p.trim_empty);
        let mut out = String::with_capacity(text.len() + joined.len() * 4);
        for piece in text.split_inclusive('\n') {
            if *at_line_start {
                let empty = piece == "\n" || piece == "\r\n";
                out.push_str(if empty && trim { joined.trim_end() } else { &joined });
            }
            out.push_str(piece);
            *at_line_start = piece.ends_with('\n');
        }
        Cow::Owned(out)
    }

    /// Writes the document's own text: within the budget in inline mode; whole in append
    /// mode, where the prompt is always kept and only attachments are cut.
    pub(crate) fn text(&mut self, text: &str) -> Result<(), String> {
        if self.inline {
            return self.write(text);
        }
        self.write_unbudgeted(text);
        Ok(())
    }

    /// Opens the attachments before the first one (append mode).
    fn open(&mut self, text: &mut Pieces<'_>) {
        if !self.inline && !self.opened {
            self.opened = true;
            self.printer.attachments_open(text, self.section);
        }
    }

    /// The placeholder the format shows for an image.
    pub(crate) fn image(&self, path: &str, media_type: &str, bytes: u64) -> String {
        self.printer.image(path, media_type, bytes)
    }

    /// Places an entry: printed in place, or as the next attachment.
    pub(crate) fn place(&mut self, entry: &Entry<'_>) -> Result<(), String> {
        let was_opened = self.opened;
        let mut pieces = Pieces::default();
        if self.inline {
            self.printer.entry(&mut pieces, entry, &mut self.escaped);
        } else {
            self.open(&mut pieces);
            self.printer.attachment(&mut pieces, entry, &mut self.escaped);
        }
        self.emit_opening(pieces, was_opened)
    }

    /// The frame of a file entry placed now in `place`, when the format writes content part
    /// by part (see [`Printer::file_frame`]).
    pub(crate) fn frame(
        &self,
        place: Place,
        head: FileHead<'_>,
        fence: &mut dyn FnMut() -> String,
    ) -> Option<Frame> {
        match place {
            Place::Entry => self.printer.file_frame(head, !self.inline, fence),
            Place::InDirectory => self.printer.directory_file_frame(head, fence),
        }
    }

    /// Opens a file entry whose content comes part by part: the attachments' opening
    /// (append mode) and the frame's head. Its parts go through [`Out::write`], then the
    /// frame's tail.
    pub(crate) fn open_parts(&mut self, frame: &Frame) -> Result<(), String> {
        let was_opened = self.opened;
        let mut pieces = Pieces::default();
        if !self.inline {
            self.open(&mut pieces);
        }
        pieces.push_str(&frame.head);
        self.emit_opening(pieces, was_opened)
    }

    /// Emits pieces that may hold the attachments' opening: if the budget refuses them, the
    /// opening was not written either, so nothing is left to close.
    fn emit_opening(&mut self, pieces: Pieces<'_>, was_opened: bool) -> Result<(), String> {
        let written = self.emit(pieces);
        // A stopped budget writes nothing more, without an error.
        if !was_opened && (written.is_err() || self.budget.stopped()) {
            self.opened = false;
        }
        written
    }

    /// Says that the output budget is spent: a marker in place (inline mode), or a line of
    /// the failures after the attachments (append mode), where the prompt's text stays
    /// whole and the frame around the attachments stays well formed.
    pub(crate) fn spent(&mut self, marker: &str, message: &str) {
        if self.inline {
            self.write_unbudgeted(marker);
        } else {
            self.failures.push(Failure {
                reference: String::new(),
                code: Code::Budget,
                message: message.to_owned(),
            });
        }
    }

    /// Opens a directory expansion, in place or as the next attachment, that closes with
    /// `notes`.
    pub(crate) fn directory_open(
        &mut self,
        head: &DirectoryHead,
        notes: Option<String>,
    ) -> Result<(), String> {
        let was_opened = self.opened;
        let mut text = Pieces::default();
        if self.inline {
            self.printer.directory_open(&mut text, head, &mut self.escaped);
        } else {
            self.open(&mut text);
            self.printer.attachment_directory(&mut text, head, &mut self.escaped);
        }
        self.emit_opening(text, was_opened)?;
        self.in_directory = !self.budget.stopped();
        self.dir_notes = notes;
        Ok(())
    }

    /// Writes one file of an open directory expansion.
    pub(crate) fn directory_file(&mut self, file: &Entry<'_>) -> Result<(), String> {
        let mut pieces = Pieces::default();
        self.printer.directory_file(&mut pieces, file, &mut self.escaped);
        self.emit(pieces)
    }

    /// Closes a directory expansion, with its notes (files left out, entries skipped).
    pub(crate) fn directory_close(&mut self, notes: Option<&str>) -> Result<(), String> {
        let mut pieces = Pieces::default();
        self.printer.directory_close(&mut pieces, notes);
        self.in_directory = false;
        self.dir_notes = None;
        self.emit(pieces)
    }

    /// Whether nothing is waiting to be said at the end of the section: no file the budget
    /// left out without a note of its own, no failure to list.
    pub(crate) fn nothing_to_close(&self) -> bool {
        self.left_out.is_empty() && self.failures.is_empty()
    }

    /// The o200k tokens every decision of the budget keeps for what ends the output: the
    /// closing note, and once a reference has failed, the list of failures at its shortest
    /// (its heading and the line that counts them).
    pub(crate) fn closing_reserve(&mut self) -> usize {
        let failures = match self.failures.is_empty() {
            true => 0,
            false => crate::cut::failures_reserve(),
        };
        self.budget.note_reserve() + failures
    }

    /// Lists a failed reference after the attachments (append mode, where the format lists
    /// them).
    pub(crate) fn failure(&mut self, failure: Failure) {
        self.failures.push(failure);
    }

    /// Ends the attachments so far (their closing and the list of their failures, in append
    /// mode) and places what follows as the attachments of `section`, laid out as append
    /// mode's whatever the mode: their own block after everything else, opened before the
    /// first of them, one blank line after what was written before (assembly.md,
    /// "Attachments").
    pub(crate) fn begin_section(&mut self, section: Section) {
        if self.budget.stop_reason() == Some(Stop::Io) {
            return;
        }
        self.close_section();
        self.inline = false;
        self.opened = false;
        self.section = section;
        self.trim_lead = self.at_line_start;
    }

    /// Closes what is open: a directory the budget stopped, and in append mode the
    /// attachments and the list of failures.
    pub(crate) fn finish(&mut self) {
        if self.budget.stop_reason() == Some(Stop::Io) {
            return;
        }
        self.close_section();
    }

    /// Closes a directory the budget stopped, and in append mode the attachments of the
    /// section and the list of its failures.
    fn close_section(&mut self) {
        let mut head = Pieces::default();
        if std::mem::take(&mut self.in_directory) {
            self.printer.directory_close(&mut head, self.dir_notes.take().as_deref());
        }
        let failures = match self.inline {
            true => Vec::new(),
            false => std::mem::take(&mut self.failures),
        };
        for part in head.parts() {
            self.write_unbudgeted(part);
        }
        // The note of what the budget left out goes before the attachments' end: the longest
        // form the budget has room for (a budget too small for the shortest leaves it to
        // W_BUDGET).
        let left_out = std::mem::take(&mut self.left_out);
        let notes = left_out.notes(self.budget.named());
        let after = match notes.is_empty() {
            true => 0,
            false => ctx_tokens::count(&self.section_end(&[])),
        };
        for mut note in notes {
            if !self.at_line_start {
                note.insert(0, '\n');
            }
            if ctx_tokens::count_at_most(&note, self.budget.room(after)).is_some() {
                self.write_unbudgeted(&note);
                break;
            }
        }
        let room = self.budget.limited().then(|| self.budget.room(0));
        let listed = self.failures_within(failures, room);
        let end = self.section_end(&listed);
        self.write_unbudgeted(&end);
    }

    /// What ends a section in append mode: the attachments' end, then `failures` listed.
    fn section_end(&self, failures: &[Failure]) -> String {
        let mut tail = Pieces::default();
        if !self.inline {
            if self.opened {
                self.printer.attachments_close(&mut tail);
            }
            self.printer.failures(&mut tail, failures, self.opened);
        }
        tail.parts().concat()
    }

    /// The failures to list at the end of a section, as many as `room` tokens hold with the
    /// section's end: those that fit, in order, then one line that counts the rest (the
    /// diagnostics name each); none when not even that line fits, leaving the saying to the
    /// diagnostics. Without a budget (`None`), all.
    fn failures_within(&self, failures: Vec<Failure>, room: Option<usize>) -> Vec<Failure> {
        let Some(room) = room.filter(|_| !failures.is_empty()) else { return failures };
        let fits =
            |list: &[Failure]| ctx_tokens::count_at_most(&self.section_end(list), room).is_some();
        if fits(&failures) {
            return failures;
        }
        let with_more = |k: usize| {
            let mut list = failures[..k].to_vec();
            list.push(Failure {
                reference: String::new(),
                code: Code::TokenBudget,
                message: crate::cut::failures_more(failures.len() - k, k),
            });
            list
        };
        if !fits(&with_more(0)) {
            return Vec::new();
        }
        // The most failures listed with the line that counts the rest. Each line is counted
        // once and the search runs on their sum (a line ends with a line break, past which
        // no token reaches); then the list found is counted whole, one failure fewer while it
        // does not fit. Counting the whole list at every step of the search cost thousands of
        // failures of long names seconds.
        let base = ctx_tokens::count(&self.section_end(&with_more(0)));
        let each: Vec<usize> =
            failures.iter().map(|f| ctx_tokens::count(&crate::printer::failure_line(f))).collect();
        let mut total = base;
        let mut k = 0;
        while k < failures.len() && total + each[k] <= room {
            total += each[k];
            k += 1;
        }
        while k > 0 && !fits(&with_more(k)) {
            k -= 1;
        }
        with_more(k)
    }
}

/// Where a streamed file is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// As a reference's own entry: in place, or as the next attachment.
    Entry,
    /// As a file of the directory expansion being written.
    InDirectory,
}

/// The length of what the further lines of `prefix`'s item start with (list markers become
/// spaces of their own width, so it is the length of the bytes they come from).
fn continuation_len(prefix: &Prefix) -> usize {
    prefix.on_line.as_ref().map_or(prefix.continuation.len(), |range| range.len())
}

/// An mdBook link's prefix as it is repeated: with its list markers as spaces when it has any.
fn spaced(prefix: &str, markers: bool) -> Cow<'_, str> {
    match markers {
        true => Cow::Owned(line::continuation(prefix).unwrap_or_default()),
        false => Cow::Borrowed(prefix),
    }
}
