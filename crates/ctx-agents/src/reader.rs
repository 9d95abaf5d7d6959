//! The one trait every dialect implements, and what the readers share: bounded lists,
//! the note for folders above the workspace, and the not-loaded entry of a refusal.

use crate::agent::Agent;
use crate::env::Env;
use crate::lint::Diagnostic;
use crate::model::{NotLoaded, Piece, Reason, Rules, Segment};
use crate::read::Budget;

/// A reader of one agent's rule files.
pub trait Reader {
    /// Whose rules it reads.
    fn agent(&self) -> Agent;

    /// What the agent loads in `env`, in order, and what it does not load and why.
    fn read(&self, env: &Env<'_>) -> Rules;

    /// What the model receives, as the agent sends it: the parts of the request that carry
    /// rule text, in the order the model sees them.
    fn render(&self, rules: &Rules) -> Vec<Segment>;
}

/// A view being built: its lists bounded by ctx's own limits, its budget, and what it notes.
pub(crate) struct View {
    pub(crate) rules: Rules,
    pub(crate) budget: Budget,
    max_listed: usize,
    /// ctx's own import depth, for an agent that sets none.
    pub(crate) max_depth: u32,
    /// Most entries of one folder listing looked at.
    pub(crate) max_files: usize,
    dropped: usize,
}

impl View {
    pub(crate) fn new(env: &Env<'_>, agent: Agent) -> View {
        let rules = Rules::new(agent, &env.cwd, env.for_path.as_deref(), env.abs(&env.cwd));
        View {
            rules,
            budget: Budget::new(&env.bounds),
            max_listed: env.bounds.max_listed,
            max_depth: env.bounds.max_depth,
            max_files: env.bounds.max_files,
            dropped: 0,
        }
    }

    /// Adds a piece, within the bound.
    pub(crate) fn piece(&mut self, piece: Piece) {
        if self.rules.pieces.len() < self.max_listed {
            self.rules.pieces.push(piece);
        } else {
            self.dropped += 1;
        }
    }

    /// Adds a not-loaded entry, within the bound.
    pub(crate) fn not(&mut self, entry: NotLoaded) {
        if self.rules.not_loaded.contains(&entry) {
            return;
        }
        if self.rules.not_loaded.len() < self.max_listed {
            self.rules.not_loaded.push(entry);
        } else {
            self.dropped += 1;
        }
    }

    /// A file not loaded.
    pub(crate) fn not_file(&mut self, path: impl Into<String>, reason: Reason) {
        self.not(NotLoaded::file(path, reason));
    }

    /// Adds a diagnostic, within the bound.
    pub(crate) fn diag(&mut self, diagnostic: Diagnostic) {
        if self.rules.diagnostics.contains(&diagnostic) {
            return;
        }
        if self.rules.diagnostics.len() < self.max_listed {
            self.rules.diagnostics.push(diagnostic);
        } else {
            self.dropped += 1;
        }
    }

    /// Adds diagnostics.
    pub(crate) fn diags(&mut self, diagnostics: impl IntoIterator<Item = Diagnostic>) {
        for d in diagnostics {
            self.diag(d);
        }
    }

    /// The names of a folder listing, at most `max_files` of them (a note says how many were
    /// not looked at).
    pub(crate) fn bounded(&mut self, shown: &str, mut names: Vec<String>) -> Vec<String> {
        if names.len() > self.max_files {
            self.note(format!(
                "{shown}: {} entries; ctx looked at the first {} by name",
                names.len(),
                self.max_files
            ));
            names.sort_unstable();
            names.truncate(self.max_files);
        }
        names
    }

    /// Adds a note.
    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.rules.notes.push(note.into());
    }

    /// The view, with a note for what its bounds left out.
    pub(crate) fn finish(mut self) -> Rules {
        if self.budget.spent {
            self.rules.notes.push(
                "ctx's budget for one view (files, bytes or imports) was spent; what is past it is listed as not read"
                    .to_owned(),
            );
        }
        if self.dropped > 0 {
            self.rules.notes.push(format!(
                "{} more entries (pieces, files not loaded, diagnostics) not listed: each list keeps {}",
                self.dropped, self.max_listed
            ));
        }
        self.rules
    }
}

