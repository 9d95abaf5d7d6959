//! Attacks on the server by a hostile client or a hostile document, each followed by what
//! must not happen: a panic, an abort, a buffer allocated ahead of the bytes, a hang, hidden
//! text reaching the editor, or diagnostics multiplying a document's size.
//!
//! The framing cases drive the real transport (`ctx_lsp::run_io`, what `ctx lsp` runs on
//! standard input and output) through in-process pipes; the others drive the server through
//! an in-memory connection.

use std::io::{BufRead, BufReader, PipeWriter, Write};
use std::path::Path;
use std::sync::mpsc;
use std::thread;

use serde_json::{Value, json};

use crate::client::{Client, HANG, at, uri};

/// A client on the byte streams of the real transport.
struct Wire {
    input: Option<PipeWriter>,
    output: mpsc::Receiver<Value>,
    server: thread::JoinHandle<Result<ctx_lsp::Ending, ctx_lsp::Error>>,
    /// Notifications received while waiting for responses.
    notes: Vec<Value>,
}

impl Wire {
    fn start(root: &Path, config: ctx_lsp::Config) -> Wire {
        let (server_in, input) = std::io::pipe().unwrap();
        let (output_reader, server_out) = std::io::pipe().unwrap();
        let builder = ctx::Context::builder().root(root);
        let server =
            thread::spawn(move || ctx_lsp::run_io(server_in, server_out, builder, &config));
        let (sender, output) = mpsc::channel();
        thread::spawn(move || unframe(BufReader::new(output_reader), &sender));
        Wire { input: Some(input), output, server, notes: Vec::new() }
    }

    /// Sends bytes as they are; a server that stopped reading is not an error here.
    fn raw(&mut self, bytes: &[u8]) {
        let _ = self.input.as_mut().unwrap().write_all(bytes);
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        self.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn next(&mut self) -> Value {
        self.output.recv_timeout(HANG).expect("a message from the server")
    }

    /// The response with `id`, keeping the notifications that come before it.
    fn response(&mut self, id: &Value) -> Value {
        loop {
            let message = self.next();
            if message.get("method").is_some() && message.get("id").is_none() {
                self.notes.push(message);
            } else if &message["id"] == id {
                return message;
            }
        }
    }

    fn request(&mut self, id: i32, method: &str, params: Value) -> Value {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.response(&json!(id))
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    fn initialize(&mut self) {
        let init = self.request(0, "initialize", json!({ "capabilities": {} }));
        assert!(init["result"]["capabilities"].is_object(), "{init}");
        self.notify("initialized", json!({}));
    }

    /// The next diagnostics of `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let matches = |n: &Value| {
            n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri
        };
        loop {
            if let Some(i) = self.notes.iter().position(matches) {
                return self.notes.remove(i)["params"]["diagnostics"].as_array().unwrap().clone();
            }
            let message = self.next();
            self.notes.push(message);
        }
    }

    /// Closes the input and waits for the server to stop.
    fn finish(mut self) -> Result<ctx_lsp::Ending, ctx_lsp::Error> {
        drop(self.input.take());
        let (done, finished) = mpsc::channel();
        thread::spawn(move || done.send(self.server.join()));
        let joined = finished.recv_timeout(HANG).expect("the server stops");
        joined.expect("no panic")
    }
}

/// Reads the server's framed output into messages.
fn unframe(mut output: impl BufRead, messages: &mpsc::Sender<Value>) {
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            if output.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length.expect("a Content-Length")];
        output.read_exact(&mut body).unwrap();
        if messages.send(serde_json::from_slice(&body).expect("JSON from the server")).is_err() {
            return;
        }
    }
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("rules")).unwrap();
    std::fs::write(dir.path().join("rules/style.md"), "# Style\n\nUse four spaces.\n").unwrap();
    std::fs::write(dir.path().join("rules/main.md"), "on disk\n").unwrap();
    dir
}

fn open(uri: &str, version: i32, text: &str) -> Value {
    json!({ "textDocument": { "uri": uri, "languageId": "markdown", "version": version, "text": text } })
}

/// The error a framing attack gets: its code and message, then how the server ended.
fn framing_attack(input: &[u8], config: ctx_lsp::Config) -> (i64, String, String) {
    let dir = workspace();
    let mut wire = Wire::start(dir.path(), config);
    wire.raw(input);
    // The client goes away: a body that never came whole is read to the end of the input.
    drop(wire.input.take());
    let answer = wire.next();
    assert_eq!(answer["id"], Value::Null, "{answer}");
    let code = answer["error"]["code"].as_i64().unwrap();
    let message = answer["error"]["message"].as_str().unwrap().to_owned();
    let err = wire.finish().expect_err("a frame that cannot be read ends the session");
    assert!(matches!(err.kind(), ctx_lsp::ErrorKind::Framing(_)), "{err}");
    (code, message, err.to_string())
}

