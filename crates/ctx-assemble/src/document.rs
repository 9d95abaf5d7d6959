//! Documents: the top-level one and those assembled recursively (assembly.md §4, §5). Front
//! matter is handled here, in one place for both: split off, parsed once per file content,
//! its diagnostics reported, its `params` merged; the top document's `description` and
//! `metadata` kept on the assembly, an included document's front matter on its record.

use ctx_fs::Text;
use ctx_syntax::Code;

/// Stack left below which an include's expansion runs on a new segment.
const STACK_RED_ZONE: usize = 128 * 1024;

/// The size of each new segment of stack.
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

use crate::is_markdown;
use crate::record::DiagnosticRecord;
use crate::resolve::Resolved;
use crate::run::{Body, Doc, Item, Run};
use crate::select;

/// The text of a file to assemble: the whole file or the lines a reference selected.
#[derive(Clone, Copy)]
pub(crate) struct Selected<'t> {
    pub(crate) text: &'t str,
    /// The whole file, when at hand (for the front-matter memo and byte offsets).
    pub(crate) whole: Option<&'t Text>,
    /// The line of the file on which `text` starts.
    pub(crate) first_line: u32,
    /// The lines of the file left out of `text` (nested anchors' markers), in order.
    pub(crate) skipped: &'t [u32],
    /// What is written before `text` and not read: the opening fence line of a playground,
    /// which is no line of the file.
    pub(crate) lead: &'t str,
    /// The encoding the file was decoded from, when it was not UTF-8: noted in the output
    /// before the assembled text.
    pub(crate) encoding: Option<&'static str>,
}

impl Selected<'_> {
    /// Where `text` starts in the whole file, when it is a part of it.
    fn byte_offset(&self) -> usize {
        let Some(whole) = self.whole else { return 0 };
        let (start, inner) = (whole.as_ptr() as usize, self.text.as_ptr() as usize);
        if inner >= start && inner + self.text.len() <= start + whole.len() {
            inner - start
        } else {
            0
        }
    }
}

