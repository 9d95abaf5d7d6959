//! The facade as an embedder uses it: the builder, the synchronous and async calls, prompts,
//! custom tools, and a context reused across calls.

#![allow(clippy::disallowed_methods)] // Tests build their workspaces on disk.

use std::sync::Arc;

use ctx::{Context, Format, Tool, ToolContext, ToolError};
use serde_json::{Map, Value};

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("rules")).unwrap();
    std::fs::write(
        dir.path().join("rules/main.md"),
        "---\nDescription: main rules\n---\n@{ifdef DEBUG}debug\n@{endif}Style: @[style.md]",
    )
    .unwrap();
    std::fs::write(dir.path().join("rules/style.md"), "four spaces\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    dir
}

#[test]
fn builder_defines_and_assembles_files() {
    let dir = workspace();
    let ctx = Context::builder().root(dir.path()).define("DEBUG", "").build().unwrap();
    let assembly = ctx.assemble_file("rules/main.md").unwrap();
    assert_eq!(assembly.content, "debug\nStyle: four spaces\n");
    assert_eq!(assembly.description, "main rules");
    assert!(!assembly.has_errors());
    let plain = Context::builder().root(dir.path()).build().unwrap();
    assert_eq!(plain.assemble_file("rules/main.md").unwrap().content, "Style: four spaces\n");
}

#[test]
fn bad_defines_and_missing_documents_are_errors() {
    let dir = workspace();
    let err = Context::builder().root(dir.path()).define("1BAD", "x").build().unwrap_err();
    assert!(err.to_string().contains("1BAD"), "{err}");
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let err = ctx.assemble_file("nope.md").unwrap_err();
    assert_eq!(err.code(), Some(ctx::Code::NotFound));
    let err = ctx.assemble_file("../outside.md").unwrap_err();
    assert_eq!(err.code(), Some(ctx::Code::Outside));
}

#[test]
fn prompts_are_expanded_in_append_mode() {
    let dir = workspace();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let assembly = ctx.expand_prompt("explain @notes.txt#L2-3");
    assert_eq!(
        assembly.content,
        "explain @notes.txt#L2-3\n\n<system-reminder>\nThe following files were mentioned with @ syntax:\n\n\
         <file path=\"notes.txt\" lines=\"2-3\">\ntwo\nthree\n</file>\n</system-reminder>\n"
    );
    let md = Context::builder().root(dir.path()).format(Format::Markdown).build().unwrap();
    assert!(md.expand_prompt("@notes.txt").content.contains("#### Source: notes.txt"));
}

#[test]
fn streaming_writes_what_the_value_holds() {
    let dir = workspace();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let mut out = Vec::new();
    let streamed = ctx.assemble_to("rules/main.md", &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        ctx.assemble_file("rules/main.md").unwrap().content
    );
    assert!(streamed.content.is_empty());
}

#[test]
fn a_context_sees_changed_files() {
    let dir = workspace();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    assert_eq!(ctx.assemble_str("@[notes.txt:1]").content, "one");
    std::fs::write(dir.path().join("notes.txt"), "uno\n").unwrap();
    assert_eq!(ctx.assemble_str("@[notes.txt:1]").content, "uno");
}

struct Shout;

impl Tool for Shout {
    fn name(&self) -> &str {
        "shout"
    }

    fn call(&self, args: &Map<String, Value>, _cx: &ToolContext<'_>) -> Result<String, ToolError> {
        let text = args
            .get("text")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::args("missing `text`"))?;
        Ok(text.to_uppercase())
    }
}

#[test]
fn custom_tools_register_and_builtins_switch_off() {
    let dir = workspace();
    let ctx = Context::builder()
        .root(dir.path())
        .tool(Arc::new(Shout))
        .without_tool("grep")
        .build()
        .unwrap();
    let assembly = ctx.assemble_str(r#"@[shout{"text":"hi"}] @[grep{"pattern":"x"}]"#);
    assert!(assembly.content.starts_with("HI <!-- ctx: E_TOOL_UNKNOWN"), "{}", assembly.content);
    let assembly = ctx.assemble_str(r#"@[shout{}]"#);
    assert_eq!(assembly.diagnostics[0].code.as_str(), "E_TOOL_ARGS");
}

#[test]
fn async_calls_run_off_the_runtime_threads() {
    let dir = workspace();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let assembly = ctx.assemble_file_async("rules/main.md").await.unwrap();
        assert_eq!(assembly.content, "Style: four spaces\n");
        let prompt = ctx.expand_prompt_async("@notes.txt").await.unwrap();
        assert!(prompt.content.contains("<file path=\"notes.txt\">"));
    });
}

