//! The process-level measurements of `cargo xtask bench`: the release `ctx` binary on generated
//! trees, each beside a baseline command timed in the same run, runs interleaved.
//!
//! - `ctx complete agent/hand` on a tree of small files in about a hundredth as many
//!   directories, beside `find . -type f | wc -l` of the same tree;
//! - `ctx assemble all.md --max-files 0 --max-output-bytes 0 --max-lines 0`, where `all.md` is
//!   `@[src/]` over real `.rs` files copied from `$CARGO_HOME/registry/src` (generated when the
//!   registry has too few), beside `cat` of the same files, like with like: both to /dev/null,
//!   then both to a file in the data directory (cat in chunks of 1000 arguments, its times
//!   summed), each run of one right after the other's;
//! - `ctx expand @big.txt` of one 200 MiB file of real source text with the limits off, and
//!   `ctx assemble` of a document that includes it, beside `cat big.txt`, all to /dev/null,
//!   then the expansion and `cat` read through a pipe;
//! - `ctx expand @src/` of the assembly tree under budgets, beside the same without one;
//! - `ctx rules --agent all` on a project of 200 agents' rule files, beside the process start
//!   (`ctx check` of a one-line document);
//! - `ctx sources` cold and warm on the source index bench's build, beside the process start and
//!   a naive index in Python;
//! - the peak resident set of each: the `%M` of GNU `/usr/bin/time` when it works, else the
//!   `VmHWM` of `/proc/<pid>/status` read every 2 ms while it runs (which can miss growth in
//!   the last 2 ms of the run; `CTX_BENCH_POLL_RSS=1` chooses it anyway).
//!
//! Trees live under `$CARGO_TARGET_DIR/bench-data/` (default `target/bench-data/`), each with a
//! `.done` stamp beside it, so a rerun reuses them. Each figure is the median of the runs.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{Measured, Value, format_rate, format_seconds};
use crate::{Result, cargo, display, run_command};

mod attacks;
mod big;
mod budget;
mod messages;
mod rules;
mod scale;
mod sources;
mod suggest;

pub(super) use attacks::{SHAPES as ATTACKS, START as ATTACK_START};
pub(super) use big::{BIG, BIG_ASSEMBLE, BIG_CAT, BIG_CAT_PIPE, BIG_PEAK, BIG_PIPE};
pub(super) use budget::{
    BETWEEN, BETWEEN_PEAK, BETWEEN_WARM, COUNTED, COUNTED_WARM, SMALL, UNBUDGETED,
};
pub(super) use messages::{MESSAGES, MESSAGES_BASELINE, MESSAGES_PEAK};
pub(super) use rules::{RULES, RULES_PEAK, RULES_START};
pub(super) use sources::{
    COLD as SOURCES_COLD, NAIVE as SOURCES_NAIVE, START as SOURCES_START, WARM as SOURCES_WARM,
};
pub(super) use suggest::{
    AUTO_WARM, INDEX_BYTES, INDEX_COLD, INDEX_PEAK, INDEX_UPDATE, LIST_CAT, QUERY_WARM,
};

pub(super) const COMPLETE: &str = "process/complete";
pub(super) const FIND: &str = "process/find";
pub(super) const ASSEMBLE: &str = "process/assemble";
pub(super) const CAT: &str = "process/cat";
pub(super) const PEAK_RSS: &str = "process/peak_rss";
pub(super) const ASSEMBLE_FILE: &str = "process/assemble_to_file";
pub(super) const CAT_FILE: &str = "process/cat_to_file";
pub(super) const CAT_PEAK_RSS: &str = "process/cat_peak_rss";

/// Where a timed command writes its standard output.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sink {
    /// `/dev/null`.
    Null,
    /// A file in the data directory, truncated before each run.
    File,
}

/// The sizes of one kind of run.
struct Sizes {
    /// Files of the completion tree, a hundred to a directory.
    complete_files: usize,
    /// `.rs` files of the assembly tree.
    tree_files: usize,
    /// Timed runs of each command (after one untimed warm-up run).
    runs: usize,
}

const FULL: Sizes = Sizes { complete_files: 100_000, tree_files: 10_000, runs: 5 };
/// The trees of a full run: generating them takes a few seconds, once, so only the runs are cut.
const QUICK: Sizes = Sizes { complete_files: 100_000, tree_files: 10_000, runs: 3 };

/// The prefix completed, as in docs/cli.md.
const QUERY: &str = "agent/hand";

/// Bumped when the generators change, so that stale trees are rebuilt.
const STAMP: &str = "ctx bench data v1";

