//! [`SourceIndex`]: every file a solution or compilation database names, by name and by path;
//! its types and what it reports. Building it is in `load.rs` (reading the project files) and
//! `verify.rs` (checking them against the disk), serving it again in `cache.rs`, looking paths
//! up in `lookup.rs`.

use ctx_diagnostics::Code;
use ctx_fs::{Location, Sandbox};
use serde::{Deserialize, Serialize};

use crate::files::Files;
pub use crate::files::{FileState, SourceFile};
use crate::keys::Maps;
use crate::paths;
use crate::warning::{Warning, Warnings};

/// How many files an index holds at most, unless configured otherwise.
pub const DEFAULT_MAX_FILES: usize = 50_000;

/// How many distinct projects of a solution are read at most, unless configured otherwise.
pub const DEFAULT_MAX_PROJECTS: usize = 10_000;

/// How an index is built.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// Most files indexed; past it the rest is left out with a warning. The work of a build
    /// is bounded from it too (see docs/sources.md, "Bounds").
    pub max_files: usize,
    /// Most distinct projects read from a solution; past it the rest is left out with a
    /// warning.
    pub max_projects: usize,
    /// The home folder, which is never a source root (nor any of its ancestors).
    pub home: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        let home = std::env::home_dir().and_then(|h| h.to_str().map(paths_of_os));
        Options { max_files: DEFAULT_MAX_FILES, max_projects: DEFAULT_MAX_PROJECTS, home }
    }
}

/// A path the platform gave, `/`-separated and normalised.
pub(crate) fn paths_of_os(path: &str) -> String {
    paths::normalize(&path.replace('\\', "/"))
}

/// A project of the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Project {
    /// Its name in the solution.
    pub name: String,
    /// Its file, absolute.
    pub path: String,
    /// How many files it lists.
    pub files: usize,
}

/// A wildcard item or a folder of headers, expanded once the source roots are open.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Pending {
    pub(crate) pattern: String,
    /// Its exclusion list: [`SourceIndex::exclusions`]`[exclude]`.
    pub(crate) exclude: usize,
    pub(crate) project: usize,
    /// The file that names it (a project, its `.filters`, a `.vcxitems`, the database).
    pub(crate) file: String,
    pub(crate) line: u32,
}

/// The length and modification time of a file read to build the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    pub(crate) path: String,
    pub(crate) len: u64,
    pub(crate) mtime_ns: u128,
}

impl Stamp {
    /// A file the index looked for and did not find (a project the solution lists, a
    /// `.filters`, an import): the index is stale once it is there.
    pub(crate) fn absent(path: String) -> Stamp {
        Stamp { path, len: u64::MAX, mtime_ns: u128::MAX }
    }

    /// Whether it stands for a file that was not there.
    pub(crate) fn is_absent(&self) -> bool {
        self.len == u64::MAX && self.mtime_ns == u128::MAX
    }
}

/// The files of an out-of-source build: file name → paths, path relative to a source root →
/// path, the source roots, the projects, the stale entries.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SourceIndex {
    pub(crate) solution: String,
    /// The other files read into the index: a compilation database beside the solution.
    pub(crate) also: Vec<String>,
    pub(crate) workspace: String,
    /// What the index was built for (solution, workspace, home, caps): the name of its
    /// store entry, and checked again when it is read back.
    pub(crate) key: String,
    pub(crate) projects: Vec<Project>,
    /// Stored by folder: each folder once, then each file's folder and name; a stored index
    /// builds a path per file only when one is asked for (`files.rs`).
    pub(crate) files: Files,
    pub(crate) roots: Vec<String>,
    /// The literal folders of the wildcard items that counted when the roots were chosen: with
    /// the files as written, what the roots are computed from (again, for a stored index).
    pub(crate) folders: Vec<String>,
    pub(crate) warnings: Warnings,
    pub(crate) pending: Vec<Pending>,
    /// The distinct exclusion lists of the wildcard items (absolute patterns each).
    pub(crate) exclusions: Vec<Vec<String>>,
    pub(crate) stamps: Vec<Stamp>,
    /// The most files the index holds, wildcard expansions included.
    pub(crate) max_files: usize,
    /// The most distinct projects read.
    pub(crate) max_projects: usize,
    /// How many files the cap left out.
    pub(crate) left_out: usize,
    pub(crate) verified: bool,
    /// Per source root, the names of the entries directly in it, listed when the
    /// index was verified: a bare name joined to a root is checked against them.
    pub(crate) top_names: Vec<Vec<String>>,
    /// With wildcard items, what the index held before their walks, so that a stored index
    /// walks their folders again ([`SourceIndex::verify`]) rather than serve what they held.
    pub(crate) listed: Option<Box<Listed>>,
    /// The maps from a file name and from a root-relative path to the files, built on the
    /// first lookup (a report such as `ctx sources` makes none).
    #[serde(skip)]
    pub(crate) maps: std::sync::OnceLock<Maps>,
    #[serde(skip)]
    pub(crate) cached: bool,
    /// The warnings of this run only: the source roots the verifying sandbox did not hold.
    /// Never stored; an index verified without all its roots is not stored either.
    #[serde(skip)]
    pub(crate) closed: Vec<Warning>,
    /// The source roots the verifying sandbox did not hold (those of [`SourceIndex::closed`]).
    #[serde(skip)]
    pub(crate) unopened: Vec<String>,
}

