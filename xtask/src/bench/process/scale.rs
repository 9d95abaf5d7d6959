//! `cargo xtask bench scale [--quick]`: the suggestion index of the release `ctx` on generated
//! trees of 10^4 and 10^5 files (and more with `CTX_BENCH_SCALE_SIZES`, when the disk holds
//! them), each tree of real source text ([`generate`]). For each tree, in one run:
//!
//! - a cold `ctx index` (empty cache folder) and its peak resident set;
//! - a warm `ctx suggest` (index stored, nothing changed), process start included;
//! - the baseline beside it, interleaved run by run: `rg --files` of the same tree, or
//!   `find . -type f` where ripgrep is missing (it lists the ignored files too);
//! - `ctx index` after one file changed (it must read that one file only);
//! - with `ctx index --watch` running (Unix): a warm `ctx suggest` (its answer must be the
//!   one ranked without the service), a `ctx suggest` right after one file changed, a `ctx
//!   index` right after one file changed (the service's update, process start included: it
//!   answers once the change is taken in), and the service's peak resident set (Linux);
//! - the size of the stored index;
//! - and as attacks: a query for a word that only a file behind a link out of the tree holds
//!   finds nothing, and the link back to the root (a cycle) ends the walk;
//! - then every other command that walks the tree ([`walkers`]): its time, peak memory and
//!   output, to be compared across sizes.
//!
//! `CTX_BENCH_CTX` names a `ctx` binary to measure instead of building the release one (a build
//! of another commit, for a before-and-after table).
//!
//! Trees live under `$CTX_BENCH_SCALE_DIR` (default `$CARGO_TARGET_DIR/bench-data/scale`), each
//! with a `.done` stamp, so a rerun reuses them; `--quick` times each command fewer times.

mod generate;
mod walkers;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{Memory, cargo_home, grouped, median, prepare, target_dir, timed};
use crate::Result;
use crate::bench::{MIB, format_seconds};

/// A prompt with words that sources of every language use.
const PROMPT: &str = "fix the error when parsing an empty configuration file with a custom buffer";

/// Bumped when the generator changes, so that stale trees are rebuilt.
const STAMP: &str = "ctx scale tree v1";

/// Free bytes a tree takes per file at most (a 4 KiB block per file and its folder's share,
/// files of up to [`generate::MAX_POOL_FILE`] bytes averaging far less).
const DISK_PER_FILE: u64 = 12 * 1024;

/// With a running service: warm query, query after one change, `ctx index` after one change,
/// and the service's peak memory.
type Watched = (f64, f64, f64, Option<u64>);

/// The figures of one tree.
struct Row {
    files: usize,
    bytes: u64,
    cold: f64,
    peak: Option<u64>,
    index_bytes: u64,
    warm: f64,
    baseline: f64,
    update: f64,
    /// Warm query, query after one change and update after one change, with a running
    /// service; its peak memory.
    watched: Option<Watched>,
}

pub(in crate::bench) fn run(root: &Path, quick: bool) -> Result {
    // A binary given by `CTX_BENCH_CTX` (another build, to compare) is used as it is.
    let (ctx, data) = match env::var_os("CTX_BENCH_CTX") {
        Some(ctx) if !ctx.is_empty() => {
            let data = target_dir(root).join("bench-data");
            fs::create_dir_all(&data)?;
            (PathBuf::from(ctx), data)
        }
        _ => {
            let (ctx, data, _) = prepare(root, quick)?;
            (ctx, data)
        }
    };
    let dir = match env::var_os("CTX_BENCH_SCALE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => target_dir(root).join("bench-data").join("scale"),
    };
    fs::create_dir_all(&dir)?;
    let sizes: Vec<usize> = match env::var("CTX_BENCH_SCALE_SIZES") {
        Ok(list) => list.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
        Err(_) => vec![10_000, 100_000],
    };
    let (cold_runs, runs) = if quick { (1, 3) } else { (3, 5) };
    let lister = if Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success()) {
        "rg --files"
    } else {
        "find . -type f"
    };
    let memory = Memory::probe(&data);
    let mirrors = env::var_os("CTX_BENCH_MIRRORS").map(PathBuf::from);
    let registry = cargo_home().map(|home| home.join("registry").join("src"));
    let mut pool = None;
    let (mut rows, mut walked) = (Vec::new(), Vec::new());
    for files in sizes {
        let tree = dir.join(format!("tree-{files}"));
        let bytes = match reuse(&tree) {
            Some(bytes) => bytes,
            None => {
                let need = files as u64 * DISK_PER_FILE;
                if free_bytes(&dir).is_some_and(|free| free < need) {
                    println!(
                        "scale: {} files need about {:.1} GB free; skipped",
                        grouped(files),
                        need as f64 / 1e9
                    );
                    continue;
                }
                if pool.is_none() {
                    pool = Some(generate::pool(mirrors.as_deref(), registry.as_deref())?);
                }
                let pool = pool.as_ref().ok_or("no pool")?;
                println!("generating {} ({} files from {})", tree.display(), files, pool.origin);
                let _ = fs::remove_dir_all(&tree);
                let bytes = generate::tree(&tree, files, pool)?;
                fs::write(tree.with_extension("done"), format!("{STAMP} {bytes}\n"))?;
                bytes
            }
        };
        println!(
            "scale: {} files: {cold_runs} cold `ctx index`, {runs} each of a warm `ctx suggest` \
             and `{lister}`, {runs} updates after one change; peak memory by {}",
            grouped(files),
            memory.describe()
        );
        let row = measure(&ctx, &tree, &data, &memory, (files, bytes), (cold_runs, runs), lister)?;
        println!("{}", render(std::slice::from_ref(&row), lister));
        rows.push(row);
        let more = walkers::measure(&ctx, &tree, &data, &memory, files, runs)?;
        println!("{}", walkers::render(&more));
        walked.extend(more);
    }
    println!("\nscale: medians of this run\n{}", render(&rows, lister));
    walked.sort_by_key(|w| (w.name, w.files));
    println!("\nthe other walkers\n{}", walkers::render(&walked));
    Ok(())
}

