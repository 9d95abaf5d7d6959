//! The requests about a document's references: go to definition, hover, document links,
//! find references, the code lens and the `ctx.assemble` command (completion has its own
//! module). Text taken from files (previews, names) goes through the assembler's sanitizer,
//! so hidden and control characters reach the editor visible.

use std::borrow::Cow;
use std::collections::HashMap;

use ctx::assemble::select;
use ctx::fs::{FileKind, Location};
use lsp_server::ErrorCode;
use lsp_types as lsp;
use lsp_types::Url;
use serde_json::Value;

use crate::protocol::{ASSEMBLE_COMMAND, Failure};
use crate::text::LineIndex;
use crate::workspace::{Workspace, visible};

/// The folders whose documents make up the rule set that "find references" searches, besides
/// the open documents.
const RULE_DIRS: &[&str] = &[".ctx/rules", ".mutsumi/rules"];

/// Most lines and bytes a hover preview shows.
const PREVIEW_LINES: usize = 30;
const PREVIEW_BYTES: usize = 4000;

impl Workspace<'_> {
    pub(crate) fn definition(
        &self,
        params: &lsp::GotoDefinitionParams,
    ) -> Option<lsp::GotoDefinitionResponse> {
        let at = &params.text_document_position_params;
        let doc = self.docs.get(&at.text_document.uri)?;
        let found = self.reference_at(&doc.text, at.position)?;
        let (location, lines) = self.target(doc, &found)?;
        let range = match lines {
            Some((start, end)) => lsp::Range::new(
                lsp::Position::new(start.saturating_sub(1), 0),
                lsp::Position::new(end, 0),
            ),
            None => lsp::Range::default(),
        };
        Some(lsp::GotoDefinitionResponse::Scalar(lsp::Location::new(self.uri(&location)?, range)))
    }

    pub(crate) fn hover(&self, params: &lsp::HoverParams) -> Option<lsp::Hover> {
        let at = &params.text_document_position_params;
        let doc = self.docs.get(&at.text_document.uri)?;
        let found = self.reference_at(&doc.text, at.position)?;
        let (location, _) = self.target(doc, &found)?;
        let path = location.path().as_str();
        let stat = self.ctx.sandbox().stat(&location).ok()?;
        let body = if stat.kind == FileKind::Dir {
            let walk = self.ctx.sandbox().walk(&location).ok()?;
            let names: Vec<String> =
                walk.entries.iter().take(PREVIEW_LINES).map(|e| e.path.to_string()).collect();
            format!("```\n{}\n```", names.join("\n"))
        } else {
            let content = self.read(&location)?;
            let markdown = ctx::assemble::is_markdown(path);
            let selected: Cow<'_, str> = match &found.reference.selector {
                Some(selector) => select::select(&content, selector, markdown).ok()?.text,
                None => Cow::Borrowed(&content),
            };
            let preview = preview(&selected);
            let language = ctx::assemble::render::language(path);
            let fence = ctx::assemble::render::fence(&preview);
            format!("{fence}{language}\n{preview}{fence}")
        };
        let title = format!("**{}**\n\n", if path.is_empty() { "." } else { path });
        let index = LineIndex::new(&doc.text);
        Some(lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: visible(&format!("{title}{body}")),
            }),
            range: Some(index.range(found.start, found.end)),
        })
    }

    pub(crate) fn links(&self, uri: &Url) -> Vec<lsp::DocumentLink> {
        let Some(doc) = self.docs.get(uri) else { return Vec::new() };
        let index = LineIndex::new(&doc.text);
        // A path written many times is resolved once.
        let mut targets = HashMap::new();
        self.references_in(&doc.text)
            .iter()
            .filter_map(|found| {
                let target = targets
                    .entry(&doc.text[found.start..found.end])
                    .or_insert_with(|| {
                        let (location, lines) = self.target(doc, found)?;
                        let mut target = self.uri(&location)?;
                        if let Some((start, _)) = lines {
                            target.set_fragment(Some(&format!("L{start}")));
                        }
                        Some(target)
                    })
                    .clone()?;
                Some(lsp::DocumentLink {
                    range: index.range(found.start, found.end),
                    target: Some(target),
                    tooltip: None,
                    data: None,
                })
            })
            .collect()
    }

    /// Where the file under the cursor (or the document itself) is referenced, in the rule
    /// folders and the open documents.
    pub(crate) fn references(&self, params: &lsp::ReferenceParams) -> Vec<lsp::Location> {
        let at = &params.text_document_position;
        let Some(doc) = self.docs.get(&at.text_document.uri) else { return Vec::new() };
        let wanted = match self.reference_at(&doc.text, at.position) {
            Some(found) => self.target(doc, &found).map(|(location, _)| location),
            None => doc.location.clone(),
        };
        let Some(wanted) = wanted else { return Vec::new() };
        let mut out = Vec::new();
        // The rule folders' files one at a time (an open one is searched in its unsaved text).
        let sandbox = self.ctx.sandbox();
        for dir in RULE_DIRS {
            let Ok(location) = sandbox.resolve_in_workspace(dir) else { continue };
            let Ok(walk) = sandbox.walk(&location) else { continue };
            for entry in walk.entries.iter().filter(|e| e.kind == FileKind::File) {
                let Some(uri) = self.uri(&entry.location) else { continue };
                if self.docs.get(&uri).is_some() {
                    continue;
                }
                let Some(text) = self.read(&entry.location) else { continue };
                let base = entry.location.parent().unwrap_or_else(|| sandbox.workspace());
                self.references_to(&wanted, &uri, &text, &base, &mut out);
            }
        }
        for (uri, open) in self.docs.iter() {
            self.references_to(&wanted, uri, &open.text, &self.base_of(open), &mut out);
        }
        out.sort_by(|a, b| a.uri.cmp(&b.uri));
        out
    }

    /// The references of a text, whose relative paths start from `base`, to `wanted`.
    fn references_to(
        &self,
        wanted: &Location,
        uri: &Url,
        text: &str,
        base: &Location,
        out: &mut Vec<lsp::Location>,
    ) {
        let index = LineIndex::new(text);
        // A path written many times is resolved once.
        let mut resolved: HashMap<Cow<'_, str>, bool> = HashMap::new();
        for found in self.references_in(text) {
            let written = found.reference.path.unescaped();
            let hit = *resolved
                .entry(written)
                .or_insert_with_key(|written| self.resolve(written, base).as_ref() == Some(wanted));
            if hit {
                out.push(lsp::Location::new(uri.clone(), index.range(found.start, found.end)));
            }
        }
    }

    /// A lens on front matter: the assembled document's size in tokens, and the command that
    /// assembles it.
    pub(crate) fn lenses(&self, uri: &Url) -> Vec<lsp::CodeLens> {
        let Some(doc) = self.docs.get(uri) else { return Vec::new() };
        if !(doc.text.starts_with("---\n") || doc.text.starts_with("---\r\n")) {
            return Vec::new();
        }
        let mut content = Vec::new();
        let Some(assembly) = self.assemble(uri, &mut content) else { return Vec::new() };
        let tokenizer = self.ctx.assembler().options().tokenizer;
        let tokens = tokenizer.count(&String::from_utf8_lossy(&content));
        // A size the budget made is not the document's: the lens says so.
        let cut = assembly.diagnostics.iter().any(|d| d.code == ctx::Code::TokenBudget);
        let cut = if cut { ", cut by the token budget" } else { "" };
        vec![lsp::CodeLens {
            range: lsp::Range::new(lsp::Position::new(0, 0), lsp::Position::new(0, 3)),
            command: Some(lsp::Command {
                title: format!("{tokens} tokens ({tokenizer}) assembled{cut}"),
                command: ASSEMBLE_COMMAND.to_owned(),
                arguments: Some(vec![Value::String(uri.to_string())]),
            }),
            data: None,
        }]
    }

    pub(crate) fn execute(&self, params: &lsp::ExecuteCommandParams) -> Result<Value, Failure> {
        if params.command != ASSEMBLE_COMMAND {
            return Err((ErrorCode::InvalidParams, format!("unknown command: {}", params.command)));
        }
        let uri = params
            .arguments
            .first()
            .and_then(Value::as_str)
            .and_then(|s| Url::parse(s).ok())
            .ok_or_else(|| (ErrorCode::InvalidParams, "expected a document URI".to_owned()))?;
        if self.docs.get(&uri).is_some_and(|doc| doc.unchecked.is_some()) {
            let message = format!("the document is too large to assemble: {uri}");
            return Err((ErrorCode::RequestFailed, message));
        }
        let mut content = Vec::new();
        self.assemble(&uri, &mut content)
            .ok_or_else(|| (ErrorCode::InvalidParams, format!("not an open document: {uri}")))?;
        Ok(Value::String(String::from_utf8_lossy(&content).into_owned()))
    }
}

/// The first lines of a text, cut to a preview's size.
fn preview(text: &str) -> String {
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        if n == PREVIEW_LINES || out.len() + line.len() > PREVIEW_BYTES {
            out.push_str("…\n");
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
