//! What a reader is given: the project's sandbox, the agent's working folder, the file being
//! worked on, the user's own agent folders (each a sandbox of its own), ctx's bounds, and the
//! assembled rules of ctx's own rules folder.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use ctx_fs::{FileKind, Location, RootId, Sandbox};

use crate::model::Scope;

/// ctx's own bounds on one agent's view, whatever the project holds: past each, what is
/// left is named as not read (`Reason::Unreadable`) and a note says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bounds {
    /// Bytes of rule text read for one view.
    pub max_bytes: u64,
    /// Rule files read for one view (imports included).
    pub max_files: usize,
    /// Imports looked at for one view.
    pub max_imports: usize,
    /// Deepest import nesting ctx follows for an agent that sets no limit of its own.
    pub max_depth: u32,
    /// Entries kept in each list of a view (pieces, not-loaded entries, diagnostics).
    pub max_listed: usize,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            max_bytes: 32 << 20,
            max_files: 2_000,
            max_imports: 2_000,
            max_depth: 16,
            max_listed: 1_000,
        }
    }
}

/// One folder of the user's home folder, opened as a sandbox of its own (`~/.claude`).
pub(crate) struct HomeFolder {
    /// The folder relative to the home folder (`.claude`).
    pub(crate) key: String,
    /// How files in it are shown (`~/.claude`).
    pub(crate) shown: String,
    /// Its absolute path, as the agent names it.
    pub(crate) abs: String,
    /// The sandbox on it.
    pub(crate) sandbox: Sandbox,
}

/// The user's own agent folders, each read through a sandbox on that folder alone, never
/// through a path a repository names; and the user's Claude Code settings (`~/.claude.json`),
/// whose approvals are the user's word for Claude Code's view.
#[derive(Default)]
pub struct Home {
    folders: Vec<HomeFolder>,
    claude_settings: Option<serde_json::Value>,
}

impl Home {
    /// No home folder: the views hold the project's files only.
    pub fn none() -> Home {
        Home::default()
    }

    /// Adds the folder `key` of the home folder (`.claude`, `Documents/Cline/Rules`), whose
    /// absolute path is `abs`, opened as `sandbox`; `shown` is how its files are named
    /// (`~/.claude`).
    pub fn add_folder(
        &mut self,
        key: &str,
        shown: impl Into<String>,
        abs: impl Into<String>,
        sandbox: Sandbox,
    ) {
        let abs = abs.into().trim_end_matches('/').to_owned();
        self.folders.push(HomeFolder { key: key.to_owned(), shown: shown.into(), abs, sandbox });
    }

    /// The text of the user's Claude Code settings (`~/.claude.json`); text that is not a JSON
    /// object counts as no settings.
    pub fn set_claude_settings(&mut self, text: &str) {
        self.claude_settings =
            serde_json::from_str::<serde_json::Value>(text).ok().filter(|v| v.is_object());
    }

    /// The folder `key`, when it was opened.
    pub(crate) fn folder(&self, key: &str) -> Option<&HomeFolder> {
        self.folders.iter().find(|f| f.key == key)
    }

    /// Whether the user approved Claude Code's imports from outside the project for one of
    /// the project paths `keys` (`projects[PATH].hasClaudeMdExternalIncludesApproved`).
    pub(crate) fn claude_external_approved(&self, keys: &[String]) -> bool {
        let Some(projects) = self.claude_settings.as_ref().and_then(|v| v.get("projects")) else {
            return false;
        };
        keys.iter().any(|key| {
            projects
                .get(key)
                .and_then(|p| p.get("hasClaudeMdExternalIncludesApproved"))
                .and_then(serde_json::Value::as_bool)
                == Some(true)
        })
    }
}

impl fmt::Debug for Home {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self.folders.iter().map(|h| h.shown.as_str()).collect();
        f.debug_struct("Home").field("folders", &keys).finish_non_exhaustive()
    }
}

/// The rules of ctx's own rules folder, assembled by the facade as `ctx system-prompt` does.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CtxPrompt {
    /// The rules folder, if one was found.
    pub rules_dir: Option<String>,
    /// The active rules, assembled, in order.
    pub rules: Vec<CtxRule>,
    /// The rule files of the folder that are not active (`--rule`, `active_rules`).
    pub inactive: Vec<String>,
    /// The `### Runtime Context` section.
    pub runtime: String,
}

