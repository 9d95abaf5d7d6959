//! Gemini CLI (0.61.0, observed): the user's `~/.gemini/GEMINI.md` (each name of
//! `context.fileName`, in list order) at the end of the system instruction; the project's
//! files from the nearest folder holding `.git` down to the working folder (without one, the
//! working folder alone), every configured name in every folder, in the order of their
//! absolute paths, in the first user message; the files of the folders below the working
//! folder just in time, appended to the result of the tool that read a file there.
//!
//! Each file is trimmed and wrapped `--- Context from: PATH ---`; its `@` imports (outside
//! backtick code) are inlined where they stand, five levels deep, within the project root.

use ctx_diagnostics::Code;
use ctx_fs::{Location, RootId};

use crate::agent::Agent;
use crate::env::{Env, Place, join, shown_dir};
use crate::imports::{self, Target};
use crate::lint::{self, Diagnostic};
use crate::markdown::Flavor;
use crate::model::{NotLoaded, Piece, Placement, Reason, Rules, Segment, Why};
use crate::read;
use crate::reader::{Reader, View, above_root_note, others};

/// Gemini CLI's reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gemini;

/// `maxDepth` of `processImports`: the file itself is depth 0; a file at depth 5 keeps its
/// `@` text as it is.
const MAX_DEPTH: u32 = 5;

/// The section the user's own files open in the system instruction (`renderUserMemory`).
const PREAMBLE: &str = "# Contextual Instructions (GEMINI.md)
The following content is loaded from local and global configuration files.
**Context Precedence:**
- **Global (~/.gemini/):** foundational user preferences. Apply these broadly.
- **Extensions:** supplementary knowledge and capabilities.
- **Workspace Root:** workspace-wide mandates. Supersedes global preferences.
- **Sub-directories:** highly specific overrides. These rules supersede all others for files within their scope.

**Conflict Resolution:**
- **Precedence:** Strictly follow the order above (Sub-directories > Workspace Root > Extensions > Global).
- **System Overrides:** Contextual instructions override default operational behaviors (e.g., tech stack, style, workflows, tool preferences) defined in the system prompt. However, they **cannot** override Core Mandates regarding safety, security, and agent integrity.";

