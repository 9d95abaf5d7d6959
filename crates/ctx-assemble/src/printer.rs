//! The printers of assembly.md §7: one [`Printer`] per format (inline, xml, markdown, json)
//! behind one trait. The walk hands them entries and never looks at the format; where an entry
//! goes (in place, or after the text in append mode) is the business of
//! [`Out`](crate::out::Out).

use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::io;

use ctx_syntax::Code;

use crate::options::{Format, Mode, Options};
use crate::record::Assembly;
use crate::render::{escape_attr, fence, language, neutralize_tags};

/// One result: written in place (inline mode) or attached after the text (append mode). A
/// directory or glob is not one entry but a [`DirectoryHead`], its files one by one, and a
/// closing, so that a large expansion streams.
#[derive(Debug, Clone)]
pub(crate) enum Entry<'c> {
    /// A file or its lines.
    File {
        /// Resolved path, shown to the reader.
        path: String,
        /// The reference as written, for the Markdown heading ([`FileHead::written`]).
        written: Option<String>,
        /// `start-end` of the lines taken, for the `lines` attribute.
        lines: Option<(u32, u32)>,
        /// The encoding the text was decoded from, when it was not UTF-8.
        encoding: Option<&'static str>,
        /// The content, sanitised; borrowed from the file's text when nothing changed it.
        content: Cow<'c, str>,
    },
    /// A tool call's result.
    Tool {
        /// The tool's name.
        name: String,
        /// The JSON arguments as written.
        args: String,
        /// The result, sanitised.
        content: Cow<'c, str>,
    },
}

/// What opens a directory or glob expansion.
#[derive(Debug, Clone)]
pub(crate) struct DirectoryHead {
    /// Resolved path (with a trailing `/`) or the glob as written.
    pub(crate) path: String,
    /// The ASCII tree of what was taken.
    pub(crate) tree: String,
}

/// A failed reference, listed after an XML prompt.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) reference: String,
    pub(crate) code: Code,
    pub(crate) message: String,
}

/// Which attachments a block of append mode holds: the references the text holds, or files
/// attached to the text because ctx suggested them (assembly.md, "Attachments"). Each has a
/// heading of its own, so that a suggested file is not taken for one the user mentioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    /// The text's own mentions and includes.
    Mentioned,
    /// Files ctx suggested for the text.
    Suggested,
}

/// What a file entry's frame is made of: everything but its content.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileHead<'a> {
    /// Resolved path, shown to the reader.
    pub(crate) path: &'a str,
    /// The reference as written, without its `@`, brackets or quotes (`src/a.rs:10:20`), when
    /// the entry is a reference's own file: what a Markdown heading names (`#### Source:`,
    /// assembly.md §7); a file of a directory or an attachment has none.
    pub(crate) written: Option<&'a str>,
    /// `start-end` of the lines taken.
    pub(crate) lines: Option<(u32, u32)>,
    /// The encoding the text was decoded from, when it was not UTF-8.
    pub(crate) encoding: Option<&'a str>,
}

impl FileHead<'_> {
    /// How every format labels the entry: the resolved path, and the lines taken as
    /// `#Lstart-end` (`#Lstart` for one line; assembly.md, "Modes and formats").
    pub(crate) fn label(&self) -> String {
        match self.lines {
            Some((start, end)) if start == end => format!("{}#L{start}", self.path),
            Some((start, end)) => format!("{}#L{start}-{end}", self.path),
            None => self.path.to_owned(),
        }
    }

    /// What a `#### Source:` heading names: the reference as written, else the label.
    pub(crate) fn heading(&self) -> String {
        self.written.map_or_else(|| self.label(), str::to_owned)
    }
}

