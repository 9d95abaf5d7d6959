//! Scripted sessions against the real binary: `ctx mcp` (newline-delimited JSON-RPC) and
//! `ctx lsp` (LSP base protocol framing), each fed a whole script on standard input.
#![cfg_attr(not(all(feature = "lsp", feature = "mcp")), allow(dead_code, unused_imports))]

use assert_cmd::Command;
use assert_fs::TempDir;
use assert_fs::prelude::*;
use serde_json::{Value, json};

fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    dir.child(".ctx/rules/main.md")
        .write_str("Style: @[style.md]\n@{ifdef LANG}Lang @{LANG}\n@{endif}")
        .unwrap();
    dir.child(".ctx/rules/style.md").write_str("four spaces\n").unwrap();
    dir.child(".ctx/rules/broken.md").write_str("see @[missing.md]\n").unwrap();
    dir
}

fn ctx(dir: &TempDir) -> Command {
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(dir.path()).env("NO_COLOR", "1").env_remove("RUST_LOG");
    cmd
}

#[cfg(feature = "mcp")]
#[test]
fn mcp_session() {
    let dir = workspace();
    let script = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "script", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "assemble", "arguments": { "path": ".ctx/rules/main.md", "defines": { "LANG": "rust" } } } }),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "expand", "arguments": { "prompt": "see @.ctx/rules/style.md" } } }),
        json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": { "name": "check", "arguments": { "paths": [".ctx/rules/broken.md"] } } }),
        json!({ "jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": { "name": "refs", "arguments": { "path": ".ctx/rules/main.md" } } }),
        json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": "assemble", "arguments": { "path": "/etc/passwd" } } }),
        json!({ "jsonrpc": "2.0", "id": 8, "method": "resources/list" }),
    ];
    let responses = crate::util::mcp_answers(&mut ctx(&dir), &script);
    assert_eq!(responses.len(), 8, "the notification gets no answer");
    assert_eq!(responses[0]["result"]["protocolVersion"], "2025-06-18");
    let tools: Vec<&str> = responses[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        ["assemble", "expand", "check", "resolve", "sources", "suggest", "rules", "refs"]
    );
    assert_eq!(responses[2]["result"]["content"][0]["text"], "Style: four spaces\n\nLang rust\n");
    assert!(responses[3]["result"]["content"][0]["text"].as_str().unwrap().contains("four spaces"));
    assert_eq!(
        responses[4]["result"]["structuredContent"]["diagnostics"][0]["code"],
        "E_NOT_FOUND"
    );
    assert_eq!(
        responses[5]["result"]["structuredContent"]["references"][0]["path"],
        ".ctx/rules/style.md"
    );
    assert_eq!(responses[6]["result"]["isError"], true);
    let refused = responses[6]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(refused.starts_with("E_OUTSIDE") && !refused.contains("root:"), "{refused}");
    assert_eq!(responses[7]["result"]["resources"].as_array().unwrap().len(), 3);
}

/// The MCP server keeps the token counts of what its tools expanded under a budget in the
/// cache folder, as the command line does, so that the next server or run takes them
/// instead of counting.
#[cfg(feature = "mcp")]
#[test]
fn mcp_keeps_the_counts_it_took() {
    let dir = workspace();
    let long: String = (0..80).map(|i| format!("rule {i}: keep the lines short\n")).collect();
    dir.child("long.md").write_str(&long).unwrap();
    let cache = TempDir::new().unwrap();
    let script = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "script", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "expand", "arguments": { "prompt": "see @long.md" } } }),
    ];
    // A budget asked for counts what is written (the default guard counts only past its
    // bytes).
    let mut cmd = ctx(&dir);
    cmd.env("CTX_CACHE_DIR", cache.path()).args(["--max-tokens", "100000"]);
    let responses = crate::util::mcp_answers(&mut cmd, &script);
    let text = responses[1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("rule 79"), "{text}");
    let table = std::fs::read(cache.path().join("token-counts")).expect("the counts were kept");
    assert!(table.starts_with(b"CTXTOKN"), "{table:?}");
}

/// Frames a message as the LSP base protocol does.
fn frame(message: &Value) -> String {
    let body = message.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// Splits framed output into messages.
fn unframe(mut out: &str) -> Vec<Value> {
    let mut messages = Vec::new();
    while let Some((header, rest)) = out.split_once("\r\n\r\n") {
        let length: usize = header
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap();
        messages.push(serde_json::from_str(&rest[..length]).unwrap());
        out = &rest[length..];
    }
    messages
}

#[cfg(feature = "lsp")]
#[test]
fn lsp_session() {
    let dir = workspace();
    let path = dir.path().canonicalize().unwrap().join(".ctx/rules/main.md");
    let uri = format!("file://{}", path.display());
    let script = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
        // Early, before `initialized`: served all the same.
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": uri, "languageId": "markdown", "version": 1, "text": "@[nope.md]\n@[st" } } }),
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "textDocument/completion", "params": { "textDocument": { "uri": uri }, "position": { "line": 1, "character": 4 } } }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": { "textDocument": { "uri": uri }, "position": { "line": 0, "character": 3 } } }),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "shutdown" }),
        json!({ "jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": { "textDocument": { "uri": uri }, "position": { "line": 0, "character": 3 } } }),
        json!({ "jsonrpc": "2.0", "method": "exit" }),
    ];
    let input: String = script.iter().map(frame).collect();
    let out = ctx(&dir).arg("lsp").write_stdin(input).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let messages = unframe(&String::from_utf8(out.stdout).unwrap());
    let by_id = |id: i64| messages.iter().find(|m| m["id"] == id).unwrap();
    assert!(by_id(1)["result"]["capabilities"]["completionProvider"].is_object());
    let diagnostics = messages
        .iter()
        .find(|m| m["method"] == "textDocument/publishDiagnostics")
        .expect("diagnostics on open");
    assert_eq!(diagnostics["params"]["diagnostics"][0]["code"], "E_NOT_FOUND");
    assert_eq!(by_id(2)["result"]["items"][0]["label"], "style.md");
    assert_eq!(by_id(3)["result"], Value::Null, "no hover on a missing file");
    assert_eq!(by_id(4)["result"], Value::Null);
    assert_eq!(by_id(5)["error"]["code"], -32600, "a request after shutdown");
}

