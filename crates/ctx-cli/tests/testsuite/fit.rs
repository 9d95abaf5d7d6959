//! CLI tests of the fitter: `ctx expand --auto --max-tokens N`, `ctx suggest --max-tokens N`
//! and `ctx messages --auto --max-tokens N`
//! on a workspace of many files; what a model receives never passes the budget, wrappers and
//! headings included; the budget, not a file count, is the limit; the same inputs give the
//! same bytes; an empty file is never proposed as lines 1-1.

use assert_fs::TempDir;
use assert_fs::prelude::*;
use serde_json::Value;

use crate::util::ctx_in;

const PROMPT: &str = "fix the retry timeout of the connection pool";

/// Twelve small files about retries and one long one with the evidence in two places.
fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    dir.child(".gitignore").write_str(".cache/\n").unwrap();
    for i in 0..12 {
        dir.child(format!("src/retry_{i}.rs"))
            .write_str(&format!(
                "/// Retries the pool connection {i}.\npub fn retry_timeout_{i}() -> u32 {{\n    {i}\n}}\n"
            ))
            .unwrap();
    }
    let mut long = String::new();
    for i in 0..600 {
        long.push_str(&match i {
            100 => "pub fn connection_pool_retry() {\n".to_owned(),
            500 => "pub fn pool_timeout() { /* timeout */ }\n".to_owned(),
            _ => format!("fn filler_{i}() {{}}\n"),
        });
    }
    dir.child("src/pool.rs").write_str(&long).unwrap();
    dir.child("src/empty_retry_timeout.rs").write_str("").unwrap();
    dir
}

fn added_tokens(content: &str) -> usize {
    ctx::tokens::count(content.strip_prefix(PROMPT).unwrap_or(content))
}

#[test]
fn expand_auto_fills_the_budget_and_never_passes_it() {
    let dir = workspace();
    for budget in [300, 800, 2000, 8000] {
        let out = ctx_in(&dir)
            .args(["--format", "json", "expand", "--auto", "--max-tokens", &budget.to_string()])
            .arg(PROMPT)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        // The plan fits as it is: the assembler cuts nothing and leaves nothing out.
        assert!(!stderr.contains("W_BUDGET"), "{budget}: {stderr}");
        let value: Value = serde_json::from_slice(&out.stdout).unwrap();
        let content = value["content"].as_str().unwrap();
        let used = added_tokens(content);
        assert!(used <= budget, "{budget}: {used} tokens\n{content}");
        let files: std::collections::BTreeSet<&str> = value["references"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["suggested"] == true)
            .map(|r| r["path"].as_str().unwrap())
            .collect();
        if budget >= 2000 {
            // Past the auto-context's default cap of five files.
            assert!(files.len() > 5, "{budget}: {files:?}");
        }
        assert!(!content.contains("empty_retry_timeout"), "an empty file is not attached");
    }
    // XML too: the same bytes for the same inputs.
    let run = || {
        ctx_in(&dir)
            .args(["expand", "--auto", "--max-tokens", "800", PROMPT])
            .output()
            .unwrap()
            .stdout
    };
    let first = run();
    assert_eq!(first, run());
    assert!(added_tokens(&String::from_utf8(first).unwrap()) <= 800);
}

#[test]
fn suggest_with_a_budget_gives_the_fitted_set() {
    let dir = workspace();
    let out = ctx_in(&dir)
        .args(["--format", "json", "suggest", "--max-tokens", "2000", PROMPT])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = value.as_array().unwrap();
    assert!(list.len() > 5, "{value}");
    let total: u64 = list.iter().map(|c| c["tokens"].as_u64().unwrap()).sum();
    assert!(total <= 2000, "{total}");
    for c in list {
        match c["view"].as_str().unwrap() {
            "whole" => assert!(c.get("lines").is_none()),
            "ranges" => assert!(!c["lines"].as_array().unwrap().is_empty()),
            other => panic!("{other}"),
        }
    }
    // The long file is shown by its ranges, one around each place the evidence lies.
    let pool = list.iter().find(|c| c["path"] == "src/pool.rs").expect("the long file");
    assert_eq!(pool["view"], "ranges", "{pool}");
}

