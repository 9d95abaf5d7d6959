//! `ctx assemble --watch FILE` and `ctx check --watch FILE...`: run, then run again each time
//! the documents or anything they read change (every root is watched; changes are debounced).
//!
//! When standard output is a terminal, a re-run prints only what changed: for `assemble`, the
//! lines that differ from the previous output (`-` old, `+` new, after an `@@` line that says
//! where); for `check`, the diagnostics that appeared (`+`) and went away (`-`), then the
//! summary (on standard error). Otherwise each run prints its whole output, so a pipe sees
//! complete documents.

use std::collections::BTreeSet;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use ctx::{Context, Dependencies, Format, Mode};

use crate::cli::{AssembleArgs, CheckArgs};
use crate::diag::{self, Counts, Reporter};
use crate::input;
use crate::settings::Settings;
use crate::term;

/// How long changes are gathered after the last one before a re-run (editors write a file in
/// several steps).
const DEBOUNCE: Duration = Duration::from_millis(100);

/// `ctx assemble --watch FILE`.
pub(crate) fn assemble(settings: &Settings, args: &AssembleArgs) -> anyhow::Result<ExitCode> {
    let file = watched(std::slice::from_ref(&args.file))?;
    let format = settings.assembly_format("assemble", Format::Inline)?;
    let mode = settings.mode.unwrap_or(Mode::Inline);
    let ctx = settings.context_for(mode, format, Some(&args.file))?;
    let path = input::document_path(&settings.root, &file[0])?;
    let tty = io::stdout().is_terminal();
    let mut previous: Option<String> = None;
    run_forever(&ctx, |ctx| {
        let (content, deps) = match ctx.assemble_file(&path) {
            Ok(assembly) => {
                Reporter::new(settings.style, settings.quiet).report_all(&assembly.diagnostics);
                let deps = ctx.dependencies(Some(&path), &assembly.references);
                (assembly.content, deps)
            }
            Err(err) => {
                let message = format!("ctx: error: {path}: {err}");
                writeln!(io::stderr(), "{}", term::visible(&message))?;
                (String::new(), ctx.dependencies(Some(&path), &[]))
            }
        };
        let mut out = io::stdout().lock();
        match (&previous, tty) {
            (Some(old), true) => write_changes(&mut out, old, &content)?,
            _ => out.write_all(content.as_bytes())?,
        }
        out.flush()?;
        previous = Some(content);
        Ok(deps)
    })
}

/// `ctx check --watch FILE...`.
pub(crate) fn check(settings: &Settings, args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let files = watched(&args.files)?;
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    let paths: Vec<String> = files
        .iter()
        .map(|f| input::document_path(&settings.root, f))
        .collect::<anyhow::Result<_>>()?;
    let tty = io::stdout().is_terminal();
    let mut previous: Option<BTreeSet<String>> = None;
    // An agent's rule file gets its rule diagnostics too, as `ctx check` gives them.
    let home = ctx::home_of(std::env::home_dir().as_deref());
    run_forever(&ctx, |ctx| {
        let mut deps = Dependencies::default();
        let mut lines = Vec::new();
        let mut counts = Counts::default();
        // A file that cannot be read is a line of the output, so that its coming back shows
        // as that line gone; the summary counts it apart, as `ctx check` does.
        let mut unread = 0;
        for path in &paths {
            let assembly = match ctx.assemble_to(path, &mut io::sink()) {
                Ok(assembly) => assembly,
                Err(err) => {
                    lines.push(term::visible(&format!("{path}: error: {err}")).into_owned());
                    unread += 1;
                    deps.extend(ctx.dependencies(Some(path), &[]));
                    continue;
                }
            };
            let rules = ctx.rule_file_diagnostics(path, &home).unwrap_or_default();
            let rules: Vec<_> = rules.iter().map(crate::rules::record).collect();
            for d in assembly.diagnostics.iter().chain(&rules) {
                match d.severity {
                    ctx::Severity::Error => counts.errors += 1,
                    ctx::Severity::Warning => counts.warnings += 1,
                }
                lines.push(diag::plain(d));
            }
            deps.extend(ctx.dependencies(Some(path), &assembly.references));
        }
        let mut out = io::stdout().lock();
        let now: BTreeSet<String> = lines.iter().cloned().collect();
        match (&previous, tty) {
            (Some(old), true) => {
                for gone in old.difference(&now) {
                    writeln!(out, "- {gone}")?;
                }
                for new in lines.iter().filter(|l| !old.contains(*l)) {
                    writeln!(out, "+ {new}")?;
                }
            }
            _ => {
                for line in &lines {
                    writeln!(out, "{line}")?;
                }
            }
        }
        out.flush()?;
        // As for `ctx check`: the diagnostics on standard output, the summary on standard error.
        let mut summary = diag::colored_summary(counts, paths.len(), settings.style.color);
        if unread > 0 {
            summary.push_str(&format!(" ({unread} could not be read)"));
        }
        let _ = writeln!(io::stderr(), "{summary}");
        previous = Some(now);
        Ok(deps)
    })
}

