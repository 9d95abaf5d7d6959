//! A view of the context and the open documents, with the lookups every handler needs:
//! where a document is, what a reference resolves to, the text of a file, a file's URI, the
//! assembly of a document. Handlers take `&Workspace`, so they cannot change the session.

use std::io;

use ctx::Context;
use ctx::assemble::select;
use ctx::fs::{FileKind, Location};
use ctx::syntax::{Include, ItemKind, Reference};
use lsp_types as lsp;
use lsp_types::Url;

use crate::documents::{Document, Documents};
use crate::text;

/// The context and the open documents, borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Workspace<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) docs: &'a Documents,
}

/// A reference found in a document: its span and what it names.
pub(crate) struct Found<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) reference: Reference<'a>,
}

impl Workspace<'_> {
    /// The references of a text with their spans (mentions and path includes).
    pub(crate) fn references_in<'t>(&self, text: &'t str) -> Vec<Found<'t>> {
        let scan = ctx::syntax::scan_with(text, &self.ctx.assembler().options().syntax);
        scan.items
            .into_iter()
            .filter_map(|item| {
                let reference = match item.kind {
                    ItemKind::Mention(reference) => reference,
                    ItemKind::Include(Include::Reference(reference)) => reference,
                    _ => return None,
                };
                Some(Found { start: item.span.start, end: item.span.end, reference })
            })
            .collect()
    }

    /// The reference under the cursor.
    pub(crate) fn reference_at<'t>(
        &self,
        text: &'t str,
        position: lsp::Position,
    ) -> Option<Found<'t>> {
        let offset = text::offset(text, position);
        self.references_in(text).into_iter().find(|f| f.start <= offset && offset < f.end)
    }

    /// The directory a document's relative paths start from.
    pub(crate) fn base_of(&self, doc: &Document) -> Location {
        let sandbox = self.ctx.sandbox();
        doc.location.as_ref().and_then(Location::parent).unwrap_or_else(|| sandbox.workspace())
    }

    /// Resolves a written path as the assembler does: from the document's directory, then
    /// from the workspace root.
    pub(crate) fn resolve(&self, written: &str, base: &Location) -> Option<Location> {
        let sandbox = self.ctx.sandbox();
        sandbox.resolve(written, Some(base)).or_else(|_| sandbox.resolve(written, None)).ok()
    }

    /// The text of a location: the overlay's if open, else the disk's, through the sandbox.
    pub(crate) fn read(&self, location: &Location) -> Option<ctx::fs::Text> {
        self.ctx.sandbox().read_text(location).ok()?.text().cloned()
    }

    /// What a reference points at: the file and the lines its selector picks.
    pub(crate) fn target(
        &self,
        doc: &Document,
        found: &Found<'_>,
    ) -> Option<(Location, Option<(u32, u32)>)> {
        let base = self.base_of(doc);
        let location = self.resolve(&found.reference.path.unescaped(), &base)?;
        let lines = found.reference.selector.as_ref().and_then(|selector| {
            let content = self.read(&location)?;
            let markdown = ctx::assemble::is_markdown(location.path().as_str());
            let selection = select::select(&content, selector, markdown).ok()?;
            selection.lines.map(|l| (l.start, l.end))
        });
        Some((location, lines))
    }

    /// The location of a `file:` URI in the sandbox, if it is inside a root and on disk.
    pub(crate) fn locate(&self, uri: &Url) -> Option<Location> {
        if uri.scheme() != "file" {
            return None;
        }
        let path = uri.to_file_path().ok()?;
        let location = self.ctx.sandbox().resolve_in_workspace(path.to_str()?).ok()?;
        let stat = self.ctx.sandbox().stat(&location).ok()?;
        (stat.kind == FileKind::File).then_some(location)
    }

    /// The `file:` URI of a location.
    pub(crate) fn uri(&self, location: &Location) -> Option<Url> {
        let root = self.ctx.sandbox().root_path(location.root());
        let path = if location.path().as_str().is_empty() {
            root.to_path_buf()
        } else {
            root.join(location.path())
        };
        Url::from_file_path(path.as_std_path()).ok()
    }

    /// The absolute path of a location.
    pub(crate) fn absolute(&self, location: &Location) -> String {
        let root = self.ctx.sandbox().root_path(location.root());
        if location.path().as_str().is_empty() {
            root.to_string()
        } else {
            root.join(location.path()).to_string()
        }
    }

    /// Assembles an open document as `ctx check` does, its unsaved text and that of every
    /// open document it includes winning over the disk; `None` when it is not open, keeps
    /// no text (too large) or could not be assembled.
    pub(crate) fn assemble(&self, uri: &Url, sink: &mut dyn io::Write) -> Option<ctx::Assembly> {
        let doc = self.docs.get(uri)?;
        if doc.unchecked.is_some() {
            return None;
        }
        let assembler = self.ctx.assembler();
        match &doc.location {
            Some(location) => {
                let path = self.absolute(location);
                assembler.assemble_file_to(&path, sink).ok()
            }
            None => assembler.assemble_str_to(&doc.text, &display_name(uri), sink).ok(),
        }
    }
}

/// The name of a document outside the sandbox, for its diagnostics.
pub(crate) fn display_name(uri: &Url) -> String {
    uri.path_segments().and_then(|mut s| s.next_back().map(str::to_owned)).unwrap_or_default()
}

/// Text from a file made safe to show: hidden and control characters made visible.
pub(crate) fn visible(text: &str) -> String {
    ctx::assemble::sanitize::sanitize(text).text.into_owned()
}