#[test]
fn completions_rank_and_quote_through_the_facade() {
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/agent")).unwrap();
    std::fs::write(dir.path().join("src/agent/hand.rs"), "x").unwrap();
    std::fs::write(dir.path().join("src/agents.rs"), "x").unwrap();
    std::fs::write(dir.path().join("my notes.md"), "x").unwrap();
    std::fs::write(dir.path().join(".env"), "SECRET=1").unwrap();
    std::fs::write(other.path().join("agenda.md"), "x").unwrap();
    let ctx = Context::builder().root(dir.path()).allow(other.path()).build().unwrap();

    let found = ctx.complete("@src/ag", 10).unwrap();
    let paths: Vec<&str> = found.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(&paths[..3], ["src/agent/", "src/agents.rs", "src/agent/hand.rs"], "{paths:?}");
    assert!(found[0].dir && !found[1].dir);
    assert_eq!(found[1].mention, "@src/agents.rs");

    let quoted = ctx.complete("@\"my n", 1).unwrap();
    assert_eq!(quoted[0].mention, "@\"my notes.md\"");

    // Extra roots are offered under their own path; denied names never are.
    let all = ctx.complete("", 0).unwrap();
    assert!(all.iter().any(|c| c.path.ends_with("/agenda.md") && c.path.len() > 10));
    assert!(all.iter().all(|c| !c.path.contains(".env")));
}

#[test]
fn recent_completions_reuse_one_walk_until_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("alpha.md"), "x").unwrap();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let long = std::time::Duration::from_secs(3600);
    let paths = |found: Vec<ctx::Completion>| found.into_iter().map(|c| c.path).collect::<Vec<_>>();
    assert_eq!(paths(ctx.complete_recent("al", 10, long).unwrap()), ["alpha.md"]);
    std::fs::write(dir.path().join("alps.md"), "x").unwrap();
    // The kept walk does not see the new file; a fresh completion does.
    assert_eq!(paths(ctx.complete_recent("al", 10, long).unwrap()), ["alpha.md"]);
    assert_eq!(paths(ctx.complete("alps", 10).unwrap()), ["alps.md"]);
    ctx.forget_paths();
    assert_eq!(paths(ctx.complete_recent("alps", 10, long).unwrap()), ["alps.md"]);
    // A walk older than the age asked for is redone.
    std::fs::write(dir.path().join("alpine.md"), "x").unwrap();
    let now = std::time::Duration::ZERO;
    assert!(
        paths(ctx.complete_recent("alpine", 10, now).unwrap()).contains(&"alpine.md".to_owned())
    );
}

#[test]
fn turns_appended_from_threads_stay_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx::Context::builder().root(dir.path()).build().unwrap();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let ctx = ctx.clone();
            scope.spawn(move || {
                for i in 0..25 {
                    let text = format!("thread {t} turn {i} {}", "x".repeat(500));
                    ctx.append_turn(&serde_json::json!({ "role": "user", "content": text }))
                        .unwrap();
                }
            });
        }
    });
    let text = std::fs::read_to_string(dir.path().join(".ctx/history.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 100);
    for line in lines {
        let message: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(message["role"], "user");
    }
    assert!(ctx.append_turn(&serde_json::json!({ "content": "no role" })).is_err());
    let built = ctx.conversation().transcript(".ctx/history.jsonl").build("next").unwrap();
    assert_eq!(built.conversation.history.len(), 100);
}

#[tokio::test]
async fn an_out_of_source_build_and_a_conversation_built_async() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("build")).unwrap();
    std::fs::write(dir.path().join("src/a.c"), "int a;\n").unwrap();
    let project = r#"<Project><ItemGroup><ClCompile Include="..\src\a.c" /></ItemGroup></Project>"#;
    std::fs::write(dir.path().join("build/p.vcxproj"), project).unwrap();
    let ctx = Context::builder()
        .root(dir.path().join("build"))
        .solution("p.vcxproj")
        .build_async()
        .await
        .unwrap();
    let report = ctx.resolve("a.c");
    assert_eq!(report.status, ctx::ResolveStatus::File);
    assert_eq!(report.via, Some("index"), "the root-relative path of a file in the root");
    let built = ctx.conversation().build_async("see @a.c").await.unwrap();
    assert!(built.conversation.user.contains("int a;"), "{}", built.conversation.user);
    assert!(built.conversation.system.contains("Source roots of the out-of-source build"));
}

