//! One fixture test per documented or observed rule of each agent: the view as
//! `ctx rules --format text` prints it, then (where it matters) what the model receives.
//! Each cites where the rule comes from: the observation (research FINDINGS, captured with
//! the versions of `Agent::version`) or the agent's documentation (docs/agents.md).

use ctx_agents::{Agent, Rules};
use ctx_fs::Limits;
use expect_test::{Expect, expect};

use crate::util::{Tree, view};

fn check(tree: &Tree, agent: Agent, cwd: &str, file: Option<&str>, want: Expect) -> Rules {
    let sandbox = tree.sandbox(Limits::default(), false);
    let rules = view(&sandbox, &tree.home(), agent, cwd, file);
    let text = ctx_agents::report(&rules);
    let text = text.lines().skip(1).collect::<Vec<_>>().join("\n");
    want.assert_eq(&text);
    rules
}

fn text(tree: &Tree, agent: Agent, cwd: &str, file: Option<&str>) -> String {
    let sandbox = tree.sandbox(Limits::default(), false);
    let rules = view(&sandbox, &tree.home(), agent, cwd, file);
    ctx_agents::text(&rules)
        .replace(tree.ws.to_str().unwrap(), "{ws}")
        .replace(tree.home.to_str().unwrap(), "{home}")
}