#[test]
fn content_lengths_past_the_cap_are_refused_before_the_body() {
    for length in
        ["18446744073709551615", "100000000000000", "99999999999999999999999999", "67108865"]
    {
        let input = format!("Content-Length: {length}\r\n\r\n{{\"jsonrpc\":");
        let (code, message, err) = framing_attack(input.as_bytes(), ctx_lsp::Config::default());
        assert_eq!(code, -32600);
        assert_eq!(
            message,
            format!(
                "a message of {length} bytes, more than the 67108864 bytes the server reads (--max-message-bytes)"
            )
        );
        assert!(err.starts_with("the language server stopped: the client sent a message it cannot read: a message of"), "{err}");
    }
    // A lower cap from the configuration.
    let config = ctx_lsp::Config { max_message_bytes: 10, ..ctx_lsp::Config::default() };
    let (code, message, _) = framing_attack(b"Content-Length: 11\r\n\r\n{}", config);
    assert_eq!((code, message.contains("more than the 10 bytes")), (-32600, true));
}

#[test]
fn without_a_cap_a_huge_length_costs_only_the_bytes_that_come() {
    // 100 TB announced, ten bytes sent: were they allocated ahead, the process would abort.
    let config = ctx_lsp::Config { max_message_bytes: u64::MAX, ..ctx_lsp::Config::default() };
    let (code, message, _) =
        framing_attack(b"Content-Length: 100000000000000\r\n\r\n0123456789", config);
    assert_eq!(code, -32700);
    assert_eq!(message, "the input ended inside a message: 10 of 100000000000000 bytes came");
}

#[test]
fn lengths_missing_or_not_numbers() {
    let cases: &[(&str, &str)] = &[
        (
            "Content-Type: application/vscode-jsonrpc\r\n\r\n{}",
            "a message without a Content-Length header",
        ),
        ("\r\n{}", "a message without a Content-Length header"),
        ("Content-Length: twelve\r\n\r\n{}", "the Content-Length \"twelve\" is not a number"),
        ("Content-Length: -1\r\n\r\n{}", "the Content-Length \"-1\" is not a number"),
        ("Content-Length: 0x10\r\n\r\n{}", "the Content-Length \"0x10\" is not a number"),
        (
            "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            "a message with two Content-Length headers",
        ),
        (
            "Content-Length: 2\n\n{}",
            "malformed header \"Content-Length: 2\\n\": expected `Name: value` in ASCII, ended by CRLF",
        ),
    ];
    for (input, expected) in cases {
        let (code, message, _) = framing_attack(input.as_bytes(), ctx_lsp::Config::default());
        assert_eq!((code, message.as_str()), (-32700, *expected), "{input:?}");
    }
}

#[test]
fn header_floods() {
    let many = "X-Pad: 1\r\n".repeat(100_000);
    let (_, message, _) = framing_attack(many.as_bytes(), ctx_lsp::Config::default());
    assert_eq!(message, "more than 32 header lines");
    // One endless line: refused after 1 KiB, not kept whole.
    let long = format!("Content-Length: 2\r\nX-Pad: {}", "a".repeat(4 << 20));
    let (_, message, _) = framing_attack(long.as_bytes(), ctx_lsp::Config::default());
    assert_eq!(message, "a header line is longer than 1024 bytes");
}

#[test]
fn a_truncated_body_ends_the_session_cleanly() {
    let (code, message, err) = framing_attack(
        b"Content-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\"",
        ctx_lsp::Config::default(),
    );
    assert_eq!(
        (code, message.as_str()),
        (-32700, "the input ended inside a message: 16 of 100 bytes came")
    );
    assert!(err.ends_with("the input ended inside a message: 16 of 100 bytes came"), "{err}");
}