/// An embedder's view of the roots a workspace asks for: the library opens none outside the
/// workspace unless told whose word counts ([`ctx::Trust`]), and says what it left closed.
#[test]
fn roots_a_workspace_asks_for_need_the_users_trust() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("inside")).unwrap();
    std::fs::write(ws.join("inside/in.md"), "inside\n").unwrap();
    std::fs::create_dir_all(base.join("shared")).unwrap();
    std::fs::write(base.join("shared/team.md"), "team\n").unwrap();
    std::os::unix::fs::symlink("/etc", ws.join("etc-link")).unwrap();
    let team = base.join("shared/team.md");
    let build = |trust: ctx::Trust| {
        Context::builder()
            .root(&ws)
            .project_allow(ws.join("inside"), "ctx.toml (allow)")
            .project_allow(base.join("shared"), "ctx.toml (allow)")
            .project_allow("/etc", "ctx.toml (allow)")
            .project_allow(ws.join("etc-link"), "ctx.toml (allow)")
            .trust(trust)
            .build()
            .unwrap()
    };
    let reads = |ctx: &Context| ctx.expand_prompt(&format!("@{}", team.display())).content;

    // The default: nothing outside; one W_UNTRUSTED for the shared folder, a W_CONFIG for
    // /etc, and the link inside the workspace is refused as any link out is.
    let ctx = build(ctx::Trust::default());
    assert!(!reads(&ctx).contains("team\n"));
    let codes: Vec<&str> = ctx.notices().iter().map(|n| n.code.as_str()).collect();
    assert_eq!(codes, ["W_CONFIG", "W_UNTRUSTED", "W_CONFIG"], "{:?}", ctx.notices());
    assert!(ctx.notices()[0].message.contains("/etc, a system folder"));
    assert_eq!(ctx.trust_request().asked.len(), 1);
    assert!(ctx.expand_prompt("@inside/in.md").content.contains("inside\n"));

    // Trusted through a store, the shared folder opens; /etc never does.
    let config = base.join("config");
    let trust = ctx::Trust::user_store(&config);
    trust.store().unwrap().grant(ctx.trust_request()).unwrap();
    let ctx = build(trust);
    assert!(reads(&ctx).contains("team\n"));
    assert!(ctx.notices().iter().all(|n| n.code.as_str() != "W_UNTRUSTED"));
    assert!(!ctx.expand_prompt("@/etc/hostname").content.contains("<file"));
    assert!(reads(&build(ctx::Trust::Everything)).contains("team\n"));
}

/// A server's context answers at once with the workspace, and through the source index once
/// that is read on a thread of its own.
#[test]
fn a_deferred_context_reads_its_source_index_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::create_dir_all(dir.path().join("build")).unwrap();
    std::fs::write(dir.path().join("src/a.c"), "int a;\n").unwrap();
    std::fs::write(dir.path().join("build/here.md"), "here\n").unwrap();
    let project = r#"<Project><ItemGroup><ClCompile Include="..\src\a.c" /></ItemGroup></Project>"#;
    std::fs::write(dir.path().join("build/p.vcxproj"), project).unwrap();
    let deferred =
        Context::builder().root(dir.path().join("build")).solution("p.vcxproj").build_deferred();
    let deferred = deferred.unwrap();
    assert!(deferred.current().expand_prompt("@here.md").content.contains("here\n"));
    let full = deferred.wait().unwrap();
    assert!(full.source_index().is_some());
    assert!(deferred.current().expand_prompt("@a.c").content.contains("int a;"));
    // Without a solution to read, the context is complete at once.
    let plain = Context::builder().root(dir.path()).build_deferred().unwrap();
    assert!(plain.wait().unwrap().source_index().is_none());
}