#[test]
fn an_empty_file_is_never_proposed_as_lines_1_1() {
    let dir = TempDir::new().unwrap();
    dir.child("src/retry_timeout.rs").write_str("").unwrap();
    dir.child("src/other.rs").write_str("/// Retry.\nfn retry_timeout() {}\n").unwrap();
    let out = ctx_in(&dir).args(["--format", "json", "suggest", PROMPT]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        value.as_array().unwrap().iter().all(|s| s["path"] != "src/retry_timeout.rs"),
        "{value}"
    );
    let auto = ctx_in(&dir).args(["expand", "--auto", PROMPT]).output().unwrap();
    let stderr = String::from_utf8_lossy(&auto.stderr);
    assert!(auto.status.success() && !stderr.contains("E_RANGE"), "{stderr}");
}

/// Every text of a request body the model receives: the system prompt and each turn's text.
fn body_texts(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut take = |v: &Value| match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(parts) => {
            out.extend(parts.iter().filter_map(|p| p["text"].as_str()).map(str::to_owned));
        }
        _ => {}
    };
    take(&body["system"]);
    for m in body["messages"].as_array().unwrap() {
        take(&m["content"]);
    }
    out
}

#[test]
fn messages_auto_fits_the_request_for_both_providers() {
    let dir = workspace();
    for (provider, tokenizer) in [
        ("openai", ctx::tokens::Tokenizer::O200k),
        ("anthropic", ctx::tokens::Tokenizer::AnthropicEstimate),
    ] {
        for budget in [400, 1500, 8000] {
            let out = ctx_in(&dir)
                .args(["messages", "--auto", "--provider", provider, "--max-tokens"])
                .arg(budget.to_string())
                .arg(PROMPT)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let body: Value = serde_json::from_slice(&out.stdout).unwrap();
            let texts = body_texts(&body);
            let all = texts.join("");
            assert!(all.contains(PROMPT), "{provider} {budget}: {all}");
            // The budget counts what the model receives but the prompt's own words.
            let used = tokenizer.count(&all.replacen(PROMPT, "", 1));
            assert!(used <= budget, "{provider} {budget}: {used} tokens\n{all}");
            if budget >= 1500 {
                assert!(all.contains("suggested for this prompt"), "{provider} {budget}: {all}");
                assert!(all.contains("<file path=\"src/"), "{provider} {budget}: {all}");
            }
            // The same inputs, the same body.
            let again = ctx_in(&dir)
                .args(["messages", "--auto", "--provider", provider, "--max-tokens"])
                .arg(budget.to_string())
                .arg(PROMPT)
                .output()
                .unwrap();
            assert_eq!(again.stdout, out.stdout, "{provider} {budget}");
        }
    }
    // The fitter fills more of a larger budget.
    let filled = |budget: &str| {
        let out = ctx_in(&dir)
            .args(["messages", "--auto", "--max-tokens", budget, PROMPT])
            .output()
            .unwrap();
        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
        body_texts(&body).join("").len()
    };
    assert!(filled("8000") > filled("1500") && filled("1500") > filled("400"));
}

/// The workspace of [`workspace`] and a long file of long lines whose evidence is spread over
/// forty functions of seventy lines.
fn spread_workspace() -> TempDir {
    let dir = workspace();
    let mut long = String::new();
    for f in 0..40 {
        long.push_str(&format!("pub fn stage_{f}(ctx: &mut Context) -> Result<(), Error> {{\n"));
        for j in 0..70 {
            long.push_str(&match j {
                35 => format!(
                    "    let deadline = retry_timeout(ctx.pool, {f}); // retry timeout of the connection pool\n"
                ),
                _ => {
                    let args: Vec<String> = (0..25).map(|k| format!("arg_{k}_{j}")).collect();
                    format!("    ctx.step_{j}(value_{j} * {f} + offset_{j}, {})?;\n", args.join(", "))
                }
            });
        }
        long.push_str("    Ok(())\n}\n\n");
    }
    dir.child("src/stages.rs").write_str(&long).unwrap();
    dir
}

