//! A mentioned file that does not fit the token budget is reduced, not cut at its head
//! (docs/assembly.md, "Limits on content"): its outline and the ranges that matter for the
//! prompt (its first lines for a document), in the file's own element, with a marker saying
//! what was kept and how to get the rest, in every format, for `expand` and `assemble`; and
//! attacks on it.

use std::time::Duration;

use assert_cmd::Command;
use assert_fs::TempDir;
use assert_fs::prelude::*;
use expect_test::expect;
use serde_json::Value;

use crate::util::{Run, assert_no_raw_hidden, run};

fn ctx(dir: &TempDir) -> Command {
    let mut cmd = crate::util::ctx_in(dir);
    cmd.env("CTX_CONFIG_DIR", "/nonexistent/ctx-config");
    // A hang turns into a failure.
    cmd.timeout(Duration::from_secs(120));
    cmd
}

/// `src/pool.rs`: 60 helpers of 9 lines, then the struct and method a prompt asks about.
fn pool() -> String {
    let mut text = String::from("//! A pool of workers.\n");
    for i in 0..60 {
        text.push_str(&format!("pub fn helper_{i}(x: u32) -> u32 {{\n"));
        for j in 0..6 {
            text.push_str(&format!("    let v{j} = x + {j} * {i};\n"));
        }
        text.push_str("    x\n}\n");
    }
    text.push_str(
        "pub struct Pool;\nimpl Pool {\n    pub fn shutdown_timeout(&self) -> u32 {\n        42\n    }\n}\n",
    );
    text
}

fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    dir.child("src/pool.rs").write_str(&pool()).unwrap();
    dir.child("rules.md").write_str("Rules.\n\n@src/pool.rs\n").unwrap();
    dir
}

const PROMPT: &str = "fix shutdown_timeout in @src/pool.rs";
const MARKER: &str = "[... token budget of 400 (o200k) reached: kept the outline (";

/// The whole output without the prompt's own text, in o200k tokens.
fn tokens_past(out: &str, prompt: &str) -> usize {
    ctx::tokens::count(&out.replacen(prompt, "", 1))
}

fn expand(dir: &TempDir, format: &str) -> Run {
    run(ctx(dir).args(["expand", "--max-tokens", "400", "--format", format, PROMPT]))
}

#[test]
fn expand_reduces_a_mentioned_file_in_every_format() {
    let dir = workspace();
    for format in ["inline", "xml", "markdown"] {
        let r = expand(&dir, format);
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        let out = &r.stdout;
        assert!(out.contains("src/pool.rs (547 lines)\n"), "{format}: {out}");
        assert!(out.contains("  L544-546 pub fn shutdown_timeout(&self) -> u32 {\n"), "{out}");
        let method = "\npub struct Pool;\nimpl Pool {\n    pub fn shutdown_timeout(&self)";
        assert!(out.contains(method), "{format}: {out}");
        assert!(out.contains(MARKER), "{format}: {out}");
        assert!(out.contains("the rest: @src/pool.rs#La-b for lines a-b, or raise --max-tokens"));
        assert!(r.stderr.contains("W_BUDGET"), "{}", r.stderr);
        assert!(r.stderr.contains("src/pool.rs reduced to its outline and lines "), "{}", r.stderr);
        assert!(tokens_past(out, PROMPT) <= 400, "{format}: {out}");
        // The same inputs, the same bytes.
        assert_eq!(expand(&dir, format).stdout, r.stdout, "{format}");
    }
    let xml = expand(&dir, "xml").stdout;
    assert!(xml.contains("<file path=\"src/pool.rs\">\nsrc/pool.rs (547 lines)\n"), "{xml}");
    let md = expand(&dir, "markdown").stdout;
    assert!(md.contains("```rust\nsrc/pool.rs (547 lines)\n"), "{md}");
    let r = expand(&dir, "json");
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    let content = json["content"].as_str().unwrap();
    assert!(content.contains(MARKER), "{content}");
    assert!(tokens_past(content, PROMPT) <= 400);
    let cut = &json["references"][0]["cut"];
    assert_eq!(cut["view"], "outline", "{cut}");
    let ranges = cut["ranges"].as_array().unwrap();
    assert!(
        ranges.iter().any(|r| r["start"].as_u64() <= Some(544) && Some(546) <= r["end"].as_u64())
    );
    assert_eq!(cut["kept"], ranges[0]);
    assert_eq!(cut["total_lines"], 547);
    assert_eq!(json["references"][0]["truncated"], true);
    assert_eq!(json["references"][0]["tokens"], cut["kept_tokens"]);
}