/// The note for the folders above the workspace root that an agent also reads.
pub(crate) fn above_root_note(what: &str) -> String {
    format!(
        "the agent also reads {what} in the folders above the workspace root; they lie outside \
         ctx's roots and were not looked at"
    )
}

/// The rule files of the workspace's survey that this view neither loaded nor listed: a file
/// of a name the agent reads is in the wrong folder (or, below the working folder, loads
/// lazily when `lazy`); a file of another name in a folder the agent reads is not its own.
pub(crate) fn others(
    env: &Env<'_>,
    view: &mut View,
    chain: &[String],
    names: &[String],
    lazy: bool,
) {
    use crate::env::{is_within, shown_dir};
    unread(env, view, chain, |view, path, dir, name, in_chain| {
        let listed = view.rules.pieces.iter().any(|p| p.path == path)
            || view.rules.not_loaded.iter().any(|n| n.path == path);
        if listed {
            return None;
        }
        let read_here = names.iter().any(|n| n == name);
        match (in_chain, read_here) {
            (true, false) => Some(Reason::NotThisAgent),
            (false, true) if lazy && is_within(dir, &env.cwd) => {
                Some(Reason::Lazy { dir: dir.to_owned() })
            }
            (false, true) => Some(Reason::WrongFolder { dir: shown_dir(dir).to_owned() }),
            _ => None,
        }
    });
}

/// Lists as not loaded each rule file of the workspace's survey that `reason` gives a reason
/// for (from the view so far, the file's path, its folder, its name, and whether the folder is
/// one of `chain`), and says so when the survey stopped at its limit.
pub(crate) fn unread(
    env: &Env<'_>,
    view: &mut View,
    chain: &[String],
    mut reason: impl FnMut(&View, &str, &str, &str, bool) -> Option<Reason>,
) {
    let survey = env.survey();
    let mut entries = Vec::new();
    for path in &survey.files {
        let dir = crate::env::parent(path);
        let name = &path[dir.len() + usize::from(!dir.is_empty())..];
        let in_chain = chain.iter().any(|d| d == dir);
        if let Some(reason) = reason(view, path, dir, name, in_chain) {
            entries.push((path.clone(), reason));
        }
    }
    for (path, reason) in entries {
        view.not_file(path, reason);
    }
    survey_note(env, view);
}

/// Says so in the view when the workspace's survey for rule files stopped at its limit.
pub(crate) fn survey_note(env: &Env<'_>, view: &mut View) {
    if env.survey().truncated {
        view.note("the walk of the workspace for rule files stopped at its limit; files past it were not looked at");
    }
}

/// Names, as not read, the entries of `walk` that the walk left out for a reason worth saying
/// (a link out of the workspace, a denied name, a special file, a refused folder) and whose
/// names end in one of `ends`: a rule file the agent reads is never passed over in silence.
pub(crate) fn skipped(
    view: &mut View,
    place: &crate::env::Place<'_>,
    walk: &ctx_fs::Walk,
    ends: &[&str],
) {
    use ctx_fs::{Code, SkipReason};
    for skip in &walk.skipped {
        let (code, why) = match skip.reason {
            SkipReason::Denied => (Code::Denied, "a name ctx never reads"),
            SkipReason::Outside => (Code::Outside, "a link that leads out of the workspace"),
            SkipReason::BadName => (Code::BadPath, "a name the path rules refuse"),
            SkipReason::NotRegular => (Code::NotRegular, "not a regular file"),
            SkipReason::Permission => (Code::Permission, "permission denied"),
            SkipReason::Io => (Code::Io, "could not be read"),
            _ => continue,
        };
        let path = skip.path.as_str();
        if !ends.iter().any(|e| path.ends_with(e)) {
            continue;
        }
        let message = format!("{why}: {}", place.shown(path));
        view.not_file(
            place.shown(path),
            Reason::Unreadable { code: code.as_str().to_owned(), message },
        );
    }
}
