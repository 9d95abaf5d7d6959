//! One 200 MiB text file: the release `ctx expand @big.txt` with the limits off, process start
//! included, beside `cat big.txt` in the same run, both to /dev/null, runs interleaved, and
//! the peak resident set of each.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use super::{Measured, Memory, Sizes, Value, cached, seconds};
use crate::Result;

pub(in crate::bench) const BIG: &str = "process/big_file";
pub(in crate::bench) const BIG_CAT: &str = "process/big_file_cat";
pub(in crate::bench) const BIG_PEAK: &str = "process/big_file_peak_rss";

const BYTES: u64 = 200 * 1024 * 1024;

pub(super) fn run(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let dir = data.join("big-file");
    cached(&dir, || generate(&dir))?;
    let memory = Memory::probe(data);
    println!(
        "big file: {} runs each of `ctx expand @big.txt` and `cat big.txt` in {}",
        sizes.runs,
        dir.display()
    );
    let limit = (2 * BYTES).to_string();
    let (mut ctx_times, mut cat_times, mut peak) = (Vec::new(), Vec::new(), None);
    for run in 0..=sizes.runs {
        let mut cmd = Command::new(ctx);
        cmd.args(["expand", "@big.txt", "--max-lines", "0", "--max-output-bytes", "0"])
            .args(["--max-file-bytes", &limit, "-q"])
            .current_dir(&dir);
        let (time, rss) = memory.run(cmd, data, None)?;
        let mut cat = Command::new("cat");
        cat.arg("big.txt").current_dir(&dir);
        let (cat_time, _) = memory.run(cat, data, None)?;
        if run > 0 {
            ctx_times.push(time);
            cat_times.push(cat_time);
            peak = peak.max(rss);
        }
    }
    let detail = format!("one 200 MiB text file to /dev/null, median of {}", sizes.runs);
    let mut measured = vec![
        seconds(BIG, &ctx_times, Some(BYTES), Some(detail)),
        seconds(BIG_CAT, &cat_times, Some(BYTES), None),
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

/// Lines of code-like text of varied length, with a wrapper tag and a backtick here and
/// there, up to exactly [`BYTES`]; returns the size.
fn generate(dir: &Path) -> Result<u64> {
    fs::create_dir_all(dir)?;
    let words = ["retry", "timeout", "handler", "let", "fn", "=", "{", "}", "(x)", "`code`"];
    let mut out = std::io::BufWriter::new(fs::File::create(dir.join("big.txt"))?);
    let (mut written, mut n) = (0u64, 0usize);
    while written < BYTES {
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
        let take = line.len().min(usize::try_from(BYTES - written).unwrap_or(usize::MAX));
        out.write_all(&line.as_bytes()[..take])?;
        written += take as u64;
    }
    out.flush()?;
    Ok(written)
}