/// One active rule of ctx's rules folder, assembled.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CtxRule {
    /// Its path relative to the workspace root.
    pub path: String,
    /// The assembled content.
    pub content: String,
    /// How many of its diagnostics are errors.
    pub errors: usize,
}

impl CtxPrompt {
    /// A prompt of `rules`, `inactive` rule files and the runtime section.
    pub fn new(
        rules_dir: Option<String>,
        rules: Vec<CtxRule>,
        inactive: Vec<String>,
        runtime: String,
    ) -> CtxPrompt {
        CtxPrompt { rules_dir, rules, inactive, runtime }
    }
}

impl CtxRule {
    /// An assembled rule.
    pub fn new(path: String, content: String, errors: usize) -> CtxRule {
        CtxRule { path, content, errors }
    }
}

/// Why an [`Env`] could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// What a reader reads from: the project, the agent's working folder in it, the file being
/// worked on, the user's own agent folders.
pub struct Env<'a> {
    pub(crate) project: &'a Sandbox,
    /// The working folder, relative to the workspace root (empty for the root).
    pub(crate) cwd: String,
    /// The file worked on, relative to the workspace root.
    pub(crate) for_path: Option<String>,
    pub(crate) home: &'a Home,
    pub(crate) ctx: Option<&'a CtxPrompt>,
    pub(crate) bounds: Bounds,
    listings: RefCell<HashMap<String, Rc<Vec<String>>>>,
    survey: OnceCell<Survey>,
}

