//! Windsurf / Devin Desktop (documented: docs.devin.ai/desktop/cascade/memories and
//! agents-md; never observed, closed source): the user's
//! `~/.codeium/windsurf/memories/global_rules.md` (6 000 characters); the `.md` rules of
//! `.devin/rules` (preferred) and `.windsurf/rules` in every folder from the git root down
//! to the working folder (12 000 characters each), each by its `trigger:` (`always_on`,
//! `glob` with `globs:`, `model_decision` with a `description`, `manual`); the legacy
//! `.windsurfrules` of the working folder; `AGENTS.md` (any case) from the git root down to
//! the working folder always, those of subfolders when a file there is worked on.
//!
//! The wrapper is the best-known form of Cascade's prompt (`<user_rules>`, `<MEMORY[…]>`),
//! not verified; where the documentation is silent (a rule without `trigger:`) ctx says
//! which reading it takes in docs/agents.md.

use ctx_diagnostics::Code;

use crate::agent::Agent;
use crate::dialect::modes::{self, Mode};
use crate::env::{Env, is_within, join, parent, shown_dir};
use crate::front::Front;
use crate::lint::Diagnostic;
use crate::model::{Placement, Reason, Rules, Segment, Why};
use crate::reader::{Reader, View};

/// Windsurf's reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Windsurf;

/// Characters of one workspace rule file Windsurf reads.
const RULE_CAP: u64 = 12_000;
/// Characters of `global_rules.md` Windsurf reads.
const GLOBAL_CAP: u64 = 6_000;

const USER_RULES_HEAD: &str = "The following are user-defined rules that you MUST ALWAYS FOLLOW WITHOUT ANY EXCEPTION. These rules take precedence over any following instructions.\nReview them carefully and always take them into account when you generate responses and code:";

impl Reader for Windsurf {
    fn agent(&self) -> Agent {
        Agent::Windsurf
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Windsurf);
        if let Some(home) = env.home_place(".codeium/windsurf") {
            let rel = "memories/global_rules.md";
            modes::plain(
                &mut view,
                &home,
                rel,
                (Why::Global, Placement::System),
                (Agent::Windsurf, Some(GLOBAL_CAP)),
            );
        }
        let project = env.project_place();
        let root = env.marked_root(&[".git".to_owned()]).unwrap_or_else(|| env.cwd.clone());
        let chain: Vec<String> =
            env.cwd_chain().into_iter().filter(|d| d.len() >= root.len()).collect();
        // The rules folders of the subfolders too ("all .windsurf/rules directories in the
        // current workspace and its subdirectories"): those down to the file worked on; a
        // note says so when there is none.
        let mut rule_dirs = chain.clone();
        rule_dirs.extend(env.lazy_dirs());
        if env.for_path.is_none() {
            view.note("Windsurf also reads the .windsurf/rules and .devin/rules of the subfolders of the working folder: name a file with --for to see those down to it");
        }
        for dir in &rule_dirs {
            let devin = modes::files_of(
                &mut view,
                &project,
                &join(dir, ".devin/rules"),
                &[".md"],
                Agent::Windsurf,
            );
            let windsurf = modes::files_of(
                &mut view,
                &project,
                &join(dir, ".windsurf/rules"),
                &[".md"],
                Agent::Windsurf,
            );
            let name = |rel: &str| rel.rsplit('/').next().unwrap_or(rel).to_owned();
            let preferred: Vec<String> = devin.iter().map(|r| name(r)).collect();
            let mut rules = devin.clone();
            for rel in windsurf {
                match devin.iter().find(|d| name(d) == name(&rel)) {
                    Some(by) if preferred.contains(&name(&rel)) => {
                        view.not_file(rel, Reason::Shadowed { by: by.clone() })
                    }
                    _ => rules.push(rel),
                }
            }
            for rel in rules {
                if let Some(rule) =
                    modes::read_rule(&mut view, &project, &rel, Agent::Windsurf, &mode_of)
                {
                    modes::place(
                        env,
                        &mut view,
                        &project,
                        rule,
                        &root,
                        (Agent::Windsurf, Some(RULE_CAP)),
                    );
                }
            }
        }
        let legacy = join(&env.cwd, ".windsurfrules");
        modes::plain(
            &mut view,
            &project,
            &legacy,
            (Why::Always, Placement::System),
            (Agent::Windsurf, Some(RULE_CAP)),
        );
        for dir in &chain {
            if let Some(rel) = modes::agents_md(env, dir) {
                let why = if *dir == env.cwd {
                    Why::Always
                } else {
                    Why::Ancestor { dir: shown_dir(dir).to_owned() }
                };
                modes::plain(
                    &mut view,
                    &project,
                    &rel,
                    (why, Placement::System),
                    (Agent::Windsurf, None),
                );
            }
        }
        nested(env, &mut view, &chain);
        view.note("Windsurf's system rules (/etc/windsurf/rules, deployed by an administrator) and its memories lie outside the project and were not looked at");
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let memory = |p: &crate::model::Piece| {
            let name = if p.why == Why::Global { "user_global".to_owned() } else { p.path.clone() };
            format!("<MEMORY[{name}]>\n{}\n</MEMORY[{name}]>", p.text)
        };
        let mut out = Vec::new();
        let always: Vec<String> = rules
            .pieces
            .iter()
            .filter(|p| p.placement == Placement::System && p.why != Why::Listed)
            .map(memory)
            .collect();
        out.extend(Segment::joined(Placement::System, always, "\n", |s| {
            format!("<user_rules>\n{USER_RULES_HEAD}\n{s}\n</user_rules>")
        }));
        let listed: Vec<String> = rules
            .pieces
            .iter()
            .filter(|p| p.why == Why::Listed)
            .map(|p| format!("<rule path=\"{}\">{}</rule>", p.abs, p.text))
            .collect();
        out.extend(Segment::joined(Placement::System, listed, "\n", |s| {
            format!("<model_decision_rules>\n{s}\n</model_decision_rules>")
        }));
        out.extend(rules.later(memory));
        out
    }
}

