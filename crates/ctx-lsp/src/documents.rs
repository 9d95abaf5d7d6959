//! The open documents: their text, version and place in the sandbox, and the overlay through
//! which the sandbox serves their unsaved text.
//!
//! A document is kept whole only up to the cap of a file read (`--max-file-bytes`, 1 MiB by
//! default): a larger one keeps no text, is not checked, and gets one `E_TOO_LARGE`
//! diagnostic; its overlay entry is dropped, so documents that include it read the disk. So
//! does a change with more edits than [`MAX_EDIT_WORK`] lets the server apply, and a document
//! that would bring the texts held together past [`HELD_DOCUMENTS`] times the cap. Each stays
//! so until the client sends the whole text again (on reopening, or a full change) and it
//! fits.

use std::collections::HashMap;

use ctx::fs::{Location, Overlay};
use lsp_types as lsp;
use lsp_types::Url;
use serde_json::Value;

use crate::protocol::take_too_large;
use crate::text;

/// The work one `didChange` may cost, in bytes: each edit counts twice the document's
/// length (finding its place, moving the rest) and its text. A megabyte document takes
/// 512 edits at once, a 10 kB one 50 000.
const MAX_EDIT_WORK: u64 = 1 << 30;

/// The texts of all open documents together are kept up to this many times the cap of one
/// (64 MiB by default).
const HELD_DOCUMENTS: u64 = 64;

/// An open document.
#[derive(Debug)]
pub(crate) struct Document {
    /// The text; empty while the document is [`Unchecked`].
    pub(crate) text: String,
    pub(crate) version: i32,
    /// Where it is in the sandbox; `None` for a document outside the roots or not on disk,
    /// which is assembled as a text in the workspace root.
    pub(crate) location: Option<Location>,
    /// Why the text is not kept, if it is not.
    pub(crate) unchecked: Option<Unchecked>,
}

/// Why a document's text is not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unchecked {
    /// The text is larger than the cap: its length in bytes (at least).
    Large { bytes: u64, max: u64 },
    /// A change had more edits than the server applies at once.
    Edits { edits: usize },
    /// The open documents would hold more than `max` bytes together.
    Held { max: u64 },
}

/// A document's text as it came: whole, or too long to have been kept by the decoder.
#[derive(Debug)]
pub(crate) enum Incoming {
    Text(String),
    TooLarge(u64),
}

/// One change of a `didChange`.
#[derive(Debug)]
pub(crate) struct Edit {
    /// `None` for the whole text.
    pub(crate) range: Option<lsp::Range>,
    pub(crate) text: Incoming,
}

/// The open documents and the overlay that serves them to the sandbox.
#[derive(Debug)]
pub(crate) struct Documents {
    docs: HashMap<Url, Document>,
    overlay: Overlay,
    /// The largest text kept (`u64::MAX` for none).
    max_bytes: u64,
    /// The bytes of all texts kept, and the most they may come to.
    held: u64,
    max_held: u64,
}

impl Documents {
    /// No documents, `overlay` to serve them, texts up to `max_bytes`.
    pub(crate) fn new(overlay: Overlay, max_bytes: u64) -> Documents {
        let max_held = max_bytes.saturating_mul(HELD_DOCUMENTS);
        Documents { docs: HashMap::new(), overlay, max_bytes, held: 0, max_held }
    }

    /// An open document.
    pub(crate) fn get(&self, uri: &Url) -> Option<&Document> {
        self.docs.get(uri)
    }

