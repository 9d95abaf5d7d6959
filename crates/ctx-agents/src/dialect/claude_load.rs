//! Claude Code's reading of one memory file and its imports (`processMemoryFile`): front
//! matter taken off, block-level HTML comments removed, then each `@` import outside code,
//! depth first after the file itself, at most four levels below it, each file once in the
//! whole load; imports that leave the working folder only with the user's approval.

use std::collections::HashSet;

use ctx_diagnostics::Code;
use ctx_fs::{Location, RootId};

use crate::agent::Agent;
use crate::env::{Env, Place};
use crate::front::{self, Front};
use crate::glob::{Matcher, Style};
use crate::imports::{self, Target};
use crate::lint::{self, Diagnostic};
use crate::markdown::{Flavor, strip_html_comments};
use crate::model::{NotLoaded, Piece, Placement, Reason, Scope, Why};
use crate::read::{self, File};
use crate::reader::View;

/// `MAX_INCLUDE_DEPTH`: the file itself is depth 0 and nothing at depth 5 is read, so
/// imports nest four levels (observed with 2.1.332; the documentation said "five hops").
pub(crate) const MAX_DEPTH: u32 = 5;

/// Largest memory file Claude Code loads; a larger one is skipped (documented).
pub(crate) const MAX_BYTES: u64 = 4 << 20;

/// Extensions Claude Code imports (`TEXT_FILE_EXTENSIONS`); a file without one is imported too.
const TEXT_EXTENSIONS: &[&str] = &[
    "md",
    "txt",
    "text",
    "json",
    "yaml",
    "yml",
    "toml",
    "xml",
    "csv",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "js",
    "ts",
    "tsx",
    "jsx",
    "mjs",
    "cjs",
    "mts",
    "cts",
    "py",
    "pyi",
    "pyw",
    "rb",
    "erb",
    "rake",
    "go",
    "rs",
    "java",
    "kt",
    "kts",
    "scala",
    "c",
    "cpp",
    "cc",
    "cxx",
    "h",
    "hpp",
    "hxx",
    "cs",
    "swift",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "bat",
    "cmd",
    "env",
    "ini",
    "cfg",
    "conf",
    "config",
    "properties",
    "sql",
    "graphql",
    "gql",
    "proto",
    "vue",
    "svelte",
    "astro",
    "ejs",
    "hbs",
    "pug",
    "jade",
    "php",
    "pl",
    "pm",
    "lua",
    "r",
    "dart",
    "ex",
    "exs",
    "erl",
    "hrl",
    "clj",
    "cljs",
    "cljc",
    "edn",
    "hs",
    "lhs",
    "elm",
    "ml",
    "mli",
    "f",
    "f90",
    "f95",
    "for",
    "cmake",
    "make",
    "makefile",
    "gradle",
    "sbt",
    "rst",
    "adoc",
    "asciidoc",
    "org",
    "tex",
    "latex",
    "lock",
    "log",
    "diff",
    "patch",
];

/// One load of Claude Code's memory files: what was processed, whether external imports are
/// approved, and where the working folder is.
pub(crate) struct Load<'e> {
    pub(crate) env: &'e Env<'e>,
    /// Absolute paths processed (loaded, or tried and empty).
    pub(crate) processed: HashSet<String>,
    /// The user approved imports from outside the working folder.
    pub(crate) approved: bool,
    /// Where the text goes: the first user message, or later (a file was read).
    pub(crate) placement: Placement,
    /// The files being imported from, outermost first, to tell a cycle from a repeat.
    pub(crate) chain: Vec<String>,
}

/// A memory file to load: where it is and what it is.
pub(crate) struct Memory<'p> {
    pub(crate) place: &'p Place<'p>,
    pub(crate) location: Location,
    pub(crate) scope: Scope,
    pub(crate) why: Why,
    pub(crate) depth: u32,
}

/// The globs of a rule's `paths:`, when it has any that are not `**`.
pub(crate) struct Paths {
    pub(crate) globs: Vec<String>,
    pub(crate) matcher: Matcher,
}

