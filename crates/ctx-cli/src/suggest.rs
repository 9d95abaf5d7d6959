//! `ctx suggest PROMPT` (ranked files and line ranges, text or JSON, `--explain`, the
//! `--interactive` picker) and `ctx expand --auto` (the top suggestions attached after the
//! prompt's own mentions). Each builds one context; the assembler writes the suggested files
//! as attachments of their own (docs/assembly.md, "Attachments").

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Context as _;
use ctx::assemble::record::{Lines, ReferenceRecord};
use ctx::{Attachment, Attachments, Format, Mode, SuggestOptions, Suggestion};

use crate::cli::SuggestArgs;
use crate::diag::finish;
use crate::input;
use crate::picker;
use crate::progress::Progress;
use crate::settings::Settings;
use crate::term::{json_pretty, visible};

/// The context of a ranking command, its index stored in the cache folder; or, when that
/// folder cannot hold it (none, read-only, full, not a directory), the same context keeping
/// its index in memory, after a warning. `ctx index`, whose work is the stored index, fails
/// instead.
fn ranking_context(
    settings: &Settings,
    mode: Mode,
    format: Format,
) -> anyhow::Result<ctx::Context> {
    let ctx = settings.ranking_context(mode, format)?;
    let stored = settings.cache_dir().and_then(|dir| {
        ctx.with_index_store(dir)
            .with_context(|| format!("cannot open the cache {}", dir.display()))
    });
    match stored {
        Ok(stored) => Ok(stored),
        Err(err) => {
            warn_unstored(settings, &format!("{err:#}"));
            Ok(ctx)
        }
    }
}

fn warn_unstored(settings: &Settings, why: &str) {
    if !settings.quiet {
        let why = visible(&why.replace(['\n', '\r'], " ")).into_owned();
        let mut err = io::stderr().lock();
        let _ = writeln!(
            err,
            "warning: the suggestion index is not stored ({why}); ranking without it"
        );
    }
}

/// Ranks with `ctx`; when its index cannot be stored, warns and ranks with the index kept in
/// memory only, on the same context.
fn rank(
    settings: &Settings,
    ctx: &ctx::Context,
    prompt: &str,
    opts: &SuggestOptions,
) -> anyhow::Result<Vec<Suggestion>> {
    // The workspace's index service answers when it runs and vouches for its index.
    #[cfg(unix)]
    if let Some(found) = crate::service::ask::suggest(settings, ctx, prompt, opts) {
        return Ok(found);
    }
    match ctx.suggest(prompt, opts) {
        Err(err)
            if matches!(err.kind(), ctx::ErrorKind::Suggest(e)
                if e.kind() == ctx::suggest::ErrorKind::Store) =>
        {
            warn_unstored(settings, &err.to_string());
            Ok(ctx.without_index_store().suggest(prompt, opts)?)
        }
        found => Ok(found?),
    }
}

/// [`ctx::Context::fit_prompt`] with `ctx` within `max_tokens` of its tokenizer (the plan is
/// made in o200k tokens; its tokens are given back in the tokenizer's); when its index cannot
/// be stored, warns and plans with the index kept in memory only.
fn fit(
    settings: &Settings,
    ctx: &ctx::Context,
    prompt: &str,
    max_tokens: usize,
) -> anyhow::Result<ctx::FitPlan> {
    let tokenizer = ctx.assembler().options().tokenizer;
    let mut plan = fit_o200k(settings, ctx, prompt, tokenizer.o200k_within(max_tokens))?;
    for choice in &mut plan.choices {
        choice.tokens = tokenizer.scale(choice.tokens);
    }
    plan.tokens = tokenizer.scale(plan.tokens);
    plan.own_tokens = tokenizer.scale(plan.own_tokens);
    Ok(plan)
}

fn fit_o200k(
    settings: &Settings,
    ctx: &ctx::Context,
    prompt: &str,
    max_tokens: usize,
) -> anyhow::Result<ctx::FitPlan> {
    let opts = SuggestOptions::default().limit(ctx::FIT_CANDIDATES);
    match ctx.fit_prompt(prompt, max_tokens, &opts) {
        Err(err)
            if matches!(err.kind(), ctx::ErrorKind::Suggest(e)
                if e.kind() == ctx::suggest::ErrorKind::Store) =>
        {
            warn_unstored(settings, &err.to_string());
            Ok(ctx.without_index_store().fit_prompt(prompt, max_tokens, &opts)?)
        }
        found => Ok(found?),
    }
}