    /// The open documents.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Url, &Document)> {
        self.docs.iter()
    }

    /// Opens (or reopens) a document.
    pub(crate) fn open(
        &mut self,
        uri: Url,
        text: Incoming,
        version: i32,
        location: Option<Location>,
    ) {
        let previous = self.docs.get(&uri).map_or(0, |doc| doc.text.len());
        let mut doc = Document { text: String::new(), version, location, unchecked: None };
        self.set_text(&mut doc, text);
        self.admit(&mut doc, previous);
        self.sync(&doc);
        self.docs.insert(uri, doc);
    }

    /// Applies the edits of a `didChange`; `false` when the document is not open or the
    /// change is older than what the server has.
    pub(crate) fn change(&mut self, uri: &Url, version: i32, edits: Vec<Edit>) -> bool {
        let Some(mut doc) = self.docs.remove(uri) else { return false };
        if version < doc.version {
            self.docs.insert(uri.clone(), doc);
            return false;
        }
        doc.version = version;
        let previous = doc.text.len();
        let count = edits.len();
        let mut work: u64 = 0;
        for edit in edits {
            match (edit.range, edit.text) {
                (None, text) => self.set_text(&mut doc, text),
                // No text to edit: it stays so until the whole text comes again.
                (Some(_), _) if doc.unchecked.is_some() => {}
                (Some(_), Incoming::TooLarge(bytes)) => {
                    self.set_text(&mut doc, Incoming::TooLarge(bytes))
                }
                (Some(range), Incoming::Text(new)) => {
                    work = work.saturating_add(2 * doc.text.len() as u64 + new.len() as u64);
                    if work > MAX_EDIT_WORK {
                        doc.text = String::new();
                        doc.unchecked = Some(Unchecked::Edits { edits: count });
                        continue;
                    }
                    let start = text::offset(&doc.text, range.start);
                    // A reversed range is an insertion at its start.
                    let end = text::offset(&doc.text, range.end).max(start);
                    doc.text.replace_range(start..end, &new);
                    if doc.text.len() as u64 > self.max_bytes {
                        let bytes = doc.text.len() as u64;
                        self.set_text(&mut doc, Incoming::TooLarge(bytes));
                    }
                }
            }
        }
        self.admit(&mut doc, previous);
        self.sync(&doc);
        self.docs.insert(uri.clone(), doc);
        true
    }

    /// Closes a document: the disk is read again for it. `false` when it was not open.
    pub(crate) fn close(&mut self, uri: &Url) -> bool {
        let Some(doc) = self.docs.remove(uri) else { return false };
        self.held -= doc.text.len() as u64;
        if let Some(location) = &doc.location {
            self.overlay.remove(location);
        }
        true
    }

    /// Sets the whole text of a document, unless it is too large.
    fn set_text(&self, doc: &mut Document, text: Incoming) {
        let bytes = match text {
            Incoming::Text(text) if text.len() as u64 <= self.max_bytes => {
                doc.text = text;
                doc.unchecked = None;
                return;
            }
            Incoming::Text(text) => text.len() as u64,
            Incoming::TooLarge(bytes) => bytes,
        };
        doc.text = String::new();
        doc.unchecked = Some(Unchecked::Large { bytes, max: self.max_bytes });
    }

    /// Counts the text of a document that held `previous` bytes, unless the texts together
    /// would pass their bound.
    fn admit(&mut self, doc: &mut Document, previous: usize) {
        let others = self.held - previous as u64;
        if others + doc.text.len() as u64 > self.max_held {
            doc.text = String::new();
            doc.unchecked = Some(Unchecked::Held { max: self.max_held });
        }
        self.held = others + doc.text.len() as u64;
    }

    /// Serves the document's text to the sandbox, or the disk's when it has none.
    fn sync(&self, doc: &Document) {
        let Some(location) = &doc.location else { return };
        if doc.unchecked.is_none() {
            self.overlay.set(location, doc.text.as_str());
        } else {
            self.overlay.remove(location);
        }
    }
}

/// The parameters of a `didOpen`: the URI, the text and the version.
pub(crate) fn open_params(mut params: Value) -> Option<(Url, Incoming, i32)> {
    let marker = params.pointer_mut("/textDocument/text").and_then(take_too_large);
    let p: lsp::DidOpenTextDocumentParams = serde_json::from_value(params).ok()?;
    let text = match marker {
        Some(bytes) => Incoming::TooLarge(bytes),
        None => Incoming::Text(p.text_document.text),
    };
    Some((p.text_document.uri, text, p.text_document.version))
}

