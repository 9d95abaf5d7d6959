//! `ctx parse`: the scanned items of one text.

use std::io::{self, Write};
use std::process::ExitCode;

use ctx::Severity;

use crate::cli::ParseArgs;
use crate::settings::Settings;

/// `ctx parse FILE`: JSON by default, `--format text` for the fixture dump. It reads the file
/// directly (it is a debugging aid that resolves nothing); empty input is an empty scan.
pub(crate) fn run(settings: &Settings, args: &ParseArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("parse", true)?;
    let text = crate::input::read_text(&args.file, settings.input_cap())?;
    let scan = ctx::syntax::scan_with(&text, &settings.options.syntax);
    let written = (|| -> anyhow::Result<()> {
        let mut out = io::stdout().lock();
        match json {
            false => out.write_all(crate::term::visible(&scan.dump()).as_bytes())?,
            true => {
                let mut value = serde_json::to_value(&scan)?;
                crate::term::visible_json(&mut value);
                serde_json::to_writer_pretty(&mut out, &value)?;
                out.write_all(b"\n")?;
            }
        }
        out.flush()?;
        Ok(())
    })();
    let failed = scan.diagnostics.iter().any(|d| d.severity() == Severity::Error);
    crate::term::unless_closed(written)?;
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