/// The bytes a complete tree at `tree` holds, from its stamp.
fn reuse(tree: &Path) -> Option<u64> {
    let text = fs::read_to_string(tree.with_extension("done")).ok()?;
    let bytes = text.strip_prefix(STAMP)?.trim().parse().ok()?;
    println!("reusing {}", tree.display());
    Some(bytes)
}

/// Free bytes on the disk of `dir`, from `df -Pk`.
fn free_bytes(dir: &Path) -> Option<u64> {
    let out = Command::new("df").arg("-Pk").arg(dir).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let kib: u64 = text.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()?;
    Some(kib * 1024)
}

fn measure(
    ctx: &Path,
    tree: &Path,
    data: &Path,
    memory: &Memory,
    (files, bytes): (usize, u64),
    (cold_runs, runs): (usize, usize),
    lister: &str,
) -> Result<Row> {
    let cache = tree.with_extension("cache");
    let index = || {
        let mut cmd = Command::new(ctx);
        cmd.arg("index").current_dir(tree).env("CTX_CACHE_DIR", &cache);
        cmd
    };
    let (mut cold, mut peak) = (Vec::new(), None);
    for _ in 0..cold_runs {
        let _ = fs::remove_dir_all(&cache);
        let (time, rss) = memory.run(index(), data, None)?;
        cold.push(time);
        peak = peak.max(rss);
    }
    let (_, report) = timed(&mut index())?;
    if !report.contains(&format!("{files} files")) {
        return Err(format!("`ctx index` did not index {files} files:\n{report}").into());
    }
    let suggest = |prompt: &str| {
        let mut cmd = Command::new(ctx);
        cmd.args(["suggest", prompt]).current_dir(tree).env("CTX_CACHE_DIR", &cache);
        timed(&mut cmd)
    };
    let (_, secret) = suggest(generate::SECRET)?;
    if secret.contains("secret.rs") || secret.contains(generate::SECRET) {
        return Err(format!("`ctx suggest` found the file outside the tree:\n{secret}").into());
    }
    let changed = tree.join("pkg000/mod0/part0").join(
        fs::read_dir(tree.join("pkg000/mod0/part0"))?
            .filter_map(std::result::Result::ok)
            .map(|e| e.file_name())
            .min()
            .ok_or("no file to change")?,
    );
    let original = fs::read(&changed)?;
    let (mut warm, mut base, mut update) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..=runs {
        let (query, out) = suggest(PROMPT)?;
        if out.trim().is_empty() {
            return Err(format!("`ctx suggest` found nothing in {}", tree.display()).into());
        }
        let (listing, _) = timed(Command::new("sh").args(["-c", lister]).current_dir(tree))?;
        let mut content = original.clone();
        content.extend_from_slice(format!("\n// changed by the benchmark, run {run}\n").as_bytes());
        fs::write(&changed, &content)?;
        let result = timed(&mut index());
        fs::write(&changed, &original)?;
        let (time, report) = result?;
        if !report.contains(", 1 read,") {
            return Err(
                format!("`ctx index` after one change read more than one file:\n{report}").into()
            );
        }
        // Back to the stored state of the next run's warm query.
        timed(&mut index())?;
        if run > 0 {
            warm.push(query);
            base.push(listing);
            update.push(time);
        }
    }
    let index_bytes = folder_bytes(&cache);
    let (_, unwatched) = suggest(PROMPT)?;
    let watched = watched(ctx, tree, &cache, (&changed, &original), runs, &unwatched)?;
    let secs = |times: &[Duration]| median(times);
    Ok(Row {
        files,
        bytes,
        cold: secs(&cold),
        peak,
        index_bytes,
        warm: secs(&warm),
        baseline: secs(&base),
        update: secs(&update),
        watched,
    })
}

