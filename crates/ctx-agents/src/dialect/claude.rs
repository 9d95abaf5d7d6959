//! Claude Code (2.1.332, observed): `~/.claude/CLAUDE.md` and `~/.claude/rules/`, then in
//! every folder from the top down to the working folder `CLAUDE.md`, `.claude/CLAUDE.md`,
//! the rules of `.claude/rules/` without `paths:`, and `CLAUDE.local.md`; each followed by
//! its imports. Rules with `paths:` and the files of folders below the working folder load
//! later, when a file they cover is read (`--for`).
//!
//! Sent as the first user message, in one `<system-reminder>`; what loads later comes in a
//! `<system-reminder>` of its own per file, without a label.

use std::collections::HashSet;

use crate::agent::Agent;
use crate::dialect::claude_load::{self, Load, Memory, Paths};
use crate::env::{Env, Place, is_within, join, shown_dir};
use crate::front;
use crate::model::{Placement, Reason, Rules, Scope, Segment, Why};
use crate::read::File;
use crate::reader::{Reader, View, above_root_note};

/// Claude Code's reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Claude;

/// The text before the files (`MEMORY_INSTRUCTION_PROMPT`).
const PROMPT: &str = "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.";

/// A rule with `paths:`, kept for when a file is read.
struct Conditional {
    /// `None` for the project, the home folder's key for the user's own.
    home: Option<&'static str>,
    location: ctx_fs::Location,
    shown: String,
    /// The folder its globs are relative to (the folder holding `.claude/`; the working
    /// folder for the user's rules).
    base: String,
    paths: Paths,
    file: File,
}

impl Reader for Claude {
    fn agent(&self) -> Agent {
        Agent::Claude
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Claude);
        let project = env.project_place();
        let mut keys = vec![env.abs(&env.cwd)];
        if let Some(root) = env.marked_root(&[".git".to_owned()]) {
            keys.push(env.abs(&root));
        }
        let approved = env.home().claude_external_approved(&keys);
        let mut load = Load {
            env,
            processed: HashSet::new(),
            approved,
            placement: Placement::User,
            chain: Vec::new(),
        };
        let mut conditional = Vec::new();
        let user = env.home_place(".claude");
        if let Some(user) = &user {
            memory(&mut load, &mut view, user, "CLAUDE.md", Scope::User, Why::Global);
            rules_dir(
                &mut load,
                &mut view,
                (user, Some(".claude")),
                "rules",
                Why::Global,
                &env.cwd,
                &mut conditional,
            );
        }
        view.note(above_root_note(
            "CLAUDE.md, .claude/CLAUDE.md, .claude/rules/ and CLAUDE.local.md",
        ));
        let chain = env.cwd_chain();
        let fallback = !chain
            .iter()
            .any(|d| env.lists(d, "CLAUDE.md") || env.lists(&join(d, ".claude"), "CLAUDE.md"))
            && chain.iter().any(|d| env.lists(d, "AGENTS.md"));
        if fallback {
            view.note("no CLAUDE.md from the workspace root to the working folder: Claude Code 2.1.277 and later read AGENTS.md in its place (its changelog; not observed)");
        }
        for dir in &chain {
            let why = if *dir == env.cwd {
                Why::Always
            } else {
                Why::Ancestor { dir: shown_dir(dir).to_owned() }
            };
            let main = if fallback { "AGENTS.md" } else { "CLAUDE.md" };
            memory(&mut load, &mut view, &project, &join(dir, main), Scope::Project, why.clone());
            memory(
                &mut load,
                &mut view,
                &project,
                &join(dir, ".claude/CLAUDE.md"),
                Scope::Project,
                why.clone(),
            );
            rules_dir(
                &mut load,
                &mut view,
                (&project, None),
                &join(dir, ".claude/rules"),
                why.clone(),
                dir,
                &mut conditional,
            );
            memory(
                &mut load,
                &mut view,
                &project,
                &join(dir, "CLAUDE.local.md"),
                Scope::Local,
                why,
            );
        }
        lazy(env, &mut view, &load.processed, conditional);
        elsewhere(env, &mut view, &chain, fallback);
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let mut out = Vec::new();
        let blocks: Vec<String> = rules
            .pieces
            .iter()
            .filter(|p| p.placement == Placement::User)
            .map(|p| format!("Contents of {} ({}):\n\n{}", p.abs, label(p.scope), p.text))
            .collect();
        out.extend(Segment::joined(Placement::User, blocks, "\n\n", |s| {
            format!("<system-reminder>\n{PROMPT}\n\n{s}\n</system-reminder>")
        }));
        out.extend(rules.later(|p| {
            format!("<system-reminder>\nContents of {}:\n\n{}\n</system-reminder>", p.abs, p.text)
        }));
        out
    }
}

