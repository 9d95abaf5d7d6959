//! What the editors' rule folders share (Cursor's `.cursor/rules`, Windsurf's
//! `.windsurf/rules`): each file's front matter picks a mode (always, when a file matching a
//! glob is worked on, when the model decides from a description, only when mentioned), read
//! leniently (an unquoted `globs: *.ts` is read as a glob, as both agents' own rule templates
//! write it).

use ctx_diagnostics::Code;
use ctx_fs::FileKind;

use crate::agent::Agent;
use crate::env::{Env, Place, join};
use crate::front::{self, Front};
use crate::glob::{Matcher, Style};
use crate::lint::{self, Diagnostic};
use crate::model::{Cut, Piece, Placement, Reason, Unit, Why};
use crate::read;
use crate::reader::View;

/// How a rule applies.
pub(crate) enum Mode {
    /// Always sent.
    Always,
    /// Sent when the file worked on matches one of the globs of `key`.
    Glob { key: &'static str, globs: Vec<String> },
    /// Listed by its description; the model reads it when it decides to.
    Described(String),
    /// Only when the user mentions it.
    Manual,
}

/// A rule file read, its front matter taken off.
pub(crate) struct RuleFile {
    pub(crate) rel: String,
    pub(crate) shown: String,
    pub(crate) body: String,
    pub(crate) body_line: u32,
    pub(crate) mode: Mode,
}

/// The files of the folder `dir` of `place` whose names end with one of `extensions`, below
/// it at any depth when `deep`, sorted by path; the other files named as ignored.
pub(crate) fn files_of(
    view: &mut View,
    place: &Place<'_>,
    dir: &str,
    extensions: &[&str],
    agent: Agent,
) -> Vec<String> {
    let Some(location) = place.location(dir) else { return Vec::new() };
    if place.kind(dir) != Some(FileKind::Dir) {
        return Vec::new();
    }
    let Ok(walk) = place.sandbox.walk(&location) else { return Vec::new() };
    if walk.truncated {
        view.note(format!(
            "{}: the walk stopped at its limit; the rest was not looked at",
            place.shown(dir)
        ));
    }
    crate::reader::skipped(view, place, &walk, extensions);
    let mut out = Vec::new();
    for entry in walk.files() {
        let rel = entry.path.as_str().to_owned();
        if extensions.iter().any(|e| rel.ends_with(e)) {
            out.push(rel);
        } else if rel.ends_with(".md") {
            let shown = place.shown(&rel);
            view.not_file(&shown, Reason::NotThisAgent);
            view.diag(
                Diagnostic::new(
                    Code::RulesIgnored,
                    agent,
                    &shown,
                    (1, 1),
                    format!(
                        "{} reads only {} files in this folder; this file is ignored",
                        agent.title(),
                        extensions.join(" and ")
                    ),
                )
                .hint("rename it, or move plain Markdown to AGENTS.md"),
            );
        }
    }
    out.sort();
    out
}

/// Reads the rule `rel` of `place` and its mode (`mode_of` reads the front matter); `None`
/// when it is not read, empty, or its front matter is unusable (each listed).
pub(crate) fn read_rule(
    view: &mut View,
    place: &Place<'_>,
    rel: &str,
    agent: Agent,
    mode_of: &dyn Fn(&mut View, &str, &Front<'_>) -> Option<Mode>,
) -> Option<RuleFile> {
    let shown = place.shown(rel);
    let file = match read::read(place, rel, &mut view.budget) {
        Ok(Some(file)) => file,
        Ok(None) => return None,
        Err(reason) => {
            view.not_file(shown, reason);
            return None;
        }
    };
    let strict = front::read(&file.text);
    let (front, failed) = front::read_claude(&file.text);
    if let Some(at) = ["globs", "paths"].into_iter().find_map(|k| strict.unquoted_star(k)) {
        view.diag(Diagnostic::new(Code::RulesGlob, agent, &shown, at,
            format!("YAML reads an unquoted `*` as an alias: the front matter is not valid YAML; {} reads it leniently (not documented), other tools do not", agent.title()))
            .hint("quote the glob: globs: \"**/*.ts\""));
    } else if let (Some((message, line, column)), false) = (&strict.error, failed) {
        view.diag(Diagnostic::new(Code::RulesFrontMatter, agent, &shown, (*line, *column),
            format!("front matter is not valid YAML ({message}); ctx reads it as {} is believed to (values as plain text), other tools refuse it", agent.title()))
            .hint("quote the values YAML misreads"));
    }
    if failed {
        let error = strict.error.clone().unwrap_or_default();
        unparsed(view, agent, &shown, &error, &format!("{} skips the rule", agent.title()));
        return None;
    }
    let mode = mode_of(view, &shown, &front)?;
    let body = front.body.trim().to_owned();
    if body.is_empty() {
        view.not_file(shown, Reason::Empty);
        return None;
    }
    view.diags(lint::hidden(agent, &shown, &file.text, 1));
    Some(RuleFile { rel: rel.to_owned(), shown, body, body_line: front.body_line, mode })
}

/// A rule file whose front matter does not parse (`error`: the message, line and column): not
/// loaded, and reported with what the agent does about it (`then`).
pub(crate) fn unparsed(
    view: &mut View,
    agent: Agent,
    shown: &str,
    (message, line, column): &(String, u32, u32),
    then: &str,
) {
    view.not_file(shown, Reason::FrontMatter { message: message.clone() });
    view.diag(
        Diagnostic::new(
            Code::RulesFrontMatter,
            agent,
            shown,
            (*line, *column),
            format!("front matter does not parse ({message}); {then}"),
        )
        .hint("fix the YAML between the `---` lines"),
    );
}

/// A front-matter boolean, reported when it is not one (`alwaysApply: "true"`): such a value
/// counts as false.
pub(crate) fn boolean(
    view: &mut View,
    agent: Agent,
    shown: &str,
    front: &Front<'_>,
    key: &str,
) -> bool {
    match front.get(key) {
        None => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(other) => {
            let message = format!(
                "`{key}` is {}, not a boolean; {} does not read it as true",
                front::type_name(other),
                agent.title()
            );
            view.diag(wrong_type(
                agent,
                shown,
                front,
                key,
                message,
                format!("write {key}: true, without quotes"),
            ));
            false
        }
    }
}

/// The error of a front-matter `key` of the wrong type, at its value: `message` says what it
/// is, `hint` how to write it.
pub(crate) fn wrong_type(
    agent: Agent,
    shown: &str,
    front: &Front<'_>,
    key: &str,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> Diagnostic {
    Diagnostic::new(Code::RulesType, agent, shown, front.value_at(key), message).hint(hint)
}

/// The globs of `key` (a comma-separated string or a list); `None` when it has none, and
/// reported when it is of another type.
pub(crate) fn globs(
    view: &mut View,
    agent: Agent,
    shown: &str,
    front: &Front<'_>,
    key: &str,
) -> Option<Vec<String>> {
    let value = front.get(key)?;
    match front::strings(value, true) {
        Ok(globs) if globs.is_empty() => None,
        Ok(globs) => Some(globs),
        Err(kind) if matches!(value, serde_json::Value::Null) => {
            let _ = kind;
            None
        }
        Err(kind) => {
            let message =
                format!("`{key}` is {kind}, not a string of globs; {} ignores it", agent.title());
            view.diag(wrong_type(
                agent,
                shown,
                front,
                key,
                message,
                format!("write {key}: \"src/**/*.ts\""),
            ));
            None
        }
    }
}

/// Places a rule in the view by its mode: sent always, listed, sent when the file worked on
/// matches (its globs relative to `base`), or not sent; `cap` cuts its text (characters).
pub(crate) fn place(
    env: &Env<'_>,
    view: &mut View,
    place: &Place<'_>,
    rule: RuleFile,
    base: &str,
    (agent, cap): (Agent, Option<u64>),
) {
    let RuleFile { rel, shown, body, body_line, mode } = rule;
    let (why, placement) = match mode {
        Mode::Always => (Why::Always, Placement::System),
        Mode::Manual => return view.not_file(shown, Reason::Manual),
        Mode::Described(description) => {
            let piece =
                read::piece(place, &rel, body_line, Why::Listed, Placement::System, description);
            view.piece(piece);
            return;
        }
        Mode::Glob { key, globs } => {
            let (matcher, problems) = Matcher::new(Style::Plain, &globs);
            for problem in problems {
                view.diag(Diagnostic::new(
                    Code::RulesGlob,
                    agent,
                    &shown,
                    (1, 1),
                    format!("`{}`: {}", problem.glob, problem.message),
                ));
            }
            let file = env.for_path.clone();
            let hit = file.as_deref().and_then(|f| {
                let rel = if base.is_empty() {
                    Some(f)
                } else {
                    f.strip_prefix(base).and_then(|r| r.strip_prefix('/'))
                };
                rel.and_then(|r| matcher.first_match(r)).map(str::to_owned)
            });
            match (hit, file) {
                (Some(glob), Some(file)) => {
                    (Why::Glob { key: key.to_owned(), glob, file }, Placement::Later)
                }
                (_, file) => {
                    return view.not_file(
                        shown,
                        Reason::GlobNotMatched { key: key.to_owned(), globs, file },
                    );
                }
            }
        }
    };
    let piece = read::piece(place, &rel, body_line, why, placement, body);
    let piece = capped(view, piece, &shown, agent, cap);
    view.piece(piece);
}

/// A file without front matter (`AGENTS.md`, `.cursorrules`), trimmed, sent as `why` says.
pub(crate) fn plain(
    view: &mut View,
    place: &Place<'_>,
    rel: &str,
    (why, placement): (Why, Placement),
    (agent, cap): (Agent, Option<u64>),
) {
    let shown = place.shown(rel);
    let file = match read::read(place, rel, &mut view.budget) {
        Ok(Some(file)) => file,
        Ok(None) => return,
        Err(reason) => return view.not_file(shown, reason),
    };
    let text = file.text.trim().to_owned();
    if text.is_empty() {
        return view.not_file(shown, Reason::Empty);
    }
    view.diags(lint::hidden(agent, &shown, &file.text, 1));
    let piece = read::piece(place, rel, 1, why, placement, text);
    let piece = capped(view, piece, &shown, agent, cap);
    view.piece(piece);
}

/// The piece cut at `cap` characters, the cut reported.
fn capped(view: &mut View, mut piece: Piece, shown: &str, agent: Agent, cap: Option<u64>) -> Piece {
    if let Some(max) = cap {
        let total = piece.text.chars().count() as u64;
        if total > max {
            let (head, _) = read::head_chars(&piece.text, max as usize);
            let head = head.to_owned();
            view.diag(Diagnostic::new(Code::RulesCap, agent, shown, (1, 1),
                format!("{total} characters, over {}'s {max}: the agent keeps the first {max} and {} are lost", agent.title(), total - max))
                .hint("split the rule into several files"));
            let tokens = ctx_tokens::count(&head) as u64;
            piece.bytes = head.len() as u64;
            piece.tokens = tokens;
            piece.text = head;
            piece = piece.cut(Cut { unit: Unit::Chars, kept: max, total, cap: max, shared: false });
        }
    }
    piece
}

/// The `AGENTS.md` (any case) of the folder `dir`, as the editors read it.
pub(crate) fn agents_md(env: &Env<'_>, dir: &str) -> Option<String> {
    let project = env.project_place();
    env.names(dir)
        .iter()
        .find(|n| n.eq_ignore_ascii_case("agents.md"))
        .map(|n| join(dir, n))
        .filter(|rel| project.kind(rel) == Some(FileKind::File))
}
