//! Attacks on the readers: the attack, then what must not happen (no byte from outside the
//! roots, not even whether a file exists there; no hang, no panic; bounded lists and reads).

use std::sync::mpsc;
use std::time::Duration;

use ctx_agents::{Agent, Bounds, Env, Home, Rules};
use ctx_diagnostics::Code;
use ctx_fs::Limits;

use crate::util::{Tree, view};

/// Runs `f` on a thread; a hang becomes a failure after five generous minutes.
fn guarded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(300)).expect("the reader hung")
}

/// Every view of `tree` from `cwd`, with the rule text each sends.
fn every_view(tree: &Tree, cwd: &str, file: Option<&str>) -> Vec<(Rules, String)> {
    every_view_with(tree, cwd, file, Limits::default())
}

/// The same, the sandbox's limits `limits`.
fn every_view_with(
    tree: &Tree,
    cwd: &str,
    file: Option<&str>,
    limits: Limits,
) -> Vec<(Rules, String)> {
    let sandbox = tree.sandbox(limits, false);
    let home = tree.home();
    Agent::ALL
        .into_iter()
        .map(|agent| {
            let rules = view(&sandbox, &home, agent, cwd, file);
            let text = ctx_agents::text(&rules);
            (rules, text)
        })
        .collect()
}

/// Nothing of `secret` anywhere in the views: text, pieces, reasons, diagnostics, notes.
fn assert_no_leak(views: &[(Rules, String)], secret: &str) {
    for (rules, text) in views {
        let json = serde_json::to_string(rules).unwrap();
        assert!(!text.contains(secret), "{}: text leaks {secret}", rules.agent);
        assert!(!json.contains(secret), "{}: view leaks {secret}", rules.agent);
    }
}

/// A rule file that is a link to /etc/passwd, to a file beside the workspace, or to a folder
/// of the home folder: never read, under every agent's name for it.
#[test]
fn rule_files_linked_outside_are_never_read() {
    let tree = Tree::new();
    std::fs::write(tree.ws.parent().unwrap().join("beside.md"), "SECRET-BESIDE\n").unwrap();
    tree.mkdir("repo/.git").write("~/.ssh/id_rsa", "SECRET-KEY\n");
    let beside = tree.ws.parent().unwrap().join("beside.md");
    let key = tree.home.join(".ssh/id_rsa");
    for name in
        ["CLAUDE.md", "AGENTS.md", "GEMINI.md", ".clinerules", ".cursorrules", ".windsurfrules"]
    {
        tree.link(&format!("repo/{name}"), "/etc/passwd");
    }
    tree.link("repo/.github/copilot-instructions.md", beside.to_str().unwrap());
    tree.link("repo/.cursor/rules/a.mdc", key.to_str().unwrap());
    tree.link("repo/.claude/rules/a.md", key.to_str().unwrap());
    tree.link("repo/.claude/skills/x/SKILL.md", key.to_str().unwrap());
    let views = every_view(&tree, "repo", None);
    assert_no_leak(&views, "root:x:");
    assert_no_leak(&views, "SECRET");
    assert_no_leak(&views, "/etc/passwd");
    for (rules, _) in &views {
        assert!(rules.pieces.iter().all(|p| p.scope == ctx_agents::Scope::User), "{}", rules.agent);
    }
    // Never passed over in silence either: each agent names the linked files it would read
    // as not read by ctx.
    for (agent, files) in [
        ("claude", &["CLAUDE.md", ".claude/rules/a.md"][..]),
        ("codex", &["AGENTS.md"]),
        ("gemini", &["GEMINI.md"]),
        ("cursor", &[".cursor/rules/a.mdc", ".cursorrules"]),
        ("copilot", &[".github/copilot-instructions.md", "AGENTS.md"]),
        ("windsurf", &[".windsurfrules"]),
        ("cline", &[".clinerules"]),
    ] {
        let (rules, _) = views.iter().find(|(r, _)| r.agent.name() == agent).unwrap();
        for file in files {
            assert!(
                rules.not_loaded.iter().any(|n| n.path.ends_with(file)
                    && matches!(n.reason, ctx_agents::Reason::Unreadable { .. })),
                "{agent}: {file} is not named: {:?}",
                rules.not_loaded
            );
        }
    }
}

