//! Compares the scanner's symbols with tree-sitter's tags over every source file of a tree:
//! per language, the share of tree-sitter's definitions the scanner finds (same name and first
//! line; and the same last line too), the share of the scanner's that tree-sitter has, and the
//! same for distinct referenced names; then the time each took.
//!
//! `cargo run --release -p ctx-suggest --example symbols -- DIR [--show N]`: `--show` lists
//! the definitions of N files where the two differ (with `SHOW_REFS=1`, the referenced names
//! the scanner misses instead).
#![allow(clippy::disallowed_methods, clippy::print_stdout, missing_docs)]

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use ctx_suggest::symbols::{self, Lang};

#[derive(Default)]
struct Tally {
    files: usize,
    bytes: usize,
    ts_defs: usize,
    scan_defs: usize,
    found: usize,
    same_end: usize,
    true_scan: usize,
    ts_refs: usize,
    scan_refs: usize,
    common_refs: usize,
    ts_time: Duration,
    scan_time: Duration,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show: usize =
        args.iter().position(|a| a == "--show").map_or(0, |i| args[i + 1].parse().unwrap());
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut shown = 0;
    for entry in walk(std::path::Path::new(&args[0])) {
        let path = entry.to_string_lossy().into_owned();
        let lang = Lang::of(&path);
        if !symbols::has_grammar(lang) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&entry) else { continue };
        let t = Instant::now();
        let ts = symbols::extract(lang, &text);
        let ts_time = t.elapsed();
        let t = Instant::now();
        let sc = symbols::scan(lang, &text);
        let scan_time = t.elapsed();
        let tally = tallies.entry(format!("{lang:?}")).or_default();
        tally.files += 1;
        tally.bytes += text.len();
        tally.ts_time += ts_time;
        tally.scan_time += scan_time;
        let key = |d: &symbols::Def| (d.name.clone(), d.start);
        let ts_defs: HashSet<_> = ts.defs.iter().map(key).collect();
        let sc_defs: HashSet<_> = sc.defs.iter().map(key).collect();
        tally.ts_defs += ts_defs.len();
        tally.scan_defs += sc_defs.len();
        tally.found += ts_defs.intersection(&sc_defs).count();
        tally.true_scan += sc_defs.intersection(&ts_defs).count();
        let ends: HashSet<_> = ts.defs.iter().map(|d| (d.name.clone(), d.start, d.end)).collect();
        tally.same_end +=
            sc.defs.iter().filter(|d| ends.contains(&(d.name.clone(), d.start, d.end))).count();
        let ts_refs: HashSet<&String> = ts.refs.iter().collect();
        let sc_refs: HashSet<&String> = sc.refs.iter().collect();
        tally.ts_refs += ts_refs.len();
        tally.scan_refs += sc_refs.len();
        tally.common_refs += ts_refs.intersection(&sc_refs).count();
        if shown < show {
            let missing: Vec<_> = ts_defs.difference(&sc_defs).collect();
            let extra: Vec<_> = sc_defs.difference(&ts_defs).collect();
            let ends_differ: Vec<_> = sc
                .defs
                .iter()
                .filter(|d| {
                    ts_defs.contains(&key(d)) && !ends.contains(&(d.name.clone(), d.start, d.end))
                })
                .map(|d| {
                    let t = ts.defs.iter().find(|t| t.name == d.name && t.start == d.start);
                    (d.name.clone(), d.start, d.end, t.map(|t| t.end))
                })
                .collect();
            if std::env::var_os("SHOW_REFS").is_some() {
                let missed: Vec<_> = ts_refs.difference(&sc_refs).collect();
                if !missed.is_empty() {
                    println!("{path}\n  refs missed {missed:?}");
                }
            } else if !missing.is_empty() || !extra.is_empty() || !ends_differ.is_empty() {
                shown += 1;
                println!(
                    "{path}\n  missing {missing:?}\n  extra {extra:?}\n  ends (scan, ts) {ends_differ:?}"
                );
            }
        }
    }
    println!(
        "{:<11} {:>6} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8}",
        "lang",
        "files",
        "MB",
        "ts defs",
        "scan",
        "recall",
        "prec",
        "ends",
        "refs r",
        "refs p",
        "ts MB/s",
        "scan MB/s"
    );
    for (lang, t) in &tallies {
        let mb = t.bytes as f64 / 1e6;
        println!(
            "{lang:<11} {:>6} {:>8.2} {:>8} {:>8} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>7.3} {:>8.1} {:>8.1}",
            t.files,
            mb,
            t.ts_defs,
            t.scan_defs,
            t.found as f64 / t.ts_defs.max(1) as f64,
            t.true_scan as f64 / t.scan_defs.max(1) as f64,
            t.same_end as f64 / t.found.max(1) as f64,
            t.common_refs as f64 / t.ts_refs.max(1) as f64,
            t.common_refs as f64 / t.scan_refs.max(1) as f64,
            mb / t.ts_time.as_secs_f64(),
            mb / t.scan_time.as_secs_f64(),
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if !matches!(
                    p.file_name().and_then(|n| n.to_str()),
                    Some(".git" | "node_modules" | "target")
                ) {
                    stack.push(p);
                }
            } else if ft.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