impl Load<'_> {
    /// Loads `memory` and its imports into `view`; returns whether it was loaded.
    pub(crate) fn file(&mut self, view: &mut View, memory: Memory<'_>) -> bool {
        match self.open(view, &memory) {
            Some((shown, abs, file)) => self.loaded(view, memory, &shown, &abs, &file),
            None => false,
        }
    }

    /// Reads `memory` unless it was processed, is too deep or too large: its name, absolute
    /// path and text. The file counts as processed from then on.
    pub(crate) fn open(
        &mut self,
        view: &mut View,
        memory: &Memory<'_>,
    ) -> Option<(String, String, File)> {
        let sandbox = memory.place.sandbox;
        let shown = imports::shown(sandbox, &memory.place.shown, &memory.location);
        let abs = imports::abs_of(sandbox, &memory.location);
        if self.processed.contains(&abs) || memory.depth >= MAX_DEPTH {
            return None;
        }
        self.processed.insert(abs.clone());
        if let Ok(stat) = sandbox.stat(&memory.location)
            && stat.len > MAX_BYTES
        {
            view.not_file(&shown, Reason::TooLarge { cap: MAX_BYTES });
            view.diag(
                Diagnostic::new(
                    Code::RulesCap,
                    Agent::Claude,
                    &shown,
                    (1, 1),
                    format!(
                        "{} bytes, over Claude Code's 4 MiB: the agent skips the whole file",
                        stat.len
                    ),
                )
                .hint("split it into files under .claude/rules/ or import parts of it"),
            );
            return None;
        }
        match read::read_at(sandbox, &memory.location, &mut view.budget) {
            Ok(file) => Some((shown, abs, file)),
            Err(reason) => {
                view.not_file(&shown, reason);
                None
            }
        }
    }

    /// Adds the file read by [`Load::open`] and loads its imports.
    pub(crate) fn loaded(
        &mut self,
        view: &mut View,
        memory: Memory<'_>,
        shown: &str,
        abs: &str,
        file: &File,
    ) -> bool {
        let (front, _) = front::read_claude(&file.text);
        let content = strip_html_comments(front.body);
        if content.trim().is_empty() {
            view.not_file(shown, Reason::Empty);
            return false;
        }
        view.diags(lint::hidden(Agent::Claude, shown, &file.text, 1));
        let text =
            if self.placement == Placement::Later { content } else { content.trim().to_owned() };
        let piece = Piece {
            path: shown.to_owned(),
            abs: abs.to_owned(),
            scope: memory.scope,
            ..read::piece(
                memory.place,
                "",
                front.body_line,
                memory.why.clone(),
                self.placement,
                text,
            )
        };
        view.piece(piece.at_depth(memory.depth));
        self.chain.push(abs.to_owned());
        self.imports(view, &memory, shown, &front);
        self.chain.pop();
        true
    }

    /// The imports of a loaded file, each loaded depth first.
    fn imports(&mut self, view: &mut View, memory: &Memory<'_>, shown: &str, front: &Front<'_>) {
        let sandbox = memory.place.sandbox;
        let base = memory.location.parent().unwrap_or_else(|| Location::root_of(RootId::WORKSPACE));
        let base_abs = imports::abs_of(sandbox, &base);
        let home = self.env.home().folder(".claude").map(|f| parent_abs(&f.abs));
        let cwd_abs = self.env.abs(&self.env.cwd);
        let body_first = front.body_line;
        let mut seen: HashSet<String> = HashSet::new();
        for token in imports::tokens(front.body, Flavor::Claude) {
            let line = body_first + token.line - 1;
            let not = |reason| NotLoaded::import(&token.raw, shown, line, reason);
            if let Some(code) = token.code {
                view.not(not(Reason::ImportInCode { what: code.name().to_owned() }));
                continue;
            }
            let lexical = imports::lexical(&base_abs, &token.path, home.as_deref());
            if !seen.insert(lexical.clone().unwrap_or_else(|| token.path.clone())) {
                continue;
            }
            if !view.budget.import() {
                view.not(not(read::Budget::reason()));
                continue;
            }
            let external = lexical.as_deref().is_none_or(|p| !imports::abs_within(p, &cwd_abs));
            let at = (line, token.column);
            if external && memory.scope != Scope::User && !self.approved {
                view.not(not(Reason::ImportNotApproved));
                view.diag(outside(shown, at, &token.raw, false));
                continue;
            }
            if memory.depth + 1 >= MAX_DEPTH {
                view.not(not(Reason::ImportDepth { limit: MAX_DEPTH - 1 }));
                view.diag(depth(shown, at, &token.raw));
                continue;
            }
            let extension =
                token.path.rsplit('/').next().and_then(|n| n.rsplit_once('.')).map(|(_, e)| e);
            if extension.is_some_and(|e| {
                !e.is_empty() && !TEXT_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())
            }) {
                view.not(not(Reason::ImportNotText));
                view.diag(Diagnostic::new(
                    Code::RulesImport,
                    Agent::Claude,
                    shown,
                    at,
                    format!(
                        "`@{}` is not a text file Claude Code imports; it is skipped",
                        token.raw
                    ),
                ));
                continue;
            }
            let why = Why::Import { from: shown.to_owned(), line, written: token.raw.clone() };
            match imports::resolve(sandbox, &base, &token.path) {
                Target::File(location) => {
                    let target_abs = imports::abs_of(sandbox, &location);
                    if self.processed.contains(&target_abs) {
                        view.not(not(Reason::AlreadyLoaded));
                        if self.chain.contains(&target_abs) {
                            view.diag(Diagnostic::new(Code::RulesCycle, Agent::Claude, shown, at,
                                format!("`@{}` imports a file that imports this one: a cycle; Claude Code loads each file once", token.raw))
                                .hint("remove one of the two imports"));
                        }
                        continue;
                    }
                    let next = Memory {
                        place: memory.place,
                        location,
                        scope: memory.scope,
                        why,
                        depth: memory.depth + 1,
                    };
                    self.file(view, next);
                }
                Target::Missing | Target::Folder => {
                    view.not(not(Reason::ImportMissing));
                    view.diag(missing(shown, at, &token.raw));
                }
                Target::Outside => {
                    view.not(not(Reason::ImportOutside { agent_reads: true }));
                    view.diag(outside(shown, at, &token.raw, true));
                    let abs = lexical.unwrap_or_else(|| token.path.clone());
                    let marker = format!(
                        "[ctx: not read: `@{}` lies outside ctx's roots; Claude Code sends the file's content here if it exists]",
                        token.raw
                    );
                    let piece = Piece {
                        path: token.path.clone(),
                        abs,
                        scope: memory.scope,
                        ..read::piece(memory.place, "", 1, why, self.placement, marker)
                    };
                    view.piece(piece.at_depth(memory.depth + 1));
                }
                Target::Refused(err) => view.not(not(read::refusal(&err))),
            }
        }
    }
}

