//! GitHub Copilot CLI (1.0.102, observed): `~/.copilot/copilot-instructions.md`; then the
//! `.github/copilot-instructions.md` of every folder from the project root (the nearest
//! folder holding `.git`; without one, the working folder alone) down to the working folder;
//! then, folder by folder, `AGENTS.md`, `CLAUDE.md` and `GEMINI.md`; each in a
//! `<custom_instruction>` of the system message, as written. `@` imports of `AGENTS.md` and
//! `CLAUDE.md` are inserted after their token, with no depth limit seen. The
//! `.github/instructions/*.instructions.md` of the project root (and, as documented, of the
//! working folder and the user's `~/.copilot/instructions`) follow: those for every file
//! (`applyTo: "**"`, or no front matter) as written, front matter and all; the others listed
//! in a table, and sent when a file they match is read, HTML-escaped, with the rule files of
//! the folders below the working folder.

use std::collections::HashSet;

use ctx_diagnostics::Code;
use ctx_fs::{FileKind, Location, RootId};

use crate::agent::Agent;
use crate::env::{Env, Place, join, shown_dir};
use crate::front;
use crate::glob::{Matcher, Style};
use crate::imports::{self, Target};
use crate::lint::{self, Diagnostic};
use crate::markdown::Flavor;
use crate::model::{NotLoaded, Piece, Placement, Reason, Rules, Segment, Why};
use crate::read;
use crate::reader::{Reader, View, above_root_note, others};

/// GitHub Copilot CLI's reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Copilot;

/// The names read in each folder, in order.
const NAMES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "GEMINI.md"];

/// The text before the table of instruction files read on demand.
const LIST_HEAD: &str =
    "Here is a list of instruction files that contain rules for modifying or creating new code.
These files are important for ensuring that the code is modified or created correctly.
Please make sure to follow the rules specified in these files when working with the codebase.
If you have not already read the file, use the `view` tool to acquire it.
Make sure to acquire the instructions before making any changes to the code.
| Pattern | File Path | Description |
| ------- | --------- | ----------- |
";

/// Whether a piece is an instructions file of `.github/instructions` (sent as written).
fn is_instructions_file(piece: &Piece) -> bool {
    piece.path.ends_with(".instructions.md")
}

