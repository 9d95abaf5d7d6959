//! `ctx outline PATH…`: the definitions of files and folders with their lines, ranked for
//! `--prompt`, fitted to `--max-tokens`, as text or JSON.

use std::io::{self, Write};
use std::process::ExitCode;

use ctx::{Format, Mode, OutlineOptions};
use serde_json::json;

use crate::cli::OutlineArgs;
use crate::settings::Settings;
use crate::term::{json_pretty, visible, visible_json};

pub(crate) fn run(settings: &Settings, args: &OutlineArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("outline", false)?;
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    let paths: Vec<&str> = args.paths.iter().map(String::as_str).collect();
    let options = OutlineOptions::default()
        .prompt(args.prompt.clone())
        .max_tokens(settings.max_tokens_arg.filter(|&n| n > 0));
    let outline = ctx.outline(&paths, &options);
    let errors = outline.warnings.iter().any(|(code, _)| code.as_str().starts_with("E_"));
    // The problems first, so that a reader that closes the output early still has them.
    if !settings.quiet && !json {
        let mut err = io::stderr().lock();
        for (code, message) in &outline.warnings {
            let kind = if code.as_str().starts_with("E_") { "error" } else { "warning" };
            let _ = writeln!(err, "ctx: {kind}[{}]: {}", code.as_str(), visible(message));
        }
    }
    crate::term::status_if_closed(errors);
    let mut out = io::stdout().lock();
    if json {
        let warnings: Vec<_> = outline
            .warnings
            .iter()
            .map(|(code, message)| json!({ "code": code.as_str(), "message": message }))
            .collect();
        let mut value = serde_json::to_value(&outline)?;
        // Counted in the tokenizer of the budget.
        let tokenizer = ctx.assembler().options().tokenizer;
        value["tokens"] = json!(tokenizer.scale(ctx::tokens::count(&outline.text)));
        value["tokenizer"] = json!(tokenizer.name());
        value["text"] = json!(outline.text);
        value["warnings"] = json!(warnings);
        visible_json(&mut value);
        writeln!(out, "{}", json_pretty(&value)?)?;
    } else {
        out.write_all(visible(&outline.text).as_bytes())?;
    }
    out.flush()?;
    Ok(if errors { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
