//! An in-process MCP client: handshake, tools/list, every tool, resources and errors.

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

fn server(dir: &tempfile::TempDir) -> ctx_mcp::Server {
    ctx_mcp::Server::new(ctx::Context::builder().root(dir.path()).build().unwrap())
}

fn call(server: &ctx_mcp::Server, id: u64, method: &str, params: Value) -> Value {
    let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    let response = server.handle(&message).expect("a request gets a response");
    assert_eq!(response["id"], id);
    response
}

fn tool(server: &ctx_mcp::Server, name: &str, arguments: Value) -> Value {
    call(server, 9, "tools/call", json!({ "name": name, "arguments": arguments }))["result"].clone()
}

#[test]
fn handshake_and_tool_list() {
    let dir = workspace();
    let server = server(&dir);
    let init = call(
        &server,
        1,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } }),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "ctx");
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    assert_eq!(server.handle(&note), None);
    let tools = call(&server, 2, "tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["assemble", "expand", "check", "resolve", "sources", "suggest", "refs"]);
}

#[test]
fn assemble_with_defines() {
    let dir = workspace();
    let server = server(&dir);
    let result = tool(
        &server,
        "assemble",
        json!({ "path": ".ctx/rules/main.md", "defines": { "LANG": "rust" } }),
    );
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["text"], "Style: four spaces\nLang rust\n");
    let plain = tool(&server, "assemble", json!({ "path": ".ctx/rules/main.md" }));
    assert_eq!(plain["content"][0]["text"], "Style: four spaces\n\n");
    let json_format =
        tool(&server, "assemble", json!({ "path": ".ctx/rules/main.md", "format": "xml" }));
    assert!(json_format["content"][0]["text"].as_str().unwrap().contains("four spaces"));
}

#[test]
fn diagnostics_carry_codes() {
    let dir = workspace();
    let server = server(&dir);
    let result = tool(&server, "assemble", json!({ "path": ".ctx/rules/broken.md" }));
    assert_eq!(result["structuredContent"]["diagnostics"][0]["code"], "E_NOT_FOUND");
    let check =
        tool(&server, "check", json!({ "paths": [".ctx/rules/broken.md", ".ctx/rules/main.md"] }));
    assert_eq!(check["structuredContent"]["errors"], 1);
    assert_eq!(check["structuredContent"]["files"], 2);
}

#[test]
fn top_level_failures_are_tool_errors() {
    let dir = workspace();
    let server = server(&dir);
    let missing = tool(&server, "assemble", json!({ "path": "nope.md" }));
    assert_eq!(missing["isError"], true);
    assert!(missing["content"][0]["text"].as_str().unwrap().starts_with("E_NOT_FOUND"));
    let outside = tool(&server, "assemble", json!({ "path": "../../etc/passwd" }));
    assert_eq!(outside["isError"], true);
    let text = outside["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("E_OUTSIDE"), "{text}");
    let usage = tool(&server, "assemble", json!({}));
    assert_eq!(usage["isError"], true);
    let bad = call(&server, 3, "tools/call", json!({ "name": "nope" }));
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn expand_and_refs() {
    let dir = workspace();
    let server = server(&dir);
    let expanded = tool(&server, "expand", json!({ "prompt": "look at @.ctx/rules/style.md" }));
    let text = expanded["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("look at @.ctx/rules/style.md"), "{text}");
    assert!(text.contains("four spaces"), "{text}");
    let refs = tool(&server, "refs", json!({ "path": ".ctx/rules/main.md" }));
    let references = refs["structuredContent"]["references"].as_array().unwrap();
    assert_eq!(references.len(), 1);
    assert_eq!(references[0]["path"], ".ctx/rules/style.md");
}

#[test]
fn rule_files_are_resources() {
    let dir = workspace();
    let server = server(&dir);
    let list = call(&server, 4, "resources/list", json!({}));
    let mut uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        ["ctx:///.ctx/rules/broken.md", "ctx:///.ctx/rules/main.md", "ctx:///.ctx/rules/style.md"]
    );
    let read = call(&server, 5, "resources/read", json!({ "uri": "ctx:///.ctx/rules/style.md" }));
    assert_eq!(read["result"]["contents"][0]["text"], "four spaces\n");
    let escape = call(&server, 6, "resources/read", json!({ "uri": "ctx:///.ctx/rules/../../x" }));
    assert_eq!(escape["error"]["code"], -32002);
}

#[test]
fn bad_input_does_not_end_the_session() {
    let dir = workspace();
    let ctx = ctx::Context::builder().root(dir.path()).build().unwrap();
    let input = "not json\n[1]\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"nope\"}\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n";
    let mut out = Vec::new();
    ctx_mcp::run(&ctx, input.as_bytes(), &mut out).unwrap();
    let lines: Vec<Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["error"]["code"], -32700);
    assert_eq!(lines[2]["error"]["code"], -32601);
    assert_eq!(lines[3]["result"], json!({}));
}