impl Reader for Copilot {
    fn agent(&self) -> Agent {
        Agent::Copilot
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Copilot);
        let mut sent: HashSet<String> = HashSet::new();
        if let Some(home) = env.home_place(".copilot") {
            let rel = "copilot-instructions.md";
            if let Some(file) = open(&mut view, &home, rel) {
                let piece = read::piece(&home, rel, 1, Why::Global, Placement::System, file.text);
                instruction(&mut view, &mut sent, piece);
            }
        }
        let root = env.marked_root(&[".git".to_owned()]);
        if root.is_none() {
            view.note(above_root_note(".git"));
        }
        let root = root.unwrap_or_else(|| env.cwd.clone());
        let chain: Vec<String> =
            env.cwd_chain().into_iter().filter(|d| d.len() >= root.len()).collect();
        let project = env.project_place();
        let root_abs = env.abs(&root);
        for dir in &chain {
            let rel = join(dir, ".github/copilot-instructions.md");
            if let Some(file) = open(&mut view, &project, &rel) {
                let why = why_of(env, dir);
                let piece = read::piece(&project, &rel, 1, why, Placement::System, file.text);
                instruction(&mut view, &mut sent, piece);
            }
        }
        for dir in &chain {
            for name in NAMES {
                let rel = join(dir, name);
                let Some(file) = open(&mut view, &project, &rel) else { continue };
                let mut inline =
                    Inline { root_abs: &root_abs, imported: Vec::new(), depth_warned: false };
                let text = if name == "GEMINI.md" {
                    file.text
                } else {
                    let location = project.location(&rel).expect("opened");
                    let mut seen = HashSet::from([imports::abs_of(project.sandbox, &location)]);
                    inline.expand(&mut view, &project, &rel, &file.text, &location, 0, &mut seen)
                };
                let piece =
                    read::piece(&project, &rel, 1, why_of(env, dir), Placement::System, text);
                if instruction(&mut view, &mut sent, piece) {
                    for piece in inline.imported {
                        view.piece(piece);
                    }
                }
            }
        }
        let instructions_of_root = join(&root, ".github/instructions");
        instructions(env, &mut view, (&project, &instructions_of_root), &root);
        // The working folder's too (docs.github.com: "within or below a .github/instructions
        // directory in the current working directory"), and the user's own.
        if env.cwd != root {
            let here = join(&env.cwd, ".github/instructions");
            instructions(env, &mut view, (&project, &here), &root);
        }
        if let Some(home) = env.home_place(".copilot") {
            instructions(env, &mut view, (&home, "instructions"), &root);
        }
        lazy(env, &mut view, &root);
        let mut names: Vec<String> = NAMES.iter().map(|n| (*n).to_owned()).collect();
        names.push("copilot-instructions.md".to_owned());
        others(env, &mut view, &chain, &names, env.for_path.is_none());
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let mut out = Vec::new();
        let system =
            || rules.pieces.iter().filter(|p| p.placement == Placement::System && !p.inlined);
        let blocks: Vec<String> = system()
            .filter(|p| p.why != Why::Listed && !is_instructions_file(p))
            .map(|p| format!("<custom_instruction>\n{}\n</custom_instruction>", p.text))
            .collect();
        out.extend(Segment::joined(Placement::System, blocks, "\n\n", str::to_owned));
        let always: Vec<&str> = system()
            .filter(|p| p.why != Why::Listed && is_instructions_file(p))
            .map(|p| p.text.as_str())
            .collect();
        if !always.is_empty() {
            out.push(Segment { placement: Placement::System, text: always.join("\n\n") });
        }
        let listed: String =
            system().filter(|p| p.why == Why::Listed).map(|p| p.text.as_str()).collect();
        if !listed.is_empty() {
            out.push(Segment {
                placement: Placement::System,
                text: format!("{LIST_HEAD}{listed}"),
            });
        }
        out.extend(rules.later(|p| {
            format!(
                "<system_reminder>\nCustom instructions from {}. Apply these to any code you write here:\n\n{}\n</system_reminder>",
                p.name.as_deref().unwrap_or(&p.path),
                p.text
            )
        }));
        out
    }
}

/// Adds a `<custom_instruction>` unless a file before it had the same text (Copilot CLI
/// sends such a text once: observed); returns whether it was added.
fn instruction(view: &mut View, sent: &mut HashSet<String>, piece: Piece) -> bool {
    if sent.insert(piece.text.clone()) {
        view.piece(piece);
        return true;
    }
    let first = view.rules.pieces.iter().find(|p| p.text == piece.text).map(|p| p.path.clone());
    view.not_file(&piece.path, Reason::Shadowed { by: first.unwrap_or_default() });
    false
}

fn why_of(env: &Env<'_>, dir: &str) -> Why {
    if dir == env.cwd { Why::Always } else { Why::Ancestor { dir: shown_dir(dir).to_owned() } }
}

/// Reads `rel` of `place`: `None` when it is missing, refused (listed) or empty (listed).
fn open(view: &mut View, place: &Place<'_>, rel: &str) -> Option<read::File> {
    let shown = place.shown(rel);
    match read::read(place, rel, &mut view.budget) {
        Ok(Some(file)) if file.text.trim().is_empty() => {
            view.not_file(shown, Reason::Empty);
            None
        }
        Ok(Some(file)) => {
            view.diags(lint::hidden(Agent::Copilot, &shown, &file.text, 1));
            Some(file)
        }
        Ok(None) => None,
        Err(reason) => {
            view.not_file(shown, reason);
            None
        }
    }
}

/// The path of `rel` from the project root `root`, as Copilot names it.
fn from_root(rel: &str, root: &str) -> String {
    if root.is_empty() {
        rel.to_owned()
    } else {
        rel.strip_prefix(root).and_then(|r| r.strip_prefix('/')).unwrap_or(rel).to_owned()
    }
}