/// How Claude Code labels a file of each scope (`getClaudeMds`).
fn label(scope: Scope) -> &'static str {
    match scope {
        Scope::Project => "project instructions, checked into the codebase",
        Scope::Local => "user's private project instructions, not checked in",
        Scope::User => "user's private global instructions for all projects",
    }
}

/// Loads the memory file `rel` of `place`, if there is one.
fn memory(
    load: &mut Load<'_>,
    view: &mut View,
    place: &Place<'_>,
    rel: &str,
    scope: Scope,
    why: Why,
) {
    if let Some(location) = place.location(rel) {
        load.file(view, Memory { place, location, scope, why, depth: 0 });
    } else if let Some(reason) = place.refusal(rel) {
        view.not_file(place.shown(rel), reason);
    }
}

/// The rules of the folder `rel` of `place` (every `.md` file below it, by name): those
/// without `paths:` loaded now, the others kept in `conditional`.
fn rules_dir(
    load: &mut Load<'_>,
    view: &mut View,
    (place, home): (&Place<'_>, Option<&'static str>),
    rel: &str,
    why: Why,
    base: &str,
    conditional: &mut Vec<Conditional>,
) {
    let Some(dir) = place.location(rel) else { return };
    let Ok(walk) = place.sandbox.walk(&dir) else { return };
    if walk.truncated {
        view.note(format!(
            "{}: the walk of the rules folder stopped at its limit; the rest was not looked at",
            place.shown(rel)
        ));
    }
    crate::reader::skipped(view, place, &walk, &[".md"]);
    let scope = if home.is_some() { Scope::User } else { Scope::Project };
    for entry in walk.files().filter(|e| e.path.as_str().ends_with(".md")) {
        let memory =
            Memory { place, location: entry.location.clone(), scope, why: why.clone(), depth: 0 };
        let Some((shown, abs, file)) = load.open(view, &memory) else { continue };
        claude_load::front_failed(view, &shown, &file.text);
        let (front, _) = front::read_claude(&file.text);
        match claude_load::paths(view, &shown, &front) {
            Some(paths) => {
                // Not loaded now: it may load later, in a load of its own.
                load.processed.remove(&abs);
                let location = entry.location.clone();
                conditional.push(Conditional {
                    home,
                    location,
                    shown,
                    base: base.to_owned(),
                    paths,
                    file,
                });
            }
            None => {
                load.loaded(view, memory, &shown, &abs, &file);
            }
        }
    }
}

