//! Where things are inside the sandbox: roots, their kinds, locations, and what a location
//! holds.

use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};
use cap_std::fs::Metadata;

/// What a root is for (assembly.md §2, §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RootKind {
    /// The workspace root: relative paths resolve from it.
    Workspace,
    /// An extra read-only root (`--allow DIR`): searched for relative paths after the
    /// workspace root, in the order given.
    Allowed,
    /// The home directory or a folder in it (`--allow '~'`): it serves absolute and `~/`
    /// paths only, and is not searched for relative paths.
    Home,
    /// A source root of a loaded source index: reached through the index, not searched for
    /// relative paths by itself.
    Source,
}

/// One of the sandbox's roots; [`RootId::WORKSPACE`] is the workspace root,
/// the others are the extra read-only roots in the order they were added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RootId(pub(crate) usize);

impl RootId {
    /// The workspace root.
    pub const WORKSPACE: RootId = RootId(0);

    /// The root's position: 0 for the workspace, then the allowed roots in
    /// the order given.
    pub fn index(self) -> usize {
        self.0
    }
}

/// A resolved place inside a root: the root and a normalised relative path
/// with `/` separators and no `.`, `..` or symbolic links in it (the empty
/// path is the root itself).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    pub(crate) root: RootId,
    pub(crate) path: Utf8PathBuf,
}

impl Location {
    pub(crate) fn new<S: AsRef<str>>(root: RootId, comps: &[S]) -> Location {
        let mut path = String::new();
        for comp in comps {
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(comp.as_ref());
        }
        Location { root, path: Utf8PathBuf::from(path) }
    }

    /// The root this location is in.
    pub fn root(&self) -> RootId {
        self.root
    }

    /// The path relative to the root, `/`-separated; empty for the root.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// A root itself.
    pub fn root_of(root: RootId) -> Location {
        Location { root, path: Utf8PathBuf::new() }
    }

    /// The directory containing this location; `None` for a root.
    pub fn parent(&self) -> Option<Location> {
        if self.path.as_str().is_empty() {
            return None;
        }
        let parent = self.path.parent().map(Utf8Path::to_path_buf).unwrap_or_default();
        Some(Location { root: self.root, path: parent })
    }

    /// The path for messages: `.` for the root itself.
    pub(crate) fn shown(&self) -> &str {
        if self.path.as_str().is_empty() { "." } else { self.path.as_str() }
    }

    pub(crate) fn comps(&self) -> Vec<String> {
        self.path.as_str().split('/').filter(|c| !c.is_empty()).map(str::to_owned).collect()
    }
}

/// The type of an entry, symbolic links resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A FIFO, socket or device.
    Other,
}

/// What [`Sandbox::stat`](crate::Sandbox::stat) tells about an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stat {
    /// File, directory or something else.
    pub kind: FileKind,
    /// Length in bytes.
    pub len: u64,
    /// Last modification time, where the platform has one.
    pub modified: Option<SystemTime>,
}

impl Stat {
    pub(crate) fn from_cap(md: &Metadata) -> Stat {
        Stat {
            kind: kind_of(md),
            len: md.len(),
            modified: md.modified().ok().map(|t| t.into_std()),
        }
    }
}

pub(crate) fn kind_of(md: &Metadata) -> FileKind {
    if md.is_file() {
        FileKind::File
    } else if md.is_dir() {
        FileKind::Dir
    } else {
        FileKind::Other
    }
}
