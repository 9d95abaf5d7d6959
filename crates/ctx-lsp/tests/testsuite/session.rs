//! An in-process client drives the server: initialize, didOpen, didChange, completion,
//! definition, hover, links, references, code lens, the assemble command, shutdown.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::{Client, at, uri};

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules");
    std::fs::create_dir_all(rules.join("common")).unwrap();
    std::fs::write(
        rules.join("common/style.md"),
        "# Style\n\nUse four spaces.\n\n## Naming rules\n\nsnake_case\n",
    )
    .unwrap();
    std::fs::write(
        rules.join("common/code.rs"),
        "// ANCHOR: main\nfn main() {}\n// ANCHOR_END: main\n",
    )
    .unwrap();
    std::fs::write(rules.join("main.md"), "on disk\n").unwrap();
    std::fs::create_dir_all(dir.path().join(".ctx/rules")).unwrap();
    std::fs::write(dir.path().join(".ctx/rules/other.md"), "See @[../../rules/common/style.md].\n")
        .unwrap();
    dir
}

fn labels(result: &Value) -> Vec<String> {
    result["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_session() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let mut client = Client::start(dir.path());

    // The unsaved text is checked, not the disk's.
    let text = "# Main\n😀 @[common/missing.md]\n";
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": text } }),
    );
    let diagnostics = client.diagnostics(&main, 1);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["code"], "E_NOT_FOUND");
    // After an astral character: UTF-16 column 3 (two units for the emoji, one space).
    assert_eq!(diagnostics[0]["range"]["start"], json!({ "line": 1, "character": 3 }));
    assert_eq!(diagnostics[0]["range"]["end"], json!({ "line": 1, "character": 23 }));

    // Fix it with an incremental edit: `missing` → `style`.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": main, "version": 2 },
            "contentChanges": [{ "range": { "start": { "line": 1, "character": 12 }, "end": { "line": 1, "character": 19 } }, "text": "style" }],
        }),
    );
    assert_eq!(client.diagnostics(&main, 2), Vec::<Value>::new());

    // Type a new include line, then complete it.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": main, "version": 3 },
            "contentChanges": [{ "range": { "start": { "line": 2, "character": 0 }, "end": { "line": 2, "character": 0 } }, "text": "@[common/st" }],
        }),
    );
    let result = client.request("textDocument/completion", at(&main, 2, 11));
    let first = &result["items"][0];
    assert_eq!(first["label"], "style.md");
    assert_eq!(first["textEdit"]["range"]["start"], json!({ "line": 2, "character": 9 }));
    // Then the ranked matches of `ctx complete`, replacing the whole typed path.
    let ranked =
        result["items"].as_array().unwrap().iter().find(|i| i["label"] == "rules/common/style.md");
    let ranked = ranked.expect("a ranked match");
    assert_eq!(ranked["textEdit"]["range"]["start"], json!({ "line": 2, "character": 2 }));
    let top = client.request("textDocument/completion", at(&main, 2, 2));
    let top = labels(&top);
    assert!(top.contains(&"common/".to_owned()) && top.contains(&"grep".to_owned()), "{top:?}");

    // Headings after `#`, anchors after `:`, directives after `@{`.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": main, "version": 4 },
            "contentChanges": [{ "text": "@[common/style.md#na\n@[common/code.rs:m\n@{define MINE}@{if\n" }],
        }),
    );
    let headings = client.request("textDocument/completion", at(&main, 0, 20));
    assert_eq!(labels(&headings)[0], "naming-rules");
    let anchors = client.request("textDocument/completion", at(&main, 1, 18));
    assert_eq!(labels(&anchors), ["main"]);
    let directives = labels(&client.request("textDocument/completion", at(&main, 2, 18)));
    assert!(directives.contains(&"ifdef".to_owned()) && directives.contains(&"MINE".to_owned()));
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": main, "version": 5 }, "contentChanges": [{ "text": "@[grep{\"pattern\": \"x\", \"" }] }),
    );
    let keys = labels(&client.request("textDocument/completion", at(&main, 0, 26)));
    assert_eq!(keys, ["pattern", "uri", "glob", "max"]);

    // Definition, hover and links on a reference with a selector.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": main, "version": 6 }, "contentChanges": [{ "text": "---\ndescription: x\n---\nA @[common/style.md:3:3] B\n" }] }),
    );
    let definition = client.request("textDocument/definition", at(&main, 3, 5));
    assert_eq!(definition["uri"], uri(&dir.path().join("rules/common/style.md")));
    assert_eq!(definition["range"]["start"], json!({ "line": 2, "character": 0 }));
    let hover = client.request("textDocument/hover", at(&main, 3, 5));
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(value.contains("Use four spaces.") && !value.contains("snake_case"), "{value}");
    let links =
        client.request("textDocument/documentLink", json!({ "textDocument": { "uri": main } }));
    assert_eq!(links.as_array().unwrap().len(), 1);

    // The references of style.md: this buffer and the rule folder's document.
    let refs = client.request("textDocument/references", json!({
        "textDocument": { "uri": main }, "position": { "line": 3, "character": 5 }, "context": { "includeDeclaration": true },
    }));
    assert_eq!(refs.as_array().unwrap().len(), 2, "{refs}");

    // A lens on front matter and the command it runs.
    let lenses =
        client.request("textDocument/codeLens", json!({ "textDocument": { "uri": main } }));
    let title = lenses[0]["command"]["title"].as_str().unwrap();
    assert!(title.ends_with("tokens (o200k) assembled"), "{title}");
    let assembled = client.request(
        "workspace/executeCommand",
        json!({ "command": ctx_lsp::ASSEMBLE_COMMAND, "arguments": [main] }),
    );
    assert_eq!(assembled, "A Use four spaces. B\n");

    client.shutdown();
}

