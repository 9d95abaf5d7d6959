//! `ctx sources` and `ctx resolve`: the source index of an out-of-source build, and how paths
//! resolve through it.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

use ctx::sources::Detected;
use ctx::{Format, Mode, ResolveStatus};

use crate::cli::{ResolveArgs, SourcesArgs};
use crate::settings::{Settings, Sources};
use crate::term::{Visible, json_pretty, visible};

/// `ctx sources [--format text|json] [--prompt]`.
pub(crate) fn run(settings: &Settings, args: &SourcesArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("sources", false)?;
    let started = Instant::now();
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    let elapsed = started.elapsed();
    let Some(index) = ctx.source_index() else {
        let why = match (&settings.sources, ctx::sources::detect(ctx.sandbox())) {
            (Sources::Off, _) => "source indexing is off (--no-sources)".to_owned(),
            (_, Detected::Several(found)) => format!(
                "several solutions or databases: {}; name one with --sln or --compile-commands",
                found.join(", ")
            ),
            // Read again as if named, for the reason with its code and place.
            (_, Detected::One(found)) => {
                let named = settings
                    .builder_for(Mode::Inline, Format::Inline, None)
                    .workspace_solution(&found)
                    .build();
                match named {
                    Err(err) => format!("{found} could not be read: {err}"),
                    Ok(_) => format!("{found} could not be read"),
                }
            }
            (_, Detected::Both(solution, database)) => {
                format!("{solution} and {database} could not be read")
            }
            _ => "no *.sln, *.slnx or compile_commands.json in the root or build/; name one \
                  with --sln or --compile-commands"
                .to_owned(),
        };
        anyhow::bail!("no source index: {why}");
    };
    let mut out = io::stdout().lock();
    if args.prompt {
        out.write_all(visible(&index.prompt_section()).as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let summary = index.summary();
    if json {
        let mut value = serde_json::to_value(&summary)?;
        value["elapsed_ms"] = (elapsed.as_secs_f64() * 1000.0).into();
        writeln!(out, "{}", json_pretty(&value)?)?;
    } else {
        // Paths, project names and warnings come from project files: every line is printed
        // with what they hide made visible.
        let mut out = Visible(&mut out);
        // Refused files are listed, never read: they count apart from those on disk.
        let existing = summary.files - summary.missing.len() - summary.refused.len();
        writeln!(out, "solution: {}", summary.solution)?;
        for also in summary.also_read {
            writeln!(out, "also read: {also}")?;
        }
        let refused = match summary.refused.len() {
            0 => String::new(),
            n => format!(", {n} refused"),
        };
        writeln!(
            out,
            "{} projects, {} files ({existing} on disk, {} missing, {} case-corrected{refused})",
            summary.projects.len(),
            summary.files,
            summary.missing.len(),
            summary.corrected.len()
        )?;
        for root in summary.source_roots {
            writeln!(out, "source root: {root}")?;
        }
        for m in &summary.missing {
            writeln!(out, "missing: {} ({}, line {})", m.path, m.project, m.line)?;
        }
        for c in &summary.corrected {
            writeln!(out, "corrected: {} -> {}", c.written, c.path)?;
        }
        for path in &summary.refused {
            writeln!(out, "refused: {path}")?;
        }
        for w in &summary.warnings {
            match (w.file.is_empty(), w.line) {
                (true, _) => writeln!(out, "warning[{}]: {}", w.code, w.message)?,
                (false, 0) => writeln!(out, "{}: warning[{}]: {}", w.file, w.code, w.message)?,
                (false, line) => {
                    writeln!(out, "{}:{line}: warning[{}]: {}", w.file, w.code, w.message)?
                }
            }
        }
        let how = if summary.cached { "from the cache" } else { "built" };
        writeln!(out, "{how} in {:.1} ms", elapsed.as_secs_f64() * 1000.0)?;
    }
    out.flush()?;
    // The process ends with this command: the context and its index (a path per file) are
    // left to the exit rather than freed one allocation at a time.
    drop(summary);
    std::mem::forget(ctx);
    Ok(ExitCode::SUCCESS)
}

/// `ctx resolve QUERY... [--format text|json]`: exit 1 when a query is not one file.
pub(crate) fn resolve(settings: &Settings, args: &ResolveArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("resolve", false)?;
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    let reports: Vec<_> = args.queries.iter().map(|q| ctx.resolve(q)).collect();
    let all_files = reports.iter().all(|r| r.status == ResolveStatus::File);
    crate::term::status_if_closed(!all_files);
    let mut out = io::stdout().lock();
    if json {
        writeln!(out, "{}", json_pretty(&reports)?)?;
    } else {
        let mut out = Visible(&mut out);
        for r in &reports {
            match (r.status, &r.path) {
                (ResolveStatus::File, Some(path)) => {
                    writeln!(out, "{}: {path} (via {})", r.query, r.via.unwrap_or("workspace"))?;
                }
                _ => {
                    let code = r.code.map(|c| c.as_str()).unwrap_or_default();
                    writeln!(out, "{}: {} [{code}]", r.query, r.status.name())?;
                    for (i, candidate) in r.candidates.iter().enumerate() {
                        writeln!(out, "  {}) {candidate}", i + 1)?;
                    }
                }
            }
        }
    }
    out.flush()?;
    Ok(if all_files { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
