//! The typed answer of every reader: the pieces an agent loads, in order, each with where it
//! comes from and why it applies, then what it does not load and why not.

use serde::Serialize;

use crate::agent::Agent;
use crate::lint::Diagnostic;

/// One agent's rules for one working folder and, optionally, one file being worked on.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Rules {
    /// Whose view this is.
    pub agent: Agent,
    /// The agent's version whose behaviour the reader follows, and how it is known.
    pub version: &'static str,
    /// The agent's working folder, relative to the workspace root (empty for the root).
    pub cwd: String,
    /// The file being worked on, relative to the workspace root.
    #[serde(rename = "for")]
    pub for_path: Option<String>,
    /// What the agent loads, in the order it sends it.
    pub pieces: Vec<Piece>,
    /// What it does not load, and why.
    pub not_loaded: Vec<NotLoaded>,
    /// Problems of the rule files as this agent reads them (`E_RULES_*`, `W_RULES_*`,
    /// `W_HIDDEN_TEXT`).
    pub diagnostics: Vec<Diagnostic>,
    /// What ctx did not look at, and other facts of the view (folders above the workspace,
    /// a budget spent).
    pub notes: Vec<String>,
    /// Absolute paths the agent names in its wrappers: the working folder.
    #[serde(skip)]
    pub(crate) cwd_abs: String,
}

impl Rules {
    /// An empty view of `agent`.
    pub(crate) fn new(agent: Agent, cwd: &str, for_path: Option<&str>, cwd_abs: String) -> Rules {
        Rules {
            agent,
            version: agent.version(),
            cwd: cwd.to_owned(),
            for_path: for_path.map(str::to_owned),
            pieces: Vec::new(),
            not_loaded: Vec::new(),
            diagnostics: Vec::new(),
            notes: Vec::new(),
            cwd_abs,
        }
    }

    /// Whether the view holds anything of the project: a piece, or a file of this agent's
    /// not loaded (the files of other agents it names do not count).
    pub fn found(&self) -> bool {
        self.pieces.iter().any(|p| p.scope != Scope::User)
            || self
                .not_loaded
                .iter()
                .any(|n| !n.path.starts_with('~') && n.reason != Reason::NotThisAgent)
    }

    /// Bytes of every piece together.
    pub fn bytes(&self) -> u64 {
        self.pieces.iter().filter(|p| !p.inlined).map(|p| p.bytes).sum()
    }

    /// o200k tokens of every piece together.
    pub fn tokens(&self) -> u64 {
        self.pieces.iter().filter(|p| !p.inlined).map(|p| p.tokens).sum()
    }

    /// Whether a diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.code.severity() == ctx_diagnostics::Severity::Error)
    }

    /// What loads later, as one segment: each later piece as `each` writes it, one a line;
    /// none when no piece loads later.
    pub(crate) fn later(&self, each: impl FnMut(&Piece) -> String) -> Option<Segment> {
        let later = self.pieces.iter().filter(|p| p.placement == Placement::Later).map(each);
        Segment::joined(Placement::Later, later.collect(), "\n", str::to_owned)
    }
}

/// Whose a file is, as the agent labels it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Scope {
    /// A file of the project, checked in.
    Project,
    /// A file of the project kept out of version control (`CLAUDE.local.md`).
    Local,
    /// The user's own file, in their home folder.
    User,
}

/// Where in the request a piece goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Placement {
    /// The system prompt.
    System,
    /// The first user message (or a user-role context message before it).
    User,
    /// Later in the conversation, when a file is read (a tool result or the message after it).
    Later,
}

/// One piece of text an agent loads.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Piece {
    /// The file, relative to the workspace root, or `~/…` for the user's own.
    pub path: String,
    /// The absolute path, as the agent names it in its wrappers.
    #[serde(skip)]
    pub abs: String,
    /// Whose the file is.
    pub scope: Scope,
    /// The 1-based line of the file on which the text sent starts.
    pub line: u32,
    /// Why the agent loads it.
    pub why: Why,
    /// Where the text goes.
    pub placement: Placement,
    /// The name the agent gives it (a Cline rule's heading, a skill's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The text the agent sends for it, after its own changes (front matter taken off, line
    /// ends, comments, the cut), before its wrapper.
    pub text: String,
    /// Bytes of `text`.
    pub bytes: u64,
    /// o200k tokens of `text`.
    pub tokens: u64,
    /// Where a cap cut it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    /// How deep in imports it was found (0 for a file found by discovery).
    pub depth: u32,
    /// Whether its text is sent inside the piece that imports it (Gemini CLI, Copilot CLI):
    /// its bytes and tokens are counted there, not again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inlined: bool,
}

