//! In-process MCP sessions: a script of messages through `ctx_mcp::run`, the answers
//! matched by id: handshake, tools/list, every tool, resources and errors.

#![allow(clippy::disallowed_methods)] // Tests build their fixtures on disk.

use std::collections::BTreeMap;

use serde_json::{Value, json};

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join(".ctx/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join("main.md"), "Style: @[style.md]@{ifdef LANG}Lang @{LANG}@{endif}\n")
        .unwrap();
    std::fs::write(rules.join("style.md"), "four spaces\n").unwrap();
    std::fs::write(rules.join("broken.md"), "see @[missing.md]\n").unwrap();
    dir
}

fn initialize(version: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } })
}

fn initialized() -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

fn tool(id: u64, name: &str, arguments: Value) -> Value {
    request(id, "tools/call", json!({ "name": name, "arguments": arguments }))
}

/// Runs the raw `input` through a server over `dir`; every line of output, parsed.
fn run_raw(dir: &tempfile::TempDir, input: &str) -> Vec<Value> {
    let ctx = ctx::Context::builder().root(dir.path()).build().unwrap();
    let mut out = Vec::new();
    ctx_mcp::run(&ctx, input.as_bytes(), &mut out).unwrap();
    String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Runs `messages` after the handshake; the answers by id (the handshake's is id 0).
fn session(dir: &tempfile::TempDir, messages: &[Value]) -> BTreeMap<u64, Value> {
    let handshake = [initialize("2025-06-18"), initialized()];
    let input: String = handshake.iter().chain(messages).map(|m| format!("{m}\n")).collect();
    let mut answers = BTreeMap::new();
    for answer in run_raw(dir, &input) {
        let id = answer["id"].as_u64().unwrap_or_else(|| panic!("an answer without id: {answer}"));
        assert!(answers.insert(id, answer).is_none(), "two answers to {id}");
    }
    answers
}

#[test]
fn handshake_and_tool_list() {
    let dir = workspace();
    let answers = session(&dir, &[request(2, "tools/list", json!({}))]);
    let init = &answers[&0]["result"];
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "ctx");
    assert_eq!(init["capabilities"]["tools"]["listChanged"], false);
    assert!(init["capabilities"]["resources"].is_object());
    assert_eq!(answers.len(), 2, "the notification gets no answer");
    let tools = answers[&2]["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["assemble", "expand", "check", "resolve", "sources", "suggest", "rules", "refs"]
    );
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["path"]));
    assert_eq!(tools[0]["title"], "Assemble a rule document");
    assert_eq!(tools[2]["inputSchema"]["properties"]["paths"]["type"], "array");
}

#[test]
fn version_negotiation() {
    let dir = workspace();
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", ctx_mcp::PROTOCOL_VERSION.as_str()),
    ] {
        let answers = run_raw(&dir, &format!("{}\n", initialize(asked)));
        assert_eq!(answers[0]["result"]["protocolVersion"], answered, "asked {asked}");
    }
}

