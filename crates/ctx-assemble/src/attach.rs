//! Attachments (assembly.md, "Attachments"): files attached to a text that the text does not
//! reference, such as the files `ctx suggest` ranks for a prompt. The run places them after
//! the text's own references, in a block of their own that the printers head for why they
//! are there, and records them as it records references: one run, one budget, one set of
//! totals.

use std::borrow::Cow;

use ctx_preprocess::{Request, RequestKind};
use ctx_syntax::{LineEnd, PathText, Position, Reference, Selector, Span, TargetKind};

use crate::printer::Section;
use crate::record::{Lines, ReferenceRecord};
use crate::run::{Body, Doc, Run};

/// A file attached to a text, with the lines taken and why it is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The file, relative to the workspace root (or absolute inside a root), `/`-separated.
    pub path: String,
    /// The lines taken, or `None` for the whole file.
    pub lines: Option<Lines>,
    /// Why it is attached.
    pub reason: AttachmentReason,
    /// The most o200k tokens its content may take under a token budget: a whole file past
    /// them is reduced to its outline and ranges, as a mention that does not fit is (or cut
    /// at its head when it has no outline). `None`: what the budget leaves.
    pub max_tokens: Option<usize>,
    /// The ranges kept first, best first, when it is reduced to its outline (empty: the
    /// reducer's own, around the lines that share the text's words).
    pub ranges: Vec<Lines>,
}

/// Why a file is attached to a text: what heads its block and marks its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttachmentReason {
    /// `ctx suggest` ranked it for the text: its block is headed as suggested ("The following
    /// files were suggested for this prompt by ctx suggest:" in `xml`, `### Suggested Context
    /// References:` in `markdown`), and its record carries `"suggested": true`.
    Suggested,
}

impl Attachment {
    /// A suggested file, whole (`lines` `None`) or its lines.
    pub fn suggested(path: impl Into<String>, lines: Option<Lines>) -> Attachment {
        Attachment {
            path: path.into(),
            lines,
            reason: AttachmentReason::Suggested,
            max_tokens: None,
            ranges: Vec::new(),
        }
    }

    /// A suggested file whole, its content within `max_tokens` o200k tokens: past them it is
    /// reduced to its outline and `ranges` (best first, as many as fit; the ranges that
    /// share the text's words when empty), as a mention that does not fit is (assembly.md,
    /// "The token budget").
    pub fn suggested_within(
        path: impl Into<String>,
        max_tokens: usize,
        ranges: Vec<Lines>,
    ) -> Attachment {
        Attachment { max_tokens: Some(max_tokens), ranges, ..Attachment::suggested(path, None) }
    }

    /// The mention that would attach the same lines (`@src/a.rs#L1-4`, quoted where the path
    /// needs it): the record's `raw`.
    pub fn mention(&self) -> String {
        let mut mention =
            ctx_syntax::mention_of(&self.path).unwrap_or_else(|| format!("@{}", self.path));
        if let Some(lines) = self.lines {
            mention.push_str(&format!("#L{}-{}", lines.start, lines.end));
        }
        mention
    }
}

/// The attachments of a run: given up front, or chosen once the text's own references are
/// known (to leave out the files the text already references, say).
pub enum Attachments<'a> {
    /// These, in order.
    List(&'a [Attachment]),
    /// What the function returns, given the records of the text's own references.
    Chosen(&'a mut dyn FnMut(&[ReferenceRecord]) -> Vec<Attachment>),
}

impl Default for Attachments<'_> {
    fn default() -> Self {
        Attachments::List(&[])
    }
}

impl<'a> From<&'a [Attachment]> for Attachments<'a> {
    fn from(list: &'a [Attachment]) -> Attachments<'a> {
        Attachments::List(list)
    }
}

impl<'a> From<&'a Vec<Attachment>> for Attachments<'a> {
    fn from(list: &'a Vec<Attachment>) -> Attachments<'a> {
        Attachments::List(list)
    }
}

impl std::fmt::Debug for Attachments<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attachments::List(list) => f.debug_tuple("List").field(list).finish(),
            Attachments::Chosen(_) => f.write_str("Chosen(..)"),
        }
    }
}

impl Run<'_> {
    /// Places the attachments after the text's own references: each as a mention of its file
    /// and lines would be, in a block of its own. Nothing is placed after a stopped run (a
    /// spent budget, `--strict`).
    pub(crate) fn attach(&mut self, doc: &Doc, attachments: Attachments<'_>) {
        let list: Cow<'_, [Attachment]> = match attachments {
            Attachments::List(list) => Cow::Borrowed(list),
            Attachments::Chosen(choose) => Cow::Owned(choose(&self.assembly.references)),
        };
        if list.is_empty() || self.out.budget.stopped() {
            return;
        }
        let mut current = None;
        self.attaching = true;
        for (n, attachment) in list.iter().enumerate() {
            if self.out.budget.stopped() {
                break;
            }
            let section = match attachment.reason {
                AttachmentReason::Suggested => Section::Suggested,
            };
            if current != Some(section) {
                self.out.begin_section(section);
                current = Some(section);
            }
            let raw = attachment.mention();
            let reference = Reference {
                // Not read back from `raw`: the path as given, whatever a mention can spell.
                path: PathText { raw: &attachment.path, quoted: false },
                selector: attachment
                    .lines
                    .map(|l| Selector::Lines { start: l.start, end: LineEnd::Line(l.end) }),
                target: TargetKind::File,
            };
            let request = Request {
                kind: RequestKind::Mention(reference),
                span: Span::new(0, raw.len()),
                pos: Position { line: 1, column: 1 },
            };
            // The record is at the text's name, on the line of the attachment's place in the
            // list (the first is line 1).
            let line_offset = u32::try_from(n).unwrap_or(u32::MAX);
            let first = self.assembly.references.len();
            self.item_cap = attachment.max_tokens;
            self.item_ranges.clone_from(&attachment.ranges);
            self.item_last = n + 1 == list.len();
            self.request(
                doc,
                Body { text: &raw, line_offset, skipped: &[], byte_offset: 0 },
                &request,
            );
            self.item_last = false;
            self.item_cap = None;
            self.item_ranges.clear();
            for record in &mut self.assembly.references[first..] {
                record.suggested = attachment.reason == AttachmentReason::Suggested;
            }
        }
        self.attaching = false;
    }
}
