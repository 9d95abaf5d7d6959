//! The agents whose rules ctx reads, their names and the version each reader follows.

use std::fmt;

use serde::Serialize;

/// A coding agent (or ctx itself) whose rule files ctx reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Agent {
    /// Claude Code: `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/`, `CLAUDE.local.md`.
    Claude,
    /// OpenAI Codex CLI: `AGENTS.override.md`, `AGENTS.md`, fallback names.
    Codex,
    /// Gemini CLI: `GEMINI.md` (or the configured context file names).
    Gemini,
    /// Cursor: `.cursor/rules/*.mdc`, `AGENTS.md`, `.cursorrules`.
    Cursor,
    /// GitHub Copilot CLI: `copilot-instructions.md`, `*.instructions.md`, `AGENTS.md`,
    /// `CLAUDE.md`, `GEMINI.md`.
    Copilot,
    /// Windsurf (Devin Desktop): `.windsurf/rules`, `.devin/rules`, `.windsurfrules`,
    /// `AGENTS.md`, `global_rules.md`.
    Windsurf,
    /// Cline: `.clinerules`, `.cline/rules`, `AGENTS.md`, the global rules folders.
    Cline,
    /// Agent Skills: the `SKILL.md` of each skill folder, as listed to a model.
    Skills,
    /// ctx itself: the rules folder (`.ctx/rules`, `.mutsumi/rules`) of `ctx system-prompt`.
    Ctx,
}

impl Agent {
    /// Every agent, in the order `--agent all` shows them.
    pub const ALL: [Agent; 9] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Copilot,
        Agent::Windsurf,
        Agent::Cline,
        Agent::Skills,
        Agent::Ctx,
    ];

    /// The name used on the command line (`claude`, `codex` …).
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
            Agent::Windsurf => "windsurf",
            Agent::Cline => "cline",
            Agent::Skills => "skills",
            Agent::Ctx => "ctx",
        }
    }

    /// The agent of a command-line name, case-insensitively.
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name().eq_ignore_ascii_case(name))
    }

    /// The product's own name.
    pub fn title(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex CLI",
            Agent::Gemini => "Gemini CLI",
            Agent::Cursor => "Cursor",
            Agent::Copilot => "GitHub Copilot CLI",
            Agent::Windsurf => "Windsurf",
            Agent::Cline => "Cline",
            Agent::Skills => "Agent Skills",
            Agent::Ctx => "ctx",
        }
    }

    /// The version whose behaviour the reader follows, and how it is known: observed (the
    /// real agent run against a local mock model server) or documented (the agent's own
    /// documentation; docs/agents.md gives the sources).
    pub fn version(self) -> &'static str {
        match self {
            Agent::Claude => "Claude Code 2.1.332 (observed)",
            Agent::Codex => "Codex CLI 0.171.0 (observed)",
            Agent::Gemini => "Gemini CLI 0.61.0 (observed)",
            Agent::Cursor => "Cursor (documented; the wrapper is the best-known form, unverified)",
            Agent::Copilot => "GitHub Copilot CLI 1.0.102 (observed)",
            Agent::Windsurf => {
                "Windsurf / Devin Desktop (documented; the wrapper is the best-known form, unverified)"
            }
            Agent::Cline => "Cline CLI 3.0.65 (observed)",
            Agent::Skills => "Agent Skills specification (agentskills.io)",
            Agent::Ctx => "ctx (this build)",
        }
    }

    /// The folders of the user's home folder the agent reads its own files from, relative to
    /// the home folder. They are read through a sandbox on each folder, never through a path
    /// a repository names.
    pub fn home_folders(self) -> &'static [&'static str] {
        match self {
            Agent::Claude => &[".claude"],
            Agent::Codex => &[".codex"],
            Agent::Gemini => &[".gemini"],
            Agent::Copilot => &[".copilot"],
            Agent::Windsurf => &[".codeium/windsurf"],
            Agent::Cline => &["Documents/Cline/Rules", ".cline", ".agents"],
            Agent::Skills => &[".claude", ".agents"],
            Agent::Cursor | Agent::Ctx => &[],
        }
    }
}