#[test]
fn a_reduced_file_as_the_model_sees_it() {
    let dir = TempDir::new().unwrap();
    let mut text = String::from("import os\n\n");
    for i in 0..30 {
        text.push_str(&format!("def helper_{i}(x):\n    y = x + {i}\n    return y\n\n"));
    }
    text.push_str("class Retry:\n    def backoff(self, attempt):\n        return 2 ** attempt\n");
    dir.child("retry.py").write_str(&text).unwrap();
    let prompt = "why is the backoff of Retry exponential? @retry.py";
    let r = run(ctx(&dir).args(["expand", "--max-tokens", "250", prompt]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    expect![[r#"
        why is the backoff of Retry exponential? @retry.py

        <system-reminder>
        The following files were mentioned with @ syntax:

        <file path="retry.py">
        retry.py (125 lines)
          L3-5 def helper_0(x):
          L7-9 def helper_1(x):
          L11-13 def helper_2(x):
          L15-17 def helper_3(x):
          L19-21 def helper_4(x):
          L123-125 class Retry:
            L124-125 def backoff(self, attempt):
        [lines 120-125]
            y = x + 29
            return y

        class Retry:
            def backoff(self, attempt):
                return 2 ** attempt
        [... token budget of 250 (o200k) reached: kept the outline (7 of 32 definitions) and lines 120-125 of 1-125 (118 of 561 tokens); the rest: @retry.py#La-b for lines a-b, or raise --max-tokens ...]
        </file>
        </system-reminder>
    "#]]
    .assert_eq(&r.stdout);
}

#[test]
fn assemble_reduces_what_a_document_mentions_to_its_outline_and_first_lines() {
    let dir = workspace();
    for format in ["inline", "xml", "markdown", "json"] {
        let args = ["assemble", "--max-tokens", "300", "--format", format, "rules.md"];
        let r = run(ctx(&dir).args(args));
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        let out = if format == "json" {
            let json: Value = serde_json::from_str(&r.stdout).unwrap();
            assert_eq!(json["references"][0]["cut"]["view"], "outline");
            assert_eq!(json["references"][0]["cut"]["kept"]["start"], 1);
            json["content"].as_str().unwrap().to_owned()
        } else {
            r.stdout.clone()
        };
        assert!(
            out.contains("src/pool.rs (547 lines)\n  L2-10 pub fn helper_0"),
            "{format}: {out}"
        );
        assert!(out.contains("[lines 1-"), "{format}: {out}");
        assert!(out.contains("\n//! A pool of workers.\n"), "{format}: {out}");
        assert!(out.contains("reached: kept the outline ("), "{format}: {out}");
        assert!(ctx::tokens::count(&out) <= 300, "{format}: {out}");
        if format != "json" {
            assert_eq!(run(ctx(&dir).args(args)).stdout, r.stdout, "{format}");
        }
    }
}

#[test]
fn every_language_the_scanner_reads_is_reduced() {
    let dir = TempDir::new().unwrap();
    let body = |i: usize| format!("value_{i} + other_{i} * {i}");
    let files: [(&str, String); 4] = [
        (
            "a.go",
            (0..80)
                .map(|i| format!("func helper{i}() int {{\n\treturn {}\n}}\n\n", body(i)))
                .collect(),
        ),
        (
            "a.ts",
            (0..80)
                .map(|i| {
                    format!("export function helper{i}(): number {{\n  return {};\n}}\n", body(i))
                })
                .collect(),
        ),
        (
            "A.java",
            format!(
                "public class A {{\n{}}}\n",
                (0..80)
                    .map(|i| format!("  int helper{i}() {{\n    return {};\n  }}\n", body(i)))
                    .collect::<String>()
            ),
        ),
        (
            "notes.md",
            (0..80)
                .map(|i| format!("## Section {i}\n\nSome words about {}.\n\n", body(i)))
                .collect(),
        ),
    ];
    for (path, text) in &files {
        dir.child(path).write_str(text).unwrap();
        let prompt = format!("what does helper40 do? @{path}");
        let r = run(ctx(&dir).args(["expand", "--max-tokens", "300", &prompt]));
        assert_eq!(r.code, 0, "{path}: {}", r.stderr);
        assert!(r.stdout.contains(&format!("{path} (")), "{path}: {}", r.stdout);
        assert!(r.stdout.contains("reached: kept the outline ("), "{path}: {}", r.stdout);
        assert!(tokens_past(&r.stdout, &prompt) <= 300, "{path}: {}", r.stdout);
    }
}

#[test]
fn a_file_without_definitions_is_cut_at_its_head_as_before() {
    let dir = TempDir::new().unwrap();
    let text: String = (1..=300).map(|i| format!("line {i} of a with some words here\n")).collect();
    dir.child("a.txt").write_str(&text).unwrap();
    let r = run(ctx(&dir).args(["expand", "--max-tokens", "300", "see @a.txt"]));
    assert!(r.stdout.contains("reached: kept lines 1-"), "{}", r.stdout);
    assert!(!r.stdout.contains("outline"), "{}", r.stdout);
}

#[test]
fn attack_hidden_characters_in_a_signature_are_made_visible() {
    let dir = TempDir::new().unwrap();
    let mut text = String::new();
    for i in 0..80 {
        text.push_str(&format!("fn helper_{i}() -> u32 {{\n    {i}\n}}\n"));
    }
    text.push_str("fn is_admin\u{202E}\u{1b}[2J() -> bool {\n    true // evil\u{200b}\n}\n");
    dir.child("a.rs").write_str(&text).unwrap();
    let prompt = "is_admin evil @a.rs";
    for format in ["inline", "xml", "markdown", "json"] {
        let r = run(ctx(&dir).args(["expand", "--max-tokens", "300", "--format", format, prompt]));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_no_raw_hidden(&r.stdout);
        assert_no_raw_hidden(&r.stderr);
        let out = match format {
            "json" => serde_json::from_str::<Value>(&r.stdout).unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned(),
            _ => r.stdout,
        };
        assert_no_raw_hidden(&out);
        assert!(out.contains("L241 fn is_admin\\u{202E}\\u{1b}[2J() -> bool {"), "{format}: {out}");
        assert!(out.contains("    true // evil\\u{200B}\n"), "{format}: {out}");
        assert!(out.contains("reached: kept the outline ("), "{format}: {out}");
    }
}

#[test]
fn attack_a_hundred_thousand_definitions_and_one_line_of_fifty_megabytes() {
    let dir = TempDir::new().unwrap();
    let defs: String = (0..100_000).map(|i| format!("fn f{i}() {{}}\n")).collect();
    dir.child("defs.rs").write_str(&defs).unwrap();
    let line = format!("fn f() {{}}\nconst S: &str = \"{}\";\n", "ab ".repeat((50 << 20) / 3));
    dir.child("line.rs").write_str(&line).unwrap();
    let prompt = "see @defs.rs and @line.rs";
    let r = run(ctx(&dir).args([
        "expand",
        "--max-tokens",
        "2000",
        "--max-file-bytes",
        "60000000",
        "--format",
        "json",
        prompt,
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    let content = json["content"].as_str().unwrap();
    assert!(tokens_past(content, prompt) <= 2000, "{content}");
    assert!(content.len() < 64_000, "{}", content.len());
    assert!(
        content.contains("more definitions not outlined")
            || content.contains("of 100000 definitions")
    );
    for record in json["references"].as_array().unwrap() {
        assert_eq!(record["truncated"], true, "{record}");
    }
}

#[cfg(unix)]
#[test]
fn attack_a_link_out_of_the_root_leaks_nothing() {
    let outside = TempDir::new().unwrap();
    let secret: String = (0..400).map(|i| format!("fn secret_{i}() {{ \"hunter2\" }}\n")).collect();
    outside.child("secret.rs").write_str(&secret).unwrap();
    let dir = workspace();
    std::os::unix::fs::symlink(outside.path().join("secret.rs"), dir.path().join("src/link.rs"))
        .unwrap();
    let prompt = "secret hunter2 @src/link.rs @src/pool.rs";
    for format in ["inline", "json"] {
        let r = run(ctx(&dir).args(["expand", "--max-tokens", "400", "--format", format, prompt]));
        assert!(!r.stdout.contains("hunter2\" }"), "{}", r.stdout);
        assert!(!r.stdout.contains("secret_1"), "{}", r.stdout);
        assert!(!r.stderr.contains(outside.path().to_str().unwrap()), "{}", r.stderr);
        assert!(r.stdout.contains("src/pool.rs (547 lines)"), "{}", r.stdout);
    }
}
