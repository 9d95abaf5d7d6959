//! `ctx trust`: what folders outside the workspace its files ask for, and the user's answer,
//! kept in the trust file of the user's own configuration folder (docs/security.md).

use std::io::{self, BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context as _;
use ctx::{Format, Mode};
use serde_json::json;

use crate::cli::TrustArgs;
use crate::settings::Settings;

pub(crate) fn run(settings: &Settings, args: &TrustArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("trust", false)?;
    let dir = settings
        .config_dir
        .clone()
        .context("no configuration folder for the trust file (set CTX_CONFIG_DIR)")?;
    let trust = ctx::Trust::user_store(&dir);
    let store = trust.store().expect("a user store");
    // The context is built as any command builds it, so the request is the one every command
    // sees; its warnings are this command's subject, not printed as warnings.
    let context =
        settings.builder_for(Mode::Inline, Format::Inline, None).trust(trust.clone()).build()?;
    let request = context.trust_request();
    // A workspace that asks for nothing has no request of its own: it is named as the
    // sandbox opened it.
    let sandbox = context.sandbox();
    let workspace = match request.workspace.as_str() {
        "" => sandbox.root_path(sandbox.workspace().root()).to_string(),
        named => named.to_owned(),
    };
    let mut out = io::stdout().lock();
    if args.revoke {
        let revoked = store.revoke(&request.workspace)?;
        let said = match (json, revoked) {
            (true, _) => {
                crate::term::json_pretty(&json!({ "workspace": workspace, "revoked": revoked }))?
            }
            (false, true) => format!("trust revoked for {workspace}"),
            (false, false) => format!("{workspace} was not trusted; nothing to revoke"),
        };
        writeln!(out, "{}", crate::term::visible(&said))?;
        return Ok(ExitCode::SUCCESS);
    }
    let trusted = store.trusts(request)?;
    let home = std::env::home_dir();
    let refusal = |asked: &ctx::trust::Asked| {
        let real = asked.real.as_ref()?;
        let home = home.as_ref().and_then(|h| h.to_str());
        ctx::fs::root_refusal(real.as_str(), home).map(|why| (real.clone(), why))
    };
    if json {
        let asked: Vec<_> = request
            .asked
            .iter()
            .map(|a| {
                json!({
                    "path": a.path,
                    "real": a.real,
                    "asked_by": a.asked_by,
                    "files": a.files,
                    "refused": refusal(a).map(|(_, why)| why.reason()),
                })
            })
            .collect();
        let mut value = json!({
            "workspace": workspace,
            "digest": request.digest(),
            "asked": asked,
            "trusted": trusted,
        });
        let mut trusted = trusted || request.is_empty();
        if args.yes && !request.is_empty() {
            store.grant(request)?;
            value["trusted"] = json!(true);
            trusted = true;
        }
        crate::term::status_if_closed(!trusted);
        writeln!(out, "{}", crate::term::json_pretty(&value)?)?;
        // As the text says it: 1 while the folders asked for are not trusted.
        return Ok(if trusted { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    let workspace = workspace.as_str();
    if request.is_empty() {
        writeln!(
            out,
            "{} asks for no folder outside it: nothing to trust",
            crate::term::visible(workspace)
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let n = request.asked.len();
    // Not trusted until the grant is recorded: a closed output before it grants nothing.
    crate::term::status_if_closed(!trusted);
    writeln!(out, "workspace: {}", crate::term::visible(workspace))?;
    writeln!(out, "asks to open {n} folder{} outside it:", if n == 1 { "" } else { "s" })?;
    for asked in &request.asked {
        list_asked(&mut out, asked, refusal(asked))?;
    }
    writeln!(out, "digest: {}", request.digest())?;
    if trusted {
        writeln!(out, "trusted")?;
        return Ok(ExitCode::SUCCESS);
    }
    let yes = args.yes || (io::stdin().is_terminal() && ask(&mut out)?);
    if !yes {
        writeln!(out, "not trusted: `ctx trust --yes` trusts these folders for this workspace")?;
        return Ok(ExitCode::from(1));
    }
    let grant = store.grant(request)?;
    crate::term::status_if_closed(false);
    writeln!(
        out,
        "trusted: {} folder{} for this workspace (recorded in {})",
        grant.roots.len(),
        if grant.roots.len() == 1 { "" } else { "s" },
        crate::term::visible(dir.join(ctx::trust::TRUST_FILE).to_string_lossy().as_ref())
    )?;
    Ok(ExitCode::SUCCESS)
}

/// One folder asked for, with where it leads and why it is never opened, if it is not.
fn list_asked(
    out: &mut dyn Write,
    asked: &ctx::trust::Asked,
    refusal: Option<(impl std::fmt::Display, ctx::fs::RootRefusal)>,
) -> io::Result<()> {
    let files = match asked.files {
        Some(1) => ", 1 file".to_owned(),
        Some(n) => format!(", {n} files"),
        None => String::new(),
    };
    let line = format!("  {}  ({}{files})", asked.path, asked.asked_by);
    writeln!(out, "{}", crate::term::visible(&line))?;
    if let Some((real, why)) = refusal {
        let line = format!("      leads to {real}: {why}, never opened");
        writeln!(out, "{}", crate::term::visible(&line))?;
    } else if let Some(real) = asked.real.as_ref().filter(|r| **r != asked.path) {
        writeln!(out, "{}", crate::term::visible(&format!("      leads to {real}")))?;
    }
    Ok(())
}

/// Asks on the terminal; anything but `y` or `yes` is no.
fn ask(out: &mut dyn Write) -> anyhow::Result<bool> {
    write!(out, "trust these folders for this workspace? [y/N] ")?;
    out.flush()?;
    let mut answer = String::new();
    io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
