//! The printers of assembly.md §7: one [`Printer`] per format (inline, xml, markdown, json)
//! behind one trait. The walk hands them entries and never looks at the format; where an entry
//! goes (in place, or after the text in append mode) is the business of
//! [`Out`](crate::out::Out).

use std::fmt::Write as _;
use std::io;

use ctx_syntax::Code;

use crate::options::{Format, Mode, Options};
use crate::record::Assembly;
use crate::render::{escape_attr, fence, language, neutralize_tags};

/// One result: written in place (inline mode) or attached after the text (append mode). A
/// directory or glob is not one entry but a [`DirectoryHead`], its files one by one, and a
/// closing, so that a large expansion streams.
#[derive(Debug, Clone)]
pub(crate) enum Entry {
    /// A file or its lines.
    File {
        /// Resolved path, shown to the reader.
        path: String,
        /// The reference as written, without `@`, brackets or quotes.
        reference: String,
        /// `start-end` of the lines taken, for the `lines` attribute.
        lines: Option<(u32, u32)>,
        /// The content, sanitised.
        content: String,
    },
    /// A tool call's result.
    Tool {
        /// The tool's name.
        name: String,
        /// The JSON arguments as written.
        args: String,
        /// The result, sanitised.
        content: String,
    },
}

/// What opens a directory or glob expansion.
#[derive(Debug, Clone)]
pub(crate) struct DirectoryHead {
    /// Resolved path (with a trailing `/`) or the glob as written.
    pub(crate) path: String,
    /// The reference as written.
    pub(crate) reference: String,
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

/// Wrapper-shaped tags escaped while printing XML, for `W_ESCAPED`.
#[derive(Debug, Default)]
pub(crate) struct Escaped {
    pub(crate) count: usize,
    pub(crate) paths: Vec<String>,
}

impl Escaped {
    /// Neutralises wrapper-shaped tags in `content` (from `path`) and writes it as a block.
    fn block(&mut self, out: &mut String, path: &str, content: &str) {
        let n = neutralize_tags(content);
        if n.escaped > 0 {
            self.count += n.escaped;
            self.paths.push(path.to_owned());
        }
        push_block(out, &n.text);
    }
}

/// How one output format lays entries out.
pub(crate) trait Printer {
    /// An entry, in place or in the attachments of append mode.
    fn entry(&self, out: &mut String, entry: &Entry, escaped: &mut Escaped);

    /// The opening of a directory expansion written in place: its element or heading and
    /// its tree.
    fn directory_open(&self, out: &mut String, head: &DirectoryHead, escaped: &mut Escaped);

    /// One file of a directory expansion written in place.
    fn directory_file(&self, out: &mut String, file: &Entry, escaped: &mut Escaped) {
        self.entry(out, file, escaped);
    }

    /// The end of a directory expansion: the marker for files left out and the closing.
    fn directory_close(&self, out: &mut String, omitted: Option<&str>);

    /// What opens the attachments of append mode, written after the text before the first
    /// attachment (only when there is one).
    fn attachments_open(&self, out: &mut String);

    /// One attachment of append mode.
    fn attachment(&self, out: &mut String, entry: &Entry, escaped: &mut Escaped) {
        self.entry(out, entry, escaped);
    }

    /// The opening of a directory attached in append mode (its files follow through
    /// [`Printer::directory_file`], then [`Printer::directory_close`]).
    fn attachment_directory(&self, out: &mut String, head: &DirectoryHead, e: &mut Escaped) {
        self.directory_open(out, head, e);
    }

    /// What closes the attachments of append mode.
    fn attachments_close(&self, _out: &mut String) {}

    /// The failed references, after the attachments, where the format lists them.
    fn failures(&self, _out: &mut String, _failures: &[Failure]) {}