/// What an index held before its wildcard items were walked: its first `files` files (those
/// the projects list), each project's count, the warnings, the files the cap left out.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Listed {
    pub(crate) files: usize,
    pub(crate) counts: Vec<usize>,
    pub(crate) warnings: Warnings,
    pub(crate) left_out: usize,
}

impl Listed {
    pub(crate) fn of(index: &SourceIndex) -> Listed {
        Listed {
            files: index.files.len(),
            counts: index.projects.iter().map(|p| p.files).collect(),
            warnings: index.warnings.clone(),
            left_out: index.left_out,
        }
    }
}

/// What an index holds, for reports (`ctx sources --format json`, the MCP `sources` tool).
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Summary<'a> {
    /// The solution or database, absolute.
    pub solution: &'a str,
    /// The other files read into the index, absolute: a compilation database beside the
    /// solution.
    pub also_read: &'a [String],
    /// The projects with their item counts.
    pub projects: &'a [Project],
    /// How many files are indexed.
    pub files: usize,
    /// The stale entries: path, project name and line.
    pub missing: Vec<Missing<'a>>,
    /// The entries whose case the disk corrected.
    pub corrected: Vec<Corrected<'a>>,
    /// The entries the sandbox refuses (outside every open root, denied): they are not
    /// told apart by whether they exist.
    pub refused: Vec<&'a str>,
    /// The source roots.
    pub source_roots: &'a [String],
    /// What was left out while reading the projects and checking the disk (`W_SOURCES`).
    pub warnings: Vec<&'a Warning>,
    /// Whether the index came from the store.
    pub cached: bool,
}

/// A stale entry of a [`Summary`].
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Missing<'a> {
    /// The file.
    pub path: &'a str,
    /// The name of the project that lists it.
    pub project: &'a str,
    /// The line that names it.
    pub line: u32,
}

/// A case-corrected entry of a [`Summary`].
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Corrected<'a> {
    /// As the project wrote it.
    pub written: &'a str,
    /// As the disk spells it.
    pub path: &'a str,
}

/// How a query was resolved by the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Via {
    /// A path relative to a source root, or the end of an indexed path.
    Index,
    /// Joined to a source root: a file there that no project lists.
    SourceRoot,
    /// A bare file name that one indexed file has.
    FileName,
}

impl Via {
    /// The name used in JSON (`index`, `source_root`, `file_name`).
    pub fn name(self) -> &'static str {
        match self {
            Via::Index => "index",
            Via::SourceRoot => "source_root",
            Via::FileName => "file_name",
        }
    }
}

/// What the index says about a query.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lookup {
    /// One file, absolute, and the rule that found it.
    Found {
        /// The file.
        path: String,
        /// The rule.
        via: Via,
    },
    /// Several files, each with its root.
    Ambiguous(Vec<Candidate>),
    /// None; the closest indexed path, if one is close.
    NotFound(Option<Candidate>),
}

/// A file a query may mean: its absolute path, the root it lies in (the workspace or a source
/// root) and its path relative to that root. Shown as `App/a.h in /src/FreeCAD/src`, or, in
/// the workspace, as the relative path alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Candidate {
    /// The file, absolute.
    pub path: String,
    /// The file relative to [`Candidate::root`]: what to write to name it alone.
    pub relative: String,
    /// The folder it lies in: the workspace or a source root, absolute.
    pub root: String,
    /// Whether that folder is the workspace (then it is shown as the relative path alone).
    #[serde(skip)]
    pub in_workspace: bool,
}

impl Candidate {
    /// The file `path` (absolute), `relative` to `root`.
    pub fn new(path: &str, relative: &str, root: &str) -> Candidate {
        Candidate {
            path: path.to_owned(),
            relative: relative.to_owned(),
            root: root.to_owned(),
            in_workspace: false,
        }
    }
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.in_workspace, self.root.as_str()) {
            (true, _) => f.write_str(&self.relative),
            (false, "/") => f.write_str(&self.path),
            (false, root) => write!(f, "{} in {root}", self.relative),
        }
    }
}

impl Lookup {
    /// The code of a lookup that found no single file.
    pub fn code(&self) -> Option<Code> {
        match self {
            Lookup::Found { .. } => None,
            Lookup::Ambiguous(_) => Some(Code::Ambiguous),
            Lookup::NotFound(_) => Some(Code::NotFound),
        }
    }
}

impl SourceIndex {
    /// The solution or database the index was built from, absolute.
    pub fn solution(&self) -> &str {
        &self.solution
    }

    /// The other files read into the index, absolute: a compilation database read with the
    /// solution beside it ([`SourceIndex::load_all`]).
    pub fn also_read(&self) -> &[String] {
        &self.also
    }

    /// The projects, in the solution's order, each once.
    pub fn projects(&self) -> &[Project] {
        &self.projects
    }