/// The language server keeps the token counts it took for the next session, when the
/// client shuts it down and when the client goes away without a word.
#[cfg(feature = "lsp")]
#[test]
fn lsp_keeps_the_counts_it_took() {
    let dir = workspace();
    let long: String = (0..80).map(|i| format!("// rule {i}: keep the lines short\n")).collect();
    dir.child("long.rs").write_str(&long).unwrap();
    let path = dir.path().canonicalize().unwrap().join("main.md");
    let uri = format!("file://{}", path.display());
    let open = json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": uri, "languageId": "markdown", "version": 1, "text": "---\ntitle: t\n---\n@[long.rs]\n" } } });
    let lens = json!({ "jsonrpc": "2.0", "id": 2, "method": "textDocument/codeLens", "params": { "textDocument": { "uri": uri } } });
    let start = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
        open,
        lens,
    ];
    let shutdown = [
        json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }),
        json!({ "jsonrpc": "2.0", "method": "exit" }),
    ];
    for (ending, code) in [(&shutdown[..], 0), (&[][..], 1)] {
        let cache = TempDir::new().unwrap();
        let input: String = start.iter().chain(ending).map(frame).collect();
        let mut cmd = ctx(&dir);
        // A budget below the file's bytes has its tokens counted (through the kept counts).
        cmd.env("CTX_CACHE_DIR", cache.path()).args(["--max-tokens", "2000", "lsp"]);
        let out = cmd.write_stdin(input).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{}", String::from_utf8_lossy(&out.stderr));
        let messages = unframe(&String::from_utf8(out.stdout).unwrap());
        let title =
            messages.iter().find(|m| m["id"] == 2).unwrap()["result"][0]["command"]["title"]
                .as_str()
                .unwrap()
                .to_owned();
        assert!(title.contains("tokens"), "{title}");
        let table = std::fs::read(cache.path().join("token-counts")).expect("the counts were kept");
        assert!(table.starts_with(b"CTXTOKN"), "{table:?}");
    }
}

#[cfg(feature = "lsp")]
#[test]
fn lsp_exit_without_shutdown() {
    let dir = workspace();
    let script = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {} }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "initialize", "params": { "capabilities": {} } }),
        json!({ "jsonrpc": "2.0", "method": "exit" }),
    ];
    let input: String = script.iter().map(frame).collect();
    let out = ctx(&dir).arg("lsp").write_stdin(input).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let messages = unframe(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(messages[0]["error"]["code"], -32002);
    assert!(messages[1]["result"]["capabilities"].is_object());
}

#[cfg(feature = "lsp")]
#[test]
fn lsp_refuses_a_message_past_its_cap() {
    let dir = workspace();
    // Past the default cap (which panicked lsp-server's reader) and past the option's: an
    // error answer with a null id, the reason on standard error, exit status 2.
    let cases =
        [(&["lsp"][..], "18446744073709551615"), (&["lsp", "--max-message-bytes", "10"], "11")];
    for (args, length) in cases {
        let input = format!("Content-Length: {length}\r\n\r\n{{}}");
        let out = ctx(&dir).args(args).write_stdin(input).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&format!("a message of {length} bytes")), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let messages = unframe(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(
            (messages[0]["id"].clone(), messages[0]["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
    }
}

#[cfg(feature = "lsp")]
#[test]
fn lsp_answers_a_lone_surrogate_and_lives() {
    let dir = workspace();
    let path = dir.path().canonicalize().unwrap().join(".ctx/rules/main.md");
    let uri = format!("file://{}", path.display());
    let lone = r#"{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"\ud83d"},"position":{"line":0,"character":0}}}"#;
    let input = [
        frame(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } })),
        format!("Content-Length: {}\r\n\r\n{lone}", lone.len()),
        frame(&json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": uri, "languageId": "markdown", "version": 1, "text": "@[style.md]" } } })),
        frame(&json!({ "jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": { "textDocument": { "uri": uri }, "position": { "line": 0, "character": 3 } } })),
        frame(&json!({ "jsonrpc": "2.0", "id": 4, "method": "shutdown" })),
        frame(&json!({ "jsonrpc": "2.0", "method": "exit" })),
    ]
    .concat();
    let out = ctx(&dir).arg("lsp").write_stdin(input).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let messages = unframe(&String::from_utf8(out.stdout).unwrap());
    let by_id = |id: i64| messages.iter().find(|m| m["id"] == id).unwrap();
    assert_eq!(by_id(2)["error"]["code"], -32700);
    assert!(by_id(3)["result"]["contents"]["value"].as_str().unwrap().contains("four spaces"));
}
