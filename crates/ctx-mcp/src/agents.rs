//! The coding agents' rules over MCP: the `rules` tool (one agent's view, or every agent's,
//! as `ctx rules --format json` gives it) and each agent's rule files of the workspace as
//! resources.
//!
//! The views are read through the context's sandbox only: the user's own agent folders
//! (`~/.claude` …) are not opened, so a client learns nothing of the home folder (docs/mcp.md
//! says so; `ctx rules` on the command line reads them).

use ctx::Context;
use ctx::agents::{Agent, Home, Reason, Rules};
use ctx::fs::{FileKind, Location, RootId};
use serde_json::{Map, Value, json};

/// The `rules` tool: `agent` (a name or `all`), optional `for` and `cwd`; `Err` is what is
/// wrong with the arguments (a tool error without a code).
pub(crate) fn rules_tool(ctx: &Context, args: &Map<String, Value>) -> Result<Value, String> {
    let name = match args.get("agent") {
        Some(Value::String(name)) => name.as_str(),
        None => "all",
        Some(_) => return Err("`agent` must be a string".to_owned()),
    };
    let text = |key: &str| match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(format!("`{key}` must be a string")),
    };
    let (for_path, cwd) = (text("for")?, text("cwd")?.unwrap_or("."));
    let home = Home::none();
    let fail = |err: ctx::Error| err.to_string();
    if name.eq_ignore_ascii_case("all") {
        let views = ctx.all_rules(cwd, for_path, &home).map_err(fail)?;
        let values: Vec<Value> = views.iter().map(ctx::agents::to_json).collect();
        return Ok(json!({ "agents": values }));
    }
    let Some(agent) = Agent::from_name(name) else {
        let names: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
        let message = format!("no agent `{name}` (expected one of: {}, all)", names.join(", "));
        return Err(message);
    };
    let view = ctx.rules_with(agent, cwd, for_path, &home).map_err(fail)?;
    Ok(ctx::agents::to_json(&view))
}

/// A rule file of an agent, as a resource: where it is, its length, and the agents that
/// read it from the workspace root.
pub(crate) struct RuleFile {
    pub(crate) location: Location,
    pub(crate) len: u64,
    pub(crate) agents: Vec<Agent>,
}

/// The rule files every agent reads (or names as its own and leaves out) from the workspace
/// root, ctx's own rules folder aside, in the order the agents meet them: only regular
/// files of the workspace that lie where their name says (a link is not served: its name
/// and its target differ).
pub(crate) fn rule_files(ctx: &Context) -> Vec<RuleFile> {
    let home = Home::none();
    let sandbox = ctx.sandbox();
    let mut out: Vec<RuleFile> = Vec::new();
    for agent in Agent::ALL.into_iter().filter(|a| *a != Agent::Ctx) {
        let Ok(rules) = ctx.rules_with(agent, ".", None, &home) else { continue };
        for path in files_of(&rules) {
            if let Some(known) = out.iter_mut().find(|f| f.location.path().as_str() == path) {
                if !known.agents.contains(&agent) {
                    known.agents.push(agent);
                }
                continue;
            }
            let Ok(location) = sandbox.resolve_in_workspace(path) else { continue };
            let Ok(stat) = sandbox.stat(&location) else { continue };
            if location.root() != RootId::WORKSPACE
                || location.path().as_str() != path
                || stat.kind != FileKind::File
            {
                continue;
            }
            out.push(RuleFile { location, len: stat.len, agents: vec![agent] });
        }
    }
    out
}

/// The workspace files of a view: its pieces, then the files it leaves out that are its own.
fn files_of(rules: &Rules) -> Vec<&str> {
    let pieces = rules.pieces.iter().map(|p| p.path.as_str());
    let left = rules.not_loaded.iter().filter(|n| {
        n.from.is_none() && !matches!(n.reason, Reason::NotThisAgent | Reason::Unreadable { .. })
    });
    let mut out: Vec<&str> = Vec::new();
    for path in pieces.chain(left.map(|n| n.path.as_str())) {
        let users = path.is_empty() || path.starts_with('~') || path.starts_with('$');
        if !users && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}