pub(super) fn run(root: &Path, quick: bool) -> Result<Vec<Measured>> {
    let (ctx, data, sizes) = prepare(root, quick)?;
    let mut measured = completion(&ctx, &data, &sizes)?;
    measured.extend(assembly(&ctx, &data, &sizes)?);
    measured.extend(big::run(&ctx, &data, &sizes)?);
    measured.extend(budget::run(&ctx, &data, &sizes)?);
    measured.extend(suggest::run(&ctx, &data, &sizes)?);
    measured.extend(messages::run(&ctx, &data, &sizes)?);
    measured.extend(rules::run(&ctx, &data, &sizes)?);
    measured.extend(sources::run(&ctx, &data, &sizes)?);
    measured.extend(attacks::run(&ctx, &data, &sizes)?);
    Ok(measured)
}

/// The attack shapes alone (`cargo xtask bench attacks`).
pub(super) fn run_attacks(root: &Path, quick: bool) -> Result<Vec<Measured>> {
    let (ctx, data, sizes) = prepare(root, quick)?;
    attacks::run(&ctx, &data, &sizes)
}

/// The token budget's measurements alone (`cargo xtask bench budget`).
pub(super) fn run_budget(root: &Path, quick: bool) -> Result<Vec<Measured>> {
    let (ctx, data, sizes) = prepare(root, quick)?;
    budget::run(&ctx, &data, &sizes)
}

/// `ctx sources` as a user runs it alone (with `cargo xtask bench sources`, beside the
/// in-process bench).
pub(super) fn run_sources(root: &Path, quick: bool) -> Result<Vec<Measured>> {
    let (ctx, data, sizes) = prepare(root, quick)?;
    sources::run(&ctx, &data, &sizes)
}

/// The suggestion measurements alone (`cargo xtask bench suggest`).
pub(super) fn run_suggest(root: &Path, quick: bool) -> Result<Vec<Measured>> {
    let (ctx, data, sizes) = prepare(root, quick)?;
    suggest::run(&ctx, &data, &sizes)
}

/// The suggestion index at scale alone (`cargo xtask bench scale`): it prints its own table.
pub(super) fn run_scale(root: &Path, quick: bool) -> Result {
    scale::run(root, quick)
}

/// The conversation measurements alone (`cargo xtask bench messages`).
pub(super) fn run_messages(root: &Path, quick: bool) -> Result<Vec<Measured>> {
    let (ctx, data, sizes) = prepare(root, quick)?;
    messages::run(&ctx, &data, &sizes)
}

/// The agents' rules measurement alone (`cargo xtask bench rules`).
pub(super) fn run_rules(root: &Path, quick: bool) -> Result<Vec<Measured>> {
    let (ctx, data, sizes) = prepare(root, quick)?;
    rules::run(&ctx, &data, &sizes)
}