/// `path  whole, N tokens  summary` or `path:10-40,80-95  N tokens  summary`, one a line;
/// tokens other than o200k's are named (`N tokens (anthropic-estimate)`).
fn render_plan(plan: &ctx::FitPlan, tokenizer: ctx::tokens::Tokenizer) -> String {
    let unit = match tokenizer {
        ctx::tokens::Tokenizer::O200k => "tokens".to_owned(),
        other => format!("tokens ({})", other.name()),
    };
    let mut text = String::new();
    for c in &plan.choices {
        let head = match &c.view {
            ctx::suggest::fit::View::Whole => format!("{}  whole, {} {unit}", c.path, c.tokens),
            ctx::suggest::fit::View::Ranges(ranges) => {
                let lines: Vec<String> =
                    ranges.iter().map(|r| format!("{}-{}", r.start, r.end)).collect();
                format!("{}:{}  {} {unit}", c.path, lines.join(","), c.tokens)
            }
            ctx::suggest::fit::View::Outline(ranges) => {
                let lines: Vec<String> =
                    ranges.iter().map(|r| format!("{}-{}", r.start, r.end)).collect();
                let lines =
                    if lines.is_empty() { String::new() } else { format!(":{}", lines.join(",")) };
                format!("{}{lines}  outline, {} {unit}", c.path, c.tokens)
            }
        };
        if c.summary.is_empty() {
            text.push_str(&format!("{head}\n"));
        } else {
            text.push_str(&format!("{head}  {}\n", c.summary));
        }
    }
    text
}

/// `ctx suggest`.
pub(crate) fn run(settings: &Settings, args: &SuggestArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("suggest", false)?;
    // The picker ends with the expansion of what it kept, shaped as `ctx expand`'s: known
    // (and refused when this build has no picker) before anything is ranked.
    let (mode, format) = if args.interactive {
        picker::available()?;
        (settings.mode.unwrap_or(Mode::Append), settings.assembly_format("expand", Format::Xml)?)
    } else {
        (Mode::Append, Format::Xml)
    };
    let prompt = input::prompt(args.prompt.as_ref(), settings.input_cap())?;
    let ctx = ranking_context(settings, mode, format)?;
    if let Some(max) = settings.max_tokens_arg.filter(|n| *n > 0)
        && !args.interactive
    {
        // With a budget, the fitted set: what `ctx expand --auto --max-tokens` attaches.
        let plan = fit(settings, &ctx, &prompt, max)?;
        let mut out = io::stdout().lock();
        if json {
            writeln!(out, "{}", json_pretty(&plan.choices)?)?;
        } else {
            let tokenizer = ctx.assembler().options().tokenizer;
            out.write_all(visible(&render_plan(&plan, tokenizer)).as_bytes())?;
        }
        out.flush()?;
        std::mem::forget(ctx);
        return Ok(ExitCode::SUCCESS);
    }
    // As for every limit, 0 is none.
    let limit = if args.limit == 0 { usize::MAX } else { args.limit };
    let opts = SuggestOptions::default()
        .limit(limit)
        .max_lines(args.range_lines)
        .max_tokens(settings.max_tokens_arg.filter(|n| *n > 0))
        // The JSON form always carries the reasons (`why`); the text form shows them with
        // --explain.
        .explain(args.explain || json);
    let show = settings.style.stderr_tty && !settings.quiet && !args.interactive;
    let progress = Progress::start(show, settings.style.color, "ranking the workspace".to_owned());
    let found = rank(settings, &ctx, &prompt, &opts)?;
    drop(progress);
    if args.interactive {
        let picked = picker::pick(found, settings.style.color)?;
        let attachments: Vec<Attachment> = picked.iter().flat_map(attachments).collect();
        return expand_with(settings, &ctx, &prompt, Attachments::List(&attachments));
    }
    let mut out = io::stdout().lock();
    if json {
        // Serialised first, so that a closed pipe is an I/O error (success), not a JSON one.
        let text = json_pretty(&found)?;
        writeln!(out, "{text}")?;
    } else {
        out.write_all(visible(&render_text(&found, args.explain)).as_bytes())?;
    }
    out.flush()?;
    // The process ends here: freeing the index (hundreds of thousands of small allocations)
    // would only delay the exit.
    std::mem::forget(ctx);
    Ok(ExitCode::SUCCESS)
}