    /// Every indexed file.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// How many indexed files lie in the folder `root` (a source root): what the trust asked
    /// for it shows. A stored index counts them without building their paths.
    pub fn files_in(&self, root: &str) -> usize {
        self.files.count_within(root)
    }

    /// The source roots, absolute: each becomes a read-only root of the sandbox.
    pub fn source_roots(&self) -> &[String] {
        &self.roots
    }

    /// What was left out while reading the projects and checking the disk, one `W_SOURCES`
    /// warning each: at most [`MAX_WARNINGS`](crate::MAX_WARNINGS) listed, the rest counted
    /// in one more; then one per source root the verifying sandbox did not hold.
    pub fn warnings(&self) -> impl Iterator<Item = &Warning> + '_ {
        self.warnings.as_slice().iter().chain(&self.closed)
    }

    /// The "Source roots" section of a system prompt: the roots, how paths resolve through
    /// them, how to pick one of several matches, and that they are read-only.
    pub fn prompt_section(&self) -> String {
        let mut text = String::from("## Source roots\n\n");
        // Only the roots that can be read: a model told of a folder it cannot read would ask
        // for its files in vain.
        let open: Vec<&String> = self.roots.iter().filter(|r| !self.unopened.contains(r)).collect();
        if open.is_empty() {
            text.push_str(
                "This workspace is the build folder of an out-of-source build. The sources it \
                 builds are in the workspace itself, or in folders not opened (see `ctx \
                 sources`); a file name that only one indexed file has resolves to it.\n",
            );
            return text;
        }
        text.push_str(
            "This workspace is the build folder of an out-of-source build. The sources it \
             builds live in these folders, which are read-only:\n\n",
        );
        for root in open {
            text.push_str(&format!("- {root}\n"));
        }
        let (relative, unique) = self.examples();
        let example = |path: Option<&str>| path.map(|p| format!(" (`@{p}`)")).unwrap_or_default();
        text.push_str(&format!(
            "\nA path relative to one of them resolves{}, and so does a file name that only one \
             indexed file has{}. When a name matches several files, ctx lists them numbered, \
             each relative to its root: write the path relative to its root to choose one. \
             Files there can be read and searched, never written.\n",
            example(relative),
            example(unique),
        ));
        text
    }

    /// Examples of this index for the prompt section: a file's path relative to its source
    /// root, and a file name only one indexed file has. Only plain paths (letters, digits,
    /// `.`, `_`, `-`, `/`; at most 80 bytes) are taken, so that nothing a project file hides
    /// reaches the prompt through them.
    fn examples(&self) -> (Option<&str>, Option<&str>) {
        let plain = |p: &str| {
            p.len() <= 80 && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b))
        };
        let listed =
            self.files.iter().enumerate().filter(|(_, f)| {
                !matches!(f.state, FileState::Missing | FileState::Refused { .. })
            });
        let mut relative = None;
        let mut unique = None;
        for (i, _) in listed {
            let Some(path) = u32::try_from(i).ok().and_then(|i| self.relative(i)) else {
                continue;
            };
            if relative.is_none() && path.contains('/') && plain(path) {
                relative = Some(path);
            }
            let name = crate::paths::file_name(path);
            if unique.is_none() && plain(name) && self.named(name).count() == 1 {
                unique = Some(name);
            }
            if relative.is_some() && unique.is_some() {
                break;
            }
        }
        (relative, unique)
    }

    /// What the index holds, for reports.
    pub fn summary(&self) -> Summary<'_> {
        let project = |i: usize| self.projects.get(i).map_or("", |p| p.name.as_str());
        let mut summary = Summary {
            solution: &self.solution,
            also_read: &self.also,
            projects: &self.projects,
            files: self.files.count(),
            missing: Vec::new(),
            corrected: Vec::new(),
            refused: Vec::new(),
            source_roots: &self.roots,
            warnings: self.warnings().collect(),
            cached: self.cached,
        };
        // Only the files not on disk as listed are named: the others need no path.
        for f in self.files.listed() {
            let path = f.path.unwrap_or_default();
            match f.state {
                FileState::Missing => {
                    let missing = Missing { path, project: project(f.project), line: f.line };
                    summary.missing.push(missing);
                }
                FileState::Corrected { written } => {
                    summary.corrected.push(Corrected { written, path });
                }
                FileState::Refused { .. } => summary.refused.push(path),
                FileState::Exists => {}
            }
        }
        summary
    }

    /// Whether [`SourceIndex::load_cached`] served the index from the store.
    pub fn cached(&self) -> bool {
        self.cached
    }
}

/// The absolute, `/`-separated path of a location.
pub(crate) fn absolute_of(sandbox: &Sandbox, location: &Location) -> String {
    let root = sandbox.root_path(location.root()).as_str().replace('\\', "/");
    paths::normalize(&format!("{root}/{}", location.path()))
}

/// The workspace root of `sandbox`, `/`-separated and normalised.
pub(crate) fn workspace_of(sandbox: &Sandbox) -> String {
    paths_of_os(sandbox.root_path(sandbox.workspace().root()).as_str())
}
