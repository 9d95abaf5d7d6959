//! CLI tests of conversations: `ctx init`, `ctx system-prompt`, `ctx messages` and
//! `ctx paste-image`, with the real binary in a temporary workspace. Every request body is
//! validated against a JSON Schema of its provider's API (`tests/schemas/`, each citing the
//! reference it was written from), and every data URL is decoded and compared with the bytes
//! on disk.

use std::io::Cursor;
use std::path::Path;

use assert_cmd::Command;
use base64::Engine as _;
use ctx::conversation::image::samples;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::util::assert_no_raw_hidden;

struct Workspace {
    dir: TempDir,
    cache: TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        Workspace { dir: TempDir::new().unwrap(), cache: TempDir::new().unwrap() }
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> &Workspace {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
        self
    }

    fn ctx(&self) -> Command {
        let mut cmd = Command::cargo_bin("ctx").unwrap();
        cmd.current_dir(self.dir.path())
            .env("NO_COLOR", "1")
            .env("CTX_CACHE_DIR", self.cache.path())
            .env("HOME", self.dir.path().join("home"))
            .env_remove("CTX_FORCE_TTY")
            .env_remove("RUST_LOG");
        cmd
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.ctx().args(args).output().unwrap();
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
    }

    /// Runs a command that prints JSON; a request body of `ctx messages` is validated
    /// against its provider's schema.
    fn body(&self, args: &[&str]) -> (Value, String) {
        let (code, out, err) = self.run(args);
        assert!(code == 0 || code == 1, "{code}: {err}");
        let body: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        if args.contains(&"messages") {
            let anthropic = args.windows(2).any(|w| w == ["--provider", "anthropic"]);
            validate(&body, if anthropic { ANTHROPIC_SCHEMA } else { OPENAI_SCHEMA });
            published_rules(&body, anthropic);
        }
        (body, err)
    }
}