#[test]
fn bodies_that_are_not_json_get_a_parse_error_and_the_server_lives() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let mut wire = Wire::start(dir.path(), ctx_lsp::Config::default());
    wire.initialize();
    wire.notify("textDocument/didOpen", open(&main, 1, "@[style.md]\n"));
    // Not JSON, the id before the error: answered with it.
    let body = br#"{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"#;
    wire.raw(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    wire.raw(body);
    let answer = wire.response(&json!(5));
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // A lone surrogate, then a valid request that must be answered.
    let lone = r#"{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"\ud83d"},"position":{"line":0,"character":0}}}"#;
    wire.raw(format!("Content-Length: {}\r\n\r\n{lone}", lone.len()).as_bytes());
    let answer = wire.response(&json!(6));
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().starts_with("parse error: "), "{answer}");
    let hover = wire.request(7, "textDocument/hover", at(&main, 0, 3));
    assert!(
        hover["result"]["contents"]["value"].as_str().unwrap().contains("Use four spaces."),
        "{hover}"
    );
    // Invalid UTF-8, no id at all: answered with a null id.
    wire.raw(b"Content-Length: 3\r\n\r\n\"\xff\"");
    let answer = wire.response(&Value::Null);
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // Valid JSON that is not a message, and an id lsp-server cannot keep.
    wire.send(&json!([{ "jsonrpc": "2.0", "id": 8, "method": "shutdown" }]));
    assert_eq!(wire.response(&Value::Null)["error"]["code"], -32600);
    wire.send(&json!({ "jsonrpc": "2.0", "id": 1_u64 << 40, "method": "shutdown" }));
    assert_eq!(wire.response(&json!(1_u64 << 40))["error"]["code"], -32600);
    // Still serving: a clean shutdown.
    assert_eq!(wire.request(9, "shutdown", Value::Null)["result"], Value::Null);
    wire.notify("exit", Value::Null);
    assert_eq!(wire.finish().unwrap(), ctx_lsp::Ending::Shutdown);
}

#[test]
fn a_message_that_decodes_to_too_much_is_refused() {
    let dir = workspace();
    let mut wire = Wire::start(dir.path(), ctx_lsp::Config::default());
    wire.initialize();
    // Two bytes a value on the wire, a hundred in memory: refused, the server lives.
    let zeros = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"textDocument/hover\",\"params\":[{}0]}}",
        "0,".repeat(1 << 20)
    );
    wire.raw(format!("Content-Length: {}\r\n\r\n{zeros}", zeros.len()).as_bytes());
    let answer = wire.response(&json!(3));
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("too large once decoded"));
    assert_eq!(wire.request(4, "shutdown", Value::Null)["result"], Value::Null);
    wire.notify("exit", Value::Null);
    assert_eq!(wire.finish().unwrap(), ctx_lsp::Ending::Shutdown);
}

#[test]
fn documents_past_the_cap_are_not_kept() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let mut wire = Wire::start(dir.path(), ctx_lsp::Config::default());
    wire.initialize();
    // Two megabytes of lines through the wire: the decoder never copies the text, not even
    // unescaped.
    let big = "@[style.md]\n".repeat(200_000);
    wire.notify("textDocument/didOpen", open(&main, 1, &big));
    let diagnostics = wire.diagnostics(&main);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "E_TOO_LARGE");
    assert_eq!(diagnostics[0]["severity"], 1);
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert_eq!(
        message,
        "the document is too large to check: 2400000 bytes, more than 1048576 (--max-file-bytes raises the limit)"
    );
    // Nothing is served from it; the command refuses to assemble it.
    assert_eq!(wire.request(2, "textDocument/hover", at(&main, 0, 3))["result"], Value::Null);
    let command = json!({ "command": ctx_lsp::ASSEMBLE_COMMAND, "arguments": [main] });
    let refused = wire.request(3, "workspace/executeCommand", command);
    assert_eq!(refused["error"]["code"], -32803, "{refused}");
    // An edit cannot apply to a text it does not have; the whole text, once it fits, can.
    wire.notify("textDocument/didChange", json!({ "textDocument": { "uri": main, "version": 2 }, "contentChanges": [{ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "x" }] }));
    assert_eq!(wire.diagnostics(&main)[0]["code"], "E_TOO_LARGE");
    wire.notify("textDocument/didChange", json!({ "textDocument": { "uri": main, "version": 3 }, "contentChanges": [{ "text": "@[nothere.md]" }] }));
    assert_eq!(wire.diagnostics(&main)[0]["code"], "E_NOT_FOUND");
    // Growing past the cap by an edit.
    let edit = json!({ "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "text": "y".repeat(1 << 20) });
    wire.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": main, "version": 4 }, "contentChanges": [edit] }),
    );
    assert_eq!(wire.diagnostics(&main)[0]["code"], "E_TOO_LARGE");
    assert_eq!(wire.request(5, "shutdown", Value::Null)["result"], Value::Null);
    wire.notify("exit", Value::Null);
    assert_eq!(wire.finish().unwrap(), ctx_lsp::Ending::Shutdown);
}

fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({ "start": { "line": start.0, "character": start.1 }, "end": { "line": end.0, "character": end.1 } })
}

