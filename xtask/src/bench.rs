//! `cargo xtask bench [--quick] [FILTER]`: the divan benchmarks of every crate with a `benches/`
//! directory, passed through as they run, then the process-level measurements of the release
//! `ctx` binary (`process.rs`), then one table: each measured thing beside its baseline of the
//! same run, with their ratio and the target where the issues set one.
//!
//! The pairing of a measurement with its baseline is [`PAIRS`]; ratios come from the medians that
//! divan printed (or that `process.rs` measured) in this run, never from numbers of another run.
//! `--quick` passes divan `--sample-count 10` and times each process-level
//! command 3 times instead of 5 (on the same trees: generating them takes seconds, once).
//! A FILTER goes to divan as its filter; the process measurements run when there is no FILTER or
//! it is `process` (then divan is not run at all).

mod process;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use crate::{Result, cargo, display};

/// The command line of `cargo xtask bench`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Args {
    /// Fewer samples and runs: the whole run in a few minutes.
    pub(crate) quick: bool,
    /// Divan's filter; `process` selects the process-level measurements only.
    pub(crate) filter: Option<String>,
}

impl Args {
    /// Parses `[--quick] [FILTER]` in any order.
    pub(crate) fn parse(rest: &[String]) -> Result<Args> {
        let mut args = Args::default();
        for arg in rest {
            if arg == "--quick" {
                args.quick = true;
            } else if arg.starts_with('-') {
                return Err(format!("unknown option `{arg}`").into());
            } else if args.filter.replace(arg.clone()).is_some() {
                return Err(format!("unexpected argument `{arg}`").into());
            }
        }
        Ok(args)
    }
}

/// The filter that selects the process-level measurements only.
const PROCESS_FILTER: &str = "process";

/// The filter that selects the suggestion measurements only (`docs/suggest.md`).
const SUGGEST_FILTER: &str = "suggest";

/// The filter that selects the suggestion index at scale only (`docs/benchmarks.md`).
const SCALE_FILTER: &str = "scale";

/// The filter that selects the conversation measurements only (`docs/conversation.md`).
const MESSAGES_FILTER: &str = "messages";

/// The filter that selects the agents' rules measurement only (`docs/agents.md`).
const RULES_FILTER: &str = "rules";

/// The filter that selects the source index's benches, in process and as a user runs it.
const SOURCES_FILTER: &str = "sources";

/// The filter that selects the token budget's measurements only (`docs/benchmarks.md`).
const BUDGET_FILTER: &str = "budget";

/// The filter that selects the attack shapes only (`docs/security.md`).
const ATTACKS_FILTER: &str = "attacks";

pub(crate) fn run(root: &Path, args: &Args) -> Result {
    let mut measured = Vec::new();
    if args.filter.as_deref() == Some(SCALE_FILTER) {
        return process::run_scale(root, args.quick);
    }
    if args.filter.as_deref() == Some(SUGGEST_FILTER) {
        measured.extend(process::run_suggest(root, args.quick)?);
    } else if args.filter.as_deref() == Some(MESSAGES_FILTER) {
        measured.extend(process::run_messages(root, args.quick)?);
    } else if args.filter.as_deref() == Some(RULES_FILTER) {
        measured.extend(process::run_rules(root, args.quick)?);
    } else if args.filter.as_deref() == Some(BUDGET_FILTER) {
        measured.extend(process::run_budget(root, args.quick)?);
    } else if args.filter.as_deref() == Some(ATTACKS_FILTER) {
        measured.extend(process::run_attacks(root, args.quick)?);
    } else if args.filter.as_deref() != Some(PROCESS_FILTER) {
        measured.extend(run_divan(root, args)?);
    }
    if args.filter.as_deref().is_none_or(|filter| filter == PROCESS_FILTER) {
        measured.extend(process::run(root, args.quick)?);
    }
    if args.filter.as_deref() == Some(SOURCES_FILTER) {
        // The command as a user runs it, beside the library's figures above.
        measured.extend(process::run_sources(root, args.quick)?);
    }
    let lines = pair(&measured);
    if lines.is_empty() {
        println!("\nno measurement of the summary table ran");
    } else {
        println!("\nsummary: medians of this run, each beside its baseline of the same run");
        print!("{}", render(&lines));
    }
    Ok(())
}

/// Runs `cargo bench` over every crate with benches, passing its output through, and returns the
/// medians of divan's tables.
fn run_divan(root: &Path, args: &Args) -> Result<Vec<Measured>> {
    let packages = packages_with_benches(root)?;
    if packages.is_empty() {
        println!("no crate under crates/ has a benches/ directory");
        return Ok(Vec::new());
    }
    let mut cmd = cargo(root);
    cmd.arg("bench");
    for (package, _) in &packages {
        cmd.args(["-p", package]);
    }
    // The bench targets by name rather than `--benches`, which would also run each lib target
    // under libtest: that prints its ignored tests and rejects divan's options.
    for (_, benches) in &packages {
        for bench in benches {
            cmd.args(["--bench", bench]);
        }
    }
    if args.quick || args.filter.is_some() {
        cmd.arg("--");
    }
    if args.quick {
        cmd.args(["--sample-count", "10"]);
    }
    if let Some(filter) = &args.filter {
        cmd.arg(filter);
    }
    cmd.stdout(Stdio::piped());
    println!("$ {}", display(&cmd));
    let mut child = cmd.spawn().map_err(|err| format!("cannot run `{}`: {err}", display(&cmd)))?;
    let mut output = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            println!("{line}");
            output.push(line);
        }
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("`{}` failed: {status}", display(&cmd)).into());
    }
    Ok(parse_divan(&output).iter().filter_map(Row::measured).collect())
}