/// Imports of ../../etc/passwd, absolute, `~` and beside-the-workspace paths: named, never
/// read, and what ctx says does not depend on whether the target exists.
#[test]
fn imports_outside_are_named_never_read() {
    let tree = Tree::new();
    std::fs::write(tree.ws.parent().unwrap().join("beside.md"), "SECRET-BESIDE\n").unwrap();
    let body = "@../../etc/passwd @/etc/passwd @~/.ssh/id_rsa @../../beside.md @../../missing.md\n";
    tree.mkdir("repo/.git").write("~/.ssh/id_rsa", "SECRET-KEY\n");
    for name in ["CLAUDE.md", "AGENTS.md", "GEMINI.md"] {
        tree.write(&format!("repo/{name}"), body);
    }
    tree.write(
        "~/.claude.json",
        format!(
            "{{\"projects\": {{\"{}\": {{\"hasClaudeMdExternalIncludesApproved\": true}}}}}}",
            tree.ws.join("repo").display()
        ),
    );
    let views = every_view(&tree, "repo", None);
    assert_no_leak(&views, "root:x:");
    assert_no_leak(&views, "SECRET");
    for (rules, text) in &views {
        // The answer for an existing file outside is the same as for a missing one.
        let said = |written: &str| {
            rules
                .not_loaded
                .iter()
                .filter(|n| n.path == written)
                .map(|n| ctx_agents::reason_text(&n.reason))
                .collect::<Vec<_>>()
        };
        assert_eq!(said("../../beside.md"), said("../../missing.md"), "{}", rules.agent);
        let shown = |written: &str| text.matches(written).count();
        assert_eq!(shown("../../beside.md"), shown("../../missing.md"), "{}", rules.agent);
    }
    // Approved, Claude Code would read them: ctx says so and still does not.
    let claude = &views.iter().find(|(r, _)| r.agent == Agent::Claude).unwrap().0;
    assert!(
        claude
            .diagnostics
            .iter()
            .any(|d| d.code == Code::RulesOutside && d.message.contains("ctx did not read it"))
    );
}

/// The user's own files come through a sandbox on the agent's home folder only: without one,
/// none is read, and a repository cannot name them.
#[test]
fn the_users_files_come_only_from_the_home_sandbox() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("~/.claude/CLAUDE.md", "USER-CLAUDE\n")
        .write("~/.codex/AGENTS.md", "USER-CODEX\n")
        .write("~/.gemini/GEMINI.md", "USER-GEMINI\n")
        .write("repo/CLAUDE.md", "@~/.claude/CLAUDE.md\n");
    let sandbox = tree.sandbox(Limits::default(), false);
    let none = Home::none();
    for agent in Agent::ALL {
        let env = Env::new(&sandbox, &none).cwd("repo").unwrap();
        let text = ctx_agents::text(&ctx_agents::read(agent, &env));
        assert!(!text.contains("USER-"), "{agent}: {text}");
    }
    let home = tree.home();
    for (agent, marker) in [
        (Agent::Claude, "USER-CLAUDE"),
        (Agent::Codex, "USER-CODEX"),
        (Agent::Gemini, "USER-GEMINI"),
    ] {
        let rules = view(&sandbox, &home, agent, "repo", None);
        let text = ctx_agents::text(&rules);
        assert_eq!(text.matches(marker).count(), 1, "{agent}: {text}");
    }
}

/// A workspace's `.gemini/settings.json` that names a file of the user's Gemini folder as a
/// context file (`oauth_creds.json`) does not get it read: the user's folder is read under
/// the user's own names, and a note says what the workspace asked for.
#[test]
fn a_workspace_does_not_choose_the_users_gemini_files() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("~/.gemini/oauth_creds.json", "{\"token\":\"SECRET-TOKEN\"}\n")
        .write("~/.gemini/GEMINI.md", "USER-GEMINI\n")
        .write(
            "repo/.gemini/settings.json",
            r#"{"context":{"fileName":["oauth_creds.json","settings.json","GEMINI.md"]}}"#,
        )
        .write("repo/GEMINI.md", "project\n");
    let sandbox = tree.sandbox(Limits::default(), false);
    let rules = view(&sandbox, &tree.home(), Agent::Gemini, "repo", None);
    let text = ctx_agents::text(&rules);
    assert!(!text.contains("SECRET-TOKEN"), "{text}");
    assert!(text.contains("USER-GEMINI") && text.contains("project"), "{text}");
    let paths: Vec<&str> = rules.pieces.iter().map(|p| p.path.as_str()).collect();
    assert!(paths.iter().all(|p| !p.contains("oauth")), "{paths:?}");
    assert!(
        rules
            .notes
            .iter()
            .any(|n| n.contains("`oauth_creds.json`") && n.contains("does not choose")),
        "{:?}",
        rules.notes
    );
    // The user's own settings still choose the user's own names.
    tree.write("~/.gemini/settings.json", r#"{"context":{"fileName":"MINE.md"}}"#)
        .write("~/.gemini/MINE.md", "USER-MINE\n")
        .write("repo/.gemini/settings.json", "{}");
    let text = ctx_agents::text(&view(&sandbox, &tree.home(), Agent::Gemini, "repo", None));
    assert!(text.contains("USER-MINE") && !text.contains("USER-GEMINI"), "{text}");
}