/// A reference as written without its `@`, brackets or quotes (assembly.md §7):
/// `@[src/a.rs:10:20]` is `src/a.rs:10:20`, `@"my notes.md"#L2` is `my notes.md#L2`,
/// `@{include "a.md"}` is `a.md`.
pub(crate) fn as_written(raw: &str) -> String {
    let body = raw.strip_prefix('@').unwrap_or(raw);
    let body = match (body.strip_prefix('['), body.strip_prefix('{')) {
        (Some(inner), _) => inner.strip_suffix(']').unwrap_or(inner),
        (_, Some(inner)) => {
            let inner = inner.strip_suffix('}').unwrap_or(inner).trim_start();
            inner.strip_prefix("include").unwrap_or(inner)
        }
        _ => body,
    };
    let body = body.trim();
    let Some(quoted) = body.strip_prefix('"') else { return body.to_owned() };
    // The path between the quotes (`\"` and `\\` its only escapes), then what follows them.
    let mut path = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return format!("{path}{}", quoted[i + 1..].trim()),
            '\\' if matches!(quoted[i + 1..].chars().next(), Some('"' | '\\')) => {
                path.extend(chars.next().map(|(_, c)| c));
            }
            c => path.push(c),
        }
    }
    body.to_owned()
}

/// The note written in place of a frame, in the inline format, before text that was decoded
/// from another encoding than UTF-8: the same marker as a failure's.
pub(crate) fn encoding_marker(path: &str, encoding: &str) -> String {
    format!("<!-- ctx: {}: {} -->\n", Code::Encoding, encoding_message(path, encoding))
}

/// The message of `W_ENCODING` for a file.
pub(crate) fn encoding_message(path: &str, encoding: &str) -> String {
    format!("text decoded from {encoding}: {path}")
}

/// The layout around a file's content: what comes before it and after it, and what is done
/// to it on the way. The one description of a file entry, whether its content is written at
/// once or part by part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    /// Written before the content.
    pub(crate) head: String,
    /// Written after the content (and after the line ending `end_line` adds).
    pub(crate) tail: String,
    /// Whether wrapper-shaped tags in the content are neutralised (XML).
    pub(crate) neutralize: bool,
    /// Whether content that is not empty and does not end a line gets a line ending.
    pub(crate) end_line: bool,
}

/// What a printer produces for one piece of output: its own small strings and the content
/// borrowed as it is, so a large file is written without being copied.
#[derive(Debug, Default)]
pub(crate) struct Pieces<'a> {
    parts: Vec<Cow<'a, str>>,
}

impl<'a> Pieces<'a> {
    /// Appends a copy of a short string.
    pub(crate) fn push_str(&mut self, s: &str) {
        match self.parts.last_mut() {
            Some(Cow::Owned(last)) => last.push_str(s),
            _ => self.parts.push(Cow::Owned(s.to_owned())),
        }
    }

    /// Appends one character.
    pub(crate) fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    /// Appends content without copying it when it is borrowed.
    pub(crate) fn push_content(&mut self, content: Cow<'a, str>) {
        match content {
            Cow::Borrowed(s) => self.parts.push(Cow::Borrowed(s)),
            Cow::Owned(s) => self.push_str(&s),
        }
    }

    /// Takes one line ending off the start of the pieces, if they start with one; whether
    /// they hold any text.
    pub(crate) fn trim_leading_newline(&mut self) -> bool {
        let Some(first) = self.parts.iter_mut().find(|p| !p.is_empty()) else {
            return false;
        };
        if first.starts_with('\n') {
            *first = match std::mem::take(first) {
                Cow::Borrowed(s) => Cow::Borrowed(&s[1..]),
                Cow::Owned(mut s) => {
                    s.remove(0);
                    Cow::Owned(s)
                }
            };
        }
        true
    }

    /// Whether the pieces so far end a line.
    pub(crate) fn ends_line(&self) -> bool {
        self.parts.iter().rev().find(|p| !p.is_empty()).is_some_and(|p| p.ends_with('\n'))
    }

    /// The pieces, in order.
    pub(crate) fn parts(&self) -> &[Cow<'a, str>] {
        &self.parts
    }

    /// Everything, as one string.
    #[cfg(test)]
    pub(crate) fn concat(&self) -> String {
        self.parts.concat()
    }
}

impl fmt::Write for Pieces<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

/// Wrapper-shaped tags escaped while printing XML, for `W_ESCAPED`.
#[derive(Debug, Default)]
pub(crate) struct Escaped {
    pub(crate) count: usize,
    pub(crate) paths: Vec<String>,
}

impl Escaped {
    /// Neutralises wrapper-shaped tags in `content` (from `path`) and writes it as a block.
    fn block<'e>(&mut self, out: &mut Pieces<'e>, path: &str, content: &'e str) {
        let n = neutralize_tags(content);
        if n.escaped > 0 {
            self.count += n.escaped;
            self.paths.push(path.to_owned());
        }
        push_block(out, n.text);
    }
}