/// With `ctx index --watch` running on the tree: the medians of a warm `ctx suggest`, of one
/// right after a change and of a `ctx index` right after a change (which the service answers
/// once it took the change in), and the service's peak resident set; `None` off Unix.
fn watched(
    ctx: &Path,
    tree: &Path,
    cache: &Path,
    (changed, original): (&Path, &[u8]),
    runs: usize,
    unwatched: &str,
) -> Result<Option<Watched>> {
    if !cfg!(unix) {
        return Ok(None);
    }
    let mut service = Command::new(ctx)
        .args(["index", "--watch", "-q", "--idle", "600"])
        .current_dir(tree)
        .env("CTX_CACHE_DIR", cache)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let pid = service.id();
    let result = (|| -> Result<Watched> {
        let sockets = cache.join("watch");
        let started = std::time::Instant::now();
        while !fs::read_dir(&sockets).is_ok_and(|mut d| d.any(|e| e.is_ok())) {
            if started.elapsed() > Duration::from_secs(600) || service.try_wait()?.is_some() {
                return Err("`ctx index --watch` never listened".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The service refuses questions while it loads the index (the commands then rank by
        // themselves): it is timed once `ctx index` says that it answered.
        while !service_answers(ctx, tree, cache)? {
            if started.elapsed() > Duration::from_secs(600) || service.try_wait()?.is_some() {
                return Err("`ctx index --watch` never answered".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let suggest = || {
            let mut cmd = Command::new(ctx);
            cmd.args(["suggest", PROMPT]).current_dir(tree).env("CTX_CACHE_DIR", cache);
            timed(&mut cmd)
        };
        // The first question may wait for the service's first update.
        let (_, first) = suggest()?;
        if first != unwatched {
            return Err(format!("the service answered otherwise:\n{first}\n{unwatched}").into());
        }
        let index = || {
            let mut cmd = Command::new(ctx);
            cmd.arg("index").current_dir(tree).env("CTX_CACHE_DIR", cache);
            timed(&mut cmd)
        };
        let (mut warm, mut after, mut update) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..runs {
            warm.push(suggest()?.0);
            let mut content = original.to_vec();
            content
                .extend_from_slice(format!("\n// changed under the watch, run {run}\n").as_bytes());
            fs::write(changed, &content)?;
            let timing = suggest();
            fs::write(changed, original)?;
            after.push(timing?.0);
            // The change undone is taken in by the `ctx index` the service answers.
            update.push(index()?.0);
        }
        let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let peak = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib * 1024);
        Ok((median(&warm), median(&after), median(&update), peak))
    })();
    let _ = service.kill();
    let _ = service.wait();
    result.map(Some)
}

/// Whether the index service of `tree` answers: `ctx index` says it did.
fn service_answers(ctx: &Path, tree: &Path, cache: &Path) -> Result<bool> {
    let out =
        Command::new(ctx).arg("index").current_dir(tree).env("CTX_CACHE_DIR", cache).output()?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .trim_end()
        .ends_with("kept current by the index service"))
}

/// Bytes of the files in `dir` and below.
fn folder_bytes(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(std::result::Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// The rows as a Markdown table.
fn render(rows: &[Row], lister: &str) -> String {
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / MIB);
    let mut out = format!(
        "| files | text | cold `ctx index` | peak memory | index | warm `ctx suggest` | `{lister}` \
         | warm / baseline | update after one change | warm with `index --watch` \
         | after one change with it | update after one change with it | service's peak memory |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {:.0} MB | {} | {} | {} | {} | {} | {:.2}x | {} | {} | {} | {} | {} |\n",
            grouped(r.files),
            r.bytes as f64 / 1e6,
            format_seconds(r.cold),
            r.peak.map_or_else(|| "-".to_owned(), mib),
            mib(r.index_bytes),
            format_seconds(r.warm),
            format_seconds(r.baseline),
            r.warm / r.baseline.max(1e-9),
            format_seconds(r.update),
            r.watched.map_or_else(|| "-".to_owned(), |w| format_seconds(w.0)),
            r.watched.map_or_else(|| "-".to_owned(), |w| format_seconds(w.1)),
            r.watched.map_or_else(|| "-".to_owned(), |w| format_seconds(w.2)),
            r.watched.and_then(|w| w.3).map_or_else(|| "-".to_owned(), mib),
        ));
    }
    out
}
