//! Where the walk's output goes: through the output budget to the sink, each entry in place
//! (inline mode) or kept for after the text (append mode), laid out by the format's printer.

use crate::budget::{Budget, Sink, Stop};
use crate::options::{Mode, Options};
use crate::printer::{self, DirectoryHead, Entry, Escaped, Failure, Printer};

/// The output of one run.
pub(crate) struct Out<'s> {
    sink: &'s mut dyn Sink,
    pub(crate) budget: Budget,
    printer: Box<dyn Printer + Send + Sync>,
    inline: bool,
    /// Append mode: the entries for after the text, in source order.
    entries: Vec<Entry>,
    failures: Vec<Failure>,
    pub(crate) escaped: Escaped,
}

impl<'s> Out<'s> {
    pub(crate) fn new(options: &Options, sink: &'s mut dyn Sink) -> Out<'s> {
        Out {
            sink,
            budget: Budget::new(options),
            printer: printer::printer(options),
            inline: options.mode == Mode::Inline,
            entries: Vec::new(),
            failures: Vec::new(),
            escaped: Escaped::default(),
        }
    }

    /// Whether entries are written in place.
    pub(crate) fn inline(&self) -> bool {
        self.inline
    }

    /// Writes text within the output budget; when the budget is spent, the message of the
    /// `E_BUDGET` it calls for.
    pub(crate) fn write(&mut self, text: &str) -> Result<(), String> {
        self.budget.write(self.sink, text)
    }

    /// Writes a marker or closing text, whatever the output budget says.
    pub(crate) fn write_unbudgeted(&mut self, text: &str) {
        self.budget.write_unbudgeted(self.sink, text);
    }

    /// Places an entry: printed in place, or, in append mode, the item's text written as it
    /// stands and the entry kept for after the text.
    pub(crate) fn place(&mut self, entry: Entry, raw: &str) -> Result<(), String> {
        if !self.inline {
            self.entries.push(entry);
            return self.write(raw);
        }
        let mut text = String::new();
        self.printer.entry(&mut text, &entry, &mut self.escaped);
        self.write(&text)
    }

    /// Opens a directory expansion written in place.
    pub(crate) fn directory_open(&mut self, head: &DirectoryHead) -> Result<(), String> {
        let mut text = String::new();
        self.printer.directory_open(&mut text, head, &mut self.escaped);
        self.write(&text)
    }

    /// Writes one file of a directory expansion in place.
    pub(crate) fn directory_file(&mut self, file: &Entry) -> Result<(), String> {
        let mut text = String::new();
        self.printer.directory_file(&mut text, file, &mut self.escaped);
        self.write(&text)
    }

    /// Closes a directory expansion written in place.
    pub(crate) fn directory_close(&mut self, omitted: Option<&str>) -> Result<(), String> {
        let mut text = String::new();
        self.printer.directory_close(&mut text, omitted);
        self.write(&text)
    }

    /// Keeps a directory expansion for after the text (append mode).
    pub(crate) fn attach(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    /// Lists a failed reference after the text (append mode, where the format lists them).
    pub(crate) fn failure(&mut self, failure: Failure) {
        self.failures.push(failure);
    }

    /// Writes what append mode puts after the text.
    pub(crate) fn finish(&mut self) {
        if self.inline || self.budget.stop_reason() == Some(Stop::Io) {
            return;
        }
        let mut tail = String::new();
        self.printer.attachments(&mut tail, &self.entries, &self.failures, &mut self.escaped);
        self.write_unbudgeted(&tail);
    }
}