/// Builds the release binary; returns it, the folder of the generated trees, and the sizes.
fn prepare(root: &Path, quick: bool) -> Result<(PathBuf, PathBuf, Sizes)> {
    run_command(cargo(root).args(["build", "--release", "-p", "ctx-cli"]))?;
    let target = target_dir(root);
    let ctx = target.join("release").join(format!("ctx{}", env::consts::EXE_SUFFIX));
    let data = target.join("bench-data");
    fs::create_dir_all(&data)?;
    Ok((ctx, data, if quick { QUICK } else { FULL }))
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (relative to the repository root, where xtask
/// runs cargo) or `target/`.
fn target_dir(root: &Path) -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

/// Times `ctx complete` and `find` on the completion tree.
fn completion(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let files = sizes.complete_files;
    let tree = data.join(format!("complete-{files}"));
    let dirs = cached(&tree, || generate_completion_tree(&tree, files))?;
    println!(
        "completion: {} runs each of `ctx complete {QUERY}` and `find` in {}",
        sizes.runs,
        tree.display()
    );
    let mut complete = Vec::new();
    let mut find = Vec::new();
    for run in 0..=sizes.runs {
        let (time, out) = timed(Command::new(ctx).args(["complete", QUERY]).current_dir(&tree))?;
        if out.trim().is_empty() {
            return Err(
                format!("`ctx complete {QUERY}` found nothing in {}", tree.display()).into()
            );
        }
        let (base, count) =
            timed(Command::new("sh").args(["-c", "find . -type f | wc -l"]).current_dir(&tree))?;
        if count.trim() != files.to_string() {
            return Err(format!(
                "`find` counted {} files in {}, not {files}",
                count.trim(),
                tree.display()
            )
            .into());
        }
        if run > 0 {
            complete.push(time);
            find.push(base);
        }
    }
    let detail =
        format!("{} files in {} dirs, median of {}", grouped(files), grouped(dirs), sizes.runs);
    Ok(vec![seconds(COMPLETE, &complete, None, Some(detail)), seconds(FIND, &find, None, None)])
}

/// Times `ctx assemble` and `cat` on the assembly tree, and measures the peak memory of the former.
fn assembly(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let tree = data.join(format!("tree-{}", sizes.tree_files));
    let registry = cargo_home().map(|home| home.join("registry").join("src"));
    let source =
        cached(&tree, || generate_source_tree(&tree, sizes.tree_files, registry.as_deref()))?;
    let files = files_under(&tree.join("src"))?;
    let mut bytes = 0;
    for file in &files {
        bytes += fs::metadata(tree.join(file))?.len();
    }
    let memory = Memory::probe(data);
    println!(
        "assembly: {} runs each of `ctx assemble` and `cat` in {}; peak memory by {}",
        sizes.runs,
        tree.display(),
        memory.describe()
    );
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let (mut peak, mut cat_peak) = (None, None);
    let output = data.join("assembly-output.txt");
    for run in 0..=sizes.runs {
        for (i, sink) in [Sink::Null, Sink::File].into_iter().enumerate() {
            let mut cmd = Command::new(ctx);
            cmd.args(["assemble", "all.md", "--max-files", "0", "--max-output-bytes", "0"]);
            cmd.args(["--max-lines", "0", "-q"]).current_dir(&tree);
            let (time, rss) = memory.run(cmd, data, stdout_for(sink, &output)?)?;
            let mut base = Duration::ZERO;
            let mut base_rss = None;
            let out = stdout_for(sink, &output)?;
            for chunk in files.chunks(1000) {
                let mut cmd = Command::new("cat");
                cmd.args(chunk).current_dir(&tree);
                let stdout = match &out {
                    Some(file) => Some(file.try_clone()?),
                    None => None,
                };
                let (time, rss) = memory.run(cmd, data, stdout)?;
                base += time;
                base_rss = base_rss.max(rss);
            }
            if run > 0 {
                times[2 * i].push(time);
                times[2 * i + 1].push(base);
                peak = peak.max(rss);
                cat_peak = cat_peak.max(base_rss);
            }
        }
    }
    let _ = fs::remove_file(&output);
    let detail = |to: &str| {
        format!(
            "{} .rs files ({:.0} MB, {source}) to {to}, median of {}",
            grouped(files.len()),
            megabytes(bytes),
            sizes.runs
        )
    };
    let [assemble, cat, assemble_file, cat_file] = &times;
    let mut measured = vec![
        seconds(ASSEMBLE, assemble, Some(bytes), Some(detail("/dev/null"))),
        seconds(CAT, cat, Some(bytes), None),
        seconds(ASSEMBLE_FILE, assemble_file, Some(bytes), Some(detail("a file"))),
        seconds(CAT_FILE, cat_file, Some(bytes), None),
    ];
    for (name, peak) in [(PEAK_RSS, peak), (CAT_PEAK_RSS, cat_peak)] {
        if let Some(peak) = peak {
            measured.push(Measured {
                name: name.to_string(),
                value: Value::Bytes(peak),
                shown: format!("{:.1} MiB", peak as f64 / super::MIB),
                detail: Some(format!(
                    "{} files, {}, max of {}",
                    grouped(files.len()),
                    memory.describe(),
                    sizes.runs
                )),
            });
        }
    }
    Ok(measured)
}

/// The standard output of a run to `sink`: `None` for /dev/null, else `path` truncated.
fn stdout_for(sink: Sink, path: &Path) -> Result<Option<fs::File>> {
    Ok(match sink {
        Sink::Null => None,
        Sink::File => Some(fs::File::create(path)?),
    })
}

/// The median of `times` as a measurement; with `bytes`, the table shows the rate too.
fn seconds(name: &str, times: &[Duration], bytes: Option<u64>, detail: Option<String>) -> Measured {
    let median = median(times);
    let shown = match bytes {
        Some(bytes) if median > 0.0 => {
            format!("{} ({})", format_seconds(median), format_rate(bytes as f64 / median))
        }
        _ => format_seconds(median),
    };
    Measured { name: name.to_string(), value: Value::Seconds(median), shown, detail }
}

fn median(times: &[Duration]) -> f64 {
    let mut seconds: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
    seconds.sort_by(f64::total_cmp);
    match seconds.len() {
        0 => 0.0,
        n if n % 2 == 1 => seconds[n / 2],
        n => (seconds[n / 2 - 1] + seconds[n / 2]) / 2.0,
    }
}

/// Runs `cmd` to completion with its standard output captured; a failure is an error.
fn timed(cmd: &mut Command) -> Result<(Duration, String)> {
    let start = Instant::now();
    let output = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|err| format!("cannot run `{}`: {err}", display(cmd)))?;
    let time = start.elapsed();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(
            format!("`{}` failed: {}\n{}", display(cmd), output.status, tail(&stderr)).into()
        );
    }
    Ok((time, String::from_utf8_lossy(&output.stdout).into_owned()))
}

