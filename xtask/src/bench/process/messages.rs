//! `cargo xtask bench messages`: the release `ctx messages` on a workspace with 10 rules, a
//! transcript of 20 turns and a 2 MB screenshot, process start included, beside `cat` of the
//! same files plus `base64` of the screenshot in the same run, both to /dev/null, and its
//! peak resident set.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::{Measured, Memory, Sizes, Value, cached, seconds};
use crate::Result;

pub(in crate::bench) const MESSAGES: &str = "process/messages";
pub(in crate::bench) const MESSAGES_BASELINE: &str = "process/messages_cat_base64";
pub(in crate::bench) const MESSAGES_PEAK: &str = "process/messages_peak_rss";

const RULES: usize = 10;
const TURNS: usize = 20;
const SCREENSHOT_BYTES: usize = 2 * 1024 * 1024;

pub(super) fn run(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let dir = data.join("messages");
    cached(&dir, || generate(&dir))?;
    let memory = Memory::probe(data);
    let prompt = "what goes wrong in ![the screen](shot.png)? see @src/app.rs";
    let files = "cat .ctx/rules/*.md turns.jsonl src/app.rs shot.png > /dev/null && base64 shot.png > /dev/null";
    println!(
        "messages: {} runs each of `ctx messages` and `cat` + `base64` in {}",
        sizes.runs,
        dir.display()
    );
    let (mut ctx_times, mut base_times, mut peak) = (Vec::new(), Vec::new(), None);
    for run in 0..=sizes.runs {
        let mut cmd = Command::new(ctx);
        cmd.args(["messages", "--history", "turns.jsonl", prompt]).current_dir(&dir);
        let (time, rss) = memory.run(cmd, data, None)?;
        let mut base = Command::new("sh");
        base.args(["-c", files]).current_dir(&dir);
        let (base_time, _) = memory.run(base, data, None)?;
        if run > 0 {
            ctx_times.push(time);
            base_times.push(base_time);
            peak = peak.max(rss);
        }
    }
    let detail =
        format!("{RULES} rules, {TURNS} turns, a 2 MB screenshot, median of {}", sizes.runs);
    let mut measured = vec![
        seconds(MESSAGES, &ctx_times, None, Some(detail)),
        seconds(MESSAGES_BASELINE, &base_times, None, None),
    ];
    if let Some(peak) = peak {
        measured.push(Measured {
            name: MESSAGES_PEAK.to_owned(),
            value: Value::Bytes(peak),
            shown: format!("{:.1} MiB", peak as f64 / crate::bench::MIB),
            detail: Some(format!("{}, max of {}", memory.describe(), sizes.runs)),
        });
    }
    Ok(measured)
}

/// The workspace: rules with front matter and an include each, a transcript, a source file,
/// and a screenshot (a PNG signature, then bytes that do not compress).
fn generate(dir: &Path) -> Result<u64> {
    fs::create_dir_all(dir.join(".ctx/rules"))?;
    fs::create_dir_all(dir.join("src"))?;
    let source: String = (0..200).map(|i| format!("fn step_{i}() -> u32 {{ {i} }}\n")).collect();
    fs::write(dir.join("src/app.rs"), &source)?;
    for r in 0..RULES {
        let rule = format!(
            "---\nDescription: rule {r}\nParams:\n  - p{r}\n---\n# Rule {r}\n\n{}\n\n@[../../src/app.rs:1:20]\n",
            "Keep functions short and name them for what they do. ".repeat(20)
        );
        fs::write(dir.join(format!(".ctx/rules/r{r:02}.md")), rule)?;
    }
    let turns: String = (0..TURNS)
        .map(|t| {
            let role = if t % 2 == 0 { "user" } else { "assistant" };
            let text =
                format!("turn {t}: {}", "a sentence of the conversation so far. ".repeat(12));
            format!("{{\"role\": \"{role}\", \"content\": \"{text}\"}}\n")
        })
        .collect();
    fs::write(dir.join("turns.jsonl"), turns)?;
    let mut shot = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    while shot.len() < SCREENSHOT_BYTES {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        shot.extend_from_slice(&state.to_le_bytes());
    }
    fs::write(dir.join("shot.png"), &shot)?;
    Ok(shot.len() as u64)
}
