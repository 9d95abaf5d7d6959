//! `cargo xtask bench rules`: the release `ctx rules --agent all` on a generated project of
//! 200 rule files spread over every agent's folders (docs/agents.md), warm (after one untimed
//! run), beside `ctx check` of a one-line document (the process start) in the same run, runs
//! interleaved, both timed without a wrapper; and its peak resident set, in runs of its own.
//! The target: at most 20 ms.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use super::{Measured, Memory, Sizes, Value, cached, seconds, timed};
use crate::Result;

pub(in crate::bench) const RULES: &str = "process/rules_all";
pub(in crate::bench) const RULES_START: &str = "process/rules_start";
pub(in crate::bench) const RULES_PEAK: &str = "process/rules_peak_rss";

/// Rule files in the project.
const FILES: usize = 200;

pub(super) fn run(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let dir = data.join("rules");
    let count = cached(&dir, || generate(&dir))?;
    if count != FILES {
        return Err(format!("{} holds {count} rule files, not {FILES}", dir.display()).into());
    }
    // An empty home folder: the user's own agent files are not the project's.
    let home = data.join("rules-home");
    fs::create_dir_all(&home)?;
    let memory = Memory::probe(data);
    println!(
        "rules: {} runs each of `ctx rules --agent all` and `ctx check one.md` in {}",
        sizes.runs,
        dir.display()
    );
    let rules = || {
        let mut cmd = Command::new(ctx);
        cmd.args(["rules", "--agent", "all"]).current_dir(&dir).env("HOME", &home);
        cmd
    };
    // Timed on their own (a wrapper that measures memory would add its own start to a run
    // of a few milliseconds); the peak memory in runs of their own.
    let (mut times, mut start, mut peak) = (Vec::new(), Vec::new(), None);
    for run in 0..=sizes.runs {
        let (time, out) = timed(&mut rules())?;
        if !out.starts_with("=== claude ===") {
            return Err(
                format!("`ctx rules --agent all` found no agent in {}", dir.display()).into()
            );
        }
        let mut base = Command::new(ctx);
        base.args(["check", "one.md"]).current_dir(&dir).env("HOME", &home);
        let (base_time, _) = timed(&mut base)?;
        if run > 0 {
            times.push(time);
            start.push(base_time);
            peak = peak.max(memory.run(rules(), data, None)?.1);
        }
    }
    let detail = format!("{FILES} rule files of 9 agents, warm, median of {}", sizes.runs);
    let mut measured = vec![
        seconds(RULES, &times, None, Some(detail)),
        seconds(RULES_START, &start, None, Some("ctx check of a one-line document".into())),
    ];
    if let Some(peak) = peak {
        measured.push(Measured {
            name: RULES_PEAK.to_owned(),
            value: Value::Bytes(peak),
            shown: format!("{:.1} MiB", peak as f64 / crate::bench::MIB),
            detail: Some(format!("{}, max of {}", memory.describe(), sizes.runs)),
        });
    }
    Ok(measured)
}

/// The project: a git root, ten source folders, and [`FILES`] rule files spread over every
/// agent's places (memory files of the root and the folders, scoped rules with globs,
/// instructions, skills); returns how many rule files it holds.
fn generate(dir: &Path) -> Result<usize> {
    let mut files = 0;
    let mut write = |rel: String, text: String| -> Result<()> {
        let path = dir.join(&rel);
        fs::create_dir_all(path.parent().ok_or("a rule file without a folder")?)?;
        fs::write(path, text)?;
        files += 1;
        Ok(())
    };
    fs::create_dir_all(dir.join(".git"))?;
    fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n")?;
    fs::write(dir.join("one.md"), "one line\n")?;
    let body = |what: &str, i: usize| {
        let mut text = format!("# {what} {i}\n\n");
        for line in 0..12 {
            let _ = writeln!(text, "- keep rule {i}.{line} in mind when you change the code.");
        }
        text
    };
    // The root's memory files, and AGENTS.md, CLAUDE.md and GEMINI.md in ten folders: 33.
    for name in ["AGENTS.md", "CLAUDE.md", "GEMINI.md"] {
        write(name.to_owned(), body(name, 0))?;
        for d in 0..10 {
            write(format!("src/m{d}/{name}"), body(name, d))?;
        }
    }
    // Scoped and unscoped rules in each agent's folder: 30 + 30 + 25 + 25 + 25, then 31
    // skills and Copilot's instructions file: 167.
    for i in 0..30 {
        let front = if i % 2 == 0 {
            format!("---\npaths:\n  - \"src/m{}/**\"\n---\n", i % 10)
        } else {
            String::new()
        };
        write(format!(".claude/rules/r{i:02}.md"), front + &body("claude rule", i))?;
        let front = match i % 3 {
            0 => "---\nalwaysApply: true\n---\n".to_owned(),
            1 => format!("---\nglobs: \"src/m{}/**/*.rs\"\n---\n", i % 10),
            _ => format!("---\ndescription: rule {i}\n---\n"),
        };
        write(format!(".cursor/rules/r{i:02}.mdc"), front + &body("cursor rule", i))?;
    }
    for i in 0..25 {
        let front = format!("---\napplyTo: \"src/m{}/**\"\n---\n", i % 10);
        write(
            format!(".github/instructions/r{i:02}.instructions.md"),
            front + &body("copilot", i),
        )?;
        let trigger = ["always_on", "glob\nglobs: src/**/*.rs", "model_decision\ndescription: x"];
        let front = format!("---\ntrigger: {}\n---\n", trigger[i % 3]);
        write(format!(".windsurf/rules/r{i:02}.md"), front + &body("windsurf rule", i))?;
        write(format!(".clinerules/r{i:02}.md"), body("cline rule", i))?;
    }
    for i in 0..31 {
        let front = format!("---\nname: skill-{i}\ndescription: what skill {i} does\n---\n");
        write(format!(".claude/skills/skill-{i}/SKILL.md"), front + &body("skill", i))?;
    }
    write(".github/copilot-instructions.md".to_owned(), body("copilot", 0))?;
    for d in 0..10 {
        fs::write(dir.join(format!("src/m{d}/lib.rs")), "pub fn f() {}\n")?;
    }
    Ok(files)
}
