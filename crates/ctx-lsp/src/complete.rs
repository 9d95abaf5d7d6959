//! Completion: what was typed since the last `@` decides what is offered.
//!
//! - `@path`, `@"path`, `@[path`: the entries of the directory typed so far (from the
//!   document's directory, then the workspace root), through the sandbox, ignore and deny
//!   rules applied; after `@[` also the tool names;
//! - `@[file:` and `@file:`: the anchors (`ANCHOR: name`) of that file;
//! - `@[file#` and `@file#`: the heading slugs of that Markdown file (and its anchors);
//! - `@{`: the directive names and the defined macros; after `@{ifdef ` and the like, the
//!   macros.
//!
//! Names taken from files (anchors, headings, macros) go through the assembler's sanitizer
//! like every label, so hidden and control characters reach the editor visible.

use std::collections::BTreeSet;
use std::time::Duration;

use ctx::fs::{FileKind, Location, WalkOptions};
use ctx::syntax::{DirectiveKind, ItemKind};
use lsp_types as lsp;

use crate::documents::Document;
use crate::text;
use crate::workspace::{Workspace, visible};

/// The directives of syntax.md, as typed after `@{`.
const DIRECTIVES: &[&str] =
    &["define", "undef", "ifdef", "ifndef", "if", "elif", "else", "endif", "include"];

/// Most ranked matches offered besides the directory's entries.
const RANKED: usize = 50;

/// Most entries listed for one directory.
const MAX_ENTRIES: usize = 2000;

/// What the cursor is completing.
#[derive(Debug, PartialEq, Eq)]
enum Context<'a> {
    /// A path; `tools` when tool names fit too; `mention` for a bare `@path` (whose
    /// completion is quoted when the path needs it).
    Path { typed: &'a str, tools: bool, mention: bool },
    /// An anchor of `file`, `typed` of it so far.
    Anchor { file: &'a str, typed: &'a str },
    /// A heading of `file`.
    Heading { file: &'a str, typed: &'a str },
    /// A directive name or a macro.
    Directive { typed: &'a str },
    /// A macro name after a directive that takes one.
    Macro { typed: &'a str },
    /// A key of the JSON arguments of `tool`.
    ToolKey { tool: &'a str, typed: &'a str },
}

/// Reads the completion context from the text of the line before the cursor.
fn context(line: &str) -> Option<Context<'_>> {
    let at = line.rfind('@')?;
    let after = &line[at + 1..];
    if let Some(inner) = after.strip_prefix('{') {
        if inner.contains('}') {
            return None;
        }
        return Some(match inner.split_once(' ') {
            None => Context::Directive { typed: inner },
            Some((name, rest)) if ["ifdef", "ifndef", "undef", "if", "elif"].contains(&name) => {
                if rest.contains(' ') {
                    return None;
                }
                Context::Macro { typed: rest }
            }
            Some(_) => return None,
        });
    }
    let (inner, include) = match after.strip_prefix('[') {
        Some(inner) if inner.contains(']') => return None,
        Some(inner) if inner.contains('{') => return tool_key(inner),
        Some(inner) => (inner, true),
        None => (after, false),
    };
    let (inner, quoted) = match inner.strip_prefix('"') {
        Some(rest) => (rest, true),
        None => (inner, false),
    };
    if !quoted && !include && inner.contains(char::is_whitespace) {
        return None;
    }
    if let Some((file, typed)) = inner.rsplit_once('#') {
        return Some(Context::Heading { file: file.trim_end_matches('"'), typed });
    }
    if let Some((file, typed)) = inner.rsplit_once(':')
        && !file.is_empty()
    {
        // A line range is being typed: nothing to offer.
        if typed.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        return Some(Context::Anchor { file: file.trim_end_matches('"'), typed });
    }
    let tools = include && !quoted && !inner.contains('/');
    Some(Context::Path { typed: inner, tools, mention: !include && !quoted })
}

/// Inside `name{...`: the key being typed, after `{` or `,` and an optional quote.
fn tool_key(inner: &str) -> Option<Context<'_>> {
    let (tool, args) = inner.split_once('{')?;
    let last = args.rsplit([',', '{']).next().unwrap_or(args).trim_start();
    let typed = last.strip_prefix('"').unwrap_or(last);
    if typed.contains([':', '"', '}']) {
        return None;
    }
    Some(Context::ToolKey { tool: tool.trim(), typed })
}

