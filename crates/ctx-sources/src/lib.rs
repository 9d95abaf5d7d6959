//! Out-of-source builds: the real sources of a build folder, found through its solution
//! (`.sln`, `.slnx` with `.vcxproj`, `.vcxproj.filters`, `.vcxitems`, `.csproj`) or its
//! `compile_commands.json`.
//!
//! A [`SourceIndex`] is read from the project files through a [`ctx_fs::Sandbox`] (this
//! crate touches no file itself), names the folders the sources share
//! ([`SourceIndex::source_roots`]), which the caller opens as read-only roots of its sandbox,
//! and then answers lookups by path and by file name ([`SourceIndex::lookup`]), the last rule
//! of path resolution (assembly.md §2).
//!
//! The index and its roots come only from project files: never from a path in a prompt or a
//! rule. A project file that names `/etc/passwd` or `~/.ssh/id_rsa` gets that one path
//! indexed; no root is ever widened to reach it, and the sandbox still refuses it.
//!
//! The order of work: [`SourceIndex::load`] through a sandbox of the workspace; a sandbox
//! with each of [`SourceIndex::source_roots`] added as a [`ctx_fs::RootKind::Source`] root;
//! [`SourceIndex::verify`] through it; then [`SourceIndex::lookup`] for each path that the
//! earlier rules of assembly.md §2 did not resolve. The facade's `ContextBuilder::solution`
//! does all of it.

mod bounds;
mod cache;
mod compdb;
mod files;
mod index;
mod keys;
mod load;
mod lookup;
mod merge;
mod msbuild;
mod paths;
mod roots;
mod verify;
mod walk;
mod warning;

use std::fmt;

use ctx_diagnostics::Code;
use ctx_fs::{FileKind, Location, Sandbox};

pub use index::{
    Candidate, Corrected, DEFAULT_MAX_FILES, DEFAULT_MAX_PROJECTS, FileState, Lookup, Missing,
    Options, Project, SourceFile, SourceIndex, Summary, Via,
};
pub use roots::MAX_SOURCE_ROOTS;
pub use warning::{MAX_WARNINGS, Warning};

/// Why an index could not be built.
#[derive(Debug)]
pub struct Error {
    code: Code,
    message: String,
}

impl Error {
    pub(crate) fn fs(err: ctx_fs::Error) -> Error {
        Error { code: err.code(), message: err.to_string() }
    }

    pub(crate) fn config(path: &str, why: String) -> Error {
        Error { code: Code::Config, message: format!("cannot read {path}: {why}") }
    }

    /// The stable code: `E_NOT_FOUND`, `E_DENIED`… from the sandbox, `E_CONFIG` for a file
    /// that does not parse.
    pub fn code(&self) -> Code {
        self.code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The name of a compilation database.
const DATABASE: &str = "compile_commands.json";

/// What [`detect`] found in the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detected {
    /// Nothing to index.
    None,
    /// One solution or database, as a path relative to the workspace.
    One(String),
    /// One solution and one `compile_commands.json` side by side (the solution first): both
    /// are read into one index ([`SourceIndex::load_all`]).
    Both(String, String),
    /// Several, which one to use is for the user to say (`--sln`, `--compile-commands`).
    Several(Vec<String>),
}

/// Looks for a single `*.sln`, `*.slnx` or `compile_commands.json` in the workspace root,
/// else in its `build/` folder; a solution with a `compile_commands.json` beside it is
/// [`Detected::Both`].
pub fn detect(sandbox: &Sandbox) -> Detected {
    for dir in ["", "build"] {
        let location = if dir.is_empty() {
            sandbox.workspace()
        } else {
            match sandbox.resolve(dir, None) {
                Ok(location) => location,
                Err(_) => continue,
            }
        };
        let found = candidates(sandbox, &location);
        match found.len() {
            0 => continue,
            1 => return Detected::One(found.into_iter().next().unwrap_or_default()),
            2 => {
                let database = |p: &String| paths::file_name(p).eq_ignore_ascii_case(DATABASE);
                return match (found.iter().position(database), found) {
                    (Some(i), mut found) => {
                        let database = found.remove(i);
                        Detected::Both(found.remove(0), database)
                    }
                    (None, found) => Detected::Several(found),
                };
            }
            _ => return Detected::Several(found),
        }
    }
    Detected::None
}

/// The solutions and compilation databases in `dir`: its listing's names, then only the
/// matching ones resolved and checked to be files, so that looking costs one read of the
/// listing (every command looks). Ignore rules do not apply: a generated
/// `compile_commands.json` is usually git-ignored.
fn candidates(sandbox: &Sandbox, dir: &Location) -> Vec<String> {
    let Ok(names) = sandbox.names(dir) else {
        return Vec::new();
    };
    names
        .iter()
        .filter(|name| {
            let name = name.to_ascii_lowercase();
            name.ends_with(".sln") || name.ends_with(".slnx") || name == DATABASE
        })
        .filter_map(|name| {
            let location = sandbox.resolve(name, Some(dir)).ok()?;
            let stat = sandbox.stat(&location).ok()?;
            (stat.kind == FileKind::File).then(|| location.path().to_string())
        })
        .collect()
}

/// `f` of each item, in order, the items shared among the cores in runs of at least
/// `min_share` (fewer stay on the calling thread).
pub(crate) fn par_map<T: Sync, R: Send>(
    items: &[T],
    min_share: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let chunk = items.len().div_ceil(threads()).max(min_share.max(1));
    if chunk >= items.len() {
        return items.iter().map(&f).collect();
    }
    let f = &f;
    let mut parts: Vec<&[T]> = items.chunks(chunk).collect();
    // The last share is the calling thread's own, which would otherwise only wait.
    let last = parts.pop().unwrap_or_default();
    std::thread::scope(|scope| {
        let spawned: Vec<_> = parts
            .into_iter()
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        let own: Vec<R> = last.iter().map(f).collect();
        let mut out: Vec<R> = Vec::with_capacity(items.len());
        for p in spawned {
            out.extend(p.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        out.extend(own);
        out
    })
}

/// How many threads [`par_map`] shares work among.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}
