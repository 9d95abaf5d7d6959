//! `ctx suggest PROMPT` (ranked files and line ranges, text or JSON, `--explain`, the
//! `--interactive` picker) and `ctx expand --auto` (the top suggestions appended after the
//! prompt's own mentions).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use ctx::{Assembly, Format, Mode, SuggestOptions, Suggestion};

use crate::config::Config;
use crate::input;
use crate::settings::Settings;
use crate::term::{json_pretty, visible};

#[derive(Debug, Args)]
pub(crate) struct SuggestArgs {
    /// The prompt; without it, standard input is read.
    pub(crate) prompt: Option<String>,
    /// Most files suggested.
    #[arg(long, default_value_t = 10)]
    pub(crate) limit: usize,
    /// Longest line range proposed for one file.
    #[arg(long, value_name = "N", default_value_t = 80)]
    pub(crate) range_lines: u32,
    /// Say which terms, identifiers, paths and links made each score.
    #[arg(long)]
    pub(crate) explain: bool,
    /// Confirm, drop or edit the suggestions in a terminal picker, then print the prompt
    /// expanded with them (as `ctx expand`).
    #[arg(long, visible_alias = "pick")]
    pub(crate) interactive: bool,
    /// Where the index takes the files' symbols from (`scan` or `tree-sitter`), as in
    /// `ctx index`.
    #[arg(long, value_enum, value_name = "SOURCE")]
    pub(crate) symbols: Option<crate::cli::Symbols>,
}

/// What `ctx expand` appends from suggestions: configuration keys `autocontext`,
/// `autocontext_max_files` and `autocontext_max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AutoContext {
    /// Append suggestions even without `--auto`.
    pub(crate) enabled: bool,
    /// Most files appended.
    pub(crate) max_files: usize,
    /// Estimated tokens of everything appended.
    pub(crate) max_tokens: usize,
}

impl AutoContext {
    pub(crate) fn from_config(config: &Config) -> AutoContext {
        AutoContext {
            enabled: config.autocontext.unwrap_or(false),
            max_files: config.autocontext_max_files.unwrap_or(5),
            max_tokens: config.autocontext_max_tokens.unwrap_or(2000),
        }
    }
}

/// The directory the index is stored in: `CTX_CACHE_DIR`, else the user's cache directory
/// followed by `ctx`.
pub(crate) fn cache_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CTX_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::cache_dir()
        .map(|d| d.join("ctx"))
        .context("no cache directory for the suggestion index (set CTX_CACHE_DIR)")
}

/// A context whose suggestion index lives in [`cache_dir`].
pub(crate) fn context_with_cache(
    settings: &Settings,
    mode: Mode,
    format: Format,
) -> anyhow::Result<ctx::Context> {
    let dir = cache_dir()?;
    ranking_builder(settings, mode, format).cache_dir(&dir).build().map_err(|err| {
        match err.kind() {
            ctx::ErrorKind::Fs(_) => {
                anyhow::Error::new(err).context("cannot open a root or the cache")
            }
            _ => anyhow::Error::new(err),
        }
    })
}

/// A context for ranking (`ctx suggest`, `ctx expand --auto`): with the stored index, or,
/// when the cache directory cannot hold it (read-only, full, not a directory), without it,
/// after a warning. `ctx index`, whose work is the stored index, fails instead.
fn ranking_context(
    settings: &Settings,
    mode: Mode,
    format: Format,
) -> anyhow::Result<ctx::Context> {
    match context_with_cache(settings, mode, format) {
        Ok(ctx) => Ok(ctx),
        Err(err) => {
            let Ok(unstored) = ranking_builder(settings, mode, format).build() else {
                return Err(err);
            };
            warn_unstored(settings, &format!("{err:#}"));
            Ok(unstored)
        }
    }
}