/// How one output format lays entries out.
pub(crate) trait Printer {
    /// An entry, in place or in the attachments of append mode.
    fn entry<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, escaped: &mut Escaped);

    /// The frame of a file entry, in place or (`attachment`) as an attachment; `fence` gives
    /// the Markdown fence its content needs. `None` for a format that takes the content whole
    /// (JSON, which holds it in its record).
    fn file_frame(
        &self,
        head: FileHead<'_>,
        attachment: bool,
        fence: &mut dyn FnMut() -> String,
    ) -> Option<Frame> {
        let _ = (head, attachment, fence);
        None
    }

    /// The frame of a file of a directory expansion, by which [`Printer::directory_file`]
    /// lays it out.
    fn directory_file_frame(
        &self,
        head: FileHead<'_>,
        fence: &mut dyn FnMut() -> String,
    ) -> Option<Frame> {
        self.file_frame(head, false, fence)
    }

    /// The opening of a directory expansion written in place: its element or heading and
    /// its tree.
    fn directory_open(&self, out: &mut Pieces<'_>, head: &DirectoryHead, escaped: &mut Escaped);

    /// One file of a directory expansion written in place, in its
    /// [`Printer::directory_file_frame`].
    fn directory_file<'e>(&self, out: &mut Pieces<'e>, file: &'e Entry<'_>, escaped: &mut Escaped) {
        if let Some((head, content)) = file_head(file)
            && let Some(frame) = self.directory_file_frame(head, &mut || fence(content))
        {
            return framed(out, &frame, head.path, content, escaped);
        }
        self.entry(out, file, escaped);
    }

    /// The end of a directory expansion: the marker for files left out and the closing.
    fn directory_close(&self, out: &mut Pieces<'_>, omitted: Option<&str>);

    /// The short placeholder shown for an image (its bytes travel only in chat requests):
    /// `[image: path, type, N bytes]`.
    fn image(&self, path: &str, media_type: &str, bytes: u64) -> String {
        format!("[image: {path}, {media_type}, {bytes} bytes]")
    }

    /// What opens a block of attachments of append mode, written after the text before its
    /// first attachment (only when there is one).
    fn attachments_open(&self, out: &mut Pieces<'_>, section: Section);

    /// One attachment of append mode.
    fn attachment<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, escaped: &mut Escaped) {
        self.entry(out, entry, escaped);
    }

    /// The opening of a directory attached in append mode (its files follow through
    /// [`Printer::directory_file`], then [`Printer::directory_close`]).
    fn attachment_directory(&self, out: &mut Pieces<'_>, head: &DirectoryHead, e: &mut Escaped) {
        self.directory_open(out, head, e);
    }

    /// What closes the attachments of append mode.
    fn attachments_close(&self, _out: &mut Pieces<'_>) {}

    /// The failed references, after the attachments (`attached` says whether any were
    /// written, so the list keeps one blank line before it).
    fn failures(&self, out: &mut Pieces<'_>, failures: &[Failure], attached: bool) {
        let lead = if attached { "\n" } else { "\n\n" };
        failure_list(out, failures, lead);
    }

    /// Whether the content is the string of a JSON object: streamed escaped between
    /// [`Printer::open`] and [`Printer::close`].
    fn buffers(&self) -> bool {
        false
    }

    /// Writes what comes before the content when it is streamed.
    ///
    /// # Errors
    ///
    /// When writing fails.
    fn open(&self, _writer: &mut dyn io::Write) -> io::Result<()> {
        Ok(())
    }

    /// Writes what comes after the content once the assembly is complete (the JSON object,
    /// whose `content` the assembly carries).
    ///
    /// # Errors
    ///
    /// When writing fails.
    fn close(&self, _assembly: &Assembly, _writer: &mut dyn io::Write) -> io::Result<()> {
        Ok(())
    }
}

/// The printer of the options' format and mode.
pub(crate) fn printer(options: &Options) -> Box<dyn Printer + Send + Sync> {
    match options.format {
        Format::Inline => Box::new(Plain),
        Format::Xml => Box::new(Xml),
        Format::Markdown => Box::new(Markdown),
        // JSON carries the rendering of its mode's default format.
        Format::Json if options.mode == Mode::Inline => Box::new(Json(Box::new(Plain))),
        Format::Json => Box::new(Json(Box::new(Xml))),
    }
}

fn push_block<'e>(out: &mut Pieces<'e>, content: Cow<'e, str>) {
    let newline = !content.is_empty() && !content.ends_with('\n');
    out.push_content(content);
    if newline {
        out.push('\n');
    }
}