/// The folders an agent keeps rule files in, below the folder whose rules they are.
const RULE_FOLDERS: [&str; 13] = [
    ".claude",
    ".cursor",
    ".github",
    ".windsurf",
    ".devin",
    ".clinerules",
    ".cline",
    ".agents",
    ".gemini",
    ".codex",
    ".copilot",
    ".ctx",
    ".mutsumi",
];

/// The names of rule files wherever they lie.
const RULE_NAMES: [&str; 10] = [
    "CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    "AGENTS.override.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    "copilot-instructions.md",
    "SKILL.md",
    "global_rules.md",
];

/// Whether some agent reads a file of this path (relative to the workspace root) as a rule
/// file: by its name (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `SKILL.md`, `*.mdc`,
/// `*.instructions.md` …) or by the rule folder it lies in (`.claude/rules`,
/// `.windsurf/rules`, `.clinerules` …). ctx's own rules folders are ctx documents and are not
/// counted. Only the name is looked at.
pub fn is_rule_file(path: &str) -> bool {
    let path = path.trim_start_matches("./");
    let name = path.rsplit('/').next().unwrap_or(path);
    if path.split('/').any(|c| c == ".ctx" || c == ".mutsumi") {
        return false;
    }
    if RULE_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
        || name.ends_with(".mdc")
        || name.ends_with(".instructions.md")
    {
        return true;
    }
    let text = name.ends_with(".md") || name.ends_with(".markdown") || name.ends_with(".txt");
    text && [".claude/rules/", ".windsurf/rules/", ".devin/rules/", ".clinerules/", ".cline/rules/"]
        .iter()
        .any(|f| path.starts_with(f) || path.contains(&format!("/{f}")))
}

/// The working folder (relative to the workspace root, empty for the root) from which the
/// agents that read the rule file `path` read it: the folder above its agent's folder
/// (`src` for `src/.cursor/rules/x.mdc`), else its own folder.
pub fn rule_file_folder(path: &str) -> &str {
    let path = path.trim_start_matches("./");
    let mut at = 0;
    for component in path.split('/') {
        if RULE_FOLDERS.contains(&component) {
            return path[..at].trim_end_matches('/');
        }
        at += component.len() + 1;
    }
    path.rfind('/').map_or("", |i| &path[..i])
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for agent in Agent::ALL {
            assert_eq!(Agent::from_name(agent.name()), Some(agent));
            assert_eq!(Agent::from_name(&agent.name().to_uppercase()), Some(agent));
        }
        assert_eq!(Agent::from_name("all"), None);
    }

    #[test]
    fn rule_files_are_known_by_name_and_folder() {
        for path in [
            "CLAUDE.md",
            "src/AGENTS.md",
            ".cursor/rules/x.mdc",
            ".github/instructions/a.instructions.md",
            ".claude/rules/deep/x.md",
            "pkg/.clinerules/01.txt",
            ".claude/skills/pdf/SKILL.md",
            "./GEMINI.md",
        ] {
            assert!(is_rule_file(path), "{path}");
        }
        for path in ["README.md", "src/main.rs", ".ctx/rules/CLAUDE.md", ".claude/settings.json"] {
            assert!(!is_rule_file(path), "{path}");
        }
    }

    #[test]
    fn a_rule_file_is_read_from_the_folder_above_its_agent_folder() {
        assert_eq!(rule_file_folder("CLAUDE.md"), "");
        assert_eq!(rule_file_folder("src/AGENTS.md"), "src");
        assert_eq!(rule_file_folder("src/.cursor/rules/x.mdc"), "src");
        assert_eq!(rule_file_folder(".claude/skills/pdf/SKILL.md"), "");
        assert_eq!(rule_file_folder("a/b/.clinerules/x.md"), "a/b");
    }
}
