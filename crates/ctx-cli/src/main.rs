//! The `ctx` binary: command-line parsing, input, output and exit status around the ctx
//! libraries.

// The top-level input named on the command line is read here, before any sandbox exists.
#![allow(clippy::disallowed_methods)]

mod cli;
mod input;
mod parse;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(io::stderr(), "ctx: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Parse(args) => parse::run(&args),
    }
}

/// Whether the error comes from writing to a closed standard output (`ctx … | head`), which
/// is not a failure.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}