/// A file entry: its frame around its content.
fn framed<'e>(
    out: &mut Pieces<'e>,
    frame: &Frame,
    path: &str,
    content: &'e str,
    escaped: &mut Escaped,
) {
    out.push_str(&frame.head);
    if frame.neutralize {
        escaped.block(out, path, content);
    } else if frame.end_line {
        push_block(out, Cow::Borrowed(content));
    } else {
        out.push_content(Cow::Borrowed(content));
    }
    out.push_str(&frame.tail);
}

/// `Some files could not be loaded:` and a line per failure, after `lead`.
fn failure_list(out: &mut Pieces<'_>, failures: &[Failure], lead: &str) {
    if failures.is_empty() {
        return;
    }
    out.push_str(lead);
    out.push_str("Some files could not be loaded:\n");
    for f in failures {
        out.push_str(&failure_line(f));
    }
}

/// One line of the list of failures: `- @REF: CODE: message`.
pub(crate) fn failure_line(f: &Failure) -> String {
    // Names come from the prompt and the disk: control characters are shown, not sent.
    let reference = crate::sanitize::sanitize(&f.reference).text;
    let message = crate::sanitize::sanitize(&f.message).text;
    if reference.is_empty() {
        // Not one reference: the output budget, which stopped the rest.
        format!("- {}: {message}\n", f.code)
    } else {
        format!("- @{reference}: {}: {message}\n", f.code)
    }
}

/// The file entry's parts of a file entry, as [`Entry::File`] holds them.
fn file_head<'e>(entry: &'e Entry<'_>) -> Option<(FileHead<'e>, &'e str)> {
    match entry {
        Entry::File { path, written, lines, encoding, content } => {
            let written = written.as_deref();
            Some((FileHead { path, written, lines: *lines, encoding: *encoding }, content))
        }
        Entry::Tool { .. } => None,
    }
}

/// A Markdown file entry's frame: a heading with its label, the encoding the text was
/// decoded from when it was not UTF-8, then a fenced block (after a blank line when `lead`).
fn markdown_file_frame(head: FileHead<'_>, lead: bool, fence: &str) -> Frame {
    let lead = if lead { "\n" } else { "" };
    let encoding = head.encoding.map(|e| format!("> Encoding: {e}\n")).unwrap_or_default();
    let label = head.heading();
    Frame {
        head: format!("{lead}#### Source: {label}\n{encoding}\n{fence}{}\n", language(head.path)),
        tail: format!("{fence}\n"),
        neutralize: false,
        end_line: true,
    }
}

fn fenced<'e>(out: &mut Pieces<'e>, content: &'e str, lang: &str) {
    let fence = fence(content);
    let _ = writeln!(out, "{fence}{lang}");
    push_block(out, Cow::Borrowed(content));
    let _ = writeln!(out, "{fence}");
}

/// A Markdown entry: its heading, a blank line, its fenced block; after a blank line when
/// `lead` (every entry but the first of a block), so the output ends at the last fence.
fn markdown_entry<'e>(out: &mut Pieces<'e>, entry: &'e Entry<'_>, lead: bool) {
    if let Some((head, content)) = file_head(entry) {
        let frame = markdown_file_frame(head, lead, &fence(content));
        return framed(out, &frame, head.path, content, &mut Escaped::default());
    }
    if lead {
        out.push('\n');
    }
    match entry {
        Entry::File { .. } => {}
        Entry::Tool { name, args, content } => {
            let _ = writeln!(out, "#### Tool Call: {name}\n> Args: {args}\n");
            fenced(out, content, "");
        }
    }
}

/// A directory's Markdown heading and tree, after a blank line when `lead`.
fn markdown_directory(out: &mut Pieces<'_>, head: &DirectoryHead, lead: bool) {
    if lead {
        out.push('\n');
    }
    let _ = writeln!(out, "#### Source: {}\n", head.path);
    let fence = fence(&head.tree);
    let _ = writeln!(out, "{fence}");
    out.push_str(&head.tree);
    if !head.tree.is_empty() && !head.tree.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
}