impl<'a> Env<'a> {
    /// The view from the workspace root of `project`, with the user's folders of `home`.
    pub fn new(project: &'a Sandbox, home: &'a Home) -> Env<'a> {
        Env {
            project,
            cwd: String::new(),
            for_path: None,
            home,
            ctx: None,
            bounds: Bounds::default(),
            listings: RefCell::default(),
            survey: OnceCell::new(),
        }
    }

    /// The agent's working folder, as written (relative to the workspace root, or absolute
    /// inside it); it must be a folder of the workspace.
    ///
    /// # Errors
    ///
    /// When it is not a folder inside the workspace; the message says only that.
    pub fn cwd(mut self, written: &str) -> Result<Env<'a>, Error> {
        let refuse = || Error {
            message: format!("the working folder `{written}` is not a folder of the workspace"),
        };
        let location = self.project.resolve(written, None).map_err(|_| refuse())?;
        if location.root() != RootId::WORKSPACE {
            return Err(refuse());
        }
        match self.project.stat(&location) {
            Ok(stat) if stat.kind == FileKind::Dir => {}
            _ => return Err(refuse()),
        }
        self.cwd = location.path().as_str().to_owned();
        Ok(self)
    }

    /// The file being worked on, as written (relative to the workspace root, or absolute
    /// inside it); it need not exist.
    ///
    /// # Errors
    ///
    /// When it does not lie inside the workspace.
    pub fn for_path(mut self, written: &str) -> Result<Env<'a>, Error> {
        let location = self.project.written_location(written, None).map_err(|_| Error {
            message: format!("the file `{written}` does not lie in the workspace"),
        })?;
        if location.root() != RootId::WORKSPACE || location.path().as_str().is_empty() {
            return Err(Error {
                message: format!("the file `{written}` does not lie in the workspace"),
            });
        }
        self.for_path = Some(location.path().as_str().to_owned());
        Ok(self)
    }

    /// The assembled rules of ctx's own rules folder, for the `ctx` view.
    pub fn ctx_prompt(mut self, prompt: &'a CtxPrompt) -> Env<'a> {
        self.ctx = Some(prompt);
        self
    }

    /// ctx's bounds on each view.
    pub fn bounds(mut self, bounds: Bounds) -> Env<'a> {
        self.bounds = bounds;
        self
    }

    /// The project as a place to read from.
    pub(crate) fn project_place(&self) -> Place<'_> {
        let root = self.project.root_path(RootId::WORKSPACE).as_str().trim_end_matches('/');
        Place {
            sandbox: self.project,
            shown: String::new(),
            abs: format!("{root}/"),
            scope: Scope::Project,
        }
    }

    /// The user's folder `key` as a place to read from, when it was opened.
    pub(crate) fn home_place(&self, key: &str) -> Option<Place<'_>> {
        self.home.folder(key).map(|f| Place {
            sandbox: &f.sandbox,
            shown: format!("{}/", f.shown.trim_end_matches('/')),
            abs: format!("{}/", f.abs),
            scope: Scope::User,
        })
    }

    pub(crate) fn home(&self) -> &Home {
        self.home
    }

    /// The absolute path of a folder of the workspace (`""` for the root), as agents name it.
    pub(crate) fn abs(&self, rel: &str) -> String {
        let root = self.project.root_path(RootId::WORKSPACE).as_str().trim_end_matches('/');
        if rel.is_empty() { root.to_owned() } else { format!("{root}/{rel}") }
    }

    /// The folders from the workspace root down to the working folder, both included.
    pub(crate) fn cwd_chain(&self) -> Vec<String> {
        chain_to(&self.cwd)
    }

    /// The folders below the working folder down to the folder of the file worked on (both
    /// ends: the working folder excluded, the file's folder included); empty when no file is
    /// given or it lies elsewhere.
    pub(crate) fn lazy_dirs(&self) -> Vec<String> {
        let Some(file) = &self.for_path else { return Vec::new() };
        let dir = parent(file);
        if !is_within(dir, &self.cwd) || dir == self.cwd {
            return Vec::new();
        }
        chain_to(dir).into_iter().filter(|d| d.len() > self.cwd.len()).collect()
    }

    /// The nearest folder from the working folder up to the workspace root that holds one of
    /// `markers` (`.git`); `None` when none does.
    pub(crate) fn marked_root(&self, markers: &[String]) -> Option<String> {
        self.cwd_chain().into_iter().rev().find(|dir| self.holds_marker(dir, markers))
    }

    fn holds_marker(&self, dir: &str, markers: &[String]) -> bool {
        let location = self.project.written_location(if dir.is_empty() { "." } else { dir }, None);
        let Ok(location) = location else { return false };
        markers.iter().any(|m| self.project.holds(&location, m))
    }

    /// The names in the project folder `dir` (denied names left out), listed once per view.
    pub(crate) fn names(&self, dir: &str) -> Rc<Vec<String>> {
        if let Some(names) = self.listings.borrow().get(dir) {
            return Rc::clone(names);
        }
        let written = if dir.is_empty() { "." } else { dir };
        let names = self
            .project
            .resolve(written, None)
            .ok()
            .filter(|l| l.root() == RootId::WORKSPACE)
            .and_then(|l| self.project.names(&l).ok())
            .unwrap_or_default();
        let names = Rc::new(names);
        self.listings.borrow_mut().insert(dir.to_owned(), Rc::clone(&names));
        names
    }

    /// Whether the project folder `dir` lists `name`.
    pub(crate) fn lists(&self, dir: &str, name: &str) -> bool {
        self.names(dir).iter().any(|n| n == name)
    }

    /// The rule files of the project found by one walk (shared by every view of this
    /// environment): files named `AGENTS.md` (any case), `CLAUDE.md`, `CLAUDE.local.md` or
    /// `GEMINI.md`, outside hidden and ignored folders.
    pub(crate) fn survey(&self) -> &Survey {
        self.survey.get_or_init(|| Survey::walk(self.project))
    }
}

/// What one walk of the workspace found.
#[derive(Debug, Default)]
pub(crate) struct Survey {
    /// The paths found, relative to the workspace root, in walk order.
    pub(crate) files: Vec<String>,
    /// Whether the walk stopped at its limit.
    pub(crate) truncated: bool,
}

