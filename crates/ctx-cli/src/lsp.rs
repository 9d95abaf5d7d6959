//! `ctx lsp`: the language server of `ctx-lsp` on standard input and output, over the roots
//! and options of the command line's settings.

use std::process::ExitCode;

use ctx::{Format, Mode};

use crate::settings::Settings;

/// A long-lived server keeps a larger content cache than one command does.
const LSP_CACHE_BYTES: u64 = 64 << 20;

pub(crate) fn run(settings: &Settings) -> anyhow::Result<ExitCode> {
    let builder =
        settings.builder_for(Mode::Inline, Format::Inline, None).cache_capacity(LSP_CACHE_BYTES);
    // LSP: exit status 0 after `shutdown`, 1 when `exit` (or the end of input) comes without it.
    let ending = ctx_lsp::run_stdio(builder)?;
    Ok(ExitCode::from(ending.exit_code()))
}