/// The builder of a context for ranking, before its cache directory. No content cache: an
/// index build reads every file once, and the cache would only hold on to them (its byte cap
/// is enforced lazily, so a bulk read overshoots it by far). The index covers the whole
/// workspace: the walk has no entry limit.
fn ranking_builder(settings: &Settings, mode: Mode, format: Format) -> ctx::ContextBuilder {
    let options = ctx::Options { mode, format, ..settings.options.clone() };
    settings.builder(options).cache_capacity(0).max_walk_entries(usize::MAX)
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

/// Ranks with `ctx`; when its index cannot be stored, warns and ranks with an index kept in
/// memory only.
fn suggest_stored_or_not(
    settings: &Settings,
    ctx: &ctx::Context,
    (mode, format): (Mode, Format),
    prompt: &str,
    opts: &SuggestOptions,
) -> anyhow::Result<Vec<Suggestion>> {
    match ctx.suggest(prompt, opts) {
        Err(err)
            if matches!(err.kind(), ctx::ErrorKind::Suggest(e)
                if e.kind() == ctx::suggest::ErrorKind::Store) =>
        {
            warn_unstored(settings, &err.to_string());
            let unstored = ranking_builder(settings, mode, format).build()?;
            Ok(unstored.suggest(prompt, opts)?)
        }
        found => Ok(found?),
    }
}

/// `ctx suggest`.
pub(crate) fn run(settings: &Settings, args: &SuggestArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("suggest", false)?;
    let prompt = match &args.prompt {
        Some(text) => {
            input::check_size(text, settings.input_cap(), "the prompt")?;
            text.clone()
        }
        None => input::read_stdin(settings.input_cap())?,
    };
    let ctx = ranking_context(settings, Mode::Append, Format::Xml)?;
    let opts = SuggestOptions::default()
        .limit(args.limit)
        .max_lines(args.range_lines)
        .max_tokens(settings.max_tokens_arg.filter(|n| *n > 0))
        // The JSON form always carries the reasons (`why`); the text form shows them with
        // --explain.
        .explain(args.explain || json);
    let show = settings.style.stderr_tty && !settings.quiet && !args.interactive;
    let progress = crate::progress::Progress::start(
        show,
        settings.style.color,
        "ranking the workspace".to_owned(),
    );
    let found = suggest_stored_or_not(settings, &ctx, (Mode::Append, Format::Xml), &prompt, &opts)?;
    drop(progress);
    if args.interactive {
        let picked = picker::pick(found, settings.style.color)?;
        return expand_with(settings, &ctx, &prompt, &picked);
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
        let head = format!("{}:{}-{}", s.path, s.lines.start, s.lines.end);
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

/// `ctx expand --auto`: the prompt expanded as usual, then the top suggestions for files the
/// prompt does not mention, as line-range attachments marked as suggested.
pub(crate) fn expand_auto(
    settings: &Settings,
    text: &str,
    mode: Mode,
    format: Format,
) -> anyhow::Result<ExitCode> {
    let ctx = ranking_context(settings, mode, format)?;
    let auto = settings.autocontext;
    let own = ctx.expand_prompt(text);
    let mentioned: Vec<&str> = own.references.iter().map(|r| r.path.as_str()).collect();
    let opts = SuggestOptions::default()
        .limit(auto.max_files + mentioned.len())
        .max_tokens(Some(auto.max_tokens));
    let mut found = suggest_stored_or_not(settings, &ctx, (mode, format), text, &opts)?;
    found.retain(|s| !mentioned.contains(&s.path.as_str()));
    found.truncate(auto.max_files);
    write_expanded(settings, &ctx, own, &found)
}

/// The prompt expanded with exactly the given suggestions (the picker's choice).
fn expand_with(
    settings: &Settings,
    ctx: &ctx::Context,
    prompt: &str,
    picked: &[Suggestion],
) -> anyhow::Result<ExitCode> {
    let format = settings.assembly_format("expand", Format::Xml)?;
    let mode = settings.mode.unwrap_or(Mode::Append);
    let ctx = context_with_cache(settings, mode, format).unwrap_or_else(|_| ctx.clone());
    let own = ctx.expand_prompt(prompt);
    write_expanded(settings, &ctx, own, picked)
}

fn write_expanded(
    settings: &Settings,
    ctx: &ctx::Context,
    own: Assembly,
    extra: &[Suggestion],
) -> anyhow::Result<ExitCode> {
    let format = ctx.assembler().options().format;
    let synthetic = mentions_of(extra);
    let added = if extra.is_empty() { None } else { Some(ctx.expand_prompt(&synthetic)) };
    let rendered = splice(format, &own, added.as_ref(), &synthetic);
    let mut out = io::stdout().lock();
    out.write_all(rendered.as_bytes())?;
    out.flush()?;
    let code = crate::assemble::finish(settings, &own)?;
    match &added {
        Some(added) => {
            let more = crate::assemble::finish(settings, added)?;
            Ok(if more == ExitCode::SUCCESS { code } else { more })
        }
        None => Ok(code),
    }
}

/// One `@path#Lstart-end` mention per suggestion, a line each; paths with spaces or quotes
/// are quoted.
pub(crate) fn mentions_of(found: &[Suggestion]) -> String {
    found
        .iter()
        .map(|s| {
            let range = format!("#L{}-{}", s.lines.start, s.lines.end);
            let plain = !s.path.is_empty()
                && !s.path.chars().any(|c| c.is_whitespace() || matches!(c, '"' | '\\' | '#'));
            if plain {
                format!("@{}{range}", s.path)
            } else {
                let escaped = s.path.replace('\\', "\\\\").replace('"', "\\\"");
                format!("@\"{escaped}\"{range}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The prompt's own expansion followed by the attachments of the synthetic mention list
/// (its text cut off), headed as suggestions; in JSON, the added references carry
/// `"suggested": true`.
pub(crate) fn splice(
    format: Format,
    own: &Assembly,
    added: Option<&Assembly>,
    synthetic: &str,
) -> String {
    let Some(added) = added else {
        return render(format, own);
    };
    let mut tail = added.content.strip_prefix(synthetic).unwrap_or(&added.content);
    if own.content.ends_with('\n') {
        tail = tail.strip_prefix('\n').unwrap_or(tail);
    }
    let content = format!("{}{}", own.content, headed(format, tail));
    if format != Format::Json {
        return content;
    }
    let mut merged = own.clone();
    merged.content = content;
    merged.diagnostics.extend(added.diagnostics.iter().cloned());
    merged.stats.files += added.stats.files;
    merged.stats.bytes += added.stats.bytes;
    merged.stats.tokens = match (own.stats.tokens, added.stats.tokens) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
    merged.stats.elapsed_ms += added.stats.elapsed_ms;
    let references: Vec<Marked<'_>> = own
        .references
        .iter()
        .map(|record| Marked { record, suggested: false })
        .chain(added.references.iter().map(|record| Marked { record, suggested: true }))
        .collect();
    let out = AutoOutput {
        content: &merged.content,
        description: &merged.description,
        params: &merged.params,
        metadata: &merged.metadata,
        references,
        diagnostics: &merged.diagnostics,
        stats: &merged.stats,
    };
    let mut text = serde_json::to_string_pretty(&out).unwrap_or_default();
    text.push('\n');
    text
}

/// The JSON of `ctx expand --auto`: the documented assembly object, field for field, with
/// `"suggested": true` on the references that suggestions added.
#[derive(serde::Serialize)]
struct AutoOutput<'a> {
    content: &'a str,
    description: &'a str,
    params: &'a [String],
    metadata: &'a serde_json::Map<String, serde_json::Value>,
    references: Vec<Marked<'a>>,
    diagnostics: &'a [ctx::assemble::record::DiagnosticRecord],
    stats: &'a ctx::assemble::record::Stats,
}

#[derive(serde::Serialize)]
struct Marked<'a> {
    #[serde(flatten)]
    record: &'a ctx::assemble::record::ReferenceRecord,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    suggested: bool,
}

fn render(format: Format, assembly: &Assembly) -> String {
    match format {
        Format::Json => assembly.to_json(),
        _ => assembly.content.clone(),
    }
}

/// Renames the attachment heading so suggested files are not taken for mentions.
fn headed(format: Format, tail: &str) -> String {
    match format {
        Format::Xml | Format::Json => tail.replacen(
            "The following files were mentioned with @ syntax:",
            "The following files were suggested for this prompt by ctx suggest:",
            1,
        ),
        Format::Markdown => tail.replacen(
            "### User Provided Context References:",
            "### Suggested Context References:",
            1,
        ),
        _ => tail.to_owned(),
    }
}

/// The terminal picker: confirm or drop each suggestion, then edit the ranges kept.
mod picker {
    use ctx::Suggestion;

    /// Applies an edited range (`12-40`, `12`) to a suggestion; an empty answer keeps it.
    pub(super) fn apply_range(s: &mut Suggestion, answer: &str) -> Result<(), String> {
        let answer = answer.trim().trim_start_matches(['L', '#']);
        if answer.is_empty() {
            return Ok(());
        }
        let (a, b) = answer.split_once('-').unwrap_or((answer, answer));
        let parse = |x: &str| {
            x.trim()
                .trim_start_matches('L')
                .parse::<u32>()
                .map_err(|_| format!("not a line number: {x:?}"))
        };
        let (start, end) = (parse(a)?, parse(b)?);
        if start == 0 || end < start {
            return Err(format!("not a line range: {answer:?} (expected START-END, 1-based)"));
        }
        s.lines.start = start;
        s.lines.end = end;
        Ok(())
    }

    /// One label per suggestion, as the picker lists them, made visible.
    pub(super) fn label(s: &Suggestion) -> String {
        let head = format!("{}:{}-{}", s.path, s.lines.start, s.lines.end);
        let label = if s.summary.is_empty() { head } else { format!("{head}  {}", s.summary) };
        crate::term::visible(&label).into_owned()
    }

    #[cfg(feature = "picker")]
    pub(super) fn pick(found: Vec<Suggestion>, color: bool) -> anyhow::Result<Vec<Suggestion>> {
        use inquire::ui::RenderConfig;
        use inquire::{Confirm, MultiSelect, Text};
        if found.is_empty() {
            return Ok(found);
        }
        // The settings' colour rule (NO_COLOR set and not empty, --color), not inquire's own.
        let config = if color { RenderConfig::default_colored() } else { RenderConfig::empty() };
        inquire::set_global_render_config(config);
        let labels: Vec<String> = found.iter().map(label).collect();
        let all: Vec<usize> = (0..labels.len()).collect();
        let chosen =
            MultiSelect::new("Attach which suggestions? (space toggles, enter confirms)", labels)
                .with_default(&all)
                .raw_prompt()?;
        let mut picked: Vec<Suggestion> = chosen.iter().map(|o| found[o.index].clone()).collect();
        if !picked.is_empty() && Confirm::new("Edit line ranges?").with_default(false).prompt()? {
            for s in &mut picked {
                let current = format!("{}-{}", s.lines.start, s.lines.end);
                loop {
                    let answer = Text::new(&format!("Lines of {}", crate::term::visible(&s.path)))
                        .with_default(&current)
                        .prompt()?;
                    match apply_range(s, &answer) {
                        Ok(()) => break,
                        Err(why) => eprintln_safe(&why),
                    }
                }
            }
        }
        Ok(picked)
    }

    #[cfg(feature = "picker")]
    fn eprintln_safe(message: &str) {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "ctx: {}", crate::term::visible(message));
    }

    #[cfg(not(feature = "picker"))]
    pub(super) fn pick(_: Vec<Suggestion>, _: bool) -> anyhow::Result<Vec<Suggestion>> {
        anyhow::bail!("this ctx was built without the picker (cargo feature `picker`)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggestion(path: &str, start: u32, end: u32) -> Suggestion {
        let json = serde_json::json!({"path": path, "lines": {"start": start, "end": end}, "score": 1.0, "summary": "fn a", "why": []});
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn mentions_are_quoted_when_needed() {
        let found = [suggestion("src/a.rs", 1, 5), suggestion("my dir/b.md", 2, 3)];
        assert_eq!(mentions_of(&found), "@src/a.rs#L1-5\n@\"my dir/b.md\"#L2-3");
    }

    #[test]
    fn picker_ranges() {
        let mut s = suggestion("a.rs", 1, 5);
        picker::apply_range(&mut s, "10-20").unwrap();
        assert_eq!((s.lines.start, s.lines.end), (10, 20));
        picker::apply_range(&mut s, "L7").unwrap();
        assert_eq!((s.lines.start, s.lines.end), (7, 7));
        picker::apply_range(&mut s, "").unwrap();
        assert_eq!((s.lines.start, s.lines.end), (7, 7));
        assert!(picker::apply_range(&mut s, "9-3").is_err());
        assert!(picker::apply_range(&mut s, "x").is_err());
        assert_eq!(picker::label(&s), "a.rs:7-7  fn a");
    }

    #[test]
    fn text_output() {
        let found = [suggestion("src/a.rs", 1, 5)];
        assert_eq!(render_text(&found, false), "src/a.rs:1-5  fn a\n");
    }
}
