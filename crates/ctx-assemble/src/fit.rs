//! The token budget's decisions on a piece of content (assembly.md §7, "Limits on content"):
//! placed whole, reduced (`reduced.rs`), cut at a line with a marker ending what it kept, or
//! left out with a note in its place; the room for the content's frame and for the note that may end the output is
//! kept in every decision.

use std::borrow::Cow;

use ctx_syntax::Code;

use crate::cut::{Kept, cut_marker, dropped_note, lines};
use crate::out::Place;
use crate::printer::Entry;
use crate::record::{CutRecord, Lines};
use crate::run::{Item, Run};

/// Content on its way to the token budget, with its token count when the caller has it
/// already (counted in parallel for a directory's files).
pub(crate) struct Counted<'t> {
    pub(crate) text: Cow<'t, str>,
    pub(crate) tokens: Option<usize>,
    /// The whole text of the file the content shows, when it may be reduced rather than cut
    /// (a file mentioned without a range).
    pub(crate) whole: Option<&'t str>,
}

impl<'t> From<Cow<'t, str>> for Counted<'t> {
    fn from(text: Cow<'t, str>) -> Counted<'t> {
        Counted { text, tokens: None, whole: None }
    }
}

impl Run<'_> {
    /// Applies the token budget to one piece of content from `path`, to be placed as `probe`
    /// (the entry without its content) in `place`: the budget keeps room for its frame and for
    /// closing the output. Content that does not fit whole is cut at a line and ends with a
    /// marker; content of which no line fits is left out, with a note in its place unless
    /// `note` says the caller writes one of its own. A cut or drop is reported at the item.
    pub(crate) fn spend<'t>(
        &mut self,
        content: Counted<'t>,
        path: &str,
        item: &mut Item<'_>,
        (probe, place, note): (&Entry<'_>, Place, bool),
    ) -> Fitted<'t> {
        let Counted { text, tokens, whole } = content;
        let counting = self.out.budget.counting();
        let tokens = match tokens {
            None if counting => Some(self.out.budget.content_tokens(&text)),
            tokens => tokens,
        };
        if !self.out.budget.limited() {
            self.count_placed(tokens, item);
            return Fitted::Place(text);
        }
        let overhead = self.out.overhead(probe, place);
        // Every decision keeps room for the note that may end the output (in bytes first,
        // which stand for tokens without counting anything).
        let note_bytes = self.out.budget.note_bytes();
        // An item's own cap (an attachment's) holds whatever the budget leaves.
        let cap = self.item_cap;
        if cap.is_none_or(|c| text.len() <= c)
            && self.out.budget.fits_bytes(text.len() + overhead.len() + note_bytes)
        {
            if let Some(n) = tokens {
                // Counted for the records: the budget takes the count as the text is written.
                self.out.budget.written_next(&text, n);
            }
            self.count_placed(tokens, item);
            return Fitted::Place(text);
        }
        let note_reserve = self.out.closing_reserve();
        // A Markdown fence may grow with the content: two tokens of slack.
        let frame = self.out.budget.frame_tokens(&overhead) + 2;
        let left = self.out.budget.left(0);
        let within =
            |reserve: usize| left.checked_sub(frame + reserve).map(|a| a.min(cap.unwrap_or(a)));
        // The run's last item, placed whole, needs no room for a closing note: nothing after
        // it can be left out (unless something before it was, or failed, to be said after
        // it). Cut or left out, it keeps that room, for its marker or its note, as every
        // other item does.
        let last = self.item_last && place == Place::Entry && self.out.nothing_to_close();
        let Some(room) = within(if last { 0 } else { note_reserve }) else {
            // Not even the frame fits: left out, uncounted.
            return self.left_out(path, item, note);
        };
        // Counted once: a piece that does not fit needs its count for its marker anyway.
        let total_tokens = match tokens {
            Some(n) => {
                // Written next: the budget takes this count rather than counting it again.
                self.out.budget.known(&text, n);
                n
            }
            None => self.out.budget.content_tokens(&text),
        };
        if total_tokens <= room {
            self.count_placed(Some(total_tokens), item);
            return Fitted::Place(text);
        }
        let Some(avail) = within(note_reserve) else {
            return self.left_out(path, item, note);
        };
        let skipped = if place == Place::Entry { item.skipped.clone() } else { Vec::new() };
        let kept = Kept {
            path,
            tool: matches!(probe, Entry::Tool { .. }),
            first: item
                .record
                .lines
                .filter(|_| place == Place::Entry)
                .map_or(1, |l| u64::from(l.start)),
            skipped: &skipped,
            kept_lines: 0,
            total_lines: file_lines(&text, item.lines_cut),
            kept_tokens: 0,
            total_tokens: self.out.budget.tokenizer().scale(total_tokens) as u64,
        };
        if let Some(whole) = whole
            && let Some(reduced) = self.reduce(whole, &kept, avail, item)
        {
            return Fitted::Place(Cow::Owned(reduced));
        }
        self.shorten(&text, kept, avail, item, note)
    }

    /// Writes what a failed item leaves in place in inline output (its marker, or its source
    /// text). In the text of an included document it is part of that text, and the token
    /// budget bounds it as it bounds the text: past the point where the budget cut the
    /// document it is left out (its diagnostic still names the failure), and one that does
    /// not fit ends the document's text there, with the budget's marker when that fits. What
    /// the top-level document's own failures leave is its own text, never cut nor counted
    /// against the budget.
    pub(crate) fn leave_in_place(&mut self, item: &Item<'_>, left: &str) {
        // A reference's source text (`--on-error keep`) is document text: what it hides is
        // made visible, as in the text around it (the item's error names it).
        let left = crate::sanitize::sanitize(left).text;
        if self.fits_in_own_text(item, &left) {
            // In the top-level document's own text it is that text's, and counted as that
            // text is: not against the budget, which it is never cut by.
            let own = self.chain.len() <= 1;
            self.out.budget.set_exempt(own);
            self.out.write_unbudgeted(&left);
            self.out.budget.set_exempt(false);
        }
    }

    /// [`Run::fits_in_text`] in the text of the document being expanded: bounded when it is
    /// an included one.
    pub(crate) fn fits_in_own_text(&mut self, item: &Item<'_>, left: &str) -> bool {
        let name = self.chain.last().map(|(_, name)| name.clone()).unwrap_or_default();
        self.fits_in_text(item, left, self.chain.len() > 1, &name)
    }

    /// Whether `left`, which goes into document text in place (a failure's marker, the note
    /// of the encoding a document was decoded from, a mention's text left as written), is
    /// to be written. In the text of an included document (`bounded`, `name`) the token
    /// budget bounds it as it bounds that text (see [`Run::leave_in_place`]): when it does
    /// not fit, the document's text ends here, with the budget's marker when that fits, and
    /// nothing bounded is written after it. In the top-level document's own text it is.
    pub(crate) fn fits_in_text(
        &mut self,
        item: &Item<'_>,
        left: &str,
        bounded: bool,
        name: &str,
    ) -> bool {
        if !bounded || !self.out.budget.limited() {
            return true;
        }
        if self.out.budget.exhausted() {
            return false;
        }
        let named = self.out.budget.named();
        let marker = crate::cut::text_marker(named, name);
        let closing = self.out.closing();
        let short_note = self.short_note_room();
        if self.out.budget.fits_bytes(left.len() + marker.len() + closing.len() + 1 + short_note) {
            return true;
        }
        let room = self.out.budget.left(self.text_cut_reserve(&marker));
        if ctx_tokens::count_at_most(left, room).is_some() {
            return true;
        }
        self.out.budget.exhaust();
        if self.out.budget.first_text_cut() {
            let message = crate::cut::text_cut_message(named, name);
            self.diagnose_item(item, Code::TokenBudget, message);
        }
        self.text_cut_marker(marker);
        false
    }

    /// The o200k tokens a piece of document text that may be cut leaves in the budget: the
    /// closing, the cut's `marker` on a line of its own, and the short note's room.
    pub(crate) fn text_cut_reserve(&self, marker: &str) -> usize {
        ctx_tokens::count(&self.out.closing())
            + ctx_tokens::count(marker)
            + 1
            + self.short_note_room()
    }

    /// The o200k tokens (bounded by bytes) a cut of document text keeps beside its marker for
    /// the short form of the closing note, when files were left out before it with no note of
    /// their own: the marker speaks only of what comes after the cut.
    pub(crate) fn short_note_room(&self) -> usize {
        match self.out.left_out.is_empty() {
            true => 0,
            false => crate::cut::SHORT_NOTE.len(),
        }
    }

    /// Writes the marker of a cut in document text (`marker`, [`crate::cut::text_marker`])
    /// on a line of its own, when it fits what the budget leaves before the closing; the
    /// `W_BUDGET` says the same in any case.
    pub(crate) fn text_cut_marker(&mut self, mut marker: String) {
        if !self.out.at_line_start() {
            marker.insert(0, '\n');
        }
        // Files left out before the cut keep room for the closing note that says so.
        let closing = ctx_tokens::count(&self.out.closing()) + self.short_note_room();
        if ctx_tokens::count_at_most(&marker, self.out.budget.room(closing)).is_some() {
            self.text(&marker, false);
        } else {
            self.out.left_out.cut_unmarked();
        }
    }

    /// Adds the tokens of content placed (whole or cut; not what the budget left out) to its
    /// record and the run's total, when the run counts.
    pub(crate) fn count_placed(&mut self, o200k: Option<usize>, item: &mut Item<'_>) {
        if self.out.budget.counting()
            && let Some(n) = o200k
        {
            let scaled = self.out.budget.add_total(n);
            item.record.tokens = Some(item.record.tokens.unwrap_or(0) + scaled);
        }
    }

    /// Cuts content that does not fit the `avail` tokens left for it to the lines that do,
    /// with its marker, or leaves it out when none does.
    fn shorten<'t>(
        &mut self,
        text: &str,
        mut kept: Kept<'_>,
        avail: usize,
        item: &mut Item<'_>,
        note: bool,
    ) -> Fitted<'t> {
        let named = self.out.budget.named();
        let path = kept.path;
        self.out.budget.add_cut();
        item.record.truncated = true;
        // The marker with every number at its largest counts at least as many tokens as the
        // marker written.
        let widest = Kept { kept_lines: kept.total_lines, kept_tokens: kept.total_tokens, ..kept };
        let reserve = ctx_tokens::count(&cut_marker(named, &widest)) + 1;
        let room = avail.checked_sub(reserve);
        let cut = match room {
            Some(room) => ctx_tokens::truncate_over(text, room),
            None => ctx_tokens::Budgeted { text: "", tokens: 0, truncated: true },
        };
        if !cut.text.is_empty() {
            kept.kept_lines = lines(cut.text);
            kept.kept_tokens = named.tokenizer.scale(cut.tokens) as u64;
            self.count_placed(Some(cut.tokens), item);
            let marker = cut_marker(named, &kept);
            let last = kept.line(kept.kept_lines);
            let message = format!(
                "{named} reached: {path} cut to {} of {} tokens, lines {}-{last} of {}{}",
                kept.kept_tokens,
                kept.total_tokens,
                kept.first,
                kept.total_lines,
                self.out.budget.hint(),
            );
            item.record.cut = Some(CutRecord {
                path: path.to_owned(),
                kept: Lines { start: kept.first as u32, end: last as u32 },
                total_lines: kept.total_lines,
                kept_tokens: kept.kept_tokens,
                total_tokens: kept.total_tokens,
                view: None,
                ranges: Vec::new(),
            });
            self.diagnose_item(item, Code::TokenBudget, message);
            let mut out = String::with_capacity(cut.text.len() + marker.len() + 2);
            out.push_str(cut.text);
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&marker);
            out.push('\n');
            return Fitted::Place(Cow::Owned(out));
        }
        item.record.dropped += 1;
        let message = format!(
            "{named} spent: {path} left out ({} tokens){}",
            kept.total_tokens,
            self.out.budget.hint(),
        );
        self.diagnose_item(item, Code::TokenBudget, message);
        if !note {
            return Fitted::Dropped(None);
        }
        let mut text = dropped_note(named, &kept);
        text.push('\n');
        if avail > 0 && ctx_tokens::count_at_most(&text, avail).is_some() {
            return Fitted::Dropped(Some(text));
        }
        self.out.left_out.push(path);
        Fitted::Dropped(None)
    }

    /// Leaves out content for which the budget has no room at all, not even for its frame:
    /// listed in the note that ends the output (unless the caller writes its own), with
    /// `W_BUDGET`.
    fn left_out<'t>(&mut self, path: &str, item: &mut Item<'_>, note: bool) -> Fitted<'t> {
        let budget = &mut self.out.budget;
        budget.add_cut();
        item.record.truncated = true;
        item.record.dropped += 1;
        let message = format!("{} spent: {path} left out{}", budget.named(), budget.hint(),);
        if note {
            self.out.left_out.push(path);
        }
        self.diagnose_item(item, Code::TokenBudget, message);
        Fitted::Dropped(None)
    }
}

/// What the token budget makes of a piece of content.
pub(crate) enum Fitted<'t> {
    /// Content to place: whole, or cut and ending with its marker.
    Place(Cow<'t, str>),
    /// Left out: the note to place instead, when there is room for it.
    Dropped(Option<String>),
}

/// The lines of the file that `text` shows: a text cut at the line limit ends with the marker
/// of the `lines_cut` lines cut off, which stands for those lines and is none of them, so a
/// budget's marker says how long the file really is and asks for the rest up to its end.
fn file_lines(text: &str, lines_cut: u64) -> u64 {
    let shown = lines(text);
    if lines_cut == 0 { shown } else { shown.saturating_sub(1) + lines_cut }
}
