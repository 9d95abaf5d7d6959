//! Cursor (documented: cursor.com/docs/rules; never observed, closed source): the `.mdc`
//! files of `.cursor/rules/` (any depth) of the folder Cursor opened (the working folder),
//! each by its front matter: `alwaysApply: true` always; `globs:` when a matching file is in
//! context; a `description` alone listed for the model to fetch; none of them only when
//! @-mentioned. `AGENTS.md` of the opened folder always, those of its subfolders when a file
//! there is worked on; the deprecated `.cursorrules` always. A `.md` file in `.cursor/rules`
//! is ignored (current docs).
//!
//! The wrapper is the best-known reconstruction of Cursor's prompt (`<rules>`,
//! `<always_applied_workspace_rules>` …), not verified.

use crate::agent::Agent;
use crate::dialect::modes::{self, Mode};
use crate::env::{Env, is_within, join, parent, shown_dir};
use crate::front::Front;
use crate::model::{Placement, Reason, Rules, Segment, Why};
use crate::reader::{Reader, View};

/// Cursor's reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor;

const RULES_HEAD: &str = "The rules section has a number of possible rules/memories/context that you should consider. In each subsection, we provide instructions about what information the subsection contains and how you should consider/follow the contents of the subsection.";

impl Reader for Cursor {
    fn agent(&self) -> Agent {
        Agent::Cursor
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Cursor);
        let project = env.project_place();
        let cwd = env.cwd.clone();
        let dir = join(&cwd, ".cursor/rules");
        for rel in modes::files_of(&mut view, &project, &dir, &[".mdc"], Agent::Cursor) {
            if let Some(rule) = modes::read_rule(&mut view, &project, &rel, Agent::Cursor, &mode_of)
            {
                modes::place(env, &mut view, &project, rule, &cwd, (Agent::Cursor, None));
            }
        }
        // A subfolder's own `.cursor/rules` applies when a file of that folder is worked on
        // (cursor.com/docs/rules, "Nested rules"), its globs from that folder.
        for dir in env.lazy_dirs() {
            let nested = join(&dir, ".cursor/rules");
            for rel in modes::files_of(&mut view, &project, &nested, &[".mdc"], Agent::Cursor) {
                if let Some(rule) =
                    modes::read_rule(&mut view, &project, &rel, Agent::Cursor, &mode_of)
                {
                    modes::place(env, &mut view, &project, rule, &dir, (Agent::Cursor, None));
                }
            }
        }
        if env.for_path.is_none() {
            view.note("Cursor also applies the .cursor/rules of a subfolder when a file there is worked on: name one with --for to see them");
        }
        if let Some(rel) = modes::agents_md(env, &cwd) {
            modes::plain(
                &mut view,
                &project,
                &rel,
                (Why::Always, Placement::System),
                (Agent::Cursor, None),
            );
        }
        let legacy = join(&cwd, ".cursorrules");
        modes::plain(
            &mut view,
            &project,
            &legacy,
            (Why::Always, Placement::System),
            (Agent::Cursor, None),
        );
        nested(env, &mut view);
        view.note("Cursor's user rules live in its settings, not in files; team rules on its dashboard: neither is shown");
        view.note("Cursor reads the folder it opened (the working folder): rule files above it are not read");
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let always: Vec<String> = rules
            .pieces
            .iter()
            .filter(|p| p.placement == Placement::System && p.why != Why::Listed)
            .map(|p| {
                format!(
                    "<always_applied_workspace_rule name=\"{}\">{}</always_applied_workspace_rule>",
                    p.abs, p.text
                )
            })
            .collect();
        let listed: Vec<String> = rules
            .pieces
            .iter()
            .filter(|p| p.why == Why::Listed)
            .map(|p| format!("<agent_requestable_workspace_rule fullPath=\"{}\">{}</agent_requestable_workspace_rule>", p.abs, p.text))
            .collect();
        let mut out = Vec::new();
        if !always.is_empty() || !listed.is_empty() {
            let mut text = format!("<rules>\n{RULES_HEAD}\n");
            if !always.is_empty() {
                text.push_str(&format!("\n<always_applied_workspace_rules description=\"These are workspace-level rules that the agent must always follow.\">\n{}\n</always_applied_workspace_rules>", always.join("\n")));
            }
            if !listed.is_empty() {
                text.push_str(&format!("\n<agent_requestable_workspace_rules description=\"These are workspace-level rules that the agent should follow. Use the Read tool to fetch the full rule if it seems relevant.\">\n{}\n</agent_requestable_workspace_rules>", listed.join("\n")));
            }
            text.push_str("\n</rules>");
            out.push(Segment { placement: Placement::System, text });
        }
        out.extend(
            rules
                .later(|p| format!("<attached_rule name=\"{}\">{}</attached_rule>", p.abs, p.text)),
        );
        out
    }
}

/// The mode of a `.mdc` rule (docs' matrix): `alwaysApply: true` wins, then `globs`, then a
/// `description`, else manual.
fn mode_of(view: &mut View, shown: &str, front: &Front<'_>) -> Option<Mode> {
    if modes::boolean(view, Agent::Cursor, shown, front, "alwaysApply") {
        return Some(Mode::Always);
    }
    if let Some(globs) = modes::globs(view, Agent::Cursor, shown, front, "globs") {
        return Some(Mode::Glob { key: "globs", globs });
    }
    match front.get("description").and_then(|v| v.as_str()).map(str::trim) {
        Some(d) if !d.is_empty() => Some(Mode::Described(d.to_owned())),
        _ => Some(Mode::Manual),
    }
}

/// The `AGENTS.md` files of the subfolders of the opened folder: sent when a file of their
/// folder is worked on, else listed as loaded then.
fn nested(env: &Env<'_>, view: &mut View) {
    crate::reader::survey_note(env, view);
    let project = env.project_place();
    let lazy = env.lazy_dirs();
    let mut entries = Vec::new();
    for path in &env.survey().files {
        let dir = parent(path);
        let name = &path[dir.len() + usize::from(!dir.is_empty())..];
        if !name.eq_ignore_ascii_case("agents.md") || dir == env.cwd {
            continue;
        }
        if lazy.iter().any(|d| d == dir) {
            entries.push((path.clone(), None, dir.to_owned()));
        } else if is_within(dir, &env.cwd) {
            entries.push((path.clone(), Some(Reason::Lazy { dir: dir.to_owned() }), String::new()));
        } else {
            entries.push((
                path.clone(),
                Some(Reason::WrongFolder { dir: shown_dir(dir).to_owned() }),
                String::new(),
            ));
        }
    }
    for (path, reason, dir) in entries {
        match reason {
            Some(reason) => view.not_file(path, reason),
            None => modes::plain(
                view,
                &project,
                &path,
                (Why::Lazy { dir }, Placement::Later),
                (Agent::Cursor, None),
            ),
        }
    }
}