impl Workspace<'_> {
    /// The completions at a position; `max_age` is how old the walk behind ranked matches
    /// may be.
    pub(crate) fn completion(
        &self,
        params: &lsp::CompletionParams,
        max_age: Duration,
    ) -> Option<lsp::CompletionResponse> {
        let at = &params.text_document_position;
        let doc = self.docs.get(&at.text_document.uri)?;
        let offset = text::offset(&doc.text, at.position);
        // The line as LSP counts lines (a `\r` alone ends one too).
        let line_start = doc.text[..offset].rfind(['\n', '\r']).map_or(0, |n| n + 1);
        let line = &doc.text[line_start..offset];
        // Ranked matches depend on the whole typed path, not on a prefix of it a client could
        // filter by: the list is incomplete, so the client asks again as the person types.
        let mut incomplete = false;
        let items = match context(line)? {
            Context::Path { typed, tools, mention } => {
                let mut items = self.paths(doc, typed, tools, at.position);
                incomplete = !typed.is_empty();
                items.extend(self.ranked(typed, mention, at.position, items.len(), max_age));
                items
            }
            Context::Anchor { file, typed } => self.anchors(doc, file, typed, false, at.position),
            Context::Heading { file, typed } => self.anchors(doc, file, typed, true, at.position),
            Context::Directive { typed } => {
                let mut items =
                    keywords(DIRECTIVES, typed, at.position, lsp::CompletionItemKind::KEYWORD);
                items.extend(self.macros(doc, typed, at.position));
                items
            }
            Context::Macro { typed } => self.macros(doc, typed, at.position),
            Context::ToolKey { tool, typed } => {
                let tools = self.ctx.assembler().tools();
                let keys = tools.get(tool).map(|t| t.keys().to_vec()).unwrap_or_default();
                keywords(&keys, typed, at.position, lsp::CompletionItemKind::PROPERTY)
            }
        };
        Some(lsp::CompletionResponse::List(lsp::CompletionList {
            is_incomplete: incomplete,
            items,
        }))
    }

    /// The entries of the directory typed so far.
    fn paths(
        &self,
        doc: &Document,
        typed: &str,
        tools: bool,
        position: lsp::Position,
    ) -> Vec<lsp::CompletionItem> {
        let (dir, partial) = typed.rsplit_once('/').map_or(("", typed), |(d, p)| (d, p));
        let sandbox = self.ctx.sandbox();
        let base = self.base_of(doc);
        let mut dirs: Vec<Location> = Vec::new();
        if dir.is_empty() {
            dirs.push(base.clone());
            dirs.push(sandbox.workspace());
        } else if let Some(location) = self.resolve(&format!("{dir}/"), &base) {
            dirs.push(location);
        }
        dirs.dedup();
        let options = WalkOptions::of(sandbox).max_depth(1).max_entries(MAX_ENTRIES).names_only();
        let mut seen = BTreeSet::new();
        let mut items = Vec::new();
        for dir in &dirs {
            let Ok(walk) = sandbox.walk_with(dir, options) else { continue };
            for entry in &walk.entries {
                let Some(name) = entry.path.file_name() else { continue };
                let folder = entry.kind == FileKind::Dir;
                let label = if folder { format!("{name}/") } else { name.to_owned() };
                if !seen.insert(label.clone()) {
                    continue;
                }
                let kind = if folder {
                    lsp::CompletionItemKind::FOLDER
                } else {
                    lsp::CompletionItemKind::FILE
                };
                items.push(item(label, partial, position, kind));
            }
        }
        if tools {
            let tools = self.ctx.assembler().tools();
            for name in tools.names() {
                let mut tool = item(
                    format!("{name}{{}}"),
                    partial,
                    position,
                    lsp::CompletionItemKind::FUNCTION,
                );
                tool.label = visible(name);
                tool.detail = Some("tool".to_owned());
                items.push(tool);
            }
        }
        rank(&mut items, partial);
        items
    }

    /// The ranked matches of `ctx complete` over every root, after the entries of the
    /// directory being typed; each replaces the whole path typed so far.
    fn ranked(
        &self,
        typed: &str,
        mention: bool,
        position: lsp::Position,
        after: usize,
        max_age: Duration,
    ) -> Vec<lsp::CompletionItem> {
        if typed.is_empty() {
            return Vec::new();
        }
        // The roots' paths are walked once and kept for the keystrokes that follow; files that
        // come or go are seen after a save, a file event from the client, or the maximum age.
        let Ok(found) = self.ctx.complete_recent(typed, RANKED, max_age) else {
            return Vec::new();
        };
        found
            .into_iter()
            .enumerate()
            .map(|(n, c)| {
                let text = if mention {
                    c.mention.strip_prefix('@').unwrap_or(&c.mention).to_owned()
                } else {
                    c.path.clone()
                };
                let kind = if c.dir {
                    lsp::CompletionItemKind::FOLDER
                } else {
                    lsp::CompletionItemKind::FILE
                };
                // The edit replaces the whole typed path; the client filters what is typed in
                // that range against the path itself, which a fuzzy filter keeps matching.
                let mut item = item(text, typed, position, kind);
                item.filter_text = Some(visible(&c.path));
                item.label = visible(&c.path);
                item.sort_text = Some(format!("{:06}", after + n));
                item
            })
            .collect()
    }

    /// The anchors (and for headings, the heading slugs) of a file.
    fn anchors(
        &self,
        doc: &Document,
        file: &str,
        typed: &str,
        headings: bool,
        position: lsp::Position,
    ) -> Vec<lsp::CompletionItem> {
        let Some(location) = self.resolve(file, &self.base_of(doc)) else { return Vec::new() };
        let Some(content) = self.read(&location) else { return Vec::new() };
        let mut names = BTreeSet::new();
        let markdown = ctx::assemble::is_markdown(location.path().as_str());
        let mut fenced = false;
        for line in content.lines() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fenced = !fenced;
            }
            if let Some(at) = line.find("ANCHOR:") {
                let name = line[at + "ANCHOR:".len()..].split_whitespace().next().unwrap_or("");
                if !name.is_empty() {
                    names.insert((name.to_owned(), false));
                }
            } else if headings && markdown && !fenced && trimmed.starts_with('#') {
                let title = trimmed.trim_start_matches('#');
                if title.starts_with(' ') {
                    let slug = ctx::assemble::select::slug(title.trim());
                    names.insert((slug, true));
                }
            }
        }
        let mut items: Vec<_> = names
            .into_iter()
            .map(|(name, heading)| item(name, typed, position, anchor_kind(heading)))
            .collect();
        rank(&mut items, typed);
        items
    }

    /// The macros defined on the command line, in the configuration and in the document.
    fn macros(
        &self,
        doc: &Document,
        typed: &str,
        position: lsp::Position,
    ) -> Vec<lsp::CompletionItem> {
        let mut names: BTreeSet<String> =
            self.ctx.assembler().options().defines.iter().map(|(n, _)| n.clone()).collect();
        let scan = ctx::syntax::scan_with(&doc.text, &self.ctx.assembler().options().syntax);
        for item in &scan.items {
            if let ItemKind::Directive(directive) = &item.kind
                && let DirectiveKind::Define { name, .. } = directive.kind
            {
                names.insert(name.to_owned());
            }
        }
        names
            .into_iter()
            .map(|name| item(name, typed, position, lsp::CompletionItemKind::CONSTANT))
            .collect()
    }
}

