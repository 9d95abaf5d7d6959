//! References to files and tool calls (assembly.md §2–§4, §6): resolve, read, select lines,
//! then recurse into a document or place the content verbatim.

use std::borrow::Cow;

use ctx_fs::{Content, Encoding};
use ctx_syntax::{Code, Reference, Selector, TargetKind, ToolCall};
use serde_json::Value;

use crate::document::Selected;
use crate::fit::{Counted, Fitted};
use crate::is_markdown;
use crate::out::Place;
use crate::printer::{Entry, encoding_message};
use crate::record::{Kind, Lines};
use crate::resolve::{self, Failure, Resolved};
use crate::run::{Doc, Item, Run};
use crate::sanitize::sanitize;
use crate::select::{self, LineRange};
use crate::streamed::Outcome;
use crate::tools::ToolContext;

impl Run<'_> {
    /// An include or mention of a path.
    pub(crate) fn reference(
        &mut self,
        doc: &Doc,
        reference: &Reference<'_>,
        mention: bool,
        item: &mut Item<'_>,
    ) {
        let written = reference.path.unescaped();
        item.record.path = written.trim_end_matches(['/', '\\']).replace('\\', "/");
        item.record.kind = match reference.target {
            TargetKind::Directory => Kind::Directory,
            TargetKind::Glob => Kind::Glob,
            TargetKind::File => Kind::File,
        };
        let remembered =
            self.setup.resolver.map(|inner| resolve::Remembered { inner, misses: &self.misses });
        let resolver = remembered.as_ref().map(|r| r as &dyn resolve::Resolver);
        // A large file that may be written part by part is not read while resolving.
        let whole_up_to = if reference.selector.is_none() && self.may_stream(&written) {
            crate::streamed::STREAM_MIN_BYTES
        } else {
            u64::MAX
        };
        let resolved =
            resolve::resolve(self.sandbox(), resolver, &doc.dir, reference, &written, whole_up_to);
        let resolved = match resolved {
            Ok(resolved) => resolved,
            Err(failure @ (Failure::Fs(_) | Failure::Other(Code::NotFound, _)))
                if mention && unresolved(failure.code(), &written) =>
            {
                // `@param` in prose is not a mistake, nor is `@a.rs:10` (no file of that name,
                // and lines are written `#L10`): the text stays as written.
                let message = failure.message() + &crate::run::lines_hint(&written);
                self.diagnose_item(item, Code::Unresolved, message.clone());
                item.record.error =
                    Some(crate::record::ErrorRecord { code: Code::Unresolved, message });
                // Document text, bounded by the token budget as the text around it is.
                if self.out.inline() && self.fits_in_own_text(item, item.raw) {
                    self.write(item.raw);
                }
                return;
            }
            Err(Failure::Fs(err)) => return self.fs_fail(item, &err, &written),
            Err(Failure::Other(code, message)) => return self.fail(item, code, message),
        };
        item.record.kind = resolved.kind;
        item.record.path = resolved.path.clone();
        match resolved.kind {
            Kind::Directory | Kind::Glob if reference.selector.is_some() => {
                // A range or anchor needs the lines of one file; nothing of the directory
                // or glob is attached.
                let message = format!(
                    "a line range or anchor needs a file, and {} is a {}",
                    resolved.path,
                    if resolved.kind == Kind::Glob { "glob" } else { "directory" }
                );
                self.fail(item, Code::Range, message);
            }
            Kind::Directory | Kind::Glob => self.expand_many(doc, &resolved, &written, item),
            _ => self.file(reference, &resolved, item),
        }
    }

    /// A file: read (unless resolving read it already), selected, then assembled recursively
    /// or placed verbatim.
    fn file(&mut self, reference: &Reference<'_>, resolved: &Resolved, item: &mut Item<'_>) {
        if ctx_fs::image::extension_type(&resolved.path).is_some() {
            // An image is told by its content, never included as text.
            return self.binary(resolved, item);
        }
        if resolved.content.is_none()
            && reference.selector.is_none()
            && self.may_stream(&resolved.path)
            && self.item_cap.is_none()
            && let Outcome::Done = self.stream_file(resolved, item)
        {
            return;
        }
        let content = match &resolved.content {
            Some(content) => Ok(content.clone()),
            None => self.sandbox().read_text(&resolved.location),
        };
        let (text, encoding) = match content {
            Ok(Content::Text { text, encoding }) => (text, encoding),
            Ok(_) => return self.binary(resolved, item),
            Err(err) => return self.fs_fail(item, &err, &reference.path.unescaped()),
        };
        self.assembly.stats.files += 1;
        let path = resolved.path.as_str();
        let encoding_was_bom = encoding == Encoding::Utf8Bom;
        let encoding = self.decoded_from(item, path, encoding);
        item.record.encoding = encoding.map(str::to_owned);
        // What an mdBook link takes is placed in line as mdBook places it: read again for
        // links whatever the file (docs/dialects.md), its byte order mark kept.
        let book = match &reference.selector {
            Some(Selector::Book(part)) if self.out.inline() => Some(part),
            _ => None,
        };
        let bom = book.is_some() && encoding_was_bom;
        let source = match bom {
            true => Cow::Owned(format!("\u{feff}{}", &text[..])),
            false => Cow::Borrowed(&text[..]),
        };
        let (selected, lines): (Cow<'_, str>, Option<LineRange>) = match &reference.selector {
            Some(selector) => match select::select(&source, selector, is_markdown(path)) {
                Ok(selection) => {
                    item.skipped = selection.skipped;
                    (selection.text, selection.lines)
                }
                Err(err) => return self.fail(item, err.code(), format!("{path}: {err}")),
            },
            None => (Cow::Borrowed(&text[..]), None),
        };
        item.record.lines = lines
            .filter(|_| reference.selector.is_some())
            .map(|l| Lines { start: l.start, end: l.end });
        let first_line = lines.map_or(1, |l| l.start);
        let recursive = self.opts().is_recursive(path);
        if self.out.inline() && (recursive || book.is_some()) {
            // A file that is not a ctx document, or a playground's code block, is read for
            // mdBook's links alone: the rest of its text stays as written.
            let playground = book.is_some_and(|part| part.playground.is_some());
            let links_only = playground || (book.is_some() && !recursive);
            // A playground's first line is its opening fence: the file starts on the next.
            let lead = if playground { selected.find('\n').map_or(0, |i| i + 1) } else { 0 };
            let whole = (!bom).then_some(&text);
            let (lead, text) = selected.split_at(lead);
            let skipped = std::mem::take(&mut item.skipped);
            let selected = Selected { text, whole, first_line, skipped: &skipped, lead, encoding };
            self.recurse(item, resolved, selected, links_only);
            item.skipped = skipped;
            return;
        }
        // Verbatim content: cut, numbered, sanitised, budgeted.
        let content = if reference.selector.is_none() {
            self.cut_lines(&selected, item)
        } else {
            Cow::Borrowed(&selected[..])
        };
        let content = if self.opts().line_numbers {
            Cow::Owned(select::number_lines_over(&content, first_line, &item.skipped))
        } else {
            content
        };
        let skipped = std::mem::take(&mut item.skipped);
        let clean = self.clean_content_over(&content, path, first_line, &skipped);
        item.skipped = skipped;
        let mut entry = Entry::File {
            path: resolved.path.clone(),
            written: self.written(item),
            lines: item.record.lines.map(|l| (l.start, l.end)),
            encoding,
            content: Cow::Borrowed(""),
        };
        // A file mentioned whole may be reduced to its outline and ranges rather than cut.
        let whole = reference.selector.is_none().then_some(&text[..]);
        let counted = Counted { text: clean, tokens: None, whole };
        let clean = match self.spend(counted, path, item, (&entry, Place::Entry, true)) {
            Fitted::Place(clean) => clean,
            Fitted::Dropped(Some(note)) => Cow::Owned(note),
            Fitted::Dropped(None) => return,
        };
        item.record.bytes = clean.len() as u64;
        if let Entry::File { content, .. } = &mut entry {
            *content = clean;
        }
        self.place(&entry, item);
    }

    /// The reference of `item` as written, for a Markdown heading; none for an attachment.
    pub(crate) fn written(&self, item: &Item<'_>) -> Option<String> {
        (!self.attaching).then(|| crate::printer::as_written(item.raw))
    }

    /// A file that is not text: an image (by its extension) is shown as a placeholder when
    /// its content is the kind its extension names (`E_IMAGE` otherwise); anything else is
    /// left out with `W_BINARY`.
    pub(crate) fn binary(&mut self, resolved: &Resolved, item: &mut Item<'_>) {
        let path = resolved.path.as_str();
        let Some(named) = ctx_fs::image::extension_type(path) else {
            let message = format!("binary file left out: {path}");
            return self.fail(item, Code::Binary, message);
        };
        let sandbox = self.sandbox();
        let head = sandbox.read_prefix(&resolved.location, ctx_fs::image::SNIFF_BYTES);
        let stat = sandbox.stat(&resolved.location);
        let (head, len) = match (head, stat) {
            (Ok(head), Ok(stat)) => (head, stat.len),
            (Err(err), _) | (_, Err(err)) => return self.fs_fail(item, &err, path),
        };
        match ctx_fs::image::sniff(&head) {
            Some(found) if found == named => {
                let content = self.out.image(path, found, len);
                item.record.bytes = content.len() as u64;
                let entry = Entry::File {
                    path: resolved.path.clone(),
                    written: self.written(item),
                    lines: None,
                    encoding: None,
                    content: format!("{content}\n").into(),
                };
                self.place(&entry, item);
            }
            Some(found) => {
                let message = format!("{path}: the extension says {named}, the content is {found}");
                self.fail(item, Code::Image, message);
            }
            None => {
                self.fail(item, Code::Image, format!("{path}: not a PNG, JPEG, GIF or WebP image"))
            }
        }
    }

    /// Reports text from `path` that was decoded from another encoding than UTF-8
    /// (`W_ENCODING`, at the item); the encoding's name for the output's note, if so.
    pub(crate) fn decoded_from(
        &mut self,
        item: &Item<'_>,
        path: &str,
        encoding: Encoding,
    ) -> Option<&'static str> {
        let name = encoding.note()?;
        self.diagnose_item(item, Code::Encoding, encoding_message(path, name));
        Some(name)
    }

    /// A tool call (assembly.md §6).
    pub(crate) fn tool(&mut self, doc: &Doc, call: &ToolCall<'_>, item: &mut Item<'_>) {
        item.record.kind = Kind::Tool;
        item.record.path = call.name.to_owned();
        let Some(tool) = self.setup.tools.get(call.name).cloned() else {
            let known: Vec<&str> = self.setup.tools.names().collect();
            let message = format!("unknown tool: {} (known: {})", call.name, known.join(", "));
            return self.fail(item, Code::ToolUnknown, message);
        };
        let args = match serde_json::from_str::<Value>(call.args) {
            // A key given twice would be read as its last value while the output shows both
            // (`{"uri":"/etc/passwd","uri":"a.md"}`): refused, as front matter refuses it.
            Ok(Value::Object(map)) if map.len() != top_keys(call.args) => {
                let message = "a tool argument is given twice".to_owned();
                return self.fail(item, Code::ToolArgs, message);
            }
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                let message = "tool arguments must be a JSON object".to_owned();
                return self.fail(item, Code::ToolArgs, message);
            }
            Err(err) => {
                let message = format!("tool arguments are not valid JSON: {err}");
                return self.fail(item, Code::ToolArgs, message);
            }
        };
        let cx = ToolContext { sandbox: self.sandbox(), base: &doc.dir, budget: &self.tools };
        let result = tool.call(&args, &cx);
        for (code, message) in self.tools.take_warnings() {
            self.diagnose_item(item, code, message);
        }
        match result {
            Ok(result) => {
                let file = item.record.at.file.clone();
                let clean = self.clean_content(&result, &file, item.record.at.line);
                let mut entry = Entry::Tool {
                    name: call.name.to_owned(),
                    args: call.args.to_owned(),
                    content: Cow::Borrowed(""),
                };
                let probe = (&entry, Place::Entry, true);
                let clean = match self.spend(clean.into(), call.name, item, probe) {
                    Fitted::Place(clean) => clean,
                    Fitted::Dropped(Some(note)) => Cow::Owned(note),
                    Fitted::Dropped(None) => return,
                };
                item.record.bytes = clean.len() as u64;
                if let Entry::Tool { content, .. } = &mut entry {
                    *content = clean;
                }
                self.place(&entry, item);
            }
            Err(err) => self.fail(item, err.code, err.message),
        }
    }

    /// Places an entry in the output; the output budget may stop the walk there.
    pub(crate) fn place(&mut self, entry: &Entry, item: &mut Item<'_>) {
        if let Err(message) = self.out.place(entry) {
            self.budget_spent_at(message, Some(item));
        }
    }

    /// Cuts an unranged file at the line limit, with the marker.
    pub(crate) fn cut_lines<'t>(&self, text: &'t str, item: &mut Item<'_>) -> Cow<'t, str> {
        let cut = select::cut(text, self.opts().limits.max_lines);
        match cut.marker() {
            Some(marker) => {
                item.record.truncated = true;
                item.lines_cut = cut.cut as u64;
                let mut kept = cut.text.to_owned();
                if !kept.is_empty() && !kept.ends_with('\n') {
                    kept.push('\n');
                }
                kept.push_str(&marker);
                kept.push('\n');
                Cow::Owned(kept)
            }
            None => Cow::Borrowed(text),
        }
    }

    /// Sanitises content, reporting what was made visible at its line in `path`; borrowed
    /// when nothing had to change.
    pub(crate) fn clean_content<'t>(
        &mut self,
        content: &'t str,
        path: &str,
        first_line: u32,
    ) -> Cow<'t, str> {
        self.clean_content_over(content, path, first_line, &[])
    }

    /// [`Run::clean_content`] of a selection whose lines `skipped` were left out of it.
    fn clean_content_over<'t>(
        &mut self,
        content: &'t str,
        path: &str,
        first_line: u32,
        skipped: &[u32],
    ) -> Cow<'t, str> {
        let clean = sanitize(content);
        let mut warnings = clean.warnings_at(content);
        for warning in &mut warnings {
            let line = crate::selection::Selection::line_of(first_line, skipped, warning.1);
            warning.1 = line - first_line + 1;
        }
        self.report_visible(warnings, path, first_line);
        clean.text
    }

    /// Reports what sanitising content from `path` made visible, at lines counted from
    /// `first_line`.
    pub(crate) fn report_visible(
        &mut self,
        warnings: Vec<(Code, u32, u32, String)>,
        path: &str,
        first_line: u32,
    ) {
        for (code, line, column, message) in warnings {
            let line = first_line + line.saturating_sub(1);
            self.diagnose(crate::record::DiagnosticRecord::new(
                code,
                format!("{message} in {path}"),
                path.to_owned(),
                line,
                column,
            ));
        }
    }
}

/// Whether a mention that failed with `code` is only unresolved (a warning, its text kept): a
/// missing file, or a path the sandbox refuses whose last colon starts a line number (`@a:10`,
/// a drive-relative path).
fn unresolved(code: Code, written: &str) -> bool {
    code == Code::NotFound || (code == Code::BadPath && !crate::run::lines_hint(written).is_empty())
}

/// How many keys the top-level object of the JSON `text` holds as written, a key given twice
/// counted twice (0 for anything else).
fn top_keys(text: &str) -> usize {
    struct Count(usize);
    impl<'de> serde::Deserialize<'de> for Count {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
            struct Keys;
            impl<'de> serde::de::Visitor<'de> for Keys {
                type Value = Count;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Count, A::Error> {
                    let mut n = 0;
                    while map
                        .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                        .is_some()
                    {
                        n += 1;
                    }
                    Ok(Count(n))
                }
            }
            d.deserialize_map(Keys)
        }
    }
    serde_json::from_str::<Count>(text).map_or(0, |c| c.0)
}