#[test]
fn init_creates_what_is_missing_and_never_overwrites() {
    let ws = Workspace::new();
    ws.write("ctx.toml", "max_tokens = 100\n");
    let (code, out, err) = ws.run(&["init"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "created .ctx/rules/default.md\nkept ctx.toml (already there)\n");
    assert_eq!(
        std::fs::read_to_string(ws.dir.path().join("ctx.toml")).unwrap(),
        "max_tokens = 100\n"
    );
    let (_, again, _) = ws.run(&["init"]);
    assert_eq!(
        again,
        "kept .ctx/rules/default.md (already there)\nkept ctx.toml (already there)\n"
    );
    // The example rule assembles cleanly, with its front matter.
    let (code, out, err) = ws.run(&["system-prompt", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["rules"][0]["key"], "default.md");
    assert_eq!(json["rules"][0]["params"], json!(["project"]));
    assert_eq!(json["rules"][0]["diagnostics"], json!([]));
}

/// A `.ctx/config.toml` already there is the workspace's configuration: `ctx init` writes no
/// `ctx.toml`, which would take its place in silence.
#[test]
fn init_keeps_a_config_in_the_ctx_folder_in_force() {
    let ws = Workspace::new();
    ws.write(".ctx/config.toml", "[defines]\nX = \"v\"\n");
    ws.write("a.md", "x=@{X}\n");
    let (code, out, err) = ws.run(&["init"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "created .ctx/rules/default.md\nkept .ctx/config.toml (already there)\n");
    assert!(!ws.dir.path().join("ctx.toml").exists());
    let (code, out, err) = ws.run(&["assemble", "a.md"]);
    assert_eq!((code, out.as_str()), (0, "x=v\n"), "{err}");
}

/// What `ctx init` writes for people: the comment lines of the rule's front matter and of
/// `ctx.toml`, and any HTML comment of the rule, each without its comment marker.
fn template_notes(ws: &Workspace) -> Vec<String> {
    let read = |rel: &str| std::fs::read_to_string(ws.dir.path().join(rel)).unwrap();
    let rule = read(".ctx/rules/default.md");
    let front = rule.split("---\n").nth(1).unwrap_or_default();
    let config = read("ctx.toml");
    let comments = front.lines().chain(config.lines()).filter(|l| l.trim_start().starts_with('#'));
    let mut notes: Vec<String> =
        comments.map(|l| l.trim_start().trim_start_matches('#').trim().to_owned()).collect();
    let mut rest = rule.as_str();
    while let Some(start) = rest.find("<!--") {
        let end = rest[start..].find("-->").map_or(rest.len(), |e| start + e);
        notes.extend(rest[start + 4..end].lines().map(|l| l.trim().to_owned()));
        rest = &rest[end..];
    }
    notes.retain(|n| n.len() > 3);
    notes
}

/// Notes for people in the template of `ctx init` never reach the model: not through the
/// rule's front matter, not through an include of `ctx.toml`, with or without `-D DEBUG`.
#[test]
fn the_init_template_says_nothing_to_the_model_that_is_meant_for_people() {
    let ws = Workspace::new();
    ws.write("src/main.rs", "fn main() {}\n");
    let (code, _, err) = ws.run(&["init"]);
    assert_eq!(code, 0, "{err}");
    let notes = template_notes(&ws);
    assert!(notes.len() >= 5, "{notes:?}");
    for args in [&["system-prompt"][..], &["system-prompt", "-D", "DEBUG"], &["messages", "hi"]] {
        let (code, out, err) = ws.run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
        for note in &notes {
            assert!(!out.contains(note.as_str()), "{args:?} sends the note {note:?}:\n{out}");
        }
        assert!(!out.contains("<!--"), "{args:?}: {out}");
        assert!(out.contains("Answer in the language of the question."), "{out}");
        assert!(out.contains("src/"), "the layout: {out}");
    }
}

fn rules(ws: &Workspace, dir: &str) {
    ws.write(&format!("{dir}/b.md"), "---\nDescription: second\n---\nRule B.\n");
    ws.write(&format!("{dir}/a.md"), "Rule A @{ifdef DEBUG}debug@{endif}.\n");
    ws.write(&format!("{dir}/notes.txt"), "not a rule\n");
}

#[test]
fn the_system_prompt_takes_the_rules_in_order_then_the_runtime_context() {
    let ws = Workspace::new();
    rules(&ws, ".ctx/rules");
    let (code, out, _) = ws.run(&["system-prompt"]);
    assert_eq!(code, 0);
    let root = ws.dir.path().canonicalize().unwrap();
    assert_eq!(
        out,
        format!(
            "Rule A .\n\nRule B.\n\n### Runtime Context\n\n- Workspace root: {}\n",
            root.display()
        )
    );
    let (_, out, _) = ws.run(&["-D", "DEBUG", "system-prompt", "--rule", "b", "--rule", "a.md"]);
    assert!(out.starts_with("Rule B.\n\nRule A debug.\n"), "{out}");
    let (code, _, err) = ws.run(&["system-prompt", "--rule", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no rule `nope`") && err.contains("a.md, b.md"), "{err}");
    let (_, json, _) = ws.run(&["system-prompt", "--format", "json"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["rules"][1]["description"], "second");
    assert!(json["runtime"].as_str().unwrap().starts_with("### Runtime Context"));
}

#[test]
fn a_mutsumi_rules_folder_is_read_as_it_is_and_a_broken_rule_is_kept_with_its_errors() {
    let ws = Workspace::new();
    rules(&ws, ".mutsumi/rules");
    ws.write(".mutsumi/rules/c.md", "See @[missing.md].\n");
    let (code, out, err) = ws.run(&["system-prompt", "--format", "json"]);
    assert_eq!(code, 1, "a rule with an error: exit 1");
    assert!(err.contains("E_NOT_FOUND"), "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["rules_dir"], ".mutsumi/rules");
    let keys: Vec<&str> =
        json["rules"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["a.md", "b.md", "c.md"]);
    assert_eq!(json["rules"][2]["diagnostics"][0]["code"], "E_NOT_FOUND");
    // The configured folder wins.
    ws.write("ctx.toml", "rules_dir = \".ctx/custom\"\nactive_rules = [\"only\"]\n");
    ws.write(".ctx/custom/only.md", "Only this.\n");
    let (_, out, _) = ws.run(&["system-prompt"]);
    assert!(out.starts_with("Only this.\n\n### Runtime Context"), "{out}");
}

const HISTORY: &str = r#"[
  {"id": "e3", "name": "retry", "timestamp": "2026-11-20T10:00:00Z", "prompt": "add retries",
   "description": "Retry failed requests", "aiResponse": "SECRET ANSWER TEXT",
   "operations": [{"type": "create", "filePath": "src/retry.rs", "content": "fn a() {}\nfn b() {}\n"},
                  {"type": "move", "oldPath": "a.rs", "newPath": "b.rs"}], "applied": true},
  {"id": "e2", "prompt": "fix the build", "operations": [], "applied": false},
  {"id": "e1", "prompt": "first steps", "operations": []}
]"#;

fn system_of(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap().to_owned()
}

#[test]
fn every_history_selector() {
    let ws = Workspace::new();
    ws.write(".mai/history.json", HISTORY);
    let (body, _) = ws.body(&["messages", "--include-history", "2", "hi"]);
    let system = system_of(&body);
    assert!(
        system.contains("### History")
            && system.contains("- e3 \"retry\"")
            && system.contains("- e2")
    );
    assert!(!system.contains("- e1"), "two newest only");
    assert!(
        system.contains("create: src/retry.rs (2 lines)") && system.contains("move: a.rs -> b.rs")
    );
    assert!(!system.contains("fn a()") && !system.contains("SECRET ANSWER"), "never contents");
    for (selector, id) in [("~1", "e3"), ("~3", "e1"), ("e2", "e2"), ("retry", "e3")] {
        let (body, _) = ws.body(&["messages", "--history-id", selector, "hi"]);
        let system = system_of(&body);
        assert!(system.contains(&format!("- {id}")), "{selector}: {system}");
        assert_eq!(system.matches("\n- e").count(), 1, "{selector}: one entry");
    }
    let (body, _) = ws.body(&["messages", "--history", "~2", "hi"]);
    assert!(system_of(&body).contains("- e2"), "--history ~N is an entry of mai's history");
    let (code, _, err) = ws.run(&["messages", "--history-id", "~4", "hi"]);
    assert_eq!(code, 2);
    assert!(err.contains("out of range (valid: ~1 to ~3)"), "{err}");
    let (_, _, err) = ws.run(&["messages", "--history-id", "nope", "hi"]);
    assert!(err.contains("no history entry"), "{err}");
    // The block is cut to its budget with a marker.
    let (body, err) =
        ws.body(&["messages", "--include-history", "3", "--history-tokens", "40", "hi"]);
    let system = system_of(&body);
    assert!(system.contains("older history entries left out"), "{system}");
    assert!(err.contains("W_BUDGET"), "{err}");
}

#[test]
fn a_transcript_keeps_its_turns_in_order_and_skips_a_torn_line() {
    let ws = Workspace::new();
    let gif = base64::engine::general_purpose::STANDARD.encode(samples::GIF);
    let lines = format!(
        "{{\"role\": \"user\", \"content\": [{{\"type\": \"text\", \"text\": \"first\"}}, {{\"type\": \"image_url\", \"image_url\": {{\"url\": \"data:image/gif;base64,{gif}\"}}}}]}}\n{{\"role\": \"assistant\", \"content\": \"answer one\"}}\n{{\"role\": \"user\", \"cont\n{{\"role\": \"assistant\", \"content\": \"answer two\"}}\n"
    );
    ws.write(".ctx/history.jsonl", lines);
    let (body, err) = ws.body(&["messages", "--history", ".ctx/history.jsonl", "next"]);
    assert!(err.contains("W_HISTORY") && err.contains(".ctx/history.jsonl:3:"), "{err}");
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "assistant", "user"]);
    assert_eq!(
        messages[1]["content"][1]["image_url"]["url"],
        format!("data:image/gif;base64,{gif}")
    );
    let (body, _) = ws.body(&[
        "messages",
        "--provider",
        "anthropic",
        "--history",
        ".ctx/history.jsonl",
        "next",
    ]);
    let first = &body["messages"][0]["content"];
    assert_eq!(
        first[1]["source"],
        json!({ "type": "base64", "media_type": "image/gif", "data": gif })
    );
}

/// No character a terminal obeys or that hides text, raw, in `text`.
/// The attack: a repository's `.mai/history.json` and a transcript whose text carries terminal
/// sequences, bidi overrides, zero-width and Tag characters, and a transcript line that is not
/// UTF-8. What must not happen: any of them reaching the request body or the terminal raw, or
/// the whole transcript lost for one bad line, or the line skipped without a word.
#[test]
fn hostile_history_and_transcripts_are_made_visible_and_a_bad_line_skipped_alone() {
    let ws = Workspace::new();
    ws.write(
        ".mai/history.json",
        r#"[{"id": "h\u001b]0;pwned\u0007", "name": "n\u202eevil", "prompt": "p\udb40\udc49 \u200bq",
             "operations": [{"type": "delete", "filePath": "a\u009b2J.rs"}], "applied": true}]"#,
    );
    let mut lines = b"{\"role\": \"user\", \"content\": \"one \\u001b[2J\\u202e\"}\n".to_vec();
    lines.extend_from_slice(b"{\"role\": \"assistant\", \"content\": \"torn \xe2\x80\n");
    lines.extend_from_slice(b"{\"role\": \"assistant\", \"content\": \"two\"}\n");
    ws.write(".ctx/history.jsonl", lines);
    for provider in ["openai", "anthropic"] {
        let (code, out, err) = ws.run(&[
            "messages",
            "--provider",
            provider,
            "--include-history",
            "1",
            "--history",
            ".ctx/history.jsonl",
            "next",
        ]);
        assert_eq!(code, 0, "{err}");
        let body: Value = serde_json::from_str(&out).unwrap();
        // Decoded, the strings of the body hold no raw character either.
        assert_no_raw_hidden(&format!("{body:#}"));
        assert_no_raw_hidden(&err);
        let text = body.to_string();
        assert!(text.contains("h\\\\u{1b}]0;pwned\\\\u{7}"), "{text}");
        assert!(text.contains("n\\\\u{202E}evil") && text.contains("a\\\\u{9b}2J.rs"), "{text}");
        assert!(text.contains("one \\\\u{1b}[2J\\\\u{202E}"), "{text}");
        assert!(text.contains("\"two\""), "the line after the bad one is kept: {text}");
        assert!(!text.contains("torn"), "{text}");
        assert!(
            err.contains("W_HISTORY")
                && err.contains(".ctx/history.jsonl:2: not UTF-8 text; skipped"),
            "{err}"
        );
        assert!(err.contains("W_HIDDEN_TEXT") && err.contains("W_CONTROL"), "{err}");
    }
}

/// The request body of OpenAI's Chat Completions API, as a JSON Schema.
const OPENAI_SCHEMA: &str = include_str!("../schemas/openai-chat-messages.schema.json");
/// The request body of Anthropic's Messages API, as a JSON Schema.
const ANTHROPIC_SCHEMA: &str = include_str!("../schemas/anthropic-messages.schema.json");

/// Validates a request body against a schema; no model is named (the caller adds it).
fn validate(body: &Value, schema: &str) {
    let schema: Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(body).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{body:#}");
    assert!(body.get("model").is_none(), "no model: the caller adds it");
    calls_are_answered(body);
}

/// The rules the providers publish for a request's messages that a schema of shapes does not
/// hold, checked on every body (`anthropic` or OpenAI's).
///
/// Anthropic, Messages API (docs.anthropic.com, "Messages" / "Create a Message", and the
/// `invalid_request_error` messages its API answers, as reported in anthropics/claude-code
/// issues #6774, #23440 and #59812 and anthropics/anthropic-sdk-python issue #461):
/// - "messages: text content blocks must be non-empty" and "… must contain non-whitespace
///   text": no text block, and no string content, is empty or white space only;
/// - "messages.N: all messages must have non-empty content except for the optional final
///   assistant message": every turn holds something;
/// - `messages` holds at least one turn, and no `system` turn (the system prompt is the
///   top-level `system`).
///
/// OpenAI, Chat Completions (platform.openai.com, API reference "Create chat completion",
/// and openai/openai-openapi `openapi.yaml`, `ChatCompletionRequestUserMessage`: `content` a
/// string or an array of at least one part; an assistant turn's `content` "required unless
/// `tool_calls` … is specified"): a user turn's parts are at least one; an assistant turn has
/// content or tool calls. ctx's own rule on top, for both providers (docs/conversation.md):
/// no text part is empty or white space only, and a body has at least one turn besides the
/// system prompt.
fn published_rules(body: &Value, anthropic: bool) {
    let messages = body["messages"].as_array().expect("messages is an array");
    let blank = |v: &Value| v.as_str().is_some_and(|t| t.trim().is_empty());
    let turns =
        messages.iter().filter(|m| !matches!(m["role"].as_str(), Some("system" | "developer")));
    assert!(turns.count() > 0, "no turn besides the system prompt: {body:#}");
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        let content = &message["content"];
        for (j, part) in content.as_array().into_iter().flatten().enumerate() {
            if part["type"] == "text" {
                assert!(!blank(&part["text"]), "messages.{i}.content.{j}: a blank text: {body:#}");
            }
        }
        let empty =
            content.is_null() || blank(content) || content.as_array().is_some_and(Vec::is_empty);
        let calls = message["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
        match role {
            // A tool's answer may say nothing; it answers its call.
            "tool" => assert!(!anthropic, "messages.{i}: a tool turn in an Anthropic body"),
            "assistant" if calls => assert!(!anthropic, "messages.{i}: tool_calls for Anthropic"),
            "system" | "developer" => assert!(!anthropic, "messages.{i}: a system turn: {body:#}"),
            _ => assert!(!empty, "messages.{i}: a turn with empty content: {body:#}"),
        }
    }
}

/// What no schema says and both APIs require: every tool call is answered after it, and every
/// answer follows its call (OpenAI: `tool_calls` and `tool` turns; Anthropic: `tool_use` and
/// `tool_result` blocks).
fn calls_are_answered(body: &Value) {
    let mut open: Vec<String> = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        let calls = message["tool_calls"].as_array().cloned().unwrap_or_default();
        let answers: Vec<&str> = if message["role"] == "tool" {
            vec![message["tool_call_id"].as_str().unwrap()]
        } else {
            blocks
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| b["tool_use_id"].as_str().unwrap())
                .collect()
        };
        for id in answers {
            let at = open.iter().position(|o| o == id);
            assert!(at.is_some(), "an answer to `{id}`, which no earlier turn calls: {body:#}");
            open.remove(at.unwrap());
        }
        let called = calls
            .iter()
            .map(|c| &c["id"])
            .chain(blocks.iter().filter(|b| b["type"] == "tool_use").map(|b| &b["id"]));
        open.extend(called.map(|id| id.as_str().unwrap().to_owned()));
    }
    assert!(open.is_empty(), "calls never answered: {open:?}\n{body:#}");
}

#[test]
fn the_schemas_refuse_what_the_apis_refuse() {
    let ok = json!({ "messages": [{ "role": "user", "content": [
        { "type": "text", "text": "hi" },
        { "type": "image_url", "image_url": { "url": "data:image/png;base64,AAAA", "detail": "auto" } }
    ] }] });
    validate(&ok, OPENAI_SCHEMA);
    for bad in [
        json!({ "messages": [] }),
        json!({ "messages": [{ "role": "robot", "content": "hi" }] }),
        json!({ "messages": [{ "role": "user", "content": [{ "type": "image", "url": "x" }] }] }),
        json!({ "messages": [{ "role": "user", "content": [
            { "type": "image_url", "image_url": { "url": "data:image/png;base64,AA", "detail": "max" } }
        ] }] }),
    ] {
        let schema: Value = serde_json::from_str(OPENAI_SCHEMA).unwrap();
        assert!(!jsonschema::is_valid(&schema, &bad), "{bad}");
    }
    let ok = json!({ "system": "rules", "messages": [{ "role": "user", "content": [
        { "type": "text", "text": "hi" },
        { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AAAA" } }
    ] }] });
    validate(&ok, ANTHROPIC_SCHEMA);
    for bad in [
        json!({ "messages": [{ "role": "system", "content": "rules" }] }),
        json!({ "messages": [{ "role": "user", "content": [
            { "type": "image", "source": { "type": "base64", "media_type": "image/bmp", "data": "AAAA" } }
        ] }] }),
        json!({ "messages": [{ "role": "user", "content": [{ "type": "image_url", "image_url": { "url": "x" } }] }] }),
        json!({ "messages": [{ "role": "user", "content": "" }] }),
        json!({ "messages": [{ "role": "user", "content": [{ "type": "text", "text": "" }] }] }),
        json!({ "messages": [{ "role": "assistant", "content": [
            { "type": "tool_use", "id": "c1", "name": "ls", "input": "not an object" }
        ] }] }),
    ] {
        let schema: Value = serde_json::from_str(ANTHROPIC_SCHEMA).unwrap();
        assert!(!jsonschema::is_valid(&schema, &bad), "{bad}");
    }
}

#[test]
fn the_published_rules_refuse_what_the_apis_refuse() {
    let text = |t: &str| json!({ "type": "text", "text": t });
    for (bad, anthropic) in [
        (json!({ "messages": [{ "role": "user", "content": [text("")] }] }), true),
        (json!({ "messages": [{ "role": "user", "content": [text(" \n")] }] }), true),
        (json!({ "messages": [{ "role": "user", "content": [text("")] }] }), false),
        (json!({ "messages": [{ "role": "user", "content": "  " }] }), false),
        (json!({ "messages": [{ "role": "system", "content": "rules" }] }), false),
        (
            json!({ "messages": [{ "role": "user", "content": "hi" }, { "role": "assistant", "content": [] }, { "role": "user", "content": "and?" }] }),
            true,
        ),
    ] {
        let refused = std::panic::catch_unwind(|| published_rules(&bad, anthropic));
        assert!(refused.is_err(), "{bad}");
    }
    published_rules(&json!({ "messages": [{ "role": "user", "content": [text("hi")] }] }), true);
}

/// An empty or blank prompt makes no empty text part for either provider: with a transcript
/// the body holds its turns; with nothing else there is nothing to send, said as an error.
#[test]
fn an_empty_prompt_never_makes_an_empty_text_part() {
    let ws = Workspace::new();
    ws.write("t.jsonl", r#"{"role": "user", "content": "what is in src?"}"#);
    for provider in ["openai", "anthropic"] {
        for prompt in ["", "  \n"] {
            // `body` checks the schema and the published rules.
            let (body, _) =
                ws.body(&["messages", "--provider", provider, "--history", "t.jsonl", prompt]);
            let last = body["messages"].as_array().unwrap().last().unwrap().clone();
            assert_eq!(last["role"], "user", "{provider}: {body:#}");
            assert!(last.to_string().contains("what is in src?"), "{provider}: {body:#}");
            let (code, out, err) = ws.run(&["messages", "--provider", provider, prompt]);
            assert_eq!((code, out.as_str()), (2, ""), "{provider} {prompt:?}: {err}");
            assert!(err.contains("nothing to send: the prompt is empty"), "{err}");
        }
    }
}

#[test]
fn a_transcript_with_tool_calls_makes_valid_bodies_for_both_providers() {
    let ws = Workspace::new();
    let turns = [
        r#"{"role": "user", "content": "what is in src?"}"#,
        r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\": \"src\"}"}}]}"#,
        r#"{"role": "tool", "tool_call_id": "c1", "content": "main.rs"}"#,
        r#"{"role": "assistant", "content": "One file."}"#,
    ];
    ws.write("t.jsonl", turns.join("\n"));
    for provider in ["openai", "anthropic"] {
        // `body` validates against the provider's schema.
        let (body, _) =
            ws.body(&["messages", "--provider", provider, "--history", "t.jsonl", "and now?"]);
        let text = body.to_string();
        assert!(text.contains("c1") && text.contains("main.rs"), "{provider}: {text}");
    }
}

