//! The command line, declared with clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Assemble the context an LLM sees: expand file references in prompts and rule documents.
#[derive(Debug, Parser)]
#[command(name = "ctx", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Print the scanned items of one text with spans, for debugging and tests.
    Parse(ParseArgs),
}

/// Output formats of `ctx parse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ParseFormat {
    /// One JSON object with `items` and `diagnostics`.
    Json,
    /// One line per item, as in the test fixtures.
    Text,
}

#[derive(Debug, Args)]
pub(crate) struct ParseArgs {
    /// The file to scan; `-` reads standard input.
    pub(crate) file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub(crate) format: ParseFormat,
    /// Recognise nothing inside code blocks and spans is the default; this turns it off.
    #[arg(long)]
    pub(crate) no_code_skip: bool,
    /// Do not recognise `@path` mentions.
    #[arg(long)]
    pub(crate) no_mentions: bool,
    /// Do not recognise `@[...]` includes.
    #[arg(long)]
    pub(crate) no_includes: bool,
    /// Do not recognise `@{...}` directives.
    #[arg(long)]
    pub(crate) no_directives: bool,
}
