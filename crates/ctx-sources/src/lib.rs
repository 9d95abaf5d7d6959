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

mod compdb;
mod index;
mod msbuild;
mod paths;
mod roots;
mod walk;

use std::fmt;

use ctx_diagnostics::Code;
use ctx_fs::{FileKind, Location, Sandbox};

pub use index::{
    DEFAULT_MAX_FILES, FileState, Lookup, Options, Project, SourceFile, SourceIndex, Via,
};

/// Why an index could not be built.
#[derive(Debug)]
pub struct Error {
    code: Code,
    message: String,
}

impl Error {
    fn fs(err: ctx_fs::Error) -> Error {
        Error { code: err.code(), message: err.to_string() }
    }

    fn config(path: &str, why: String) -> Error {
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

/// What [`detect`] found in the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detected {
    /// Nothing to index.
    None,
    /// One solution or database, as a path relative to the workspace.
    One(String),
    /// Several, which one to use is for the user to say (`--sln`, `--compile-commands`).
    Several(Vec<String>),
}

/// Looks for a single `*.sln`, `*.slnx` or `compile_commands.json` in the workspace root,
/// else in its `build/` folder.
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
            name.ends_with(".sln") || name.ends_with(".slnx") || name == "compile_commands.json"
        })
        .filter_map(|name| {
            let location = sandbox.resolve(name, Some(dir)).ok()?;
            let stat = sandbox.stat(&location).ok()?;
            (stat.kind == FileKind::File).then(|| location.path().to_string())
        })
        .collect()
}

/// The magic bytes of a stored index, then a format version.
const MAGIC: &[u8; 8] = b"CTXSRC\0\0";
const VERSION: u32 = 3;

/// The store entry of an index: a stable hash of its key (solution, workspace, options).
fn store_name(key: &str) -> String {
    // FNV-1a, stable across runs and platforms.
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("sources-{hash:016x}.idx")
}

fn encode(index: &SourceIndex) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend(postcard::to_stdvec(index).unwrap_or_default());
    bytes
}

fn decode(bytes: &[u8]) -> Option<SourceIndex> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (version, body) = rest.split_at_checked(4)?;
    if u32::from_le_bytes(version.try_into().ok()?) != VERSION {
        return None;
    }
    postcard::from_bytes(body).ok()
}
