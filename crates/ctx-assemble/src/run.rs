//! A run of the assembly of assembly.md: one pass in document order, one macro context flowing
//! through the recursion, files of inactive branches never opened.
//!
//! A [`Run`] holds what one run accumulates (the macros, the include chain, the output and
//! its budgets, the assembly's records); each reference is carried through it as an
//! [`Item`]. Its methods are spread over the modules that own each step: documents and front
//! matter (`document.rs`), files and tools (`reference.rs`), directories and globs
//! (`many.rs`).

use std::time::Instant;

use ctx_fs::{Location, Sandbox};
use ctx_preprocess::{Event, Macros, Preprocessor, Request, RequestKind};
use ctx_syntax::{Code, Position, Severity};
use serde_json::Map;

use crate::budget::Stop;
use crate::front_matter::ParamsMerger;
use crate::line;
use crate::options::{OnError, Options};
use crate::out::Out;
use crate::printer::Failure;
use crate::record::{
    Assembly, At, DiagnosticRecord, ErrorRecord, Kind, MAX_DIAGNOSTICS, ReferenceRecord, Source,
    Stats, Syntax,
};
use crate::render::error_marker;
use crate::resolve;
use crate::sanitize::sanitize;
use crate::setup::Setup;
use crate::tools::ToolBudget;

/// Memory the compiled regular expressions of one run's tools may hold.
const REGEX_BUDGET: usize = 32 << 20;

/// A document being assembled.
pub(crate) struct Doc {
    /// The file, unless the document came from a string.
    pub(crate) location: Option<Location>,
    /// The directory relative paths resolve from.
    pub(crate) dir: Location,
    /// The name diagnostics and records use.
    pub(crate) name: String,
    /// Whether only mdBook's links are read in it (a file that is not a ctx document,
    /// included by one): ctx's own syntax stays text.
    pub(crate) links_only: bool,
}

/// A text being scanned: a document's body, or the selected lines of one.
#[derive(Clone, Copy)]
pub(crate) struct Body<'t> {
    pub(crate) text: &'t str,
    /// The line of the file before the text's first line.
    pub(crate) line_offset: u32,
    /// The lines of the file left out of the text (nested anchors' markers), in order.
    pub(crate) skipped: &'t [u32],
    /// The byte of the file where the text starts.
    pub(crate) byte_offset: usize,
}

impl Body<'_> {
    /// The line of the file that `line` of the text is.
    pub(crate) fn line(&self, line: u32) -> u32 {
        match self.skipped {
            [] => self.line_offset + line,
            skipped => crate::selection::Selection::line_of(self.line_offset + 1, skipped, line),
        }
    }

    /// The source of `span` (bytes of the text), which starts on `line` of the text at
    /// `column`, for a diagnostic: a window of the line, whatever its length.
    fn source(&self, span: std::ops::Range<usize>, line: u32, column: u32) -> Source {
        Source::on_line(self.text, span, self.line(line), column, self.byte_offset)
    }
}

/// What a directory or glob walk is of: the glob's pattern (none for a directory) and where
/// it is walked from.
pub(crate) type WalkKey = (Option<String>, Location);

/// Diagnostics counted but not kept, past [`MAX_DIAGNOSTICS`].
#[derive(Default, Clone, Copy)]
struct LeftOut {
    errors: usize,
    warnings: usize,
}

/// One reference on its way through the run: its text, its record and where it stands.
pub(crate) struct Item<'t> {
    /// The item's exact source text.
    pub(crate) raw: &'t str,
    /// Its record, completed as the run goes.
    pub(crate) record: ReferenceRecord,
    /// The text it stands in and its span there; its [`Source`] is made only for a
    /// diagnostic, so an item costs nothing that grows with its place in the text.
    body: Body<'t>,
    span: std::ops::Range<usize>,
    /// The line of the text the span starts on.
    line: u32,
    /// Lines the line limit cut off the item's file (its marker stands for them).
    pub(crate) lines_cut: u64,
    /// Lines of its selection left out of its text (nested anchors' markers), in order.
    pub(crate) skipped: Vec<u32>,
}

