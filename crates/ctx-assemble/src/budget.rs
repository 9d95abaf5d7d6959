//! The budgets of one run (assembly.md §4 and §7): output bytes, includes and tokens, and the
//! state that says whether the walk must stop.
//!
//! Every budget is checked before the work it bounds, so a hostile document ends early.

use std::borrow::Cow;
use std::io;

use crate::options::Options;

/// Receives the output as the walk produces it.
pub(crate) trait Sink {
    fn write(&mut self, text: &str) -> io::Result<()>;
}

impl Sink for String {
    fn write(&mut self, text: &str) -> io::Result<()> {
        self.push_str(text);
        Ok(())
    }
}

/// A sink over any writer.
pub(crate) struct WriteSink<'w>(pub(crate) &'w mut dyn io::Write);

impl Sink for WriteSink<'_> {
    fn write(&mut self, text: &str) -> io::Result<()> {
        self.0.write_all(text.as_bytes())
    }
}

/// A sink that writes what it is given as the inside of a JSON string, escaped as
/// serde_json escapes a whole string, a bounded piece at a time.
pub(crate) struct JsonStringSink<'w> {
    writer: &'w mut dyn io::Write,
    escaped: Vec<u8>,
}

impl<'w> JsonStringSink<'w> {
    pub(crate) fn new(writer: &'w mut dyn io::Write) -> JsonStringSink<'w> {
        JsonStringSink { writer, escaped: Vec::new() }
    }
}

impl Sink for JsonStringSink<'_> {
    fn write(&mut self, text: &str) -> io::Result<()> {
        const PIECE: usize = 64 * 1024;
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = rest.len().min(PIECE);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (piece, tail) = rest.split_at(cut);
            self.escaped.clear();
            serde_json::to_writer(&mut self.escaped, piece).map_err(io::Error::other)?;
            // Without the quotes around the piece.
            self.writer.write_all(&self.escaped[1..self.escaped.len() - 1])?;
            rest = tail;
        }
        Ok(())
    }
}

/// Why the walk stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The output or include budget is spent.
    Budget,
    /// `--strict` and an error.
    Strict,
    /// Writing failed.
    Io,
}

/// A piece of document text after the token budget: what is left of it.
pub(crate) struct Spent<T> {
    /// The content, cut when the budget ran out.
    pub(crate) content: T,
    /// Whether the budget cut it.
    pub(crate) cut: bool,
}

/// Text written and not yet counted, handed to a thread of its own to count once it reaches
/// this many bytes: while the bytes written stay within the budget nothing needs counting (an
/// o200k token is at least one byte), so what was written is counted beside the writing, and
/// waited for only when a decision needs the count.
const CHUNK: usize = 1 << 20;

/// Chunks waiting to be counted at most; past them, the writing waits, so memory stays bounded
/// and the counting keeps pace with the writing.
const MAX_INFLIGHT: usize = 4;

/// Written pieces at least this long are looked up among the counts already taken.
const LAST_MIN: usize = 256;

/// The o200k counts of many texts, in parallel, through `known` when there are counts
/// remembered.
pub(crate) fn count_through<S: AsRef<str> + Sync>(
    known: Option<&ctx_tokens::KnownCounts>,
    texts: &[S],
) -> Vec<usize> {
    match known {
        Some(known) => known.count_many(texts),
        None => ctx_tokens::count_many(texts),
    }
}

/// Frames whose counts a run remembers.
const MAX_FRAMES: usize = 1024;