/// The images the tests make are whole images: each format's decoder reads them back at their
/// size, and the JPEG's four squares have the means of the picture's luminance.
#[test]
fn the_images_made_for_the_tests_decode() {
    let side = crate::images::SIZE;
    let png = png::Decoder::new(Cursor::new(crate::images::png())).read_info().unwrap();
    assert_eq!((png.info().width, png.info().height), (side, side));
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let gif_bytes = crate::images::gif();
    let mut gif = options.read_info(&gif_bytes[..]).unwrap();
    assert_eq!((u32::from(gif.width()), u32::from(gif.height())), (side, side));
    assert!(gif.read_next_frame().unwrap().is_some());
    let mut webp = image_webp::WebPDecoder::new(Cursor::new(crate::images::webp())).unwrap();
    assert_eq!(webp.dimensions(), (side, side));
    let mut pixels = vec![0; webp.output_buffer_size().unwrap()];
    webp.read_image(&mut pixels).unwrap();
    assert_eq!(pixels, crate::images::rgb(), "lossless");
    let jpeg_bytes = crate::images::jpeg();
    let mut jpeg = jpeg_decoder::Decoder::new(&jpeg_bytes[..]);
    let grey = jpeg.decode().unwrap();
    let info = jpeg.info().unwrap();
    assert_eq!((u32::from(info.width), u32::from(info.height)), (side, side));
    assert_eq!(grey.len(), (side * side) as usize);
    // Each 8×8 square is flat, at its mean luminance.
    let rgb = crate::images::rgb();
    for (bx, by) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let at = |x: usize, y: usize| (y * side as usize) + x;
        let mean = (0..64)
            .map(|i| {
                let (x, y) = (bx * 8 + i % 8, by * 8 + i / 8);
                let p = &rgb[at(x, y) * 3..][..3];
                (299 * u32::from(p[0]) + 587 * u32::from(p[1]) + 114 * u32::from(p[2])) / 1000
            })
            .sum::<u32>()
            / 64;
        let got = grey[at(bx * 8 + 3, by * 8 + 3)];
        assert!(u32::from(got).abs_diff(mean) <= 2, "square {bx},{by}: {got} against {mean}");
    }
}

