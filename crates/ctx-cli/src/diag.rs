//! Diagnostics on standard error: one `file:line:col: severity[CODE]: message` line each, or,
//! on a terminal, the source line with a caret under the span, in colour.

use std::io::{self, Write};
use std::process::ExitCode;

use annotate_snippets::renderer::DecorStyle;
use annotate_snippets::{AnnotationKind, Level, Origin, Renderer, Snippet};
use ctx::Severity;
use ctx::assemble::record::DiagnosticRecord;

use crate::settings::{Settings, Style};
use crate::term::visible;

/// Reports the diagnostics of an assembly and turns them into the exit status.
pub(crate) fn finish(settings: &Settings, assembly: &ctx::Assembly) -> anyhow::Result<ExitCode> {
    let mut reporter = Reporter::new(settings.style, settings.quiet);
    reporter.report_all(&assembly.diagnostics);
    tracing::info!(
        files = assembly.stats.files,
        bytes = assembly.stats.bytes,
        elapsed_ms = assembly.stats.elapsed_ms,
        "assembled"
    );
    Ok(if assembly.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// [`finish`] for `ctx assemble` and `ctx expand`: with `--tokens` and a format whose output
/// holds no counts (all but JSON), the total on standard error, its tokenizer named
/// (`ctx: 1234 tokens (o200k)`).
pub(crate) fn finish_showing_tokens(
    settings: &Settings,
    assembly: &ctx::Assembly,
    format: ctx::Format,
) -> anyhow::Result<ExitCode> {
    if let Some(tokens) = assembly.stats.tokens
        && format != ctx::Format::Json
        && settings.options.count_tokens
        && !settings.quiet
    {
        let _ = writeln!(io::stderr(), "ctx: {tokens} tokens ({})", assembly.stats.tokenizer);
    }
    finish(settings, assembly)
}

/// Most diagnostics shown for one run; the rest are counted and summed up in one line.
pub(crate) const MAX_SHOWN: usize = 1000;

/// Counts of what was reported.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
}

/// Writes diagnostics; the source lines it shows come with the diagnostics themselves.
pub(crate) struct Reporter {
    style: Style,
    quiet: bool,
    /// How many were shown, up to [`MAX_SHOWN`].
    shown: usize,
    /// What was seen, warnings included even when `-q` hides them.
    pub(crate) counts: Counts,
}

impl Reporter {
    pub(crate) fn new(style: Style, quiet: bool) -> Reporter {
        Reporter { style, quiet, shown: 0, counts: Counts::default() }
    }

    /// Reports every diagnostic in order on standard error. Standard error is best effort: a
    /// closed or full one changes neither the counts nor the exit status.
    pub(crate) fn report_all(&mut self, diagnostics: &[DiagnosticRecord]) {
        let mut err = io::stderr().lock();
        let mut written = Ok(());
        for d in diagnostics {
            match written {
                Ok(()) => written = self.report(d, &mut err),
                Err(_) => self.count(d),
            }
        }
        let _ = written.and_then(|()| self.finish(&mut err)).and_then(|()| err.flush());
    }

    /// Counts one diagnostic.
    fn count(&mut self, d: &DiagnosticRecord) {
        match d.severity {
            Severity::Error => self.counts.errors += 1,
            Severity::Warning => self.counts.warnings += 1,
        }
    }

    /// Says how many diagnostics were counted but not shown, past [`MAX_SHOWN`].
    pub(crate) fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let hidden = self.counts.errors + self.counts.warnings;
        let hidden = hidden.saturating_sub(self.shown).saturating_sub(self.quiet_hidden());
        if self.shown >= MAX_SHOWN && hidden > 0 {
            writeln!(out, "ctx: {hidden} more diagnostics not shown")?;
        }
        Ok(())
    }

    /// Warnings hidden by `-q`, which are not "more".
    fn quiet_hidden(&self) -> usize {
        if self.quiet { self.counts.warnings } else { 0 }
    }

    /// Reports one diagnostic (warnings are counted but not shown under `-q`).
    pub(crate) fn report(&mut self, d: &DiagnosticRecord, out: &mut dyn Write) -> io::Result<()> {
        self.count(d);
        if self.quiet && d.severity == Severity::Warning {
            return Ok(());
        }
        if self.shown >= MAX_SHOWN {
            return Ok(());
        }
        self.shown += 1;
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
        let Some(source) = &d.source else {
            let origin =
                Origin::path(file.as_ref()).line(d.line as usize).char_column(d.column as usize);
            return renderer.render(&[title.element(origin)]);
        };
        // Shown with hostile characters made visible (the span moves with them), and `…`
        // where the line goes on past the window the diagnostic kept.
        let window = &source.lines;
        let start = source.in_lines.start;
        let before = visible(&window[..start]);
        let span = visible(&window[source.in_lines.clone()]);
        let after = visible(&window[source.in_lines.end..]);
        let mut shown = String::with_capacity(window.len() + 8);
        if source.clipped_before {
            shown.push(CLIPPED);
        }
        shown.push_str(&before);
        let at = shown.len();
        shown.push_str(&span);
        shown.push_str(&after);
        if source.clipped_after {
            shown.push(CLIPPED);
        }
        let span = at..at + span.len().max(usize::from(shown.len() > at));
        let rendered = renderer.render(&[title.element(
            Snippet::source(shown.as_str())
                .line_start(source.first_line as usize)
                .path(file.as_ref())
                .annotation(AnnotationKind::Primary.span(span)),
        )]);
        if !source.clipped_before {
            return rendered;
        }
        // The renderer counts the column in what it was given, after the `…`; the line's own
        // is the window's first column plus the characters before the span (which starts on
        // the window's first line).
        let before_span = window[..start].chars().count();
        let line = source.first_line;
        let counted = (line, before_span + 2);
        fix_origin(rendered, counted, (line, source.first_column as usize + before_span))
    }
}