impl Survey {
    fn walk(sandbox: &Sandbox) -> Survey {
        let Ok(walk) = sandbox.walk(&sandbox.workspace()) else { return Survey::default() };
        let files = walk
            .files()
            .filter(|e| {
                let name = e.path.file_name().unwrap_or_default();
                name.eq_ignore_ascii_case("agents.md")
                    || matches!(name, "CLAUDE.md" | "CLAUDE.local.md" | "GEMINI.md")
            })
            .map(|e| e.path.as_str().to_owned())
            .collect();
        Survey { files, truncated: walk.truncated }
    }
}

/// A place rule files are read from: the project, or one of the user's folders.
pub(crate) struct Place<'a> {
    pub(crate) sandbox: &'a Sandbox,
    /// Prefix of the names shown (`~/.claude/`, empty for the project).
    pub(crate) shown: String,
    /// Prefix of the absolute paths (with its final `/`).
    pub(crate) abs: String,
    pub(crate) scope: Scope,
}

impl Place<'_> {
    /// How the file `rel` of this place is shown.
    pub(crate) fn shown(&self, rel: &str) -> String {
        format!("{}{rel}", self.shown)
    }

    /// Its absolute path.
    pub(crate) fn abs(&self, rel: &str) -> String {
        if rel.is_empty() {
            self.abs.trim_end_matches('/').to_owned()
        } else {
            format!("{}{rel}", self.abs)
        }
    }

    /// The kind of `rel` (links inside the place followed); `None` when it is missing or
    /// refused.
    pub(crate) fn kind(&self, rel: &str) -> Option<FileKind> {
        let written = if rel.is_empty() { "." } else { rel };
        let location = self.sandbox.resolve(written, None).ok()?;
        (location.root() == RootId::WORKSPACE).then_some(())?;
        self.sandbox.stat(&location).ok().map(|s| s.kind)
    }

    /// Why `rel`, which the folder lists, is not read: the sandbox's refusal (a link that
    /// leads out of the workspace, a denied name), so that the view names it rather than pass
    /// over it in silence; `None` when it is missing (a dangling link too) or can be read.
    pub(crate) fn refusal(&self, rel: &str) -> Option<crate::model::Reason> {
        let written = if rel.is_empty() { "." } else { rel };
        match self.sandbox.resolve(written, None) {
            Ok(location) if location.root() == RootId::WORKSPACE => None,
            Ok(_) => Some(crate::model::Reason::Unreadable {
                code: ctx_fs::Code::Outside.as_str().to_owned(),
                message: format!("{}: leads out of the workspace", self.shown(rel)),
            }),
            Err(err) if err.kind() == ctx_fs::ErrorKind::NotFound => None,
            Err(err) => Some(crate::model::Reason::Unreadable {
                code: err.code().as_str().to_owned(),
                message: err.to_string(),
            }),
        }
    }

    /// The location of `rel` in this place's sandbox, when it resolves.
    pub(crate) fn location(&self, rel: &str) -> Option<Location> {
        let written = if rel.is_empty() { "." } else { rel };
        self.sandbox.resolve(written, None).ok().filter(|l| l.root() == RootId::WORKSPACE)
    }
}

/// The parent folder of a relative path (`""` for a name at the root).
pub(crate) fn parent(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

/// `rel` joined to the folder `dir` (`""` for the root).
pub(crate) fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() { rel.to_owned() } else { format!("{dir}/{rel}") }
}

/// Whether `path` is `dir` or lies below it (relative paths, `""` for the root).
pub(crate) fn is_within(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// The folders from the root (`""`) down to `dir`, both included.
pub(crate) fn chain_to(dir: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    if dir.is_empty() {
        return out;
    }
    let mut at = String::new();
    for part in dir.split('/') {
        at = join(&at, part);
        out.push(at.clone());
    }
    out
}

/// A folder as shown in messages: `.` for the root.
pub(crate) fn shown_dir(dir: &str) -> &str {
    if dir.is_empty() { "." } else { dir }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_and_containment() {
        assert_eq!(chain_to(""), vec![""]);
        assert_eq!(chain_to("a/b"), vec!["", "a", "a/b"]);
        assert!(is_within("a/b", "a"));
        assert!(!is_within("ab/c", "a"));
        assert!(is_within("x", ""));
        assert_eq!(parent("a/b/c.md"), "a/b");
        assert_eq!(parent("c.md"), "");
    }
}