#[test]
fn a_cut_or_torn_transcript_leaves_no_call_without_its_answer() {
    let ws = Workspace::new();
    let turns = [
        format!(r#"{{"role": "user", "content": "{}"}}"#, "long question ".repeat(200)),
        r#"{"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "ls", "input": {}}]}"#.to_owned(),
        r#"{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "a.rs"}]}"#.to_owned(),
        r#"{"role": "assistant", "content": "One file."}"#.to_owned(),
        r#"{"role": "user", "content": "and the tests?"}"#.to_owned(),
        r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}"#.to_owned(),
        r#"{"role": "tool", "tool_call_id": "c2", "content": "#.to_owned(),
    ];
    ws.write("t.jsonl", turns.join("\n"));
    for provider in ["openai", "anthropic"] {
        // The first turn does not fit; the cut must not start at the answer to `c1`, and the
        // torn last line leaves `c2` unanswered. `body` checks every call is answered.
        let (body, err) = ws.body(&[
            "--max-tokens",
            "300",
            "messages",
            "--provider",
            provider,
            "--history",
            "t.jsonl",
            "go on",
        ]);
        assert!(err.contains("oldest turns left out"), "{provider}: {err}");
        // The id as a JSON string: the workspace's temporary path, in the system prompt, may
        // hold the letters `c2`.
        assert!(!body.to_string().contains("\"c2\""), "{provider}: {body:#}");
    }
}

