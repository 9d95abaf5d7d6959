//! The coding agents' rules in the facade: what each agent loads for a working folder of the
//! workspace and a file, read through the context's sandbox; the user's own agent folders
//! each through a sandbox of its own on that folder of the home folder.

use std::path::{Path, PathBuf};

use ctx_agents::{Agent, CtxPrompt, CtxRule, Env, Home, Placement, Rules};
use ctx_fs::{Content, RootId, Sandbox};

use crate::context::{Context, Error, ErrorKind};

/// The user's own agent folders under the home folder `home` (`~/.claude`, `~/.codex` or
/// `$CODEX_HOME`, `~/.gemini` …), each that exists opened as a sandbox of its own, so that a
/// path a repository names can never reach them; and the approvals of `~/.claude.json`,
/// read through a sandbox on the home folder. Without a home folder, none.
///
/// # Ambient Authority
///
/// Each of those folders, and the home folder for `.claude.json`, is opened by its path,
/// once; nothing else is reached through them but what their sandboxes allow.
#[allow(clippy::disallowed_methods)] // Opens the user's agent folders, as the builder opens roots.
pub fn home_of(home: Option<&Path>) -> Home {
    let mut out = Home::none();
    let Some(home) = home else { return out };
    let mut keys: Vec<&str> =
        Agent::ALL.iter().flat_map(|a| a.home_folders().iter().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        let codex_home = (key == ".codex").then(|| std::env::var_os("CODEX_HOME")).flatten();
        let (dir, shown) = match codex_home {
            Some(dir) => (PathBuf::from(dir), "$CODEX_HOME".to_owned()),
            None => (home.join(key), format!("~/{key}")),
        };
        let Some(dir) = dir.to_str() else { continue };
        let Ok(sandbox) = Sandbox::builder(dir).open(cap_std::ambient_authority()) else {
            continue;
        };
        let abs = sandbox.root_path(RootId::WORKSPACE).as_str().to_owned();
        out.add_folder(key, shown, abs, sandbox);
    }
    let settings = home.to_str().and_then(|h| {
        let sandbox = Sandbox::builder(h).open(cap_std::ambient_authority()).ok()?;
        match sandbox.read_path(".claude.json", None).ok()?.1 {
            Content::Text { text, .. } => Some(text.as_str().to_owned()),
            _ => None,
        }
    });
    if let Some(text) = settings {
        out.set_claude_settings(&text);
    }
    out
}

/// A coding agent's rules split as the agent sends them ([`ctx_agents::render`]): the text of
/// its system prompt, and the text it sends in the first user message and, later, when a file
/// is read (in that order), for an embedder that gives its model what the agent would.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentPrompt {
    /// The parts the agent puts in the system prompt, joined by a blank line.
    pub system: String,
    /// The parts it sends in a user message (up front, then when a file is read), joined by a
    /// blank line.
    pub user: String,
}

impl AgentPrompt {
    /// The prompt of `rules`.
    pub fn of(rules: &Rules) -> AgentPrompt {
        let segments = ctx_agents::render(rules);
        let join = |keep: &dyn Fn(Placement) -> bool| {
            let parts: Vec<&str> =
                segments.iter().filter(|s| keep(s.placement)).map(|s| s.text.as_str()).collect();
            parts.join("\n\n")
        };
        AgentPrompt {
            system: join(&|p| p == Placement::System),
            user: join(&|p| p != Placement::System),
        }
    }
}

impl Context {
    /// What `agent` loads from the workspace root for `for_path` (a file of the workspace,
    /// which need not exist), with the user's own agent folders of the home folder.
    ///
    /// # Errors
    ///
    /// When `for_path` does not lie in the workspace.
    pub fn rules(&self, agent: Agent, for_path: Option<&str>) -> Result<Rules, Error> {
        let home = home_of(std::env::home_dir().as_deref());
        self.rules_with(agent, ".", for_path, &home)
    }

    /// What `agent` loads from the working folder `cwd` of the workspace for `for_path`, with
    /// the user's folders of `home` ([`home_of`]).
    ///
    /// # Errors
    ///
    /// When `cwd` is not a folder of the workspace or `for_path` does not lie in it.
    pub fn rules_with(
        &self,
        agent: Agent,
        cwd: &str,
        for_path: Option<&str>,
        home: &Home,
    ) -> Result<Rules, Error> {
        let prompt = if agent == Agent::Ctx { Some(self.ctx_prompt()) } else { None };
        let env = self.env(cwd, for_path, home, prompt.as_ref())?;
        Ok(ctx_agents::read(agent, &env))
    }