#[test]
fn a_long_file_with_spread_evidence_is_first_seen_by_its_peek_line() {
    // From 8 000 tokens a file is first seen by its line with the most evidence, and then by
    // the piece that holds it; its outline view is offered only in place of a first piece.
    let dir = spread_workspace();
    let out = ctx_in(&dir)
        .args(["--format", "json", "suggest", "--max-tokens", "8000", PROMPT])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stages = plan.as_array().unwrap().iter().find(|c| c["path"] == "src/stages.rs");
    let stages = stages.expect("src/stages.rs chosen");
    assert_eq!(stages["view"], "ranges", "{plan}");
    let ranges = stages["lines"].as_array().unwrap();
    assert!(!ranges.is_empty(), "{stages}");
    // `expand --auto` shows what `suggest` planned, each range an element of its own.
    let out = ctx_in(&dir)
        .args(["--format", "json", "expand", "--auto", "--max-tokens", "8000", PROMPT])
        .output()
        .unwrap();
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = value["content"].as_str().unwrap();
    assert!(added_tokens(content) <= 8000, "{content}");
    for r in ranges {
        let element =
            format!("<file path=\"src/stages.rs\" lines=\"{}-{}\">", r["start"], r["end"]);
        assert!(content.contains(&element), "{element}: {content}");
    }
    assert!(!content.contains("reached"), "{content}");
}

#[test]
fn no_outline_view_under_its_smallest_budget() {
    let dir = spread_workspace();
    let out = ctx_in(&dir)
        .args(["--format", "json", "suggest", "--max-tokens", "2000", PROMPT])
        .output()
        .unwrap();
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(plan.as_array().unwrap().iter().all(|c| c["view"] != "outline"), "{plan}");
}

/// Under `anthropic-estimate` (twice o200k's count) a budget of 2N plans what o200k's N does,
/// its tokens given in the estimate's: the plan is made in o200k tokens, not taken as N o200k
/// tokens and cut down by the assembler; what `expand --auto` attaches is the same files.
#[test]
fn a_budget_in_the_estimate_plans_as_its_o200k_half() {
    let dir = workspace();
    let plan = |tokenizer: &str, budget: usize| -> Value {
        let out = ctx_in(&dir)
            .args(["--format", "json", "--tokenizer", tokenizer, "suggest"])
            .args(["--max-tokens", &budget.to_string(), PROMPT])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    for budget in [400, 1500] {
        let o200k = plan("o200k", budget);
        let estimate = plan("anthropic-estimate", 2 * budget);
        let (o200k, estimate) = (o200k.as_array().unwrap(), estimate.as_array().unwrap());
        assert!(!o200k.is_empty());
        assert_eq!(o200k.len(), estimate.len(), "{o200k:?}\n{estimate:?}");
        for (a, b) in o200k.iter().zip(estimate) {
            assert_eq!(
                (&a["path"], &a["view"], &a["lines"]),
                (&b["path"], &b["view"], &b["lines"])
            );
            assert_eq!(2 * a["tokens"].as_u64().unwrap(), b["tokens"].as_u64().unwrap());
        }
        let out = ctx_in(&dir)
            .args(["--format", "json", "--tokenizer", "anthropic-estimate", "expand", "--auto"])
            .args(["--max-tokens", &(2 * budget).to_string(), PROMPT])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !stderr.contains("W_BUDGET"), "{stderr}");
        let value: Value = serde_json::from_slice(&out.stdout).unwrap();
        let used = added_tokens(value["content"].as_str().unwrap());
        assert!(used <= budget, "{budget}: {used} o200k tokens");
    }
}
