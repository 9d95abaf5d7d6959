//! `ctx rules`: what a coding agent loads from its rule files, in order, wrapped as it sends
//! them, and what it leaves out; `ctx rules lint`: the problems of the rule files as the
//! agents read them (docs/agents.md).

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::bail;
use ctx::agents::{Agent, Rules, lint};
use ctx::assemble::record::DiagnosticRecord;
use ctx::{Format, Mode};
use serde_json::json;

use crate::cli::{AgentRulesArgs, RulesAction, RulesArgs, RulesViewArgs};
use crate::diag::{self, Counts, Reporter};
use crate::settings::Settings;

pub(crate) fn run(settings: &Settings, args: &RulesArgs) -> anyhow::Result<ExitCode> {
    match &args.action {
        Some(RulesAction::Lint(view)) => run_lint(settings, view),
        None => run_view(settings, &args.view, args.text),
    }
}

/// The views asked for: one agent's, or every agent's whose files the workspace holds.
fn views(settings: &Settings, args: &RulesViewArgs) -> anyhow::Result<(Vec<Rules>, bool)> {
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    settings.report_notices(&ctx);
    let home = ctx::home_of(std::env::home_dir().as_deref());
    let cwd = args.cwd.as_deref().unwrap_or(".");
    let for_path = args.for_path.as_deref();
    if args.agent.eq_ignore_ascii_case("all") {
        return Ok((ctx.all_rules(cwd, for_path, &home)?, true));
    }
    let agent = agent_named(&args.agent, ", all")?;
    Ok((vec![ctx.rules_with(agent, cwd, for_path, &home)?], false))
}

/// The agent of a command-line name; an unknown one is a usage error that lists the names
/// (and `more`).
fn agent_named(name: &str, more: &str) -> anyhow::Result<Agent> {
    match Agent::from_name(name) {
        Some(agent) => Ok(agent),
        None => {
            let names: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
            bail!("no agent `{name}` (expected one of: {}{more})", names.join(", "))
        }
    }
}

/// The view of `--agent` of `ctx system-prompt` and `ctx messages`; none without it.
pub(crate) fn agent_view(
    ctx: &ctx::Context,
    args: &AgentRulesArgs,
) -> anyhow::Result<Option<Rules>> {
    let Some(name) = &args.agent else {
        return Ok(None);
    };
    let agent = agent_named(name, "")?;
    let home = ctx::home_of(std::env::home_dir().as_deref());
    let cwd = args.cwd.as_deref().unwrap_or(".");
    Ok(Some(ctx.rules_with(agent, cwd, args.for_path.as_deref(), &home)?))
}

/// What the JSON forms of `ctx system-prompt --agent` and `ctx messages --agent` say of the
/// view: the agent, its version, the working folder, the file worked on, and the files of
/// the pieces it sends, in order.
pub(crate) fn view_summary(rules: &Rules) -> serde_json::Value {
    let mut files: Vec<&str> = Vec::new();
    for piece in &rules.pieces {
        if !files.contains(&piece.path.as_str()) {
            files.push(&piece.path);
        }
    }
    json!({
        "agent": rules.agent,
        "version": rules.version,
        "cwd": rules.cwd,
        "for": rules.for_path,
        "files": files,
    })
}

/// `ctx rules [--agent NAME|all] [--for PATH] [--cwd DIR] [--format text|json] [--text]`.
fn run_view(
    settings: &Settings,
    args: &RulesViewArgs,
    text_only: bool,
) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("rules", false)?;
    let (views, all) = views(settings, args)?;
    let mut out = io::stdout().lock();
    let written = (|| -> anyhow::Result<()> {
        if json {
            let values: Vec<serde_json::Value> = views.iter().map(view_json).collect();
            let value = if all {
                json!({ "agents": values })
            } else {
                values.into_iter().next().unwrap_or_default()
            };
            writeln!(out, "{}", crate::term::json_pretty(&value)?)?;
        } else if all && views.is_empty() {
            writeln!(out, "no agent's rule files found")?;
        } else {
            for (i, rules) in views.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                if all {
                    writeln!(out, "=== {} ===", rules.agent)?;
                }
                let text =
                    if text_only { ctx::agents::text(rules) } else { ctx::agents::report(rules) };
                out.write_all(crate::term::visible(&text).as_bytes())?;
                if text_only && !text.ends_with('\n') {
                    writeln!(out)?;
                }
            }
        }
        out.flush()?;
        Ok(())
    })();
    crate::term::unless_closed(written)?;
    Ok(ExitCode::SUCCESS)
}

/// One view as JSON: the typed value, and the parts of the request it makes.
fn view_json(rules: &Rules) -> serde_json::Value {
    ctx::agents::to_json(rules)
}

/// `ctx rules lint [--agent NAME|all] [--for PATH] [--cwd DIR]`: exit 1 on errors.
fn run_lint(settings: &Settings, args: &RulesViewArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("rules lint", false)?;
    let (views, _) = views(settings, args)?;
    let mut diagnostics: Vec<lint::Diagnostic> =
        views.iter().flat_map(|r| r.diagnostics.iter().cloned()).collect();
    lint::sort_and_dedup(&mut diagnostics);
    let errors = diagnostics.iter().filter(|d| d.severity == ctx::Severity::Error).count();
    let counts = Counts { errors, warnings: diagnostics.len() - errors };
    let mut stdout = io::stdout().lock();
    let written = (|| -> anyhow::Result<()> {
        if json {
            let value = json!({ "diagnostics": diagnostics, "errors": counts.errors, "warnings": counts.warnings });
            writeln!(stdout, "{}", crate::term::json_pretty(&value)?)?;
        } else {
            let mut reporter = Reporter::new(settings.stdout_style, settings.quiet);
            for d in &diagnostics {
                reporter.report(&record(d), &mut stdout)?;
            }
            stdout.flush()?;
            let mut stderr = io::stderr().lock();
            let _ = reporter.finish(&mut stderr);
            let files = diagnostics
                .iter()
                .map(|d| d.file.as_str())
                .collect::<std::collections::HashSet<_>>()
                .len();
            let _ = writeln!(
                stderr,
                "{}",
                diag::colored_summary(reporter.counts, files, settings.style.color)
            );
        }
        stdout.flush()?;
        Ok(())
    })();
    crate::term::unless_closed(written)?;
    Ok(if counts.errors > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// A rule diagnostic as the command line prints diagnostics: the agent and the hint in the
/// message.
pub(crate) fn record(d: &lint::Diagnostic) -> DiagnosticRecord {
    let mut message = format!("{}: {}", d.agent, d.message);
    if let Some(hint) = &d.hint {
        message.push_str(&format!(" (hint: {hint})"));
    }
    DiagnosticRecord::new(d.code, message, d.file.clone(), d.line, d.column)
}