/// One assembly run.
pub(crate) struct Run<'a> {
    pub(crate) setup: Setup<'a>,
    pub(crate) macros: Macros,
    /// The include chain: each document's location (none for a string) and name.
    pub(crate) chain: Vec<(Option<Location>, String)>,
    pub(crate) out: Out<'a>,
    /// The records so far; `content` stays empty (it went to the sink).
    pub(crate) assembly: Assembly,
    pub(crate) params: ParamsMerger,
    /// What the tools of the run may spend, and the walks they share.
    pub(crate) tools: ToolBudget,
    /// Where each included document of the chain was included from (the chain's documents
    /// after the first): what a diagnostic about its text as a whole names.
    pub(crate) sites: Vec<crate::record::At>,
    /// The prompt being expanded, when the run's text is one: what a reduced file keeps
    /// the lines for.
    pub(crate) prompt: Option<&'a str>,
    /// The most o200k tokens the content of the item at hand may take (an attachment's
    /// `max_tokens`), besides what the budget leaves.
    pub(crate) item_cap: Option<usize>,
    /// The ranges the item at hand keeps first when it is reduced (an attachment's).
    pub(crate) item_ranges: Vec<crate::record::Lines>,
    /// Whether the item at hand is the run's last (its last attachment): content placed
    /// whole then needs no room kept for a closing note, since nothing after it can be left
    /// out.
    pub(crate) item_last: bool,
    /// Whether the items at hand are attachments, which nobody wrote (their headings name
    /// their paths).
    pub(crate) attaching: bool,
    /// The message of the `E_BUDGET` that stopped the run, once it has.
    pub(crate) budget_stop: Option<String>,
    /// In the directory or glob expansion being written: the first file the token budget
    /// left out and how many files it left out with it.
    pub(crate) dir_drop: Option<(String, usize)>,
    /// The run's "did you mean" answers.
    hints: resolve::Hints,
    /// The last directory or glob walked, for the same one again.
    pub(crate) last_walk: Option<(WalkKey, std::sync::Arc<ctx_fs::Walk>)>,
    /// The paths the resolver did not know, so far in the run.
    pub(crate) misses: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Diagnostics counted past [`MAX_DIAGNOSTICS`], and whether an error was kept.
    left_out: LeftOut,
    kept_error: bool,
    started: Instant,
}