#[test]
fn images_of_every_kind_become_parts_whose_bytes_are_the_files() {
    let ws = Workspace::new();
    let files = crate::images::all();
    for (name, bytes, _) in &files {
        ws.write(&format!("shots/{name}"), bytes);
    }
    let abs = ws.dir.path().canonicalize().unwrap().join("shots/c.gif");
    let prompt = format!(
        "compare ![a](shots/a.png) with @shots/b.jpg, ![c](file://{}) and ![d](shots/d.webp), and ![remote](https://img.test/x.png)",
        abs.display()
    );
    let (body, err) = ws.body(&["messages", &prompt]);
    let user = body["messages"].as_array().unwrap().last().unwrap();
    let parts = user["content"].as_array().unwrap();
    assert_eq!(parts.len(), 6, "text, four images, one URL: {err}");
    for (part, (_, bytes, media)) in parts[1..5].iter().zip(&files) {
        let url = part["image_url"]["url"].as_str().unwrap();
        let data = url.strip_prefix(&format!("data:{media};base64,")).expect(url);
        assert_eq!(&base64::engine::general_purpose::STANDARD.decode(data).unwrap(), bytes);
    }
    assert_eq!(parts[5]["image_url"]["url"], "https://img.test/x.png");
    // The mention also shows as a placeholder in the text, never as bytes.
    let text = parts[0]["text"].as_str().unwrap();
    assert!(text.contains("<image path=\"shots/b.jpg\" type=\"image/jpeg\""), "{text}");

    let (body, _) = ws.body(&["messages", "--provider", "anthropic", &prompt]);
    let blocks = body["messages"][0]["content"].as_array().unwrap();
    for (block, (_, bytes, media)) in blocks[1..5].iter().zip(&files) {
        assert_eq!(block["source"]["media_type"], *media);
        let data = block["source"]["data"].as_str().unwrap();
        assert_eq!(&base64::engine::general_purpose::STANDARD.decode(data).unwrap(), bytes);
    }
    assert_eq!(blocks[5]["source"], json!({ "type": "url", "url": "https://img.test/x.png" }));
}