#[test]
fn assemble_with_defines() {
    let dir = workspace();
    let answers = session(
        &dir,
        &[
            tool(
                1,
                "assemble",
                json!({ "path": ".ctx/rules/main.md", "defines": { "LANG": "rust" } }),
            ),
            tool(2, "assemble", json!({ "path": ".ctx/rules/main.md" })),
            tool(3, "assemble", json!({ "path": ".ctx/rules/main.md", "format": "xml" })),
        ],
    );
    let result = &answers[&1]["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["text"], "Style: four spaces\nLang rust\n");
    assert_eq!(answers[&2]["result"]["content"][0]["text"], "Style: four spaces\n\n");
    let xml = answers[&3]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(xml.contains("four spaces"), "{xml}");
}

#[test]
fn diagnostics_carry_codes() {
    let dir = workspace();
    let answers = session(
        &dir,
        &[
            tool(1, "assemble", json!({ "path": ".ctx/rules/broken.md" })),
            tool(2, "check", json!({ "paths": [".ctx/rules/broken.md", ".ctx/rules/main.md"] })),
        ],
    );
    let assembled = &answers[&1]["result"];
    assert_eq!(assembled["structuredContent"]["diagnostics"][0]["code"], "E_NOT_FOUND");
    let check = &answers[&2]["result"];
    assert_eq!(check["isError"], false);
    assert_eq!(check["structuredContent"]["errors"], 1);
    assert_eq!(check["structuredContent"]["files"], 2);
    assert_eq!(check["structuredContent"]["failed"], json!([]));
}

#[test]
fn check_reports_every_path_when_one_fails() {
    let dir = workspace();
    let answers = session(
        &dir,
        &[
            tool(
                1,
                "check",
                json!({ "paths": [".ctx/rules/broken.md", "nope.md", ".ctx/rules/main.md"] }),
            ),
            tool(2, "check", json!({ "paths": ["nope.md", "../outside.md"] })),
        ],
    );
    let some = &answers[&1]["result"];
    assert_eq!(some["isError"], false, "{some}");
    let report = &some["structuredContent"];
    assert_eq!(report["files"], 3);
    assert_eq!(report["errors"], 1, "the diagnostics of broken.md are kept");
    assert_eq!(report["diagnostics"][0]["file"], ".ctx/rules/broken.md");
    assert_eq!(report["failed"].as_array().unwrap().len(), 1);
    assert_eq!(report["failed"][0]["file"], "nope.md");
    assert_eq!(report["failed"][0]["code"], "E_NOT_FOUND");
    let none = &answers[&2]["result"];
    assert_eq!(none["isError"], true, "{none}");
    let text = none["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("E_NOT_FOUND") && text.contains("\nE_OUTSIDE"), "{text}");
    assert_eq!(none["structuredContent"]["code"], "E_NOT_FOUND");
    assert_eq!(none["structuredContent"]["failed"][1]["file"], "../outside.md");
}

#[test]
fn top_level_failures_are_tool_errors() {
    let dir = workspace();
    let answers = session(
        &dir,
        &[
            tool(1, "assemble", json!({ "path": "nope.md" })),
            tool(2, "assemble", json!({ "path": "../../etc/passwd" })),
            tool(3, "assemble", json!({})),
            request(4, "tools/call", json!({ "name": "nope" })),
        ],
    );
    let missing = &answers[&1]["result"];
    assert_eq!(missing["isError"], true);
    assert!(missing["content"][0]["text"].as_str().unwrap().starts_with("E_NOT_FOUND"));
    assert_eq!(missing["structuredContent"]["code"], "E_NOT_FOUND");
    let outside = &answers[&2]["result"];
    assert_eq!(outside["isError"], true);
    let text = outside["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("E_OUTSIDE"), "{text}");
    assert_eq!(outside["structuredContent"]["code"], "E_OUTSIDE");
    let usage = &answers[&3]["result"];
    assert_eq!(usage["isError"], true);
    assert!(usage.get("structuredContent").is_none(), "{usage}");
    assert_eq!(answers[&4]["error"]["code"], -32602);
}

#[test]
fn expand_and_refs() {
    let dir = workspace();
    let answers = session(
        &dir,
        &[
            tool(1, "expand", json!({ "prompt": "look at @.ctx/rules/style.md" })),
            tool(2, "refs", json!({ "path": ".ctx/rules/main.md" })),
        ],
    );
    let text = answers[&1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("look at @.ctx/rules/style.md"), "{text}");
    assert!(text.contains("four spaces"), "{text}");
    let references = answers[&2]["result"]["structuredContent"]["references"].as_array().unwrap();
    assert_eq!(references.len(), 1);
    assert_eq!(references[0]["path"], ".ctx/rules/style.md");
}

/// A 1 MiB prompt of one line of failing mentions (issue 23, rule 6): the call answers within
/// the hang guard (15 s and 10 GB before diagnostics kept a window of their line), with every
/// diagnostic at its exact column and an answer that grows with the diagnostics, not with the
/// line times their number.
#[test]
fn expand_a_long_line_of_failing_mentions() {
    let dir = workspace();
    let prompt = "@nothere.md ".repeat(((1 << 20) - 1) / 12);
    let started = std::time::Instant::now();
    let answers = session(&dir, &[tool(1, "expand", json!({ "prompt": prompt }))]);
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "{:?}", started.elapsed());
    let result = &answers[&1]["result"];
    assert_eq!(result["isError"], false);
    let diagnostics = result["structuredContent"]["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 10_001);
    for (i, d) in diagnostics[..10_000].iter().enumerate() {
        assert_eq!((d["code"].as_str(), d["line"].as_u64()), (Some("W_UNRESOLVED"), Some(1)));
        assert_eq!(d["column"], 12 * i + 1);
    }
    assert_eq!(diagnostics[10_000]["code"], "E_BUDGET");
    let listed = result["content"][1]["text"].as_str().unwrap();
    assert_eq!(listed.lines().count(), 10_001);
    let size = answers[&1].to_string().len();
    assert!(size < 8 << 20, "an answer of {size} bytes");
}

/// A prompt is the top-level input: past the size cap of the server's files (1 MiB by
/// default) it is refused as `ctx expand` refuses one, never scanned whole (a prompt of 15 MB
/// of mentions took gigabytes).
#[test]
fn a_prompt_past_the_size_cap_is_refused() {
    let dir = workspace();
    let prompt = "@a ".repeat((1 << 20) / 3 + 1);
    let answers = session(
        &dir,
        &[
            tool(1, "expand", json!({ "prompt": prompt })),
            tool(2, "suggest", json!({ "prompt": prompt })),
            tool(3, "expand", json!({ "prompt": "@a ".repeat(1000) })),
        ],
    );
    for id in [1, 2] {
        let result = &answers[&id]["result"];
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(result["structuredContent"]["code"], "E_TOO_LARGE", "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("size cap of 1048576 bytes"), "{text}");
    }
    assert_eq!(answers[&3]["result"]["isError"], false);
}

#[test]
fn suggest_ranks_the_files_of_a_prompt() {
    let dir = workspace();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/retry.rs"),
        "/// Retries until the deadline.\npub fn retry_with_timeout() {}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() { parse_args(); }\n").unwrap();
    let answers = session(
        &dir,
        &[
            tool(1, "suggest", json!({ "prompt": "fix the retry timeout", "limit": 1 })),
            tool(2, "suggest", json!({ "prompt": "x", "limit": "many" })),
            // Outside the schema's 1 to 100: a tool error, not a silent clamp.
            tool(3, "suggest", json!({ "prompt": "x", "limit": 0 })),
            tool(4, "suggest", json!({ "prompt": "x", "limit": -1 })),
            tool(5, "suggest", json!({ "prompt": "x", "limit": 1000 })),
            // A list with something else than strings.
            tool(6, "check", json!({ "paths": [1, "src/main.rs"] })),
            tool(7, "resolve", json!({ "queries": [1] })),
        ],
    );
    for id in 3..=7 {
        assert_eq!(answers[&id]["result"]["isError"], true, "{id}: {}", answers[&id]);
    }
    let result = &answers[&1]["result"];
    assert_eq!(result["isError"], false, "{result}");
    let found = result["structuredContent"]["suggestions"].as_array().unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["path"], "src/retry.rs");
    assert_eq!(answers[&2]["result"]["isError"], true);
}

#[test]
fn rule_files_are_resources() {
    let dir = workspace();
    let answers = session(
        &dir,
        &[
            request(1, "resources/list", json!({})),
            request(2, "resources/read", json!({ "uri": "ctx:///.ctx/rules/style.md" })),
            request(3, "resources/read", json!({ "uri": "ctx:///.ctx/rules/../../x" })),
            request(4, "resources/read", json!({ "uri": "ctx:///src/main.rs" })),
        ],
    );
    let resources = answers[&1]["result"]["resources"].as_array().unwrap();
    let mut uris: Vec<&str> = resources.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        ["ctx:///.ctx/rules/broken.md", "ctx:///.ctx/rules/main.md", "ctx:///.ctx/rules/style.md"]
    );
    assert_eq!(resources[0]["mimeType"], "text/markdown");
    let read = &answers[&2]["result"]["contents"][0];
    assert_eq!(read["text"], "four spaces\n");
    assert_eq!(read["mimeType"], "text/markdown");
    assert_eq!(answers[&3]["error"]["code"], -32002);
    assert_eq!(answers[&4]["error"]["code"], -32002);
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_out_of_the_rules_is_not_a_resource() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "secret\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        dir.path().join(".ctx/rules/link.md"),
    )
    .unwrap();
    let answers = session(
        &dir,
        &[request(1, "resources/read", json!({ "uri": "ctx:///.ctx/rules/link.md" }))],
    );
    assert_eq!(answers[&1]["error"]["code"], -32002, "{}", answers[&1]);
}