/// Claude Code: imports nest four levels below the memory file (observed, c-imports: chain5
/// is not loaded; the docs said "five hops"); code spans and fences are not imports.
#[test]
fn claude_import_depth_and_code() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/CLAUDE.md", "root @a1.md `@span.md`\n```\n@fence.md\n```\n")
        .write("repo/a1.md", "one @a2.md\n")
        .write("repo/a2.md", "two @a3.md\n")
        .write("repo/a3.md", "three @a4.md\n")
        .write("repo/a4.md", "four @a5.md\n")
        .write("repo/a5.md", "five\n");
    check(
        &tree,
        Agent::Claude,
        "repo",
        None,
        expect![[r#"
        working folder: repo
        loaded: 5 pieces, 83 bytes, 38 tokens (o200k)
          1. repo/CLAUDE.md:1: always; first user message; 40 bytes, 18 tokens
          2. repo/a1.md:1: import `@a1.md` of repo/CLAUDE.md:1; first user message; 10 bytes, 5 tokens
          3. repo/a2.md:1: import `@a2.md` of repo/a1.md:1; first user message; 10 bytes, 5 tokens
          4. repo/a3.md:1: import `@a3.md` of repo/a2.md:1; first user message; 12 bytes, 5 tokens
          5. repo/a4.md:1: import `@a4.md` of repo/a3.md:1; first user message; 11 bytes, 5 tokens
        not loaded:
          - `@a5.md` (repo/a4.md:1): past the import depth (4)
          - `@fence.md` (repo/CLAUDE.md:3): inside a fenced code block: not an import
        problems:
          repo/a4.md:1:6: warning[W_RULES_DEPTH]: `@a5.md` is past Claude Code's import depth (4 levels below the memory file); it is not loaded (hint: import it from a file nearer the memory file)
        note: the agent also reads CLAUDE.md, .claude/CLAUDE.md, .claude/rules/ and CLAUDE.local.md in the folders above the workspace root; they lie outside ctx's roots and were not looked at"#]],
    );
}

/// Claude Code: an import that leaves the working folder is skipped without a word until the
/// user approves external imports (observed, c-imports and c-imports-approved); ctx never
/// reads it, approved or not.
#[test]
fn claude_outside_imports_are_named_never_read() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("outside.md", "SECRET-OUTSIDE\n")
        .write("repo/CLAUDE.md", "see @../outside.md and @/etc/passwd and @~/.ssh/id_rsa\n");
    check(
        &tree,
        Agent::Claude,
        "repo",
        None,
        expect![[r#"
        working folder: repo
        loaded: 1 piece, 54 bytes, 19 tokens (o200k)
          1. repo/CLAUDE.md:1: always; first user message; 54 bytes, 19 tokens
        not loaded:
          - `@../outside.md` (repo/CLAUDE.md:1): outside the working folder: skipped until the user approves external imports
          - `@/etc/passwd` (repo/CLAUDE.md:1): outside the working folder: skipped until the user approves external imports
          - `@~/.ssh/id_rsa` (repo/CLAUDE.md:1): outside the working folder: skipped until the user approves external imports
        problems:
          repo/CLAUDE.md:1:5: warning[W_RULES_OUTSIDE]: `@../outside.md` leaves the working folder: Claude Code skips it without a word until the user approves external imports (hint: import files of the project, or keep the text in the file itself)
          repo/CLAUDE.md:1:24: warning[W_RULES_OUTSIDE]: `@/etc/passwd` leaves the working folder: Claude Code skips it without a word until the user approves external imports (hint: import files of the project, or keep the text in the file itself)
          repo/CLAUDE.md:1:41: warning[W_RULES_OUTSIDE]: `@~/.ssh/id_rsa` leaves the working folder: Claude Code skips it without a word until the user approves external imports (hint: import files of the project, or keep the text in the file itself)
        note: the agent also reads CLAUDE.md, .claude/CLAUDE.md, .claude/rules/ and CLAUDE.local.md in the folders above the workspace root; they lie outside ctx's roots and were not looked at"#]],
    );
}

/// Claude Code: a rule of `.claude/rules/` with `paths:` loads when a matching file is read,
/// in a reminder of its own (observed, e-claude-rules); without `--for` it is listed as not
/// loaded. Unquoted globs are read after Claude's own quoting retry.
#[test]
fn claude_paths_rules() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/.claude/rules/rust.md", "---\npaths:\n  - \"src/**/*.rs\"\n---\nrust rule\n")
        .write("repo/.claude/rules/bad.md", "---\npaths:\n  - **/*.py\n---\npython rule\n")
        .write("repo/.claude/rules/typed.md", "---\npaths: 3\n---\ntyped rule\n");
    check(
        &tree,
        Agent::Claude,
        "repo",
        Some("repo/src/main.rs"),
        expect![[r#"
        working folder: repo; for: repo/src/main.rs
        loaded: 3 pieces, 31 bytes, 7 tokens (o200k)
          1. repo/.claude/rules/bad.md:5: always; first user message; 11 bytes, 2 tokens
          2. repo/.claude/rules/typed.md:4: always; first user message; 10 bytes, 2 tokens
          3. repo/.claude/rules/rust.md:5: paths glob `src/**/*.rs` matched repo/src/main.rs; later, when the file is read; 10 bytes, 3 tokens
        problems:
          repo/.claude/rules/bad.md:3:5: error[E_RULES_GLOB]: front matter does not parse (invalid front matter: did not find expected alphabetic or numeric character); Claude Code reads the file without it, so the rule applies always (hint: quote each glob: paths: ["src/**/*.ts"])
          repo/.claude/rules/typed.md:2:8: error[E_RULES_TYPE]: `paths` is a number, not a list of globs or a string of them; Claude Code ignores it and the rule applies always (hint: write paths: ["src/**/*.ts"])
        note: the agent also reads CLAUDE.md, .claude/CLAUDE.md, .claude/rules/ and CLAUDE.local.md in the folders above the workspace root; they lie outside ctx's roots and were not looked at"#]],
    );
    expect![[r#"
        <system-reminder>
        Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.

        Contents of {ws}/repo/.claude/rules/bad.md (project instructions, checked into the codebase):

        python rule

        Contents of {ws}/repo/.claude/rules/typed.md (project instructions, checked into the codebase):

        typed rule
        </system-reminder>

        <system-reminder>
        Contents of {ws}/repo/.claude/rules/rust.md:

        rust rule

        </system-reminder>"#]].assert_eq(&text(&tree, Agent::Claude, "repo", Some("repo/src/main.rs")));
}

/// Codex CLI: one file per folder, override first; the 32 KiB budget is shared from the
/// project root down and the nearest file is cut (observed, d-caps-split, e-codex-override).
#[test]
fn codex_one_file_per_folder_and_the_shared_cap() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/AGENTS.md", "x".repeat(30_000))
        .write("repo/AGENTS.override.md", "y".repeat(30_000))
        .write("repo/sub/AGENTS.md", "z".repeat(5_000))
        .write("repo/sub/CLAUDE.md", "not read\n");
    check(
        &tree,
        Agent::Codex,
        "repo/sub",
        None,
        expect![[r#"
        working folder: repo/sub
        loaded: 2 pieces, 32768 bytes, 8884 tokens (o200k)
          1. repo/AGENTS.override.md:1: ancestor folder repo; first user message; 30000 bytes, 7500 tokens
          2. repo/sub/AGENTS.md:1: always; first user message; 2768 bytes, 1384 tokens
             cut: 2768 of 5000 bytes kept (cap 32768, shared by the files before it); 2232 lost
        not loaded:
          - repo/AGENTS.md: repo/AGENTS.override.md takes its place
          - repo/sub/CLAUDE.md: not a file this agent reads
        problems:
          repo/sub/AGENTS.md:1:1: warning[W_RULES_CAP]: Codex keeps the first 2768 of its 5000 bytes (project_doc_max_bytes, 32768 bytes shared from the project root down): 2232 bytes are lost, without a word to the model (hint: shorten the AGENTS.md files, or raise project_doc_max_bytes in ~/.codex/config.toml)"#]],
    );
}

/// Claude Code reads `AGENTS.md` only where no `CLAUDE.md` is: beside one, it is named as
/// taken over by it, not as a file Claude Code never reads.
#[test]
fn claude_names_agents_md_beside_claude_md_as_taken_over() {
    let tree = Tree::new();
    tree.mkdir("repo/.git").write("repo/CLAUDE.md", "claude\n").write("repo/AGENTS.md", "agents\n");
    let sandbox = tree.sandbox(Limits::default(), false);
    let rules = view(&sandbox, &tree.home(), Agent::Claude, "repo", None);
    let agents = rules.not_loaded.iter().find(|n| n.path == "repo/AGENTS.md").unwrap();
    assert!(matches!(agents.reason, ctx_agents::Reason::Shadowed { .. }), "{agents:?}");
}

/// Cursor: a subfolder's own `.cursor/rules` applies when a file of that folder is worked on
/// (cursor.com/docs/rules, "Nested rules"), its globs from that folder.
#[test]
fn cursor_applies_a_subfolders_rules_to_its_files() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/pkg/.cursor/rules/p.mdc", "---\nalwaysApply: true\n---\npkg rule\n")
        .write("repo/pkg/.cursor/rules/g.mdc", "---\nglobs: src/*.ts\n---\nts rule\n")
        .write("repo/pkg/src/x.ts", "x\n");
    let sandbox = tree.sandbox(Limits::default(), false);
    let rules = view(&sandbox, &tree.home(), Agent::Cursor, "repo", Some("repo/pkg/src/x.ts"));
    let texts: Vec<&str> = rules.pieces.iter().map(|p| p.text.trim()).collect();
    assert!(texts.contains(&"pkg rule"), "{texts:?}");
    assert!(texts.contains(&"ts rule"), "{texts:?}");
    // Without a file worked on, a note says where to look.
    let rules = view(&sandbox, &tree.home(), Agent::Cursor, "repo", None);
    assert!(rules.pieces.iter().all(|p| !p.text.contains("pkg rule")));
    assert!(rules.notes.iter().any(|n| n.contains("--for")), "{:?}", rules.notes);
}

/// GitHub Copilot CLI: the `.instructions.md` files of the working folder's
/// `.github/instructions` and of the user's `~/.copilot/instructions` apply as the project
/// root's do (docs.github.com, "Adding custom instructions for GitHub Copilot CLI").
#[test]
fn copilot_reads_the_working_folders_and_the_users_instructions() {
    let tree = Tree::new();
    let every = "---\napplyTo: \"**\"\n---\n";
    tree.mkdir("repo/.git")
        .write("repo/.github/instructions/r.instructions.md", format!("{every}root\n"))
        .write("repo/sub/.github/instructions/s.instructions.md", format!("{every}sub\n"))
        .write("~/.copilot/instructions/u.instructions.md", format!("{every}user\n"));
    let sandbox = tree.sandbox(Limits::default(), false);
    let rules = view(&sandbox, &tree.home(), Agent::Copilot, "repo/sub", None);
    let paths: Vec<&str> = rules.pieces.iter().map(|p| p.path.as_str()).collect();
    for want in [
        "repo/.github/instructions/r.instructions.md",
        "repo/sub/.github/instructions/s.instructions.md",
        "~/.copilot/instructions/u.instructions.md",
    ] {
        assert!(paths.contains(&want), "{want}: {paths:?}");
    }
}

/// Codex CLI: a project file over ctx's size cap still spends the shared budget, as Codex
/// reads its first bytes (`agents_md.rs`, `read_agents_md`): the files after it get nothing.
#[test]
fn codex_spends_its_budget_on_a_file_over_the_size_cap() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/AGENTS.md", "y".repeat(2_000_001))
        .write("repo/sub/AGENTS.md", "sub agents\n");
    let sandbox = tree.sandbox(Limits::default(), false);
    let rules = view(&sandbox, &tree.home(), Agent::Codex, "repo/sub", None);
    assert_eq!(rules.pieces.len(), 1, "{rules:?}");
    assert_eq!(rules.pieces[0].path, "repo/AGENTS.md");
    assert_eq!(rules.pieces[0].text.len(), 32_768);
    assert!(rules.not_loaded.iter().any(|n| n.path == "repo/sub/AGENTS.md"), "{rules:?}");
    assert!(rules.diagnostics.iter().any(|d| d.code == ctx_diagnostics::Code::RulesCap));
}

/// Codex CLI: a trusted project's `.codex/config.toml` layers, from the root down, set the
/// fallback names and the byte cap (codex-rs `agents_md.rs` takes all but the root markers
/// from them; developers.openai.com/codex/config-basic).
#[test]
fn codex_reads_the_projects_config_layers() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/.codex/config.toml", "project_doc_fallback_filenames = [\"CLAUDE.md\"]\n")
        .write(
            "repo/sub/.codex/config.toml",
            "project_doc_max_bytes = 5\nproject_root_markers = []\n",
        )
        .write("repo/CLAUDE.md", "claude only\n");
    let sandbox = tree.sandbox(Limits::default(), false);
    let rules = view(&sandbox, &tree.home(), Agent::Codex, "repo/sub", None);
    let texts: Vec<&str> = rules.pieces.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["claud"], "{rules:?}");
    assert!(rules.notes.iter().any(|n| n.contains("repo/.codex/config.toml")), "{:?}", rules.notes);
    // The markers of a project layer are not taken: the root is still the one `.git` marks.
    assert_eq!(rules.pieces[0].path, "repo/CLAUDE.md");
}

/// Gemini CLI: the context file names come from the working folder's `.gemini/settings.json`
/// (`loadSettings(process.cwd())`), not from one above it.
#[test]
fn gemini_file_names_come_from_the_working_folders_settings() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/.gemini/settings.json", r#"{"context":{"fileName":"AGENTS.md"}}"#)
        .write("repo/sub/.gemini/settings.json", r#"{"context":{"fileName":"RULES.md"}}"#)
        .write("repo/AGENTS.md", "agents\n")
        .write("repo/RULES.md", "rules\n")
        .write("repo/sub/RULES.md", "sub rules\n")
        .write("repo/other/GEMINI.md", "gemini\n");
    let sandbox = tree.sandbox(Limits::default(), false);
    let files = |cwd: &str| -> Vec<String> {
        let rules = view(&sandbox, &tree.home(), Agent::Gemini, cwd, None);
        rules.pieces.iter().map(|p| p.path.clone()).collect()
    };
    assert_eq!(files("repo"), ["repo/AGENTS.md"]);
    assert_eq!(files("repo/sub"), ["repo/RULES.md", "repo/sub/RULES.md"]);
    // No settings in the working folder: GEMINI.md, whatever the root's settings say.
    assert_eq!(files("repo/other"), ["repo/other/GEMINI.md"]);
}

/// Gemini CLI: an import that leaves the project through a link is refused by its real path
/// (`validateImportPath`), and one that names a folder fails to read
/// (`memoryImportProcessor.ts`).
#[test]
fn gemini_refuses_a_link_out_and_fails_on_a_folder() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .mkdir("repo/docs")
        .write("~/s/k", "SECRET\n")
        .write("repo/GEMINI.md", "g @docs and @docs/link.md\n");
    let target = tree.home.join("s/k");
    tree.link("repo/docs/link.md", target.to_str().unwrap());
    let sent = text(&tree, Agent::Gemini, "repo", None);
    assert!(
        sent.contains("<!-- Import failed: docs/link.md - Path traversal attempt -->"),
        "{sent}"
    );
    assert!(
        sent.contains(
            "<!-- Import failed: docs - EISDIR: illegal operation on a directory, read -->"
        ),
        "{sent}"
    );
    assert!(!sent.contains("SECRET"), "{sent}");
}

