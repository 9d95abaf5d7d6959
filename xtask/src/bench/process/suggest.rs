//! `cargo xtask bench suggest`: the suggestion index of the release `ctx` on a tree of 10 000
//! `.rs` files (the generator of the assembly tree, in a tree of its own so that one file can be
//! changed):
//!
//! - a cold `ctx index` (empty cache directory), beside `rg --files` (`find . -type f` where
//!   ripgrep is missing) plus `cat` of the same files, and its peak resident set;
//! - a warm `ctx suggest` (index stored, nothing changed), process start included;
//! - a warm `ctx expand --auto --max-tokens 8000` (the fitter: ranked, measured, assembled);
//! - `ctx index` after one file changed;
//! - the size of the stored index.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::{
    Measured, Memory, Sizes, Value, cached, cargo_home, files_under, generate_source_tree, grouped,
    megabytes, seconds, timed,
};
use crate::Result;

pub(in crate::bench) const INDEX_COLD: &str = "process/suggest_index_cold";
pub(in crate::bench) const LIST_CAT: &str = "process/suggest_list_cat";
pub(in crate::bench) const QUERY_WARM: &str = "process/suggest_query_warm";
pub(in crate::bench) const AUTO_WARM: &str = "process/suggest_auto_8k_warm";
pub(in crate::bench) const INDEX_UPDATE: &str = "process/suggest_index_update";
pub(in crate::bench) const INDEX_BYTES: &str = "process/suggest_index_bytes";
pub(in crate::bench) const INDEX_PEAK: &str = "process/suggest_index_peak_rss";

/// A prompt with words that real Rust sources use.
const PROMPT: &str =
    "fix the error when parsing an empty configuration file with a custom buffer size";

pub(super) fn run(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let tree = data.join(format!("suggest-{}", sizes.tree_files));
    let registry = cargo_home().map(|home| home.join("registry").join("src"));
    let source =
        cached(&tree, || generate_source_tree(&tree, sizes.tree_files, registry.as_deref()))?;
    let files = files_under(&tree.join("src"))?;
    let cache = data.join("suggest-cache");
    let memory = Memory::probe(data);
    let lister = if Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success()) {
        "rg --files"
    } else {
        "find . -type f"
    };
    println!(
        "suggest: {} runs each of a cold `ctx index`, `{lister}` + `cat`, a warm `ctx suggest` and \
         an update after one change, in {}",
        sizes.runs,
        tree.display()
    );
    let index = |cmd: &mut Command| {
        cmd.arg("index").current_dir(&tree).env("CTX_CACHE_DIR", &cache);
    };
    let (mut cold, mut list_cat, mut warm, mut update) = (vec![], vec![], vec![], vec![]);
    let mut auto = vec![];
    let mut peak = None;
    let changed = tree.join("src/d00/f00000.rs");
    let original = fs::read(&changed)?;
    for run in 0..=sizes.runs {
        if cache.exists() {
            fs::remove_dir_all(&cache)?;
        }
        let mut cmd = Command::new(ctx);
        index(&mut cmd);
        let (time, rss) = memory.run(cmd, data, None)?;
        let (listing, names) = timed(Command::new("sh").args(["-c", lister]).current_dir(&tree))?;
        let names: Vec<&str> = names.lines().collect();
        let mut base = listing;
        for chunk in names.chunks(1000) {
            base += timed(Command::new("cat").args(chunk).current_dir(&tree))?.0;
        }
        let (query, out) = timed(
            Command::new(ctx)
                .args(["suggest", PROMPT])
                .current_dir(&tree)
                .env("CTX_CACHE_DIR", &cache),
        )?;
        if out.trim().is_empty() {
            return Err(format!("`ctx suggest` found nothing in {}", tree.display()).into());
        }
        let (fitted, out) = timed(
            Command::new(ctx)
                .args(["expand", "--auto", "--max-tokens", "8000", PROMPT])
                .current_dir(&tree)
                .env("CTX_CACHE_DIR", &cache),
        )?;
        if !out.contains("suggested") {
            return Err(
                format!("`ctx expand --auto` attached nothing in {}", tree.display()).into()
            );
        }
        let mut content = original.clone();
        content.extend_from_slice(format!("\n// changed by the benchmark, run {run}\n").as_bytes());
        fs::write(&changed, &content)?;
        let mut cmd = Command::new(ctx);
        index(&mut cmd);
        let result = timed(&mut cmd);
        fs::write(&changed, &original)?;
        let (changed_time, report) = result?;
        if !report.contains(", 1 read,") {
            return Err(
                format!("`ctx index` after one change read more than one file:\n{report}").into()
            );
        }
        if run > 0 {
            cold.push(time);
            list_cat.push(base);
            warm.push(query);
            auto.push(fitted);
            update.push(changed_time);
            peak = peak.max(rss);
        }
    }
    // The index as the last update stored it.
    let index_bytes: u64 = fs::read_dir(&cache)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "idx"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    let mut bytes = 0;
    for file in &files {
        bytes += fs::metadata(tree.join(file))?.len();
    }
    let detail = format!(
        "{} .rs files ({:.0} MB, {source}), median of {}",
        grouped(files.len()),
        megabytes(bytes),
        sizes.runs
    );
    let mut measured = vec![
        seconds(INDEX_COLD, &cold, Some(bytes), Some(detail)),
        seconds(LIST_CAT, &list_cat, Some(bytes), Some(lister.to_owned())),
        seconds(QUERY_WARM, &warm, None, None),
        seconds(AUTO_WARM, &auto, None, None),
        seconds(INDEX_UPDATE, &update, None, None),
        Measured {
            name: INDEX_BYTES.to_owned(),
            value: Value::Bytes(index_bytes),
            shown: format!("{:.1} MiB", index_bytes as f64 / crate::bench::MIB),
            detail: Some(format!(
                "{:.0}% of the sources",
                100.0 * index_bytes as f64 / bytes.max(1) as f64
            )),
        },
    ];
    if let Some(peak) = peak {
        measured.push(Measured {
            name: INDEX_PEAK.to_owned(),
            value: Value::Bytes(peak),
            shown: format!("{:.1} MiB", peak as f64 / crate::bench::MIB),
            detail: Some(format!("{}, max of {}", memory.describe(), sizes.runs)),
        });
    }
    Ok(measured)
}