/// `inline`: in place, content as it is (after a note when it was decoded from another
/// encoding than UTF-8); attachments and a directory's files as Markdown entries, so they
/// keep their labels.
pub(crate) struct Plain;

impl Printer for Plain {
    fn entry<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, escaped: &mut Escaped) {
        match entry {
            Entry::File { .. } => {
                if let Some((head, content)) = file_head(entry)
                    && let Some(frame) = self.file_frame(head, false, &mut String::new)
                {
                    framed(out, &frame, head.path, content, escaped);
                }
            }
            Entry::Tool { content, .. } => out.push_content(Cow::Borrowed(content)),
        }
    }

    // In place, the content alone (after its encoding's note); an attachment as in Markdown.
    fn file_frame(
        &self,
        head: FileHead<'_>,
        attachment: bool,
        fence: &mut dyn FnMut() -> String,
    ) -> Option<Frame> {
        if attachment {
            return Some(markdown_file_frame(head, true, &fence()));
        }
        let note = head.encoding.map(|e| encoding_marker(head.path, e)).unwrap_or_default();
        Some(Frame { head: note, tail: String::new(), neutralize: false, end_line: false })
    }

    fn directory_open(&self, out: &mut Pieces<'_>, head: &DirectoryHead, _: &mut Escaped) {
        // In place: the directory's block starts where the include stood.
        markdown_directory(out, head, false);
    }

    fn directory_file_frame(
        &self,
        head: FileHead<'_>,
        fence: &mut dyn FnMut() -> String,
    ) -> Option<Frame> {
        Some(markdown_file_frame(head, true, &fence()))
    }

    fn directory_close(&self, out: &mut Pieces<'_>, omitted: Option<&str>) {
        // In place, a directory's block ends with a blank line, which keeps it apart from
        // what follows on the next line.
        Markdown.directory_close(out, omitted);
        out.push('\n');
    }

    // The attachments follow the text after a blank line, each one labelled as in Markdown,
    // without Markdown's heading over them.
    fn attachments_open(&self, out: &mut Pieces<'_>, _section: Section) {
        out.push('\n');
    }

    fn attachment<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, _: &mut Escaped) {
        markdown_entry(out, entry, true);
    }

    fn attachment_directory(&self, out: &mut Pieces<'_>, head: &DirectoryHead, _: &mut Escaped) {
        markdown_directory(out, head, true);
    }
}

/// `xml`: Blade's `<system-reminder>` with `<file>`, `<directory>` and `<tool>` elements.
pub(crate) struct Xml;

impl Printer for Xml {
    fn image(&self, path: &str, media_type: &str, bytes: u64) -> String {
        ctx_fs::image::xml_placeholder(path, media_type, bytes)
    }

