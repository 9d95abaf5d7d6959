//! What a token budget costs a directory expansion as a user runs it: the release
//! `ctx expand @src/` over the assembly tree (10 000 `.rs` files of the cargo registry) with the
//! limits off, each budgeted run beside the same expansion without a budget (`--max-tokens 0`)
//! in the same round, runs interleaved, all to /dev/null:
//! - a budget between the output's tokens and its bytes (half its bytes): every file must be
//!   counted, exactly, to know that all of them fit; the worst case;
//! - a small budget (8 000 tokens): most files are left out;
//! - no budget but the counts shown (`--tokens --format json`): every file counted for the
//!   records.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{
    Measured, Memory, Sizes, Value, cached, cargo_home, files_under, generate_source_tree, grouped,
    seconds,
};
use crate::Result;

pub(in crate::bench) const UNBUDGETED: &str = "process/expand_unbudgeted";
pub(in crate::bench) const BETWEEN: &str = "process/expand_budget_between";
pub(in crate::bench) const SMALL: &str = "process/expand_budget_small";
pub(in crate::bench) const COUNTED: &str = "process/expand_tokens_json";
pub(in crate::bench) const BETWEEN_PEAK: &str = "process/expand_budget_between_peak_rss";

pub(super) fn run(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let tree = data.join(format!("tree-{}", sizes.tree_files));
    let registry = cargo_home().map(|home| home.join("registry").join("src"));
    cached(&tree, || generate_source_tree(&tree, sizes.tree_files, registry.as_deref()))?;
    let files = files_under(&tree.join("src"))?;
    let mut bytes = 0;
    for file in &files {
        bytes += std::fs::metadata(tree.join(file))?.len();
    }
    let memory = Memory::probe(data);
    println!(
        "budget: {} rounds of `ctx expand @src/` with and without a budget in {}",
        sizes.runs,
        tree.display()
    );
    let between = (bytes / 2).to_string();
    let cases: [&[&str]; 4] = [
        &["--max-tokens", "0"],
        &["--max-tokens", &between],
        &["--max-tokens", "8000"],
        &["--max-tokens", "0", "--tokens", "--format", "json"],
    ];
    let mut times: [Vec<Duration>; 4] = Default::default();
    let mut peak = None;
    for run in 0..=sizes.runs {
        for (case, args) in cases.iter().enumerate() {
            let mut cmd = Command::new(ctx);
            cmd.args(["expand", "@src/", "--max-files", "0", "--max-lines", "0"])
                .args(["--max-output-bytes", "0", "-q"])
                .args(*args)
                .current_dir(&tree);
            let (time, rss) = memory.run_any(cmd, data)?;
            if run > 0 {
                times[case].push(time);
                if case == 1 {
                    peak = peak.max(rss);
                }
            }
        }
    }
    let detail = |what: &str| {
        format!("{} .rs files, {what}, median of {}", grouped(files.len()), sizes.runs)
    };
    let [none, half, small, json] = &times;
    let mut measured = vec![
        seconds(UNBUDGETED, none, Some(bytes), None),
        seconds(BETWEEN, half, Some(bytes), Some(detail(&format!("--max-tokens {between}")))),
        seconds(SMALL, small, Some(bytes), Some(detail("--max-tokens 8000"))),
        seconds(COUNTED, json, Some(bytes), Some(detail("--tokens --format json"))),
    ];
    if let Some(peak) = peak {
        measured.push(Measured {
            name: BETWEEN_PEAK.to_owned(),
            value: Value::Bytes(peak),
            shown: format!("{:.1} MiB", peak as f64 / crate::bench::MIB),
            detail: Some(format!("{}, max of {}", memory.describe(), sizes.runs)),
        });
    }
    Ok(measured)
}
