//! CLI tests of `ctx suggest`, `ctx index` and `ctx expand --auto`: the real binary in a
//! temporary workspace, with the index stored in a temporary cache directory; and the
//! development-set scorer (`../shared/tools/suggest-eval/eval.py`) run on a tiny git
//! repository made here, so that the evaluation keeps working.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use assert_fs::TempDir;
use assert_fs::prelude::*;
use serde_json::Value;

/// The binary in `dir`, with its index in `cache`.
fn ctx_in(dir: &Path, cache: &Path) -> Command {
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CTX_CACHE_DIR", cache)
        .env_remove("CTX_FORCE_TTY")
        .env_remove("RUST_LOG");
    cmd
}

fn stdout(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    dir.child("src/retry.rs")
        .write_str(
            "/// Retries until the deadline.\npub fn retry_with_timeout() {\n    backoff();\n}\n",
        )
        .unwrap();
    dir.child("src/backoff.rs")
        .write_str("/// Waits a little longer each time.\npub fn backoff() {}\n")
        .unwrap();
    dir.child("src/main.rs").write_str("fn main() {}\n").unwrap();
    dir.child("README.md").write_str("Retry with a timeout.\n").unwrap();
    dir
}

/// Every file under `dir`, relative.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn suggest_prints_path_range_and_summary() {
    let dir = workspace();
    let cache = TempDir::new().unwrap();
    let text = stdout(ctx_in(dir.path(), cache.path()).args(["suggest", "fix the retry timeout"]));
    assert_eq!(
        text,
        "src/retry.rs:1-4  fn retry_with_timeout: Retries until the deadline.\n\
         src/backoff.rs:1-2  fn backoff: Waits a little longer each time.\n\
         README.md:1-1  Retry with a timeout.\n"
    );
    let limited =
        stdout(ctx_in(dir.path(), cache.path()).args(["suggest", "--limit", "1", "retry timeout"]));
    assert_eq!(limited.lines().count(), 1);
    // 0 is no limit, as for every limit.
    let all =
        stdout(ctx_in(dir.path(), cache.path()).args(["suggest", "--limit", "0", "retry timeout"]));
    assert!(all.lines().count() >= 3, "{all}");
    // The workspace is left as it was: the index lives in the cache directory.
    assert_eq!(listing(dir.path()), ["README.md", "src/backoff.rs", "src/main.rs", "src/retry.rs"]);
    assert!(listing(cache.path()).iter().any(|f| f.ends_with(".idx")));
}

/// The attack: a file whose doc comment (the summary `ctx suggest` shows) carries a terminal
/// title sequence, a C1 CSI, a bidi override, zero-width and Tag characters. What must not
/// happen: any of them reaching the terminal raw, in the text (with `--explain`) or the JSON.
#[test]
fn summaries_from_files_are_made_visible() {
    let dir = workspace();
    dir.child("src/evil.rs")
        .write_str(
            "/// Retries \u{1b}]0;pwned\u{7}\u{9b}2J the\u{202e} deadline\u{200b}\u{e0041}.\npub fn retry_deadline() {}\n",
        )
        .unwrap();
    let cache = TempDir::new().unwrap();
    let raw = |c: char| {
        matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
            || matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            || matches!(c, '\u{e0000}'..='\u{e007f}')
    };
    let text =
        stdout(ctx_in(dir.path(), cache.path()).args(["suggest", "--explain", "retry deadline"]));
    assert!(text.contains("src/evil.rs"), "{text}");
    assert!(text.contains("\\u{1b}]0;pwned\\u{7}\\u{9b}2J"), "{text}");
    assert!(!text.chars().any(raw), "{text:?}");
    let json = stdout(ctx_in(dir.path(), cache.path()).args([
        "suggest",
        "--format",
        "json",
        "retry deadline",
    ]));
    let value: Value = serde_json::from_str(&json).unwrap();
    assert!(!format!("{value:#}").chars().any(raw), "{value:#}");
}