/// Why a piece is loaded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Why {
    /// In the working folder, or a rule that always applies.
    Always,
    /// In a folder above the working folder, from the project root down.
    Ancestor {
        /// The folder, relative to the workspace root (`.` for the root).
        dir: String,
    },
    /// The user's own file, for every project.
    Global,
    /// A glob of its front matter matched the file being worked on.
    Glob {
        /// The front-matter key (`paths`, `globs`, `applyTo`).
        key: String,
        /// The glob that matched.
        glob: String,
        /// The file it matched.
        file: String,
    },
    /// Imported by another piece.
    Import {
        /// The importing file.
        from: String,
        /// The line of the import in it.
        line: u32,
        /// The import as written.
        written: String,
    },
    /// A folder on the way to the file being worked on: the agent loads it when that file
    /// is read.
    Lazy {
        /// The folder, relative to the workspace root.
        dir: String,
    },
    /// Only listed (its name, description or glob), for the model to read when it decides.
    Listed,
}

/// How a cap cut a piece.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Cut {
    /// `bytes` or `chars`.
    pub unit: Unit,
    /// How much was kept.
    pub kept: u64,
    /// How much the file holds.
    pub total: u64,
    /// The cap.
    pub cap: u64,
    /// Whether the cap is shared by several files (Codex's `project_doc_max_bytes`).
    pub shared: bool,
}

/// What a cap counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Bytes.
    Bytes,
    /// Characters.
    Chars,
}

impl Unit {
    /// `bytes` or `characters`, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Bytes => "bytes",
            Unit::Chars => "characters",
        }
    }
}

/// A file, or an import, the agent does not load.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct NotLoaded {
    /// The file as ctx names it (relative to the workspace root, `~/…`), or the import as
    /// written.
    pub path: String,
    /// The line it is about, where there is one (an import's line in its file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The file that holds it, for an import.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Why not.
    pub reason: Reason,
}

impl NotLoaded {
    /// A file not loaded.
    pub(crate) fn file(path: impl Into<String>, reason: Reason) -> NotLoaded {
        NotLoaded { path: path.into(), line: None, from: None, reason }
    }

    /// An import not followed.
    pub(crate) fn import(written: &str, from: &str, line: u32, reason: Reason) -> NotLoaded {
        NotLoaded {
            path: written.to_owned(),
            line: Some(line),
            from: Some(from.to_owned()),
            reason,
        }
    }
}

/// Why something is not loaded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Reason {
    /// No glob of its front matter matches the file being worked on (or none was given).
    GlobNotMatched {
        /// The front-matter key.
        key: String,
        /// Its globs.
        globs: Vec<String>,
        /// The file being worked on, if one was given.
        file: Option<String>,
    },
    /// Its front matter does not parse, or has a value the agent cannot use, and the agent
    /// drops the file.
    FrontMatter {
        /// What is wrong.
        message: String,
    },
    /// Only when the user asks for it (`@`-mentions it).
    Manual,
    /// An import nested deeper than the agent follows.
    ImportDepth {
        /// The deepest level the agent imports.
        limit: u32,
    },
    /// An import inside code, which the agent does not follow.
    ImportInCode {
        /// A code span, a fenced or indented block, an HTML comment.
        what: String,
    },
    /// An import that leaves the project.
    ImportOutside {
        /// Whether the agent reads it (ctx never does): with the user's approval, or always.
        agent_reads: bool,
    },
    /// An external import the user has not approved: the agent skips it without a word.
    ImportNotApproved,
    /// An import of a file that does not exist.
    ImportMissing,
    /// An import of a file the agent does not import (a binary extension, no extension).
    ImportNotText,
    /// A file already loaded (a cycle or a repeat): loaded once.
    AlreadyLoaded,
    /// Dropped whole because a shared cap was spent by the files before it.
    CapSpent {
        /// The cap.
        cap: u64,
        /// What it counts.
        unit: Unit,
    },
    /// Larger than the agent reads at all.
    TooLarge {
        /// The largest file the agent reads.
        cap: u64,
    },
    /// In a folder the agent does not read from for this working folder.
    WrongFolder {
        /// The folder.
        dir: String,
    },
    /// In a folder below the working folder: loaded when a file of it is read.
    Lazy {
        /// The folder.
        dir: String,
    },
    /// Another file takes its place.
    Shadowed {
        /// The file that does.
        by: String,
    },
    /// Empty or only white space.
    Empty,
    /// A file this agent does not read.
    NotThisAgent,
    /// ctx did not read it: the sandbox refused it (denied, too large for ctx, not a regular
    /// file, binary) or ctx's own budget was spent.
    Unreadable {
        /// The code of the refusal.
        code: String,
        /// Why, lower-case.
        message: String,
    },
}

/// A part of the request that carries rule text, as the agent sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Segment {
    /// Where it goes.
    pub placement: Placement,
    /// The text.
    pub text: String,
}

impl Segment {
    /// One segment of `placement`: the `parts` joined by `sep`, as `wrap` writes them; none
    /// when there are no parts.
    pub(crate) fn joined(
        placement: Placement,
        parts: Vec<String>,
        sep: &str,
        wrap: impl FnOnce(&str) -> String,
    ) -> Option<Segment> {
        (!parts.is_empty()).then(|| Segment { placement, text: wrap(&parts.join(sep)) })
    }
}