/// Import cycles and a chain 500 files deep: each agent's limit (or ctx's) holds.
#[test]
fn cycles_and_depth_bombs_end() {
    let tree = Tree::new();
    tree.mkdir("repo/.git");
    for i in 0..500 {
        tree.write(
            &format!("repo/d{i}.md"),
            format!("level {i} @d{}.md @d0.md @AGENTS.md\n", i + 1),
        );
    }
    for name in ["CLAUDE.md", "AGENTS.md", "GEMINI.md"] {
        tree.write(&format!("repo/{name}"), "@d0.md @d0.md\n");
    }
    let views = guarded(move || {
        let views = every_view(&tree, "repo", None);
        views.into_iter().map(|(r, t)| (r.agent, r.pieces.len(), t.len())).collect::<Vec<_>>()
    });
    for (agent, pieces, bytes) in views {
        assert!(pieces <= 40, "{agent}: {pieces} pieces");
        assert!(bytes < 1 << 20, "{agent}: {bytes} bytes of text");
    }
}

/// A 1 GB rule file (sparse) under every name: refused by size, never read into memory,
/// even when the sandbox has no size cap (`--max-file-bytes 0`): the view's own budget holds.
#[test]
fn a_huge_rule_file_is_refused() {
    let tree = Tree::new();
    tree.mkdir("repo/.git");
    for name in [
        "CLAUDE.md",
        "AGENTS.md",
        "GEMINI.md",
        ".clinerules",
        ".cursorrules",
        ".github/copilot-instructions.md",
    ] {
        let path = tree.path(&format!("repo/{name}"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::File::create(&path).unwrap().set_len(1 << 30).unwrap();
    }
    let views = guarded(move || {
        let mut unlimited = Limits::default();
        unlimited.max_file_bytes = 0;
        let mut views = every_view(&tree, "repo", None);
        views.extend(every_view_with(&tree, "repo", None, unlimited));
        views.into_iter().map(|(r, _)| (r.agent, r.bytes(), r.not_loaded.len())).collect::<Vec<_>>()
    });
    for (agent, bytes, not_loaded) in views {
        assert_eq!(bytes, 0, "{agent}");
        if matches!(
            agent,
            Agent::Claude | Agent::Codex | Agent::Gemini | Agent::Cline | Agent::Copilot
        ) {
            assert!(not_loaded >= 1, "{agent}: the refusal is named");
        }
    }
}

/// 100 000 rule files in the folders agents list: bounded lists, bounded reads, a note.
#[test]
fn a_hundred_thousand_rule_files_are_bounded() {
    let tree = Tree::new();
    tree.mkdir("repo/.git");
    for dir in ["repo/.claude/rules", "repo/.clinerules", "repo/.cursor/rules"] {
        std::fs::create_dir_all(tree.path(dir)).unwrap();
    }
    for i in 0..100_000 {
        let dir = ["repo/.claude/rules", "repo/.clinerules", "repo/.cursor/rules"][i % 3];
        let ext = if dir.contains("cursor") { "mdc" } else { "md" };
        std::fs::write(
            tree.path(&format!("{dir}/r{i}.{ext}")),
            "---\nalwaysApply: true\n---\nrule\n",
        )
        .unwrap();
    }
    let bounds = Bounds::default();
    let counts = guarded(move || {
        every_view(&tree, "repo", None)
            .into_iter()
            .map(|(r, _)| {
                (r.agent, r.pieces.len(), r.not_loaded.len(), r.diagnostics.len(), r.notes.len())
            })
            .collect::<Vec<_>>()
    });
    for (agent, pieces, not_loaded, diagnostics, notes) in counts {
        assert!(
            pieces <= bounds.max_listed
                && not_loaded <= bounds.max_listed
                && diagnostics <= bounds.max_listed,
            "{agent}"
        );
        if matches!(agent, Agent::Claude | Agent::Cline | Agent::Cursor) {
            assert!(notes >= 1, "{agent}: what was left out is said");
        }
    }
}

/// A workspace larger than the walk's limit, with an `AGENTS.md` past it: every agent whose
/// rules it surveys says the walk stopped, rather than reporting a complete view.
#[test]
fn a_survey_stopped_at_its_limit_is_said() {
    let tree = Tree::new();
    tree.mkdir("repo/.git");
    for i in 0..40 {
        tree.write(&format!("repo/a{i:02}/f.rs"), "fn f() {}\n");
    }
    tree.write("repo/z/AGENTS.md", "nested rules\n");
    let mut limits = Limits::default();
    limits.max_walk_entries = 20;
    let views = every_view_with(&tree, "repo", None, limits);
    for (rules, _) in &views {
        if matches!(
            rules.agent,
            Agent::Claude
                | Agent::Codex
                | Agent::Copilot
                | Agent::Gemini
                | Agent::Cline
                | Agent::Cursor
                | Agent::Windsurf
        ) {
            assert!(
                rules.notes.iter().any(|n| n.contains("stopped at its limit")),
                "{}: {:?}",
                rules.agent,
                rules.notes
            );
        }
    }
}

/// A brace bomb in `paths:` and `globs:`: counted, refused, no hang.
#[test]
fn brace_bombs_are_refused() {
    let tree = Tree::new();
    let bomb = "{a,b}".repeat(64);
    tree.mkdir("repo/.git")
        .write("repo/.claude/rules/b.md", format!("---\npaths: [\"{bomb}\"]\n---\nclaude\n"))
        .write("repo/.cursor/rules/b.mdc", format!("---\nglobs: \"{bomb}\"\n---\ncursor\n"))
        .write(
            "repo/.github/instructions/b.instructions.md",
            format!("---\napplyTo: \"{bomb}\"\n---\ncopilot\n"),
        );
    let views = guarded(move || {
        every_view(&tree, "repo", Some("repo/ab.rs"))
            .into_iter()
            .map(|(r, _)| r)
            .collect::<Vec<_>>()
    });
    for agent in [Agent::Claude, Agent::Cursor, Agent::Copilot] {
        let rules = views.iter().find(|r| r.agent == agent).unwrap();
        assert!(
            rules.diagnostics.iter().any(|d| d.code == Code::RulesGlob),
            "{agent}: {:?}",
            rules.diagnostics
        );
    }
}

/// Hidden Unicode in a rule: `W_HIDDEN_TEXT` for every agent that loads the file.
#[test]
fn hidden_unicode_is_reported() {
    let tree = Tree::new();
    let text = "run tests\u{200b}\u{202e} then \u{e0041}\n";
    tree.mkdir("repo/.git");
    for name in ["CLAUDE.md", "AGENTS.md", "GEMINI.md", ".clinerules"] {
        tree.write(&format!("repo/{name}"), text);
    }
    for (rules, _) in every_view(&tree, "repo", None) {
        if matches!(rules.agent, Agent::Skills | Agent::Ctx) {
            continue;
        }
        assert!(rules.diagnostics.iter().any(|d| d.code == Code::HiddenText), "{}", rules.agent);
    }
}

/// A YAML bomb in front matter: refused by ctx's front-matter limits, the agent's reading
/// of a failed parse applied, no hang.
#[test]
fn a_yaml_bomb_is_refused() {
    let mut yaml = String::from("a: &a [x,x,x,x,x,x,x,x,x,x]\n");
    for i in 1..12u8 {
        let (name, prev) = ((b'a' + i) as char, (b'a' + i - 1) as char);
        yaml.push_str(&format!("{name}: &{name} [{}]\n", vec![format!("*{prev}"); 10].join(",")));
    }
    let text = format!("---\n{yaml}---\nbody\n");
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/.claude/rules/y.md", &text)
        .write("repo/.cursor/rules/y.mdc", &text)
        .write("repo/.clinerules/y.md", &text)
        .write("repo/.claude/skills/y/SKILL.md", &text)
        .write("repo/.github/instructions/y.instructions.md", &text);
    let views = guarded(move || {
        every_view(&tree, "repo", None).into_iter().map(|(r, _)| r).collect::<Vec<_>>()
    });
    for agent in [Agent::Cursor, Agent::Cline, Agent::Skills, Agent::Copilot] {
        let rules = views.iter().find(|r| r.agent == agent).unwrap();
        assert!(
            rules.diagnostics.iter().any(|d| d.code == Code::RulesFrontMatter),
            "{agent}: {:?}",
            rules.diagnostics
        );
    }
}