    fn entry<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, escaped: &mut Escaped) {
        match entry {
            Entry::File { .. } => {
                if let Some((head, content)) = file_head(entry)
                    && let Some(frame) = self.file_frame(head, false, &mut String::new)
                {
                    framed(out, &frame, head.path, content, escaped);
                }
            }
            Entry::Tool { name, args, content } => {
                let _ = writeln!(
                    out,
                    "<tool name=\"{}\" args=\"{}\">",
                    escape_attr(name),
                    escape_attr(args)
                );
                escaped.block(out, name, content);
                out.push_str("</tool>\n");
            }
        }
    }

    fn file_frame(
        &self,
        head: FileHead<'_>,
        _: bool,
        _: &mut dyn FnMut() -> String,
    ) -> Option<Frame> {
        let mut open = format!("<file path=\"{}\"", escape_attr(head.path));
        if let Some((start, end)) = head.lines {
            let _ = write!(open, " lines=\"{start}-{end}\"");
        }
        if let Some(encoding) = head.encoding {
            let _ = write!(open, " encoding=\"{}\"", escape_attr(encoding));
        }
        open.push_str(">\n");
        Some(Frame { head: open, tail: "</file>\n".to_owned(), neutralize: true, end_line: true })
    }

    fn directory_open(&self, out: &mut Pieces<'_>, head: &DirectoryHead, escaped: &mut Escaped) {
        let _ = writeln!(out, "<directory path=\"{}\">", escape_attr(&head.path));
        let tree = neutralize_tags(&head.tree);
        if tree.escaped > 0 {
            escaped.count += tree.escaped;
            escaped.paths.push(head.path.clone());
        }
        out.push_str(&tree.text);
        if !tree.text.is_empty() && !tree.text.ends_with('\n') {
            out.push('\n');
        }
    }

    fn directory_close(&self, out: &mut Pieces<'_>, omitted: Option<&str>) {
        if let Some(marker) = omitted {
            out.push_str(marker);
            out.push('\n');
        }
        out.push_str("</directory>\n");
    }

    fn attachments_open(&self, out: &mut Pieces<'_>, section: Section) {
        out.push_str("\n\n<system-reminder>\n");
        out.push_str(match section {
            Section::Mentioned => "The following files were mentioned with @ syntax:",
            Section::Suggested => {
                "The following files were suggested for this prompt by ctx suggest:"
            }
        });
        out.push_str("\n\n");
    }

    fn attachments_close(&self, out: &mut Pieces<'_>) {
        out.push_str("</system-reminder>\n");
    }

    fn failures(&self, out: &mut Pieces<'_>, failures: &[Failure], _: bool) {
        // One blank line before the list: after the closing `</system-reminder>` line, or
        // after the prompt's text when nothing was attached.
        let lead = if out.ends_line() { "\n" } else { "\n\n" };
        failure_list(out, failures, lead);
    }
}

/// `markdown`: Mutsumi's `#### Source:` entries with fenced blocks.
pub(crate) struct Markdown;

impl Printer for Markdown {
    fn entry<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, _: &mut Escaped) {
        markdown_entry(out, entry, false);
    }

    // Attachments each start with their blank line.
    fn file_frame(
        &self,
        head: FileHead<'_>,
        attachment: bool,
        fence: &mut dyn FnMut() -> String,
    ) -> Option<Frame> {
        Some(markdown_file_frame(head, attachment, &fence()))
    }

    fn directory_open(&self, out: &mut Pieces<'_>, head: &DirectoryHead, _: &mut Escaped) {
        markdown_directory(out, head, false);
    }

    fn directory_file_frame(
        &self,
        head: FileHead<'_>,
        fence: &mut dyn FnMut() -> String,
    ) -> Option<Frame> {
        Some(markdown_file_frame(head, true, &fence()))
    }

    // Attachments each start with their blank line, so the last one ends at its fence.
    fn attachment<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, _: &mut Escaped) {
        markdown_entry(out, entry, true);
    }

    fn attachment_directory(&self, out: &mut Pieces<'_>, head: &DirectoryHead, _: &mut Escaped) {
        markdown_directory(out, head, true);
    }

    fn directory_close(&self, out: &mut Pieces<'_>, omitted: Option<&str>) {
        if let Some(marker) = omitted {
            out.push('\n');
            out.push_str(marker);
            out.push('\n');
        }
    }

    fn attachments_open(&self, out: &mut Pieces<'_>, section: Section) {
        out.push_str(match section {
            Section::Mentioned => "\n\n### User Provided Context References:\n",
            Section::Suggested => "\n\n### Suggested Context References:\n",
        });
    }
}

/// `json`: the content laid out by its mode's default printer, collected, then written with
/// the records as one JSON object.
pub(crate) struct Json(Box<dyn Printer + Send + Sync>);

impl Printer for Json {
    fn image(&self, path: &str, media_type: &str, bytes: u64) -> String {
        self.0.image(path, media_type, bytes)
    }

