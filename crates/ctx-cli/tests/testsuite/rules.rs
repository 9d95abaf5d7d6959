//! `ctx rules` and `ctx rules lint` with the real binary: the rule text each real agent sent
//! (the observed fixtures of ctx-agents), the JSON view, `--agent all`, the lint's exit
//! status, and attacks (a rule file linked to the home folder's secrets, imports out of the
//! workspace, a working folder or file outside it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

use crate::util::{assert_no_raw_hidden, run};

/// A workspace `ws/` and a home folder `home/` in a temporary folder.
struct Tree {
    _tmp: TempDir,
    ws: PathBuf,
    home: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let tmp = TempDir::new().unwrap();
        let top = tmp.path().canonicalize().unwrap();
        let (ws, home) = (top.join("ws"), top.join("home"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Tree { _tmp: tmp, ws, home }
    }

    fn write(&self, rel: &str, text: &str) -> &Tree {
        let path = match rel.strip_prefix("~/") {
            Some(rest) => self.home.join(rest),
            None => self.ws.join(rel),
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    /// `ctx` in the workspace, as the user whose home folder is `home/`.
    fn ctx(&self) -> Command {
        let mut cmd = Command::cargo_bin("ctx").unwrap();
        cmd.current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("CTX_CONFIG_DIR", self.home.join(".config/ctx"))
            .env("CTX_CACHE_DIR", self.home.join(".cache/ctx"))
            .env("NO_COLOR", "1")
            .env_remove("CODEX_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CTX_FORCE_TTY")
            .env_remove("RUST_LOG")
            .timeout(Duration::from_secs(60));
        cmd
    }
}

fn observed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ctx-agents/tests/fixtures/observed")
}

/// Copies `from` into `to`, `__WS__` and `__HOME__` replaced.
fn copy(from: &Path, to: &Path, ws: &str, home: &str) {
    let Ok(entries) = std::fs::read_dir(from) else { return };
    for entry in entries {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy(&entry.path(), &target, ws, home);
        } else {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            std::fs::write(target, text.replace("__WS__", ws).replace("__HOME__", home)).unwrap();
        }
    }
}

/// For the observed fixtures the binary can take as they are (no generated files, no byte
/// order mark, which the command line prints made visible): `ctx rules --agent X --text`
/// prints the rule text agent X sent, byte for byte (ctx-agents compares every fixture, the
/// library's text; this is the command's).
#[test]
fn the_text_is_what_each_agent_sent() {
    let mut compared = 0;
    for name in [
        "a-root",
        "b-nested",
        "c-imports",
        "e-claude-rules",
        "e-codex-override",
        "e-copilot-instructions",
        "e-gemini-jit",
        "e-cline-rules",
    ] {
        let dir = observed().join(name);
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let tree = Tree::new();
        let (ws, home) =
            (tree.ws.to_str().unwrap().to_owned(), tree.home.to_str().unwrap().to_owned());
        copy(&dir.join("ws"), &tree.ws, &ws, &home);
        copy(&dir.join("home"), &tree.home, &ws, &home);
        if meta["git"].as_bool() != Some(false) {
            std::fs::create_dir_all(tree.ws.join("repo/.git")).unwrap();
        }
        for agent in meta["agents"].as_array().unwrap() {
            let agent = agent.as_str().unwrap();
            let sent = std::fs::read_to_string(dir.join(format!("{agent}.txt"))).unwrap();
            let want = format!("{}\n", sent.replace("{ws}", &ws).replace("{home}", &home));
            let mut cmd = tree.ctx();
            cmd.args(["rules", "--agent", agent, "--cwd", meta["cwd"].as_str().unwrap(), "--text"]);
            if let Some(file) = meta["for"].as_str() {
                cmd.args(["--for", file]);
            }
            let out = run(&mut cmd);
            assert_eq!(out.code, 0, "{name} / {agent}: {}", out.stderr);
            assert_eq!(out.stdout, want, "{name} / {agent}");
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared}");
}

/// The JSON view: pieces in order with why and where they go, what is not loaded and why,
/// the parts of the request.
#[test]
fn the_json_view() {
    let tree = Tree::new();
    tree.write("repo/.git/HEAD", "ref: x\n")
        .write("repo/CLAUDE.md", "root rules @docs/a.md\n")
        .write("repo/docs/a.md", "imported\n")
        .write("repo/AGENTS.md", "agents\n");
    let out =
        run(tree.ctx().args(["rules", "--agent", "claude", "--cwd", "repo", "--format", "json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let value: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(value["agent"], "claude");
    let pieces: Vec<(&str, &str)> = value["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap(), p["why"]["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(pieces, vec![("repo/CLAUDE.md", "always"), ("repo/docs/a.md", "import")]);
    assert_eq!(value["not_loaded"][0]["path"], "repo/AGENTS.md");
    assert_eq!(value["not_loaded"][0]["reason"]["kind"], "shadowed");
    assert_eq!(value["segments"][0]["placement"], "user");
    assert!(value["tokens"].as_u64().unwrap() > 0);
}

/// `--agent all`: one section per agent whose files the workspace holds (Copilot CLI reads
/// `CLAUDE.md` too), none for the others.
#[test]
fn every_agent_found() {
    let tree = Tree::new();
    tree.write("CLAUDE.md", "claude\n")
        .write(".cursor/rules/a.mdc", "---\nalwaysApply: true\n---\ncursor\n");
    let out = run(tree.ctx().args(["rules", "--agent", "all"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sections: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("=== ")).collect();
    assert_eq!(
        sections,
        vec!["=== claude ===", "=== cursor ===", "=== copilot ==="],
        "{}",
        out.stdout
    );
}

/// `ctx rules lint`: each problem at its file, line and column with its code; exit 1 on an
/// error, 0 with warnings only.
#[test]
fn lint_reports_and_fails_on_errors() {
    let tree = Tree::new();
    tree.write(".cursor/rules/a.mdc", "---\nalwaysApply: \"true\"\nglobs: *.ts\n---\nrule\n")
        .write(".claude/skills/Bad/SKILL.md", "---\nname: Bad\n---\nbody\n");
    let out = run(tree.ctx().args(["rules", "lint"]));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains(".cursor/rules/a.mdc:2:14: error[E_RULES_TYPE]"), "{}", out.stdout);
    assert!(out.stdout.contains(".cursor/rules/a.mdc:3:8: error[E_RULES_GLOB]"), "{}", out.stdout);
    assert!(
        out.stdout.contains(".claude/skills/Bad/SKILL.md:2:7: error[E_RULES_SKILL]"),
        "{}",
        out.stdout
    );
    let out = run(tree.ctx().args(["rules", "lint", "--agent", "cursor", "--format", "json"]));
    let value: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(value["errors"], 2);
    let clean = Tree::new();
    clean.write("AGENTS.md", "fine\n");
    let out = run(clean.ctx().args(["rules", "lint"]));
    assert_eq!(out.code, 0, "{}", out.stdout);
}

/// A rule file linked to the home folder's credentials, imports of them, a file worked on
/// and a working folder outside the workspace: nothing of them is printed, the command says
/// only what it refuses.
#[cfg(unix)]
#[test]
fn nothing_outside_the_workspace_is_read() {
    let tree = Tree::new();
    tree.write("~/.aws/credentials", "AKIA-SECRET-FROM-HOME\n").write("repo/.git/HEAD", "x\n");
    std::os::unix::fs::symlink(tree.home.join(".aws/credentials"), tree.ws.join("repo/CLAUDE.md"))
        .unwrap();
    tree.write("repo/AGENTS.md", "@../../home/.aws/credentials @~/.aws/credentials\n")
        .write("repo/GEMINI.md", "@../../home/.aws/credentials\n");
    tree.write(
        "~/.claude.json",
        &format!(
            "{{\"projects\": {{\"{}\": {{\"hasClaudeMdExternalIncludesApproved\": true}}}}}}",
            tree.ws.join("repo").display()
        ),
    );
    for format in ["text", "json"] {
        for text in [false, true] {
            let mut cmd = tree.ctx();
            cmd.args(["rules", "--agent", "all", "--cwd", "repo", "--format", format]);
            if text {
                cmd.arg("--text");
            }
            let out = run(&mut cmd);
            assert_eq!(out.code, 0, "{}", out.stderr);
            assert!(!out.stdout.contains("AKIA") && !out.stderr.contains("AKIA"), "{}", out.stdout);
            assert_no_raw_hidden(&out.stdout);
        }
    }
    let out =
        run(tree.ctx().args(["rules", "--agent", "claude", "--for", "../home/.aws/credentials"]));
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(!out.stderr.contains("AKIA"));
    let out = run(tree.ctx().args(["rules", "--agent", "claude", "--cwd", "../home"]));
    assert_eq!(out.code, 2, "{}", out.stdout);
    let out = run(tree.ctx().args(["rules", "--agent", "nobody"]));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no agent `nobody`"), "{}", out.stderr);
}

/// Hidden characters of a rule reach the terminal made visible, with `W_HIDDEN_TEXT`.
#[test]
fn hidden_text_is_made_visible() {
    let tree = Tree::new();
    tree.write("CLAUDE.md", "be nice\u{202e} evil\n");
    let out = run(tree.ctx().args(["rules", "--agent", "claude", "--text"]));
    assert_no_raw_hidden(&out.stdout);
    assert!(out.stdout.contains("\\u{202E}") || out.stdout.contains("\\u{202e}"), "{}", out.stdout);
    let out = run(tree.ctx().args(["rules", "lint", "--agent", "claude"]));
    assert!(out.stdout.contains("W_HIDDEN_TEXT"), "{}", out.stdout);
}

/// `ctx check` on agents' rule files: each gets the rule diagnostics of the agents that read
/// it (with the agent and the hint), at file:line:col, besides its own assembly's; exit 1 on
/// an error; a file no agent reads gets none.
#[test]
fn check_lints_rule_files_with_their_agents() {
    let tree = Tree::new();
    tree.write(".cursor/rules/a.mdc", "---\nalwaysApply: \"true\"\n---\nrule\n")
        .write("src/AGENTS.md", "fine\n")
        .write("README.md", "---\nalwaysApply: \"true\"\n---\n");
    let out = run(tree.ctx().args(["check", ".cursor/rules/a.mdc"]));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(".cursor/rules/a.mdc:2:14: error[E_RULES_TYPE]: cursor: ")
            && out.stdout.contains("(hint: "),
        "{}",
        out.stdout
    );
    let out = run(tree.ctx().args(["check", "src/AGENTS.md", "README.md"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(!out.stdout.contains("RULES"), "{}", out.stdout);
    let out = run(tree.ctx().args(["check", "--format", "json", ".cursor/rules/a.mdc"]));
    let value: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(value["errors"], 1, "{value}");
    assert_eq!(value["diagnostics"][0]["code"], "E_RULES_TYPE", "{value}");
    // From a subfolder, with the workspace root named, the file is named as the user wrote it
    // and found all the same.
    let root = tree.ws.to_str().unwrap();
    let out = run(tree.ctx().current_dir(tree.ws.join(".cursor")).args([
        "--root",
        root,
        "check",
        "rules/a.mdc",
    ]));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("E_RULES_TYPE"), "{}", out.stdout);
}

/// Attacks on `ctx check` of rule files: a `CLAUDE.md` linked to the home folder's
/// credentials, imports out of the workspace, a rule file whose name holds control
/// characters, hidden text. Nothing of the secret is printed, names and text reach the
/// terminal made visible (the sandbox refuses the name: exit 2), the command ends.
#[cfg(unix)]
#[test]
fn check_of_hostile_rule_files() {
    let tree = Tree::new();
    tree.write("~/.aws/credentials", "AKIA-SECRET-FROM-HOME\n").write(".git/HEAD", "x\n");
    std::os::unix::fs::symlink(tree.home.join(".aws/credentials"), tree.ws.join("CLAUDE.md"))
        .unwrap();
    tree.write("AGENTS.md", "@../home/.aws/credentials @~/.aws/credentials \u{202e}x\n")
        .write("GEMINI.md", "@../home/.aws/credentials\n")
        .write(".cursor/rules/\u{1b}[31mred\n.mdc", "---\nalwaysApply: \"true\"\n---\nx\n");
    let name = ".cursor/rules/\u{1b}[31mred\n.mdc";
    for format in ["text", "json"] {
        let out = run(tree.ctx().args([
            "check",
            "--format",
            format,
            "CLAUDE.md",
            "AGENTS.md",
            "GEMINI.md",
            name,
        ]));
        assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
        assert!(!out.stdout.contains("AKIA") && !out.stderr.contains("AKIA"), "{}", out.stdout);
        assert_no_raw_hidden(&out.stdout);
        assert_no_raw_hidden(&out.stderr);
        assert!(out.stdout.contains("W_HIDDEN_TEXT"), "{}", out.stdout);
        assert!(out.stdout.contains("W_RULES_OUTSIDE"), "{}", out.stdout);
    }
}

/// `ctx system-prompt --agent NAME`: the agent's system prompt as it sends it (Cursor's
/// wrapper), the JSON form naming the agent and the files; an agent that sends its rules in
/// a user message (Claude Code) prints no system prompt and says where they go.
#[test]
fn system_prompt_of_an_agent() {
    let tree = Tree::new();
    tree.write(".cursor/rules/a.mdc", "---\nalwaysApply: true\n---\nuse tabs\n")
        .write("CLAUDE.md", "be brief\n")
        .write(".ctx/rules/mine.md", "ctx's own rule\n");
    let out = run(tree.ctx().args(["system-prompt", "--agent", "cursor"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("<rules>"), "{}", out.stdout);
    assert!(out.stdout.contains(">use tabs</always_applied_workspace_rule>"), "{}", out.stdout);
    assert!(!out.stdout.contains("ctx's own rule") && !out.stdout.contains("be brief"));
    let out = run(tree.ctx().args(["system-prompt", "--agent", "cursor", "--format", "json"]));
    let value: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(value["agent"], "cursor");
    assert_eq!(value["files"], serde_json::json!([".cursor/rules/a.mdc"]));
    assert_eq!(value["segments"][0]["placement"], "system");
    assert_eq!(value["user"], "");
    let out = run(tree.ctx().args(["system-prompt", "--agent", "claude"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("in a user message"), "{}", out.stderr);
    let out = run(tree.ctx().args(["system-prompt", "--agent", "claude", "--format", "json"]));
    let value: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(value["user"].as_str().unwrap().contains("be brief"), "{value}");
    // Without `--agent`, the rules folder as before.
    let out = run(tree.ctx().args(["system-prompt"]));
    assert!(out.stdout.contains("ctx's own rule") && !out.stdout.contains("use tabs"));
}

/// `ctx messages --agent NAME`: the agent's system part is the system message, its user part
/// and what it sends when a file is read come before the user's turn; `--for` brings the
/// rules scoped to the file.
#[test]
fn messages_of_an_agent() {
    let tree = Tree::new();
    tree.write(".cursor/rules/a.mdc", "---\nalwaysApply: true\n---\nuse tabs\n")
        .write(".cursor/rules/ts.mdc", "---\nglobs: \"*.ts\"\n---\ntyped rule\n")
        .write("CLAUDE.md", "be brief\n");
    let body = |args: &[&str]| -> Value {
        let out = run(tree.ctx().args(args));
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap()
    };
    let value = body(&["messages", "--agent", "cursor", "--for", "a.ts", "hello"]);
    let system = value["messages"][0]["content"].as_str().unwrap();
    assert_eq!(value["messages"][0]["role"], "system");
    assert!(system.contains("use tabs") && !system.contains("typed rule"), "{system}");
    // A rule attached when the file is read comes with the user's turn, before it.
    let user = value["messages"][1]["content"].to_string();
    assert!(user.contains("typed rule") && user.contains("hello"), "{user}");
    assert!(user.find("typed rule") < user.find("hello"), "{user}");
    let value = body(&["messages", "--agent", "cursor", "hello"]);
    assert!(!value.to_string().contains("typed rule"), "{value}");
    let value = body(&["messages", "--agent", "claude", "--provider", "anthropic", "hello"]);
    assert!(value.get("system").is_none_or(|s| !s.to_string().contains("be brief")), "{value}");
    let user = value["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(user.starts_with("<system-reminder>") && user.ends_with("hello"), "{user}");
    assert!(user.contains("be brief"), "{user}");
    // Without `--agent`, no agent's rules.
    let value = body(&["messages", "hello"]);
    assert!(!value.to_string().contains("be brief"), "{value}");
}

/// Attacks on `--agent` of `ctx system-prompt` and `ctx messages`: a rule file linked to the
/// home folder's credentials, imports out of the workspace, hidden text, a file worked on or
/// a working folder outside the workspace, an unknown agent. Nothing of the secret is
/// printed, hidden text reaches the output made visible, the refusals are usage errors.
#[cfg(unix)]
#[test]
fn agent_prompts_read_nothing_outside() {
    let tree = Tree::new();
    tree.write("~/.aws/credentials", "AKIA-SECRET-FROM-HOME\n").write("repo/.git/HEAD", "x\n");
    std::os::unix::fs::symlink(tree.home.join(".aws/credentials"), tree.ws.join("repo/CLAUDE.md"))
        .unwrap();
    tree.write("repo/AGENTS.md", "@../../home/.aws/credentials \u{202e}evil\n")
        .write("repo/GEMINI.md", "@../../home/.aws/credentials\n")
        .write("repo/.github/copilot-instructions.md", "@../../../home/.aws/credentials\n");
    for agent in ["claude", "codex", "gemini", "copilot", "cursor", "cline"] {
        for format in ["text", "json"] {
            let out = run(tree.ctx().args([
                "system-prompt",
                "--agent",
                agent,
                "--cwd",
                "repo",
                "--format",
                format,
            ]));
            assert!(out.code <= 1, "{agent}: {}", out.stderr);
            assert!(!out.stdout.contains("AKIA") && !out.stderr.contains("AKIA"), "{agent}");
            assert_no_raw_hidden(&out.stdout);
            assert_no_raw_hidden(&out.stderr);
        }
        let out = run(tree
            .ctx()
            .args(["messages", "--agent", agent, "--cwd", "repo", "--for", "repo/x", "hi"]));
        assert!(out.code <= 1, "{agent}: {}", out.stderr);
        assert!(!out.stdout.contains("AKIA") && !out.stderr.contains("AKIA"), "{agent}");
        assert_no_raw_hidden(&out.stdout);
    }
    let out = run(tree.ctx().args(["messages", "--agent", "codex", "--cwd", "repo", "hi"]));
    assert!(
        out.stdout.contains("\\\\u{202E}") || out.stdout.contains("\\\\u{202e}"),
        "{}",
        out.stdout
    );
    for args in [
        &["system-prompt", "--agent", "claude", "--for", "../home/.aws/credentials"][..],
        &["messages", "--agent", "claude", "--cwd", "../home", "hi"],
        &["messages", "--agent", "nobody", "hi"],
        &["system-prompt", "--agent", "all"],
    ] {
        let out = run(tree.ctx().args(args));
        assert_eq!(out.code, 2, "{args:?}: {}", out.stdout);
        assert!(!out.stdout.contains("AKIA") && !out.stderr.contains("AKIA"));
    }
}