impl<'a> Run<'a> {
    pub(crate) fn new(setup: Setup<'a>, out: Out<'a>) -> Run<'a> {
        let mut macros = Macros::new();
        for (name, value) in &setup.options.defines {
            // Names were checked where the defines came from; a bad one is skipped here.
            let _ = macros.define(name, value.as_str());
        }
        Run {
            setup,
            macros,
            chain: Vec::new(),
            out,
            assembly: Assembly {
                content: String::new(),
                description: String::new(),
                params: Vec::new(),
                metadata: Map::new(),
                references: Vec::new(),
                diagnostics: Vec::new(),
                stats: Stats {
                    files: 0,
                    bytes: 0,
                    tokens: None,
                    tokenizer: setup.options.tokenizer.name(),
                    elapsed_ms: 0.0,
                    streamed: 0,
                },
            },
            params: ParamsMerger::new(),
            tools: ToolBudget::new(setup.options.limits.max_scan_bytes, REGEX_BUDGET),
            sites: Vec::new(),
            prompt: None,
            item_cap: None,
            attaching: false,
            item_ranges: Vec::new(),
            item_last: false,
            budget_stop: None,
            dir_drop: None,
            hints: resolve::Hints::default(),
            misses: std::sync::Mutex::default(),
            last_walk: None,
            left_out: LeftOut::default(),
            kept_error: false,
            started: Instant::now(),
        }
    }

    pub(crate) fn opts(&self) -> &'a Options {
        self.setup.options
    }

    pub(crate) fn sandbox(&self) -> &'a Sandbox {
        self.setup.sandbox
    }

    /// Ends the run: the attachments of append mode, the `W_ESCAPED` summary, the totals.
    ///
    /// # Errors
    ///
    /// The first write error.
    pub(crate) fn finish(mut self) -> Result<Assembly, std::io::Error> {
        self.out.finish();
        if let Some(message) = escaped_message(&std::mem::take(&mut self.out.escaped)) {
            let file = self.chain.first().map(|c| c.1.clone()).unwrap_or_default();
            self.assembly.diagnostics.push(DiagnosticRecord::new(
                Code::Escaped,
                message,
                file,
                1,
                1,
            ));
        }
        self.left_out_note();
        // A writer closed by its reader (`ctx … | head`) stops the run but is no failure:
        // the assembly holds what was found until then, so its diagnostics and status stand.
        if let Some(err) = self.out.budget.take_io_error()
            && err.kind() != std::io::ErrorKind::BrokenPipe
        {
            return Err(err);
        }
        let top = (!self.out.inline()).then(|| self.chain.first().map(|c| c.1.clone())).flatten();
        let mut assembly = self.assembly;
        if let Some(top) = top {
            // A prompt's directives are met as its text is scanned, its mentions when they are
            // attached after it: the prompt's are listed by their place in it, each of another
            // file (a file attached) after the prompt's that came before it (a stable sort).
            let mut last = (0, 0);
            let mut keyed: Vec<((u32, u32), DiagnosticRecord)> =
                std::mem::take(&mut assembly.diagnostics)
                    .into_iter()
                    .map(|d| {
                        if d.file == top {
                            last = (d.line, d.column);
                        }
                        (last, d)
                    })
                    .collect();
            keyed.sort_by_key(|(key, _)| *key);
            assembly.diagnostics = keyed.into_iter().map(|(_, d)| d).collect();
        }
        assembly.params = self.params.into_params();
        assembly.stats.bytes = self.out.budget.written();
        assembly.stats.tokens =
            self.out.budget.counting().then_some(self.out.budget.tokens_total());
        assembly.stats.elapsed_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        Ok(assembly)
    }

    // ----- output and diagnostics ---------------------------------------------------------

    /// Writes text within the output budget; the write that would pass it leaves an
    /// `E_BUDGET` marker and diagnostic instead, and the run stops.
    pub(crate) fn write(&mut self, text: &str) {
        if let Err(message) = self.out.write(text) {
            self.budget_spent(message);
        }
    }

    /// Writes the document's own text (whole in append mode); the prompt's own text
    /// (`prompt`) is not counted against the token budget.
    pub(crate) fn text(&mut self, text: &str, prompt: bool) {
        self.out.budget.set_exempt(prompt);
        let written = self.out.text(text);
        self.out.budget.set_exempt(false);
        if let Err(message) = written {
            self.budget_spent(message);
        }
    }

    /// Records that the output budget is spent, with its marker; the run stops.
    pub(crate) fn budget_spent(&mut self, message: String) {
        self.budget_spent_at(message, None);
    }

    /// Records that the output budget is spent while placing `item` (at the item, as its
    /// error: nothing of it was written), or while writing text; the run stops.
    pub(crate) fn budget_spent_at(&mut self, message: String, item: Option<&mut Item<'_>>) {
        // In place, `--on-error` says what the item that ran over leaves: its marker, its
        // source text, or nothing; text that ran over always leaves the marker.
        let marker = match (&item, self.opts().on_error) {
            (Some(item), OnError::Keep) => item.raw.to_owned(),
            (Some(_), OnError::Drop) => String::new(),
            _ => error_marker(Code::Budget, &message),
        };
        self.out.spent(&marker, &message);
        self.budget_stop = Some(message.clone());
        match item {
            Some(item) => {
                item.record.bytes = 0;
                item.record.error = Some(crate::record::ErrorRecord {
                    code: Code::Budget,
                    message: message.clone(),
                });
                self.diagnose_item(item, Code::Budget, message);
            }
            // Text of an included document: at the include that brought it.
            None => match self.sites.last() {
                Some(at) => {
                    let (file, line, column) = (at.file.clone(), at.line, at.column);
                    self.diagnose(DiagnosticRecord::new(Code::Budget, message, file, line, column));
                }
                None => {
                    let file = self.chain.last().map(|c| c.1.clone()).unwrap_or_default();
                    self.diagnose(DiagnosticRecord::new(Code::Budget, message, file, 1, 1));
                }
            },
        }
    }

    /// Records a diagnostic; under `--strict` an error stops the run. Past
    /// [`MAX_DIAGNOSTICS`] it is only counted (an error is kept when none was).
    pub(crate) fn diagnose(&mut self, record: DiagnosticRecord) {
        let error = record.severity == Severity::Error;
        if self.opts().strict && error {
            self.out.budget.stop(Stop::Strict);
        }
        // Past the cap, only a first error is kept.
        let first_error = error && !self.kept_error;
        if self.assembly.diagnostics.len() >= MAX_DIAGNOSTICS && !first_error {
            match record.severity {
                Severity::Error => self.left_out.errors += 1,
                Severity::Warning => self.left_out.warnings += 1,
            }
            return;
        }
        self.kept_error |= error;
        self.assembly.diagnostics.push(record);
    }

    /// The `W_LIMIT` that says how many diagnostics were left out, if any were.
    fn left_out_note(&mut self) {
        let LeftOut { errors, warnings } = self.left_out;
        if errors + warnings == 0 {
            return;
        }
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let message = format!(
            "{} more diagnostics not kept ({}, {}); a run keeps {MAX_DIAGNOSTICS}",
            errors + warnings,
            plural(errors, "error"),
            plural(warnings, "warning"),
        );
        let file = self.chain.first().map(|c| c.1.clone()).unwrap_or_default();
        self.assembly.diagnostics.push(DiagnosticRecord::new(Code::Limit, message, file, 1, 1));
    }

    /// Records a diagnostic about an item, at the item.
    pub(crate) fn diagnose_item(&mut self, item: &Item<'_>, code: Code, message: String) {
        let at = &item.record.at;
        let record = DiagnosticRecord::new(code, message, at.file.clone(), at.line, at.column)
            .with_source(Some(item.body.source(item.span.clone(), item.line, at.column)));
        self.diagnose(record);
    }

    /// Writes document text that starts at `line` and `column` of its file, sanitised,
    /// reporting hidden characters where they are; text of an included document counts
    /// against the token budget as it is written (made visible and numbered), so that what
    /// the budget kept is what goes out.
    /// `skipped`: the lines of the file left out of its text, which numbering passes over.
    fn write_text(&mut self, doc: &Doc, text: &str, (line, column): (u32, u32), skipped: &[u32]) {
        let bounded = self.chain.len() > 1;
        let marker = crate::cut::text_marker(self.out.budget.named(), &doc.name);
        let clean = sanitize(text);
        let shown = if self.numbering() {
            std::borrow::Cow::Owned(number_from(&clean.text, line, column, skipped))
        } else {
            std::borrow::Cow::Borrowed(clean.text.as_ref())
        };
        let fits = self.out.budget.fits_bytes(shown.len() + self.short_note_room());
        let reserve = if bounded && !fits { self.text_cut_reserve(&marker) } else { 0 };
        let spent = self.out.budget.text(&shown, bounded, reserve);
        let cut = spent.cut && self.out.budget.first_text_cut();
        if cut {
            let named = self.out.budget.named();
            let message = crate::cut::text_cut_message(named, &doc.name);
            // Where the cut falls: after the whole lines kept (a cut keeps whole lines).
            let kept_lines = spent.content.matches('\n').count();
            let at = match u32::try_from(kept_lines) {
                Ok(0) => (line, column),
                Ok(n) => (line.saturating_add(n), 1),
                Err(_) => (u32::MAX, 1),
            };
            self.diagnose(DiagnosticRecord::new(
                Code::TokenBudget,
                message,
                doc.name.clone(),
                at.0,
                at.1,
            ));
        }
        // The hidden characters reported are those of the lines written: a cut keeps whole
        // lines, and neither making text visible nor numbering it adds a line break.
        let kept = match spent.cut {
            false => text,
            true => lines_prefix(text, spent.content.matches('\n').count()),
        };
        let cut_clean;
        let warned = match spent.cut {
            false => &clean,
            true => {
                cut_clean = sanitize(kept);
                &cut_clean
            }
        };
        for (code, at_line, at_column, message) in warned.warnings_at(kept) {
            // On the text's first line, columns count from where the text starts.
            let column = if at_line == 1 { column + at_column - 1 } else { at_column };
            let line = line + at_line.saturating_sub(1);
            self.diagnose(DiagnosticRecord::new(code, message, doc.name.clone(), line, column));
        }
        self.text(&spent.content, !bounded);
        if cut {
            self.text_cut_marker(marker);
        }
    }

    /// Whether the text being written is an included document's and lines are numbered
    /// (`--line-numbers` numbers included lines, not the top-level document's).
    fn numbering(&self) -> bool {
        self.opts().line_numbers && self.chain.len() > 1
    }

    /// Records a failed item: a diagnostic, the record's error, and what `--on-error` leaves
    /// in inline output, or the failure list of append mode (whose text is already written).
    pub(crate) fn fail(&mut self, item: &mut Item<'_>, code: Code, message: String) {
        self.diagnose_item(item, code, message.clone());
        item.record.error = Some(ErrorRecord { code, message: message.clone() });
        if self.out.inline() {
            match self.opts().on_error {
                OnError::Marker => self.leave_in_place(item, &error_marker(code, &message)),
                // The source text as written: the document's own, bounded as its text is.
                OnError::Keep => self.leave_in_place(item, item.raw),
                OnError::Drop => {}
            }
        } else {
            // A binary file is left out without an error, but it was asked for: it is listed
            // with the failures, so that it does not vanish from the output.
            if code.severity() == Severity::Error || code == Code::Binary {
                let reference = reference_text(item.raw);
                self.out.failure(Failure { reference, code, message });
            }
        }
    }

    /// Records an item the sandbox refused or missed, with a hint where one helps.
    pub(crate) fn fs_fail(&mut self, item: &mut Item<'_>, err: &ctx_fs::Error, written: &str) {
        let code = err.code();
        let mut message = err.to_string();
        if code == Code::NotFound {
            let including = match self.chain.last() {
                Some((Some(location), _)) => Some(location.clone()),
                _ => None,
            };
            let base = including.as_ref().and_then(Location::parent);
            let base = base.unwrap_or_else(|| self.sandbox().workspace());
            let hint = self.hints.hint(
                self.sandbox(),
                self.setup.resolver,
                written,
                &base,
                including.as_ref(),
            );
            if let Some(hint) = hint {
                message.push_str(&format!(" (did you mean {hint}?)"));
                return self.fail(item, code, message);
            }
        }
        if matches!(code, Code::NotFound | Code::BadPath) {
            message.push_str(&lines_hint(written));
        }
        self.fail(item, code, message);
    }

    // ----- the run --------------------------------------------------------------------------

    /// Scans and preprocesses a body and writes it with every active item replaced.
    pub(crate) fn expand(&mut self, doc: &Doc, body: Body<'_>) {
        // Inside fenced code only inline mode expands the includes alone on their lines.
        let mut syntax =
            ctx_syntax::Options { fence_includes: self.out.inline(), ..self.opts().syntax };
        if doc.links_only {
            syntax.mentions = false;
            syntax.includes = false;
            syntax.directives = false;
        }
        let scan = ctx_syntax::scan_with(body.text, &syntax);
        let mut positions = Positions::new(body.text);
        let mut pre = Preprocessor::new(&scan);
        // Append mode writes the whole text first, then the attachments in source order.
        let mut requests = Vec::new();
        // After an item alone on its line whose insertion ended the line: where its line ends.
        let mut skip_to: Option<usize> = None;
        while let Some(event) = pre.next_event(&mut self.macros) {
            if self.out.budget.stopped() {
                break;
            }
            match event {
                Event::Text { text: mut piece, mut span } => {
                    if let Some(end) = skip_to.take() {
                        let skip = end.saturating_sub(span.start).min(piece.len());
                        piece = &piece[skip..];
                        span.start += skip;
                    }
                    if self.out.inline() {
                        // The line is needed only for a warning: hidden or control characters,
                        // or a token budget that may cut here.
                        let clean = !crate::sanitize::may_change(piece);
                        let plain = clean && !self.numbering();
                        let pos = if plain && self.out.budget.fits_bytes(piece.len()) {
                            ctx_syntax::Position { line: 1, column: 1 }
                        } else {
                            positions.at(span.start)
                        };
                        let at = (body.line(pos.line), pos.column);
                        self.write_text(doc, piece, at, body.skipped);
                    } else {
                        let spent = self.out.budget.text(piece, false, 0);
                        self.text(&spent.content, true);
                    }
                }
                // What an escape stands for is text of its document, bounded as the text
                // around it is (inline); append mode keeps the prompt as written.
                Event::Escape { raw, unescaped, span } if self.out.inline() => {
                    let pos = positions.at(span.start + (raw.len() - unescaped.len()));
                    let at = (body.line(pos.line), pos.column);
                    self.write_text(doc, unescaped, at, body.skipped);
                }
                Event::Escape { raw, .. } => self.text(raw, self.chain.len() <= 1),
                Event::Substitution { value, pos, .. } => {
                    let at = (body.line(pos.line), pos.column);
                    self.write_text(doc, &value.clone(), at, body.skipped);
                }
                Event::Request(request) if self.out.inline() => {
                    skip_to = self.request(doc, body, &request);
                }
                Event::Request(request) => {
                    self.text(request.span.of(body.text), true);
                    requests.push(request);
                }
                Event::Diagnostic(d) => {
                    let record = DiagnosticRecord::new(
                        d.code,
                        d.message,
                        doc.name.clone(),
                        body.line(d.pos.line),
                        d.pos.column,
                    )
                    .with_source(Some(body.source(
                        d.span.start..d.span.end,
                        d.pos.line,
                        d.pos.column,
                    )));
                    self.diagnose(record);
                }
            }
        }
        for request in &requests {
            if self.out.budget.stopped() {
                break;
            }
            self.request(doc, body, request);
        }
    }

    /// One active include, mention or tool call: its record, the include budget, then the
    /// step for its kind. In inline mode, for an item alone on its line whose insertion ends
    /// with a line ending, the end of its line, which is not written again.
    pub(crate) fn request(
        &mut self,
        doc: &Doc,
        body: Body<'_>,
        request: &Request<'_>,
    ) -> Option<usize> {
        let raw = request.span.of(body.text);
        let syntax = match request.kind {
            RequestKind::Mention(_) => Syntax::Mention,
            _ if raw.starts_with("@{") => Syntax::Directive,
            _ => Syntax::Include,
        };
        let record = ReferenceRecord {
            raw: raw.to_owned(),
            syntax,
            kind: Kind::File,
            path: String::new(),
            lines: None,
            bytes: 0,
            tokens: None,
            truncated: false,
            front_matter: None,
            at: At {
                file: doc.name.clone(),
                line: body.line(request.pos.line),
                column: request.pos.column,
            },
            error: None,
            depth: self.chain.len().saturating_sub(1),
            skipped: 0,
            suggested: false,
            encoding: None,
            cut: None,
            dropped: 0,
        };
        let span = request.span.start..request.span.end;
        let mut item = Item {
            raw,
            record,
            body,
            span,
            line: request.pos.line,
            lines_cut: 0,
            skipped: Vec::new(),
        };
        if let Err(message) = self.out.budget.admit_include() {
            self.fail(&mut item, Code::Budget, message);
            self.assembly.references.push(item.record);
            return None;
        }
        // The record's place is taken now, so that records come parent first (depth-first
        // pre-order) even though a document's record is complete only after its expansion.
        let slot = self.assembly.references.len();
        self.assembly.references.push(item.record.clone());
        let line_end = if !self.out.inline() {
            None
        } else if raw.starts_with("{{") {
            // mdBook repeats what its output holds before a link on the link's line on every
            // further line of what it inserts, and keeps the rest of the line.
            self.out.push_line_prefix();
            Some(None)
        } else {
            line::alone_on_line(body.text, request.span.start..request.span.end).map(|alone| {
                self.out.push_prefix(alone.continuation, true);
                Some(alone.line_end)
            })
        };
        match request.kind {
            RequestKind::Tool(call) => self.tool(doc, &call, &mut item),
            RequestKind::Include(reference) => self.reference(doc, &reference, false, &mut item),
            RequestKind::Mention(reference) => self.reference(doc, &reference, true, &mut item),
        }
        // Tags escaped while this item's content was written are told at the item, in the
        // walk's order (its nested items told theirs at their own places).
        if let Some(message) = escaped_message(&std::mem::take(&mut self.out.escaped)) {
            self.diagnose_item(&item, Code::Escaped, message);
        }
        let ended_line = line_end.is_some() && self.out.pop_prefix();
        let line_end = line_end.flatten();
        let record = &mut item.record;
        if self.out.budget.counting() && record.tokens.is_none() && record.error.is_none() {
            record.tokens = Some(0);
        }
        self.assembly.references[slot] = item.record;
        line_end.filter(|_| ended_line)
    }
}

