//! What a token budget costs a directory expansion as a user runs it: the release
//! `ctx expand @src/` over the assembly tree (10 000 `.rs` files of the cargo registry) with the
//! limits off, each budgeted run beside the same expansion without a budget (`--max-tokens 0`)
//! in the same round, runs interleaved, all to /dev/null:
//! - a budget between the output's tokens and its bytes (half its bytes): every file must be
//!   counted, exactly, to know that all of them fit; the worst case;
//! - a small budget (8 000 tokens): most files are left out;
//! - no budget but the counts shown (`--tokens --format json`): every file counted for the
//!   records.
//!
//! Each counting case runs cold (an empty cache folder, so no count is remembered) and, for
//! the budget between and the counts shown, warm too (the cache folder of the runs before, so
//! the counts of the files' texts are remembered: `ctx_tokens::KnownCounts`).

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
pub(in crate::bench) const BETWEEN_WARM: &str = "process/expand_budget_between_warm";
pub(in crate::bench) const COUNTED_WARM: &str = "process/expand_tokens_json_warm";
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
    // Each case's arguments, and whether its cache folder is kept from run to run (warm) or
    // emptied before each (cold).
    let cases: [(&[&str], bool); 6] = [
        (&["--max-tokens", "0"], false),
        (&["--max-tokens", &between], false),
        (&["--max-tokens", "8000"], false),
        (&["--max-tokens", "0", "--tokens", "--format", "json"], false),
        (&["--max-tokens", &between], true),
        (&["--max-tokens", "0", "--tokens", "--format", "json"], true),
    ];
    let (cold_cache, warm_cache) = (data.join("budget-cache-cold"), data.join("budget-cache-warm"));
    let _ = std::fs::remove_dir_all(&warm_cache);
    let mut times: [Vec<Duration>; 6] = Default::default();
    let mut peak = None;
    for run in 0..=sizes.runs {
        for (case, (args, warm)) in cases.iter().enumerate() {
            let cache = if *warm { &warm_cache } else { &cold_cache };
            if !warm {
                let _ = std::fs::remove_dir_all(cache);
            }
            let mut cmd = Command::new(ctx);
            cmd.args(["expand", "@src/", "--max-files", "0", "--max-lines", "0"])
                .args(["--max-output-bytes", "0", "-q"])
                .args(*args)
                .env("CTX_CACHE_DIR", cache)
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
    let _ = std::fs::remove_dir_all(&cold_cache);
    let detail = |what: &str| {
        format!("{} .rs files, {what}, median of {}", grouped(files.len()), sizes.runs)
    };
    let [none, half, small, json, half_warm, json_warm] = &times;
    let between_args = format!("--max-tokens {between}");
    let mut measured = vec![
        seconds(UNBUDGETED, none, Some(bytes), None),
        seconds(BETWEEN, half, Some(bytes), Some(detail(&between_args))),
        seconds(SMALL, small, Some(bytes), Some(detail("--max-tokens 8000"))),
        seconds(COUNTED, json, Some(bytes), Some(detail("--tokens --format json"))),
        seconds(BETWEEN_WARM, half_warm, Some(bytes), Some(detail(&between_args))),
        seconds(COUNTED_WARM, json_warm, Some(bytes), Some(detail("--tokens --format json"))),
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