/// The budgets and the stop state of one run.
///
/// The token budget is kept in o200k tokens (a budget in another tokenizer's tokens is turned
/// into the o200k count that stays within it) and covers everything written but the prompt's
/// own text: content, frames, headings, notes and markers.
pub(crate) struct Budget {
    max_output: u64,
    max_includes: usize,
    /// The budget as given, in the tokenizer's tokens (0: none).
    max_tokens: usize,
    /// The budget the markers name ([`Budget::named`]).
    named: usize,
    /// The setting the markers tell the reader to raise.
    setting: crate::options::BudgetSetting,
    /// The same in o200k tokens.
    max_o200k: usize,
    tokenizer: ctx_tokens::Tokenizer,
    /// Whether the budget is the default guard, not one asked for.
    guard: bool,
    /// The room kept for the note that may end the output, once computed.
    note_reserve: Option<usize>,
    /// Counts of frames, which repeat (the same file mentioned again, files of one kind).
    frames: std::collections::HashMap<String, usize>,
    /// Counts of content, by its hash and length: a file mentioned again is not counted
    /// again.
    contents: std::collections::HashMap<(u64, usize), usize>,
    /// The hash of [`Budget::contents`], keyed anew for each run, so that no file can be made
    /// to share another's key.
    hasher: std::collections::hash_map::RandomState,
    /// The content counted last (where its bytes lie, their length, its count), which is
    /// written next: not counted again when it is. The first piece of at least [`LAST_MIN`]
    /// bytes written after it takes it, whether it is that content or not.
    last: Option<(usize, usize, usize)>,
    counting: bool,
    /// Bytes written so far.
    written: u64,
    includes: usize,
    /// o200k tokens of what was written and counted against the token budget.
    spent: usize,
    /// What was written against the token budget and not counted yet.
    pending: String,
    /// Where each piece of [`Budget::pending`] ends.
    ends: Vec<usize>,
    /// Counts what was written beside the writing, a chunk at a time (started with the first).
    counter: Option<ctx_tokens::Background>,
    /// Counts of content remembered by its bytes, across runs when the caller stores them.
    pub(crate) known: Option<std::sync::Arc<ctx_tokens::KnownCounts>>,
    /// Bytes handed to the counter and not counted yet: each is at least a token.
    inflight_bytes: usize,
    /// Whether what is written now is the prompt's own text, which the budget never counts.
    exempt: bool,
    tokens_total: u64,
    /// How many times the token budget cut something, so that a document's record can say
    /// its expansion was truncated.
    cuts: usize,
    /// Whether a cut of document text was reported already (once per run).
    text_warned: bool,
    /// Whether document text was cut: nothing bounded fits after it.
    exhausted: bool,
    stop: Option<Stop>,
    io_error: Option<io::Error>,
}

impl Budget {
    pub(crate) fn new(options: &Options) -> Budget {
        let max_tokens = options.limits.max_tokens;
        let tokenizer = options.tokenizer;
        Budget {
            max_output: options.limits.max_output_bytes,
            max_includes: options.limits.max_includes,
            max_tokens,
            named: options.named_budget.filter(|_| max_tokens > 0).unwrap_or(max_tokens),
            setting: options.budget_setting,
            max_o200k: tokenizer.o200k_within(max_tokens),
            tokenizer,
            guard: options.default_budget,
            note_reserve: None,
            frames: std::collections::HashMap::new(),
            contents: std::collections::HashMap::new(),
            hasher: std::collections::hash_map::RandomState::new(),
            last: None,
            counting: options.counts_tokens(),
            written: 0,
            includes: 0,
            spent: 0,
            pending: String::new(),
            ends: Vec::new(),
            counter: None,
            known: None,
            inflight_bytes: 0,
            exempt: false,
            tokens_total: 0,
            cuts: 0,
            text_warned: false,
            exhausted: false,
            stop: None,
            io_error: None,
        }
    }

    /// Whether the walk must stop.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// Why the walk stopped, if it did.
    pub(crate) fn stop_reason(&self) -> Option<Stop> {
        self.stop
    }

    /// Stops the walk (the first reason is kept).
    pub(crate) fn stop(&mut self, why: Stop) {
        self.stop.get_or_insert(why);
    }

    /// Counts one more include or mention; past the include budget, the message of the
    /// `E_BUDGET` it calls for, and the walk stops.
    pub(crate) fn admit_include(&mut self) -> Result<(), String> {
        self.includes += 1;
        if self.max_includes > 0 && self.includes > self.max_includes {
            self.stop(Stop::Budget);
            return Err(format!(
                "include budget of {} spent; the rest is not read",
                self.max_includes
            ));
        }
        Ok(())
    }

    /// Writes `text` if the output budget allows; when it does not, nothing is written, the
    /// walk stops, and the message of the `E_BUDGET` it calls for comes back.
    #[cfg(test)]
    pub(crate) fn write(&mut self, sink: &mut dyn Sink, text: &str) -> Result<(), String> {
        self.write_all(sink, &[Cow::Borrowed(text)])
    }

