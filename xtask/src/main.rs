//! Project automation for the ctx workspace, run as `cargo xtask <command>`.
//!
//! Commands:
//! - `ci`: fmt, clippy, tests, docs, a check of `fuzz/`, and `cargo deny`, stopping at the first
//!   failure;
//! - `tidy`: the repository's conventions (see `tidy.rs`), also enforced by `cargo test`;
//! - `bench [--quick] [FILTER]`: the divan benchmarks of every crate that has a `benches/`
//!   directory and the process-level measurements of the release `ctx`, summed up in one table
//!   of ratios to baselines of the same run (see `bench.rs`);
//! - `fuzz-parser [--time SECS] [TARGET]` and `fuzz TARGET [--time SECS]`: cargo-fuzz on stable.
//!
//! It depends on std only and runs `$CARGO`, the cargo that started it (cargo-xtask's
//! convention).

// A command-line tool: it prints, and it reads the repository directly (ctx-fs is for ctx).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

mod bench;
mod ci;
mod fuzz;
mod rooms;
mod tidy;

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The error of a command: a message for the user.
type Error = Box<dyn std::error::Error>;
type Result<T = (), E = Error> = std::result::Result<T, E>;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci                                  fmt, clippy, test, doc, check fuzz/, cargo deny
  tidy                                check the repository's conventions
  bench [--quick] [FILTER]            run the benchmarks (divan's of crates/*/benches, then
                                      the release `ctx` on generated trees) and print one
                                      table of ratios to baselines of the same run; --quick:
                                      fewer samples; FILTER `process`: those of `ctx` only
  fuzz-parser [--time SECS] [TARGET]  fuzz the scanner (target `scan`, 60 s by default)
  fuzz TARGET [--time SECS]           fuzz any target of fuzz/fuzz_targets (60 s by default)
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result {
    let root = project_root();
    let Some((command, rest)) = args.split_first() else {
        print!("{USAGE}");
        return Err("no command given".into());
    };
    match command.as_str() {
        "ci" => {
            no_more_args(rest)?;
            ci::run(&root)
        }
        "tidy" => {
            no_more_args(rest)?;
            let problems = tidy::check(&root);
            for problem in &problems {
                eprintln!("{problem}");
            }
            if problems.is_empty() {
                println!("tidy: ok");
                Ok(())
            } else {
                Err(format!("tidy found {} problem(s)", problems.len()).into())
            }
        }
        "bench" => {
            let args = bench::Args::parse(rest)?;
            bench::run(&root, &args)
        }
        "fuzz-parser" => {
            let (target, secs) = positional_and_time(rest, 60)?;
            fuzz::run(&root, target.as_deref().unwrap_or("scan"), secs)
        }
        "fuzz" => {
            let (target, secs) = positional_and_time(rest, 60)?;
            let target = target.ok_or("`cargo xtask fuzz` needs a target name")?;
            fuzz::run(&root, &target, secs)
        }
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => {
            print!("{USAGE}");
            Err(format!("unknown command `{other}`").into())
        }
    }
}

fn no_more_args(rest: &[String]) -> Result {
    match rest.first() {
        None => Ok(()),
        Some(arg) => Err(format!("unexpected argument `{arg}`").into()),
    }
}

/// Parses `[--time SECS] [NAME]` in any order; `--time` defaults to `default_secs`.
fn positional_and_time(rest: &[String], default_secs: u64) -> Result<(Option<String>, u64)> {
    let mut name = None;
    let mut secs = default_secs;
    let mut args = rest.iter();
    while let Some(arg) = args.next() {
        let value = if arg == "--time" {
            Some(args.next().ok_or("`--time` needs a number of seconds")?.as_str())
        } else {
            arg.strip_prefix("--time=")
        };
        if let Some(value) = value {
            secs = value.parse().map_err(|_| format!("`--time {value}` is not a whole number"))?;
        } else if arg.starts_with('-') {
            return Err(format!("unknown option `{arg}`").into());
        } else if name.replace(arg.clone()).is_some() {
            return Err(format!("unexpected argument `{arg}`").into());
        }
    }
    Ok((name, secs))
}

/// The repository root: the parent of xtask/.
fn project_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().expect("xtask/ lies inside the repository").to_path_buf()
}

/// A `cargo` command run from the repository root, with the cargo that started xtask.
fn cargo(root: &Path) -> Command {
    let program = env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(program);
    cmd.current_dir(root);
    cmd
}

/// Runs `cmd`, printing it first; a non-zero exit is an error.
fn run_command(cmd: &mut Command) -> Result {
    println!("$ {}", display(cmd));
    let status = cmd.status().map_err(|err| format!("cannot run `{}`: {err}", display(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed: {status}", display(cmd)).into())
    }
}

/// The command line of `cmd`, with the environment it sets, for messages.
fn display(cmd: &Command) -> String {
    let mut parts = Vec::new();
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            parts.push(format!("{}={}", key.to_string_lossy(), value.to_string_lossy()));
        }
    }
    let program = Path::new(cmd.get_program());
    // `$CARGO` is a full path into the toolchain; `cargo` reads better.
    let program = match program.file_stem() {
        Some(stem) if stem == "cargo" => "cargo".into(),
        _ => program.to_string_lossy(),
    };
    parts.push(program.into_owned());
    parts.extend(cmd.get_args().map(|arg| arg.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// Makes sure `cargo <subcommand>` exists, installing `krate` with `cargo install --locked` if not.
fn ensure_cargo_tool(root: &Path, subcommand: &str, krate: &str) -> Result {
    let found = cargo(root)
        .args([subcommand, "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if found {
        return Ok(());
    }
    println!("`cargo {subcommand}` is missing; installing {krate} (this takes a few minutes once)");
    run_command(cargo(root).args(["install", "--locked", krate]))
}

#[cfg(test)]
mod tests {
    use super::positional_and_time;

    fn parse(args: &[&str]) -> Result<(Option<String>, u64), String> {
        let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        positional_and_time(&args, 60).map_err(|err| err.to_string())
    }

    #[test]
    fn arguments() {
        assert_eq!(parse(&[]), Ok((None, 60)));
        assert_eq!(parse(&["scan"]), Ok((Some("scan".into()), 60)));
        assert_eq!(parse(&["--time", "5", "scan"]), Ok((Some("scan".into()), 5)));
        assert_eq!(parse(&["preprocess", "--time=7"]), Ok((Some("preprocess".into()), 7)));
        assert!(parse(&["--time"]).is_err());
        assert!(parse(&["--time", "x"]).is_err());
        assert!(parse(&["a", "b"]).is_err());
        assert!(parse(&["--jobs", "2"]).is_err());
    }
}