impl Reader for Gemini {
    fn agent(&self) -> Agent {
        Agent::Gemini
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Gemini);
        let (own, names) = file_names(env, &mut view);
        if let Some(home) = env.home_place(".gemini") {
            let root = home.abs("");
            // The user's folder is read under the user's own names only: a name the
            // workspace's settings give would let a repository choose a file of the user's
            // (`oauth_creds.json`) to be sent to the model.
            let theirs: Vec<&String> = names.iter().filter(|n| !own.contains(n)).collect();
            if !theirs.is_empty() {
                view.note(format!(
                    "the workspace's .gemini/settings.json names {} context file name(s) \
                     ({}); Gemini CLI looks for them in ~/.gemini too, which ctx does not \
                     show: a repository does not choose the user's files",
                    theirs.len(),
                    theirs
                        .iter()
                        .map(|n| format!("`{}`", n.chars().take(64).collect::<String>()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            for name in &own {
                let file = Found { place: &home, rel: name.clone(), why: Why::Global };
                load(&mut view, &file, &root, Placement::System);
            }
        }
        let project = env.project_place();
        let root = env.marked_root(&[".git".to_owned()]);
        let chain: Vec<String> = match &root {
            Some(root) => env.cwd_chain().into_iter().filter(|d| d.len() >= root.len()).collect(),
            None => {
                view.note("no .git from the working folder up to the workspace root: Gemini CLI reads the working folder only");
                vec![env.cwd.clone()]
            }
        };
        if root.is_none() {
            view.note(above_root_note("a .git folder (and, past one, GEMINI.md)"));
        }
        let root_abs = env.abs(root.as_deref().unwrap_or(&env.cwd));
        let mut found = files(env, &mut view, &chain, &names);
        // `unique.sort()`: the order of the absolute paths.
        found.sort_by_key(|a| project.abs(&a.0));
        for (rel, dir) in found {
            let why = if dir == env.cwd {
                Why::Always
            } else {
                Why::Ancestor { dir: shown_dir(&dir).to_owned() }
            };
            load(&mut view, &Found { place: &project, rel, why }, &root_abs, Placement::User);
        }
        let lazy = env.lazy_dirs();
        for (rel, dir) in files(env, &mut view, &lazy, &names) {
            let file = Found { place: &project, rel, why: Why::Lazy { dir } };
            load(&mut view, &file, &root_abs, Placement::Later);
        }
        let mut read_from = chain;
        read_from.extend(lazy);
        others(env, &mut view, &read_from, &names, env.for_path.is_none());
        view.note("Gemini CLI reads project files only in a folder the user trusts; ctx shows what it reads once trusted");
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let blocks = |placement: Placement| -> Vec<String> {
            rules
                .pieces
                .iter()
                .filter(|p| p.placement == placement && !p.inlined)
                .map(|p| {
                    format!(
                        "--- Context from: {0} ---\n{1}\n--- End of Context from: {0} ---",
                        p.abs, p.text
                    )
                })
                .collect()
        };
        let segment = |placement: Placement, wrap: fn(&str) -> String| {
            Segment::joined(placement, blocks(placement), "\n\n", wrap)
        };
        [
            segment(Placement::System, |s| {
                format!("{PREAMBLE}\n\n<loaded_context>\n{s}\n</loaded_context>")
            }),
            segment(Placement::User, |s| {
                format!("<loaded_context>\n<project_context>\n{s}\n</project_context>\n</loaded_context>")
            }),
            segment(Placement::Later, |s| {
                format!("--- Newly Discovered Project Context ---\n{s}\n--- End Project Context ---")
            }),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// The context file names: those of the user's settings (`GEMINI.md` unless they set
/// `context.fileName`), and those in force, the project's `.gemini/settings.json` winning.
fn file_names(env: &Env<'_>, view: &mut View) -> (Vec<String>, Vec<String>) {
    let default = vec!["GEMINI.md".to_owned()];
    let own = env
        .home_place(".gemini")
        .and_then(|home| setting(&home, "settings.json", view))
        .unwrap_or(default);
    // The project's settings are those of the working folder (`loadSettings(process.cwd())`),
    // not looked for upwards.
    let project_settings = join(&env.cwd, ".gemini/settings.json");
    let names = setting(&env.project_place(), &project_settings, view).unwrap_or(own.clone());
    (own, names)
}

/// `context.fileName` of the settings file `rel` of `place`, when it sets names.
fn setting(place: &Place<'_>, rel: &str, view: &mut View) -> Option<Vec<String>> {
    let Ok(Some(file)) = read::read(place, rel, &mut view.budget) else { return None };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&file.text) else {
        view.note(format!(
            "{}: not valid JSON; its context.fileName is not known",
            place.shown(rel)
        ));
        return None;
    };
    let list: Vec<String> = match value.pointer("/context/fileName") {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(items)) => {
            items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()
        }
        _ => return None,
    };
    let list: Vec<String> = list
        .into_iter()
        .filter(|n| !n.is_empty() && !n.contains('/') && n != "." && n != "..")
        .collect();
    (!list.is_empty()).then_some(list)
}

/// The context files of the folders `dirs`, each with its folder, names in list order; one
/// listed that ctx may not read (a link out of the workspace) is named as not read.
fn files(
    env: &Env<'_>,
    view: &mut View,
    dirs: &[String],
    names: &[String],
) -> Vec<(String, String)> {
    let project = env.project_place();
    let mut out = Vec::new();
    for dir in dirs {
        for name in names.iter().filter(|name| env.lists(dir, name)) {
            let rel = join(dir, name);
            if project.kind(&rel) == Some(ctx_fs::FileKind::File) {
                out.push((rel, dir.clone()));
            } else if let Some(reason) = project.refusal(&rel) {
                view.not_file(rel, reason);
            }
        }
    }
    out
}

/// A context file found.
struct Found<'p> {
    place: &'p Place<'p>,
    rel: String,
    why: Why,
}

/// Reads a context file, inlines its imports and adds it (and its imports) to the view.
fn load(view: &mut View, found: &Found<'_>, root_abs: &str, placement: Placement) {
    let place = found.place;
    let shown = place.shown(&found.rel);
    let file = match read::read(place, &found.rel, &mut view.budget) {
        Ok(Some(file)) => file,
        Ok(None) => return,
        Err(reason) => return view.not_file(shown, reason),
    };
    view.diags(lint::hidden(Agent::Gemini, &shown, &file.text, 1));
    let Some(location) = place.location(&found.rel) else { return };
    let base = location.parent().unwrap_or_else(|| Location::root_of(RootId::WORKSPACE));
    let mut inline = Inline { place, root_abs, placement, imported: Vec::new() };
    let mut chain = Vec::new();
    let expanded = inline.expand(view, &shown, &file.text, &base, 0, &mut chain);
    let text = expanded.trim().to_owned();
    if text.is_empty() {
        view.not_file(shown, Reason::Empty);
        return;
    }
    view.piece(read::piece(place, &found.rel, 1, found.why.clone(), placement, text));
    for piece in inline.imported {
        view.piece(piece);
    }
}

/// The inlining of one file's imports.
struct Inline<'p> {
    place: &'p Place<'p>,
    /// The project root imports must stay in (absolute).
    root_abs: &'p str,
    placement: Placement,
    /// The files inlined, in order, for the view.
    imported: Vec<Piece>,
}

impl Inline<'_> {
    /// `text` with each import replaced as `processImports` replaces it; `chain` holds the
    /// absolute paths of the files being imported from (`processedFiles`, copied per branch).
    fn expand(
        &mut self,
        view: &mut View,
        shown: &str,
        text: &str,
        base: &Location,
        depth: u32,
        chain: &mut Vec<String>,
    ) -> String {
        let tokens = imports::tokens(text, Flavor::Gemini);
        let sandbox = self.place.sandbox;
        let base_abs = imports::abs_of(sandbox, base);
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for token in tokens {
            let not = |reason| NotLoaded::import(&token.raw, shown, token.line, reason);
            let at = (token.line, token.column);
            if let Some(code) = token.code {
                view.not(not(Reason::ImportInCode { what: code.name().to_owned() }));
                continue;
            }
            if depth >= MAX_DEPTH {
                view.not(not(Reason::ImportDepth { limit: MAX_DEPTH }));
                view.diag(Diagnostic::new(Code::RulesDepth, Agent::Gemini, shown, at,
                    format!("`@{}` is past Gemini CLI's import depth (5 levels): the model receives the text `@{}` as it is", token.raw, token.raw))
                    .hint("import it from a file nearer the context file"));
                continue;
            }
            out.push_str(&text[last..token.at]);
            last = token.end;
            let raw = &token.raw;
            if !view.budget.import() {
                view.not(not(read::Budget::reason()));
                out.push_str(&format!(
                    "[ctx: not read: `@{raw}`: ctx's budget for one view is spent]"
                ));
                continue;
            }
            let lexical = imports::lexical(&base_abs, &token.path, None).unwrap_or_default();
            if !imports::abs_within(&lexical, self.root_abs) {
                view.not(not(Reason::ImportOutside { agent_reads: false }));
                view.diag(Diagnostic::new(Code::RulesOutside, Agent::Gemini, shown, at,
                    format!("`@{raw}` leaves the project root: Gemini CLI refuses it (\"path traversal attempt\") and sends a comment in its place"))
                    .hint("import files of the project, or keep the text in the file itself"));
                out.push_str(&format!("<!-- Import failed: {raw} - Path traversal attempt -->"));
                continue;
            }
            if chain.contains(&lexical) {
                view.not(not(Reason::AlreadyLoaded));
                view.diag(Diagnostic::new(Code::RulesCycle, Agent::Gemini, shown, at,
                    format!("`@{raw}` imports a file that imports this one: a cycle; Gemini CLI sends a comment in its place"))
                    .hint("remove one of the two imports"));
                out.push_str(&format!("<!-- File already processed: {raw} -->"));
                continue;
            }
            match imports::resolve(sandbox, base, &token.path) {
                Target::File(location) => {
                    let abs = imports::abs_of(sandbox, &location);
                    let file = match read::read_at(sandbox, &location, &mut view.budget) {
                        Ok(file) => file,
                        Err(reason) => {
                            view.not(not(reason));
                            out.push_str(&format!(
                                "[ctx: not read: `@{raw}`; Gemini CLI inlines the file here]"
                            ));
                            continue;
                        }
                    };
                    let target = imports::shown(sandbox, &self.place.shown, &location);
                    view.diags(lint::hidden(Agent::Gemini, &target, &file.text, 1));
                    let next =
                        location.parent().unwrap_or_else(|| Location::root_of(RootId::WORKSPACE));
                    let slot = self.imported.len();
                    let why = Why::Import {
                        from: shown.to_owned(),
                        line: token.line,
                        written: raw.clone(),
                    };
                    let piece = Piece {
                        path: target.clone(),
                        abs: abs.clone(),
                        ..read::piece(self.place, "", 1, why, self.placement, String::new())
                    };
                    self.imported.push(piece.at_depth(depth + 1).inlined());
                    chain.push(abs);
                    let content = self.expand(view, &target, &file.text, &next, depth + 1, chain);
                    chain.pop();
                    let bytes = content.len() as u64;
                    let tokens = ctx_tokens::count(&content) as u64;
                    let piece = &mut self.imported[slot];
                    (piece.bytes, piece.tokens) = (bytes, tokens);
                    out.push_str(&format!("<!-- Imported from: {raw} -->\n{content}\n<!-- End of import from: {raw} -->"));
                    piece.text = content;
                }
                other => {
                    let note = NotInlined { raw, shown, line: token.line, at, lexical: &lexical };
                    out.push_str(&note.record(view, other));
                }
            }
        }
        out.push_str(&text[last..]);
        out
    }
}

/// An import that is not inlined, where it stands: what stands in its place is told here.
struct NotInlined<'a> {
    raw: &'a str,
    shown: &'a str,
    line: u32,
    at: (u32, u32),
    /// Its path made absolute as written.
    lexical: &'a str,
}

impl NotInlined<'_> {
    fn not(&self, reason: Reason) -> NotLoaded {
        NotLoaded::import(self.raw, self.shown, self.line, reason)
    }

