//! `cargo xtask fuzz-parser` and `cargo xtask fuzz`: one cargo-fuzz target on the stable
//! toolchain, for a fixed time.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::{Result, display, ensure_cargo_tool};

pub(crate) fn run(root: &Path, target: &str, secs: u64) -> Result {
    let fuzz_dir = root.join("fuzz");
    let source = fuzz_dir.join("fuzz_targets").join(format!("{target}.rs"));
    if !source.is_file() {
        return Err(
            format!("no fuzz target `{target}`: {} does not exist", source.display()).into()
        );
    }
    ensure_cargo_tool(root, "fuzz", "cargo-fuzz")?;
    let artifacts = fuzz_dir.join("artifacts").join(target);
    println!("fuzzing `{target}` for {secs} s; crashes are saved in {}", artifacts.display());

    // Sanitizers need nightly; without one, cargo-fuzz builds on stable. `cargo` here is the
    // rustup proxy, so `RUSTUP_TOOLCHAIN` picks stable whichever toolchain started xtask.
    let mut cmd = Command::new("cargo");
    cmd.current_dir(&fuzz_dir)
        .env("RUSTUP_TOOLCHAIN", "stable")
        .args(["fuzz", "run", "--sanitizer", "none", target, "--"])
        .arg(format!("-max_total_time={secs}"))
        .stderr(Stdio::piped());
    println!("$ {}", display(&cmd));
    let mut child = cmd.spawn().map_err(|err| format!("cannot run `{}`: {err}", display(&cmd)))?;

    // libFuzzer reports on stderr: pass it through and keep its last `exec/s` report.
    let mut last_report = None;
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines() {
            let line = line?;
            eprintln!("{line}");
            if line.contains("exec/s") {
                last_report = Some(line);
            }
        }
    }
    let status = child.wait()?;

    if let Some(report) = last_report {
        println!("\nlibFuzzer's last report: {report}");
    }
    if status.success() {
        println!("fuzz target `{target}` ran {secs} s without a crash");
        Ok(())
    } else {
        Err(format!(
            "`{}` failed ({status}); crashes are saved in {}",
            display(&cmd),
            artifacts.display()
        )
        .into())
    }
}