impl Run<'_> {
    /// Assembles the top-level document.
    pub(crate) fn top(&mut self, doc: &Doc, selected: Selected<'_>) {
        self.chain.push((doc.location.clone(), doc.name.clone()));
        // A document given as a string (standard input) is read as Markdown; a prompt (append
        // mode) is the user's text, kept exactly as written, front matter or not (syntax.md).
        let markdown = match doc.location {
            None => self.out.inline(),
            Some(_) => is_markdown(&doc.name),
        };
        if let Some(encoding) = selected.encoding {
            let message = crate::printer::encoding_message(&doc.name, encoding);
            let record = DiagnosticRecord::new(Code::Encoding, message, doc.name.clone(), 1, 1);
            self.diagnose(record);
            if self.out.inline() {
                // In append mode the text is the user's, written whole and as it is.
                self.out.write_unbudgeted(&crate::printer::encoding_marker(&doc.name, encoding));
            }
        }
        let body = self.front_matter(doc, selected, markdown, None);
        self.expand(doc, body);
    }

    /// Takes the front matter off a document's text when it has one (a Markdown file), and
    /// returns the body to scan. Of a part of a document (a range, an anchor, a section) the
    /// front matter of the whole file counts all the same (its params, its record), and the
    /// lines of the part that lie in it are not shown: front matter is never output.
    fn front_matter<'t>(
        &mut self,
        doc: &Doc,
        selected: Selected<'t>,
        markdown: bool,
        item: Option<&mut Item<'_>>,
    ) -> Body<'t> {
        let offset = selected.byte_offset();
        let line_offset = selected.first_line - 1;
        let plain = Body {
            text: selected.text,
            line_offset,
            skipped: selected.skipped,
            byte_offset: offset,
        };
        if !markdown {
            return plain;
        }
        let part = selected.whole.filter(|w| !crate::memo::is_all_of(selected.text, w));
        let (parsed, source) = match part {
            Some(whole) => (self.setup.front_matter.parse(whole, selected.whole), &**whole),
            None if selected.first_line == 1 => {
                (self.setup.front_matter.parse(selected.text, selected.whole), selected.text)
            }
            None => return plain,
        };
        let source_offset = if part.is_some() { 0 } else { offset };
        for d in &parsed.diagnostics {
            let record = DiagnosticRecord::new(
                d.code,
                d.message.clone(),
                doc.name.clone(),
                d.pos.line,
                d.pos.column,
            )
            // Few per document, and their position is not always the span's start.
            .with_source(Some(crate::record::Source::of(
                source,
                d.span.start..d.span.end,
                1,
                source_offset,
            )));
            self.diagnose(record);
        }
        if let Some(fm) = &parsed.front_matter {
            self.params.extend(fm.params.iter());
            match item {
                Some(item) => item.record.front_matter = Some(fm.value.clone()),
                None => {
                    self.assembly.description = fm.description.clone();
                    self.assembly.metadata = fm.metadata.clone();
                }
            }
        }
        if part.is_none() {
            return Body {
                text: &selected.text[parsed.body_offset..],
                line_offset: parsed.body_line - 1,
                skipped: &[],
                byte_offset: offset + parsed.body_offset,
            };
        }
        // The part's first lines that lie in the front matter (lines before the body's first)
        // are left out. (A part's left-out lines, `skipped`, are nested anchors' markers, which
        // front matter does not hold.)
        let hidden = parsed.body_line.saturating_sub(selected.first_line);
        let cut = match (hidden as usize).checked_sub(1) {
            None => 0,
            Some(last) => selected
                .text
                .match_indices('\n')
                .nth(last)
                .map_or(selected.text.len(), |(at, _)| at + 1),
        };
        Body {
            text: &selected.text[cut..],
            line_offset: line_offset + hidden,
            skipped: selected.skipped,
            byte_offset: offset + cut,
        }
    }

    /// Assembles an included document in place: cycle and depth checks, front matter, the
    /// line limit, then its body with the same macros. `links_only` reads a file that is not
    /// a ctx document for mdBook's links alone (docs/dialects.md): no front matter, no ctx
    /// syntax, no line limit (as for a file placed verbatim).
    pub(crate) fn recurse(
        &mut self,
        item: &mut Item<'_>,
        resolved: &Resolved,
        selected: Selected<'_>,
        links_only: bool,
    ) {
        if let Some(pos) = self.chain.iter().position(|c| c.0.as_ref() == Some(&resolved.location))
        {
            let mut names: Vec<&str> = self.chain[pos..].iter().map(|c| c.1.as_str()).collect();
            names.push(&resolved.path);
            let message = format!("include cycle: {}", names.join(" -> "));
            self.fail(item, Code::Cycle, message);
            return;
        }
        let max_depth = self.opts().limits.max_depth;
        if max_depth > 0 && self.chain.len() > max_depth {
            let message = format!("includes nested deeper than {max_depth}: {}", resolved.path);
            self.fail(item, Code::Depth, message);
            return;
        }
        let child = Doc {
            dir: resolved.location.parent().unwrap_or_else(|| self.sandbox().workspace()),
            name: resolved.path.clone(),
            location: Some(resolved.location.clone()),
            links_only,
        };
        let markdown = !links_only && is_markdown(&resolved.path);
        let mut body = self.front_matter(&child, selected, markdown, Some(item));
        // The line limit cuts the body (never the front matter) of an unranged document.
        let mut cut_lines = 0;
        if item.record.lines.is_none() && !links_only {
            let cut = select::cut(body.text, self.opts().limits.max_lines);
            if cut.cut > 0 {
                item.record.truncated = true;
                cut_lines = cut.cut;
                body.text = cut.text;
            }
        }
        if let Some(encoding) = selected.encoding {
            // A note, as a failure's marker is: not counted as what the item brought, but
            // bounded by the budget as the included text it heads is.
            let note = crate::printer::encoding_marker(&resolved.path, encoding);
            if self.fits_in_text(item, &note, true, &resolved.path) {
                self.out.write_unbudgeted(&note);
            }
        }
        let before = self.out.budget.written();
        let tokens_before = self.out.budget.tokens_total();
        let cuts_before = self.out.budget.cuts();
        let stopped_before = self.budget_stop.is_some();
        // After a cut of document text nothing bounded is written: the document is left out,
        // said by the cut's marker in band and by a `W_BUDGET` of its own here.
        let left_out = self.out.budget.exhausted() && !body.text.trim().is_empty();
        if !selected.lead.is_empty() {
            self.write(selected.lead);
        }
        self.chain.push((Some(resolved.location.clone()), resolved.path.clone()));
        self.sites.push(item.record.at.clone());
        // Each level takes a few KiB of stack; a deep chain (no depth limit, or a thread with
        // a small stack) grows it on the heap rather than overflow it.
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.expand(&child, body));
        self.sites.pop();
        self.chain.pop();
        if !stopped_before
            && item.record.error.is_none()
            && let Some(message) = self.budget_stop.clone()
        {
            // The output budget ran out inside what this include brought.
            item.record.error = Some(crate::record::ErrorRecord { code: Code::Budget, message });
        }
        if cut_lines > 0 {
            let newline = if body.text.ends_with('\n') { "" } else { "\n" };
            self.write(&format!("{newline}{}\n", select::truncation_marker(cut_lines)));
        }
        item.record.bytes = self.out.budget.written() - before;
        if self.out.budget.cuts() > cuts_before {
            item.record.truncated = true;
        }
        if left_out && item.record.error.is_none() {
            item.record.truncated = true;
            item.record.dropped += 1;
            let budget = &self.out.budget;
            let message =
                format!("{} spent: {} left out{}", budget.named(), resolved.path, budget.hint(),);
            self.diagnose_item(item, Code::TokenBudget, message);
        }
        if self.out.budget.counting() {
            item.record.tokens = Some(self.out.budget.tokens_total() - tokens_before);
        }
    }
}