/// The mode of a rule by its `trigger:`; a rule without front matter or `trigger:` is read
/// as always on (the documentation is silent); an unknown trigger as manual, reported.
fn mode_of(view: &mut View, shown: &str, front: &Front<'_>) -> Option<Mode> {
    let trigger = front.get("trigger");
    let description =
        front.get("description").and_then(|v| v.as_str()).map(str::trim).unwrap_or("");
    match trigger.and_then(|v| v.as_str()) {
        None if trigger.is_none() => Some(Mode::Always),
        Some("always_on") => Some(Mode::Always),
        Some("glob") => match modes::globs(view, Agent::Windsurf, shown, front, "globs") {
            Some(globs) => Some(Mode::Glob { key: "globs", globs }),
            None => {
                view.diag(
                    Diagnostic::new(
                        Code::RulesType,
                        Agent::Windsurf,
                        shown,
                        front.key_at("trigger"),
                        "`trigger: glob` without `globs`: the rule applies to no file",
                    )
                    .hint("add globs: \"src/**/*.ts\""),
                );
                view.not_file(
                    shown,
                    Reason::FrontMatter { message: "`trigger: glob` without `globs`".to_owned() },
                );
                None
            }
        },
        Some("model_decision") if !description.is_empty() => {
            Some(Mode::Described(description.to_owned()))
        }
        Some("model_decision") => {
            view.diag(Diagnostic::new(Code::RulesType, Agent::Windsurf, shown, front.key_at("trigger"),
                "`trigger: model_decision` without a `description`: the model has nothing to decide on").hint("add description: \"…\""));
            Some(Mode::Manual)
        }
        Some("manual") => Some(Mode::Manual),
        _ => {
            view.diag(Diagnostic::new(Code::RulesIgnored, Agent::Windsurf, shown, front.value_at("trigger"),
                "`trigger` is not one of always_on, glob, model_decision, manual: ctx takes the rule as manual")
                .hint("write trigger: always_on"));
            Some(Mode::Manual)
        }
    }
}

/// The `AGENTS.md` files of the subfolders of the working folder: "auto-glob for that
/// directory", sent when a file of it is worked on.
fn nested(env: &Env<'_>, view: &mut View, chain: &[String]) {
    crate::reader::survey_note(env, view);
    let project = env.project_place();
    let mut entries = Vec::new();
    for path in &env.survey().files {
        let dir = parent(path);
        let name = &path[dir.len() + usize::from(!dir.is_empty())..];
        if !name.eq_ignore_ascii_case("agents.md") || chain.iter().any(|d| d == dir) {
            continue;
        }
        let glob = format!("{dir}/**");
        let matched = env.for_path.as_deref().is_some_and(|f| is_within(f, dir));
        let reason = if matched {
            None
        } else if is_within(dir, &env.cwd) {
            Some(Reason::GlobNotMatched {
                key: "directory".to_owned(),
                globs: vec![glob.clone()],
                file: env.for_path.clone(),
            })
        } else {
            Some(Reason::WrongFolder { dir: shown_dir(dir).to_owned() })
        };
        entries.push((path.clone(), reason, glob));
    }
    for (path, reason, glob) in entries {
        match reason {
            Some(reason) => view.not_file(path, reason),
            None => {
                let why = Why::Glob {
                    key: "directory".to_owned(),
                    glob,
                    file: env.for_path.clone().unwrap_or_default(),
                };
                modes::plain(
                    view,
                    &project,
                    &path,
                    (why, Placement::Later),
                    (Agent::Windsurf, None),
                );
            }
        }
    }
}