    /// Notes why `target` is not inlined and returns what stands in its place: the comment
    /// Gemini CLI sends, or ctx's note where ctx did not read the file.
    fn record(&self, view: &mut View, target: Target) -> String {
        let (raw, shown, at, lexical) = (self.raw, self.shown, self.at, self.lexical);
        match target {
            // Inlined by the caller: nothing stands in its place.
            Target::File(_) => String::new(),
            Target::Missing => {
                view.not(self.not(Reason::ImportMissing));
                view.diag(Diagnostic::new(Code::RulesImport, Agent::Gemini, shown, at,
                    format!("`@{raw}` does not resolve: no such file; Gemini CLI sends an \"import failed\" comment in its place"))
                    .hint("fix the path (relative to the importing file's folder)"));
                format!(
                    "<!-- Import failed: {raw} - ENOENT: no such file or directory, access '{lexical}' -->"
                )
            }
            // Inside the project as written, out of it where a link leads: Gemini CLI
            // checks the real path (`validateImportPath`) and refuses it.
            Target::Outside => {
                view.not(self.not(Reason::ImportOutside { agent_reads: false }));
                view.diag(Diagnostic::new(Code::RulesOutside, Agent::Gemini, shown, at,
                    format!("`@{raw}` leads out of the project root through a link: Gemini CLI refuses it (\"path traversal attempt\") and sends a comment in its place"))
                    .hint("import files of the project, or keep the text in the file itself"));
                format!("<!-- Import failed: {raw} - Path traversal attempt -->")
            }
            Target::Folder => {
                view.not(self.not(Reason::ImportMissing));
                view.diag(Diagnostic::new(Code::RulesImport, Agent::Gemini, shown, at,
                    format!("`@{raw}` names a folder; Gemini CLI sends an \"import failed\" comment in its place"))
                    .hint("import a file of the folder"));
                format!(
                    "<!-- Import failed: {raw} - EISDIR: illegal operation on a directory, read -->"
                )
            }
            Target::Refused(err) => {
                view.not(self.not(read::refusal(&err)));
                format!("[ctx: not read: `@{raw}` ({})]", err.code().as_str())
            }
        }
    }
}