#[test]
fn coding_agents_rules_through_the_facade() {
    use ctx::agents::{Agent, Why};
    let tmp = tempfile::TempDir::new().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let (ws, home) = (top.join("ws"), top.join("home"));
    std::fs::create_dir_all(ws.join(".ctx/rules")).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(ws.join("CLAUDE.md"), "project rule\n").unwrap();
    std::fs::write(ws.join(".ctx/rules/default.md"), "ctx rule\n").unwrap();
    std::fs::write(home.join(".claude/CLAUDE.md"), "user rule\n").unwrap();
    std::fs::write(home.join("secret.md"), "SECRET\n").unwrap();
    let ctx = Context::builder().root(&ws).build().unwrap();
    let user = ctx::home_of(Some(&home));
    let rules = ctx.rules_with(Agent::Claude, ".", None, &user).unwrap();
    let whys: Vec<(&str, &Why)> = rules.pieces.iter().map(|p| (p.path.as_str(), &p.why)).collect();
    assert_eq!(whys, vec![("~/.claude/CLAUDE.md", &Why::Global), ("CLAUDE.md", &Why::Always)]);
    // The user's folder is a sandbox of its own: the home folder beside it is not reachable.
    std::fs::write(ws.join("CLAUDE.md"), "@../home/secret.md @~/secret.md\n").unwrap();
    let text = ctx::agents::text(&ctx.rules_with(Agent::Claude, ".", None, &user).unwrap());
    assert!(!text.contains("SECRET"), "{text}");
    let own = ctx.rules_with(Agent::Ctx, ".", None, &user).unwrap();
    let sent = ctx::agents::text(&own);
    assert!(sent.starts_with("ctx rule\n\n### Runtime Context"), "{sent}");
    let all = ctx.all_rules(".", None, &user).unwrap();
    let agents: Vec<Agent> = all.iter().map(|r| r.agent).collect();
    assert_eq!(agents, vec![Agent::Claude, Agent::Copilot, Agent::Ctx]);
    assert!(ctx.rules_with(Agent::Claude, "../home", None, &user).is_err());
    assert!(ctx.rules_with(Agent::Claude, ".", Some("../home/secret.md"), &user).is_err());
}

#[test]
fn an_agents_prompt_and_a_rule_files_diagnostics() {
    use ctx::agents::{Agent, Home};
    let tmp = tempfile::TempDir::new().unwrap();
    let ws = tmp.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(ws.join(".cursor/rules")).unwrap();
    std::fs::write(ws.join("CLAUDE.md"), "be brief\n").unwrap();
    std::fs::write(ws.join(".cursor/rules/a.mdc"), "---\nalwaysApply: \"true\"\n---\nx\n").unwrap();
    std::fs::write(ws.join(".cursor/rules/b.mdc"), "---\nalwaysApply: true\n---\ntabs\n").unwrap();
    std::fs::write(ws.join("README.md"), "---\nalwaysApply: \"true\"\n---\n").unwrap();
    let ctx = Context::builder().root(&ws).build().unwrap();
    let home = Home::none();
    // Claude Code sends its rules in a user message; Cursor in the system prompt.
    let claude = ctx::AgentPrompt::of(&ctx.rules_with(Agent::Claude, ".", None, &home).unwrap());
    assert!(claude.system.is_empty() && claude.user.contains("be brief"), "{claude:?}");
    let cursor = ctx::AgentPrompt::of(&ctx.rules_with(Agent::Cursor, ".", None, &home).unwrap());
    assert!(cursor.system.contains("tabs") && cursor.user.is_empty(), "{cursor:?}");
    let built = ctx
        .conversation()
        .agent_rules(ctx.rules_with(Agent::Claude, ".", None, &home).unwrap())
        .build("hello")
        .unwrap();
    assert!(
        built.conversation.user.contains("be brief") && built.conversation.user.ends_with("hello")
    );
    assert_eq!(built.agent.map(|r| r.agent), Some(Agent::Claude));
    // A rule file's diagnostics; none for another file, or one outside the workspace.
    let found = ctx.rule_file_diagnostics(".cursor/rules/a.mdc", &home).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].agent, found[0].line, found[0].column), (Agent::Cursor, 2, 14));
    assert!(ctx.rule_file_diagnostics("README.md", &home).is_none());
    assert!(ctx.rule_file_diagnostics("../ws/../CLAUDE.md", &home).is_none());
    assert_eq!(ctx.rule_file_diagnostics("CLAUDE.md", &home), Some(Vec::new()));
}
