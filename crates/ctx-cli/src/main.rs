//! The `ctx` binary: command-line parsing, configuration, input, output, diagnostics and
//! exit status around the ctx libraries.
//!
//! Exit status: 0 done without error diagnostics, 1 with at least one (or stopped by
//! `--strict`), 2 for usage errors, unreadable top-level input and bad configuration. A closed
//! standard output (`ctx assemble x | head`) is no error: the status is the one the work gave.

mod assemble;
mod check;
mod cli;
mod complete;
mod config;
mod conversation;
mod diag;
#[cfg(feature = "picker")]
mod field;
mod index;
mod input;
mod lsp;
mod mcp;
mod outline;
mod parse;
mod picker;
mod progress;
mod refs;
mod rules;
#[cfg(unix)]
mod service;
mod settings;
mod sources;
mod suggest;
mod term;
mod trust;
mod watch;

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Command};
use crate::settings::Settings;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(err) => {
            if term::is_broken_pipe(&err) {
                return term::closed_status();
            }
            // The chain may quote a file (a path, a name from a project file).
            let message = format!("{err:#}");
            let _ = writeln!(io::stderr(), "ctx: error: {}", term::visible(&message));
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if matches!(err.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            // Help and version are the command's output: a full disk is an error as for any
            // other output, a closed pipe is not.
            if io::stdout().is_terminal() {
                err.print()?;
            } else {
                let mut out = io::stdout().lock();
                write!(out, "{}", err.render())?;
                out.flush()?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        Err(err) => err.exit(),
    };
    // The servers and the watchers run long, with dependencies (the MCP and LSP protocol
    // crates, notify) that log what goes wrong; a one-shot command reports through its
    // diagnostics and logs nothing at the default level.
    let long_running = matches!(cli.command, Command::Lsp(_) | Command::Mcp)
        || matches!(&cli.command, Command::Assemble(a) if a.watch)
        || matches!(&cli.command, Command::Check(a) if a.watch)
        || matches!(&cli.command, Command::Index(a) if a.watch);
    init_logging(cli.global.verbose, cli.global.quiet, long_running);
    // Commands whose output has one shape take no format: one given is a usage error, as a
    // format a command does not take is (docs/cli.md).
    let shapeless = match &cli.command {
        Command::Completions(_) => Some("completions"),
        Command::Init(_) => Some("init"),
        Command::PasteImage(_) => Some("paste-image"),
        Command::Lsp(_) => Some("lsp"),
        Command::Mcp => Some("mcp"),
        _ => None,
    };
    if let (Some(command), Some(format)) = (shapeless, cli.global.format) {
        anyhow::bail!("ctx {command} takes no --format (`{}` was given)", format.name());
    }
    if let Command::Completions(args) = &cli.command {
        // Generated into memory first: the generator panics when its writer fails, and a
        // closed or full standard output is an outcome to report, not a crash.
        let mut script = Vec::new();
        clap_complete::generate(args.shell, &mut Cli::command(), "ctx", &mut script);
        let mut out = io::stdout().lock();
        out.write_all(&script)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut settings = Settings::new(&cli.global)?;
    // `ctx refs` shows token counts in its tree too.
    // `ctx refs` shows token counts in its tree too; `assemble` and `expand` show the total.
    settings.counts_shown =
        matches!(cli.command, Command::Refs(_) | Command::Assemble(_) | Command::Expand(_));
    // Commands that resolve no path of the prompt's or a document's never read a solution.
    settings.sources_wanted = !matches!(
        cli.command,
        Command::Init(_)
            | Command::PasteImage(_)
            | Command::Index(_)
            | Command::Suggest(_)
            | Command::Rules(_)
    );
    if let Command::Index(cli::IndexArgs { data_files: true, .. })
    | Command::Suggest(cli::SuggestArgs { data_files: true, .. }) = &cli.command
    {
        settings.suggest_data_files = true;
    }
    if let Command::Index(cli::IndexArgs { symbols: Some(symbols), .. })
    | Command::Suggest(cli::SuggestArgs { symbols: Some(symbols), .. }) = &cli.command
    {
        settings.suggest_symbols = (*symbols).into();
        if !settings.suggest_symbols.is_available() {
            anyhow::bail!(
                "--symbols tree-sitter: this ctx was built without tree-sitter (cargo feature \
                 `tree-sitter`); the default, --symbols scan, needs no grammar"
            );
        }
    }
    match &cli.command {
        Command::Assemble(args) if args.watch => watch::assemble(&settings, args),
        Command::Assemble(args) => assemble::assemble(&settings, args),
        Command::Expand(args) => assemble::expand(&settings, args),
        Command::Check(args) if args.watch => watch::check(&settings, args),
        Command::Check(args) => check::run(&settings, args),
        Command::Refs(args) => refs::run(&settings, args),
        Command::Parse(args) => parse::run(&settings, args),
        Command::Complete(args) => complete::run(&settings, args),
        Command::Lsp(args) => lsp::run(&settings, args),
        Command::Mcp => mcp::run(&settings),
        Command::Trust(args) => trust::run(&settings, args),
        Command::Init(args) => conversation::init(&settings, args),
        Command::SystemPrompt(args) => conversation::system_prompt(&settings, args),
        Command::Messages(args) => conversation::messages(&settings, args),
        Command::Rules(args) => rules::run(&settings, args),
        Command::PasteImage(args) => conversation::paste_image(&settings, args),
        Command::Sources(args) => sources::run(&settings, args),
        Command::Resolve(args) => sources::resolve(&settings, args),
        #[cfg(unix)]
        Command::Index(args) if args.watch => service::serve::run(&settings, args),
        #[cfg(not(unix))]
        Command::Index(args) if args.watch => {
            anyhow::bail!("ctx index --watch needs Unix (Linux or macOS): there is no service here")
        }
        Command::Index(args) => index::run(&settings, args),
        Command::Suggest(args) => suggest::run(&settings, args),
        Command::Outline(args) => outline::run(&settings, args),
        Command::Completions(_) => unreachable!("handled above"),
    }
}

/// Logging to standard error: `RUST_LOG` if set, else by `-v` (warnings by default, errors
/// only with `-q`). Installed only when anything may be logged: always for `long_running`
/// commands, otherwise with `-v` or `RUST_LOG`; ctx itself logs nothing above `info`, so a
/// one-shot run at the default level installs no subscriber (installing it cost a tenth of
/// the run of a small document).
fn init_logging(verbose: u8, quiet: bool, long_running: bool) {
    use tracing_subscriber::EnvFilter;
    let from_env = std::env::var("RUST_LOG").ok().filter(|spec| !spec.is_empty());
    if !long_running && verbose == 0 && from_env.is_none() {
        return;
    }
    let level = match (quiet, verbose) {
        (true, _) => "error",
        // rmcp warns of every error answer `ctx mcp` sends; the client has the answer.
        (false, 0) => "warn,rmcp=error",
        (false, 1) => "info",
        (false, 2) => "debug",
        (false, _) => "trace",
    };
    let filter = match from_env {
        Some(spec) => EnvFilter::new(spec),
        None => EnvFilter::new(level),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(
            io::IsTerminal::is_terminal(&io::stderr())
                && !settings::no_color(std::env::var_os("NO_COLOR").as_deref()),
        )
        .without_time()
        .with_target(false)
        .try_init();
}