/// A cache directory that cannot hold the index (here a path under a regular file, which no
/// user can create; or an index file turned into a directory) leaves `ctx suggest` and `ctx
/// expand --auto` ranking in memory after a warning; `ctx index`, whose work is the stored
/// index, fails.
#[test]
fn an_unusable_cache_ranks_without_storing() {
    let dir = workspace();
    let holder = TempDir::new().unwrap();
    holder.child("file").write_str("not a directory\n").unwrap();
    let blocked = holder.path().join("file").join("cache");
    let want = stdout(
        ctx_in(dir.path(), TempDir::new().unwrap().path()).args(["suggest", "retry timeout"]),
    );
    let out = ctx_in(dir.path(), &blocked).args(["suggest", "retry timeout"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("warning: the suggestion index is not stored ("), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let quiet = ctx_in(dir.path(), &blocked).args(["-q", "suggest", "retry"]).output().unwrap();
    assert!(quiet.status.success() && quiet.stderr.is_empty());
    let auto = ctx_in(dir.path(), &blocked)
        .args(["expand", "--auto", "-q", "fix the retry timeout"])
        .output()
        .unwrap();
    assert!(auto.status.success());
    assert!(String::from_utf8(auto.stdout).unwrap().contains("src/retry.rs"));
    let index = ctx_in(dir.path(), &blocked).arg("index").output().unwrap();
    assert_eq!(index.status.code(), Some(2));

    // The store opens, but the index cannot be read or written where it lies.
    let cache = TempDir::new().unwrap();
    stdout(ctx_in(dir.path(), cache.path()).arg("index"));
    let stored = listing(cache.path()).into_iter().find(|f| f.ends_with(".idx")).unwrap();
    std::fs::remove_file(cache.path().join(&stored)).unwrap();
    std::fs::create_dir(cache.path().join(&stored)).unwrap();
    let out = ctx_in(dir.path(), cache.path()).args(["suggest", "retry timeout"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    assert!(String::from_utf8(out.stderr).unwrap().starts_with("warning: the suggestion index"));
}

/// The attack: a repository that is the user's home folder, so the user's cache folder
/// (`~/.cache/ctx`) would be written into the workspace. What must not happen: any file
/// written into the workspace; the commands rank in memory, `ctx index` refuses.
#[test]
fn a_cache_folder_in_the_workspace_is_never_written() {
    let dir = workspace();
    let before = listing(dir.path());
    let want = stdout(
        ctx_in(dir.path(), TempDir::new().unwrap().path()).args(["suggest", "retry timeout"]),
    );
    // The user's cache folder (`~/.cache/ctx`), the home folder being the workspace.
    let home = |cmd: &mut Command| -> Command {
        let mut cmd = std::mem::replace(cmd, Command::cargo_bin("ctx").unwrap());
        cmd.env_remove("CTX_CACHE_DIR").env_remove("XDG_CACHE_HOME").env("HOME", dir.path());
        cmd
    };
    let cache = Path::new("unused");
    let out = home(&mut ctx_in(dir.path(), cache)).args(["suggest", "retry timeout"]).output();
    let out = out.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("lies in the workspace"), "{stderr}");
    let index = home(&mut ctx_in(dir.path(), cache)).arg("index").output().unwrap();
    assert_eq!(index.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&index.stderr).contains("CTX_CACHE_DIR"));
    let auto =
        home(&mut ctx_in(dir.path(), cache)).args(["expand", "--auto", "-q", "fix retry"]).output();
    assert!(auto.unwrap().status.success());
    assert_eq!(listing(dir.path()), before, "nothing written into the workspace");
}

#[test]
fn suggest_json_and_explain() {
    let dir = workspace();
    let cache = TempDir::new().unwrap();
    let json = stdout(ctx_in(dir.path(), cache.path()).args([
        "suggest",
        "--format",
        "json",
        "retry_with_timeout",
    ]));
    let value: Value = serde_json::from_str(&json).unwrap();
    let first = &value[0];
    let mut keys: Vec<&str> = first.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["lines", "path", "ranges", "score", "summary", "why"]);
    assert_eq!(first["path"], "src/retry.rs");
    assert_eq!(first["lines"], serde_json::json!({"start": 1, "end": 4}));
    assert_eq!(first["ranges"], serde_json::json!([{"start": 1, "end": 4}]));
    assert!(first["score"].as_f64().unwrap() > 0.0);
    let why = first["why"].as_array().unwrap();
    assert!(why.iter().any(|w| w.as_str().unwrap().contains("retry_with_timeout")), "{why:?}");
    let explained = stdout(ctx_in(dir.path(), cache.path()).args([
        "suggest",
        "--explain",
        "retry_with_timeout",
    ]));
    assert!(explained.contains("    terms: "), "{explained}");
    assert!(explained.contains("    defines `retry_with_timeout`"), "{explained}");
    assert!(explained.contains("    linked to src/retry.rs"), "{explained}");
    let text =
        stdout(ctx_in(dir.path(), cache.path()).args(["suggest", "--format", "text", "retry"]));
    assert!(text.starts_with("src/retry.rs:1-4  "));
    let bad = ctx_in(dir.path(), cache.path())
        .args(["suggest", "--format", "xml", "x"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn index_reports_and_updates_incrementally() {
    let dir = workspace();
    let cache = TempDir::new().unwrap();
    let first = stdout(ctx_in(dir.path(), cache.path()).arg("index"));
    assert!(
        first.starts_with("4 files (1 doc, 3 source), 4 read, 0 unchanged, 0 removed\n"),
        "{first}"
    );
    dir.child("src/main.rs").write_str("fn main() { retry(); }\n").unwrap();
    let json = stdout(ctx_in(dir.path(), cache.path()).args(["index", "--format", "json"]));
    let value: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (value["files"].as_u64(), value["indexed"].as_u64(), value["reused"].as_u64()),
        (Some(4), Some(1), Some(3))
    );
    assert_eq!(value["classes"], serde_json::json!({"doc": 1, "source": 3}));
    assert!(value["bytes"].as_u64().unwrap() > 0);
}

#[test]
fn a_corrupt_index_is_rebuilt_by_the_cli() {
    let dir = workspace();
    let cache = TempDir::new().unwrap();
    stdout(ctx_in(dir.path(), cache.path()).arg("index"));
    let idx = listing(cache.path()).into_iter().find(|f| f.ends_with(".idx")).unwrap();
    std::fs::write(cache.path().join(&idx), b"not an index").unwrap();
    let text = stdout(ctx_in(dir.path(), cache.path()).arg("index"));
    assert!(text.contains("rebuilt (the stored index was corrupt)"), "{text}");
    let found = stdout(ctx_in(dir.path(), cache.path()).args(["suggest", "retry"]));
    assert!(found.starts_with("src/retry.rs:"));
}

#[test]
fn expand_auto_appends_suggestions_after_the_mentions() {
    let dir = workspace();
    let cache = TempDir::new().unwrap();
    let out = stdout(ctx_in(dir.path(), cache.path()).args([
        "expand",
        "--auto",
        "see @src/main.rs and fix the retry timeout",
    ]));
    let mention = out.find("<file path=\"src/main.rs\">").unwrap();
    let suggested = out.find("The following files were suggested").unwrap();
    let retry = out.find("<file path=\"src/retry.rs\" lines=\"1-4\">").unwrap();
    assert!(out.starts_with("see @src/main.rs and fix the retry timeout\n"));
    assert!(mention < suggested && suggested < retry, "{out}");
    // The mentioned file is not suggested again.
    assert_eq!(out.matches("path=\"src/main.rs\"").count(), 1);

    let json = stdout(ctx_in(dir.path(), cache.path()).args([
        "expand",
        "--auto",
        "--format",
        "json",
        "see @src/main.rs fix the retry timeout",
    ]));
    let value: Value = serde_json::from_str(&json).unwrap();
    let refs = value["references"].as_array().unwrap();
    assert_eq!(refs[0]["path"], "src/main.rs");
    assert!(refs[0].get("suggested").is_none());
    assert_eq!(refs[1]["path"], "src/retry.rs");
    assert_eq!(refs[1]["suggested"], true);
    assert_eq!(refs[1]["lines"], serde_json::json!({"start": 1, "end": 4}));
    // The documented field order is kept.
    let at: Vec<usize> =
        ["content", "description", "params", "metadata", "references", "diagnostics", "stats"]
            .iter()
            .map(|k| json.find(&format!("\n  \"{k}\": ")).unwrap())
            .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{json}");

    let md = stdout(ctx_in(dir.path(), cache.path()).args([
        "expand",
        "--auto",
        "--format",
        "markdown",
        "retry timeout",
    ]));
    assert!(
        md.contains("### Suggested Context References:\n\n#### Source: src/retry.rs#L1-4\n"),
        "{md}"
    );
}

#[test]
fn autocontext_from_the_configuration() {
    let dir = workspace();
    let cache = TempDir::new().unwrap();
    dir.child("ctx.toml").write_str("autocontext = true\nautocontext_max_files = 1\n").unwrap();
    let out = stdout(ctx_in(dir.path(), cache.path()).args(["expand", "fix the retry timeout"]));
    assert_eq!(out.matches("<file ").count(), 1, "{out}");
    assert!(out.contains("<file path=\"src/retry.rs\""));
    dir.child("ctx.toml").write_str("autocontext = true\nautocontext_max_tokens = 4\n").unwrap();
    let out = stdout(ctx_in(dir.path(), cache.path()).args(["expand", "fix the retry timeout"]));
    assert_eq!(out, "fix the retry timeout", "nothing fits in four tokens");
}

/// A transcript full of the prompt's words is never suggested, nor attached by `--auto`,
/// unless data files are asked for (`--data-files`, `suggest_data_files = true`).
#[test]
fn data_files_are_left_out_unless_asked_for() {
    let dir = workspace();
    let cache = TempDir::new().unwrap();
    let turn =
        "{\"role\": \"user\", \"content\": \"fix the retry timeout, retry with a timeout\"}\n";
    dir.child("turns.jsonl").write_str(&turn.repeat(20)).unwrap();
    dir.child("Cargo.lock").write_str("[[package]]\nname = \"retry-timeout\"\n").unwrap();
    let paths = |text: &str| -> Vec<String> {
        text.lines().map(|l| l.split(':').next().unwrap_or("").to_owned()).collect()
    };
    let found = stdout(ctx_in(dir.path(), cache.path()).args(["suggest", "fix the retry timeout"]));
    assert!(!paths(&found).iter().any(|p| p == "turns.jsonl" || p == "Cargo.lock"), "{found}");
    let out = stdout(ctx_in(dir.path(), cache.path()).args([
        "expand",
        "--auto",
        "fix the retry timeout",
    ]));
    assert!(!out.contains("turns.jsonl") && out.contains("src/retry.rs"), "{out}");
    let json = stdout(ctx_in(dir.path(), cache.path()).args(["index", "--format", "json"]));
    let value: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["classes"]["left-out"], 2, "{json}");
    assert_eq!(value["data_files"], false);
    // Asked for on the command line, then in the configuration: the index is rebuilt with them.
    let args = ["suggest", "--data-files", "fix the retry timeout"];
    let found = stdout(ctx_in(dir.path(), cache.path()).args(args));
    assert!(paths(&found).iter().any(|p| p == "turns.jsonl"), "{found}");
    dir.child("ctx.toml").write_str("suggest_data_files = true\n").unwrap();
    let json = stdout(ctx_in(dir.path(), cache.path()).args(["index", "--format", "json"]));
    let value: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (&value["data_files"], &value["classes"]["left-out"]),
        (&Value::Bool(true), &Value::Null)
    );
}

// ---------------------------------------------------------------- the evaluation tool

/// `../shared/tools/suggest-eval/` beside the repository.
/// The scorer of the development set, which lives beside the repository (`../shared`), and needs
/// Python; `None` (the test says so and passes) on a machine without either.
fn eval_tool() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tools/suggest-eval");
    let python = std::process::Command::new("python3").arg("--version").output();
    if !dir.join("eval.py").is_file() || !python.is_ok_and(|out| out.status.success()) {
        let note = format!("skipped: no python3 or no evaluation tool at {}\n", dir.display());
        std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes()).unwrap();
        return None;
    }
    Some(dir)
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn the_evaluation_tool_scores_ctx_suggest() {
    let Some(tool) = eval_tool() else { return };
    let work = TempDir::new().unwrap();
    let repo = work.path().join("tiny");
    let tree = workspace();
    std::fs::create_dir_all(&repo).unwrap();
    for f in listing(tree.path()) {
        let to = repo.join(&f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(tree.path().join(&f), to).unwrap();
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "parent"]);
    let parent = git(&repo, &["rev-parse", "HEAD"]);
    let queries = serde_json::json!([
        {"id": "tiny#1", "repo": "local/tiny", "parent": parent, "commit": parent,
         "prompt": "retry: honour the deadline when the timeout passes", "prompt_noscope": "",
         "gold": ["src/retry.rs"], "gold_lines": {"src/retry.rs": [[2, 3]]}},
        {"id": "tiny#2", "repo": "local/tiny", "parent": parent, "commit": parent,
         "prompt": "backoff should wait longer each time", "prompt_noscope": "",
         "gold": ["src/backoff.rs"], "gold_lines": {"src/backoff.rs": [[2, 2]]}}
    ]);
    let dataset = work.path().join("dataset.json");
    std::fs::write(&dataset, serde_json::json!({"queries": queries}).to_string()).unwrap();
    let results = work.path().join("results.json");
    let ctx = assert_cmd::cargo::cargo_bin("ctx");
    let out = std::process::Command::new("python3")
        .arg(tool.join("eval.py"))
        .arg("--dataset")
        .arg(&dataset)
        .arg("--mirror")
        .arg(format!("tiny={}", repo.join(".git").display()))
        .args(["--name", "ctx", "--jobs", "1", "--cmd"])
        .arg(format!(
            "{} suggest --root {{root}} --format json --limit {{limit}} {{prompt}}",
            ctx.display()
        ))
        .arg("--out")
        .arg(&results)
        .env("SUGGEST_SCRATCH", work.path().join("scratch"))
        .env("CTX_CACHE_DIR", work.path().join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    assert!(table.contains("| ctx | **all** | 2 | 1.000 |"), "{table}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let text = saved.to_string();
    assert!(text.contains("\"lines@10\":1.0"), "{text}");
}

// ---------------------------------------------------------------- the picker

/// `ctx suggest --pick` in a pseudo-terminal, driven by keystrokes: drop the second suggestion,
/// edit the range of the first, keep the third, and get the expansion of what was kept.
#[cfg(feature = "picker")]
#[cfg(unix)]
#[test]
fn the_picker_keeps_drops_and_edits_suggestions() {
    use expectrl::Expect;
    let (_dir, _cache, mut term) = picker("fix the retry timeout");
    term.expect("Attach which suggestions?").unwrap();
    term.expect("README.md:1-1").unwrap();
    // Down to the second line, unselect it, confirm.
    term.send("\x1b[B").unwrap();
    term.send(" ").unwrap();
    term.send("\r").unwrap();
    term.expect("Edit line ranges?").unwrap();
    term.send("y\r").unwrap();
    term.expect("Lines of src/retry.rs").unwrap();
    // The field starts empty, its default shown beside it: type a range.
    term.send("2-3\r").unwrap();
    term.expect("Lines of README.md").unwrap();
    term.send("\r").unwrap();
    let out = term.expect(expectrl::Eof).unwrap();
    let text = String::from_utf8_lossy(out.as_bytes()).into_owned();
    assert!(text.contains("<file path=\"src/retry.rs\" lines=\"2-3\">"), "{text}");
    assert!(text.contains("<file path=\"README.md\" lines=\"1-1\">"), "{text}");
    assert!(!text.contains("<file path=\"src/backoff.rs\""), "{text}");
}

/// `ctx suggest --pick PROMPT` in a pseudo-terminal over [`workspace`]; every wait is bounded.
#[cfg(feature = "picker")]
#[cfg(unix)]
fn picker(prompt: &str) -> (TempDir, TempDir, expectrl::session::OsSession) {
    let dir = workspace();
    let cache = TempDir::new().unwrap();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctx"));
    cmd.current_dir(dir.path())
        .env("CTX_CACHE_DIR", cache.path())
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .args(["suggest", "--pick", prompt]);
    let mut term = expectrl::Session::spawn(cmd).unwrap();
    term.set_expect_timeout(Some(std::time::Duration::from_secs(30)));
    (dir, cache, term)
}

/// Ctrl-U clears the field it is typed in, the list's filter as the range being edited: it
/// never types a `u` (which made the filter match nothing and the range unreadable).
#[cfg(feature = "picker")]
#[cfg(unix)]
#[test]
fn ctrl_u_in_the_picker_clears_the_field() {
    use expectrl::Expect;
    let (_dir, _cache, mut term) = picker("fix the retry timeout");
    term.expect("README.md:1-1").unwrap();
    // A filter that matches nothing, cleared: every suggestion is listed again.
    term.send("zz").unwrap();
    term.expect("zz").unwrap();
    term.send("\x15").unwrap();
    term.expect("src/backoff.rs:").unwrap();
    term.expect("README.md:1-1").unwrap();
    term.send("\r").unwrap();
    term.expect("Edit line ranges?").unwrap();
    term.send("y\r").unwrap();
    term.expect("Lines of src/retry.rs").unwrap();
    // A wrong range typed, cleared, and the right one typed instead.
    term.send("9-9").unwrap();
    term.send("\x15").unwrap();
    term.send("2-3\r").unwrap();
    term.expect("Lines of src/backoff.rs").unwrap();
    term.send("\r").unwrap();
    term.expect("Lines of README.md").unwrap();
    term.send("\r").unwrap();
    let out = term.expect(expectrl::Eof).unwrap();
    let text = String::from_utf8_lossy(out.as_bytes()).into_owned();
    assert!(text.contains("<file path=\"src/retry.rs\" lines=\"2-3\">"), "{text}");
    assert!(text.contains("<file path=\"src/backoff.rs\""), "{text}");
}

/// Esc ends the picker: exit status 2, a line that says so, and no expansion.
#[cfg(feature = "picker")]
#[cfg(unix)]
#[test]
fn esc_cancels_the_picker() {
    use expectrl::Expect;
    let (_dir, _cache, mut term) = picker("fix the retry timeout");
    term.expect("README.md:1-1").unwrap();
    term.send("\x1b").unwrap();
    let out = term.expect(expectrl::Eof).unwrap();
    let text = String::from_utf8_lossy(out.as_bytes()).into_owned();
    assert!(text.contains("ctx: error: the picker was cancelled (esc)"), "{text}");
    assert!(!text.contains("<file "), "{text}");
    let status = term.get_process_mut().wait().unwrap();
    let pid = term.get_process().pid();
    assert_eq!(status, expectrl::process::unix::WaitStatus::Exited(pid, 2));
}
