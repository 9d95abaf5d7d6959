//! `ctx mcp`: the Model Context Protocol server of `ctx-mcp` on standard input and output,
//! over the context of the command line's settings.

use std::process::ExitCode;

use ctx::{Format, Mode};

use crate::settings::Settings;

pub(crate) fn run(settings: &Settings) -> anyhow::Result<ExitCode> {
    let ctx = settings.context(Mode::Inline, Format::Inline)?;
    ctx_mcp::run_stdio(&ctx)?;
    Ok(ExitCode::SUCCESS)
}