/// What loads when the file worked on is read: the user's rules whose `paths:` match it,
/// the files of the folders below the working folder down to it, and the rules of the
/// working folder's chain whose `paths:` match it. Without a file, the rules with `paths:`
/// are listed as not loaded.
fn lazy(
    env: &Env<'_>,
    view: &mut View,
    processed: &HashSet<String>,
    conditional: Vec<Conditional>,
) {
    let Some(file) = env.for_path.clone() else {
        for rule in conditional {
            view.not_file(
                rule.shown,
                Reason::GlobNotMatched {
                    key: "paths".to_owned(),
                    globs: rule.paths.globs,
                    file: None,
                },
            );
        }
        return;
    };
    let mut load = Load {
        env,
        processed: processed.clone(),
        approved: false,
        placement: Placement::Later,
        chain: Vec::new(),
    };
    let project = env.project_place();
    let user = env.home_place(".claude");
    let (users, projects): (Vec<Conditional>, Vec<Conditional>) =
        conditional.into_iter().partition(|c| c.home.is_some());
    for rule in users {
        matched(&mut load, view, user.as_ref().unwrap_or(&project), rule, &file);
    }
    let mut nested = Vec::new();
    for dir in env.lazy_dirs() {
        let why = Why::Lazy { dir: dir.clone() };
        memory(&mut load, view, &project, &join(&dir, "CLAUDE.md"), Scope::Project, why.clone());
        memory(
            &mut load,
            view,
            &project,
            &join(&dir, ".claude/CLAUDE.md"),
            Scope::Project,
            why.clone(),
        );
        memory(
            &mut load,
            view,
            &project,
            &join(&dir, "CLAUDE.local.md"),
            Scope::Local,
            why.clone(),
        );
        rules_dir(
            &mut load,
            view,
            (&project, None),
            &join(&dir, ".claude/rules"),
            why,
            &dir,
            &mut nested,
        );
        for rule in nested.drain(..) {
            matched(&mut load, view, &project, rule, &file);
        }
    }
    for rule in projects {
        matched(&mut load, view, &project, rule, &file);
    }
}

/// Loads a rule with `paths:` when one of its globs matches the file worked on.
fn matched(load: &mut Load<'_>, view: &mut View, place: &Place<'_>, rule: Conditional, file: &str) {
    let hit = claude_load::relative_to(file, &rule.base)
        .and_then(|rel| rule.paths.matcher.first_match(&rel).map(str::to_owned));
    let Some(glob) = hit else {
        view.not_file(
            rule.shown,
            Reason::GlobNotMatched {
                key: "paths".to_owned(),
                globs: rule.paths.globs,
                file: Some(file.to_owned()),
            },
        );
        return;
    };
    let why = Why::Glob { key: "paths".to_owned(), glob, file: file.to_owned() };
    let scope = if rule.home.is_some() { Scope::User } else { Scope::Project };
    let abs = crate::imports::abs_of(place.sandbox, &rule.location);
    if load.processed.contains(&abs) {
        return;
    }
    load.processed.insert(abs.clone());
    let memory = Memory { place, location: rule.location, scope, why, depth: 0 };
    load.loaded(view, memory, &rule.shown, &abs, &rule.file);
}

/// The memory files of other folders (found by one walk of the workspace): below the working
/// folder they load when a file there is read; elsewhere never. And the files of the chain
/// that Claude Code does not read.
fn elsewhere(env: &Env<'_>, view: &mut View, chain: &[String], fallback: bool) {
    let loaded: HashSet<String> = view.rules.pieces.iter().map(|p| p.path.clone()).collect();
    crate::reader::unread(env, view, chain, |_, path, dir, name, in_chain| match name {
        "CLAUDE.md" | "CLAUDE.local.md" if loaded.contains(path) || in_chain => None,
        "CLAUDE.md" | "CLAUDE.local.md" if is_within(dir, &env.cwd) => {
            Some(Reason::Lazy { dir: dir.to_owned() })
        }
        "CLAUDE.md" | "CLAUDE.local.md" => {
            Some(Reason::WrongFolder { dir: shown_dir(dir).to_owned() })
        }
        // Claude Code reads AGENTS.md only where no CLAUDE.md is: here one takes its place.
        "AGENTS.md" if in_chain && !fallback => {
            Some(Reason::Shadowed { by: "a CLAUDE.md of the working folder's chain".to_owned() })
        }
        _ if in_chain && !(fallback && name == "AGENTS.md") => Some(Reason::NotThisAgent),
        _ => None,
    });
}
