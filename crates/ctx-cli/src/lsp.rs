//! `ctx lsp`: the language server of `ctx-lsp` on standard input and output, over the roots
//! and options of the command line's settings (cargo feature `lsp`, on by default).

use std::process::ExitCode;

use crate::cli::LspArgs;
use crate::settings::Settings;

/// A long-lived server keeps a larger content cache than one command does.
#[cfg(feature = "lsp")]
const LSP_CACHE_BYTES: u64 = 64 << 20;

#[cfg(feature = "lsp")]
pub(crate) fn run(settings: &Settings, args: &LspArgs) -> anyhow::Result<ExitCode> {
    use ctx::{Format, Mode};
    let builder =
        settings.builder_for(Mode::Inline, Format::Inline, None).cache_capacity(LSP_CACHE_BYTES);
    let config = ctx_lsp::Config {
        max_message_bytes: match args.max_message_bytes {
            0 => u64::MAX,
            n => n,
        },
        ..ctx_lsp::Config::default()
    };
    // LSP: exit status 0 after `shutdown`, 1 when `exit` (or the end of input) comes without it.
    let ending = ctx_lsp::run_stdio(builder, &config)?;
    Ok(ExitCode::from(ending.exit_code()))
}

/// Without the feature, the command says so (exit status 2).
#[cfg(not(feature = "lsp"))]
pub(crate) fn run(_: &Settings, _: &LspArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("this ctx was built without the language server (cargo feature `lsp`)")
}