/// The attack: `resources/read` of everything that is not a listed rule file, spelled every
/// way a path can be: `..` with `/` and `\`, `\` alone, absolute paths, percent-encoded
/// separators, another scheme, a denied file in the rules folder, a link in the rules folder to
/// a file of the workspace and one to a file outside it. What must not happen: any of them
/// served, or the answer telling a file that exists from one that does not.
#[test]
fn only_listed_rule_files_are_resources_however_a_path_is_spelled() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "OUTSIDE SECRET\n").unwrap();
    std::fs::write(dir.path().join("secret.md"), "TOP SECRET\n").unwrap();
    std::fs::write(dir.path().join(".ctx/rules/.env"), "API_KEY=1\n").unwrap();
    std::fs::write(dir.path().join(".ctx/rules/id_rsa"), "PRIVATE KEY\n").unwrap();
    #[cfg(unix)]
    {
        let rules = dir.path().join(".ctx/rules");
        std::os::unix::fs::symlink(dir.path().join("secret.md"), rules.join("inner.md")).unwrap();
        std::os::unix::fs::symlink("../../secret.md", rules.join("relative.md")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), rules.join("out.md")).unwrap();
    }
    let outside_file = outside.path().join("secret.md").display().to_string();
    let uris = [
        "ctx:///.ctx/rules/../../secret.md".to_owned(),
        "ctx:///.ctx/rules\\..\\..\\secret.md".to_owned(),
        "ctx:///.ctx\\rules\\..\\..\\secret.md".to_owned(),
        "ctx:///.ctx/rules/..\\..\\secret.md".to_owned(),
        "ctx:///.ctx/rules/%2E%2E/%2E%2E/secret.md".to_owned(),
        "ctx:///.ctx/rules%2F..%2F..%2Fsecret.md".to_owned(),
        "ctx:///.ctx/rules%5C..%5C..%5Csecret.md".to_owned(),
        "ctx:///.ctx%2Frules%2Fstyle.md".to_owned(),
        "ctx:///secret.md".to_owned(),
        "ctx:////etc/passwd".to_owned(),
        format!("ctx:///{outside_file}"),
        format!("ctx://{outside_file}"),
        "ctx:///C:\\Windows\\win.ini".to_owned(),
        "ctx:///\\\\server\\share\\x.md".to_owned(),
        "file:///etc/passwd".to_owned(),
        "ctx:///.ctx/rules/.env".to_owned(),
        "ctx:///.ctx/rules/id_rsa".to_owned(),
        "ctx:///.ctx/rules/inner.md".to_owned(),
        "ctx:///.ctx/rules/relative.md".to_owned(),
        "ctx:///.ctx/rules/out.md".to_owned(),
        "ctx:///.ctx/rules/./style.md".to_owned(),
        "ctx:///.ctx/rules//style.md".to_owned(),
        "ctx:///.ctx/rules/nothere.md".to_owned(),
        "ctx:///nothere.md".to_owned(),
    ];
    let mut messages = vec![request(1, "resources/list", json!({}))];
    for (i, uri) in uris.iter().enumerate() {
        messages.push(request(10 + i as u64, "resources/read", json!({ "uri": uri })));
    }
    // `\` splits like `/`: the backslash spelling of a listed file is that file.
    messages.push(request(2, "resources/read", json!({ "uri": "ctx:///.ctx\\rules\\style.md" })));
    let answers = session(&dir, &messages);
    let listed = answers[&1]["result"]["resources"].as_array().unwrap();
    let mut listed: Vec<&str> = listed.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    listed.sort_unstable();
    assert_eq!(
        listed,
        ["ctx:///.ctx/rules/broken.md", "ctx:///.ctx/rules/main.md", "ctx:///.ctx/rules/style.md"]
    );
    for (i, uri) in uris.iter().enumerate() {
        let answer = &answers[&(10 + i as u64)];
        let text = answer.to_string();
        assert!(
            !text.contains("SECRET") && !text.contains("API_KEY") && !text.contains("PRIVATE"),
            "{uri}: {answer}"
        );
        assert_eq!(answer["error"]["code"], -32002, "{uri}: {answer}");
        // The same answer for every one, whether the file exists or not: only the URI the
        // client sent comes back.
        let message = answer["error"]["message"].as_str().unwrap();
        assert_eq!(message, format!("resource not found: {uri}"), "{answer}");
        assert!(answer["error"].get("data").is_none_or(Value::is_null), "{answer}");
    }
    assert_eq!(answers[&2]["result"]["contents"][0]["text"], "four spaces\n");
}

