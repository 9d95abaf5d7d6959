//! The acceptance of the readers: for every fixture tree the real agents ran
//! (tools/agents-observe, captured on 2026-11-26 against a local mock model server), what
//! `ctx rules --agent X --text` prints is byte for byte the rule text that agent sent: the
//! same pieces, in the same order, cut at the same place.
//!
//! Each fixture is `tests/fixtures/observed/NAME/`: `ws/` (the workspace; `ws/repo` is the
//! repository, a `.git` folder is made when `meta.json` says `git`), `home/` (the user's home
//! folder), `meta.json` (the working folder, the file the agent was made to read, the large
//! files generated here) and one `AGENT.txt` per agent: the rule text it sent, its paths
//! written `{ws}` and `{home}`, runs of generated lines `{lines LABEL FIRST..LAST}`.
//! The workspace root of ctx is `ws/`, so the folder above the repository is inside it; the
//! home folder is an allowed root (`--allow '~'`), so an approved import of `~/…` is read.

use std::path::{Path, PathBuf};

use ctx_agents::Agent;
use ctx_fs::Limits;
use serde_json::Value;

use crate::util::{Tree, view};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/observed")
}

/// Line `n` of a generated file: numbered, 100 bytes, or thirty `€` on the euro line.
fn generated_line(label: &str, n: usize, euro_line: Option<usize>) -> String {
    let head = format!("{label}-L{n:05} ");
    if euro_line == Some(n) {
        format!("{head}{}\n", "\u{20ac}".repeat(30))
    } else {
        format!("{head}{}\n", "x".repeat(99 - head.len()))
    }
}

/// Copies `from` into `to`, `__WS__` and `__HOME__` replaced in every file.
fn copy(from: &Path, to: &Path, ws: &str, home: &str) {
    let Ok(entries) = std::fs::read_dir(from) else { return };
    for entry in entries {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy(&entry.path(), &target, ws, home);
        } else {
            let bytes = std::fs::read(entry.path()).unwrap();
            let bytes = match String::from_utf8(bytes) {
                Ok(text) => text.replace("__WS__", ws).replace("__HOME__", home).into_bytes(),
                Err(e) => e.into_bytes(),
            };
            std::fs::write(target, bytes).unwrap();
        }
    }
}

/// The tree of fixture `dir`, laid out as the harness laid it out.
fn lay_out(dir: &Path, meta: &Value) -> Tree {
    let tree = Tree::new();
    let (ws, home) = (tree.ws.to_str().unwrap().to_owned(), tree.home.to_str().unwrap().to_owned());
    copy(&dir.join("ws"), &tree.ws, &ws, &home);
    copy(&dir.join("home"), &tree.home, &ws, &home);
    for file in meta["generate"].as_array().into_iter().flatten() {
        let (label, total) = (file["label"].as_str().unwrap(), file["bytes"].as_u64().unwrap());
        let euro = file["euro_line"].as_u64().map(|n| n as usize);
        let mut text = String::new();
        let mut n = 0;
        while (text.len() as u64) < total {
            n += 1;
            text.push_str(&generated_line(label, n, euro));
        }
        let rel = file["path"].as_str().unwrap();
        let path = match rel.strip_prefix("ws/") {
            Some(rest) => tree.ws.join(rest),
            None => tree.home.join(rel.strip_prefix("home/").unwrap()),
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(tree.ws.join(meta["cwd"].as_str().unwrap())).unwrap();
    if meta["git"].as_bool() != Some(false) {
        std::fs::create_dir_all(tree.ws.join("repo/.git")).unwrap();
    }
    tree
}

/// The expected text: placeholders filled in, generated runs written out.
fn expected(text: &str, tree: &Tree, meta: &Value) -> String {
    let euro_of = |label: &str| {
        meta["generate"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|f| f["label"] == label)
            .and_then(|f| f["euro_line"].as_u64())
            .map(|n| n as usize)
    };
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if let Some(run) = line.strip_prefix("{lines ") {
            let run = run.trim_end().trim_end_matches('}');
            let (label, range) = run.split_once(' ').unwrap();
            let (first, last) = range.split_once("..").unwrap();
            for n in first.parse::<usize>().unwrap()..=last.parse::<usize>().unwrap() {
                out.push_str(&generated_line(label, n, euro_of(label)));
            }
        } else {
            out.push_str(line);
        }
    }
    out.replace("{ws}", tree.ws.to_str().unwrap()).replace("{home}", tree.home.to_str().unwrap())
}

/// Where two texts first differ, with a little of each around it.
fn first_difference(want: &str, got: &str) -> String {
    let at = want.bytes().zip(got.bytes()).take_while(|(a, b)| a == b).count();
    let from = at.saturating_sub(120);
    let window = |s: &str| {
        let mut start = from.min(s.len());
        while !s.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (at + 200).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        format!("{:?}", &s[start..end])
    };
    format!(
        "first difference at byte {at} (lengths {} and {}):\n  sent: {}\n  ctx:  {}",
        want.len(),
        got.len(),
        window(want),
        window(got)
    )
}

#[test]
fn every_observed_request_is_reproduced() {
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut names: Vec<PathBuf> =
        std::fs::read_dir(fixtures()).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for dir in names {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let tree = lay_out(&dir, &meta);
        let mut limits = Limits::default();
        limits.max_file_bytes = 4 << 20;
        let sandbox = tree.sandbox(limits, true);
        let home = tree.home();
        let cwd = meta["cwd"].as_str().unwrap();
        let file = meta["for"].as_str();
        for agent in meta["agents"].as_array().unwrap() {
            let agent = Agent::from_name(agent.as_str().unwrap()).unwrap();
            // `CTX_AGENTS_ONLY=claude` compares one agent's requests (while working on it).
            if std::env::var("CTX_AGENTS_ONLY").is_ok_and(|only| only != agent.name()) {
                continue;
            }
            let sent = std::fs::read_to_string(dir.join(format!("{agent}.txt"))).unwrap();
            let want = expected(&sent, &tree, &meta);
            let rules = view(&sandbox, &home, agent, cwd, file);
            let got = ctx_agents::text(&rules);
            compared += 1;
            if want != got {
                failures.push(format!("{name} / {agent}: {}", first_difference(&want, &got)));
            }
        }
    }
    if std::env::var_os("CTX_AGENTS_ONLY").is_none() {
        assert!(compared >= 40, "only {compared} observed requests compared");
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