    fn entry<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, escaped: &mut Escaped) {
        self.0.entry(out, entry, escaped);
    }

    fn directory_open(&self, out: &mut Pieces<'_>, head: &DirectoryHead, escaped: &mut Escaped) {
        self.0.directory_open(out, head, escaped);
    }

    fn directory_file<'e>(&self, out: &mut Pieces<'e>, file: &'e Entry<'_>, escaped: &mut Escaped) {
        self.0.directory_file(out, file, escaped);
    }

    fn directory_close(&self, out: &mut Pieces<'_>, omitted: Option<&str>) {
        self.0.directory_close(out, omitted);
    }

    fn attachments_open(&self, out: &mut Pieces<'_>, section: Section) {
        self.0.attachments_open(out, section);
    }

    fn attachment<'e>(&self, out: &mut Pieces<'e>, entry: &'e Entry<'_>, escaped: &mut Escaped) {
        self.0.attachment(out, entry, escaped);
    }

    fn attachment_directory(&self, out: &mut Pieces<'_>, head: &DirectoryHead, e: &mut Escaped) {
        self.0.attachment_directory(out, head, e);
    }

    fn attachments_close(&self, out: &mut Pieces<'_>) {
        self.0.attachments_close(out);
    }

    fn failures(&self, out: &mut Pieces<'_>, failures: &[Failure], attached: bool) {
        self.0.failures(out, failures, attached);
    }

    fn buffers(&self) -> bool {
        true
    }

    fn open(&self, writer: &mut dyn io::Write) -> io::Result<()> {
        writer.write_all(JSON_HEAD.as_bytes())
    }

    /// The rest of the object after the streamed content: the assembly's JSON without its
    /// head (its `content` is empty when it was streamed).
    fn close(&self, assembly: &Assembly, writer: &mut dyn io::Write) -> io::Result<()> {
        let json = assembly.to_json();
        let rest = json.strip_prefix(JSON_HEAD).unwrap_or(&json);
        writer.write_all(rest.as_bytes())
    }
}