/// The parameters of a `didChange`: the URI, the version and the edits.
pub(crate) fn change_params(mut params: Value) -> Option<(Url, i32, Vec<Edit>)> {
    let markers: Vec<Option<u64>> = match params.get_mut("contentChanges") {
        Some(Value::Array(changes)) => changes
            .iter_mut()
            .map(|change| change.get_mut("text").and_then(take_too_large))
            .collect(),
        _ => Vec::new(),
    };
    let p: lsp::DidChangeTextDocumentParams = serde_json::from_value(params).ok()?;
    let edits = p
        .content_changes
        .into_iter()
        .enumerate()
        .map(|(n, change)| Edit {
            range: change.range,
            text: match markers.get(n).copied().flatten() {
                Some(bytes) => Incoming::TooLarge(bytes),
                None => Incoming::Text(change.text),
            },
        })
        .collect();
    Some((p.text_document.uri, p.text_document.version, edits))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::too_large_marker;

    fn docs(max: u64) -> (Documents, Url) {
        (Documents::new(Overlay::new(), max), Url::parse("file:///w/a.md").unwrap())
    }

    fn edit(range: [u32; 4], text: &str) -> Edit {
        let range = lsp::Range::new(
            lsp::Position::new(range[0], range[1]),
            lsp::Position::new(range[2], range[3]),
        );
        Edit { range: Some(range), text: Incoming::Text(text.to_owned()) }
    }

    #[test]
    fn hostile_ranges_do_not_panic() {
        let (mut docs, uri) = docs(1000);
        docs.open(uri.clone(), Incoming::Text("a😀b\nline two\n".to_owned()), 1, None);
        let edits = vec![
            // Past the end of the line and of the text.
            edit([0, 99, 0, 120], "X"),
            edit([99, 0, u32::MAX, u32::MAX], "Y"),
            // Reversed: an insertion at its start.
            edit([1, 4, 0, 1], "R"),
            // Inside the pair of units of 😀: the next character boundary.
            edit([0, 2, 0, 2], "S"),
            edit([0, 2, 0, 3], ""),
        ];
        assert!(docs.change(&uri, 2, edits));
        let doc = docs.get(&uri).unwrap();
        assert_eq!(doc.text, "a😀SbX\nlineR two\nY");
        assert!(doc.unchecked.is_none());
    }

    #[test]
    fn documents_past_the_cap_keep_no_text() {
        let (mut docs, uri) = docs(10);
        docs.open(uri.clone(), Incoming::Text("x".repeat(11)), 1, None);
        let doc = docs.get(&uri).unwrap();
        assert_eq!(
            (doc.text.len(), doc.unchecked),
            (0, Some(Unchecked::Large { bytes: 11, max: 10 }))
        );
        // A ranged edit cannot apply to it; a whole text that fits can.
        assert!(docs.change(&uri, 2, vec![edit([0, 0, 0, 0], "y")]));
        assert!(docs.get(&uri).unwrap().unchecked.is_some());
        assert!(docs.change(
            &uri,
            3,
            vec![Edit { range: None, text: Incoming::Text("small".into()) }]
        ));
        assert_eq!(docs.get(&uri).unwrap().text, "small");
        // Growing past the cap by edits.
        assert!(docs.change(&uri, 4, vec![edit([0, 5, 0, 5], "123456")]));
        assert_eq!(
            docs.get(&uri).unwrap().unchecked,
            Some(Unchecked::Large { bytes: 11, max: 10 })
        );
        // What the decoder left out.
        docs.open(uri.clone(), Incoming::TooLarge(50_000_000), 5, None);
        assert_eq!(
            docs.get(&uri).unwrap().unchecked,
            Some(Unchecked::Large { bytes: 50_000_000, max: 10 })
        );
    }

    #[test]
    fn too_many_edits_at_once() {
        let (mut docs, uri) = docs(u64::MAX);
        docs.open(uri.clone(), Incoming::Text("x".repeat(1 << 20)), 1, None);
        let edits: Vec<Edit> = (0..600).map(|_| edit([0, 5, 0, 6], "y")).collect();
        assert!(docs.change(&uri, 2, edits));
        assert_eq!(docs.get(&uri).unwrap().unchecked, Some(Unchecked::Edits { edits: 600 }));
        let edits: Vec<Edit> = (0..500).map(|_| edit([0, 5, 0, 6], "y")).collect();
        assert!(
            docs.change(
                &uri,
                3,
                vec![Edit { range: None, text: Incoming::Text("x".repeat(1 << 20)) }]
                    .into_iter()
                    .chain(edits)
                    .collect()
            )
        );
        assert!(docs.get(&uri).unwrap().unchecked.is_none());
    }

    #[test]
    fn the_texts_held_together_are_bounded() {
        let (mut docs, _) = docs(10);
        let other = Url::parse("file:///w/b.md").unwrap();
        for n in 0..64 {
            let uri = Url::parse(&format!("file:///w/{n}.md")).unwrap();
            docs.open(uri, Incoming::Text("x".repeat(10)), 1, None);
        }
        assert_eq!(docs.held, 640);
        docs.open(other.clone(), Incoming::Text("y".into()), 1, None);
        assert_eq!(docs.get(&other).unwrap().unchecked, Some(Unchecked::Held { max: 640 }));
        // Reopening one in place of itself, and closing one, make room.
        docs.open(Url::parse("file:///w/0.md").unwrap(), Incoming::Text("z".repeat(10)), 2, None);
        assert!(docs.get(&Url::parse("file:///w/0.md").unwrap()).unwrap().unchecked.is_none());
        assert!(docs.close(&Url::parse("file:///w/1.md").unwrap()));
        docs.open(other.clone(), Incoming::Text("y".into()), 2, None);
        assert!(docs.get(&other).unwrap().unchecked.is_none());
        assert_eq!(docs.held, 631);
    }

    #[test]
    fn markers_in_parameters() {
        let open = json!({ "textDocument": { "uri": "file:///a.md", "languageId": "", "version": 3, "text": too_large_marker(7) } });
        let (_, text, version) = open_params(open).unwrap();
        assert!(matches!((text, version), (Incoming::TooLarge(7), 3)));
        let change = json!({ "textDocument": { "uri": "file:///a.md", "version": 4 }, "contentChanges": [{ "text": "a" }, { "text": too_large_marker(9) }] });
        let (_, _, edits) = change_params(change).unwrap();
        assert!(matches!(
            &edits[..],
            [Edit { text: Incoming::Text(_), .. }, Edit { text: Incoming::TooLarge(9), .. }]
        ));
    }
}