    /// Writes all of `pieces` if the output budget allows, or none of them.
    pub(crate) fn write_all(
        &mut self,
        sink: &mut dyn Sink,
        pieces: &[Cow<'_, str>],
    ) -> Result<(), String> {
        let len: u64 = pieces.iter().map(|p| p.len() as u64).sum();
        if self.stop.is_some() || len == 0 {
            return Ok(());
        }
        if self.max_output > 0 && self.written + len > self.max_output {
            self.stop(Stop::Budget);
            return Err(format!(
                "output budget of {} bytes spent; the rest is not read",
                self.max_output
            ));
        }
        for piece in pieces {
            self.write_unbudgeted(sink, piece);
        }
        Ok(())
    }

    /// Writes `text` whatever the output budget says (markers and the closing parts of the
    /// output), unless writing already failed. The token budget counts it all the same.
    pub(crate) fn write_unbudgeted(&mut self, sink: &mut dyn Sink, text: &str) {
        if self.stop == Some(Stop::Io) || text.is_empty() {
            return;
        }
        self.account(text);
        self.written += text.len() as u64;
        if let Err(err) = sink.write(text) {
            self.io_error = Some(err);
            self.stop = Some(Stop::Io);
        }
    }

    /// Counts written text against the token budget: kept aside uncounted while the bytes
    /// written stay within it.
    fn account(&mut self, text: &str) {
        if self.max_o200k == 0 || self.exempt {
            return;
        }
        if let Some(n) = self.known_count(text) {
            // Counted already (for the records, or for a decision): never counted twice.
            self.spent = self.spent.saturating_add(n);
            return;
        }
        let pending = self.pending.len() + text.len();
        if self.spent.saturating_add(self.inflight_bytes).saturating_add(pending) <= self.max_o200k
        {
            self.pending.push_str(text);
            self.ends.push(self.pending.len());
            if self.pending.len() >= CHUNK {
                // Far from the budget: counted beside the writing.
                self.hand_over();
            }
            return;
        }
        self.settle();
        self.spent = self.spent.saturating_add(ctx_tokens::count(text));
    }

    /// The count of `text` when it is the content counted last, written as it was counted
    /// (the same bytes in the same place, still held by the writer); the first piece of at
    /// least [`LAST_MIN`] bytes written takes the count, whether it is that content or not.
    fn known_count(&mut self, text: &str) -> Option<usize> {
        if text.len() < LAST_MIN {
            return None;
        }
        let (at, len, n) = self.last.take()?;
        (at == text.as_ptr() as usize && len == text.len()).then_some(n)
    }

    /// Forgets the content counted last: it is not written next (left out, or its batch
    /// ended).
    pub(crate) fn forget_last(&mut self) {
        self.last = None;
    }

    /// Hands what was written and not counted yet to the counter, and takes the counts of the
    /// chunks it finished.
    fn hand_over(&mut self) {
        let bytes = self.pending.len();
        let text = std::mem::take(&mut self.pending);
        let ends = std::mem::take(&mut self.ends);
        let counter = self.counter.get_or_insert_with(|| ctx_tokens::Background::new(MAX_INFLIGHT));
        counter.send(text, ends);
        self.inflight_bytes += bytes;
        while let Some((bytes, n)) = counter.poll() {
            self.inflight_bytes -= bytes;
            self.spent = self.spent.saturating_add(n);
        }
    }

    /// Counts what was written and not counted yet, waiting for the chunks being counted.
    fn settle(&mut self) {
        if let Some(counter) = &mut self.counter {
            while let Some((bytes, n)) = counter.wait() {
                self.inflight_bytes -= bytes;
                self.spent = self.spent.saturating_add(n);
            }
        }
        if !self.pending.is_empty() {
            // Each piece as it was written, as the pieces written later are counted.
            let mut start = 0;
            let pieces: Vec<&str> = self
                .ends
                .iter()
                .map(|&end| {
                    let piece = &self.pending[start..end];
                    start = end;
                    piece
                })
                .collect();
            let n: usize = ctx_tokens::count_many(&pieces).into_iter().sum();
            self.spent = self.spent.saturating_add(n);
            self.pending.clear();
            self.ends.clear();
        }
    }

    /// Marks what is written next as the prompt's own text (`true`), which the token budget
    /// does not count, or as anything else (`false`).
    pub(crate) fn set_exempt(&mut self, exempt: bool) {
        self.exempt = exempt;
    }

    /// Whether a token budget is kept.
    pub(crate) fn limited(&self) -> bool {
        self.max_tokens > 0
    }

    /// Whether `bytes` more bytes surely fit the token budget, without counting anything.
    pub(crate) fn fits_bytes(&self, bytes: usize) -> bool {
        !self.limited()
            || !self.exhausted
                && self
                    .spent
                    .saturating_add(self.inflight_bytes)
                    .saturating_add(self.pending.len())
                    .saturating_add(bytes)
                    <= self.max_o200k
    }

    /// The o200k tokens left in the budget once `reserve` more are spent.
    pub(crate) fn left(&mut self, reserve: usize) -> usize {
        if !self.limited() {
            return usize::MAX;
        }
        if self.exhausted {
            return 0;
        }
        self.room(reserve)
    }

    /// The o200k tokens left in the budget once `reserve` more are spent, even after a cut
    /// of document text: the room for its marker.
    pub(crate) fn room(&mut self, reserve: usize) -> usize {
        if !self.limited() {
            return usize::MAX;
        }
        self.settle();
        self.max_o200k.saturating_sub(self.spent.saturating_add(reserve))
    }

    /// o200k tokens the budget counted so far (what was written but the prompt).
    #[cfg(test)]
    pub(crate) fn spent(&mut self) -> usize {
        self.settle();
        self.spent
    }

    /// The o200k tokens every decision keeps for the note that may end the output.
    pub(crate) fn note_reserve(&mut self) -> usize {
        let (named, max) = (self.named(), self.max_o200k);
        *self.note_reserve.get_or_insert_with(|| crate::cut::note_reserve(named, max))
    }

    /// The o200k count of a frame, remembered for the frames met again (at most
    /// [`MAX_FRAMES`] of them).
    pub(crate) fn frame_tokens(&mut self, frame: &str) -> usize {
        if let Some(&n) = self.frames.get(frame) {
            return n;
        }
        let n = ctx_tokens::count(frame);
        if self.frames.len() < MAX_FRAMES {
            self.frames.insert(frame.to_owned(), n);
        }
        n
    }

    /// The o200k count of content, remembered for content met again (at most
    /// [`MAX_FRAMES`] pieces).
    pub(crate) fn content_tokens(&mut self, text: &str) -> usize {
        let key = self.content_key(text);
        if let Some(&n) = self.contents.get(&key) {
            self.last = Some((text.as_ptr() as usize, text.len(), n));
            return n;
        }
        let n = self.count_content(text);
        if self.contents.len() < MAX_FRAMES {
            self.contents.insert(key, n);
        }
        self.written_next(text, n);
        n
    }

    /// The key of content in [`Budget::contents`].
    fn content_key(&self, text: &str) -> (u64, usize) {
        (std::hash::BuildHasher::hash_one(&self.hasher, text), text.len())
    }

    /// The o200k count of content: the one remembered for its bytes, or counted.
    fn count_content(&self, text: &str) -> usize {
        match &self.known {
            Some(known) => known.count(text),
            None => ctx_tokens::count(text),
        }
    }

    /// The o200k counts of many pieces of content, in parallel, through the counts
    /// remembered.
    pub(crate) fn count_contents<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<usize> {
        count_through(self.known.as_deref(), texts)
    }

    /// Remembers the count of content counted elsewhere (in parallel, for a directory).
    pub(crate) fn known(&mut self, text: &str, n: usize) {
        // Hashed only while there is room to keep it: past [`MAX_FRAMES`] pieces, hashing
        // every file of a large directory would keep nothing.
        if self.contents.len() < MAX_FRAMES {
            let key = self.content_key(text);
            self.contents.insert(key, n);
        }
        self.written_next(text, n);
    }

    /// Says that `text`, of `n` o200k tokens, is written next, as it is (the same bytes in
    /// the same place): the budget takes its count rather than counting it again.
    pub(crate) fn written_next(&mut self, text: &str, n: usize) {
        self.last = Some((text.as_ptr() as usize, text.len(), n));
    }

    /// What a `W_BUDGET` adds about the option that sets the budget.
    pub(crate) fn hint(&self) -> String {
        if !self.guard {
            return String::new();
        }
        let lift = if self.setting.zero_lifts { ", 0 lifts it" } else { "" };
        format!("; the default budget: {} N changes it{lift}", self.setting.name)
    }

    /// A bound in bytes of what ends the output ([`crate::cut::note_bytes`]).
    pub(crate) fn note_bytes(&self) -> usize {
        crate::cut::note_bytes(self.named(), self.max_o200k)
    }

    /// The tokenizer of the run.
    pub(crate) fn tokenizer(&self) -> ctx_tokens::Tokenizer {
        self.tokenizer
    }

    /// Bytes written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Whether the output has no byte budget.
    pub(crate) fn output_unlimited(&self) -> bool {
        self.max_output == 0
    }

    /// Whether tokens are counted for the records in this run.
    pub(crate) fn counting(&self) -> bool {
        self.counting
    }

    /// The token budget as the markers, notes and warnings name it, in the tokenizer's
    /// tokens (0: none): as given, or the larger one it is what is left of
    /// ([`Options::named_budget`]).
    pub(crate) fn named(&self) -> crate::cut::Named {
        crate::cut::Named { max: self.named, tokenizer: self.tokenizer, setting: self.setting.name }
    }

    /// Tokens of content counted for the records so far, in the tokenizer's tokens.
    pub(crate) fn tokens_total(&self) -> u64 {
        self.tokens_total
    }

    /// Adds o200k tokens of content to the records' total; the same in the tokenizer's.
    pub(crate) fn add_total(&mut self, o200k: usize) -> u64 {
        let scaled = self.tokenizer.scale(o200k) as u64;
        self.tokens_total += scaled;
        scaled
    }

    /// How many cuts the token budget made so far.
    pub(crate) fn cuts(&self) -> usize {
        self.cuts
    }

    /// Counts one more cut or drop of the token budget.
    pub(crate) fn add_cut(&mut self) {
        self.cuts += 1;
    }

    /// Whether document text was cut: nothing bounded fits after it.
    pub(crate) fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// Cuts document text here: nothing bounded is written after it.
    pub(crate) fn exhaust(&mut self) {
        self.exhausted = true;
        self.cuts += 1;
    }

    /// Whether this is the first cut of document text to report: true once per run.
    pub(crate) fn first_text_cut(&mut self) -> bool {
        !std::mem::replace(&mut self.text_warned, true)
    }

    /// The first write error, which ends the run.
    pub(crate) fn take_io_error(&mut self) -> Option<io::Error> {
        self.io_error.take()
    }

    /// Counts a piece of document text. Text of an included document (`bounded`) is cut to
    /// what is left of the token budget once `reserve` tokens (what must still be written
    /// after it) are kept; the top-level document's own text is never cut.
    pub(crate) fn text<'t>(
        &mut self,
        piece: &'t str,
        bounded: bool,
        reserve: usize,
    ) -> Spent<Cow<'t, str>> {
        if piece.is_empty() {
            return Spent { content: Cow::Borrowed(piece), cut: false };
        }
        let tokens = self.counting.then(|| ctx_tokens::count(piece));
        let whole = |tokens: Option<usize>, budget: &mut Budget| {
            if let Some(n) = tokens {
                budget.add_total(n);
            }
            Spent { content: Cow::Borrowed(piece), cut: false }
        };
        if !bounded || self.fits_bytes(piece.len()) {
            return whole(tokens, self);
        }
        let left = self.left(reserve);
        if left == 0 {
            self.cuts += 1;
            // Nothing of it fits: not counted (a word of a megabyte is costly to count, and a
            // document can include one file many times).
            self.exhausted = true;
            return Spent { content: Cow::Borrowed(""), cut: true };
        }
        let fits = match tokens {
            Some(n) => n <= left,
            None => ctx_tokens::count_at_most(piece, left).is_some(),
        };
        if fits {
            return whole(tokens, self);
        }
        let cut = ctx_tokens::truncate_at_most(piece, left);
        self.cuts += 1;
        self.exhausted = true;
        if self.counting {
            self.add_total(cut.tokens);
        }
        Spent { content: Cow::Owned(cut.text.to_owned()), cut: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Limits;

    fn budget(limits: Limits, count: bool) -> Budget {
        Budget::new(&Options { limits, count_tokens: count, ..Options::default() })
    }

    #[test]
    fn output_budget_stops_before_the_write_that_would_pass_it() {
        let mut b = budget(Limits { max_output_bytes: 5, ..Limits::default() }, false);
        let mut out = String::new();
        assert!(b.write(&mut out, "abc").is_ok());
        let err = b.write(&mut out, "def").unwrap_err();
        assert_eq!(err, "output budget of 5 bytes spent; the rest is not read");
        assert_eq!(out, "abc");
        assert_eq!(b.stop_reason(), Some(Stop::Budget));
        // Markers still go out; nothing else does.
        b.write_unbudgeted(&mut out, "!");
        assert!(b.write(&mut out, "more").is_ok());
        assert_eq!(out, "abc!");
    }

    #[test]
    fn include_budget() {
        let mut b = budget(Limits { max_includes: 2, ..Limits::default() }, false);
        assert!(b.admit_include().is_ok());
        assert!(b.admit_include().is_ok());
        assert!(b.admit_include().is_err());
        assert!(b.stopped());
    }

    #[test]
    fn zero_means_no_limit() {
        let mut b =
            budget(Limits { max_includes: 0, max_output_bytes: 0, ..Limits::default() }, false);
        let mut out = String::new();
        for _ in 0..100 {
            assert!(b.admit_include().is_ok());
            assert!(b.write(&mut out, "0123456789").is_ok());
        }
        assert_eq!(b.written(), 1000);
    }

    #[test]
    fn token_budget_cuts_included_text_only() {
        let mut b = budget(Limits { max_tokens: 3, ..Limits::default() }, true);
        let top = b.text("one two three four five", false, 0);
        assert_eq!(top.content, "one two three four five");
        assert!(!top.cut);
        let included = b.text("alpha beta gamma delta epsilon\nzeta", true, 0);
        assert!(included.cut);
        assert_eq!(included.content, "");
        // Nothing bounded fits after a cut of text.
        assert_eq!(b.left(0), 0);
        assert!(!b.fits_bytes(1));
        assert_eq!(b.cuts(), 1);
    }

    #[test]
    fn everything_written_counts_but_the_prompt() {
        let mut b = budget(Limits { max_tokens: 100, ..Limits::default() }, false);
        let mut out = String::new();
        b.set_exempt(true);
        b.write_unbudgeted(&mut out, "the prompt's own words are never counted");
        b.set_exempt(false);
        assert_eq!(b.spent(), 0);
        b.write_unbudgeted(&mut out, "<file path=\"a\">\n");
        let frame = ctx_tokens::count("<file path=\"a\">\n");
        assert_eq!(b.spent(), frame);
        assert_eq!(b.left(10), 100 - frame - 10);
        // Bytes stand for tokens while they fit: nothing is counted until they may not.
        assert!(b.fits_bytes(100 - frame));
        assert!(!b.fits_bytes(101 - frame));
    }

    #[test]
    fn a_budget_in_anthropic_tokens_is_half_as_many_o200k() {
        let options = Options {
            limits: Limits { max_tokens: 101, ..Limits::default() },
            tokenizer: ctx_tokens::Tokenizer::AnthropicEstimate,
            ..Options::default()
        };
        let mut b = Budget::new(&options);
        assert_eq!(b.left(0), 50);
        assert_eq!(b.named().max, 101);
        assert_eq!(b.add_total(7), 14);
    }

    #[test]
    fn the_default_guard_names_the_setting_that_changes_it() {
        let guard = |budget_setting| {
            let limits = Limits { max_tokens: crate::DEFAULT_MAX_TOKENS, ..Limits::default() };
            let options =
                Options { limits, default_budget: true, budget_setting, ..Options::default() };
            Budget::new(&options)
        };
        let flag = guard(crate::BudgetSetting::FLAG);
        assert_eq!(flag.hint(), "; the default budget: --max-tokens N changes it, 0 lifts it");
        assert_eq!(flag.named().to_string(), "token budget of 200000 (o200k)");
        // A server call's 0 keeps the server's budget, so it is not offered as a way out.
        let call = guard(crate::BudgetSetting::CALL);
        assert_eq!(call.hint(), "; the default budget: max_tokens N changes it");
        assert_eq!(call.named().setting, "max_tokens");
        // A budget asked for says nothing of a default.
        assert_eq!(budget(Limits { max_tokens: 10, ..Limits::default() }, false).hint(), "");
    }

    #[test]
    fn a_budget_far_larger_than_what_is_kept_aside_counts_it_in_parts() {
        let mut b = budget(Limits { max_tokens: 100 << 20, ..Limits::default() }, false);
        let mut out = String::new();
        let piece = "word ".repeat(300_000);
        for _ in 0..3 {
            b.write_unbudgeted(&mut out, &piece);
        }
        // Kept aside up to a chunk, then counted beside the writing; memory stays bounded.
        assert!(b.pending.len() < CHUNK);
        assert!(b.fits_bytes(1));
        assert_eq!(b.spent(), 3 * ctx_tokens::count(&piece));
    }

    #[test]
    fn what_is_counted_beside_the_writing_is_what_the_plain_count_gives() {
        let mut b = budget(Limits { max_tokens: 1 << 30, ..Limits::default() }, false);
        let mut out = String::new();
        let mut plain = 0;
        for i in 0..60 {
            let piece =
                format!("<file path=\"f{i}.rs\">\n{}</file>\n", "fn ünï() {}\n".repeat(i * 997));
            plain += ctx_tokens::count(&piece);
            b.write_unbudgeted(&mut out, &piece);
            // Never more kept aside than a chunk and a piece.
            assert!(b.pending.len() < CHUNK + piece.len());
        }
        assert_eq!(b.spent(), plain);
        assert_eq!(b.inflight_bytes, 0);
    }

    #[test]
    fn a_count_given_for_one_text_never_stands_for_another() {
        let mut b = budget(Limits { max_tokens: 1 << 30, ..Limits::default() }, false);
        let mut out = String::new();
        let text = "word ".repeat(100);
        let n = ctx_tokens::count(&text);
        // A wrong count given for `text`, to see where it is taken.
        let wrong = 7;
        let mut expected = 0;
        // Taken by `text` written next, past a short frame written before it.
        b.written_next(&text, wrong);
        b.write_unbudgeted(&mut out, "<file path=\"a\">\n");
        b.write_unbudgeted(&mut out, &text);
        expected += ctx_tokens::count("<file path=\"a\">\n") + wrong;
        assert_eq!(b.spent(), expected);
        // Not by another text of the same length: that one is counted, and the count is
        // gone (the first long piece written takes it), so `text` after it is counted too.
        let other = "x".repeat(text.len());
        b.written_next(&text, wrong);
        b.write_unbudgeted(&mut out, &other);
        b.write_unbudgeted(&mut out, &text);
        expected += ctx_tokens::count(&other) + n;
        assert_eq!(b.spent(), expected);
        // Not by the same bytes elsewhere, nor by a part of them in the same place.
        let copy = text.clone();
        b.written_next(&text, wrong);
        b.write_unbudgeted(&mut out, &copy);
        b.written_next(&text, wrong);
        b.write_unbudgeted(&mut out, &text[..300]);
        expected += n + ctx_tokens::count(&text[..300]);
        assert_eq!(b.spent(), expected);
        // Not once forgotten.
        b.written_next(&text, wrong);
        b.forget_last();
        b.write_unbudgeted(&mut out, &text);
        expected += n;
        assert_eq!(b.spent(), expected);
    }

    #[test]
    fn without_a_budget_nothing_is_counted() {
        let mut b = budget(Limits { max_tokens: 0, ..Limits::default() }, false);
        let mut out = String::new();
        b.write_unbudgeted(&mut out, "abc");
        assert!(!b.limited());
        assert_eq!((b.spent(), b.left(5), b.tokens_total()), (0, usize::MAX, 0));
        assert!(b.fits_bytes(usize::MAX));
    }
}