/// The last lines of a command's standard error, for an error message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(10)..].join("\n")
}

/// How the peak resident set of a run is measured.
enum Memory {
    /// GNU `/usr/bin/time -f %M`: the child's maximum resident set in KiB, from `wait4`.
    GnuTime,
    /// `VmHWM` of `/proc/<pid>/status`, read every 2 ms while the child runs.
    Poll,
    /// Neither is available: no memory figure.
    None,
}

const GNU_TIME: &str = "/usr/bin/time";

/// Set to `1`, measures peak memory by polling `/proc` even where GNU time works.
const FORCE_POLL: &str = "CTX_BENCH_POLL_RSS";

impl Memory {
    fn probe(data: &Path) -> Memory {
        let stderr = data.join("time-probe.txt");
        if env::var_os(FORCE_POLL).is_some_and(|value| value == "1") {
            return Memory::Poll;
        }
        let works = fs::File::create(&stderr).ok().and_then(|file| {
            let status =
                Command::new(GNU_TIME).args(["-f", "%M", "true"]).stderr(file).status().ok()?;
            let text = fs::read_to_string(&stderr).ok()?;
            (status.success() && last_number(&text).is_some()).then_some(())
        });
        if works.is_some() {
            Memory::GnuTime
        } else if Path::new("/proc/self/status").exists() {
            Memory::Poll
        } else {
            Memory::None
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            Memory::GnuTime => "GNU time %M",
            Memory::Poll => "VmHWM polled every 2 ms",
            Memory::None => "nothing (no GNU time, no /proc)",
        }
    }

    /// Runs `cmd` with its output to `stdout` (/dev/null when `None`), returning its wall-clock
    /// time and its peak resident set in bytes; a command that fails is an error.
    fn run(
        &self,
        cmd: Command,
        data: &Path,
        stdout: Option<fs::File>,
    ) -> Result<(Duration, Option<u64>)> {
        self.run_status(cmd, data, stdout, false)
    }

    /// [`Memory::run`] of a command whose exit status says what it found (`ctx check` of a
    /// document with errors exits 1), to /dev/null; only a crash is an error.
    fn run_any(&self, cmd: Command, data: &Path) -> Result<(Duration, Option<u64>)> {
        self.run_status(cmd, data, None, true)
    }

    /// [`Memory::run_any`] with the output written to `stdout`.
    fn run_any_to(
        &self,
        cmd: Command,
        data: &Path,
        stdout: fs::File,
    ) -> Result<(Duration, Option<u64>)> {
        self.run_status(cmd, data, Some(stdout), true)
    }