/// The attack: a rule file whose text carries a terminal title sequence, a C1 CSI, bidi,
/// zero-width and Tag characters, and one whose references do. What must not happen: any of
/// them reaching the client raw, through `resources/read` or a tool's result.
#[test]
fn a_rule_file_is_served_with_its_hidden_text_made_visible() {
    let dir = workspace();
    std::fs::write(
        dir.path().join(".ctx/rules/hostile.md"),
        "Be kind\u{1b}]0;pwned\u{7}\u{9b}2J.\u{202e}txt\u{200b}\u{e0049}\u{e0047}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".ctx/rules/refs.md"),
        "see @[gone\u{1b}(0.md] and @[x\u{202e}y\u{200b}\u{e0041}.md]\n",
    )
    .unwrap();
    let answers = session(
        &dir,
        &[
            request(1, "resources/read", json!({ "uri": "ctx:///.ctx/rules/hostile.md" })),
            tool(2, "refs", json!({ "path": ".ctx/rules/refs.md" })),
            tool(3, "check", json!({ "paths": [".ctx/rules/refs.md"] })),
            tool(4, "assemble", json!({ "path": ".ctx/rules/refs.md" })),
        ],
    );
    let text = answers[&1]["result"]["contents"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "Be kind\\u{1b}]0;pwned\\u{7}\\u{9b}2J.\\u{202E}txt\\u{200B}\\u{E0049}\\u{E0047}\n"
    );
    // The tools' results quote reference text and paths as written: made visible too.
    for id in [2, 3, 4] {
        let result = answers[&id]["result"].to_string();
        let decoded: Value = serde_json::from_str(&result).unwrap();
        let decoded = format!("{decoded:#}");
        assert!(
            !decoded.contains(['\u{1b}', '\u{202e}', '\u{200b}', '\u{e0041}']),
            "{id}: {decoded}"
        );
        assert!(result.contains("gone\\\\u{1b}(0.md"), "{id}: {result}");
    }
}

