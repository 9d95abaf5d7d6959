//! `ctx lsp`: the language server of `ctx-lsp` on standard input and output, over the roots
//! and options of the command line's settings.

use std::process::ExitCode;

use clap::Args;
use ctx::{Format, Mode};

use crate::settings::Settings;

/// A long-lived server keeps a larger content cache than one command does.
const LSP_CACHE_BYTES: u64 = 64 << 20;

#[derive(Debug, Args)]
pub(crate) struct LspArgs {
    /// The largest message the client may send, in bytes (0 for no limit); a longer
    /// `Content-Length` is answered with an error and ends the server.
    #[arg(long, value_name = "BYTES", default_value_t = ctx_lsp::DEFAULT_MAX_MESSAGE_BYTES)]
    pub(crate) max_message_bytes: u64,
}

pub(crate) fn run(settings: &Settings, args: &LspArgs) -> anyhow::Result<ExitCode> {
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