/// The `W_ESCAPED` message of what was escaped, if anything was.
fn escaped_message(escaped: &crate::printer::Escaped) -> Option<String> {
    (escaped.count > 0).then(|| {
        format!(
            "{} tag{} shaped like the wrapper's escaped as &lt; in {}",
            escaped.count,
            if escaped.count == 1 { "" } else { "s" },
            escaped.paths.join(", ")
        )
    })
}

/// Lines and columns of byte offsets of a text, counted on from the last offset asked when
/// they move forward (a text's pieces come in order): a long line of many pieces is counted
/// through once, not once for each piece.
struct Positions<'t> {
    text: &'t str,
    offset: usize,
    pos: Position,
}

impl<'t> Positions<'t> {
    fn new(text: &'t str) -> Positions<'t> {
        Positions { text, offset: 0, pos: Position { line: 1, column: 1 } }
    }

    /// The 1-based line and column (in characters) of byte `offset`, moved back to a
    /// character boundary.
    fn at(&mut self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        if offset < self.offset {
            *self = Positions::new(self.text);
        }
        let segment = &self.text[self.offset..offset];
        let saturate = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        match memchr::memrchr(b'\n', segment.as_bytes()) {
            Some(last) => {
                let newlines = memchr::memchr_iter(b'\n', segment.as_bytes()).count();
                self.pos.line = self.pos.line.saturating_add(saturate(newlines));
                let on_line = segment[last + 1..].chars().count();
                self.pos.column = saturate(on_line).saturating_add(1);
            }
            None => {
                self.pos.column = self.pos.column.saturating_add(saturate(segment.chars().count()));
            }
        }
        self.offset = offset;
        self.pos
    }
}

/// The reference as written, without `@`, brackets or quotes: what `#### Source:` and the
/// failure list show.
pub(crate) fn reference_text(raw: &str) -> String {
    let inner = if let Some(body) = raw.strip_prefix("@[").and_then(|r| r.strip_suffix(']')) {
        body.trim()
    } else if let Some(body) = raw.strip_prefix("@{").and_then(|r| r.strip_suffix('}')) {
        body.trim().trim_start_matches("include").trim_start_matches(':').trim()
    } else {
        raw.strip_prefix('@').unwrap_or(raw)
    };
    match inner.strip_prefix('"').and_then(|rest| rest.split_once('"')) {
        Some((quoted, after)) => format!("{quoted}{after}"),
        None => inner.to_owned(),
    }
}

/// The first `lines` lines of `text`, with their line breaks.
fn lines_prefix(text: &str, lines: usize) -> &str {
    match lines.checked_sub(1).and_then(|n| text.match_indices('\n').nth(n)) {
        Some((at, _)) => &text[..=at],
        None if lines == 0 => "",
        None => text,
    }
}

/// `text`, which starts at `line` and `column` of its file, with `N: ` before each of its
/// lines that starts there (the first one only when it starts its line).
fn number_from(text: &str, line: u32, column: u32, skipped: &[u32]) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut at_start = column == 1;
    let mut no = line;
    for piece in text.split_inclusive('\n') {
        if at_start {
            out.push_str(&no.to_string());
            out.push_str(": ");
        }
        out.push_str(piece);
        at_start = piece.ends_with('\n');
        if at_start {
            no = no.saturating_add(1);
            while skipped.binary_search(&no).is_ok() {
                no = no.saturating_add(1);
            }
        }
    }
    out
}