#[test]
fn bad_input_does_not_end_the_session() {
    let dir = workspace();
    let script = [
        // Before the handshake: a request gets an error, a notification is dropped; a call
        // that carries the `_meta` of a revision without a handshake is no exception.
        request(1, "tools/list", json!({})),
        tool(12, "assemble", json!({ "path": ".ctx/rules/style.md" })),
        request(
            13,
            "tools/call",
            json!({
                "name": "assemble",
                "arguments": { "path": ".ctx/rules/style.md" },
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}
                }
            }),
        ),
        request(14, "ping", json!({})),
        initialized(),
        initialize("2025-06-18"),
        initialized(),
        // After it: an unknown method, a message that is JSON but not JSON-RPC.
        request(7, "nope", json!({})),
        json!([1]),
        request(8, "ping", json!({})),
        // A method of the protocol with parameters that do not hold together.
        request(10, "tools/call", json!({ "arguments": {} })),
        request(11, "resources/read", json!({})),
    ];
    let mut input: String = script.iter().map(|m| format!("{m}\n")).collect();
    // Text that is not JSON is skipped without an answer.
    input.insert_str(0, "not json\n");
    input.push_str("{\"jsonrpc\":\n");
    input.push_str(&format!("{}\n", tool(9, "assemble", json!({ "path": ".ctx/rules/style.md" }))));
    let answers = run_raw(&dir, &input);
    let by_id =
        |id: u64| answers.iter().find(|a| a["id"] == id).unwrap_or_else(|| panic!("no {id}"));
    assert_eq!(by_id(1)["error"]["code"], -32602, "a request before initialize");
    assert_eq!(by_id(0)["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(by_id(7)["error"]["code"], -32601);
    assert_eq!(by_id(7)["error"]["message"], "method not found: nope");
    let invalid: Vec<_> = answers.iter().filter(|a| a["id"].is_null()).collect();
    assert_eq!(invalid.len(), 1, "{answers:?}");
    assert_eq!(invalid[0]["error"]["code"], -32600);
    assert_eq!(by_id(8)["result"], json!({}));
    assert_eq!(by_id(9)["result"]["content"][0]["text"], "four spaces\n");
    for id in [10, 11, 12, 13] {
        assert_eq!(by_id(id)["error"]["code"], -32602, "{answers:?}");
    }
    assert_eq!(by_id(14)["result"], json!({}), "ping before initialize");
    // The call before the handshake read nothing: only the one after it has the text.
    let texts = answers.iter().filter(|a| a.to_string().contains("four spaces")).count();
    assert_eq!(texts, 1, "{answers:?}");
    assert_eq!(answers.len(), 11, "{answers:?}");
}

#[test]
fn a_client_that_leaves_before_initialize_is_not_an_error() {
    let dir = workspace();
    assert!(run_raw(&dir, "").is_empty());
}

/// A tool that takes longer than rmcp waits for calls under way once the input has ended
/// (5 s), to keep a call under way past it.
struct Slow;

impl ctx::Tool for Slow {
    fn name(&self) -> &str {
        "slow"
    }

    fn call(
        &self,
        _args: &serde_json::Map<String, Value>,
        _cx: &ctx::ToolContext<'_>,
    ) -> Result<String, ctx::ToolError> {
        std::thread::sleep(std::time::Duration::from_millis(5_500));
        Ok("done slowly".to_owned())
    }
}

/// A client that writes its requests and closes its input (`ctx mcp < script`) still gets an
/// answer to every request, those under way when the input ended included, however long
/// they take (rmcp alone drops an answer that comes more than 5 s after the end of input).
#[test]
fn calls_under_way_when_the_input_ends_are_answered() {
    let dir = workspace();
    let ctx =
        ctx::Context::builder().root(dir.path()).tool(std::sync::Arc::new(Slow)).build().unwrap();
    let messages = [
        initialize("2025-06-18"),
        initialized(),
        tool(1, "expand", json!({ "prompt": "@[slow{}]" })),
        tool(2, "expand", json!({ "prompt": "quick" })),
    ];
    let input: String = messages.iter().map(|m| format!("{m}\n")).collect();
    let mut out = Vec::new();
    ctx_mcp::run(&ctx, input.as_bytes(), &mut out).unwrap();
    let answers: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let slow = answers.iter().find(|a| a["id"] == 1).expect("the slow call is answered");
    let text = slow["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("done slowly"), "{text}");
    assert!(answers.iter().any(|a| a["id"] == 2));
}

/// A workspace with ctx's rules and some coding agents' rule files.
fn agents_workspace() -> tempfile::TempDir {
    let dir = workspace();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("CLAUDE.md", "be brief\n");
    write(".cursor/rules/a.mdc", "---\nalwaysApply: \"true\"\n---\nuse tabs\n");
    write(".cursor/rules/ts.mdc", "---\nglobs: \"*.ts\"\n---\ntyped\n");
    write("README.md", "not a rule\n");
    dir
}

/// The `rules` tool: one agent's view as `ctx rules --format json` gives it, every agent's
/// with `all`, `for` scoping; bad arguments are tool errors.
#[test]
fn the_rules_tool() {
    let dir = agents_workspace();
    let answers = session(
        &dir,
        &[
            tool(1, "rules", json!({ "agent": "claude" })),
            tool(2, "rules", json!({ "agent": "all" })),
            tool(3, "rules", json!({ "agent": "cursor", "for": "src/a.ts" })),
            tool(4, "rules", json!({ "agent": "nobody" })),
            tool(5, "rules", json!({ "agent": "claude", "for": "../x" })),
            tool(6, "rules", json!({ "agent": 3 })),
        ],
    );
    let claude = &answers[&1]["result"]["structuredContent"];
    assert_eq!(claude["agent"], "claude", "{claude}");
    assert_eq!(claude["pieces"][0]["path"], "CLAUDE.md");
    assert!(claude["segments"][0]["text"].as_str().unwrap().contains("be brief"));
    assert!(claude["tokens"].as_u64().unwrap() > 0);
    let all = answers[&2]["result"]["structuredContent"]["agents"].as_array().unwrap();
    let names: Vec<&str> = all.iter().map(|v| v["agent"].as_str().unwrap()).collect();
    assert!(names.starts_with(&["claude", "cursor"]), "{names:?}");
    let cursor = &answers[&3]["result"]["structuredContent"];
    assert_eq!(cursor["for"], "src/a.ts");
    assert!(cursor.to_string().contains("typed"), "{cursor}");
    assert_eq!(cursor["diagnostics"][0]["code"], "E_RULES_TYPE", "{cursor}");
    for id in [4, 5, 6] {
        assert_eq!(answers[&id]["result"]["isError"], true, "{}", answers[&id]);
    }
}

/// Each agent's rule files are resources, described by the agents that read them, and can
/// be read; a file of the workspace that no agent reads cannot.
#[test]
fn agent_rule_files_are_resources() {
    let dir = agents_workspace();
    let answers = session(
        &dir,
        &[
            request(1, "resources/list", json!({})),
            request(2, "resources/read", json!({ "uri": "ctx:///CLAUDE.md" })),
            request(3, "resources/read", json!({ "uri": "ctx:///.cursor/rules/ts.mdc" })),
            request(4, "resources/read", json!({ "uri": "ctx:///README.md" })),
        ],
    );
    let listed = answers[&1]["result"]["resources"].as_array().unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    for uri in ["ctx:///CLAUDE.md", "ctx:///.cursor/rules/a.mdc", "ctx:///.cursor/rules/ts.mdc"] {
        assert!(uris.contains(&uri), "{uri}: {uris:?}");
    }
    assert!(!uris.contains(&"ctx:///README.md"), "{uris:?}");
    let claude = listed.iter().find(|r| r["uri"] == "ctx:///CLAUDE.md").unwrap();
    assert_eq!(claude["description"], "rule file of claude, copilot", "{claude}");
    assert_eq!(answers[&2]["result"]["contents"][0]["text"], "be brief\n");
    assert!(answers[&3]["result"]["contents"][0]["text"].as_str().unwrap().contains("typed"));
    assert_eq!(answers[&4]["error"]["code"], -32002);
}

/// The attacks: a `CLAUDE.md` linked to a file outside the workspace, imports out of it, an
/// `AGENTS.md` linked to another file of the workspace, hidden text in a rule file. What must
/// not happen: the secret in any answer, a link served as a rule file, hidden text raw.
#[cfg(unix)]
#[test]
fn agent_rules_over_mcp_read_nothing_outside() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "OUTSIDE SECRET\n").unwrap();
    std::fs::write(dir.path().join("secret.md"), "TOP SECRET\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("CLAUDE.md"))
        .unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.md"), dir.path().join("AGENTS.md")).unwrap();
    let import = format!(
        "@{}\n@../secret.md\nrun \u{202e}evil\n",
        outside.path().join("secret.md").display()
    );
    std::fs::write(dir.path().join("GEMINI.md"), import).unwrap();
    let answers = session(
        &dir,
        &[
            tool(1, "rules", json!({ "agent": "all" })),
            request(2, "resources/list", json!({})),
            request(3, "resources/read", json!({ "uri": "ctx:///CLAUDE.md" })),
            request(4, "resources/read", json!({ "uri": "ctx:///AGENTS.md" })),
            request(5, "resources/read", json!({ "uri": "ctx:///GEMINI.md" })),
            tool(6, "rules", json!({ "agent": "gemini", "cwd": "..", "for": "../x" })),
        ],
    );
    for (id, answer) in &answers {
        let text = answer.to_string();
        assert!(!text.contains("OUTSIDE SECRET"), "{id}: {answer}");
        let decoded = format!("{answer:#}");
        assert!(!decoded.contains('\u{202e}'), "{id}: {decoded}");
    }
    let listed = answers[&2]["result"]["resources"].as_array().unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert!(!uris.contains(&"ctx:///CLAUDE.md") && !uris.contains(&"ctx:///AGENTS.md"), "{uris:?}");
    assert!(uris.contains(&"ctx:///GEMINI.md"), "{uris:?}");
    assert_eq!(answers[&3]["error"]["code"], -32002);
    assert_eq!(answers[&4]["error"]["code"], -32002);
    assert!(!answers[&4].to_string().contains("TOP SECRET"));
    let text = answers[&5]["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("\\u{202E}"), "{text}");
    assert_eq!(answers[&6]["result"]["isError"], true);
}

/// `max_tokens` on `expand` and `assemble`: the call's budget, said in the text when it cuts,
/// never past the budget the server was started with; a budget that is not a whole number is
/// a bad argument.
#[test]
fn a_call_asks_for_a_budget_within_the_servers() {
    let dir = workspace();
    let long: String = (1..=400).map(|i| format!("line {i} of a long file\n")).collect();
    std::fs::write(dir.path().join("long.txt"), long).unwrap();
    std::fs::write(dir.path().join("doc.md"), "# Doc\n@[long.txt]\n").unwrap();
    let prompt = "see @long.txt";
    let calls = [
        tool(1, "expand", json!({ "prompt": prompt, "max_tokens": 80 })),
        tool(2, "assemble", json!({ "path": "doc.md", "max_tokens": 80 })),
        tool(3, "expand", json!({ "prompt": prompt, "max_tokens": "many" })),
        tool(4, "expand", json!({ "prompt": prompt, "max_tokens": 0 })),
        // Hostile budgets: negative, fractional, past any integer, nested.
        tool(6, "expand", json!({ "prompt": prompt, "max_tokens": -1 })),
        tool(7, "expand", json!({ "prompt": prompt, "max_tokens": 1.5 })),
        tool(8, "expand", json!({ "prompt": prompt, "max_tokens": 1e300 })),
        tool(9, "assemble", json!({ "path": "doc.md", "max_tokens": { "n": 1 } })),
        tool(10, "expand", json!({ "prompt": prompt, "max_tokens": u64::MAX })),
    ];
    let answers = session(&dir, &calls);
    for id in [1, 2] {
        let text = answers[&id]["result"]["content"][0]["text"].as_str().unwrap();
        let added = text.strip_prefix(prompt).or(text.strip_prefix("# Doc\n")).unwrap();
        assert!(ctx::tokens::count(added) <= 80, "{id}: {text}");
        assert!(text.contains("token budget of 80 (o200k)"), "{id}: {text}");
        // The agent is told to raise what it can raise: its own argument.
        assert!(text.contains("raise max_tokens"), "{id}: {text}");
        assert!(!text.contains("--max-tokens"), "{id}: {text}");
    }
    for id in [3, 6, 7, 8, 9] {
        assert_eq!(answers[&id]["result"]["isError"], true, "{}", answers[&id]);
    }
    // The largest budget there is cuts nothing.
    let all = answers[&10]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(all.contains("line 400 of a long file"), "{all}");
    let whole = answers[&4]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(whole.contains("line 400 of a long file"), "{whole}");
    // A server started with a budget of 40 keeps it against a call that asks for more.
    let limits = ctx::Limits { max_tokens: 40, ..ctx::Limits::default() };
    let ctx = ctx::Context::builder().root(dir.path()).limits(limits).build().unwrap();
    let call = tool(5, "expand", json!({ "prompt": prompt, "max_tokens": 500 }));
    let input: String =
        [initialize("2025-06-18"), initialized(), call].iter().map(|m| format!("{m}\n")).collect();
    let mut out = Vec::new();
    ctx_mcp::run(&ctx, input.as_bytes(), &mut out).unwrap();
    let answer: Value = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|a| a["id"] == 5)
        .unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("token budget of 40 (o200k)"), "{text}");
    // That budget is the server's, which the call cannot raise.
    assert!(text.contains("raise --max-tokens"), "{text}");
}

/// The attack: a client that cancels its requests (an agent interrupted by its user), then
/// closes its input. What must not happen: the server waiting forever for answers it will
/// never send; it ends once the calls under way are answered or cancelled.
#[test]
fn a_cancelled_request_does_not_keep_the_server_at_the_end_of_its_input() {
    let dir = workspace();
    let cancel = |id: u64| json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id } });
    let messages = [
        request(1, "ping", json!({})),
        cancel(1),
        tool(2, "assemble", json!({ "path": ".ctx/rules/main.md" })),
        cancel(2),
        // A cancel of an id never sent, and of one already answered, change nothing.
        cancel(99),
        request(3, "ping", json!({})),
        cancel(3),
    ];
    let (done, finished) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let answers = session(&dir, &messages);
        let _ = done.send(());
        answers
    });
    // Well within the five seconds a call under way may take at the end of the input.
    finished
        .recv_timeout(std::time::Duration::from_secs(4))
        .expect("the server did not end after its input did");
    let answers = handle.join().unwrap();
    assert!(answers.contains_key(&0), "{answers:?}");
}
