//! The token budget through the binary (docs/assembly.md, "Limits on content"): a file cut
//! by the budget ends with a marker and a file left out leaves a note, in every format and
//! in every command that assembles; the default guard; the tokenizer named wherever tokens
//! are shown; and attacks on the budget itself.

use std::time::Duration;

use assert_cmd::Command;
use assert_fs::TempDir;
use assert_fs::prelude::*;
use serde_json::Value;

use crate::util::{Run, run};

fn ctx(dir: &TempDir) -> Command {
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(dir.path()).env("NO_COLOR", "1").env_remove("RUST_LOG");
    cmd.env("CTX_CONFIG_DIR", "/nonexistent/ctx-config")
        .env("CTX_CACHE_DIR", dir.path().join(".cache"));
    // A hang turns into a failure.
    cmd.timeout(Duration::from_secs(120));
    cmd
}

/// `a.txt` of 300 lines (3 000 tokens) and `b.txt` of 50 (300 tokens).
fn two_files() -> TempDir {
    let dir = TempDir::new().unwrap();
    let a: String = (1..=300).map(|i| format!("line {i} of a with some words here\n")).collect();
    let b: String = (1..=50).map(|i| format!("line {i} of b\n")).collect();
    dir.child("a.txt").write_str(&a).unwrap();
    dir.child("b.txt").write_str(&b).unwrap();
    dir
}

const CUT: &str = "[... token budget of 500 (o200k) reached: kept lines 1-";
const DROPPED: &str = "[... token budget of 500 (o200k) spent: left out b.txt;";

/// The whole output without the prompt's own text, in o200k tokens.
fn tokens_past(out: &str, prompt: &str) -> usize {
    ctx::tokens::count(&out.replacen(prompt, "", 1))
}