/// The files of a watch: standard input cannot be watched.
fn watched(files: &[PathBuf]) -> anyhow::Result<&[PathBuf]> {
    if files.iter().any(|f| f.as_os_str() == "-") {
        bail!("--watch needs files, not standard input");
    }
    Ok(files)
}

/// Runs `once`, then again after every batch of changes that touches what it depended on,
/// until the watch ends (which it does not, short of an error or a signal).
fn run_forever(
    ctx: &Context,
    mut once: impl FnMut(&Context) -> anyhow::Result<Dependencies>,
) -> anyhow::Result<ExitCode> {
    let watcher = ctx.watch(DEBOUNCE)?;
    let own = own_output();
    let mut deps = once(ctx)?;
    while let Some(mut changed) = watcher.next(None) {
        // The run's own output and errors, redirected into a watched folder (`> out.md`),
        // are no change to run again for: that would run for ever.
        if !own.is_empty() {
            let path_of = |l: &ctx::fs::Location| ctx.sandbox().root_path(l.root()).join(l.path());
            changed.retain(|l| !own.iter().any(|o| path_of(l).as_std_path() == o.as_path()));
        }
        if !changed.is_empty() && deps.affected_by(&changed) {
            tracing::debug!(changed = changed.len(), "re-running");
            deps = once(ctx)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The paths of standard output and standard error where they are regular files (Linux,
/// through `/proc`); none elsewhere and for terminals and pipes.
#[allow(clippy::disallowed_methods)] // The process's own descriptors, not workspace content.
fn own_output() -> Vec<PathBuf> {
    if !cfg!(target_os = "linux") {
        return Vec::new();
    }
    ["/proc/self/fd/1", "/proc/self/fd/2"]
        .iter()
        .filter_map(|fd| std::fs::read_link(fd).ok())
        .filter(|path| path.is_file())
        .collect()
}

/// Writes the lines that differ between two outputs: the common first and last lines are
/// skipped, the rest shown as `-` old and `+` new after an `@@ -start,count +start,count @@`
/// line; nothing when the outputs are equal.
fn write_changes(out: &mut dyn Write, old: &str, new: &str) -> io::Result<()> {
    if old == new {
        return Ok(());
    }
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail =
        old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    let gone = &old[head..old.len() - tail];
    let came = &new[head..new.len() - tail];
    writeln!(out, "@@ -{},{} +{},{} @@", head + 1, gone.len(), head + 1, came.len())?;
    for line in gone {
        writeln!(out, "-{}", term::visible(line))?;
    }
    for line in came {
        writeln!(out, "+{}", term::visible(line))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(old: &str, new: &str) -> String {
        let mut out = Vec::new();
        write_changes(&mut out, old, new).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn only_what_changed() {
        assert_eq!(changes("a\nb\nc\n", "a\nb\nc\n"), "");
        assert_eq!(changes("a\nb\nc\n", "a\nB\nc\n"), "@@ -2,1 +2,1 @@\n-b\n+B\n");
        assert_eq!(changes("a\n", "a\nb\n"), "@@ -2,0 +2,1 @@\n+b\n");
        assert_eq!(changes("a\na\n", "a\n"), "@@ -2,1 +2,0 @@\n-a\n");
    }
}