/// The package names of the crates under crates/ that have a `benches/` directory, each with the
/// names of its bench targets (the `.rs` files of `benches/`), sorted.
fn packages_with_benches(root: &Path) -> Result<Vec<(String, Vec<String>)>> {
    let mut packages = Vec::new();
    for entry in fs::read_dir(root.join("crates"))? {
        let dir = entry?.path();
        if !dir.join("benches").is_dir() {
            continue;
        }
        let mut benches = Vec::new();
        for bench in fs::read_dir(dir.join("benches"))? {
            let path = bench?.path();
            if path.extension().is_some_and(|ext| ext == "rs")
                && let Some(stem) = path.file_stem()
            {
                benches.push(stem.to_string_lossy().into_owned());
            }
        }
        benches.sort();
        let manifest = fs::read_to_string(dir.join("Cargo.toml"))?;
        match crate::tidy::package_name(&manifest) {
            Some(name) if !benches.is_empty() => packages.push((name, benches)),
            Some(_) => {}
            None => return Err(format!("no package name in {}/Cargo.toml", dir.display()).into()),
        }
    }
    packages.sort();
    Ok(packages)
}

/// One benchmark case of divan's output.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    /// `binary/function/argument`.
    name: String,
    median: String,
    /// The median of the counter line below the case (`1.2 GB/s`), if it has one.
    throughput: Option<String>,
}

impl Row {
    /// The row as a measurement; `None` when its median is not a time divan would print.
    fn measured(&self) -> Option<Measured> {
        let seconds = parse_seconds(&self.median)?;
        Some(Measured {
            name: self.name.clone(),
            value: Value::Seconds(seconds),
            shown: self.throughput.clone().unwrap_or_else(|| self.median.clone()),
            detail: None,
        })
    }
}

/// Reads divan's tables: a header `NAME  fastest │ slowest │ median │ …` fixes the width of the
/// name column, whose tree (`├─ `, `│  `) gives each case's depth; a line with an empty name is
/// a counter line of the case above it.
fn parse_divan(lines: &[String]) -> Vec<Row> {
    const MEDIAN: usize = 2;
    let mut rows: Vec<Row> = Vec::new();
    let mut width = None;
    let mut path: Vec<String> = Vec::new();
    for line in lines {
        let chars: Vec<char> = line.chars().collect();
        if line.contains("fastest") && line.contains("median") && line.contains('│') {
            let at = line.find("fastest").unwrap_or(0);
            width = Some(line[..at].chars().count());
            path = vec![line[..at].trim().to_string()];
            continue;
        }
        let Some(width) = width else { continue };
        if line.trim().is_empty() || chars.len() <= width || !line.contains('│') {
            continue;
        }
        let name_part: String = chars[..width].iter().collect();
        let values: String = chars[width..].iter().collect();
        let columns: Vec<&str> = values.split('│').map(str::trim).collect();
        let unindented = name_part.trim_start_matches(TREE);
        let name = unindented.trim();
        let median = columns.get(MEDIAN).copied().unwrap_or("");
        if name.is_empty() {
            if let Some(row) = rows.last_mut().filter(|row| row.throughput.is_none())
                && !median.is_empty()
            {
                row.throughput = Some(median.to_string());
            }
            continue;
        }
        let depth = ((width - unindented.chars().count()) / 3).max(1);
        path.truncate(depth);
        path.push(name.to_string());
        if !median.is_empty() {
            rows.push(Row { name: path.join("/"), median: median.to_string(), throughput: None });
        }
    }
    rows
}

/// The characters divan draws its tree with: each level of depth takes three.
const TREE: [char; 5] = ['│', '├', '╰', '─', ' '];

/// A time as divan prints it (`24.71 µs`, `2.114 ms`, `1.5 s`), in seconds.
fn parse_seconds(text: &str) -> Option<f64> {
    let (number, unit) = text.trim().split_once(' ')?;
    let number: f64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "ps" => 1e-12,
        "ns" => 1e-9,
        "µs" | "μs" | "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => return None,
    };
    Some(number * scale)
}

/// One figure of this run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Measured {
    /// divan's `binary/function/argument`, or `process/…` for the measurements of `process.rs`.
    pub(crate) name: String,
    pub(crate) value: Value,
    /// What the table shows: divan's median throughput when it counted bytes, else the value.
    pub(crate) shown: String,
    /// Words added to the row's label, such as the size of a generated tree.
    pub(crate) detail: Option<String>,
}