#[test]
fn expand_marks_the_cut_and_notes_the_file_left_out_in_every_format() {
    let dir = two_files();
    let prompt = "see @a.txt and @b.txt";
    for format in ["xml", "markdown", "inline"] {
        let r = run(ctx(&dir).args(["expand", "--max-tokens", "500", "--format", format, prompt]));
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        assert!(r.stdout.contains(CUT), "{format}: {}", r.stdout);
        assert!(r.stdout.contains("the rest: @a.txt#L"), "{format}: {}", r.stdout);
        assert!(r.stdout.contains(DROPPED), "{format}: {}", r.stdout);
        // Never an empty element or section for the file left out.
        assert!(!r.stdout.contains("<file path=\"b.txt\">\n</file>"), "{}", r.stdout);
        assert!(!r.stdout.contains("Source: b.txt"), "{format}: {}", r.stdout);
        assert!(r.stderr.contains("W_BUDGET"), "{}", r.stderr);
        assert!(tokens_past(&r.stdout, prompt) <= 500, "{format}: {}", r.stdout);
    }
    let r = run(ctx(&dir).args(["expand", "--max-tokens", "500", "--format", "json", prompt]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    let content = json["content"].as_str().unwrap();
    assert!(content.contains(CUT) && content.contains(DROPPED), "{content}");
    assert!(tokens_past(content, prompt) <= 500);
    let a = &json["references"][0];
    assert_eq!((a["path"].as_str(), a["truncated"].as_bool()), (Some("a.txt"), Some(true)));
    assert_eq!(a["cut"]["kept"]["start"], 1);
    assert_eq!(a["cut"]["total_lines"], 300);
    assert_eq!(a["cut"]["total_tokens"], 3000);
    assert!(a["cut"]["kept_tokens"].as_u64().unwrap() < 500);
    assert_eq!(json["references"][1]["dropped"], 1);
    assert_eq!(json["references"][1]["bytes"], 0);
    assert_eq!(json["stats"]["tokenizer"], "o200k");
}

/// A file past the line limit (2 000 by default) and cut again by the budget: the marker
/// gives the file's own length and asks for the rest up to its end, not up to the line limit's
/// marker, which the budget cut away.
#[test]
fn a_file_past_the_line_limit_is_told_at_its_whole_length() {
    let dir = TempDir::new().unwrap();
    let big: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    dir.child("big.txt").write_str(&big).unwrap();
    let r = run(ctx(&dir).args(["expand", "--max-tokens", "300", "see @big.txt"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let marker = r.stdout.lines().find(|l| l.contains("token budget of 300")).expect("a marker");
    let kept = marker.split("kept lines 1-").nth(1).unwrap();
    let last: u32 = kept.split(' ').next().unwrap().parse().unwrap();
    assert!(marker.contains(&format!("kept lines 1-{last} of 1-3000")), "{marker}");
    assert!(marker.contains(&format!("the rest: @big.txt#L{}-3000", last + 1)), "{marker}");
}

#[test]
fn assemble_marks_the_cut_of_an_included_file() {
    let dir = two_files();
    dir.child("main.md").write_str("Look:\n@[a.txt]\n@[b.txt]\n").unwrap();
    let r = run(ctx(&dir).args(["assemble", "main.md", "--max-tokens", "300"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("[... token budget of 300 (o200k) reached in a.txt"), "{}", r.stdout);
    assert!(r.stderr.contains("W_BUDGET"), "{}", r.stderr);
    assert!(tokens_past(&r.stdout, "Look:\n") <= 300, "{}", r.stdout);
}

#[test]
fn the_default_guard_stops_an_expansion_larger_than_any_window() {
    let dir = TempDir::new().unwrap();
    // 12 files of about 45 000 tokens each: 540 000 in all.
    let line = "alpha beta gamma delta epsilon zeta eta theta iota kappa\n";
    for i in 0..12 {
        dir.child(format!("big/part{i:02}.txt")).write_str(&line.repeat(4_000)).unwrap();
    }
    let prompt = "summarise @big/";
    let r = run(ctx(&dir).args(["expand", "--max-lines", "0", prompt]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("[... token budget of 200000 (o200k) spent: "),
        "{}",
        &r.stdout[r.stdout.len() - 600..]
    );
    assert!(r.stderr.contains("W_BUDGET"), "{}", r.stderr);
    assert!(
        r.stderr.contains("the default budget: --max-tokens N changes it, 0 lifts it"),
        "{}",
        r.stderr
    );
    assert!(tokens_past(&r.stdout, prompt) <= 200_000);
    // `0` lifts it, as the contract says of every limit.
    let r = run(ctx(&dir).args(["expand", "--max-lines", "0", "--max-tokens", "0", prompt]));
    assert!(!r.stderr.contains("W_BUDGET") && !r.stdout.contains("token budget"), "{}", r.stderr);
    assert_eq!(r.stdout.matches("alpha beta").count(), 12 * 4_000);
    // The configuration's key sets it; a workspace's may lower it but not lift it.
    dir.child("ctx.toml").write_str("max_tokens = 1000\n").unwrap();
    let r = run(ctx(&dir).args(["expand", "--max-lines", "0", prompt]));
    assert!(r.stdout.contains("token budget of 1000 (o200k)"), "{}", r.stderr);
    dir.child("ctx.toml").write_str("max_tokens = 0\n").unwrap();
    let r = run(ctx(&dir).args(["expand", "--max-lines", "0", prompt]));
    assert!(r.stderr.contains("`max_tokens = 0` ignored"), "{}", r.stderr);
    assert!(r.stdout.contains("token budget of 200000 (o200k)"));
}

#[test]
fn an_ordinary_expansion_is_untouched_by_the_guard() {
    let dir = two_files();
    let r = run(ctx(&dir).args(["expand", "--format", "json", "see @a.txt and @b.txt"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(!json["content"].as_str().unwrap().contains("token budget"));
    // The guard turns no counting on: tokens stay null unless asked for.
    assert_eq!(json["stats"]["tokens"], Value::Null);
    assert_eq!(json["references"][0]["tokens"], Value::Null);
    let r = run(ctx(&dir).args(["expand", "--tokens", "--format", "json", "see @a.txt"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["references"][0]["tokens"], 3000);
}

#[test]
fn the_tokenizer_is_named_wherever_tokens_are_shown() {
    let dir = two_files();
    let args = ["expand", "--tokenizer", "anthropic-estimate", "--max-tokens", "1000"];
    let r = run(ctx(&dir).args(args).args(["--format", "json", "see @a.txt and @b.txt"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["stats"]["tokenizer"], "anthropic-estimate");
    // Twice o200k's count: a.txt is 6 000 of its tokens, and a budget of 1 000 keeps less
    // than 500 o200k tokens of it.
    assert_eq!(json["references"][0]["cut"]["total_tokens"], 6000);
    let content = json["content"].as_str().unwrap();
    assert!(content.contains("token budget of 1000 (anthropic-estimate) reached"), "{content}");
    assert!(ctx::tokens::count(&content.replacen("see @a.txt and @b.txt", "", 1)) <= 500);
    // The configuration's key, and an unknown name refused.
    dir.child("ctx.toml").write_str("tokenizer = \"anthropic-estimate\"\n").unwrap();
    let r = run(ctx(&dir).args(["expand", "--tokens", "--format", "json", "see @b.txt"]));
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(json["stats"]["tokenizer"], "anthropic-estimate");
    assert_eq!(json["references"][0]["tokens"], 600);
    dir.child("ctx.toml").write_str("tokenizer = \"cl100k\"\n").unwrap();
    let r = run(ctx(&dir).args(["expand", "see @b.txt"]));
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("key `tokenizer`: unknown value"), "{}", r.stderr);
    assert!(!r.stderr.contains("cl100k"), "the value is not printed back: {}", r.stderr);
    // `ctx refs` shows tokens with their tokenizer.
    std::fs::remove_file(dir.path().join("ctx.toml")).unwrap();
    dir.child("main.md").write_str("@[b.txt]\n").unwrap();
    let r = run(ctx(&dir).args(["refs", "main.md", "--tokens"]));
    assert!(r.stdout.contains("300 tokens (o200k)"), "{}", r.stdout);
}

#[test]
fn messages_for_anthropic_count_in_its_estimate() {
    let dir = two_files();
    let r: Run = run(ctx(&dir).args([
        "--max-tokens",
        "800",
        "messages",
        "--provider",
        "anthropic",
        "see @a.txt",
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let body: Value = serde_json::from_str(&r.stdout).unwrap();
    let text = body.to_string();
    assert!(text.contains("token budget of"), "{text}");
    assert!(text.contains("(anthropic-estimate) reached"), "{text}");
    let r = run(ctx(&dir).args(["--max-tokens", "800", "messages", "see @a.txt"]));
    assert!(r.stdout.contains("(o200k) reached"), "{}", r.stdout);
    // `--tokenizer` wins over the provider's default.
    let r = run(ctx(&dir).args([
        "--max-tokens",
        "800",
        "--tokenizer",
        "o200k",
        "messages",
        "--provider",
        "anthropic",
        "see @a.txt",
    ]));
    assert!(r.stdout.contains("(o200k) reached"), "{}", r.stdout);
}

#[cfg(feature = "mcp")]
#[test]
fn the_mcp_expand_tool_marks_the_cut_and_notes_the_drop() {
    let dir = two_files();
    let script = [
        serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "script", "version": "1" } } }),
        serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "expand", "arguments": { "prompt": "see @a.txt and @b.txt" } } }),
    ];
    let input: String = script.iter().map(|m| format!("{m}\n")).collect();
    let r = run(ctx(&dir).args(["--max-tokens", "500", "mcp"]).write_stdin(input));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let answer: Value = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|m| m["id"] == 2)
        .unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(CUT) && text.contains(DROPPED), "{text}");
}

#[cfg(feature = "lsp")]
#[test]
fn the_lsp_assemble_command_marks_the_cut() {
    let dir = two_files();
    dir.child("main.md").write_str("Look:\n@[a.txt]\n").unwrap();
    let path = dir.path().canonicalize().unwrap().join("main.md");
    let uri = format!("file://{}", path.display());
    let frame = |message: &Value| {
        let body = message.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    };
    let script = [
        serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
        serde_json::json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
        serde_json::json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": uri, "languageId": "markdown", "version": 1, "text": "Look:\n@[a.txt]\n" } } }),
        serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": { "command": "ctx.assemble", "arguments": [uri] } }),
        serde_json::json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }),
        serde_json::json!({ "jsonrpc": "2.0", "method": "exit" }),
    ];
    let input: String = script.iter().map(frame).collect();
    let r = run(ctx(&dir).args(["--max-tokens", "300", "lsp"]).write_stdin(input));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("[... token budget of 300 (o200k) reached in a.txt"), "{}", r.stdout);
}

// ------------------------------------------------------------------------------ attacks

#[test]
fn budgets_of_one_zero_and_the_largest_number() {
    let dir = two_files();
    let prompt = "see @a.txt and @b.txt";
    let r = run(ctx(&dir).args(["expand", "--max-tokens", "1", prompt]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(tokens_past(&r.stdout, prompt) <= 1, "{}", r.stdout);
    assert!(
        r.stderr.contains("a.txt left out") && r.stderr.contains("b.txt left out"),
        "{}",
        r.stderr
    );
    for lifted in ["0", "18446744073709551615"] {
        let r = run(ctx(&dir).args(["expand", "--max-tokens", lifted, prompt]));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(!r.stderr.contains("W_BUDGET"), "{lifted}: {}", r.stderr);
        assert!(r.stdout.contains("line 300 of a") && r.stdout.contains("line 50 of b"));
    }
}

#[test]
fn one_long_line_under_a_small_budget() {
    let dir = TempDir::new().unwrap();
    // 50 MB on one line.
    dir.child("long.txt").write_str(&"word ".repeat(10 << 20)).unwrap();
    let prompt = "see @long.txt";
    let r = run(ctx(&dir).args([
        "expand",
        "--max-file-bytes",
        "0",
        "--max-output-bytes",
        "0",
        "--max-tokens",
        "300",
        prompt,
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.len() < 4096, "{}", r.stdout.len());
    assert!(r.stderr.contains("long.txt left out"), "{}", r.stderr);
    assert!(
        r.stdout.contains("left out long.txt") || r.stdout.contains("long.txt left out"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_file_large_enough_to_stream_is_cut_not_streamed_past_the_budget() {
    let dir = TempDir::new().unwrap();
    // 9 MiB: written part by part when nothing needs it whole.
    let line = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu\n";
    dir.child("big.txt").write_str(&line.repeat((9 << 20) / line.len())).unwrap();
    let prompt = "see @big.txt";
    let r = run(ctx(&dir).args([
        "expand",
        "--max-file-bytes",
        "0",
        "--max-lines",
        "0",
        "--max-output-bytes",
        "0",
        "--max-tokens",
        "2000",
        prompt,
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("[... token budget of 2000 (o200k) reached: kept lines 1-"),
        "{}",
        r.stdout.len()
    );
    assert!(tokens_past(&r.stdout, prompt) <= 2000);
}

#[test]
fn a_hundred_thousand_mentions_under_a_budget() {
    let dir = two_files();
    let prompt = "@b.txt ".repeat(100_000);
    let r = run(ctx(&dir)
        .args(["expand", "--max-includes", "0", "--max-tokens", "400"])
        .write_stdin(prompt.clone()));
    assert_eq!(r.code, 0, "{}", &r.stderr[..r.stderr.len().min(2000)]);
    assert!(tokens_past(&r.stdout, &prompt) <= 400);
    // The note lists the file once, not a hundred thousand times.
    assert!(r.stdout.matches("b.txt").count() < 100_000 + 10);
}

/// Token counts kept in the cache folder between runs (`token-counts`): a second run writes
/// what the first wrote, records and all. Attack: whatever stands at the table's name in the
/// cache folder (bytes that are no table, a table cut short, a link to a file elsewhere, a
/// FIFO, a folder), the output is that of a run without a table, the run ends (a FIFO is never
/// waited on), and the file a link points to is neither shown nor written.
#[cfg(unix)]
#[test]
fn counts_kept_between_runs_change_nothing_and_a_planted_table_is_no_table() {
    let dir = TempDir::new().unwrap();
    for i in 0..20 {
        let body = format!("pub fn step_{i}(x: u32) -> u32 {{ x + {i} }}\n").repeat(30 + i);
        dir.child(format!("src/f{i:02}.rs")).write_str(&body).unwrap();
    }
    let cache = TempDir::new().unwrap();
    let table = cache.path().join("token-counts");
    let expand = || {
        let mut cmd = ctx(&dir);
        cmd.env("CTX_CACHE_DIR", cache.path());
        let r = run(cmd.args(["expand", "--max-tokens", "100000", "--format", "json", "@src/"]));
        assert_eq!(r.code, 0, "{}", r.stderr);
        let json: Value = serde_json::from_str(&r.stdout).unwrap();
        let refs: Vec<(Value, Value)> = json["references"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["path"].clone(), r["tokens"].clone()))
            .collect();
        (json["content"].as_str().unwrap().to_owned(), refs, json["stats"]["tokens"].clone())
    };
    let first = expand();
    assert!(first.1.iter().all(|(_, t)| t.as_u64().is_some()), "{:?}", first.1);
    let stored = std::fs::read(&table).expect("the counts were kept");
    assert_eq!(expand(), first, "the second run, from the table kept");

    let secret = TempDir::new().unwrap();
    let elsewhere = secret.path().join("elsewhere");
    std::fs::write(&elsewhere, "SECRET-ELSEWHERE\n").unwrap();
    type Plant<'a> = Box<dyn Fn() + 'a>;
    let plants: Vec<(&str, Plant<'_>)> = vec![
        ("garbage", Box::new(|| std::fs::write(&table, [0x5a; 4096]).unwrap())),
        ("cut short", Box::new(|| std::fs::write(&table, &stored[..stored.len() - 3]).unwrap())),
        ("a link", Box::new(|| std::os::unix::fs::symlink(&elsewhere, &table).unwrap())),
        (
            "a FIFO",
            Box::new(|| {
                let made = std::process::Command::new("mkfifo").arg(&table).status().unwrap();
                assert!(made.success());
            }),
        ),
        ("a folder", Box::new(|| std::fs::create_dir(&table).unwrap())),
    ];
    for (what, plant) in plants {
        let _ = std::fs::remove_file(&table);
        let _ = std::fs::remove_dir_all(&table);
        plant();
        let got = expand();
        assert_eq!(got, first, "{what}");
        assert!(!got.0.contains("SECRET-ELSEWHERE"), "{what}");
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "SECRET-ELSEWHERE\n", "{what}");
    }
}