/// `path:start-end  summary`, one a line; with explanations, each reason indented below.
fn render_text(found: &[Suggestion], explain: bool) -> String {
    let mut text = String::new();
    for s in found {
        let ranges: Vec<String> = if s.ranges.is_empty() {
            vec![format!("{}-{}", s.lines.start, s.lines.end)]
        } else {
            s.ranges.iter().map(|r| format!("{}-{}", r.start, r.end)).collect()
        };
        let head = format!("{}:{}", s.path, ranges.join(","));
        if s.summary.is_empty() {
            text.push_str(&head);
        } else {
            text.push_str(&format!("{head}  {}", s.summary));
        }
        text.push('\n');
        if explain {
            text.push_str(&format!("    score {}\n", s.score));
            for why in &s.why {
                text.push_str(&format!("    {why}\n"));
            }
        }
    }
    text
}

/// A suggestion as an attachment: its file and best line range.
fn attachment(s: &Suggestion) -> Attachment {
    Attachment::suggested(s.path.clone(), Some(Lines { start: s.lines.start, end: s.lines.end }))
}

/// A suggestion as attachments: one per range, in line order.
fn attachments(s: &Suggestion) -> Vec<Attachment> {
    if s.ranges.is_empty() {
        return vec![attachment(s)];
    }
    s.ranges
        .iter()
        .map(|r| Attachment::suggested(s.path.clone(), Some(Lines { start: r.start, end: r.end })))
        .collect()
}

/// `ctx expand --auto`: the prompt expanded as usual, then the top suggestions for files the
/// prompt does not mention, as line-range attachments marked as suggested. They are ranked
/// once the prompt's own references are known, in the same walk.
pub(crate) fn expand_auto(
    settings: &Settings,
    text: &str,
    (mode, format): (Mode, Format),
) -> anyhow::Result<ExitCode> {
    let ctx = ranking_context(settings, mode, format)?;
    if let Some(max) = settings.max_tokens_arg.filter(|n| *n > 0) {
        // With a budget, the budget is the limit, not a file count.
        let plan = fit(settings, &ctx, text, max).context("cannot rank the workspace")?;
        return expand_with(settings, &ctx, text, Attachments::List(&plan.attachments));
    }
    let auto = settings.autocontext;
    let mut failed = None;
    let mut choose = |own: &[ReferenceRecord]| {
        let mentioned: Vec<&str> = own.iter().map(|r| r.path.as_str()).collect();
        let opts = SuggestOptions::default()
            .limit(auto.max_files + mentioned.len())
            .max_tokens(Some(auto.max_tokens));
        match rank(settings, &ctx, text, &opts) {
            Ok(mut found) => {
                found.retain(|s| !mentioned.contains(&s.path.as_str()));
                found.truncate(auto.max_files);
                found.iter().flat_map(attachments).collect()
            }
            Err(err) => {
                failed = Some(err);
                Vec::new()
            }
        }
    };
    let code = expand_with(settings, &ctx, text, Attachments::Chosen(&mut choose))?;
    match failed {
        Some(err) => Err(err.context("cannot rank the workspace")),
        None => Ok(code),
    }
}

/// The prompt expanded with the given attachments, written as it is produced.
fn expand_with(
    settings: &Settings,
    ctx: &ctx::Context,
    prompt: &str,
    attachments: Attachments<'_>,
) -> anyhow::Result<ExitCode> {
    let mut out = BufWriter::new(io::stdout().lock());
    let assembly = ctx.expand_prompt_with_to(prompt, attachments, &mut out)?;
    let flushed = out.flush();
    settings.keep_counts(ctx);
    crate::term::unless_closed(flushed.map_err(Into::into))?;
    finish(settings, &assembly)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggestion(path: &str, start: u32, end: u32) -> Suggestion {
        let json = serde_json::json!({"path": path, "lines": {"start": start, "end": end}, "score": 1.0, "summary": "fn a", "why": ["terms: a"]});
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn text_output() {
        let found = [suggestion("src/a.rs", 1, 5)];
        assert_eq!(render_text(&found, false), "src/a.rs:1-5  fn a\n");
        assert_eq!(render_text(&found, true), "src/a.rs:1-5  fn a\n    score 1\n    terms: a\n");
    }

    #[test]
    fn a_suggestion_attaches_its_range() {
        let a = attachment(&suggestion("my dir/b.md", 2, 3));
        assert_eq!(a, Attachment::suggested("my dir/b.md", Some(Lines { start: 2, end: 3 })));
        assert_eq!(a.mention(), "@\"my dir/b.md\"#L2-3");
    }
}