/// The `*.instructions.md` files below `dir` of `place`: the place root's and the working
/// folder's `.github/instructions`, and the user's `~/.copilot/instructions`.
fn instructions(env: &Env<'_>, view: &mut View, (place, dir): (&Place<'_>, &str), root: &str) {
    let Some(location) = place.location(dir) else { return };
    let Ok(walk) = place.sandbox.walk(&location) else { return };
    crate::reader::skipped(view, place, &walk, &[".instructions.md"]);
    let mut files: Vec<String> = walk
        .files()
        .map(|e| e.path.as_str().to_owned())
        .filter(|p| p.ends_with(".instructions.md"))
        .collect();
    files.sort();
    for rel in files {
        let Some(file) = open(view, place, &rel) else { continue };
        let front = front::read(&file.text);
        let shown = match place.shown(&rel) {
            named if named.starts_with('~') => named,
            _ => from_root(&rel, root),
        };
        // As ctx names the file (the user's own with `~/`).
        let rel_shown = place.shown(&rel);
        if let Some((message, line, column)) = &front.error {
            view.not_file(&rel_shown, Reason::FrontMatter { message: message.clone() });
            view.diag(Diagnostic::new(Code::RulesFrontMatter, Agent::Copilot, &rel_shown, (*line, *column),
                format!("front matter does not parse ({message}); Copilot CLI does not apply the file"))
                .hint("quote the glob: applyTo: \"**/*.ts\""));
            continue;
        }
        let globs = match front.get("applyTo").map(|v| front::strings(v, true)) {
            None => Vec::new(),
            Some(Ok(globs)) => globs,
            Some(Err(kind)) => {
                view.not_file(
                    &rel_shown,
                    Reason::FrontMatter { message: format!("`applyTo` is {kind}") },
                );
                view.diag(super::modes::wrong_type(Agent::Copilot, &rel_shown, &front, "applyTo",
                    format!("`applyTo` is {kind}, not a string of globs; Copilot CLI does not apply the file"),
                    "write applyTo: \"**/*.ts\""));
                continue;
            }
        };
        let (matcher, problems) = Matcher::new(Style::VsCode, &globs);
        for problem in problems {
            view.diag(
                Diagnostic::new(
                    Code::RulesGlob,
                    Agent::Copilot,
                    &rel_shown,
                    front.value_at("applyTo"),
                    format!("`{}`: {}", problem.glob, problem.message),
                )
                .hint("write a glob of the files the instructions are for"),
            );
        }
        if globs.is_empty() || matcher.matches_all().is_some() {
            let piece = read::piece(place, &rel, 1, Why::Always, Placement::System, file.text);
            view.piece(piece);
            continue;
        }
        let description = front.get("description").and_then(|v| v.as_str()).unwrap_or("");
        let row = format!("| {} | '{shown}' | {description} |\n", globs.join(","));
        view.piece(read::piece(place, &rel, 1, Why::Listed, Placement::System, row));
        let Some(file_path) = env.for_path.clone() else {
            view.not_file(
                &rel_shown,
                Reason::GlobNotMatched { key: "applyTo".to_owned(), globs, file: None },
            );
            continue;
        };
        match matcher.first_match(&env.abs(&file_path)).map(str::to_owned) {
            Some(glob) => {
                let why = Why::Glob { key: "applyTo".to_owned(), glob, file: file_path };
                let text = escape_html(&file.text);
                view.piece(read::piece(place, &rel, 1, why, Placement::Later, text).named(shown));
            }
            None => view.not_file(
                &rel_shown,
                Reason::GlobNotMatched { key: "applyTo".to_owned(), globs, file: Some(file_path) },
            ),
        }
    }
}

/// The rule files of the folders below the working folder down to the file worked on, sent
/// when that file is read.
fn lazy(env: &Env<'_>, view: &mut View, root: &str) {
    let project = env.project_place();
    for dir in env.lazy_dirs() {
        for name in NAMES {
            let rel = join(&dir, name);
            if !env.lists(&dir, name) || project.kind(&rel) != Some(FileKind::File) {
                continue;
            }
            let Some(file) = open(view, &project, &rel) else { continue };
            let why = Why::Lazy { dir: dir.clone() };
            let piece =
                read::piece(&project, &rel, 1, why, Placement::Later, escape_html(&file.text));
            view.piece(piece.named(from_root(&rel, root)));
        }
    }
}