    fn run_status(
        &self,
        cmd: Command,
        data: &Path,
        stdout: Option<fs::File>,
        any_status: bool,
    ) -> Result<(Duration, Option<u64>)> {
        let stderr_path = data.join("stderr.txt");
        let mut cmd = match self {
            Memory::GnuTime => {
                let mut wrapped = Command::new(GNU_TIME);
                wrapped.args(["-f", "%M"]).arg(cmd.get_program()).args(cmd.get_args());
                if let Some(dir) = cmd.get_current_dir() {
                    wrapped.current_dir(dir);
                }
                for (key, value) in cmd.get_envs() {
                    match value {
                        Some(value) => wrapped.env(key, value),
                        None => wrapped.env_remove(key),
                    };
                }
                wrapped
            }
            Memory::Poll | Memory::None => cmd,
        };
        let stdout = match stdout {
            Some(file) => Stdio::from(file),
            None => Stdio::null(),
        };
        cmd.stdin(Stdio::null()).stdout(stdout).stderr(fs::File::create(&stderr_path)?);
        let start = Instant::now();
        let mut child =
            cmd.spawn().map_err(|err| format!("cannot run `{}`: {err}", display(&cmd)))?;
        let mut hwm = None;
        let status = if matches!(self, Memory::Poll) {
            let proc_status = format!("/proc/{}/status", child.id());
            loop {
                if let Some(status) = child.try_wait()? {
                    break status;
                }
                // Gone once the child has exited: the last value read stands.
                if let Some(kib) =
                    fs::read_to_string(&proc_status).ok().as_deref().and_then(vm_hwm_kib)
                {
                    hwm = Some(kib);
                }
                thread::sleep(Duration::from_millis(2));
            }
        } else {
            child.wait()?
        };
        let time = start.elapsed();
        let stderr = fs::read_to_string(&stderr_path).unwrap_or_default();
        let crashed = status.code().is_none_or(|code| code > 2);
        if (!any_status && !status.success()) || crashed {
            return Err(format!("`{}` failed: {status}\n{}", display(&cmd), tail(&stderr)).into());
        }
        let kib = match self {
            Memory::GnuTime => last_number(&stderr),
            Memory::Poll => hwm,
            Memory::None => None,
        };
        Ok((time, kib.map(|kib| kib * 1024)))
    }
}

/// The number on the last non-empty line of `text` (GNU time's `%M` after the child's stderr).
fn last_number(text: &str) -> Option<u64> {
    text.lines().rev().find(|line| !line.trim().is_empty())?.trim().parse().ok()
}

/// The `VmHWM:  1234 kB` of a `/proc/<pid>/status`, in KiB.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line["VmHWM:".len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

/// Reuses the tree at `dir` if its stamp says it is complete, else (re)builds it with `build`,
/// which returns a word about the tree kept in the stamp.
fn cached<T: ToString + std::str::FromStr>(
    dir: &Path,
    build: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let stamp = dir.with_extension("done");
    if let Ok(text) = fs::read_to_string(&stamp)
        && let Some(value) = text.strip_prefix(STAMP).and_then(|rest| rest.trim().parse().ok())
    {
        println!("reusing {}", dir.display());
        return Ok(value);
    }
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    println!("generating {} (once; later runs reuse it)", dir.display());
    let start = Instant::now();
    let value = build()?;
    fs::write(&stamp, format!("{STAMP} {}\n", value.to_string()))?;
    println!("generated in {}", format_seconds(start.elapsed().as_secs_f64()));
    Ok(value)
}

const TOP: [&str; 10] =
    ["agent", "handler", "core", "network", "ui", "storage", "parser", "render", "cli", "util"];
const SUB: [&str; 8] =
    ["hand", "tools", "model", "cache", "session", "config", "events", "plugins"];
const LEAF: [&str; 10] =
    ["mod", "lib", "handler", "agent", "state", "error", "types", "view", "task", "io"];

/// `files` small files, a hundred to a directory, the directories spread over ten top-level
/// ones; returns the number of directories.
fn generate_completion_tree(tree: &Path, files: usize) -> Result<usize> {
    let dirs = files.div_ceil(100);
    let workers = thread::available_parallelism().map_or(2, usize::from).min(8);
    let results: Vec<std::io::Result<()>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                scope.spawn(move || {
                    for d in (worker..dirs).step_by(workers) {
                        let dir = tree
                            .join(TOP[d % TOP.len()])
                            .join(format!("{}_{d:04}", SUB[d % SUB.len()]));
                        fs::create_dir_all(&dir)?;
                        for f in 0..100.min(files - d * 100) {
                            let name = format!("{}_{f:02}.rs", LEAF[f % LEAF.len()]);
                            fs::write(dir.join(&name), format!("// {d} {name}\n"))?;
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().map(|handle| handle.join().expect("generator thread")).collect()
    });
    for result in results {
        result?;
    }
    Ok(dirs + TOP.len().min(dirs))
}

/// `all.md` (`@[src/]`) and `files` `.rs` files under `src/` in a hundred directories: real ones
/// from the cargo registry (UTF-8, at most 256 KiB), generated ones when it has too few. Returns
/// where they came from.
fn generate_source_tree(tree: &Path, files: usize, registry: Option<&Path>) -> Result<Source> {
    let src = tree.join("src");
    fs::create_dir_all(&src)?;
    fs::write(tree.join("all.md"), "@[src/]\n")?;
    let path = |i: usize| src.join(format!("d{:02}", i % 100)).join(format!("f{i:05}.rs"));
    for d in 0..100.min(files) {
        fs::create_dir_all(src.join(format!("d{d:02}")))?;
    }
    let mut copied = 0;
    if let Some(registry) = registry {
        copy_sources(registry, &mut |content| {
            fs::write(path(copied), content)?;
            copied += 1;
            Ok(copied < files)
        })?;
    }
    for i in copied..files {
        let content: String =
            (0..120).map(|l| format!("fn f{i}_{l}() -> u32 {{ {l} }}\n")).collect();
        fs::write(path(i), content)?;
    }
    Ok(match copied {
        0 => Source::Generated,
        n if n == files => Source::Registry,
        _ => Source::Mixed,
    })
}

/// Where the `.rs` files of the assembly tree came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Registry,
    Generated,
    Mixed,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::Registry => "cargo registry",
            Source::Generated => "generated",
            Source::Mixed => "registry+generated",
        })
    }
}

