//! `ctx mcp`: the Model Context Protocol server of `ctx-mcp` on standard input and output,
//! over the context of the command line's settings.

use std::process::ExitCode;

use ctx::{Format, Mode};

use crate::settings::Settings;

pub(crate) fn run(settings: &Settings) -> anyhow::Result<ExitCode> {
    // The source index of an out-of-source build is read off the request path; what it
    // could not honour is reported once it is read.
    let ctx = settings.builder_for(Mode::Inline, Format::Inline, None).build_deferred()?;
    settings.report_notices(&ctx.current());
    std::thread::scope(|scope| {
        scope.spawn(|| {
            if let Ok(full) = ctx.wait() {
                settings.report_notices(&full);
            }
        });
        ctx_mcp::run_stdio(&ctx)
    })?;
    Ok(ExitCode::SUCCESS)
}
