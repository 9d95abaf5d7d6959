//! Cline (CLI 3.0.65 on the rules SDK, observed): in the working folder only, `AGENTS.md`
//! ("Workspace AGENTS.md"), `.clinerules` (a file, or the `.md`, `.markdown` and `.txt` files
//! of that folder, not of its subfolders) and `.cline/rules`; in the user's home folder
//! `~/.agents/AGENTS.md`, `~/.cline/rules` and `~/Documents/Cline/Rules`. Each rule is named
//! (its front matter's `name`, else its file name without extension), rules of one name
//! collapse to the first, and all are sent sorted by name at the end of the system message,
//! `# Rules` then `## NAME` and the text, trimmed, front matter taken off. `paths:` is not
//! applied (the rule is always sent); `.cursorrules`, `.windsurfrules`, `.cursor/rules` and
//! `CLAUDE.md` are not read.

use ctx_diagnostics::Code;
use ctx_fs::FileKind;

use crate::agent::Agent;
use crate::env::{Env, Place, join};
use crate::front;
use crate::lint::{self, Diagnostic};
use crate::model::{Piece, Placement, Reason, Rules, Segment, Why};
use crate::read;
use crate::reader::{Reader, View, others};

/// Cline's reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cline;

/// Extensions of the files of a rules folder.
const EXTENSIONS: [&str; 3] = [".md", ".markdown", ".txt"];

/// Files of other agents Cline (SDK) no longer reads in the working folder.
const NOT_READ: [&str; 4] = [".cursorrules", ".windsurfrules", "CLAUDE.md", "GEMINI.md"];

impl Reader for Cline {
    fn agent(&self) -> Agent {
        Agent::Cline
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Cline);
        let project = env.project_place();
        let cwd = env.cwd.clone();
        let mut found: Vec<Piece> = Vec::new();
        let agents = join(&cwd, "AGENTS.md");
        if env.lists(&cwd, "AGENTS.md") {
            rule(
                &mut view,
                &mut found,
                &project,
                &agents,
                Some("Workspace AGENTS.md"),
                Why::Always,
            );
        }
        let clinerules = join(&cwd, ".clinerules");
        match project.kind(&clinerules) {
            Some(FileKind::File) => {
                rule(&mut view, &mut found, &project, &clinerules, None, Why::Always);
            }
            Some(FileKind::Dir) => {
                folder(&mut view, &mut found, &project, &clinerules, Why::Always)
            }
            _ => {
                if let Some(reason) = project.refusal(&clinerules) {
                    view.not_file(clinerules, reason);
                }
            }
        }
        if project.kind(&join(&cwd, ".cline/rules")) == Some(FileKind::Dir) {
            folder(&mut view, &mut found, &project, &join(&cwd, ".cline/rules"), Why::Always);
        }
        if let Some(home) = env.home_place(".agents")
            && home.kind("AGENTS.md") == Some(FileKind::File)
        {
            {
                rule(
                    &mut view,
                    &mut found,
                    &home,
                    "AGENTS.md",
                    Some("Global AGENTS.md"),
                    Why::Global,
                );
            }
        }
        if let Some(home) = env.home_place(".cline")
            && home.kind("rules") == Some(FileKind::Dir)
        {
            {
                folder(&mut view, &mut found, &home, "rules", Why::Global);
            }
        }
        if let Some(home) = env.home_place("Documents/Cline/Rules") {
            folder(&mut view, &mut found, &home, "", Why::Global);
        }
        found.sort_by_key(|p| p.name.clone().unwrap_or_default().to_lowercase());
        for piece in found {
            view.piece(piece);
        }
        for name in NOT_READ {
            let rel = join(&cwd, name);
            if project.kind(&rel).is_some() {
                view.not_file(rel, Reason::NotThisAgent);
            }
        }
        if project.kind(&join(&cwd, ".cursor/rules")) == Some(FileKind::Dir) {
            view.not_file(join(&cwd, ".cursor/rules"), Reason::NotThisAgent);
        }
        others(env, &mut view, std::slice::from_ref(&cwd), &["AGENTS.md".to_owned()], false);
        view.note("Cline reads the working folder only: no folder above it, none below it");
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let sections = rules
            .pieces
            .iter()
            .map(|p| format!("## {}\n{}", p.name.as_deref().unwrap_or(&p.path), p.text));
        Segment::joined(Placement::System, sections.collect(), "\n\n", |s| format!("# Rules\n{s}"))
            .into_iter()
            .collect()
    }
}

