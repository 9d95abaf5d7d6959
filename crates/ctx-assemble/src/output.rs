//! Where assembled text goes, and how append-mode results are laid out.

use std::fmt::Write as _;
use std::io;

use crate::options::Format;
use crate::render::{escape_attr, fence, language, neutralize_tags};

/// Receives the output as the walk produces it.
pub(crate) trait Sink {
    fn write(&mut self, text: &str) -> io::Result<()>;
}

impl Sink for String {
    fn write(&mut self, text: &str) -> io::Result<()> {
        self.push_str(text);
        Ok(())
    }
}

/// A sink over any writer.
pub(crate) struct WriteSink<'w>(pub(crate) &'w mut dyn io::Write);

impl Sink for WriteSink<'_> {
    fn write(&mut self, text: &str) -> io::Result<()> {
        self.0.write_all(text.as_bytes())
    }
}

/// One result attached after the text in append mode, or written in place as an entry.
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
    /// A directory or glob: its tree and its files.
    Directory {
        /// Resolved path or the glob as written.
        path: String,
        /// The reference as written.
        reference: String,
        /// The ASCII tree of what was taken.
        tree: String,
        /// The files, each an [`Entry::File`].
        files: Vec<Entry>,
        /// The marker for files left out, if any.
        omitted: Option<String>,
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

/// Counts of wrapper tags escaped while rendering XML, for `W_ESCAPED`.
#[derive(Debug, Default)]
pub(crate) struct Escaped {
    pub(crate) count: usize,
    pub(crate) paths: Vec<String>,
}

fn push_block(out: &mut String, content: &str) {
    out.push_str(content);
    if !content.is_empty() && !content.ends_with('\n') {
        out.push('\n');
    }
}

/// Renders one entry in the given layout (inline, XML or Markdown).
pub(crate) fn entry(out: &mut String, layout: Format, entry: &Entry, escaped: &mut Escaped) {
    match layout {
        Format::Xml => xml_entry(out, entry, escaped),
        Format::Markdown => markdown_entry(out, entry),
        _ => plain_entry(out, entry),
    }
}

/// Renders the opening of a directory expansion: the element or heading and the tree.
pub(crate) fn directory_open(
    out: &mut String,
    layout: Format,
    path: &str,
    reference: &str,
    tree: &str,
    escaped: &mut Escaped,
) {
    match layout {
        Format::Xml => {
            let _ = writeln!(out, "<directory path=\"{}\">", escape_attr(path));
            let n = neutralize_tags(tree);
            if n.escaped > 0 {
                escaped.count += n.escaped;
                escaped.paths.push(path.to_owned());
            }
            push_block(out, &n.text);
        }
        _ => {
            let _ = writeln!(out, "#### Source: {reference}\n");
            fenced(out, tree, "");
        }
    }
}

/// Renders the end of a directory expansion: the marker for files left out, and the closing
/// element.
pub(crate) fn directory_close(out: &mut String, layout: Format, omitted: Option<&str>) {
    if let Some(marker) = omitted {
        out.push_str(marker);
        out.push_str(if layout == Format::Xml { "\n" } else { "\n\n" });
    }
    if layout == Format::Xml {
        out.push_str("</directory>\n");
    }
}

/// Renders one entry as XML (`<file>`, `<directory>`, `<tool>` elements).
pub(crate) fn xml_entry(out: &mut String, entry: &Entry, escaped: &mut Escaped) {
    let mut neutral = |path: &str, content: &str, out: &mut String| {
        let n = neutralize_tags(content);
        if n.escaped > 0 {
            escaped.count += n.escaped;
            escaped.paths.push(path.to_owned());
        }
        push_block(out, &n.text);
    };
    match entry {
        Entry::File { path, lines, content, .. } => {
            let _ = write!(out, "<file path=\"{}\"", escape_attr(path));
            if let Some((start, end)) = lines {
                let _ = write!(out, " lines=\"{start}-{end}\"");
            }
            out.push_str(">\n");
            neutral(path, content, out);
            out.push_str("</file>\n");
        }
        Entry::Directory { path, reference, tree, files, omitted } => {
            directory_open(out, Format::Xml, path, reference, tree, escaped);
            for file in files {
                xml_entry(out, file, escaped);
            }
            directory_close(out, Format::Xml, omitted.as_deref());
        }
        Entry::Tool { name, args, content } => {
            let _ = writeln!(
                out,
                "<tool name=\"{}\" args=\"{}\">",
                escape_attr(name),
                escape_attr(args)
            );
            neutral(name, content, out);
            out.push_str("</tool>\n");
        }
    }
}

/// Renders one entry as Markdown (`#### Source:` or `#### Tool Call:` and a fenced block).
pub(crate) fn markdown_entry(out: &mut String, entry: &Entry) {
    match entry {
        Entry::File { path, reference, content, .. } => {
            let _ = writeln!(out, "#### Source: {reference}\n");
            fenced(out, content, language(path));
        }
        Entry::Directory { path, reference, tree, files, omitted } => {
            directory_open(out, Format::Markdown, path, reference, tree, &mut Escaped::default());
            for file in files {
                markdown_entry(out, file);
            }
            directory_close(out, Format::Markdown, omitted.as_deref());
        }
        Entry::Tool { name, args, content } => {
            let _ = writeln!(out, "#### Tool Call: {name}\n> Args: {args}\n");
            fenced(out, content, "");
        }
    }
}

fn fenced(out: &mut String, content: &str, lang: &str) {
    let fence = fence(content);
    let _ = writeln!(out, "{fence}{lang}");
    push_block(out, content);
    let _ = writeln!(out, "{fence}\n");
}

/// Renders one entry as plain text: a file's content as it is; a directory's files and a
/// tool's result one after another.
pub(crate) fn plain_entry(out: &mut String, entry: &Entry) {
    match entry {
        Entry::File { content, .. } | Entry::Tool { content, .. } => out.push_str(content),
        Entry::Directory { .. } => markdown_entry(out, entry),
    }
}

/// The failures listed after an XML prompt.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) reference: String,
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

/// Renders the results of append mode after the text.
pub(crate) fn append_xml(entries: &[Entry], failures: &[Failure], escaped: &mut Escaped) -> String {
    let mut out = String::new();
    if !entries.is_empty() {
        out.push_str(
            "\n\n<system-reminder>\nThe following files were mentioned with @ syntax:\n\n",
        );
        for entry in entries {
            xml_entry(&mut out, entry, escaped);
        }
        out.push_str("</system-reminder>\n");
    }
    if !failures.is_empty() {
        out.push_str("\n\nSome files could not be loaded:\n");
        for f in failures {
            let _ = writeln!(out, "- @{}: {}: {}", f.reference, f.code, f.message);
        }
    }
    out
}

/// Renders the results of append mode after the text, as Markdown.
pub(crate) fn append_markdown(entries: &[Entry]) -> String {
    let mut out = String::new();
    if !entries.is_empty() {
        out.push_str("\n\n### User Provided Context References:\n\n");
        for entry in entries {
            markdown_entry(&mut out, entry);
        }
    }
    out
}

/// Renders the results of append mode after the text, plainly.
pub(crate) fn append_plain(entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        out.push_str("\n\n");
        plain_entry(&mut out, entry);
    }
    out
}