    /// Whether the content is collected and written whole by [`Printer::close`] rather than
    /// streamed.
    fn buffers(&self) -> bool {
        false
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

fn push_block(out: &mut String, content: &str) {
    out.push_str(content);
    if !content.is_empty() && !content.ends_with('\n') {
        out.push('\n');
    }
}

fn fenced(out: &mut String, content: &str, lang: &str) {
    let fence = fence(content);
    let _ = writeln!(out, "{fence}{lang}");
    push_block(out, content);
    let _ = writeln!(out, "{fence}\n");
}

/// `inline`: content as it is; a directory's files as Markdown entries, so they keep their
/// names.
pub(crate) struct Plain;

impl Printer for Plain {
    fn entry(&self, out: &mut String, entry: &Entry, escaped: &mut Escaped) {
        let _ = escaped;
        match entry {
            Entry::File { content, .. } | Entry::Tool { content, .. } => out.push_str(content),
        }
    }

    fn directory_open(&self, out: &mut String, head: &DirectoryHead, escaped: &mut Escaped) {
        Markdown.directory_open(out, head, escaped);
    }

    fn directory_file(&self, out: &mut String, file: &Entry, escaped: &mut Escaped) {
        Markdown.entry(out, file, escaped);
    }

    fn directory_close(&self, out: &mut String, omitted: Option<&str>) {
        Markdown.directory_close(out, omitted);
    }

    fn attachments_open(&self, _out: &mut String) {}

    fn attachment(&self, out: &mut String, entry: &Entry, escaped: &mut Escaped) {
        out.push_str("\n\n");
        self.entry(out, entry, escaped);
    }

    fn attachment_directory(&self, out: &mut String, head: &DirectoryHead, e: &mut Escaped) {
        out.push_str("\n\n");
        self.directory_open(out, head, e);
    }
}

/// `xml`: Blade's `<system-reminder>` with `<file>`, `<directory>` and `<tool>` elements.
pub(crate) struct Xml;

impl Printer for Xml {
    fn entry(&self, out: &mut String, entry: &Entry, escaped: &mut Escaped) {
        match entry {
            Entry::File { path, lines, content, .. } => {
                let _ = write!(out, "<file path=\"{}\"", escape_attr(path));
                if let Some((start, end)) = lines {
                    let _ = write!(out, " lines=\"{start}-{end}\"");
                }
                out.push_str(">\n");
                escaped.block(out, path, content);
                out.push_str("</file>\n");
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

    fn directory_open(&self, out: &mut String, head: &DirectoryHead, escaped: &mut Escaped) {
        let _ = writeln!(out, "<directory path=\"{}\">", escape_attr(&head.path));
        escaped.block(out, &head.path, &head.tree);
    }

    fn directory_close(&self, out: &mut String, omitted: Option<&str>) {
        if let Some(marker) = omitted {
            out.push_str(marker);
            out.push('\n');
        }
        out.push_str("</directory>\n");
    }

    fn attachments_open(&self, out: &mut String) {
        out.push_str(
            "\n\n<system-reminder>\nThe following files were mentioned with @ syntax:\n\n",
        );
    }

    fn attachments_close(&self, out: &mut String) {
        out.push_str("</system-reminder>\n");
    }

    fn failures(&self, out: &mut String, failures: &[Failure]) {
        if failures.is_empty() {
            return;
        }
        out.push_str("\n\nSome files could not be loaded:\n");
        for f in failures {
            let _ = writeln!(out, "- @{}: {}: {}", f.reference, f.code, f.message);
        }
    }
}

/// `markdown`: Mutsumi's `#### Source:` entries with fenced blocks.
pub(crate) struct Markdown;

impl Printer for Markdown {
    fn entry(&self, out: &mut String, entry: &Entry, _: &mut Escaped) {
        match entry {
            Entry::File { path, reference, content, .. } => {
                let _ = writeln!(out, "#### Source: {reference}\n");
                fenced(out, content, language(path));
            }
            Entry::Tool { name, args, content } => {
                let _ = writeln!(out, "#### Tool Call: {name}\n> Args: {args}\n");
                fenced(out, content, "");
            }
        }
    }

    fn directory_open(&self, out: &mut String, head: &DirectoryHead, _: &mut Escaped) {
        let _ = writeln!(out, "#### Source: {}\n", head.reference);
        fenced(out, &head.tree, "");
    }

    fn directory_close(&self, out: &mut String, omitted: Option<&str>) {
        if let Some(marker) = omitted {
            out.push_str(marker);
            out.push_str("\n\n");
        }
    }

    fn attachments_open(&self, out: &mut String) {
        out.push_str("\n\n### User Provided Context References:\n\n");
    }
}

/// `json`: the content laid out by its mode's default printer, collected, then written with
/// the records as one JSON object.
pub(crate) struct Json(Box<dyn Printer + Send + Sync>);

impl Printer for Json {
    fn entry(&self, out: &mut String, entry: &Entry, escaped: &mut Escaped) {
        self.0.entry(out, entry, escaped);
    }

    fn directory_open(&self, out: &mut String, head: &DirectoryHead, escaped: &mut Escaped) {
        self.0.directory_open(out, head, escaped);
    }

    fn directory_file(&self, out: &mut String, file: &Entry, escaped: &mut Escaped) {
        self.0.directory_file(out, file, escaped);
    }

    fn directory_close(&self, out: &mut String, omitted: Option<&str>) {
        self.0.directory_close(out, omitted);
    }

    fn attachments_open(&self, out: &mut String) {
        self.0.attachments_open(out);
    }

    fn attachment(&self, out: &mut String, entry: &Entry, escaped: &mut Escaped) {
        self.0.attachment(out, entry, escaped);
    }

    fn attachment_directory(&self, out: &mut String, head: &DirectoryHead, e: &mut Escaped) {
        self.0.attachment_directory(out, head, e);
    }

    fn attachments_close(&self, out: &mut String) {
        self.0.attachments_close(out);
    }

    fn failures(&self, out: &mut String, failures: &[Failure]) {
        self.0.failures(out, failures);
    }

    fn buffers(&self) -> bool {
        true
    }

    fn close(&self, assembly: &Assembly, writer: &mut dyn io::Write) -> io::Result<()> {
        writer.write_all(assembly.to_json().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: &str) -> Entry {
        Entry::File {
            path: "src/a.rs".into(),
            reference: "src/a.rs#L1-2".into(),
            lines: Some((1, 2)),
            content: content.into(),
        }
    }

    fn print(printer: &dyn Printer, entry: &Entry) -> String {
        let mut out = String::new();
        printer.entry(&mut out, entry, &mut Escaped::default());
        out
    }

    #[test]
    fn each_format_prints_a_file() {
        assert_eq!(print(&Plain, &file("x\n")), "x\n");
        assert_eq!(print(&Xml, &file("x")), "<file path=\"src/a.rs\" lines=\"1-2\">\nx\n</file>\n");
        assert_eq!(
            print(&Markdown, &file("x\n")),
            "#### Source: src/a.rs#L1-2\n\n```rust\nx\n```\n\n"
        );
        assert_eq!(print(&Json(Box::new(Plain)), &file("x")), "x");
    }

    #[test]
    fn xml_escapes_wrapper_tags_and_counts_them() {
        let mut escaped = Escaped::default();
        let mut out = String::new();
        Xml.entry(&mut out, &file("</file>"), &mut escaped);
        assert!(out.contains("&lt;/file>"), "{out}");
        assert_eq!((escaped.count, escaped.paths.as_slice()), (1, &["src/a.rs".to_owned()][..]));
    }

    #[test]
    fn attachments_and_failures() {
        let failures =
            [Failure { reference: "b.md".into(), code: Code::NotFound, message: "gone".into() }];
        let mut out = String::new();
        Xml.attachments_open(&mut out);
        Xml.attachment(&mut out, &file("x"), &mut Escaped::default());
        Xml.attachments_close(&mut out);
        Xml.failures(&mut out, &failures);
        assert!(out.starts_with("\n\n<system-reminder>\n"), "{out}");
        assert!(out.ends_with("Some files could not be loaded:\n- @b.md: E_NOT_FOUND: gone\n"));
        let mut out = String::new();
        Markdown.failures(&mut out, &failures);
        assert_eq!(out, "", "Markdown does not list failures");
        let mut out = String::new();
        Plain.attachment(&mut out, &file("x"), &mut Escaped::default());
        assert_eq!(out, "\n\nx");
    }

    #[test]
    fn only_json_buffers() {
        for format in [Format::Inline, Format::Xml, Format::Markdown, Format::Json] {
            let options = Options { format, ..Options::default() };
            assert_eq!(printer(&options).buffers(), format == Format::Json);
        }
    }
}
