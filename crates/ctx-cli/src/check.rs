//! `ctx check FILE...`: assemble each document without printing it; print only the
//! diagnostics and a one-line summary, on standard output since they are the command's
//! result; exit 1 on errors. A coding agent's rule file (`CLAUDE.md`, `AGENTS.md`, `*.mdc` …)
//! also gets the rule diagnostics of the agents that read it, as `ctx rules lint` gives them.

use std::io::{self, Write};
use std::process::ExitCode;

use ctx::{Format, Mode};
use serde_json::json;

use crate::cli::CheckArgs;
use crate::diag::{self, Counts, Reporter};
use crate::input;
use crate::progress::Progress;
use crate::settings::Settings;

pub(crate) fn run(settings: &Settings, args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("check", false)?;
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    let auto = settings.dialect == crate::cli::DialectArg::Auto;
    // Standard input that cannot be read is one document not read, as a file would be.
    let stdin = if args.files.iter().any(|f| f.as_os_str() == "-") {
        Some(input::read_stdin_document(settings.input_cap()).map_err(|e| format!("{e:#}")))
    } else {
        None
    };
    let progress = Progress::start(
        settings.style.stderr_tty && !settings.quiet,
        settings.style.color,
        format!("checking {} files", args.files.len()),
    );
    let mut reporter = Reporter::new(settings.stdout_style, settings.quiet);
    // The documents that could not be read at all (exit 2), by name as given.
    let mut unread: Vec<String> = Vec::new();
    let mut records: Vec<ctx::assemble::record::DiagnosticRecord> = Vec::new();
    let mut stdout = io::stdout().lock();
    let mut checked = 0;
    let mut home = None;
    for file in &args.files {
        checked += 1;
        let result = match &stdin {
            Some(Ok(text)) if file.as_os_str() == "-" => ctx
                .assembler()
                .assemble_str_to(text, "-", &mut io::sink())
                .map_err(|e| anyhow::Error::from(ctx::Error::from(e))),
            Some(Err(why)) if file.as_os_str() == "-" => Err(anyhow::anyhow!("{why}")),
            _ if auto => {
                let ctx = settings.context_for(Mode::Inline, Format::Inline, Some(file))?;
                input::document(&settings.root, file, |path| ctx.assemble_to(path, &mut io::sink()))
            }
            _ => {
                input::document(&settings.root, file, |path| ctx.assemble_to(path, &mut io::sink()))
            }
        };
        match result {
            Ok(assembly) => {
                let mut failed = assembly.has_errors();
                records.extend(assembly.diagnostics);
                if stdin.is_none() || file.as_os_str() != "-" {
                    let rules = rule_diagnostics(&ctx, settings, file, &mut home);
                    failed |= rules.iter().any(|d| d.severity == ctx::Severity::Error);
                    records.extend(rules);
                }
                // `--strict` stops at the first error, across the files too.
                if failed && settings.options.strict {
                    break;
                }
            }
            Err(err) => {
                unread.push(file.display().to_string());
                let message = format!("ctx: error: {}: {err}", file.display());
                let _ = writeln!(io::stderr(), "{}", crate::term::visible(&message));
            }
        }
    }
    drop(progress);
    // By file, line and column, whatever order the walks met them in (a stable sort keeps
    // the walk's order at one position).
    records.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    // A file checked itself and also included by another checked file (or twice by one) is
    // walked more than once: each of its problems is reported once.
    records.dedup_by(|a, b| {
        (&a.file, a.line, a.column, a.code, &a.message)
            == (&b.file, b.line, b.column, b.code, &b.message)
    });
    let errors = records.iter().filter(|d| d.severity == ctx::Severity::Error).count();
    let counts = Counts { errors, warnings: records.len() - errors };
    let status = if !unread.is_empty() {
        ExitCode::from(2)
    } else if counts.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    let written = (|| -> anyhow::Result<()> {
        if json {
            let mut value = json!({
                "diagnostics": records,
                "errors": counts.errors,
                "warnings": counts.warnings,
                "files": checked,
                "unreadable": unread,
            });
            crate::term::visible_json(&mut value);
            serde_json::to_writer_pretty(&mut stdout, &value)?;
            writeln!(stdout)?;
        } else {
            for d in &records {
                reporter.report(d, &mut stdout)?;
            }
            // Standard output holds the diagnostic lines alone (cli.md); the count of what
            // was not shown and the summary go to standard error.
            stdout.flush()?;
            let mut stderr = io::stderr().lock();
            let _ = reporter.finish(&mut stderr);
            // The files checked: fewer than named when `--strict` stopped early.
            let mut summary = diag::colored_summary(reporter.counts, checked, settings.style.color);
            if !unread.is_empty() {
                summary.push_str(&format!(" ({} could not be read)", unread.len()));
            }
            let _ = writeln!(stderr, "{summary}");
        }
        stdout.flush()?;
        Ok(())
    })();
    crate::term::unless_closed(written)?;
    Ok(status)
}

/// The rule diagnostics of `file` when it is an agent's rule file, as `ctx rules lint`
/// prints them; the user's agent folders are opened once, at the first such file.
fn rule_diagnostics(
    ctx: &ctx::Context,
    settings: &Settings,
    file: &std::path::Path,
    home: &mut Option<ctx::agents::Home>,
) -> Vec<ctx::assemble::record::DiagnosticRecord> {
    let Ok(written) = input::document_path(&settings.root, file) else { return Vec::new() };
    if !ctx::agents::is_rule_file(&written) {
        return Vec::new();
    }
    let home = home.get_or_insert_with(|| ctx::home_of(std::env::home_dir().as_deref()));
    let found = ctx.rule_file_diagnostics(&written, home).unwrap_or_default();
    found.iter().map(crate::rules::record).collect()
}