/// How the JSON object starts, up to the opening quote of its `content`, as
/// `Assembly::to_json` writes it.
const JSON_HEAD: &str = "{\n  \"content\": \"";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_as_written_drops_its_at_brackets_and_quotes() {
        for (raw, written) in [
            ("@[src/a.rs:10:20]", "src/a.rs:10:20"),
            ("@[ g.md#t ]", "g.md#t"),
            ("@./g.md", "./g.md"),
            ("@a.md#L2-3", "a.md#L2-3"),
            ("@\"my notes.md\"#L2", "my notes.md#L2"),
            ("@\"my notes.md#L2\"", "my notes.md#L2"),
            ("@[\"notes:v2.md\":2]", "notes:v2.md:2"),
            ("@[\"a\\\"b.md\"]", "a\"b.md"),
            ("@{include \"linux.md\"}", "linux.md"),
        ] {
            assert_eq!(as_written(raw), written, "{raw}");
        }
    }

    fn file(content: &str) -> Entry<'_> {
        Entry::File {
            path: "src/a.rs".into(),
            written: None,
            lines: Some((1, 2)),
            encoding: None,
            content: Cow::Borrowed(content),
        }
    }

    fn print_attachment(printer: &dyn Printer, entry: &Entry<'_>) -> String {
        let mut out = Pieces::default();
        printer.attachment(&mut out, entry, &mut Escaped::default());
        out.concat()
    }

    fn print(printer: &dyn Printer, entry: &Entry<'_>) -> String {
        let mut out = Pieces::default();
        printer.entry(&mut out, entry, &mut Escaped::default());
        out.concat()
    }

    #[test]
    fn each_format_prints_a_file() {
        assert_eq!(print(&Plain, &file("x\n")), "x\n");
        assert_eq!(print(&Xml, &file("x")), "<file path=\"src/a.rs\" lines=\"1-2\">\nx\n</file>\n");
        assert_eq!(
            print(&Markdown, &file("x\n")),
            "#### Source: src/a.rs#L1-2\n\n```rust\nx\n```\n",
            "up to its fence"
        );
        assert_eq!(print(&Json(Box::new(Plain)), &file("x")), "x");
    }

    #[test]
    fn every_format_labels_an_attachment_with_its_path_and_lines() {
        let x = file("x\n");
        assert!(print_attachment(&Xml, &x).starts_with("<file path=\"src/a.rs\" lines=\"1-2\">"));
        let markdown = "\n#### Source: src/a.rs#L1-2\n\n```rust\nx\n```\n";
        assert_eq!(print_attachment(&Markdown, &x), markdown);
        assert_eq!(print_attachment(&Plain, &x), markdown, "labelled as in Markdown");
        let whole = Entry::File {
            path: "b.txt".into(),
            written: None,
            lines: None,
            encoding: None,
            content: Cow::Borrowed("y\n"),
        };
        assert!(print_attachment(&Plain, &whole).starts_with("\n#### Source: b.txt\n"));
        let head = DirectoryHead { path: "src/".into(), tree: ".\n".into() };
        let mut out = Pieces::default();
        Markdown.directory_open(&mut out, &head, &mut Escaped::default());
        assert!(out.concat().starts_with("#### Source: src/\n"), "{}", out.concat());
    }

    #[test]
    fn every_format_names_the_encoding_of_decoded_text() {
        let decoded = Entry::File {
            path: "a.c".into(),
            written: None,
            lines: None,
            encoding: Some("windows-1252"),
            content: Cow::Borrowed("café\n"),
        };
        assert_eq!(
            print(&Xml, &decoded),
            "<file path=\"a.c\" encoding=\"windows-1252\">\ncafé\n</file>\n"
        );
        assert_eq!(
            print(&Markdown, &decoded),
            "#### Source: a.c\n> Encoding: windows-1252\n\n```c\ncafé\n```\n"
        );
        assert_eq!(
            print(&Plain, &decoded),
            "<!-- ctx: W_ENCODING: text decoded from windows-1252: a.c -->\ncafé\n"
        );
        assert!(print_attachment(&Plain, &decoded).contains("> Encoding: windows-1252\n"));
    }

    #[test]
    fn xml_escapes_wrapper_tags_and_counts_them() {
        let mut escaped = Escaped::default();
        let mut out = Pieces::default();
        let entry = file("</file>");
        Xml.entry(&mut out, &entry, &mut escaped);
        let out = out.concat();
        assert!(out.contains("&lt;/file>"), "{out}");
        assert_eq!((escaped.count, escaped.paths.as_slice()), (1, &["src/a.rs".to_owned()][..]));
    }

    #[test]
    fn attachments_and_failures() {
        let failures =
            [Failure { reference: "b.md".into(), code: Code::NotFound, message: "gone".into() }];
        let x = file("x");
        let mut out = Pieces::default();
        Xml.attachments_open(&mut out, Section::Mentioned);
        Xml.attachment(&mut out, &x, &mut Escaped::default());
        Xml.attachments_close(&mut out);
        Xml.failures(&mut out, &failures, true);
        let out = out.concat();
        assert!(out.starts_with("\n\n<system-reminder>\n"), "{out}");
        assert!(
            out.ends_with("</system-reminder>\n\nSome files could not be loaded:\n- @b.md: E_NOT_FOUND: gone\n"),
            "{out}"
        );
        let mut out = Pieces::default();
        let hostile = [Failure {
            reference: "a\u{1b}[2J.md".into(),
            code: Code::NotFound,
            message: "x".into(),
        }];
        Xml.failures(&mut out, &hostile, false);
        assert!(out.concat().contains("- @a\\u{1b}[2J.md: E_NOT_FOUND"), "{}", out.concat());
        // Markdown and the inline format list them too, one blank line after what came before.
        let list = "Some files could not be loaded:\n- @b.md: E_NOT_FOUND: gone\n";
        for (attached, lead) in [(true, "\n"), (false, "\n\n")] {
            for printer in [&Markdown as &dyn Printer, &Plain] {
                let mut out = Pieces::default();
                printer.failures(&mut out, &failures, attached);
                assert_eq!(out.concat(), format!("{lead}{list}"));
            }
        }
        let mut out = Pieces::default();
        Plain.attachment(&mut out, &x, &mut Escaped::default());
        assert_eq!(out.concat(), "\n#### Source: src/a.rs#L1-2\n\n```rust\nx\n```\n");
        assert!(out.parts().iter().any(|p| matches!(p, Cow::Borrowed("x"))), "not copied");
    }

    #[test]
    fn image_placeholders() {
        assert_eq!(Plain.image("a.png", "image/png", 3), "[image: a.png, image/png, 3 bytes]");
        assert_eq!(
            Xml.image("a\"b.png", "image/png", 3),
            "<image path=\"a&quot;b.png\" type=\"image/png\" bytes=\"3\"/>"
        );
    }

    #[test]
    fn only_json_buffers() {
        for format in [Format::Inline, Format::Xml, Format::Markdown, Format::Json] {
            let options = Options { format, ..Options::default() };
            assert_eq!(printer(&options).buffers(), format == Format::Json);
        }
    }
}
