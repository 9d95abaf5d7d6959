//! Every coding agent's rules, one view: which rule files Claude Code, Codex CLI, Gemini CLI,
//! Cursor, GitHub Copilot CLI, Windsurf and Cline load for a working folder and a file, in
//! what order, wrapped how, cut where; and what they leave out, and why.
//!
//! Properties:
//! - one [`Reader`] per agent (and Agent Skills, and ctx's own rules folder), each following
//!   the agent's observed behaviour where it was observed, its documentation otherwise
//!   (docs/agents.md gives every rule with its source);
//! - every byte is read through a [`ctx_fs::Sandbox`]: the project's, or one on a folder of
//!   the user's own (`~/.claude`), never one a repository names; an import that leaves the
//!   roots is named, never read, and nothing tells whether it exists;
//! - bounded: files, bytes and imports per view ([`Bounds`]), walks within the sandbox's
//!   limits, front matter within ctx's limits, globs counted before they are compiled.
//!
//! # Example
//!
//! ```no_run
//! use ctx_agents::{Agent, Env, Home};
//!
//! let sandbox = ctx_fs::Sandbox::builder("/work/project").open(cap_std::ambient_authority())?;
//! let home = Home::none();
//! let env = Env::new(&sandbox, &home).cwd("src")?.for_path("src/main.rs")?;
//! let rules = ctx_agents::read(Agent::Claude, &env);
//! for piece in &rules.pieces {
//!     println!("{} ({} tokens)", piece.path, piece.tokens);
//! }
//! print!("{}", ctx_agents::text(&rules));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod agent;
pub mod dialect;
mod env;
mod front;
mod glob;
mod imports;
pub mod lint;
mod markdown;
mod model;
mod read;
mod reader;
mod show;

pub use agent::{Agent, is_rule_file, rule_file_folder};
pub use env::{Bounds, CtxPrompt, CtxRule, Env, Error, Home};
pub use lint::Diagnostic;
pub use model::{Cut, NotLoaded, Piece, Placement, Reason, Rules, Scope, Segment, Unit, Why};
pub use reader::Reader;
pub use show::{reason_text, report, to_json, why_text};

/// The reader of `agent`.
pub fn reader(agent: Agent) -> &'static dyn Reader {
    match agent {
        Agent::Codex => &dialect::codex::Codex,
        Agent::Gemini => &dialect::gemini::Gemini,
        Agent::Copilot => &dialect::copilot::Copilot,
        Agent::Cline => &dialect::cline::Cline,
        Agent::Cursor => &dialect::cursor::Cursor,
        Agent::Windsurf => &dialect::windsurf::Windsurf,
        Agent::Skills => &dialect::skills::Skills,
        Agent::Ctx => &dialect::ctx::Ctx,
        Agent::Claude => &dialect::claude::Claude,
    }
}

/// What `agent` loads in `env`.
pub fn read(agent: Agent, env: &Env<'_>) -> Rules {
    reader(agent).read(env)
}

/// What the model receives from `rules`, as the agent sends it: the parts of the request
/// that carry rule text, in order.
pub fn render(rules: &Rules) -> Vec<Segment> {
    reader(rules.agent).render(rules)
}

/// The same as one text: the parts joined by a blank line.
pub fn text(rules: &Rules) -> String {
    let parts: Vec<String> = render(rules).into_iter().map(|s| s.text).collect();
    parts.join("\n\n")
}