/// Gemini CLI: imports inline where they stand, five levels, refused outside the project
/// root with a comment (observed, c-imports; a missing import there too: its comment names
/// the absolute path, so its token count is not fixed here).
#[test]
fn gemini_imports() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("outside.md", "SECRET-OUTSIDE\n")
        .write("repo/GEMINI.md", "a @one.md b @../outside.md\n")
        .write("repo/one.md", "ONE @GEMINI.md\n");
    check(
        &tree,
        Agent::Gemini,
        "repo",
        None,
        expect![[r#"
            working folder: repo
            loaded: 3 pieces, 319 bytes, 71 tokens (o200k)
              1. repo/GEMINI.md:1: always; first user message; 319 bytes, 71 tokens
              2. repo/one.md:1: import `@one.md` of repo/GEMINI.md:1; first user message; 185 bytes, 41 tokens, inside the file importing it
              3. repo/GEMINI.md:1: import `@GEMINI.md` of repo/one.md:1; first user message; 107 bytes, 22 tokens, inside the file importing it
            not loaded:
              - `@one.md` (repo/GEMINI.md:1): already loaded (a cycle or a repeat)
              - `@../outside.md` (repo/GEMINI.md:1): outside the project: the agent refuses it
            problems:
              repo/GEMINI.md:1:3: warning[W_RULES_CYCLE]: `@one.md` imports a file that imports this one: a cycle; Gemini CLI sends a comment in its place (hint: remove one of the two imports)
              repo/GEMINI.md:1:13: warning[W_RULES_OUTSIDE]: `@../outside.md` leaves the project root: Gemini CLI refuses it ("path traversal attempt") and sends a comment in its place (hint: import files of the project, or keep the text in the file itself)
            note: Gemini CLI reads project files only in a folder the user trusts; ctx shows what it reads once trusted"#]],
    );
    let sent = text(&tree, Agent::Gemini, "repo", None);
    assert!(!sent.contains("SECRET"), "{sent}");
    expect![[r#"
        <loaded_context>
        <project_context>
        --- Context from: {ws}/repo/GEMINI.md ---
        a <!-- Imported from: one.md -->
        ONE <!-- Imported from: GEMINI.md -->
        a <!-- File already processed: one.md --> b <!-- Import failed: ../outside.md - Path traversal attempt -->

        <!-- End of import from: GEMINI.md -->

        <!-- End of import from: one.md --> b <!-- Import failed: ../outside.md - Path traversal attempt -->
        --- End of Context from: {ws}/repo/GEMINI.md ---
        </project_context>
        </loaded_context>"#]].assert_eq(&sent);
}

/// Copilot CLI: `applyTo` globs (VS Code's matcher) listed, sent when a matching file is
/// read; a wrong type is an error and the file is not applied (observed, e-copilot-instructions;
/// the type rule from the docs).
#[test]
fn copilot_apply_to() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write(
            "repo/.github/instructions/ts.instructions.md",
            "---\napplyTo: \"**/*.ts\"\ndescription: TypeScript\n---\nts rule\n",
        )
        .write("repo/.github/instructions/bad.instructions.md", "---\napplyTo: [1, 2]\n---\nbad\n");
    check(
        &tree,
        Agent::Copilot,
        "repo",
        Some("repo/web/a.ts"),
        expect![[r#"
        working folder: repo; for: repo/web/a.ts
        loaded: 2 pieces, 138 bytes, 39 tokens (o200k)
          1. repo/.github/instructions/ts.instructions.md:1: listed (name or description); read when the model decides; system prompt; 69 bytes, 18 tokens
          2. repo/.github/instructions/ts.instructions.md:1 ".github/instructions/ts.instructions.md": applyTo glob `**/*.ts` matched repo/web/a.ts; later, when the file is read; 69 bytes, 21 tokens
        not loaded:
          - repo/.github/instructions/bad.instructions.md: front matter unusable (`applyTo` is a number); dropped
        problems:
          repo/.github/instructions/bad.instructions.md:2:10: error[E_RULES_TYPE]: `applyTo` is a number, not a string of globs; Copilot CLI does not apply the file (hint: write applyTo: "**/*.ts")"#]],
    );
}

/// Cline: the working folder only; front matter that does not parse drops the rule (rules
/// SDK); `paths:` is not applied (observed, e-cline-rules-hi).
#[test]
fn cline_front_matter() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("AGENTS.md", "above\n")
        .write("repo/.clinerules/a.md", "---\npaths: [\"src/**\"]\n---\nscoped\n")
        .write("repo/.clinerules/b.md", "---\nname: [unclosed\n---\nbroken\n")
        .write("repo/.clinerules/c.md", "---\ndisabled: true\n---\noff\n");
    check(
        &tree,
        Agent::Cline,
        "repo",
        None,
        expect![[r#"
        working folder: repo
        loaded: 1 piece, 6 bytes, 2 tokens (o200k)
          1. repo/.clinerules/a.md:4 "a": always; system prompt; 6 bytes, 2 tokens
        not loaded:
          - repo/.clinerules/b.md: front matter unusable (invalid front matter: did not find expected ',' or ']' while parsing a flow sequence that starts here); dropped
          - repo/.clinerules/c.md: only when the user mentions it
          - AGENTS.md: in ., a folder the agent does not read here
        problems:
          repo/.clinerules/a.md:2:1: warning[W_RULES_IGNORED]: `paths` is not applied by Cline's rules loader: the rule is sent whatever file is worked on (hint: keep rules that apply to some files only for agents that scope them)
          repo/.clinerules/b.md:2:7: error[E_RULES_FRONT_MATTER]: front matter does not parse (invalid front matter: did not find expected ',' or ']' while parsing a flow sequence that starts here); Cline does not load the rule (hint: fix the YAML between the `---` lines)
        note: Cline reads the working folder only: no folder above it, none below it"#]],
    );
}

/// Cursor: the four modes of `.mdc` front matter (docs' matrix), `alwaysApply: "true"` is not
/// true, a `.md` file is ignored, an unquoted glob is read leniently and reported.
#[test]
fn cursor_modes() {
    let tree = Tree::new();
    tree.write("repo/.cursor/rules/always.mdc", "---\nalwaysApply: true\n---\nalways rule\n")
        .write("repo/.cursor/rules/ts.mdc", "---\nglobs: *.ts\nalwaysApply: false\n---\nts rule\n")
        .write("repo/.cursor/rules/ask.mdc", "---\ndescription: when testing\n---\ntest rule\n")
        .write("repo/.cursor/rules/manual.mdc", "---\nalwaysApply: \"true\"\n---\nmanual rule\n")
        .write("repo/.cursor/rules/plain.md", "plain\n")
        .write("repo/AGENTS.md", "agents\n")
        .write("repo/web/AGENTS.md", "web agents\n");
    check(
        &tree,
        Agent::Cursor,
        "repo",
        Some("repo/web/a.ts"),
        expect![[r#"
            working folder: repo; for: repo/web/a.ts
            loaded: 5 pieces, 46 bytes, 9 tokens (o200k)
              1. repo/.cursor/rules/always.mdc:4: always; system prompt; 11 bytes, 2 tokens
              2. repo/.cursor/rules/ask.mdc:4: listed (name or description); read when the model decides; system prompt; 12 bytes, 2 tokens
              3. repo/.cursor/rules/ts.mdc:5: globs glob `*.ts` matched repo/web/a.ts; later, when the file is read; 7 bytes, 2 tokens
              4. repo/AGENTS.md:1: always; system prompt; 6 bytes, 1 token
              5. repo/web/AGENTS.md:1: lazy: loaded when a file of repo/web is read; later, when the file is read; 10 bytes, 2 tokens
            not loaded:
              - repo/.cursor/rules/plain.md: not a file this agent reads
              - repo/.cursor/rules/manual.mdc: only when the user mentions it
            problems:
              repo/.cursor/rules/plain.md:1:1: warning[W_RULES_IGNORED]: Cursor reads only .mdc files in this folder; this file is ignored (hint: rename it, or move plain Markdown to AGENTS.md)
              repo/.cursor/rules/manual.mdc:2:14: error[E_RULES_TYPE]: `alwaysApply` is a string, not a boolean; Cursor does not read it as true (hint: write alwaysApply: true, without quotes)
              repo/.cursor/rules/ts.mdc:2:8: error[E_RULES_GLOB]: YAML reads an unquoted `*` as an alias: the front matter is not valid YAML; Cursor reads it leniently (not documented), other tools do not (hint: quote the glob: globs: "**/*.ts")
            note: Cursor's user rules live in its settings, not in files; team rules on its dashboard: neither is shown
            note: Cursor reads the folder it opened (the working folder): rule files above it are not read"#]],
    );
    expect![[r#"
        <rules>
        The rules section has a number of possible rules/memories/context that you should consider. In each subsection, we provide instructions about what information the subsection contains and how you should consider/follow the contents of the subsection.

        <always_applied_workspace_rules description="These are workspace-level rules that the agent must always follow.">
        <always_applied_workspace_rule name="{ws}/repo/.cursor/rules/always.mdc">always rule</always_applied_workspace_rule>
        <always_applied_workspace_rule name="{ws}/repo/AGENTS.md">agents</always_applied_workspace_rule>
        </always_applied_workspace_rules>
        <agent_requestable_workspace_rules description="These are workspace-level rules that the agent should follow. Use the Read tool to fetch the full rule if it seems relevant.">
        <agent_requestable_workspace_rule fullPath="{ws}/repo/.cursor/rules/ask.mdc">when testing</agent_requestable_workspace_rule>
        </agent_requestable_workspace_rules>
        </rules>

        <attached_rule name="{ws}/repo/.cursor/rules/ts.mdc">ts rule</attached_rule>
        <attached_rule name="{ws}/repo/web/AGENTS.md">web agents</attached_rule>"#]].assert_eq(&text(&tree, Agent::Cursor, "repo", Some("repo/web/a.ts")));
}

/// Windsurf: triggers, `.devin/rules` over `.windsurf/rules`, the 12 000 character cap per
/// workspace rule (docs.devin.ai, Memories & Rules).
#[test]
fn windsurf_triggers_and_caps() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/.windsurf/rules/a.md", "---\ntrigger: always_on\n---\nwindsurf a\n")
        .write("repo/.devin/rules/a.md", "---\ntrigger: always_on\n---\ndevin a\n")
        .write(
            "repo/.windsurf/rules/big.md",
            format!("---\ntrigger: always_on\n---\n{}", "é".repeat(12_345)),
        )
        .write(
            "repo/.windsurf/rules/decide.md",
            "---\ntrigger: model_decision\ndescription: for tests\n---\ntests\n",
        )
        .write("repo/.windsurf/rules/odd.md", "---\ntrigger: sometimes\n---\nodd\n");
    let rules = check(
        &tree,
        Agent::Windsurf,
        "repo",
        None,
        expect![[r#"
            working folder: repo
            loaded: 3 pieces, 24016 bytes, 12005 tokens (o200k)
              1. repo/.devin/rules/a.md:4: always; system prompt; 7 bytes, 3 tokens
              2. repo/.windsurf/rules/big.md:4: always; system prompt; 24000 bytes, 12000 tokens
                 cut: 12000 of 12345 characters kept (cap 12000); 345 lost
              3. repo/.windsurf/rules/decide.md:5: listed (name or description); read when the model decides; system prompt; 9 bytes, 2 tokens
            not loaded:
              - repo/.windsurf/rules/a.md: repo/.devin/rules/a.md takes its place
              - repo/.windsurf/rules/odd.md: only when the user mentions it
            problems:
              repo/.windsurf/rules/big.md:1:1: warning[W_RULES_CAP]: 12345 characters, over Windsurf's 12000: the agent keeps the first 12000 and 345 are lost (hint: split the rule into several files)
              repo/.windsurf/rules/odd.md:2:10: warning[W_RULES_IGNORED]: `trigger` is not one of always_on, glob, model_decision, manual: ctx takes the rule as manual (hint: write trigger: always_on)
            note: Windsurf also reads the .windsurf/rules and .devin/rules of the subfolders of the working folder: name a file with --for to see those down to it
            note: Windsurf's system rules (/etc/windsurf/rules, deployed by an administrator) and its memories lie outside the project and were not looked at"#]],
    );
    let big = rules.pieces.iter().find(|p| p.path.ends_with("big.md")).unwrap();
    assert_eq!(big.text.chars().count(), 12_000);
}

/// Agent Skills: name and description checked against the specification.
#[test]
fn skills_are_checked() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write(
            "repo/.claude/skills/pdf/SKILL.md",
            "---\nname: pdf\ndescription: Reads PDF files.\n---\nbody\n",
        )
        .write(
            "repo/.agents/skills/Bad--Name/SKILL.md",
            "---\nname: Bad--Name\ndescription: x\n---\nbody\n",
        )
        .write("repo/.agents/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody\n");
    check(
        &tree,
        Agent::Skills,
        "repo",
        None,
        expect![[r#"
            working folder: repo
            loaded: 2 pieces, 17 bytes, 5 tokens (o200k)
              1. repo/.claude/skills/pdf/SKILL.md:1 "pdf": listed (name or description); read when the model decides; system prompt; 16 bytes, 4 tokens
              2. repo/.agents/skills/Bad--Name/SKILL.md:1 "Bad--Name": listed (name or description); read when the model decides; system prompt; 1 byte, 1 token
            not loaded:
              - repo/.agents/skills/nodesc/SKILL.md: front matter unusable (no usable name or description); dropped
            problems:
              repo/.agents/skills/Bad--Name/SKILL.md:2:7: error[E_RULES_SKILL]: `name` `Bad--Name` may hold only lower-case letters, digits and hyphens (hint: see agentskills.io/specification: name and description)
              repo/.agents/skills/Bad--Name/SKILL.md:2:7: error[E_RULES_SKILL]: `name` `Bad--Name` must not start or end with a hyphen, nor hold two in a row (hint: see agentskills.io/specification: name and description)
              repo/.agents/skills/nodesc/SKILL.md:2:1: error[E_RULES_SKILL]: no `description`: the specification requires one, and it is what the model sees (hint: see agentskills.io/specification: name and description)"#]],
    );
    expect![[r#"
        <available_skills>
        <skill>
        <name>pdf</name>
        <description>Reads PDF files.</description>
        <location>{ws}/repo/.claude/skills/pdf/SKILL.md</location>
        </skill>
        <skill>
        <name>Bad--Name</name>
        <description>x</description>
        <location>{ws}/repo/.agents/skills/Bad--Name/SKILL.md</location>
        </skill>
        </available_skills>"#]]
    .assert_eq(&text(&tree, Agent::Skills, "repo", None));
}

/// Claude Code 2.1.277 and later read `AGENTS.md` when no `CLAUDE.md` exists from the root to
/// the working folder (its changelog; not observed: the observed fixtures all hold a
/// `CLAUDE.md`), and say so in a note.
#[test]
fn claude_reads_agents_md_without_claude_md() {
    let tree = Tree::new();
    tree.mkdir("repo/.git").write("repo/AGENTS.md", "agents rule\n");
    let rules = check(
        &tree,
        Agent::Claude,
        "repo",
        None,
        expect![[r#"
        working folder: repo
        loaded: 1 piece, 11 bytes, 2 tokens (o200k)
          1. repo/AGENTS.md:1: always; first user message; 11 bytes, 2 tokens
        note: the agent also reads CLAUDE.md, .claude/CLAUDE.md, .claude/rules/ and CLAUDE.local.md in the folders above the workspace root; they lie outside ctx's roots and were not looked at
        note: no CLAUDE.md from the workspace root to the working folder: Claude Code 2.1.277 and later read AGENTS.md in its place (its changelog; not observed)"#]],
    );
    assert_eq!(rules.pieces[0].path, "repo/AGENTS.md");
}

/// Windsurf: an `AGENTS.md` of a subfolder applies to the files of that folder ("auto-glob
/// for that directory", docs.devin.ai agents-md); the diagnostics of one file can be taken
/// from a view (`lint::for_file`).
#[test]
fn windsurf_subfolder_agents_md_and_one_files_problems() {
    let tree = Tree::new();
    tree.mkdir("repo/.git")
        .write("repo/AGENTS.md", "root\n")
        .write("repo/web/agents.md", "web\n")
        .write("repo/api/AGENTS.md", "api\n")
        .write("repo/.windsurf/rules/t.md", "---\ntrigger: glob\n---\nno globs\n");
    let rules = check(
        &tree,
        Agent::Windsurf,
        "repo",
        Some("repo/web/page.ts"),
        expect![[r#"
            working folder: repo; for: repo/web/page.ts
            loaded: 2 pieces, 7 bytes, 2 tokens (o200k)
              1. repo/AGENTS.md:1: always; system prompt; 4 bytes, 1 token
              2. repo/web/agents.md:1: directory glob `repo/web/**` matched repo/web/page.ts; later, when the file is read; 3 bytes, 1 token
            not loaded:
              - repo/.windsurf/rules/t.md: front matter unusable (`trigger: glob` without `globs`); dropped
              - repo/api/AGENTS.md: directory repo/api/** did not match repo/web/page.ts
            problems:
              repo/.windsurf/rules/t.md:2:1: error[E_RULES_TYPE]: `trigger: glob` without `globs`: the rule applies to no file (hint: add globs: "src/**/*.ts")
            note: Windsurf's system rules (/etc/windsurf/rules, deployed by an administrator) and its memories lie outside the project and were not looked at"#]],
    );
    let one: Vec<_> =
        ctx_agents::lint::for_file(&rules.diagnostics, "repo/.windsurf/rules/t.md").collect();
    assert_eq!(one.len(), 1);
}
