//! `ctx mcp`: the Model Context Protocol server of `ctx-mcp` on standard input and output,
//! over the context of the command line's settings (cargo feature `mcp`, on by default).

use std::process::ExitCode;

use crate::settings::Settings;

#[cfg(feature = "mcp")]
pub(crate) fn run(settings: &Settings) -> anyhow::Result<ExitCode> {
    use ctx::{Format, Mode};
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

/// Without the feature, the command says so (exit status 2).
#[cfg(not(feature = "mcp"))]
pub(crate) fn run(_: &Settings) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "this ctx was built without the Model Context Protocol server (cargo feature `mcp`)"
    )
}
