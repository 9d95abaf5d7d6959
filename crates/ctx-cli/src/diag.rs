//! Diagnostics on standard error: one `file:line:col: severity[CODE]: message` line each, or,
//! on a terminal, the source line with a caret under the span, in colour.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Level, Origin, Renderer, Snippet};
use ctx::assemble::render::DiagnosticRecord;
use ctx::fs::Content;
use ctx_syntax::Severity;

use crate::settings::Style;

/// Most diagnostics shown on standard error in one run; the rest are counted in one line.
pub(crate) const MAX_SHOWN: usize = 1_000;

/// Counts of what was reported.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
}

/// Writes diagnostics, reading the source lines it shows through the sandbox.
pub(crate) struct Reporter<'a> {
    style: Style,
    quiet: bool,
    sandbox: Option<&'a ctx::fs::Sandbox>,
    /// The text of standard input, for diagnostics about `-`.
    stdin: Option<&'a str>,
    sources: HashMap<String, Option<String>>,
    /// What was seen, warnings included even when `-q` hides them.
    pub(crate) counts: Counts,
}

impl<'a> Reporter<'a> {
    pub(crate) fn new(style: Style, quiet: bool) -> Reporter<'a> {
        Reporter {
            style,
            quiet,
            sandbox: None,
            stdin: None,
            sources: HashMap::new(),
            counts: Counts::default(),
        }
    }

    /// Where source lines are read from.
    pub(crate) fn with_sources(
        mut self,
        sandbox: &'a ctx::fs::Sandbox,
        stdin: Option<&'a str>,
    ) -> Reporter<'a> {
        self.sandbox = Some(sandbox);
        self.stdin = stdin;
        self
    }

    /// Reports the diagnostics in order on standard error, at most [`MAX_SHOWN`] of them and
    /// then how many more there were. Standard error is best effort: a closed or full one
    /// changes neither the counts nor the exit status.
    pub(crate) fn report_all(&mut self, diagnostics: &[DiagnosticRecord]) {
        let mut err = io::stderr().lock();
        let _ = self.report_capped(diagnostics, &mut err).and_then(|()| err.flush());
    }

    /// Reports at most [`MAX_SHOWN`] diagnostics to `out`, then one line saying how many more
    /// there were; every diagnostic is counted.
    pub(crate) fn report_capped(
        &mut self,
        diagnostics: &[DiagnosticRecord],
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let mut failed = Ok(());
        for (i, d) in diagnostics.iter().enumerate() {
            if i < MAX_SHOWN && failed.is_ok() {
                failed = self.report(d, out);
            } else {
                self.count(d);
            }
        }
        failed?;
        match diagnostics.len().checked_sub(MAX_SHOWN) {
            Some(more) if more > 0 => writeln!(out, "ctx: {more} more diagnostics not shown"),
            _ => Ok(()),
        }
    }

    /// Counts one diagnostic without showing it.
    fn count(&mut self, d: &DiagnosticRecord) {
        match d.severity {
            Severity::Error => self.counts.errors += 1,
            Severity::Warning => self.counts.warnings += 1,
        }
    }

    /// Reports one diagnostic (warnings are counted but not shown under `-q`).
    pub(crate) fn report(&mut self, d: &DiagnosticRecord, out: &mut dyn Write) -> io::Result<()> {
        self.count(d);
        if self.quiet && d.severity == Severity::Warning {
            return Ok(());
        }
        if self.style.rich {
            let text = self.render(d);
            writeln!(out, "{text}")
        } else {
            writeln!(out, "{}", plain(d))
        }
    }

    fn render(&mut self, d: &DiagnosticRecord) -> String {
        let level = match d.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let renderer = if self.style.color { Renderer::styled() } else { Renderer::plain() }
            .decor_style(DecorStyle::Unicode);
        let message = visible(&d.message);
        let file = visible(&d.file);
        let title = level.primary_title(message.as_ref()).id(d.code.as_str());
        let line = self.source_line(&d.file, d.line);
        let report = match &line {
            Some(text) => {
                let span = caret_span(text, d.column);
                title.element(
                    Snippet::source(text.as_str())
                        .line_start(d.line as usize)
                        .path(file.as_ref())
                        .annotation(AnnotationKind::Primary.span(span)),
                )
            }
            None => title.element(
                Origin::path(file.as_ref()).line(d.line as usize).char_column(d.column as usize),
            ),
        };
        renderer.render(&[report])
    }

    /// Line `line` (1-based) of `file`, read through the sandbox, or `None`.
    fn source_line(&mut self, file: &str, line: u32) -> Option<String> {
        if !self.sources.contains_key(file) {
            let text = self.read_source(file);
            self.sources.insert(file.to_owned(), text);
        }
        let text = self.sources.get(file)?.as_deref()?;
        let line = text.split('\n').nth(line.checked_sub(1)? as usize)?;
        Some(visible(line.trim_end_matches('\r')).into_owned())
    }

    fn read_source(&self, file: &str) -> Option<String> {
        if file == "-" {
            return self.stdin.map(str::to_owned);
        }
        let sandbox = self.sandbox?;
        let location = sandbox.resolve(file, None).ok()?;
        match sandbox.read_text(&location).ok()? {
            Content::Text { text, .. } => Some(text.to_string()),
            _ => None,
        }
    }
}