#[test]
fn notifications_kept_before_initialize_are_bounded() {
    let dir = workspace();
    let mut client = Client::connect(dir.path());
    for n in 0..1000 {
        let uri =
            uri(&dir.path().join("rules/style.md")).replace("style.md", &format!("early-{n}.md"));
        client.notify("textDocument/didOpen", open(&uri, 1, "x"));
    }
    client.request("initialize", json!({ "capabilities": {} }));
    client.request("shutdown", Value::Null);
    let opened: std::collections::BTreeSet<String> = client
        .notes
        .iter()
        .filter(|n| n.method == "textDocument/publishDiagnostics")
        .map(|n| n.params["uri"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(opened.len(), 32);
    client.notify("exit", Value::Null);
    assert_eq!(client.join(), ctx_lsp::Ending::Shutdown);
}

#[test]
fn hostile_change_ranges_do_not_panic() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let mut client = Client::start_with(ctx::Context::builder().root(dir.path()));
    client.notify("textDocument/didOpen", open(&main, 1, "😀 @[style.md]\nsecond\n"));
    client.diagnostics(&main, 1);
    let changes = json!([
        // Past the end of the line, of the text, and as far as u32 goes.
        { "range": range((0, 500), (0, 900)), "text": "A" },
        { "range": range((40, 0), (u32::MAX, u32::MAX)), "text": "B" },
        // Reversed.
        { "range": range((1, 3), (0, 2)), "text": "C" },
        // Inside the pair of UTF-16 units of the emoji, at either end.
        { "range": range((0, 1), (0, 1)), "text": "D" },
        { "range": range((0, 1), (0, 3)), "text": "" },
        { "range": range((0, 0), (0, 1)), "text": "" },
    ]);
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": main, "version": 2 }, "contentChanges": changes }),
    );
    // The server lives and answers about the text it made of them.
    assert_eq!(client.diagnostics(&main, 2), Vec::<Value>::new());
    let assembled = client.request(
        "workspace/executeCommand",
        json!({ "command": ctx_lsp::ASSEMBLE_COMMAND, "arguments": [main] }),
    );
    let assembled = assembled.as_str().unwrap();
    assert!(
        assembled.starts_with(" # Style\n") && assembled.ends_with("A\nsecCond\nB"),
        "{assembled:?}"
    );
    client.request("textDocument/hover", at(&main, u32::MAX, u32::MAX));
    client.request("textDocument/completion", at(&main, 0, 1));
    client.shutdown();
}

#[test]
fn documents_past_the_sandbox_cap_are_not_kept() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let builder = ctx::Context::builder().root(dir.path()).max_file_bytes(100);
    let mut client = Client::start_with(builder);
    client.notify("textDocument/didOpen", open(&main, 1, &"x".repeat(101)));
    let diagnostics = client.diagnostics(&main, 1);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(
        diagnostics[0]["message"],
        "the document is too large to check: 101 bytes, more than 100 (--max-file-bytes raises the limit)"
    );
    client.notify("textDocument/didOpen", open(&main, 2, &"x".repeat(100)));
    assert_eq!(client.diagnostics(&main, 2), Vec::<Value>::new());
    client.shutdown();
}

#[test]
fn hidden_text_in_files_reaches_the_editor_visible() {
    let dir = workspace();
    let hidden = "# Ti\u{202E}tle\n\nvisible\u{E0049}\u{E0047}\u{E004E} text \u{1b}[31mred\u{7}\n// ANCHOR: na\u{2066}me\n";
    std::fs::write(dir.path().join("rules/hidden.md"), hidden).unwrap();
    let main = uri(&dir.path().join("rules/main.md"));
    let mut client = Client::start_with(ctx::Context::builder().root(dir.path()));
    client
        .notify("textDocument/didOpen", open(&main, 1, "@[hidden.md]\n@[hidden.md#\n@[hidden.md:"));
    let hover = client.request("textDocument/hover", at(&main, 0, 3));
    let value = hover["contents"]["value"].as_str().unwrap();
    for raw in ['\u{202E}', '\u{E0049}', '\u{1b}', '\u{7}', '\u{2066}'] {
        assert!(!value.contains(raw), "{raw:?} in {value:?}");
    }
    assert!(
        value.contains("Ti\\u{202E}tle")
            && value.contains("visible\\u{E0049}\\u{E0047}\\u{E004E} text \\u{1b}[31mred\\u{7}"),
        "{value}"
    );
    // Heading slugs and anchors are labels taken from the file.
    let mut labels = Vec::new();
    for line in [1, 2] {
        let items = client.request("textDocument/completion", at(&main, line, 12));
        for item in items["items"].as_array().unwrap() {
            labels.push(item["label"].as_str().unwrap().to_owned());
            let insert = item["textEdit"]["newText"].as_str().unwrap();
            assert!(
                !insert.chars().any(|c| c.is_control()
                    || ('\u{2066}'..='\u{2069}').contains(&c)
                    || ('\u{202A}'..='\u{202E}').contains(&c)),
                "{insert:?}"
            );
        }
    }
    assert!(labels.iter().any(|l| l.contains("\\u{2066}")), "{labels:?}");
    for label in &labels {
        assert!(!label.contains(['\u{202E}', '\u{2066}']), "{label:?}");
    }
    client.shutdown();
}