    /// The environment of the views: the working folder `cwd`, the file `for_path`, the
    /// user's folders of `home`, ctx's own rules. One environment serves several agents, so
    /// that the walk of the workspace and the folder listings are made once.
    fn env<'a>(
        &'a self,
        cwd: &str,
        for_path: Option<&str>,
        home: &'a Home,
        prompt: Option<&'a CtxPrompt>,
    ) -> Result<Env<'a>, Error> {
        let mut env = Env::new(self.sandbox(), home).cwd(cwd).map_err(ErrorKind::Rules)?;
        if let Some(file) = for_path {
            env = env.for_path(file).map_err(ErrorKind::Rules)?;
        }
        if let Some(prompt) = prompt {
            env = env.ctx_prompt(prompt);
        }
        Ok(env)
    }

    /// The views of every agent whose files the workspace holds (`--agent all`), in the
    /// order of [`Agent::ALL`], read in one environment.
    ///
    /// # Errors
    ///
    /// As [`Context::rules_with`].
    pub fn all_rules(
        &self,
        cwd: &str,
        for_path: Option<&str>,
        home: &Home,
    ) -> Result<Vec<Rules>, Error> {
        let prompt = self.ctx_prompt();
        let env = self.env(cwd, for_path, home, Some(&prompt))?;
        let mut out = Vec::new();
        for agent in Agent::ALL {
            let rules = ctx_agents::read(agent, &env);
            let found = match agent {
                Agent::Ctx => rules.pieces.len() > 1 || !rules.not_loaded.is_empty(),
                _ => rules.found(),
            };
            if found {
                out.push(rules);
            }
        }
        Ok(out)
    }

    /// The rule diagnostics of the agents' rule file `file` (as written: relative to the
    /// workspace root, or absolute inside it; a link is named by its own name, as the agents
    /// find it), as every agent that reads it reads it from the
    /// folder it belongs to ([`ctx_agents::rule_file_folder`]), by line and column; `None`
    /// when no agent reads a file of that name ([`ctx_agents::is_rule_file`]) or it does not
    /// lie in the workspace (the sandbox's refusal is the assembly's to report). ctx's own
    /// rules are ctx documents and are not linted here.
    pub fn rule_file_diagnostics(
        &self,
        file: &str,
        home: &Home,
    ) -> Option<Vec<ctx_agents::Diagnostic>> {
        let location = self.sandbox().written_location(file, None).ok()?;
        if location.root() != RootId::WORKSPACE {
            return None;
        }
        let rel = location.path().as_str();
        if !ctx_agents::is_rule_file(rel) {
            return None;
        }
        let folder = ctx_agents::rule_file_folder(rel);
        let cwd = if folder.is_empty() { "." } else { folder };
        let env = self.env(cwd, None, home, None).ok()?;
        let mut out = Vec::new();
        for agent in Agent::ALL.into_iter().filter(|a| *a != Agent::Ctx) {
            let rules = ctx_agents::read(agent, &env);
            out.extend(ctx_agents::lint::for_file(&rules.diagnostics, rel).cloned());
        }
        ctx_agents::lint::sort_and_dedup(&mut out);
        Some(out)
    }

    /// ctx's own rules folder, assembled as `ctx system-prompt` assembles it.
    fn ctx_prompt(&self) -> CtxPrompt {
        match self.system_prompt(None, &[]) {
            Ok(prompt) => {
                let rules = prompt
                    .rules
                    .iter()
                    .map(|r| {
                        let errors = r
                            .assembly
                            .diagnostics
                            .iter()
                            .filter(|d| d.code.severity() == ctx_diagnostics::Severity::Error)
                            .count();
                        CtxRule::new(r.path.clone(), r.assembly.content.clone(), errors)
                    })
                    .collect();
                CtxPrompt::new(prompt.rules_dir, rules, Vec::new(), prompt.runtime)
            }
            Err(_) => CtxPrompt::new(None, Vec::new(), Vec::new(), self.runtime_context()),
        }
    }
}
