//! The roots of a sandbox: each opened once, by path, and known by the real path of its
//! handle; and the roots a project asked for that were not opened.

use std::io;

use camino::{Utf8Path, Utf8PathBuf};
use cap_std::AmbientAuthority;
use cap_std::fs_utf8::Dir;

use crate::error::{Error, ErrorKind, Result};
use crate::location::RootKind;

/// A root that a project file asked for and that was not opened
/// ([`SandboxBuilder::project_root`](crate::SandboxBuilder::project_root),
/// [`Sandbox::refused_roots`](crate::Sandbox::refused_roots)).
#[derive(Debug)]
#[non_exhaustive]
pub struct RefusedRoot {
    /// The root as it was given to the builder.
    pub written: Utf8PathBuf,
    /// What it would have been.
    pub kind: RootKind,
    /// Why not: `E_CONFIG` with the root rule's reason, or the error of opening it.
    pub error: Error,
    /// Where it really is and why the root rule refuses that, when it does.
    pub refusal: Option<(Utf8PathBuf, crate::RootRefusal)>,
}

#[derive(Debug)]
pub(crate) struct Root {
    pub(crate) dir: Dir,
    /// The root's canonical absolute path, as components.
    pub(crate) canonical: Vec<String>,
    /// The root's path as given, made absolute lexically.
    pub(crate) given: Vec<String>,
    pub(crate) display: Utf8PathBuf,
    pub(crate) kind: RootKind,
}

impl Root {
    /// Opens the root at `path` with ambient authority; its canonical path is the real path
    /// of the opened handle, so a link swapped in after the open cannot make it look like
    /// another folder.
    pub(crate) fn open(path: &Utf8Path, kind: RootKind, ambient: AmbientAuthority) -> Result<Root> {
        let fail = |e: io::Error| {
            Error::new(ErrorKind::Config, path.as_str())
                .with_detail(format!("cannot open root: {e}"))
                .with_source(e)
        };
        let dir = Dir::open_ambient_dir(path, ambient).map_err(fail)?;
        let canonical = real_path(&dir, path).map_err(fail)?;
        Ok(Root {
            dir,
            canonical: absolute_comps(canonical.as_str()),
            given: absolute_comps(absolute(path)?.as_str()),
            display: canonical,
            kind,
        })
    }
}

/// Where `path` really is, every symbolic link followed, when it exists: a look at the disk
/// that opens and reads nothing (for showing and comparing roots before any is opened).
///
/// # Ambient Authority
///
/// This looks up `path` in the process's ambient file system namespace.
#[allow(clippy::disallowed_methods)] // A lookup by path, before any root is opened.
pub fn real_path_of(path: &Utf8Path, _ambient: AmbientAuthority) -> Option<Utf8PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    Utf8PathBuf::try_from(real).ok()
}

/// `path` made absolute from the current directory, lexically.
#[allow(clippy::disallowed_methods)] // The current directory, before any root is opened.
pub(crate) fn absolute(path: &Utf8Path) -> Result<Utf8PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let fail = |e: io::Error| {
        Error::new(ErrorKind::Config, path.as_str())
            .with_detail(format!("cannot open root: {e}"))
            .with_source(e)
    };
    let cwd = std::env::current_dir().map_err(fail)?;
    let cwd = Utf8PathBuf::try_from(cwd).map_err(|e| fail(e.into_io_error()))?;
    Ok(cwd.join(path))
}

/// Components back to an absolute path.
pub(crate) fn joined(comps: &[String]) -> Utf8PathBuf {
    if comps.first().is_some_and(|c| c.len() == 2 && c.ends_with(':')) {
        return Utf8PathBuf::from(format!("{}/{}", comps[0], comps[1..].join("/")));
    }
    Utf8PathBuf::from(format!("/{}", comps.join("/")))
}

/// The real path of the folder `dir` opened at `path`: on Linux, where the kernel says the
/// handle is (`/proc/self/fd`); elsewhere, or without `/proc`, the canonical form of `path`,
/// checked on Unix to be the very folder of the handle (same device and inode).
#[allow(clippy::disallowed_methods)] // Looks up the roots' own handles, before any sandbox.
fn real_path(dir: &Dir, path: &Utf8Path) -> io::Result<Utf8PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::{AsFd, AsRawFd};
        let link = format!("/proc/self/fd/{}", dir.as_fd().as_raw_fd());
        if let Ok(target) = std::fs::read_link(link)
            && let Ok(target) = Utf8PathBuf::try_from(target)
            && target.as_str().starts_with('/')
            && !target.as_str().ends_with(" (deleted)")
        {
            return Ok(target);
        }
    }
    let canonical = std::fs::canonicalize(path)?;
    let canonical = Utf8PathBuf::try_from(canonical).map_err(|e| e.into_io_error())?;
    #[cfg(unix)]
    {
        use cap_std::fs::MetadataExt as _;
        use std::os::unix::fs::MetadataExt as _;
        let held = dir.dir_metadata()?;
        let named = std::fs::metadata(&canonical)?;
        if (held.dev(), held.ino()) != (named.dev(), named.ino()) {
            return Err(io::Error::other("the folder changed while it was opened"));
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(canonical)
}

/// Splits an absolute path into normalised components.
pub(crate) fn absolute_comps(path: &str) -> Vec<String> {
    // Windows' canonical paths carry a verbatim prefix.
    let path = path.strip_prefix(r"\\?\").unwrap_or(path);
    let parsed = path.replace('\\', "/");
    let mut out: Vec<String> = Vec::new();
    for part in parsed.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            name => out.push(name.to_owned()),
        }
    }
    out
}

/// The part after `~` of a path that names the home directory (`~`, `~/sub`, `~\sub`), if it
/// is one; `~user` is not.
pub(crate) fn home_relative(path: &str) -> Option<&str> {
    match path.strip_prefix('~')? {
        "" => Some(""),
        rest => rest.strip_prefix(['/', '\\']),
    }
}