#[test]
fn a_long_line_of_failing_mentions() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let mut client = Client::start_with(ctx::Context::builder().root(dir.path()));
    // About 87 000 failing mentions on one line of just under a megabyte.
    let line = "@nothere.md ".repeat((1 << 20) / 12);
    let mentions = line.matches('@').count();
    client.notify("textDocument/didOpen", open(&main, 1, &line));
    let diagnostics = client.diagnostics(&main, 1);
    // A thousand, then one that says how many more there were.
    assert_eq!(diagnostics.len(), 1001);
    assert!(diagnostics[..1000].iter().all(|d| d["code"] != "W_LIMIT"));
    let last = &diagnostics[1000];
    assert_eq!(last["code"], "W_LIMIT");
    let more: usize = last["message"].as_str().unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(more > 0 && more < mentions, "{last}");
    // The run's budget error is among those left out, and said so.
    assert_eq!(last["message"], format!("{more} more diagnostics not shown (1 error)"));
    // The last shown and the note lie on the line, in order.
    let character = |d: &Value| d["range"]["start"]["character"].as_u64().unwrap();
    assert!(character(&diagnostics[999]) < character(last));
    // The next request is answered; an edit is checked again, with the same bound.
    let hover = client.request("textDocument/hover", at(&main, 0, 3));
    assert_eq!(hover, Value::Null);
    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": main, "version": 2 }, "contentChanges": [{ "range": range((0, 0), (0, 0)), "text": "x" }] }));
    assert_eq!(client.diagnostics(&main, 2).len(), 1001);
    client.shutdown();
}

/// The attacks on an agent's rule file opened in the editor: a `CLAUDE.md` linked to a file
/// outside the workspace, an `AGENTS.md` whose imports leave it and whose text hides
/// characters, a brace bomb in a glob. What must not happen: the secret, or a hidden
/// character raw, in any diagnostic; a hang; a panic (the session ends cleanly).
#[cfg(unix)]
#[test]
fn agents_rule_files_leak_nothing() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "OUTSIDE SECRET\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("CLAUDE.md"))
        .unwrap();
    let agents = format!(
        "@{} @../secret.md\nrun \u{202e}evil\u{1b}[2J\n",
        outside.path().join("secret.md").display()
    );
    std::fs::write(dir.path().join("AGENTS.md"), &agents).unwrap();
    std::fs::write(dir.path().join("GEMINI.md"), "@../secret.md\n").unwrap();
    let bomb = format!("---\nglobs: \"{}\"\n---\nx\n", "{a,b}".repeat(40));
    std::fs::create_dir_all(dir.path().join(".cursor/rules")).unwrap();
    std::fs::write(dir.path().join(".cursor/rules/bomb.mdc"), &bomb).unwrap();
    let mut client = Client::start(dir.path());
    for (name, text) in [
        ("CLAUDE.md", "whatever\n"),
        ("AGENTS.md", agents.as_str()),
        ("GEMINI.md", "@../secret.md\n"),
        (".cursor/rules/bomb.mdc", bomb.as_str()),
    ] {
        let file = uri(&dir.path().join(name));
        client.notify("textDocument/didOpen", open(&file, 1, text));
        let diagnostics = client.diagnostics(&file, 1);
        let shown = format!("{:#}", Value::Array(diagnostics.clone()));
        assert!(!shown.contains("OUTSIDE SECRET"), "{name}: {shown}");
        assert!(!shown.contains(['\u{202e}', '\u{1b}']), "{name}: {shown}");
        if name == "AGENTS.md" {
            assert!(shown.contains("W_HIDDEN_TEXT") && shown.contains("codex: "), "{shown}");
        }
        if name == ".cursor/rules/bomb.mdc" {
            assert!(shown.contains("E_RULES_GLOB"), "{shown}");
        }
    }
    client.shutdown();
}