/// A hint for a path written with a line after a colon (`@src/a.rs:10` names a file
/// `a.rs:10`; lines are written `#L10`), or nothing.
pub(crate) fn lines_hint(written: &str) -> String {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let range = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    match written.rsplit_once(':') {
        // `a.rs:10:20`, an include's range written on a mention: lines 10 to 20.
        Some((head, end)) if number(end) => match head.rsplit_once(':') {
            Some((path, start)) if number(start) => {
                format!(" (for lines, write {path}#L{start}-{end})")
            }
            _ => format!(" (for lines, write {head}#L{end})"),
        },
        Some((path, line)) if range(line) => format!(" (for lines, write {path}#L{line})"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colon_range_on_a_mention_is_hinted_as_its_fragment() {
        assert_eq!(lines_hint("a.rs:10"), " (for lines, write a.rs#L10)");
        assert_eq!(lines_hint("a.rs:10-20"), " (for lines, write a.rs#L10-20)");
        assert_eq!(lines_hint("a.txt:2:3"), " (for lines, write a.txt#L2-3)");
        assert_eq!(lines_hint("x:y:3"), " (for lines, write x:y#L3)");
        assert_eq!(lines_hint("notes:v2.md"), "");
        assert_eq!(lines_hint("a.rs:"), "");
    }

    #[test]
    fn positions_count_on_from_the_last() {
        let text = "ab\u{e9}c\nd\u{1f600}e\n\nf";
        let index = ctx_syntax::LineIndex::new(text);
        let mut positions = Positions::new(text);
        // Forward, repeated, backward and past the end, and inside a character.
        for offset in [0, 1, 3, 4, 4, 6, 8, 11, 2, 12, 13, 100, 7, 0] {
            assert_eq!(positions.at(offset), index.position(offset), "{offset}");
        }
    }

    #[test]
    fn reference_texts() {
        assert_eq!(reference_text("@[a.md:2:4]"), "a.md:2:4");
        assert_eq!(reference_text("@src/a.rs#L1-2"), "src/a.rs#L1-2");
        assert_eq!(reference_text("@\"my file.md\"#L2"), "my file.md#L2");
        assert_eq!(reference_text("@[\"notes:v2.md\":2]"), "notes:v2.md:2");
        assert_eq!(reference_text("@{include \"a.md\"}"), "a.md");
    }
}