/// The rule files of the folder `dir` of `place` (its files only, by extension).
fn folder(view: &mut View, found: &mut Vec<Piece>, place: &Place<'_>, dir: &str, why: Why) {
    let Some(location) = place.location(dir) else { return };
    let Ok(names) = place.sandbox.names(&location) else { return };
    let names = view.bounded(&place.shown(dir), names);
    for name in names {
        let rel = join(dir, &name);
        let kind = place.kind(&rel);
        if kind == Some(FileKind::Dir) {
            view.not_file(place.shown(&rel), Reason::WrongFolder { dir: place.shown(&rel) });
            continue;
        }
        if !EXTENSIONS.iter().any(|e| name.ends_with(e)) || kind != Some(FileKind::File) {
            continue;
        }
        rule(view, found, place, &rel, None, why.clone());
    }
}

/// Reads one rule; `fixed` is the name Cline gives it whatever it holds.
fn rule(
    view: &mut View,
    found: &mut Vec<Piece>,
    place: &Place<'_>,
    rel: &str,
    fixed: Option<&str>,
    why: Why,
) {
    let shown = place.shown(rel);
    let file = match read::read(place, rel, &mut view.budget) {
        Ok(Some(file)) => file,
        Ok(None) => return,
        Err(reason) => return view.not_file(shown, reason),
    };
    let front = front::read(&file.text);
    if let Some(error) = &front.error {
        return super::modes::unparsed(
            view,
            Agent::Cline,
            &shown,
            error,
            "Cline does not load the rule",
        );
    }
    for key in ["disabled", "enabled"] {
        match front.get(key) {
            None | Some(serde_json::Value::Bool(_)) => {}
            Some(other) => {
                let kind = front::type_name(other);
                view.not_file(
                    &shown,
                    Reason::FrontMatter { message: format!("`{key}` is {kind}") },
                );
                view.diag(super::modes::wrong_type(
                    Agent::Cline,
                    &shown,
                    &front,
                    key,
                    format!("`{key}` is {kind}, not a boolean; Cline does not load the rule"),
                    format!("write {key}: true or {key}: false"),
                ));
                return;
            }
        }
    }
    let off = front.get("disabled").and_then(serde_json::Value::as_bool) == Some(true)
        || front.get("enabled").and_then(serde_json::Value::as_bool) == Some(false);
    if off {
        view.not_file(&shown, Reason::Manual);
        return;
    }
    if front.get("paths").is_some() {
        view.diag(Diagnostic::new(Code::RulesIgnored, Agent::Cline, &shown, front.key_at("paths"),
            "`paths` is not applied by Cline's rules loader: the rule is sent whatever file is worked on")
            .hint("keep rules that apply to some files only for agents that scope them"));
    }
    let text = front.body.trim().to_owned();
    if text.is_empty() {
        view.not_file(shown, Reason::Empty);
        return;
    }
    view.diags(lint::hidden(Agent::Cline, &shown, &file.text, 1));
    let name = match fixed {
        Some(name) => name.to_owned(),
        None => {
            front.get("name").and_then(|v| v.as_str()).map(str::to_owned).unwrap_or_else(|| {
                let file_name = rel.rsplit('/').next().unwrap_or(rel);
                match file_name.rfind('.') {
                    Some(i) if i > 0 => file_name[..i].to_owned(),
                    _ => file_name.to_owned(),
                }
            })
        }
    };
    if let Some(first) =
        found.iter().find(|p| p.name.as_deref().map(str::to_lowercase) == Some(name.to_lowercase()))
    {
        view.not_file(shown, Reason::Shadowed { by: first.path.clone() });
        return;
    }
    let piece = read::piece(place, rel, front.body_line, why, Placement::System, text);
    found.push(piece.named(name));
}
