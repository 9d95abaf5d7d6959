//! One 200 MiB text file of real source text (the cargo registry's `.rs` files one after
//! another, generated lines when it has too few): the release `ctx expand @big.txt` with the
//! limits off (`--max-tokens 0` too) and `ctx assemble` of a document that includes it, process
//! start included, beside `cat big.txt` in the same run, all to /dev/null, runs interleaved,
//! and the peak resident set of the expansion; then the expansion and `cat` again with their
//! output read through a pipe (by this process, as a consumer of the output would).

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Measured, Memory, Sizes, Source, Value, cached, cargo_home, copy_sources, seconds};
use crate::Result;

pub(in crate::bench) const BIG: &str = "process/big_file";
pub(in crate::bench) const BIG_ASSEMBLE: &str = "process/big_file_assemble";
pub(in crate::bench) const BIG_CAT: &str = "process/big_file_cat";
pub(in crate::bench) const BIG_PEAK: &str = "process/big_file_peak_rss";
pub(in crate::bench) const BIG_PIPE: &str = "process/big_file_pipe";
pub(in crate::bench) const BIG_CAT_PIPE: &str = "process/big_file_cat_pipe";

const BYTES: u64 = 200 * 1024 * 1024;

pub(super) fn run(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let dir = data.join("big-file-real");
    let registry = cargo_home().map(|home| home.join("registry").join("src"));
    let source = cached(&dir, || generate(&dir, registry.as_deref()))?;
    let memory = Memory::probe(data);
    println!(
        "big file: {} runs each of `ctx expand @big.txt`, `ctx assemble big.md` and `cat big.txt` \
         in {} ({source}), and of the expansion and `cat` through a pipe",
        sizes.runs,
        dir.display()
    );
    let limit = (2 * BYTES).to_string();
    let limits = ["--max-lines", "0", "--max-output-bytes", "0", "--max-tokens", "0", "-q"];
    let (mut times, mut peak) = ([(); 5].map(|()| Vec::new()), None);
    for run in 0..=sizes.runs {
        let expand = || {
            let mut expand = Command::new(ctx);
            expand.args(["expand", "@big.txt", "--max-file-bytes", &limit]).args(limits);
            expand.current_dir(&dir);
            expand
        };
        let cat = || {
            let mut cat = Command::new("cat");
            cat.arg("big.txt").current_dir(&dir);
            cat
        };
        let mut assemble = Command::new(ctx);
        assemble.args(["assemble", "big.md", "--max-file-bytes", &limit]).args(limits);
        assemble.current_dir(&dir);
        for (i, cmd) in [expand(), assemble, cat()].into_iter().enumerate() {
            let (time, rss) = memory.run(cmd, data, None)?;
            if run > 0 {
                times[i].push(time);
                if i == 0 {
                    peak = peak.max(rss);
                }
            }
        }
        for (i, cmd) in [(3, expand()), (4, cat())] {
            let time = piped(cmd)?;
            if run > 0 {
                times[i].push(time);
            }
        }
    }
    let detail = |what: &str| {
        format!("one 200 MiB file of {source} text{what} to /dev/null, median of {}", sizes.runs)
    };
    let [expand, assemble, cat, expand_pipe, cat_pipe] = &times;
    let piped =
        format!("one 200 MiB file of {source} text read through a pipe, median of {}", sizes.runs);
    let mut measured = vec![
        seconds(BIG, expand, Some(BYTES), Some(detail(""))),
        seconds(BIG_ASSEMBLE, assemble, Some(BYTES), Some(detail(", included by a document"))),
        seconds(BIG_CAT, cat, Some(BYTES), None),
        seconds(BIG_PIPE, expand_pipe, Some(BYTES), Some(piped)),
        seconds(BIG_CAT_PIPE, cat_pipe, Some(BYTES), None),
    ];
    if let Some(peak) = peak {
        measured.push(Measured {
            name: BIG_PEAK.to_owned(),
            value: Value::Bytes(peak),
            shown: format!(
                "{:.1} MiB ({:.2}x the file)",
                peak as f64 / crate::bench::MIB,
                peak as f64 / BYTES as f64
            ),
            detail: Some(format!("{}, max of {}", memory.describe(), sizes.runs)),
        });
    }
    Ok(measured)
}

/// Runs `cmd` with its output read through a pipe and thrown away, returning its wall-clock
/// time (process start and the last read included); a command that fails is an error.
fn piped(mut cmd: Command) -> Result<Duration> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    if let Some(mut out) = child.stdout.take() {
        std::io::copy(&mut out, &mut std::io::sink())?;
    }
    let status = child.wait()?;
    let time = start.elapsed();
    if !status.success() {
        return Err(format!("`{}` failed: {status}", crate::display(&cmd)).into());
    }
    Ok(time)
}

/// `big.txt`, exactly [`BYTES`] long: the registry's sources one after another, cut at a
/// character boundary and padded with generated lines; and `big.md`, which includes it.
fn generate(dir: &Path, registry: Option<&Path>) -> Result<Source> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join("big.md"), "# All of it\n\n@big.txt\n")?;
    let mut out = std::io::BufWriter::new(fs::File::create(dir.join("big.txt"))?);
    let mut written = 0u64;
    if let Some(registry) = registry {
        copy_sources(registry, &mut |content| {
            let room = usize::try_from(BYTES - written).unwrap_or(usize::MAX);
            let text = std::str::from_utf8(content).unwrap_or("");
            let mut take = text.len().min(room);
            while !text.is_char_boundary(take) {
                take -= 1;
            }
            out.write_all(&text.as_bytes()[..take])?;
            written += take as u64;
            Ok(take == text.len() && written < BYTES)
        })?;
    }
    let copied = written;
    written += generated(&mut out, BYTES - written)?;
    out.flush()?;
    Ok(match copied {
        0 => Source::Generated,
        n if n == written => Source::Registry,
        _ => Source::Mixed,
    })
}

/// Lines of code-like text of varied length, with a wrapper tag and a backtick here and
/// there, exactly `bytes` of them; returns the size.
fn generated(out: &mut impl Write, bytes: u64) -> Result<u64> {
    let words = ["retry", "timeout", "handler", "let", "fn", "=", "{", "}", "(x)", "`code`"];
    let (mut written, mut n) = (0u64, 0usize);
    while written < bytes {
        n += 1;
        let mut line = String::new();
        for k in 0..(3 + n % 12) {
            line.push_str(words[(n * 7 + k * 3) % words.len()]);
            line.push(' ');
        }
        if n % 5000 == 0 {
            line.push_str("</file>");
        }
        line.push('\n');
        let take = line.len().min(usize::try_from(bytes - written).unwrap_or(usize::MAX));
        out.write_all(&line.as_bytes()[..take])?;
        written += take as u64;
    }
    Ok(written)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_piped_run_reads_all_the_output_and_fails_with_the_command() {
        // More than a pipe holds: the run ends only if the output is read.
        let mut loud = Command::new("head");
        loud.args(["-c", "4000000", "/dev/zero"]);
        assert!(piped(loud).is_ok());
        assert!(piped(Command::new("false")).is_err());
    }
}
