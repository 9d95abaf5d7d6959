//! `cargo xtask ci`: every check CI runs, in order, stopping at the first failure.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::{Result, cargo, ensure_cargo_tool, run_command};

/// One named check.
struct Step {
    name: &'static str,
    run: fn(&Path) -> Result,
}

const STEPS: &[Step] = &[
    Step { name: "fmt", run: fmt },
    Step { name: "clippy", run: clippy },
    Step { name: "cli minimal", run: cli_minimal },
    Step { name: "test", run: test },
    Step { name: "tree-sitter", run: tree_sitter },
    Step { name: "doc", run: doc },
    Step { name: "fuzz check", run: fuzz_check },
    Step { name: "deny", run: deny },
];

pub(crate) fn run(root: &Path) -> Result {
    let start = Instant::now();
    let mut done: Vec<(&str, Duration)> = Vec::new();
    for (n, step) in STEPS.iter().enumerate() {
        println!("\n==> [{}/{}] {}", n + 1, STEPS.len(), step.name);
        let step_start = Instant::now();
        let result = (step.run)(root);
        let took = step_start.elapsed();
        if let Err(err) = result {
            println!("<== {} FAILED after {}", step.name, seconds(took));
            return Err(format!("ci step `{}` failed: {err}", step.name).into());
        }
        println!("<== {} ok in {}", step.name, seconds(took));
        done.push((step.name, took));
    }
    println!("\nci: all {} steps passed in {}", STEPS.len(), seconds(start.elapsed()));
    for (name, took) in done {
        println!("  {name:<12} {:>9}", seconds(took));
    }
    Ok(())
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

fn fmt(root: &Path) -> Result {
    run_command(cargo(root).args(["fmt", "--all", "--check"]))
}

fn clippy(root: &Path) -> Result {
    run_command(cargo(root).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))
}

/// ctx-cli without its optional features (the servers, the picker): it must compile and lint
/// clean too; clippy checks every target, so this is also `cargo check` of that build.
fn cli_minimal(root: &Path) -> Result {
    run_command(cargo(root).args([
        "clippy",
        "-p",
        "ctx-cli",
        "--no-default-features",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))
}

fn test(root: &Path) -> Result {
    run_command(cargo(root).args(["test", "--workspace"]))
}

/// The tree-sitter symbols, a cargo feature off by default: ctx-suggest and ctx-cli linted
/// with the grammars, ctx-suggest's tests (those of each grammar among them) and the CLI's
/// tests of `--symbols tree-sitter` run with them.
fn tree_sitter(root: &Path) -> Result {
    run_command(cargo(root).args([
        "clippy",
        "-p",
        "ctx-suggest",
        "-p",
        "ctx-cli",
        "--all-targets",
        "--features",
        "ctx-suggest/tree-sitter,ctx-cli/tree-sitter",
        "--",
        "-D",
        "warnings",
    ]))?;
    run_command(cargo(root).args(["test", "-p", "ctx-suggest", "--features", "tree-sitter"]))?;
    run_command(cargo(root).args([
        "test",
        "-p",
        "ctx-cli",
        "--features",
        "tree-sitter",
        "--test",
        "testsuite",
        "tree_sitter",
    ]))
}

fn doc(root: &Path) -> Result {
    run_command(cargo(root).env("RUSTDOCFLAGS", "-Dwarnings").args([
        "doc",
        "--workspace",
        "--no-deps",
    ]))
}

fn fuzz_check(root: &Path) -> Result {
    run_command(cargo(root).args(["check", "--manifest-path", "fuzz/Cargo.toml"]))
}

fn deny(root: &Path) -> Result {
    ensure_cargo_tool(root, "deny", "cargo-deny")?;
    // There is no network for the advisory database: this script unpacks a bundled snapshot
    // where cargo-deny looks for it. It lives in the shared/ folder beside the clone.
    let advisory_db = root.join("../shared/tools/advisory-db");
    if advisory_db.is_file() {
        run_command(&mut std::process::Command::new(advisory_db))?;
    } else {
        println!(
            "note: {} not found; cargo deny uses whatever advisory database is installed",
            advisory_db.display()
        );
    }
    // `cargo deny --offline` reads the metadata of every platform's dependencies (windows-sys
    // and the like), which a build on this platform never downloads.
    run_command(cargo(root).args(["fetch"]))?;
    run_command(cargo(root).args(["deny", "--offline", "check"]))
}