/// The quantity of a [`Measured`]: a median wall-clock time, or a peak resident set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    Seconds(f64),
    Bytes(u64),
}

impl Value {
    fn amount(self) -> f64 {
        match self {
            Value::Seconds(seconds) => seconds,
            // Bytes fit in f64 exactly far beyond any resident set.
            #[allow(clippy::cast_precision_loss)]
            Value::Bytes(bytes) => bytes as f64,
        }
    }
}

/// A row of the summary table: a measurement, its baseline, and the target of their ratio.
struct Pair {
    label: &'static str,
    bench: &'static str,
    baseline: Option<Baseline>,
    target: Option<Target>,
}

struct Baseline {
    label: &'static str,
    bench: &'static str,
    ratio: Ratio,
}

/// How a ratio is taken from two median times.
#[derive(Clone, Copy)]
enum Ratio {
    /// The baseline's time over the measurement's: its share of the baseline's speed (a
    /// throughput ratio; above 1 when it is faster).
    Speed,
    /// The measurement's time over the baseline's: how many times the baseline's time it takes.
    Time,
}

#[derive(Clone, Copy)]
enum Target {
    RatioAtMost(f64),
    RatioAtLeast(f64),
    /// A peak resident set of at most this many MiB.
    MibAtMost(f64),
    /// A median time of at most this many seconds.
    SecondsAtMost(f64),
}

