//! `ctx init`, `ctx system-prompt`, `ctx messages` and `ctx paste-image`: conversations built
//! from the rules folder, history, and the prompt with its images (docs/conversation.md).

use std::io::{self, Read, Write};
use std::process::ExitCode;

use ctx::assemble::record::DiagnosticRecord;
use ctx::conversation::history::Selection;
use ctx::conversation::{Provider, Warning};
use ctx::{Format, Mode, Severity};
use serde_json::json;

use crate::cli::{InitArgs, MessagesArgs, PasteImageArgs, SystemPromptArgs};
use crate::diag::Reporter;
use crate::settings::Settings;

/// `ctx init`.
pub(crate) fn init(settings: &Settings, _args: &InitArgs) -> anyhow::Result<ExitCode> {
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    let report = ctx.init_rules()?;
    let mut out = io::stdout().lock();
    for path in &report.created {
        writeln!(out, "created {path}")?;
    }
    for path in &report.kept {
        writeln!(out, "kept {path} (already there)")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `ctx system-prompt [--format text|json] [--rule NAME]...`: exit 1 when a rule has errors.
pub(crate) fn system_prompt(
    settings: &Settings,
    args: &SystemPromptArgs,
) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("system-prompt", false)?;
    let config = &settings.conversation;
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    if let Some(rules) = crate::rules::agent_view(&ctx, &args.agent)? {
        return agent_system_prompt(settings, &rules, json);
    }
    let names = if args.rules.is_empty() { &config.active_rules } else { &args.rules };
    let prompt = ctx.system_prompt(config.rules_dir.as_deref(), names)?;
    let mut reporter = Reporter::new(settings.style, settings.quiet);
    for rule in &prompt.rules {
        reporter.report_all(&rule.assembly.diagnostics);
    }
    crate::term::status_if_closed(prompt.has_errors());
    let mut out = io::stdout().lock();
    if json {
        let rules: Vec<serde_json::Value> = prompt
            .rules
            .iter()
            .map(|r| {
                json!({
                    "key": r.key,
                    "path": r.path,
                    "content": r.assembly.content,
                    "description": r.assembly.description,
                    "params": r.assembly.params,
                    "metadata": r.assembly.metadata,
                    "diagnostics": r.assembly.diagnostics,
                })
            })
            .collect();
        let value =
            json!({ "rules_dir": prompt.rules_dir, "rules": rules, "runtime": prompt.runtime });
        writeln!(out, "{}", crate::term::json_pretty(&value)?)?;
    } else {
        out.write_all(prompt.text().as_bytes())?;
    }
    out.flush()?;
    Ok(if prompt.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `ctx system-prompt --agent NAME [--for PATH] [--cwd DIR]`: the agent's system prompt as it
/// sends it; what it sends in a user message is said on standard error (and is in the JSON
/// form). The view's problems go to standard error; exit 1 on an error among them.
fn agent_system_prompt(
    settings: &Settings,
    rules: &ctx::agents::Rules,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let prompt = ctx::AgentPrompt::of(rules);
    report_view(settings, rules);
    let mut out = io::stdout().lock();
    let written = (|| -> anyhow::Result<()> {
        if json {
            let mut value = crate::rules::view_summary(rules);
            if let Some(object) = value.as_object_mut() {
                object.insert("system".to_owned(), json!(prompt.system));
                object.insert("user".to_owned(), json!(prompt.user));
                let segments = ctx::agents::render(rules);
                object.insert("segments".to_owned(), serde_json::to_value(segments)?);
                object.insert("diagnostics".to_owned(), serde_json::to_value(&rules.diagnostics)?);
            }
            writeln!(out, "{}", crate::term::json_pretty(&value)?)?;
        } else {
            out.write_all(crate::term::visible(&prompt.system).as_bytes())?;
            if !prompt.system.is_empty() && !prompt.system.ends_with('\n') {
                writeln!(out)?;
            }
            if !prompt.user.is_empty() && !settings.quiet {
                let _ = writeln!(
                    io::stderr(),
                    "ctx: note: {} sends {} bytes of its rules in a user message, not the system \
                     prompt: `ctx messages --agent {}` places them, `ctx rules --agent {} --text` \
                     shows them",
                    rules.agent.title(),
                    prompt.user.len(),
                    rules.agent,
                    rules.agent,
                );
            }
        }
        out.flush()?;
        Ok(())
    })();
    crate::term::unless_closed(written)?;
    Ok(if rules.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The problems of an agent's view on standard error, as `ctx rules lint` prints them.
fn report_view(settings: &Settings, rules: &ctx::agents::Rules) {
    let mut reporter = Reporter::new(settings.style, settings.quiet);
    let records: Vec<DiagnosticRecord> =
        rules.diagnostics.iter().map(crate::rules::record).collect();
    reporter.report_all(&records);
}

/// `ctx messages [PROMPT] [--provider openai|anthropic]`: the request body as JSON.
pub(crate) fn messages(settings: &Settings, args: &MessagesArgs) -> anyhow::Result<ExitCode> {
    let provider = Provider::from(args.provider);
    let prompt = crate::input::prompt(args.prompt.as_ref(), settings.input_cap())?;
    let config = &settings.conversation;
    // The body is JSON whatever the format; `--format` chooses how the user's turn lays out
    // its attachments (xml by default, markdown or inline), and `json` means the default.
    let format = match settings.assembly_format("messages", Format::Xml)? {
        Format::Json => Format::Xml,
        format => format,
    };
    let tokenizer = match provider {
        Provider::Anthropic => ctx::tokens::Tokenizer::AnthropicEstimate,
        _ => ctx::tokens::Tokenizer::O200k,
    };
    let ctx = if args.auto {
        ranking_context(settings, format, tokenizer)?
    } else {
        settings.context_counting(Mode::Append, format, tokenizer)?
    };
    let mut builder = ctx
        .conversation()
        .rules(if args.rules.is_empty() { config.active_rules.clone() } else { args.rules.clone() })
        .max_tokens(settings.max_tokens_arg)
        .history_tokens(args.history_tokens.or(config.history_tokens).unwrap_or(2000))
        .max_image_bytes(args.max_image_bytes.or(config.max_image_bytes).unwrap_or(20 << 20));
    if let Some(dir) = &config.rules_dir {
        builder = builder.rules_dir(dir.clone());
    }
    if args.auto {
        let opts = ctx::SuggestOptions::default()
            .limit(ctx::FIT_CANDIDATES)
            .max_tokens(Some(settings.autocontext.max_tokens));
        builder = builder.auto(Some(opts));
    }
    let mut agent_view = None;
    if let Some(rules) = crate::rules::agent_view(&ctx, &args.agent)? {
        report_view(settings, &rules);
        agent_view = Some(crate::rules::view_summary(&rules));
        builder = builder.agent_rules(rules);
    }
    // `--history ~N` names an entry of mai's history, as `--history-id ~N` does.
    let mut history_id = args.history_id.clone();
    match &args.history {
        Some(entry) if is_entry_number(entry) => history_id = Some(entry.clone()),
        Some(path) => builder = builder.transcript(path.clone()),
        None => {}
    }
    match (&args.include_history, &history_id) {
        (Some(n), _) => builder = builder.mai_history(Selection::Newest(*n)),
        (None, Some(id)) => builder = builder.mai_history(Selection::One(id.clone())),
        (None, None) => {}
    }
    let built = builder.build(&prompt)?;
    settings.keep_counts(&ctx);
    let mut reporter = Reporter::new(settings.style, settings.quiet);
    for rule in &built.system.rules {
        reporter.report_all(&rule.assembly.diagnostics);
    }
    reporter.report_all(&built.prompt.diagnostics);
    // A problem with a reference of the prompt (an image) is a diagnostic of the prompt, at
    // the reference's line and column, as the prompt's own are (file `-`).
    let (placed, others): (Vec<&Warning>, Vec<&Warning>) =
        built.warnings.iter().partition(|w| w.at.is_some());
    let placed: Vec<DiagnosticRecord> = placed.into_iter().filter_map(prompt_diagnostic).collect();
    reporter.report_all(&placed);
    warn(settings, others);
    let body = built.conversation.body(provider);
    // Both APIs refuse a request without a turn (docs/conversation.md, "Messages").
    let turns = body["messages"].as_array().map_or(0, |messages| {
        messages
            .iter()
            .filter(|m| !matches!(m["role"].as_str(), Some("system" | "developer")))
            .count()
    });
    if turns == 0 {
        anyhow::bail!(
            "nothing to send: the prompt is empty and there is no earlier turn (give a prompt, an image or --history)"
        );
    }
    // Which agent's rules, from which files: on standard error, since the providers refuse a
    // body with keys they do not know.
    if let (Some(view), false) = (agent_view, settings.quiet) {
        let _ = writeln!(io::stderr(), "ctx: rules: {}", crate::term::visible(&view.to_string()));
    }
    let errors = built.system.has_errors()
        || built.agent.as_ref().is_some_and(ctx::agents::Rules::has_errors)
        || built.prompt.diagnostics.iter().any(|d| d.code.severity() == Severity::Error)
        || built.warnings.iter().any(|w| w.code.severity() == Severity::Error);
    crate::term::status_if_closed(errors);
    let mut out = io::stdout().lock();
    writeln!(out, "{}", serde_json::to_string_pretty(&body)?)?;
    out.flush()?;
    Ok(if errors { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The context of `ctx messages --auto`: a ranking context counting in `tokenizer`, its
/// index stored in the cache folder; or, when that folder cannot hold it, kept in memory
/// after a warning.
fn ranking_context(
    settings: &Settings,
    format: Format,
    tokenizer: ctx::tokens::Tokenizer,
) -> anyhow::Result<ctx::Context> {
    let ctx = settings.ranking_context_counting(Mode::Append, format, tokenizer)?;
    let stored = settings.cache_dir().and_then(|dir| {
        ctx.with_index_store(dir)
            .map_err(|err| anyhow::anyhow!("cannot open the cache {}: {err}", dir.display()))
    });
    match stored {
        Ok(stored) => Ok(stored),
        Err(err) => {
            if !settings.quiet {
                let why = crate::term::visible(&format!("{err:#}").replace(['\n', '\r'], " "))
                    .into_owned();
                let _ = writeln!(
                    io::stderr(),
                    "warning: the suggestion index is not stored ({why}); ranking without it"
                );
            }
            Ok(ctx)
        }
    }
}

/// `~N`: an entry of mai's history counted from the newest.
fn is_entry_number(text: &str) -> bool {
    text.strip_prefix('~').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A warning about a reference of the prompt, as a diagnostic of the prompt (file `-`).
fn prompt_diagnostic(w: &Warning) -> Option<DiagnosticRecord> {
    let at = w.at?;
    Some(DiagnosticRecord {
        severity: w.code.severity(),
        code: w.code,
        message: w.message.clone(),
        file: "-".to_owned(),
        line: at.line,
        column: at.column,
        source: None,
    })
}

/// Prints the conversation's warnings that are about no place in the prompt; `-q` hides the
/// warnings among them, not the errors.
fn warn(settings: &Settings, warnings: Vec<&Warning>) {
    let mut err = io::stderr().lock();
    for w in warnings {
        let severity = match w.code.severity() {
            Severity::Error => "error",
            _ if settings.quiet => continue,
            _ => "warning",
        };
        let _ = writeln!(err, "ctx: {severity}[{}]: {}", w.code, crate::term::visible(&w.message));
    }
}

/// `ctx paste-image [FILE|-]`: stores the image under the cache directory and prints the
/// Markdown link.
pub(crate) fn paste_image(settings: &Settings, args: &PasteImageArgs) -> anyhow::Result<ExitCode> {
    let max = settings.conversation.max_image_bytes.unwrap_or(20 << 20);
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    let bytes = match args.file.as_deref() {
        #[cfg(feature = "clipboard")]
        None => clipboard_png()?,
        #[cfg(not(feature = "clipboard"))]
        None => read_stdin_bytes(max)?,
        Some("-") => read_stdin_bytes(max)?,
        Some(file) => ctx
            .sandbox()
            .read_bytes(file, None, max)
            .map(|(_, b)| b)
            .map_err(|e| anyhow::anyhow!("{}: {e}", e.code()))?,
    };
    let path = ctx.paste_image(&bytes, max)?;
    let mut out = io::stdout().lock();
    writeln!(out, "![pasted image]({path})")?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn read_stdin_bytes(max: u64) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    io::stdin().lock().take(max + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The clipboard's image as PNG bytes (feature `clipboard`).
#[cfg(feature = "clipboard")]
fn clipboard_png() -> anyhow::Result<Vec<u8>> {
    let image = arboard::Clipboard::new()
        .and_then(|mut clipboard| clipboard.get_image())
        .map_err(|e| anyhow::anyhow!("no image on the clipboard: {e}"))?;
    let (width, height) = (u32::try_from(image.width)?, u32::try_from(image.height)?);
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(&image.bytes)?;
    Ok(png)
}