/// What stands for the part of a line a diagnostic did not keep.
const CLIPPED: char = '\u{2026}';

/// `rendered` with the position in its header (`╭▸ file:LINE:COLUMN`, the line after the
/// title) changed from `counted` to `real`.
fn fix_origin(rendered: String, counted: (u32, usize), real: (u32, usize)) -> String {
    let from = format!(":{}:{}", counted.0, counted.1);
    let to = format!(":{}:{}", real.0, real.1);
    // The title is one line: the message and file were made visible, line endings included.
    let Some(header) = rendered.find('\n').map(|i| i + 1) else { return rendered };
    let end = rendered[header..].find('\n').map_or(rendered.len(), |i| header + i);
    match rendered[header..end].rfind(&from) {
        Some(i) => {
            let i = header + i;
            format!("{}{to}{}", &rendered[..i], &rendered[i + from.len()..])
        }
        None => rendered,
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
    use ctx::Code;

    use super::*;

    /// The attack: a diagnostic whose message, file name and source line carry a terminal
    /// title sequence, a C1 CSI, bidi and zero-width characters. What must not happen: any of
    /// them reaching standard error raw.
    #[test]
    fn hostile_characters_are_shown_not_obeyed() {
        let text = "a \u{1b}]0;t\u{7}\u{202e}@[x\u{200b}.md] \u{9b}2J\n";
        let at = text.find("@[").unwrap();
        let source = ctx::assemble::record::Source::of(text, at..at + 13, 1, 0);
        let d = DiagnosticRecord::new(
            Code::NotFound,
            "no such file: x\u{200b}.md \u{1b}[2J".into(),
            "r\u{7f}\u{e0041}.md".into(),
            1,
            3,
        )
        .with_source(Some(source));
        let style = Style { rich: true, color: false, stderr_tty: false };
        for shown in [plain(&d), Reporter::new(style, false).render(&d)] {
            assert!(
                !shown.chars().any(|c| matches!(
                    c,
                    '\u{1b}'
                        | '\u{7}'
                        | '\u{7f}'
                        | '\u{9b}'
                        | '\u{202e}'
                        | '\u{200b}'
                        | '\u{e0041}'
                )),
                "{shown:?}"
            );
            assert!(shown.contains("x\\u{200B}.md \\u{1b}[2J"), "{shown}");
            assert!(shown.contains("r\\u{7f}\\u{E0041}.md"), "{shown}");
        }
    }

    #[test]
    fn the_caret_comes_from_the_diagnostics_source() {
        let text = "intro\nsee \u{1b}x @[missing.md] here\n";
        let at = text.find("@[").unwrap();
        let source = ctx::assemble::record::Source::of(text, at..at + 13, 1, 0);
        let d = DiagnosticRecord::new(Code::NotFound, "no such file".into(), "a.md".into(), 2, 8)
            .with_source(Some(source));
        let style = Style { rich: true, color: false, stderr_tty: false };
        let shown = Reporter::new(style, false).render(&d);
        let lines: Vec<&str> = shown.lines().collect();
        let row = lines.iter().position(|l| l.contains("@[missing.md]")).expect(&shown);
        assert!(lines[row].contains("see \\u{1b}x @[missing.md] here"), "{shown}");
        let caret = lines[row + 1];
        let col = |l: &str, what: char| l.chars().position(|c| c == what).unwrap();
        assert_eq!(col(caret, '━'), col(lines[row], '@'), "{shown}");
        assert_eq!(caret.chars().filter(|&c| c == '━').count(), "@[missing.md]".len(), "{shown}");
    }

    /// The rendering of a diagnostic at byte `at` (`len` bytes) of `text`, as the walk
    /// records it: a window of the line, columns counted on the whole line.
    fn rendered(text: &str, at: usize, len: usize) -> String {
        let source = ctx::assemble::record::Source::of(text, at..at + len, 1, 0);
        let line = text[..at].matches('\n').count() as u32 + 1;
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let column = text[line_start..at].chars().count() as u32 + 1;
        let d = DiagnosticRecord::new(
            Code::Unresolved,
            "no such file".into(),
            "a.md".into(),
            line,
            column,
        )
        .with_source(Some(source));
        let style = Style { rich: true, color: false, stderr_tty: false };
        let shown = Reporter::new(style, false).render(&d);
        // The caret starts under the span's first character.
        let lines: Vec<&str> = shown.lines().collect();
        let row = lines.iter().position(|l| l.contains(" │ ")).expect(&shown);
        let first = text[at..].chars().next().unwrap();
        let col = |l: &str, what: char| l.chars().position(|c| c == what).expect(&shown);
        assert_eq!(col(lines[row + 1], '━'), col(lines[row], first), "{shown}");
        shown
    }

    /// A span far into a long line: the window is shown with `…` where the line goes on, the
    /// caret under the span, and the line's own column in the header.
    #[test]
    fn a_window_clipped_on_both_sides() {
        let text = format!("{}@nothere.md {}\n", "\u{e9}".repeat(40_000), "x".repeat(40_000));
        let shown = rendered(&text, 80_000, 11);
        expect_test::expect![[r#"
            warning[W_UNRESOLVED]: no such file
              ╭▸ a.md:1:40001
              │
            1 │ …éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé@nothere.md xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…
              ╰╴                                                                                 ━━━━━━━━━━━
        "#]]
        .assert_eq(&format!("{shown}\n"));
    }

    /// Clipped only before (the span ends the line) or only after (it starts the line).
    #[test]
    fn a_window_clipped_on_one_side() {
        let text = format!("{}@[missing.md]\n", "y".repeat(5_000));
        expect_test::expect![[r#"
            warning[W_UNRESOLVED]: no such file
              ╭▸ a.md:1:5001
              │
            1 │ …yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy@[missing.md]
              ╰╴                                                                                 ━━━━━━━━━━━━━
        "#]]
        .assert_eq(&format!("{}\n", rendered(&text, 5_000, 13)));
        let text = format!("first\n@[missing.md] {}\n", "z".repeat(5_000));
        expect_test::expect![[r#"
            warning[W_UNRESOLVED]: no such file
              ╭▸ a.md:2:1
              │
            2 │ @[missing.md] zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz…
              ╰╴━━━━━━━━━━━━━
        "#]]
        .assert_eq(&format!("{}\n", rendered(&text, 6, 13)));
    }

    #[test]
    fn summaries() {
        assert_eq!(summary(Counts { errors: 2, warnings: 1 }, 3), "2 errors, 1 warning in 3 files");
        assert_eq!(summary(Counts::default(), 1), "0 errors, 0 warnings in 1 file");
    }
}