/// `file:line:col: severity[CODE]: message`.
pub(crate) fn plain(d: &DiagnosticRecord) -> String {
    format!(
        "{}:{}:{}: {}[{}]: {}",
        visible(&d.file),
        d.line,
        d.column,
        d.severity.name(),
        d.code.as_str(),
        visible(&d.message)
    )
}

/// Text safe to print on a terminal, one character for one: C0 controls (but tab) and DEL
/// become their Control Pictures (`␛` for ESC), bidi controls and Tag characters become
/// `�`, so a hostile file cannot move the cursor, recolour the screen or reorder what the
/// reader sees, and carets still line up.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    let hostile = |c: char| {
        (c < ' ' && c != '\t')
            || c == '\u{7f}'
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
            || ('\u{e0000}'..='\u{e007f}').contains(&c)
    };
    if !text.chars().any(hostile) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\u{7f}' => '\u{2421}',
                c if c < ' ' && c != '\t' => {
                    char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')
                }
                c if hostile(c) => '\u{fffd}',
                c => c,
            })
            .collect(),
    )
}

/// The byte range of the caret on a line: the item that starts at `column` (in characters,
/// 1-based), found by scanning the line, else the word there, else one character.
fn caret_span(line: &str, column: u32) -> std::ops::Range<usize> {
    let start =
        line.char_indices().nth(column.saturating_sub(1) as usize).map_or(line.len(), |(i, _)| i);
    let scan = ctx_syntax::scan(line);
    if let Some(item) = scan
        .items
        .iter()
        .find(|item| item.span.start == start && !matches!(item.kind, ctx_syntax::ItemKind::Text))
    {
        return start..item.span.end.min(line.len());
    }
    let rest = &line[start..];
    let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
    if word > 0 {
        return start..start + word;
    }
    let one = rest.chars().next().map_or(0, char::len_utf8);
    start..start + one
}

/// The summary, in bold red or yellow when there are errors or warnings and colour is on.
pub(crate) fn colored_summary(counts: Counts, files: usize, color: bool) -> String {
    let text = summary(counts, files);
    let style = match (counts.errors, counts.warnings) {
        (0, 0) => "\x1b[1;92m",
        (0, _) => "\x1b[1;93m",
        _ => "\x1b[1;91m",
    };
    if color { format!("{style}{text}\x1b[0m") } else { text }
}

/// `2 errors, 1 warning in 3 files`.
pub(crate) fn summary(counts: Counts, files: usize) -> String {
    let plural = |n: usize, word: &str| {
        if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") }
    };
    format!(
        "{}, {} in {}",
        plural(counts.errors, "error"),
        plural(counts.warnings, "warning"),
        plural(files, "file")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_characters_are_shown_not_obeyed() {
        assert_eq!(visible("plain\ttext"), "plain\ttext");
        assert_eq!(visible("a\u{1b}[31mb"), "a\u{241b}[31mb");
        assert_eq!(visible("x\u{202e}y\u{e0041}"), "x\u{fffd}y\u{fffd}");
        assert_eq!(visible("\r\u{7f}"), "\u{240d}\u{2421}");
    }

    #[test]
    fn caret_covers_the_item_or_the_word() {
        assert_eq!(caret_span("see @[missing.md] here", 5), 4..17);
        assert_eq!(caret_span("ask @alice now", 5), 4..10);
        assert_eq!(caret_span("été @x", 5), 6..8);
        assert_eq!(caret_span("", 1), 0..0);
    }

    #[test]
    fn summaries() {
        assert_eq!(summary(Counts { errors: 2, warnings: 1 }, 3), "2 errors, 1 warning in 3 files");
        assert_eq!(summary(Counts::default(), 1), "0 errors, 0 warnings in 1 file");
    }
}