#[test]
fn images_that_cannot_be_used_are_errors_with_codes() {
    let ws = Workspace::new();
    ws.write("lies.png", samples::GIF);
    ws.write("big.png", [samples::PNG, &[0u8; 2000][..]].concat());
    ws.write(".env.png", samples::PNG);
    let outside = TempDir::new().unwrap();
    std::fs::write(outside.path().join("o.png"), samples::PNG).unwrap();
    let prompt = format!(
        "![1](lies.png) ![2](big.png) ![3](.env.png) ![4]({}) ![5](missing.png)",
        outside.path().join("o.png").display()
    );
    let (code, out, err) = ws.run(&["messages", "--max-image-bytes", "1000", &prompt]);
    assert_eq!(code, 1, "{err}");
    for expected in ["E_IMAGE", "E_TOO_LARGE", "E_DENIED", "E_OUTSIDE", "E_NOT_FOUND"] {
        assert!(err.contains(expected), "{expected}: {err}");
    }
    let body: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        body["messages"].as_array().unwrap().last().unwrap()["content"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn paste_image_stores_by_hash_and_the_link_works_in_a_prompt() {
    let ws = Workspace::new();
    let out = ws.ctx().arg("paste-image").arg("-").write_stdin(samples::PNG).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let link = String::from_utf8(out.stdout).unwrap();
    let path =
        link.trim().strip_prefix("![pasted image](").unwrap().strip_suffix(')').unwrap().to_owned();
    assert!(path.starts_with(ws.cache.path().join("images").to_str().unwrap()), "{path}");
    assert_eq!(std::fs::read(&path).unwrap(), samples::PNG);
    let (body, _) = ws.body(&["messages", &format!("look {}", link.trim())]);
    let parts = body["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert!(parts[1]["image_url"]["url"].as_str().unwrap().starts_with("data:image/png;base64,"));
    // Not an image: refused; the folder serves images only.
    let out = ws.ctx().arg("paste-image").arg("-").write_stdin("hello").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::write(Path::new(&path).with_file_name("x.png"), b"text, not an image").unwrap();
    let sneaky = Path::new(&path).with_file_name("x.png");
    let (code, _, err) = ws.run(&["messages", &format!("![x]({})", sneaky.display())]);
    assert_eq!(code, 1);
    assert!(err.contains("E_IMAGE"), "{err}");
}

#[test]
fn the_token_budget_covers_the_whole_request() {
    let ws = Workspace::new();
    ws.write(".ctx/rules/a.md", "Short rule.\n");
    ws.write("big.txt", "word ".repeat(3000));
    let turns: String = (0..20)
        .map(|i| {
            format!("{{\"role\": \"user\", \"content\": \"turn {i} {}\"}}\n", "talk ".repeat(40))
        })
        .collect();
    ws.write("t.jsonl", turns);
    let (body, err) =
        ws.body(&["--max-tokens", "600", "messages", "--history", "t.jsonl", "see @big.txt"]);
    assert!(err.contains("oldest turns left out"), "{err}");
    // What the budget counts: the system prompt, the turns and the expanded prompt.
    let messages = body["messages"].as_array().unwrap();
    let counted: usize = messages
        .iter()
        .map(|m| match m["content"].as_str() {
            Some(text) if m["role"] == "system" => ctx::tokens::count(text),
            _ if m["role"] == "user" && m["content"].is_array() => {
                ctx::tokens::count(m["content"][0]["text"].as_str().unwrap())
            }
            // A turn: its text and four tokens of framing, as the budget counts it.
            _ => ctx::tokens::count(m["content"].as_str().unwrap()) + 4,
        })
        .sum();
    assert!(counted <= 600 + 600 / 10, "the request stays near its budget: {counted} tokens");
    assert!(err.contains("W_BUDGET"), "{err}");
    // The prompt gets what the turns leave, but its marker and warnings name the budget the
    // user set and can raise, never what was left of it.
    let named = err.lines().filter(|l| l.contains("token budget of"));
    assert!(named.clone().count() > 0, "{err}");
    for line in named {
        assert!(line.contains("token budget of 600 (o200k)"), "{err}");
    }
    let (body, _) =
        ws.body(&["--max-tokens", "1500", "messages", "--history", "t.jsonl", "see @big.txt"]);
    let user = body["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(user.contains("token budget of 1500 (o200k)"), "{user}");
}

#[test]
fn the_history_summary_stays_within_the_request_budget() {
    let ws = Workspace::new();
    ws.write(".ctx/rules/a.md", "Short rule.\n");
    ws.write(".mai/history.json", HISTORY);
    let rules = {
        let (body, _) = ws.body(&["messages", "hi"]);
        ctx::tokens::count(&system_of(&body))
    };
    for max in [rules + 1, rules + 12, rules + 25, rules + 40, rules + 60] {
        let max_text = max.to_string();
        let args = ["--max-tokens", &max_text, "messages", "--include-history", "3", "hi"];
        let (body, err) = ws.body(&args);
        let system = system_of(&body);
        // Before, the summary was sent whole (its own budget of 2000), past the request's.
        assert!(ctx::tokens::count(&system) <= max, "{max}: {system}");
        if !system.contains("- e1") {
            assert!(err.contains("left out by the token budget"), "{max}: {err}");
        }
        if system.contains("older history") {
            assert!(system.contains(&format!("token budget of {max} (o200k)")), "{system}");
        }
    }
    // A budget that holds it all changes nothing.
    let (body, _) = ws.body(&["--max-tokens", "5000", "messages", "--include-history", "3", "hi"]);
    let (whole, _) = ws.body(&["messages", "--include-history", "3", "hi"]);
    assert_eq!(system_of(&body), system_of(&whole));
}

#[test]
fn images_in_turns_are_not_counted_as_text() {
    let ws = Workspace::new();
    // A screenshot of about 550 KB in base64: as text it would be hundreds of thousands of tokens.
    let data = "iVBORw0KGgo".repeat(50_000);
    let image_turn = format!(
        "{{\"role\": \"user\", \"content\": [{{\"type\": \"text\", \"text\": \"what is this?\"}}, \
         {{\"type\": \"image_url\", \"image_url\": {{\"url\": \"data:image/png;base64,{data}\"}}}}]}}\n\
         {{\"role\": \"assistant\", \"content\": \"a login form\"}}\n"
    );
    ws.write("t.jsonl", image_turn);
    let (body, err) =
        ws.body(&["--max-tokens", "500", "messages", "--history", "t.jsonl", "and now?"]);
    assert!(!err.contains("oldest turns left out"), "{err}");
    let roles: Vec<&str> =
        body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles.iter().filter(|r| **r != "system").count(), 3, "{roles:?}");
}

#[test]
fn a_system_prompt_over_the_budget_is_sent_whole_with_a_warning() {
    let ws = Workspace::new();
    ws.write(".ctx/rules/a.md", "Always write tests. ".repeat(200));
    let (body, err) = ws.body(&["--max-tokens", "100", "messages", "hello"]);
    assert!(err.contains("alone take"), "{err}");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert_eq!(system.matches("Always write tests.").count(), 200);
}

#[test]
fn a_cut_history_starts_with_a_users_turn() {
    let ws = Workspace::new();
    let turns: String = (0..20)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            format!("{{\"role\": \"{role}\", \"content\": \"turn {i} {}\"}}\n", "talk ".repeat(40))
        })
        .collect();
    ws.write("t.jsonl", turns);
    for provider in ["anthropic", "openai"] {
        let (body, err) = ws.body(&[
            "--max-tokens",
            "700",
            "messages",
            "--provider",
            provider,
            "--history",
            "t.jsonl",
            "and now?",
        ]);
        assert!(err.contains("oldest turns left out"), "{err}");
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .filter(|r| *r != "system")
            .collect();
        assert!(roles.len() > 2 && roles.len() < 21, "{roles:?}");
        assert_eq!(roles[0], "user", "{provider}: {roles:?}");
        assert_eq!(roles.last(), Some(&"user"));
        // The turns kept still alternate.
        assert!(roles.windows(2).all(|w| w[0] != w[1]), "{provider}: {roles:?}");
    }
}

#[test]
fn the_format_chooses_the_layout_of_the_users_turn() {
    let ws = Workspace::new();
    ws.write("notes.txt", "remember the milk\n");
    let user_text = |body: &Value| {
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        last["content"][0]["text"].as_str().unwrap().to_owned()
    };
    for (format, wanted) in [
        (None, "<file path=\"notes.txt\">"),
        (Some("json"), "<file path=\"notes.txt\">"),
        (Some("xml"), "<file path=\"notes.txt\">"),
        (Some("markdown"), "#### Source: notes.txt"),
    ] {
        let mut args = Vec::new();
        if let Some(format) = format {
            args.extend(["--format", format]);
        }
        args.extend(["messages", "see @notes.txt"]);
        let (body, err) = ws.body(&args);
        let text = user_text(&body);
        assert!(text.contains(wanted) && text.contains("remember the milk"), "{format:?}: {text}");
        assert!(err.is_empty(), "{err}");
    }
    let (code, _, err) = ws.run(&["--format", "text", "messages", "hi"]);
    assert_eq!(code, 2, "{err}");
}

/// One picture named several ways is one image, and the images of a request together stay
/// within four times the cap of one.
#[test]
fn images_are_sent_once_and_within_a_total() {
    let ws = Workspace::new();
    let png = crate::images::png();
    for i in 0..8 {
        ws.write(&format!("shots/s{i}.png"), &png);
    }
    let (body, _) = ws
        .body(&["messages", "![a](shots/s0.png) ![b](./shots/s0.png) ![c](shots/../shots/s0.png)"]);
    let parts = body["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(parts.as_array().unwrap().len(), 2, "text and one image: {parts:#}");
    let cap = png.len() + 10;
    let prompt: String = (0..8).map(|i| format!("![x](shots/s{i}.png) ")).collect();
    let (body, err) = ws.body(&["messages", "--max-image-bytes", &cap.to_string(), &prompt]);
    let parts = body["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert_eq!(parts.as_array().unwrap().len(), 1 + 4, "four images fit: {err}");
    assert!(err.contains("W_LIMIT"), "{err}");
}
