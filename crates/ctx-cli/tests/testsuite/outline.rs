//! CLI tests of `ctx outline`: the real binary in a temporary workspace; text and JSON, a
//! budget kept to the token, and paths that must leak nothing.

use assert_fs::TempDir;
use assert_fs::prelude::*;
use serde_json::Value;

use crate::util::ctx_in;

fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    dir.child("src/retry.rs")
        .write_str("/// Retries.\npub fn retry_with_timeout() {\n    backoff();\n}\n")
        .unwrap();
    dir.child("src/empty.rs").write_str("").unwrap();
    dir.child("docs/guide.md").write_str("# Guide\n\n## Install\n").unwrap();
    dir
}

#[test]
fn outline_prints_definitions_with_lines() {
    let dir = workspace();
    let out = ctx_in(&dir).args(["outline", "src", "docs/guide.md"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    expect_test::expect![[r#"
        src/empty.rs (0 lines)
        src/retry.rs (4 lines)
          L2-4 pub fn retry_with_timeout() {
        docs/guide.md (3 lines)
          L1-3 # Guide
            L3 ## Install
    "#]]
    .assert_eq(&String::from_utf8(out.stdout).unwrap());
}

#[test]
fn outline_json_and_budget() {
    let dir = workspace();
    let many: String = (0..300).map(|i| format!("pub fn item_{i}() {{}}\n")).collect();
    dir.child("src/many.rs").write_str(&many).unwrap();
    let out = ctx_in(&dir)
        .args(["--format", "json", "--max-tokens", "200", "outline", "--prompt", "retry", "src"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = value["text"].as_str().unwrap();
    assert!(text.contains("retry_with_timeout"), "{text}");
    assert!(text.contains("left out to fit 200 tokens (o200k)"), "{text}");
    assert!(value["tokens"].as_u64().unwrap() <= 200);
    assert!(value["left_out"].as_u64().unwrap() > 0);
    assert_eq!(value["warnings"][0]["code"], "W_BUDGET");
    assert!(value["files"].as_array().unwrap().iter().any(|f| f["path"] == "src/retry.rs"));
}

/// Under every budget the outline stays within it and, from the size of its shortest note,
/// says in its text that definitions were left out: never an empty answer for a cut one, even
/// beside the note of files of other kinds; in `anthropic-estimate` tokens too.
#[test]
fn a_small_budget_still_says_what_the_outline_left_out() {
    let dir = workspace();
    dir.child("data.bin.txt").write_str("plain words, no definitions\n").unwrap();
    let said = ["left out", "budget spent"];
    let shortest = 7;
    for tokenizer in ["o200k", "anthropic-estimate"] {
        for max in 1..=60 {
            let max_arg = max.to_string();
            let out = ctx_in(&dir)
                .args(["--format", "json", "--tokenizer", tokenizer, "--max-tokens", &max_arg])
                .args(["outline", "."])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let value: Value = serde_json::from_slice(&out.stdout).unwrap();
            let text = value["text"].as_str().unwrap();
            let tokens = value["tokens"].as_u64().unwrap();
            assert!(tokens <= max, "{tokenizer} {max}: {tokens} tokens:\n{text}");
            assert_eq!(value["tokenizer"], tokenizer);
            let cut =
                value["left_out"].as_u64().unwrap() + value["files_left_out"].as_u64().unwrap();
            let o200k_room = if tokenizer == "o200k" { max } else { max / 2 };
            if cut > 0 && o200k_room >= shortest {
                assert!(said.iter().any(|s| text.contains(s)), "{tokenizer} {max}:\n{text}");
            }
        }
    }
}

#[test]
fn outline_attack_paths_outside_the_roots() {
    let dir = workspace();
    let out = ctx_in(&dir).args(["outline", "../", "/etc/passwd", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stdout.contains("root:"), "{stdout}");
    assert!(stderr.contains("E_OUTSIDE"), "{stderr}");
    assert!(!stderr.contains(dir.path().parent().unwrap().to_str().unwrap()), "{stderr}");
    // A path of the command line has no place in a document: one line, `ctx: ` first.
    for line in stderr.lines() {
        assert!(line.starts_with("ctx: error[E_"), "{line}");
    }
    assert!(stderr.contains("ctx: error[E_NOT_FOUND]: "), "{stderr}");
}

#[test]
fn outline_of_a_fifty_megabyte_line_under_a_lifted_file_cap() {
    // One line of 50 MiB: over the default file cap of 1 MiB, under a cap of 64 MiB; the
    // sandbox's file cap is the only one (the scan budget of 256 MiB holds it).
    let dir = workspace();
    let line = format!("fn f() {{ \"{}\" }}\n", "x".repeat(50 << 20));
    dir.child("src/long.rs").write_str(&line).unwrap();
    let out = ctx_in(&dir)
        .args(["outline", "--max-file-bytes", &(64u64 << 20).to_string(), "src/long.rs"])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("src/long.rs (1 line)\n  L1 fn f() {"), "{stdout}");
    assert!(stdout.len() < 1000, "the signature is cut: {}", stdout.len());
    // Under the default cap the file is said, with the cap and what lifts it, not read.
    let out = ctx_in(&dir).args(["outline", "src/long.rs"]).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stdout.contains("[... 1 file not outlined: too large (over 1048576 bytes) ...]"),
        "{stdout}"
    );
    assert!(stderr.contains("--max-file-bytes lifts it"), "{stderr}");
    assert!(!stdout.contains("xxxx"), "{stdout}");
}