/// `&`, `<`, `>`, `"` and `'` written as entities.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The insertion of one file's imports.
struct Inline<'r> {
    root_abs: &'r str,
    imported: Vec<Piece>,
    depth_warned: bool,
}

impl Inline<'_> {
    /// `text` with each import's file inserted after its token; `seen` holds the files
    /// already inserted in this file (each once).
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &mut self,
        view: &mut View,
        place: &Place<'_>,
        shown: &str,
        text: &str,
        location: &Location,
        depth: u32,
        seen: &mut HashSet<String>,
    ) -> String {
        let sandbox = place.sandbox;
        let base = location.parent().unwrap_or_else(|| Location::root_of(RootId::WORKSPACE));
        let base_abs = imports::abs_of(sandbox, &base);
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for token in imports::tokens(text, Flavor::Copilot) {
            let raw = &token.raw;
            let not = |reason| NotLoaded::import(raw, shown, token.line, reason);
            let at = (token.line, token.column);
            if let Some(code) = token.code {
                view.not(not(Reason::ImportInCode { what: code.name().to_owned() }));
                continue;
            }
            let lexical = imports::lexical(&base_abs, &token.path, None).unwrap_or_default();
            if !imports::abs_within(&lexical, self.root_abs) {
                view.not(not(Reason::ImportOutside { agent_reads: false }));
                view.diag(Diagnostic::new(Code::RulesOutside, Agent::Copilot, shown, at,
                    format!("`@{raw}` leaves the project: Copilot CLI does not follow it and sends the text as it is"))
                    .hint("import files of the project, or keep the text in the file itself"));
                continue;
            }
            if depth >= view.max_depth {
                if !self.depth_warned {
                    self.depth_warned = true;
                    view.note("Copilot CLI follows imports with no depth limit seen; ctx stops at its own limit");
                }
                view.not(not(Reason::ImportDepth { limit: view.max_depth }));
                continue;
            }
            if !view.budget.import() {
                view.not(not(read::Budget::reason()));
                continue;
            }
            let Target::File(target) = imports::resolve(sandbox, &base, &token.path) else {
                view.not(not(Reason::ImportMissing));
                view.diag(
                    Diagnostic::new(
                        Code::RulesImport,
                        Agent::Copilot,
                        shown,
                        at,
                        format!("`@{raw}` does not resolve; Copilot CLI sends the text as it is"),
                    )
                    .hint("fix the path (relative to the importing file's folder)"),
                );
                continue;
            };
            let abs = imports::abs_of(sandbox, &target);
            out.push_str(&text[last..token.end]);
            last = token.end;
            if !seen.insert(abs.clone()) {
                view.not(not(Reason::AlreadyLoaded));
                out.push_str(&format!("\n\n<imported_custom_instruction source=\"{abs}\" skipped=\"already-loaded\" />"));
                continue;
            }
            let file = match read::read_at(sandbox, &target, &mut view.budget) {
                Ok(file) => file,
                Err(reason) => {
                    view.not(not(reason));
                    out.push_str(&format!(
                        "\n\n[ctx: not read: `@{raw}`; Copilot CLI inserts the file here]"
                    ));
                    continue;
                }
            };
            let target_shown = imports::shown(sandbox, &place.shown, &target);
            view.diags(lint::hidden(Agent::Copilot, &target_shown, &file.text, 1));
            let slot = self.imported.len();
            let why =
                Why::Import { from: shown.to_owned(), line: token.line, written: raw.clone() };
            let piece = Piece {
                path: target_shown.clone(),
                abs: abs.clone(),
                ..read::piece(place, "", 1, why, Placement::System, String::new())
            };
            self.imported.push(piece.at_depth(depth + 1).inlined());
            let content =
                self.expand(view, place, &target_shown, &file.text, &target, depth + 1, seen);
            let content = content.trim().to_owned();
            out.push_str(&format!("\n\n<imported_custom_instruction source=\"{abs}\">\n{content}\n</imported_custom_instruction>"));
            let piece = &mut self.imported[slot];
            piece.bytes = content.len() as u64;
            piece.tokens = ctx_tokens::count(&content) as u64;
            piece.text = content;
        }
        out.push_str(&text[last..]);
        out
    }
}
