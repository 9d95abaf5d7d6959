//! Agent Skills (the open specification, agentskills.io/specification): every `SKILL.md` of
//! a skill folder of `.claude/skills`, `.agents/skills`, `.github/skills`, `.gemini/skills`,
//! `.cursor/skills`, `.windsurf/skills`, `.cline/skills` and `.clinerules/skills`, in every
//! folder from the git root down to the working folder, and of the user's `~/.claude/skills`
//! and `~/.agents/skills`. Only the name and description reach the model up front
//! (progressive disclosure); the body is read when the skill is used. Each is checked against
//! the specification's rules (`E_RULES_SKILL`).

use ctx_diagnostics::Code;
use ctx_fs::FileKind;

use crate::agent::Agent;
use crate::env::{Env, Place, join};
use crate::front::{self, Front};
use crate::lint::{self, Diagnostic};
use crate::model::{Placement, Reason, Rules, Segment, Why};
use crate::read;
use crate::reader::{Reader, View};

/// The Agent Skills reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Skills;

/// The skill folders of a project folder, as the agents name them.
const PROJECT_DIRS: [&str; 8] = [
    ".claude/skills",
    ".agents/skills",
    ".github/skills",
    ".gemini/skills",
    ".cursor/skills",
    ".windsurf/skills",
    ".cline/skills",
    ".clinerules/skills",
];

impl Reader for Skills {
    fn agent(&self) -> Agent {
        Agent::Skills
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Skills);
        for key in [".claude", ".agents"] {
            if let Some(home) = env.home_place(key) {
                folder(&mut view, &home, "skills", Why::Global);
            }
        }
        let project = env.project_place();
        let root = env.marked_root(&[".git".to_owned()]).unwrap_or_else(|| env.cwd.clone());
        for dir in env.cwd_chain().into_iter().filter(|d| d.len() >= root.len()) {
            for skills in PROJECT_DIRS {
                let why =
                    if dir == env.cwd { Why::Listed } else { Why::Ancestor { dir: dir.clone() } };
                folder(&mut view, &project, &join(&dir, skills), why);
            }
        }
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let skills: Vec<String> = rules
            .pieces
            .iter()
            .map(|p| {
                format!(
                    "<skill>\n<name>{}</name>\n<description>{}</description>\n<location>{}</location>\n</skill>",
                    p.name.as_deref().unwrap_or_default(),
                    p.text,
                    p.abs
                )
            })
            .collect();
        Segment::joined(Placement::System, skills, "\n", |s| {
            format!("<available_skills>\n{s}\n</available_skills>")
        })
        .into_iter()
        .collect()
    }
}

/// The skills of the folder `dir` of `place`: each subfolder holding a `SKILL.md`.
fn folder(view: &mut View, place: &Place<'_>, dir: &str, why: Why) {
    if place.kind(dir) != Some(FileKind::Dir) {
        return;
    }
    let Some(location) = place.location(dir) else { return };
    let Ok(names) = place.sandbox.names(&location) else { return };
    let mut names = view.bounded(&place.shown(dir), names);
    names.sort();
    for name in names {
        let rel = join(dir, &format!("{name}/SKILL.md"));
        if place.kind(&join(dir, &name)) != Some(FileKind::Dir)
            || place.kind(&rel) != Some(FileKind::File)
        {
            continue;
        }
        skill(view, place, &rel, &name, why.clone());
    }
}

fn skill(view: &mut View, place: &Place<'_>, rel: &str, folder: &str, why: Why) {
    let shown = place.shown(rel);
    let file = match read::read(place, rel, &mut view.budget) {
        Ok(Some(file)) => file,
        Ok(None) => return,
        Err(reason) => return view.not_file(shown, reason),
    };
    view.diags(lint::hidden(Agent::Skills, &shown, &file.text, 1));
    let front = front::read(&file.text);
    if let Some(error) = &front.error {
        let then = "the agents cannot list the skill";
        return super::modes::unparsed(view, Agent::Skills, &shown, error, then);
    }
    let problems = check(&front, folder);
    let fatal = problems.iter().any(|(_, _, fatal)| *fatal);
    for (message, at, _) in problems {
        view.diag(
            Diagnostic::new(Code::RulesSkill, Agent::Skills, &shown, at, message)
                .hint("see agentskills.io/specification: name and description"),
        );
    }
    let name = front.get("name").and_then(|v| v.as_str()).unwrap_or(folder).to_owned();
    let description =
        front.get("description").and_then(|v| v.as_str()).unwrap_or("").trim().to_owned();
    if fatal {
        view.not_file(
            shown,
            Reason::FrontMatter { message: "no usable name or description".to_owned() },
        );
        return;
    }
    let piece = read::piece(place, rel, 1, why, Placement::System, description);
    view.piece(piece.named(name));
}

/// What breaks the specification's rules: a message, where, and whether the skill cannot be
/// listed at all (no name, no description).
pub(crate) fn check(front: &Front<'_>, folder: &str) -> Vec<(String, (u32, u32), bool)> {
    let mut out = Vec::new();
    if !front.present {
        out.push((
            "no front matter: a skill needs `name` and `description`".to_owned(),
            (1, 1),
            true,
        ));
        return out;
    }
    match front.get("name") {
        None => out.push((
            "no `name`: the specification requires one".to_owned(),
            (front.yaml_line, 1),
            true,
        )),
        Some(serde_json::Value::String(name)) => {
            let at = front.value_at("name");
            let len = name.chars().count();
            if len == 0 || len > 64 {
                out.push((format!("`name` is {len} characters; it must be 1 to 64"), at, len == 0));
            }
            if !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
                out.push((
                    format!("`name` `{name}` may hold only lower-case letters, digits and hyphens"),
                    at,
                    false,
                ));
            }
            if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
                out.push((
                    format!(
                        "`name` `{name}` must not start or end with a hyphen, nor hold two in a row"
                    ),
                    at,
                    false,
                ));
            }
            if name != folder {
                out.push((
                    format!("`name` `{name}` does not match its folder `{folder}`"),
                    at,
                    false,
                ));
            }
            let lower = name.to_lowercase();
            if lower.contains("anthropic") || lower.contains("claude") {
                out.push((format!("`name` `{name}` holds a word Anthropic reserves (anthropic, claude): its API refuses it"), at, false));
            }
        }
        Some(other) => out.push((
            format!("`name` is {}, not a string", front::type_name(other)),
            front.value_at("name"),
            true,
        )),
    }
    match front.get("description") {
        None => out.push((
            "no `description`: the specification requires one, and it is what the model sees"
                .to_owned(),
            (front.yaml_line, 1),
            true,
        )),
        Some(serde_json::Value::String(d)) => {
            let at = front.value_at("description");
            let len = d.trim().chars().count();
            if len == 0 {
                out.push(("`description` is empty".to_owned(), at, true));
            } else if len > 1024 {
                out.push((
                    format!("`description` is {len} characters; the limit is 1024"),
                    at,
                    false,
                ));
            }
            if d.contains('<') && d.contains('>') {
                out.push((
                    "`description` holds angle brackets (XML tags), which Anthropic's API refuses"
                        .to_owned(),
                    at,
                    false,
                ));
            }
        }
        Some(other) => out.push((
            format!("`description` is {}, not a string", front::type_name(other)),
            front.value_at("description"),
            true,
        )),
    }
    out
}