/// What is compared with what, in the order of the table.
const PAIRS: &[Pair] = &[
    Pair {
        label: "scan prose (16 MB)",
        bench: "scan/scan/prose",
        baseline: Some(Baseline {
            label: "memchr",
            bench: "scan/memchr/prose",
            ratio: Ratio::Speed,
        }),
        target: None,
    },
    Pair {
        label: "scan dense (1 MB)",
        bench: "scan/scan/dense",
        baseline: Some(Baseline {
            label: "memchr",
            bench: "scan/memchr/dense",
            ratio: Ratio::Speed,
        }),
        target: None,
    },
    Pair {
        label: "preprocess (1 MB dense)",
        bench: "preprocess/scan_and_preprocess",
        baseline: Some(Baseline {
            label: "scan alone",
            bench: "preprocess/scan",
            ratio: Ratio::Speed,
        }),
        target: None,
    },
    Pair {
        label: "sandbox read 3000 files",
        bench: "read/sandbox_fresh",
        baseline: Some(Baseline {
            label: "std::fs::read",
            bench: "read/std_read",
            ratio: Ratio::Time,
        }),
        target: None,
    },
    Pair {
        label: "sandbox cache hit 3000 files",
        bench: "read/sandbox_cached",
        baseline: Some(Baseline {
            label: "std::fs::read",
            bench: "read/std_read",
            ratio: Ratio::Time,
        }),
        target: None,
    },
    Pair {
        label: "assemble directory (3000 .rs files)",
        bench: "assemble/directory",
        baseline: Some(Baseline {
            label: "cat",
            bench: "assemble/cat_baseline",
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(1.5)),
    },
    Pair {
        label: "assemble directory + tokens",
        bench: "assemble/directory_tokens",
        baseline: Some(Baseline {
            label: "cat",
            bench: "assemble/cat_baseline",
            ratio: Ratio::Time,
        }),
        target: None,
    },
    Pair {
        label: "assemble directory, budget of half its tokens",
        bench: "assemble/directory_budget",
        baseline: Some(Baseline {
            label: "no budget",
            bench: "assemble/directory",
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(2.0)),
    },
    Pair {
        label: "o200k count (4 MiB of .rs, one thread)",
        bench: "tokens/count",
        baseline: Some(Baseline {
            label: "bpe-openai",
            bench: "tokens/bpe_openai",
            ratio: Ratio::Speed,
        }),
        target: None,
    },
    Pair {
        label: "10 000 includes",
        bench: "assemble/many_includes",
        baseline: None,
        target: None,
    },
    Pair {
        label: "10 000 includes after 900 000 lines",
        bench: "assemble/many_includes_deep",
        baseline: Some(Baseline {
            label: "at the top",
            bench: "assemble/many_includes",
            ratio: Ratio::Time,
        }),
        target: None,
    },
    Pair {
        label: "source index, 300 projects, 15 000 files, cold",
        bench: "sources/sources_cold",
        baseline: Some(Baseline {
            label: "cat of the project files",
            bench: "sources/sources_cat_baseline",
            ratio: Ratio::Time,
        }),
        target: Some(Target::SecondsAtMost(0.060)),
    },
    Pair {
        label: "source index, warm (stored)",
        bench: "sources/sources_warm",
        baseline: None,
        target: Some(Target::SecondsAtMost(0.005)),
    },
    Pair {
        label: "source lookup, root-relative path",
        bench: "sources/sources_lookup_path",
        baseline: None,
        target: Some(Target::SecondsAtMost(0.000_001)),
    },
    Pair {
        label: "source lookup, bare file name",
        bench: "sources/sources_lookup_name",
        baseline: None,
        target: Some(Target::SecondsAtMost(0.000_001)),
    },
    Pair {
        label: "ctx messages",
        bench: process::MESSAGES,
        baseline: Some(Baseline {
            label: "cat + base64",
            bench: process::MESSAGES_BASELINE,
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(3.0)),
    },
    Pair {
        label: "peak memory of ctx messages",
        bench: process::MESSAGES_PEAK,
        baseline: None,
        target: None,
    },
    Pair {
        label: "ctx rules --agent all (200 rule files)",
        bench: process::RULES,
        baseline: Some(Baseline {
            label: "process start",
            bench: process::RULES_START,
            ratio: Ratio::Time,
        }),
        target: Some(Target::SecondsAtMost(0.020)),
    },
    Pair {
        label: "peak memory of ctx rules --agent all",
        bench: process::RULES_PEAK,
        baseline: None,
        target: None,
    },
    Pair {
        label: "rules (200 files) warm vs cold",
        bench: "assemble/rules_warm",
        baseline: Some(Baseline {
            label: "cold",
            bench: "assemble/rules_cold",
            ratio: Ratio::Speed,
        }),
        target: Some(Target::RatioAtLeast(5.0)),
    },
    Pair {
        label: "ctx complete",
        bench: process::COMPLETE,
        baseline: Some(Baseline {
            label: "find -type f",
            bench: process::FIND,
            ratio: Ratio::Time,
        }),
        target: None,
    },
    Pair {
        label: "ctx assemble",
        bench: process::ASSEMBLE,
        baseline: Some(Baseline { label: "cat", bench: process::CAT, ratio: Ratio::Time }),
        target: Some(Target::RatioAtMost(1.5)),
    },
    Pair {
        label: "ctx assemble",
        bench: process::ASSEMBLE_FILE,
        baseline: Some(Baseline {
            label: "cat to a file",
            bench: process::CAT_FILE,
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(1.5)),
    },
    Pair {
        label: "peak memory of ctx assemble",
        bench: process::PEAK_RSS,
        baseline: None,
        target: Some(Target::MibAtMost(64.0)),
    },
    Pair {
        label: "peak memory of cat (largest chunk)",
        bench: process::CAT_PEAK_RSS,
        baseline: None,
        target: None,
    },
    Pair {
        label: "ctx expand @big.txt",
        bench: process::BIG,
        baseline: Some(Baseline { label: "cat", bench: process::BIG_CAT, ratio: Ratio::Time }),
        target: Some(Target::RatioAtMost(2.5)),
    },
    Pair {
        label: "ctx expand @big.txt, read through a pipe",
        bench: process::BIG_PIPE,
        baseline: Some(Baseline {
            label: "cat, read through a pipe",
            bench: process::BIG_CAT_PIPE,
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(2.5)),
    },
    Pair {
        label: "ctx assemble big.md (includes big.txt)",
        bench: process::BIG_ASSEMBLE,
        baseline: Some(Baseline { label: "cat", bench: process::BIG_CAT, ratio: Ratio::Time }),
        target: Some(Target::RatioAtMost(2.5)),
    },
    Pair {
        label: "peak memory of ctx expand @big.txt",
        bench: process::BIG_PEAK,
        baseline: None,
        // 1.5 times the 200 MiB file.
        target: Some(Target::MibAtMost(300.0)),
    },
    Pair {
        label: "ctx expand @src/, a budget between its tokens and its bytes, cold",
        bench: process::BETWEEN,
        baseline: Some(Baseline {
            label: "no budget",
            bench: process::UNBUDGETED,
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(2.0)),
    },
    Pair {
        label: "ctx expand @src/, a budget between its tokens and its bytes, counts remembered",
        bench: process::BETWEEN_WARM,
        baseline: Some(Baseline {
            label: "no budget",
            bench: process::UNBUDGETED,
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(2.0)),
    },
    Pair {
        label: "ctx expand @src/, a budget of 8 000 tokens",
        bench: process::SMALL,
        baseline: Some(Baseline {
            label: "no budget",
            bench: process::UNBUDGETED,
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(2.0)),
    },
    Pair {
        label: "ctx expand @src/ --tokens --format json, cold",
        bench: process::COUNTED,
        baseline: Some(Baseline {
            label: "no budget",
            bench: process::UNBUDGETED,
            ratio: Ratio::Time,
        }),
        target: None,
    },
    Pair {
        label: "ctx expand @src/ --tokens --format json, counts remembered",
        bench: process::COUNTED_WARM,
        baseline: Some(Baseline {
            label: "no budget",
            bench: process::UNBUDGETED,
            ratio: Ratio::Time,
        }),
        target: None,
    },
    Pair {
        label: "peak memory of ctx expand @src/ under the budget between",
        bench: process::BETWEEN_PEAK,
        baseline: None,
        target: None,
    },
    Pair {
        label: "ctx sources, cold (process)",
        bench: process::SOURCES_COLD,
        baseline: Some(Baseline {
            label: "naive index in Python",
            bench: process::SOURCES_NAIVE,
            ratio: Ratio::Time,
        }),
        target: Some(Target::RatioAtMost(0.2)),
    },
    Pair {
        label: "ctx sources, warm (process)",
        bench: process::SOURCES_WARM,
        baseline: Some(Baseline {
            label: "process start",
            bench: process::SOURCES_START,
            ratio: Ratio::Time,
        }),
        target: None,
    },
    Pair {
        label: "ctx index, cold",
        bench: process::INDEX_COLD,
        baseline: Some(Baseline {
            label: "list + cat",
            bench: process::LIST_CAT,
            ratio: Ratio::Time,
        }),
        target: Some(Target::SecondsAtMost(3.0)),
    },
    Pair {
        label: "ctx suggest, warm index",
        bench: process::QUERY_WARM,
        baseline: None,
        target: Some(Target::SecondsAtMost(0.05)),
    },
    Pair {
        label: "ctx expand --auto --max-tokens 8000, warm index",
        bench: process::AUTO_WARM,
        baseline: None,
        target: Some(Target::SecondsAtMost(0.08)),
    },
    Pair {
        label: "ctx index after one change",
        bench: process::INDEX_UPDATE,
        baseline: None,
        target: Some(Target::SecondsAtMost(0.1)),
    },
    Pair {
        label: "suggestion index on disk",
        bench: process::INDEX_BYTES,
        baseline: None,
        target: None,
    },
    Pair {
        label: "peak memory of a cold ctx index",
        bench: process::INDEX_PEAK,
        baseline: None,
        target: None,
    },
];

/// A line of the summary table, as text.
#[derive(Debug, PartialEq, Eq)]
struct Line {
    measure: String,
    figure: String,
    baseline: String,
    ratio: String,
    target: String,
}

/// The lines of the summary table: one for each pair whose measurement ran, in [`PAIRS`]'s order.
fn pair(measured: &[Measured]) -> Vec<Line> {
    let find = |name: &str| measured.iter().find(|m| m.name == name);
    let mut lines = Vec::new();
    // Each attack shape: its time beside the process start, under a second; its peak memory,
    // under 100 MiB (docs/security.md).
    let attacks = process::ATTACKS.iter().flat_map(|(bench, peak, label)| {
        [
            Pair {
                label,
                bench,
                baseline: Some(Baseline {
                    label: "process start",
                    bench: process::ATTACK_START,
                    ratio: Ratio::Time,
                }),
                target: Some(Target::SecondsAtMost(1.0)),
            },
            Pair { label, bench: peak, baseline: None, target: Some(Target::MibAtMost(100.0)) },
        ]
    });
    let pairs: Vec<Pair> = attacks.collect();
    for pair in PAIRS.iter().chain(&pairs) {
        let Some(this) = find(pair.bench) else { continue };
        let measure = match &this.detail {
            Some(detail) => format!("{}, {detail}", pair.label),
            None => pair.label.to_string(),
        };
        let mut baseline = String::from("-");
        let mut ratio = None;
        if let Some(base) = &pair.baseline {
            baseline = base.label.to_string();
            if let Some(other) = find(base.bench) {
                baseline = format!("{} {}", base.label, other.shown);
                let (this, other) = (this.value.amount(), other.value.amount());
                if this > 0.0 && other > 0.0 {
                    ratio = Some(match base.ratio {
                        Ratio::Speed => (other / this, "speed"),
                        Ratio::Time => (this / other, "time"),
                    });
                }
            }
        }
        let target = match pair.target {
            None => String::new(),
            Some(Target::RatioAtMost(limit)) => {
                verdict(format!("≤ {limit}x"), ratio.map(|(ratio, _)| ratio <= limit))
            }
            Some(Target::RatioAtLeast(limit)) => {
                verdict(format!("≥ {limit}x"), ratio.map(|(ratio, _)| ratio >= limit))
            }
            Some(Target::MibAtMost(limit)) => {
                verdict(format!("≤ {limit} MiB"), Some(this.value.amount() <= limit * MIB))
            }
            Some(Target::SecondsAtMost(limit)) => {
                verdict(format!("≤ {}", format_seconds(limit)), Some(this.value.amount() <= limit))
            }
        };
        lines.push(Line {
            measure,
            figure: this.shown.clone(),
            baseline,
            ratio: ratio
                .map_or_else(|| "-".to_string(), |(r, what)| format!("{} {what}", times(r))),
            target,
        });
    }
    lines
}

pub(crate) const MIB: f64 = 1024.0 * 1024.0;

fn verdict(target: String, met: Option<bool>) -> String {
    match met {
        Some(true) => format!("{target}: met"),
        Some(false) => format!("{target}: missed"),
        None => target,
    }
}

/// A ratio as `12.3x`, `0.20x` or, below 0.1, with two significant digits: `0.0032x`.
fn times(ratio: f64) -> String {
    if ratio >= 10.0 {
        format!("{ratio:.1}x")
    } else if ratio >= 0.1 || ratio <= 0.0 {
        format!("{ratio:.2}x")
    } else {
        // Two significant digits: 0.0032 has its first at the third decimal.
        let first = (-ratio.log10()).ceil();
        // `first` is between 2 and a few hundred here.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let decimals = first as usize + 1;
        format!("{ratio:.decimals$}x")
    }
}

/// The lines as a Markdown table with aligned columns, readable on a terminal and in docs/.
fn render(lines: &[Line]) -> String {
    let header = Line {
        measure: "measure".into(),
        figure: "median".into(),
        baseline: "baseline, same run".into(),
        ratio: "ratio".into(),
        target: "target".into(),
    };
    // A `|` inside a cell would end it.
    let cells = |line: &Line| {
        [&line.measure, &line.figure, &line.baseline, &line.ratio, &line.target]
            .map(|cell| cell.replace('|', "\\|"))
    };
    let mut widths = [0; 5];
    for line in std::iter::once(&header).chain(lines) {
        for (width, cell) in widths.iter_mut().zip(cells(line)) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let row = |cells: [String; 5]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell}{}", " ".repeat(width - cell.chars().count())))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut table = row(cells(&header));
    table.push_str(&row(widths.map(|width| "-".repeat(width))));
    for line in lines {
        table.push_str(&row(cells(line)));
    }
    table
}

/// A time in the unit divan would choose, with four significant digits: `352.1 ms`.
pub(crate) fn format_seconds(seconds: f64) -> String {
    let (value, unit) = if seconds >= 1.0 {
        (seconds, "s")
    } else if seconds >= 1e-3 {
        (seconds * 1e3, "ms")
    } else if seconds >= 1e-6 {
        (seconds * 1e6, "µs")
    } else {
        (seconds * 1e9, "ns")
    };
    format!("{} {unit}", significant(value))
}

/// Bytes per second in decimal units, as divan prints a `BytesCount`: `412.3 MB/s`.
pub(crate) fn format_rate(bytes_per_second: f64) -> String {
    let units = ["B/s", "KB/s", "MB/s", "GB/s", "TB/s"];
    let mut value = bytes_per_second;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{} {}", significant(value), units[unit])
}

/// Four significant digits without trailing zeros, for values from 1 to 1000.
fn significant(value: f64) -> String {
    let decimals = if value >= 100.0 {
        1
    } else if value >= 10.0 {
        2
    } else {
        3
    };
    let text = format!("{value:.decimals$}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::{
        Args, Line, Measured, Row, Value, format_rate, format_seconds, pair, parse_divan,
        parse_seconds, render, times,
    };

    const OUTPUT: &str = "\
Timer precision: 20 ns
scan         fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ memchr                  │               │               │               │         │
│  ├─ dense  24.5 µs       │ 81.73 µs      │ 24.71 µs      │ 26.73 µs      │ 100     │ 100
│  │         42.78 GB/s    │ 12.82 GB/s    │ 42.43 GB/s    │ 39.22 GB/s    │         │
│  ╰─ prose  408.8 µs      │ 795 µs        │ 428.6 µs      │ 449.9 µs      │ 100     │ 100
│            41.03 GB/s    │ 21.1 GB/s     │ 39.13 GB/s    │ 37.28 GB/s    │         │
╰─ scan                    │               │               │               │         │
   ╰─ prose  2.054 ms      │ 6.186 ms      │ 2.114 ms      │ 2.203 ms      │ 100     │ 100
             8.164 GB/s    │ 2.711 GB/s    │ 7.934 GB/s    │ 7.614 GB/s    │         │

     Running benches/read.rs (target/release/deps/read-1646630fd029fd65)
read         fastest       │ slowest       │ median        │ mean          │ samples │ iters
╰─ small     1.5 µs        │ 2 µs          │ 1.6 µs        │ 1.7 µs        │ 100     │ 100
";

    fn row(name: &str, median: &str, throughput: Option<&str>) -> Row {
        Row {
            name: name.to_string(),
            median: median.to_string(),
            throughput: throughput.map(str::to_string),
        }
    }

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn divan_tables() {
        let rows = parse_divan(&lines(OUTPUT));
        assert_eq!(
            rows,
            [
                row("scan/memchr/dense", "24.71 µs", Some("42.43 GB/s")),
                row("scan/memchr/prose", "428.6 µs", Some("39.13 GB/s")),
                row("scan/scan/prose", "2.114 ms", Some("7.934 GB/s")),
                row("read/small", "1.6 µs", None),
            ]
        );
    }

    /// divan's output for the four bench binaries as `cargo bench` prints it (shortened).
    const RUN: &str = "\
     Running benches/assemble.rs (target/release/deps/assemble-0d6b1f1c1d1bb2a4)
Timer precision: 20 ns
assemble             fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ cat_baseline      38.12 ms      │ 45.3 ms       │ 40 ms         │ 40.5 ms       │ 10      │ 10
│                    1.03 GB/s     │ 867.5 MB/s    │ 982.5 MB/s    │ 970.1 MB/s    │         │
├─ directory         55 ms         │ 70 ms         │ 58 ms         │ 61 ms         │ 10      │ 10
│                    714.5 MB/s    │ 561.4 MB/s    │ 677.6 MB/s    │ 644.2 MB/s    │         │
├─ directory_tokens  1.1 s         │ 1.3 s         │ 1.2 s         │ 1.2 s         │ 10      │ 10
│                    35.72 MB/s    │ 30.23 MB/s    │ 32.75 MB/s    │ 32.75 MB/s    │         │
├─ many_includes     40.5 ms       │ 48 ms         │ 42.25 ms      │ 43 ms         │ 10      │ 10
├─ read_baseline     20 ms         │ 24 ms         │ 21 ms         │ 21.5 ms       │ 10      │ 10
│                    1.96 GB/s     │ 1.63 GB/s     │ 1.871 GB/s    │ 1.83 GB/s     │         │
├─ rules_cold        9 ms          │ 11 ms         │ 10 ms         │ 10 ms         │ 10      │ 10
╰─ rules_warm        1.2 ms        │ 1.9 ms        │ 1.25 ms       │ 1.3 ms        │ 10      │ 10

     Running benches/read.rs (target/release/deps/read-1646630fd029fd65)
Timer precision: 20 ns
read                       fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ sandbox_cached          3 ms          │ 4 ms          │ 3.5 ms        │ 3.6 ms        │ 10      │ 10
├─ sandbox_fresh           10 ms         │ 12 ms         │ 11 ms         │ 11 ms         │ 10      │ 10
╰─ std_read                7 ms          │ 8 ms          │ 7.333 ms      │ 7.4 ms        │ 10      │ 10

     Running benches/preprocess.rs (target/release/deps/preprocess-9a0c2f4e7d8b6a51)
Timer precision: 20 ns
preprocess              fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ events_only          2 ms          │ 3 ms          │ 2.5 ms        │ 2.5 ms        │ 10      │ 10
│                       524.2 MB/s    │ 349.5 MB/s    │ 419.4 MB/s    │ 419.4 MB/s    │         │
├─ scan                 500 µs        │ 600 µs        │ 524.2 µs      │ 530 µs        │ 10      │ 80
│                       2.097 GB/s    │ 1.747 GB/s    │ 2 GB/s        │ 1.97 GB/s     │         │
╰─ scan_and_preprocess  4 ms          │ 5 ms          │ 4.194 ms      │ 4.3 ms        │ 10      │ 10
                        262.1 MB/s    │ 209.7 MB/s    │ 250 MB/s      │ 243.8 MB/s    │         │

     Running benches/scan.rs (target/release/deps/scan-77c0b0a3f1e2d4c5)
Timer precision: 20 ns
scan         fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ memchr                  │               │               │               │         │
│  ├─ dense  24.5 µs       │ 81.73 µs      │ 25 µs         │ 26.73 µs      │ 10      │ 100
│  │         42.78 GB/s    │ 12.82 GB/s    │ 41.94 GB/s    │ 39.22 GB/s    │         │
│  ╰─ prose  408.8 µs      │ 795 µs        │ 400 µs        │ 449.9 µs      │ 10      │ 100
│            41.03 GB/s    │ 21.1 GB/s     │ 41.94 GB/s    │ 37.28 GB/s    │         │
╰─ scan                    │               │               │               │         │
   ├─ dense  1 ms          │ 1.2 ms        │ 1.048 ms      │ 1.1 ms        │ 10      │ 10
   │         1.048 GB/s    │ 873.8 MB/s    │ 1 GB/s        │ 953.2 MB/s    │         │
   ╰─ prose  2 ms          │ 6.186 ms      │ 2 ms          │ 2.203 ms      │ 10      │ 100
             8.389 GB/s    │ 2.711 GB/s    │ 8.389 GB/s    │ 7.614 GB/s    │         │
";

    fn process(name: &str, value: Value, shown: &str, detail: Option<&str>) -> Measured {
        Measured {
            name: name.to_string(),
            value,
            shown: shown.to_string(),
            detail: detail.map(str::to_string),
        }
    }

    fn line(measure: &str, figure: &str, baseline: &str, ratio: &str, target: &str) -> Line {
        Line {
            measure: measure.into(),
            figure: figure.into(),
            baseline: baseline.into(),
            ratio: ratio.into(),
            target: target.into(),
        }
    }

    #[test]
    fn pairs_and_ratios() {
        let mut measured: Vec<Measured> =
            parse_divan(&lines(RUN)).iter().filter_map(Row::measured).collect();
        assert_eq!(measured.len(), 17);
        let tree = Some("2000 files");
        measured.extend([
            process("process/complete", Value::Seconds(0.3), "300 ms", Some("100 000 files")),
            process("process/find", Value::Seconds(0.1), "100 ms", None),
            process("process/assemble", Value::Seconds(1.2), "1.2 s, 100 MB/s", tree),
            process("process/cat", Value::Seconds(1.0), "1 s, 120 MB/s", None),
            process("process/peak_rss", Value::Bytes(70 << 20), "70 MiB", tree),
        ]);
        let table = pair(&measured);
        assert_eq!(
            table,
            [
                line("scan prose (16 MB)", "8.389 GB/s", "memchr 41.94 GB/s", "0.20x speed", ""),
                line("scan dense (1 MB)", "1 GB/s", "memchr 41.94 GB/s", "0.024x speed", ""),
                line("preprocess (1 MB dense)", "250 MB/s", "scan alone 2 GB/s", "0.12x speed", ""),
                line(
                    "sandbox read 3000 files",
                    "11 ms",
                    "std::fs::read 7.333 ms",
                    "1.50x time",
                    ""
                ),
                line(
                    "sandbox cache hit 3000 files",
                    "3.5 ms",
                    "std::fs::read 7.333 ms",
                    "0.48x time",
                    ""
                ),
                line(
                    "assemble directory (3000 .rs files)",
                    "677.6 MB/s",
                    "cat 982.5 MB/s",
                    "1.45x time",
                    "≤ 1.5x: met"
                ),
                line(
                    "assemble directory + tokens",
                    "32.75 MB/s",
                    "cat 982.5 MB/s",
                    "30.0x time",
                    ""
                ),
                line("10 000 includes", "42.25 ms", "-", "-", ""),
                line(
                    "rules (200 files) warm vs cold",
                    "1.25 ms",
                    "cold 10 ms",
                    "8.00x speed",
                    "≥ 5x: met"
                ),
                line(
                    "ctx complete, 100 000 files",
                    "300 ms",
                    "find -type f 100 ms",
                    "3.00x time",
                    ""
                ),
                line(
                    "ctx assemble, 2000 files",
                    "1.2 s, 100 MB/s",
                    "cat 1 s, 120 MB/s",
                    "1.20x time",
                    "≤ 1.5x: met"
                ),
                line(
                    "peak memory of ctx assemble, 2000 files",
                    "70 MiB",
                    "-",
                    "-",
                    "≤ 64 MiB: missed"
                ),
            ]
        );
        let rendered = render(&table[7..9]);
        assert_eq!(
            rendered,
            "\
| measure                        | median   | baseline, same run | ratio       | target    |
| ------------------------------ | -------- | ------------------ | ----------- | --------- |
| 10 000 includes                | 42.25 ms | -                  | -           |           |
| rules (200 files) warm vs cold | 1.25 ms  | cold 10 ms         | 8.00x speed | ≥ 5x: met |
"
        );
    }

    #[test]
    fn pipes_are_escaped() {
        let table = render(&[line("find | wc", "1 s", "-", "-", "")]);
        assert!(
            table.ends_with("| find \\| wc | 1 s    | -                  | -     |        |\n"),
            "{table}"
        );
    }

    #[test]
    fn missing_baselines_and_measurements() {
        let measured = [
            process("assemble/directory", Value::Seconds(0.06), "655 MB/s", None),
            process("assemble/rules_cold", Value::Seconds(0.01), "10 ms", None),
        ];
        assert_eq!(
            pair(&measured),
            [line("assemble directory (3000 .rs files)", "655 MB/s", "cat", "-", "≤ 1.5x")]
        );
    }

    #[test]
    fn units() {
        assert_eq!(times(0.0032), "0.0032x");
        assert_eq!(times(0.0239), "0.024x");
        assert_eq!(times(0.1), "0.10x");
        assert_eq!(times(0.2), "0.20x");
        assert_eq!(times(12.34), "12.3x");
        let close = |text: &str, seconds: f64| {
            parse_seconds(text).is_some_and(|parsed| (parsed / seconds - 1.0).abs() < 1e-12)
        };
        assert!(close("24.71 µs", 24.71e-6));
        assert!(close("2.114 ms", 2.114e-3));
        assert!(close("1.5 s", 1.5));
        assert!(close("500 ns", 500e-9));
        assert!(close("120 ps", 120e-12));
        assert_eq!(parse_seconds("7.934 GB/s"), None);
        assert_eq!(parse_seconds(""), None);
        assert_eq!(format_seconds(0.3521), "352.1 ms");
        assert_eq!(format_seconds(1.5), "1.5 s");
        assert_eq!(format_seconds(0.000_024_71), "24.71 µs");
        assert_eq!(format_rate(412.3e6), "412.3 MB/s");
        assert_eq!(format_rate(1.0e9), "1 GB/s");
    }

    #[test]
    fn arguments() {
        let parse = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
            Args::parse(&args).map_err(|err| err.to_string())
        };
        assert_eq!(parse(&[]), Ok(Args::default()));
        assert_eq!(
            parse(&["--quick", "scan"]),
            Ok(Args { quick: true, filter: Some("scan".into()) })
        );
        assert_eq!(parse(&["process"]), Ok(Args { quick: false, filter: Some("process".into()) }));
        assert!(parse(&["--time", "5"]).is_err());
        assert!(parse(&["a", "b"]).is_err());
    }
}