/// The folder holding `~/.claude`: the home folder.
fn parent_abs(abs: &str) -> String {
    abs.rsplit_once('/').map_or_else(
        || "/".to_owned(),
        |(p, _)| if p.is_empty() { "/".to_owned() } else { p.to_owned() },
    )
}

fn outside(file: &str, at: (u32, u32), raw: &str, approved: bool) -> Diagnostic {
    let message = if approved {
        format!(
            "`@{raw}` leaves the working folder: Claude Code reads it (imports are approved); ctx did not read it"
        )
    } else {
        format!(
            "`@{raw}` leaves the working folder: Claude Code skips it without a word until the user approves external imports"
        )
    };
    Diagnostic::new(Code::RulesOutside, Agent::Claude, file, at, message)
        .hint("import files of the project, or keep the text in the file itself")
}

fn depth(file: &str, at: (u32, u32), raw: &str) -> Diagnostic {
    Diagnostic::new(
        Code::RulesDepth,
        Agent::Claude,
        file,
        at,
        format!("`@{raw}` is past Claude Code's import depth (4 levels below the memory file); it is not loaded"),
    )
    .hint("import it from a file nearer the memory file")
}

fn missing(file: &str, at: (u32, u32), raw: &str) -> Diagnostic {
    Diagnostic::new(
        Code::RulesImport,
        Agent::Claude,
        file,
        at,
        format!("`@{raw}` does not resolve: no such file; Claude Code skips it without a word"),
    )
    .hint("fix the path (relative to the importing file's folder)")
}

/// A rule's `paths:` (a list, or a string of comma-separated globs), each `/**` suffix
/// dropped; `None` when it has none or only `**` (the rule applies always).
pub(crate) fn paths(view: &mut View, shown: &str, front: &Front<'_>) -> Option<Paths> {
    let value = front.get("paths")?;
    let globs = match front::strings(value, true) {
        Ok(globs) => globs,
        Err(kind) => {
            view.diag(super::modes::wrong_type(Agent::Claude, shown, front, "paths",
                format!("`paths` is {kind}, not a list of globs or a string of them; Claude Code ignores it and the rule applies always"),
                "write paths: [\"src/**/*.ts\"]"));
            return None;
        }
    };
    let globs: Vec<String> = globs
        .into_iter()
        .map(|g| g.strip_suffix("/**").map(str::to_owned).unwrap_or(g))
        .filter(|g| !g.is_empty())
        .collect();
    if globs.is_empty() || globs.iter().all(|g| g == "**") {
        return None;
    }
    let (matcher, problems) = Matcher::new(Style::Gitignore, &globs);
    for problem in problems {
        view.diag(
            Diagnostic::new(
                Code::RulesGlob,
                Agent::Claude,
                shown,
                front.value_at("paths"),
                format!("`{}`: {}", problem.glob, problem.message),
            )
            .hint("write a glob of the files the rule is for"),
        );
    }
    Some(Paths { globs, matcher })
}

/// Whether the front matter of a rule is unusable, reported: Claude Code then reads the file
/// as having none, so the rule applies always.
pub(crate) fn front_failed(view: &mut View, shown: &str, text: &str) {
    let strict = front::read(text);
    let (_, failed) = front::read_claude(text);
    if !failed {
        return;
    }
    let (message, line, column) = strict.error.clone().unwrap_or_default();
    let at = strict.unquoted_star("paths").unwrap_or((line, column));
    let code = if strict.unquoted_star("paths").is_some() {
        Code::RulesGlob
    } else {
        Code::RulesFrontMatter
    };
    view.diag(Diagnostic::new(code, Agent::Claude, shown, at,
        format!("front matter does not parse ({message}); Claude Code reads the file without it, so the rule applies always"))
        .hint("quote each glob: paths: [\"src/**/*.ts\"]"));
}

/// The relative path of the file worked on from the folder `base` (`""` for the root), when
/// it lies below it.
pub(crate) fn relative_to(file: &str, base: &str) -> Option<String> {
    if base.is_empty() {
        return Some(file.to_owned());
    }
    file.strip_prefix(base).and_then(|r| r.strip_prefix('/')).map(str::to_owned)
}