#[test]
fn an_open_included_document_wins_over_the_disk() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let style = uri(&dir.path().join("rules/common/style.md"));
    let mut client = Client::start(dir.path());
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": style, "languageId": "markdown", "version": 1, "text": "unsaved style\n" } }));
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": "@[common/style.md]" } }));
    let assembled = client.request(
        "workspace/executeCommand",
        json!({ "command": ctx_lsp::ASSEMBLE_COMMAND, "arguments": [main] }),
    );
    assert_eq!(assembled, "unsaved style\n");
    client.notify("textDocument/didClose", json!({ "textDocument": { "uri": style } }));
    let assembled = client.request(
        "workspace/executeCommand",
        json!({ "command": ctx_lsp::ASSEMBLE_COMMAND, "arguments": [main] }),
    );
    assert!(assembled.as_str().unwrap().starts_with("# Style"), "{assembled}");
    client.shutdown();
}

/// LSP's line endings are `\n`, `\r\n` and `\r`: a document with a lone `\r` (an old Mac
/// file) gets its links on the right line, and an edit lands where the editor made it.
#[test]
fn a_lone_carriage_return_ends_a_line() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let mut client = Client::start(dir.path());
    let text = "title\r@[common/style.md:3:3]\r";
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": text } }));
    let links =
        client.request("textDocument/documentLink", json!({ "textDocument": { "uri": main } }));
    assert_eq!(links[0]["range"]["start"], json!({ "line": 1, "character": 0 }), "{links}");
    // Replace `common/style.md:3:3` on line 1 with a file that is not there.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": main, "version": 2 }, "contentChanges": [{
            "range": { "start": { "line": 1, "character": 2 }, "end": { "line": 1, "character": 21 } },
            "text": "gone.md",
        }] }),
    );
    let assembled = client.request(
        "workspace/executeCommand",
        json!({ "command": ctx_lsp::ASSEMBLE_COMMAND, "arguments": [main] }),
    );
    let assembled = assembled.as_str().unwrap();
    assert!(assembled.starts_with("title\r<!-- ctx: E_NOT_FOUND"), "{assembled:?}");
    assert!(assembled.contains("gone.md"), "{assembled:?}");
    client.shutdown();
}