impl std::str::FromStr for Source {
    type Err = ();

    fn from_str(text: &str) -> Result<Source, ()> {
        match text {
            "cargo registry" => Ok(Source::Registry),
            "generated" => Ok(Source::Generated),
            "registry+generated" => Ok(Source::Mixed),
            _ => Err(()),
        }
    }
}

fn cargo_home() -> Option<PathBuf> {
    env::var_os("CARGO_HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
}

/// Feeds `sink` the `.rs` files under `dir` in sorted order that are UTF-8 and at most 256 KiB,
/// until it returns false.
fn copy_sources(dir: &Path, sink: &mut dyn FnMut(&[u8]) -> Result<bool>) -> Result<bool> {
    let Ok(entries) = fs::read_dir(dir) else { return Ok(true) };
    let mut entries: Vec<fs::DirEntry> = entries.filter_map(std::result::Result::ok).collect();
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_dir() {
            if !copy_sources(&path, sink)? {
                return Ok(false);
            }
        } else if kind.is_file()
            && path.extension().is_some_and(|ext| ext == "rs")
            && entry.metadata().is_ok_and(|meta| meta.len() <= 256 * 1024)
            && let Ok(content) = fs::read(&path)
            && std::str::from_utf8(&content).is_ok()
            && !sink(&content)?
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The files under `dir`, relative to its parent, sorted.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let base = dir.parent().unwrap_or(dir);
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                pending.push(entry.path());
            } else {
                files.push(entry.path().strip_prefix(base)?.to_path_buf());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// `100000` as `100 000`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::{Source, files_under, generate_completion_tree, generate_source_tree, grouped};
    use super::{last_number, vm_hwm_kib};

    #[test]
    fn trees() {
        let dir = std::env::temp_dir().join(format!("xtask-bench-test-{}", std::process::id()));
        let registry = dir.join("registry");
        fs::create_dir_all(registry.join("a-1.0/src")).unwrap();
        fs::write(registry.join("a-1.0/src/lib.rs"), "pub fn a() {}\n").unwrap();
        fs::write(registry.join("a-1.0/src/bad.rs"), b"\xff\xfe").unwrap();
        fs::write(registry.join("a-1.0/src/big.rs"), "x".repeat(256 * 1024 + 1)).unwrap();
        fs::write(registry.join("a-1.0/README.md"), "# a\n").unwrap();

        let tree = dir.join("tree");
        let source = generate_source_tree(&tree, 3, Some(&registry)).unwrap();
        assert_eq!(source, Source::Mixed);
        assert_eq!(source.to_string().parse(), Ok(Source::Mixed));
        let files = files_under(&tree.join("src")).unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(fs::read_to_string(tree.join(&files[0])).unwrap(), "pub fn a() {}\n");
        assert_eq!(fs::read_to_string(tree.join("all.md")).unwrap(), "@[src/]\n");
        let generated = generate_source_tree(&dir.join("gen"), 2, None).unwrap();
        assert_eq!(generated, Source::Generated);

        let dirs = generate_completion_tree(&dir.join("complete"), 250).unwrap();
        assert_eq!(dirs, 3 + 3);
        assert_eq!(files_under(&dir.join("complete")).unwrap().len(), 250);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn helpers() {
        assert_eq!(grouped(100_000), "100 000");
        assert_eq!(grouped(1010), "1 010");
        assert_eq!(grouped(999), "999");
        assert_eq!(last_number("warning: x\n41236\n"), Some(41236));
        assert_eq!(last_number("Command exited with non-zero status 1\n"), None);
        assert_eq!(vm_hwm_kib("Name:\tctx\nVmPeak:\t  9000 kB\nVmHWM:\t    5120 kB\n"), Some(5120));
    }
}