/// Headings show as constants, anchors as references.
fn anchor_kind(heading: bool) -> lsp::CompletionItemKind {
    if heading { lsp::CompletionItemKind::CONSTANT } else { lsp::CompletionItemKind::REFERENCE }
}

/// Completion items for fixed words.
fn keywords(
    words: &[&str],
    typed: &str,
    position: lsp::Position,
    kind: lsp::CompletionItemKind,
) -> Vec<lsp::CompletionItem> {
    words.iter().map(|word| item((*word).to_owned(), typed, position, kind)).collect()
}

/// An item that replaces what was typed of the current word; what it shows and inserts is
/// made visible.
fn item(
    label: String,
    typed: &str,
    position: lsp::Position,
    kind: lsp::CompletionItemKind,
) -> lsp::CompletionItem {
    let label = visible(&label);
    let units: usize = typed.chars().map(char::len_utf16).sum();
    let start = lsp::Position::new(
        position.line,
        position.character.saturating_sub(u32::try_from(units).unwrap_or(u32::MAX)),
    );
    lsp::CompletionItem {
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit::new(
            lsp::Range::new(start, position),
            label.clone(),
        ))),
        filter_text: Some(label.clone()),
        label,
        kind: Some(kind),
        ..lsp::CompletionItem::default()
    }
}

/// Orders items: those that start with what was typed first (case-insensitively), then the
/// others; alphabetical within each group. The client filters further as the person types.
fn rank(items: &mut [lsp::CompletionItem], typed: &str) {
    let typed = typed.to_lowercase();
    items.sort_by_cached_key(|item| {
        (!item.label.to_lowercase().starts_with(&typed), item.label.clone())
    });
    for (n, item) in items.iter_mut().enumerate() {
        item.sort_text = Some(format!("{n:06}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts() {
        assert_eq!(
            context("see @src/ma"),
            Some(Context::Path { typed: "src/ma", tools: false, mention: true })
        );
        assert_eq!(
            context("@[gr"),
            Some(Context::Path { typed: "gr", tools: true, mention: false })
        );
        assert_eq!(
            context("@[\"my f"),
            Some(Context::Path { typed: "my f", tools: false, mention: false })
        );
        assert_eq!(
            context("@\"a b"),
            Some(Context::Path { typed: "a b", tools: false, mention: false })
        );
        assert_eq!(context("@[a.md:se"), Some(Context::Anchor { file: "a.md", typed: "se" }));
        assert_eq!(context("@[a.md:1"), None);
        assert_eq!(context("@[a.md#us"), Some(Context::Heading { file: "a.md", typed: "us" }));
        assert_eq!(context("@{if"), Some(Context::Directive { typed: "if" }));
        assert_eq!(context("@{ifdef DE"), Some(Context::Macro { typed: "DE" }));
        assert_eq!(context("@{endif}"), None);
        assert_eq!(context("@[done.md] and"), None);
        assert_eq!(context("@a.md and"), None);
        assert_eq!(context("no at"), None);
        assert_eq!(context("@[grep{\"pa"), Some(Context::ToolKey { tool: "grep", typed: "pa" }));
        assert_eq!(
            context("@[grep{\"pattern\": \"x\", "),
            Some(Context::ToolKey { tool: "grep", typed: "" })
        );
        assert_eq!(context("@[grep{\"pattern\": \"x"), None);
    }
}