#[test]
fn bad_and_out_of_order_requests() {
    let dir = workspace();
    let mut client = Client::start(dir.path());
    let unknown = uri(&dir.path().join("rules/never-opened.md"));
    // Requests about a document that was never opened: empty answers.
    assert_eq!(client.request("textDocument/hover", at(&unknown, 0, 0)), Value::Null);
    assert_eq!(client.request("textDocument/completion", at(&unknown, 0, 0)), Value::Null);
    // A change before the open, and bad parameters: no crash.
    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": unknown, "version": 2 }, "contentChanges": [{ "text": "x" }] }));
    client.notify("textDocument/didOpen", json!({ "garbage": true }));
    let bad = client.request_raw("textDocument/hover", json!({ "nope": 1 }));
    assert_eq!(bad.error.unwrap().code, -32602);
    let missing = client.request_raw("textDocument/formatting", json!({}));
    assert_eq!(missing.error.unwrap().code, -32601);
    // A position far past the end of a line with astral characters is clamped.
    let main = uri(&dir.path().join("rules/main.md"));
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": "😀😀 @[co" } }));
    // A change older than the open text is dropped.
    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": main, "version": 0 }, "contentChanges": [{ "text": "stale" }] }));
    let result = client.request("textDocument/completion", at(&main, 0, 400));
    assert_eq!(labels(&result)[0], "common/");
    // A document outside the roots is checked as a text; its includes stay in the sandbox.
    let outside = tempfile::tempdir().unwrap();
    let stray = uri(&outside.path().join("stray.md"));
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": stray, "languageId": "markdown", "version": 1, "text": "@[../../../../etc/passwd]" } }));
    let diagnostics = client.diagnostics(&stray, 1);
    assert_eq!(diagnostics[0]["code"], "E_OUTSIDE");
    client.shutdown();
}

#[test]
fn a_tolerant_handshake() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let style = uri(&dir.path().join("rules/common/style.md"));
    let mut client = Client::connect(dir.path());
    // Before `initialize`: a request is refused, a notification is kept.
    let early = client.request_raw("textDocument/hover", at(&main, 0, 0));
    assert_eq!(early.error.unwrap().code, -32002);
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": "@[nope.md]" } }));
    client.request("initialize", json!({ "capabilities": {} }));
    // Between `initialize` and `initialized`: served.
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": style, "languageId": "markdown", "version": 7, "text": "@[gone.md]" } }));
    client.notify("initialized", json!({}));
    assert_eq!(client.diagnostics(&main, 1)[0]["code"], "E_NOT_FOUND");
    assert_eq!(client.diagnostics(&style, 7)[0]["code"], "E_NOT_FOUND");
    // After `shutdown`: requests are refused, notifications dropped, `exit` ends with 0.
    client.request("shutdown", Value::Null);
    let late = client.request_raw("textDocument/hover", at(&main, 0, 0));
    assert_eq!(late.error.unwrap().code, -32600);
    let again = client.request_raw("shutdown", Value::Null);
    assert_eq!(again.error.unwrap().code, -32600);
    client.notify("textDocument/didClose", json!({ "textDocument": { "uri": main } }));
    let ending = client.exit();
    assert_eq!((ending, ending.exit_code()), (ctx_lsp::Ending::Shutdown, 0));
}

#[test]
fn exit_without_shutdown() {
    let dir = workspace();
    let mut client = Client::start(dir.path());
    let twice = client.request_raw("initialize", json!({ "capabilities": {} }));
    assert_eq!(twice.error.unwrap().code, -32600);
    let ending = client.exit();
    assert_eq!((ending, ending.exit_code()), (ctx_lsp::Ending::Abandoned, 1));
}

/// Whether a client that filters fuzzily keeps an item once `typed` is in its edit's range:
/// every character of `typed`, in order, in the item's filter text.
fn kept(item: &Value, typed: &str) -> bool {
    let filter = item["filterText"].as_str().or(item["label"].as_str()).unwrap().to_lowercase();
    let mut rest = filter.chars();
    typed.to_lowercase().chars().all(|c| rest.any(|f| f == c))
}

