//! `ctx assemble` and `ctx expand`: the assembled text on standard output, streamed as it is
//! produced, and the diagnostics on standard error.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use ctx::{Format, Mode};

use crate::cli::{AssembleArgs, ExpandArgs};
use crate::diag::finish_showing_tokens;
use crate::input;
use crate::progress::Progress;
use crate::settings::Settings;

/// `ctx assemble FILE|-`: default mode inline, format inline.
pub(crate) fn assemble(settings: &Settings, args: &AssembleArgs) -> anyhow::Result<ExitCode> {
    let format = settings.assembly_format("assemble", Format::Inline)?;
    let mode = settings.mode.unwrap_or(Mode::Inline);
    let ctx = settings.context_for(mode, format, Some(&args.file))?;
    let stdin = if args.file.as_os_str() == "-" {
        Some(input::read_stdin_document(settings.input_cap())?)
    } else {
        None
    };
    let name = args.file.display().to_string();
    let progress = Progress::start(
        show_progress(settings),
        settings.style.color,
        format!("assembling {name}"),
    );
    let mut out = BufWriter::new(io::stdout().lock());
    let assembly = match &stdin {
        Some(text) => {
            ctx.assembler().assemble_str_to(text, "-", &mut out).map_err(ctx::Error::from)?
        }
        None => {
            input::document(&settings.root, &args.file, |path| ctx.assemble_to(path, &mut out))?
        }
    };
    let flushed = out.flush();
    drop(progress);
    settings.keep_counts(&ctx);
    crate::term::unless_closed(flushed.map_err(Into::into))?;
    finish_showing_tokens(settings, &assembly, format)
}

/// `ctx expand [TEXT]`: default mode append, format xml. Without TEXT, standard input is the
/// prompt; an empty one is an empty prompt (nothing to expand, exit 0).
pub(crate) fn expand(settings: &Settings, args: &ExpandArgs) -> anyhow::Result<ExitCode> {
    let format = settings.assembly_format("expand", Format::Xml)?;
    let mode = settings.mode.unwrap_or(Mode::Append);
    let text = input::prompt(args.text.as_ref(), settings.input_cap())?;
    if args.auto || settings.autocontext.enabled {
        return crate::suggest::expand_auto(settings, &text, (mode, format));
    }
    let ctx = settings.context(mode, format)?;
    let progress = Progress::start(
        show_progress(settings),
        settings.style.color,
        "expanding the prompt".to_owned(),
    );
    let mut out = BufWriter::new(io::stdout().lock());
    let assembly =
        ctx.assembler().assemble_str_to(&text, "-", &mut out).map_err(ctx::Error::from)?;
    let flushed = out.flush();
    drop(progress);
    settings.keep_counts(&ctx);
    crate::term::unless_closed(flushed.map_err(Into::into))?;
    finish_showing_tokens(settings, &assembly, format)
}

/// A spinner only when standard error is a terminal that the output does not also go to.
pub(crate) fn show_progress(settings: &Settings) -> bool {
    settings.style.stderr_tty && !settings.quiet && !io::stdout().is_terminal()
}
