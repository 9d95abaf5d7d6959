//! `ctx sources` and `ctx resolve`: the source index of an out-of-source build, and how paths
//! resolve through it.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use ctx::sources::{Detected, FileState};
use ctx::{Format, Mode, ResolveStatus};

use crate::settings::{Settings, Sources};

#[derive(Debug, Args)]
pub(crate) struct SourcesArgs {
    /// Print the "Source roots" section for a system prompt instead.
    #[arg(long)]
    pub(crate) prompt: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ResolveArgs {
    /// The paths or file names to resolve.
    #[arg(required = true, value_name = "QUERY")]
    pub(crate) queries: Vec<String>,
}

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
            (_, Detected::One(found)) => format!("{found} could not be read"),
            _ => "no *.sln, *.slnx or compile_commands.json in the root or build/; name one \
                  with --sln or --compile-commands"
                .to_owned(),
        };
        anyhow::bail!("no source index: {why}");
    };
    let mut out = io::stdout().lock();
    if args.prompt {
        out.write_all(index.prompt_section().as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let missing: Vec<_> =
        index.files().iter().filter(|f| matches!(f.state, FileState::Missing)).collect();
    let corrected: Vec<_> = index
        .files()
        .iter()
        .filter_map(|f| match &f.state {
            FileState::Corrected { written } => Some((written.as_str(), f.path.as_str())),
            _ => None,
        })
        .collect();
    let refused = index.files().iter().filter(|f| matches!(f.state, FileState::Refused { .. }));
    let project_name = |i: usize| index.projects().get(i).map_or("", |p| p.name.as_str());
    if json {
        let value = serde_json::json!({
            "solution": index.solution(),
            "projects": index.projects().iter().map(|p| serde_json::json!({
                "name": p.name, "path": p.path, "files": p.files,
            })).collect::<Vec<_>>(),
            "files": index.files().len(),
            "missing": missing.iter().map(|f| serde_json::json!({
                "path": f.path, "project": project_name(f.project), "line": f.line,
            })).collect::<Vec<_>>(),
            "corrected": corrected.iter().map(|(written, path)| serde_json::json!({
                "written": written, "path": path,
            })).collect::<Vec<_>>(),
            "refused": refused.map(|f| f.path.as_str()).collect::<Vec<_>>(),
            "source_roots": index.source_roots(),
            "warnings": index.warnings(),
            "elapsed_ms": elapsed.as_secs_f64() * 1000.0,
            "cached": index.cached(),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        let existing = index.files().len() - missing.len();
        writeln!(out, "solution: {}", index.solution())?;
        writeln!(
            out,
            "{} projects, {} files ({existing} on disk, {} missing, {} case-corrected)",
            index.projects().len(),
            index.files().len(),
            missing.len(),
            corrected.len()
        )?;
        for root in index.source_roots() {
            writeln!(out, "source root: {root}")?;
        }
        for f in &missing {
            writeln!(out, "missing: {} ({}, line {})", f.path, project_name(f.project), f.line)?;
        }
        for (written, path) in &corrected {
            writeln!(out, "corrected: {written} -> {path}")?;
        }
        for warning in index.warnings() {
            writeln!(out, "warning: {warning}")?;
        }
        let how = if index.cached() { "from the cache" } else { "built" };
        writeln!(out, "{how} in {:.1} ms", elapsed.as_secs_f64() * 1000.0)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `ctx resolve QUERY... [--format text|json]`: exit 1 when a query is not one file.
pub(crate) fn resolve(settings: &Settings, args: &ResolveArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("resolve", false)?;
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    let reports: Vec<_> = args.queries.iter().map(|q| ctx.resolve(q)).collect();
    let mut out = io::stdout().lock();
    if json {
        let values: Vec<serde_json::Value> = reports
            .iter()
            .map(|r| {
                serde_json::json!({
                    "query": r.query,
                    "status": r.status.name(),
                    "path": r.path,
                    "via": r.via,
                    "candidates": r.candidates,
                    "code": r.code.map(|c| c.as_str()),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&values)?)?;
    } else {
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
    let all_files = reports.iter().all(|r| r.status == ResolveStatus::File);
    Ok(if all_files { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