#[test]
fn ranked_paths_survive_typing() {
    let dir = workspace();
    let main = uri(&dir.path().join("rules/main.md"));
    let mut client = Client::start(dir.path());
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": "@[rucs" } }));
    let wanted = "rules/common/style.md";
    let first = client.request("textDocument/completion", at(&main, 0, 6));
    assert_eq!(first["isIncomplete"], true, "the client must ask again");
    let item = first["items"].as_array().unwrap().iter().find(|i| i["label"] == wanted);
    let item = item.unwrap_or_else(|| panic!("{wanted} in {:?}", labels(&first)));
    assert_eq!(item["textEdit"]["range"]["start"], json!({ "line": 0, "character": 2 }));
    // One more keystroke: the item stays while the client filters, and is offered again.
    assert!(kept(item, "rucst"), "{item}");
    client.notify("textDocument/didChange", json!({ "textDocument": { "uri": main, "version": 2 }, "contentChanges": [{ "range": { "start": { "line": 0, "character": 6 }, "end": { "line": 0, "character": 6 } }, "text": "t" }] }));
    let second = client.request("textDocument/completion", at(&main, 0, 7));
    assert_eq!(second["isIncomplete"], true);
    assert!(labels(&second).contains(&wanted.to_owned()), "{:?}", labels(&second));
    client.shutdown();
}

#[test]
fn problems_inside_an_included_file_show_on_the_include() {
    let dir = workspace();
    std::fs::write(dir.path().join("rules/common/bad.md"), "Intro\n\nSee @[missing.md].\n")
        .unwrap();
    std::fs::write(dir.path().join("rules/common/wrap.md"), "@[bad.md] @[gone.md]\n").unwrap();
    let main = uri(&dir.path().join("rules/main.md"));
    let bad = uri(&dir.path().join("rules/common/bad.md"));
    let mut client = Client::start(dir.path());
    let text = "# Main\nA @[common/bad.md] and @[common/style.md]\n@[common/wrap.md]\n";
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": text } }));
    let diagnostics = client.diagnostics(&main, 1);
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    let summary = &diagnostics[0];
    assert_eq!(summary["code"], "E_NOT_FOUND");
    assert_eq!(summary["severity"], 1);
    assert_eq!(summary["range"]["start"], json!({ "line": 1, "character": 2 }));
    assert_eq!(summary["range"]["end"], json!({ "line": 1, "character": 18 }));
    let message = summary["message"].as_str().unwrap();
    assert!(message.starts_with("rules/common/bad.md: 1 error: E_NOT_FOUND "), "{message}");
    let related = &summary["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], bad);
    assert_eq!(related["location"]["range"]["start"], json!({ "line": 2, "character": 4 }));
    assert_eq!(related["location"]["range"]["end"], json!({ "line": 2, "character": 17 }));
    // Through two levels: the problems of wrap.md and of bad.md under it, on `@[common/wrap.md]`.
    let nested = &diagnostics[1];
    assert_eq!(nested["range"]["start"], json!({ "line": 2, "character": 0 }));
    let message = nested["message"].as_str().unwrap();
    assert!(
        message.starts_with("rules/common/bad.md, rules/common/wrap.md: 2 errors\n"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 3, "{message}");
    assert_eq!(nested["relatedInformation"].as_array().unwrap().len(), 2);
    client.shutdown();
}

#[test]
fn changes_on_disk_reported_by_the_client() {
    let dir = workspace();
    let dep = dir.path().join("rules/common/dep.md");
    std::fs::write(&dep, "@[missing.md]\n").unwrap();
    let main = uri(&dir.path().join("rules/main.md"));
    let other = uri(&dir.path().join(".ctx/rules/other.md"));
    let mut client = Client::connect(dir.path());
    let watched =
        json!({ "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } } });
    client.request("initialize", json!({ "capabilities": watched }));
    client.notify("initialized", json!({}));
    let register = client.server_request();
    assert_eq!(register.method, "client/registerCapability");
    let registration = &register.params["registrations"][0];
    assert_eq!(registration["method"], "workspace/didChangeWatchedFiles");
    assert_eq!(registration["registerOptions"]["watchers"][0]["globPattern"], "**/*");

    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": "@[common/dep.md]\n@[rules/brandn" } }));
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": other, "languageId": "markdown", "version": 1, "text": "@[../../rules/common/style.md]" } }));
    // Only the first line's problems count (the second is being typed).
    let first_line = |diagnostics: Vec<Value>| -> Vec<Value> {
        diagnostics.into_iter().filter(|d| d["range"]["start"]["line"] == 0).collect()
    };
    assert_eq!(first_line(client.diagnostics(&main, 1)).len(), 1);
    assert_eq!(client.diagnostics(&other, 1).len(), 0);
    let before = client.request("textDocument/completion", at(&main, 1, 14));
    assert!(!labels(&before).contains(&"rules/common/brandnew.md".to_owned()));
    // Forget the diagnostics published so far (the second open checked the first again).
    client.notes.clear();

    // The included file is fixed on disk: the document that includes it is checked again, the
    // other is not.
    let dep_uri = uri(&dep);
    std::fs::write(&dep, "fixed\n").unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": dep_uri, "type": 2 }] }),
    );
    assert_eq!(first_line(client.diagnostics(&main, 1)), Vec::<Value>::new());
    client.request("textDocument/hover", at(&main, 0, 0));
    assert!(!client.notes.iter().any(|n| n.params["uri"] == other), "{:?}", client.notes);

    // A file created: offered at once, though the walk of the roots is kept.
    let created = dir.path().join("rules/common/brandnew.md");
    std::fs::write(&created, "new\n").unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": uri(&created), "type": 1 }] }),
    );
    let after = client.request("textDocument/completion", at(&main, 1, 14));
    assert!(
        labels(&after).contains(&"rules/common/brandnew.md".to_owned()),
        "{:?}",
        labels(&after)
    );

    // The included file deleted: the reference fails.
    std::fs::remove_file(&dep).unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({ "changes": [{ "uri": dep_uri, "type": 3 }] }),
    );
    assert_eq!(first_line(client.diagnostics(&main, 1))[0]["code"], "E_NOT_FOUND");
    client.shutdown();
}

/// The source index of an out-of-source build is read off the request path: the server
/// answers at once, and checks its documents again once the index is there, so a reference
/// only the index resolves stops being an error without an edit.
#[test]
fn the_source_index_arrives_without_holding_up_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(root.join("src/a.c"), "int a;\n").unwrap();
    let project = r#"<Project><ItemGroup><ClCompile Include="..\src\a.c" /></ItemGroup></Project>"#;
    std::fs::write(root.join("build/p.vcxproj"), project).unwrap();
    std::fs::write(root.join("build/main.md"), "@[a.c]\n").unwrap();
    let builder = ctx::Context::builder().root(root.join("build")).solution("p.vcxproj");
    let mut client = Client::connect_with(builder);
    client.request("initialize", json!({ "capabilities": {} }));
    client.notify("initialized", json!({}));
    let uri = format!("file://{}", root.join("build/main.md").display());
    let item = json!({ "uri": uri, "languageId": "markdown", "version": 1, "text": "@[a.c]\n" });
    client.notify("textDocument/didOpen", json!({ "textDocument": item }));
    // Without the index `a.c` is missing; with it, found: the last publish has no problem.
    let mut published = client.diagnostics(&uri, 1);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !published.is_empty() {
        assert!(std::time::Instant::now() < deadline, "never checked again: {published:?}");
        published = client.diagnostics(&uri, 1);
    }
    client.shutdown();
}

/// A coding agent's rule file gets the problems the agents that read it find, from the
/// unsaved buffer, with the agent and the hint in the message; another document does not.
#[test]
fn an_agents_rule_file_gets_the_rule_diagnostics() {
    let dir = workspace();
    let bad = "---\nalwaysApply: \"true\"\n---\nuse tabs\n";
    std::fs::create_dir_all(dir.path().join(".cursor/rules")).unwrap();
    std::fs::write(dir.path().join(".cursor/rules/a.mdc"), bad).unwrap();
    std::fs::write(dir.path().join("rules/front.md"), bad).unwrap();
    let mdc = uri(&dir.path().join(".cursor/rules/a.mdc"));
    let other = uri(&dir.path().join("rules/front.md"));
    let mut client = Client::start(dir.path());
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": mdc, "languageId": "markdown", "version": 1, "text": bad } }));
    let diagnostics = client.diagnostics(&mdc, 1);
    let rule = diagnostics.iter().find(|d| d["code"] == "E_RULES_TYPE").expect("E_RULES_TYPE");
    assert_eq!(rule["severity"], 1);
    assert_eq!(rule["range"]["start"], json!({ "line": 1, "character": 13 }));
    let message = rule["message"].as_str().unwrap();
    assert!(
        message.starts_with("cursor: `alwaysApply` is a string") && message.contains("(hint: ")
    );
    // The fix, unsaved: the problem goes.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": mdc, "version": 2 },
            "contentChanges": [{ "range": { "start": { "line": 1, "character": 13 }, "end": { "line": 1, "character": 19 } }, "text": "true" }],
        }),
    );
    let diagnostics = client.diagnostics(&mdc, 2);
    assert!(!diagnostics.iter().any(|d| d["code"] == "E_RULES_TYPE"), "{diagnostics:?}");
    client.notify("textDocument/didOpen", json!({ "textDocument": { "uri": other, "languageId": "markdown", "version": 1, "text": bad } }));
    let diagnostics = client.diagnostics(&other, 1);
    assert!(!diagnostics.iter().any(|d| d["code"] == "E_RULES_TYPE"), "{diagnostics:?}");
    client.shutdown();
}

/// A server run with a token budget that cuts a document says so on its lens: the size shown
/// is the budget's, not the document's.
#[test]
fn the_lens_says_when_the_budget_cut_the_document() {
    let dir = tempfile::tempdir().unwrap();
    let long: String = (1..=300).map(|i| format!("line {i} of a long rule\n")).collect();
    std::fs::write(dir.path().join("long.md"), long).unwrap();
    let text = "---\ndescription: x\n---\n@[long.md]\n";
    std::fs::write(dir.path().join("main.md"), text).unwrap();
    let main = uri(&dir.path().join("main.md"));
    for (max, cut) in [(0, false), (40, true)] {
        let limits = ctx::Limits { max_tokens: max, ..ctx::Limits::default() };
        let builder = ctx::Context::builder().root(dir.path()).limits(limits);
        let mut client = Client::start_with(builder);
        client.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": main, "languageId": "markdown", "version": 1, "text": text } }),
        );
        let lenses =
            client.request("textDocument/codeLens", json!({ "textDocument": { "uri": main } }));
        let title = lenses[0]["command"]["title"].as_str().unwrap().to_owned();
        assert_eq!(title.ends_with("assembled, cut by the token budget"), cut, "{max}: {title}");
        client.shutdown();
    }
}
