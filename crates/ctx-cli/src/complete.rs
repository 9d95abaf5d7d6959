//! `ctx complete PREFIX`: ranked fuzzy completions of a partly typed mention over the files
//! and directories of the sandbox, ignore and deny rules applied.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use ctx::{Format, Mode};
use serde_json::json;

use crate::cli::CompleteArgs;
use crate::progress::Progress;
use crate::settings::Settings;
use crate::term::{Visible, visible_json};

pub(crate) fn run(settings: &Settings, args: &CompleteArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("complete", false)?;
    let ctx = settings.context(Mode::Append, Format::Xml)?;
    let progress = Progress::start(
        settings.style.stderr_tty && !settings.quiet,
        settings.style.color,
        "walking the workspace".into(),
    );
    let started = Instant::now();
    let completions = ctx.complete(&args.prefix, args.limit)?;
    drop(progress);
    tracing::info!(elapsed_ms = started.elapsed().as_secs_f64() * 1000.0, "completed");
    let mut out = BufWriter::new(io::stdout().lock());
    if json {
        let list: Vec<_> = completions
            .iter()
            .map(|c| {
                json!({
                    "completion": c.mention,
                    "path": c.path,
                    "kind": if c.dir { "directory" } else { "file" },
                    "score": c.score,
                })
            })
            .collect();
        let mut value = json!({ "prefix": args.prefix, "completions": list });
        visible_json(&mut value);
        serde_json::to_writer_pretty(&mut out, &value)?;
        writeln!(out)?;
    } else {
        let mut out = Visible(&mut out);
        for c in &completions {
            writeln!(out, "{}", c.mention)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
