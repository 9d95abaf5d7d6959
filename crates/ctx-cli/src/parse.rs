//! `ctx parse`: the scanned items of one text.

use std::io::{self, Write};
use std::process::ExitCode;

use ctx::{Format, Mode, Severity};

use crate::cli::ParseArgs;
use crate::settings::Settings;

/// `ctx parse FILE`: JSON by default, `--format text` for the fixture dump. The file is read
/// through the sandbox as `ctx assemble` reads its document (found from the root, refused
/// outside the roots, denied, special or binary, with its code), but nothing in it is
/// resolved; empty input is an empty scan.
pub(crate) fn run(settings: &Settings, args: &ParseArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("parse", true)?;
    let text = if args.file.as_os_str() == "-" {
        crate::input::read_stdin(settings.input_cap())?
    } else {
        let ctx = settings.context_for(Mode::Inline, Format::Inline, Some(&args.file))?;
        crate::input::document(&settings.root, &args.file, |path| {
            ctx.assembler().read_document(path).map_err(ctx::Error::from)
        })?
    };
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
