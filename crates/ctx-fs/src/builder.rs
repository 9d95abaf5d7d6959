//! Configuring and opening a [`Sandbox`]: its limits, ignore settings and roots. Opening the
//! roots is the one use of ambient authority.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use cap_std::AmbientAuthority;
use cap_std::fs_utf8::Dir;

use crate::cache::Cached;
use crate::deny::DenyList;
use crate::error::{Error, ErrorKind, Result};
use crate::location::RootKind;
use crate::overlay::Overlay;
use crate::sandbox::Sandbox;

/// Size and walk limits.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest file read, in bytes (default 1 MiB); larger is `E_TOO_LARGE`.
    pub max_file_bytes: u64,
    /// Most entries one walk returns (default 10 000); the walk is then
    /// marked truncated.
    pub max_walk_entries: usize,
    /// Deepest level a walk descends to, the walked directory's own entries
    /// being level 1 (default 64).
    pub max_walk_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_file_bytes: 1024 * 1024, max_walk_entries: 10_000, max_walk_depth: 64 }
    }
}

/// What walks leave out besides the ignore files.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IgnoreSettings {
    /// Skip entries whose name starts with `.` (default true).
    pub skip_hidden: bool,
    /// Directory names skipped in walks (default `node_modules`, `target`,
    /// `dist`, `build`, `.venv`, `__pycache__`).
    pub skip_dirs: Vec<String>,
    /// Names of the ignore files read in every directory, lowest precedence
    /// first (default `.gitignore`, `.ignore`, `.ctxignore`).
    pub ignore_files: Vec<String>,
    /// Extra lines in gitignore syntax, applied at each root after its own
    /// ignore files (so they win over them there).
    pub extra_rules: Vec<String>,
}

impl Default for IgnoreSettings {
    fn default() -> IgnoreSettings {
        let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        IgnoreSettings {
            skip_hidden: true,
            skip_dirs: strings(&[
                "node_modules",
                "target",
                "dist",
                "build",
                ".venv",
                "__pycache__",
            ]),
            ignore_files: strings(&[".gitignore", ".ignore", ".ctxignore"]),
            extra_rules: Vec::new(),
        }
    }
}

/// Who asked for a root: the user (the command line, the user's own configuration, an
/// embedder), or a file of the workspace, whose roots are judged by the root rule on their
/// real path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    User,
    Project,
}

/// A root that a project file asked for and that was not opened
/// ([`SandboxBuilder::project_root`], [`Sandbox::refused_roots`]).
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

/// Configures and opens a [`Sandbox`].
#[derive(Clone, Debug)]
pub struct SandboxBuilder {
    workspace: Utf8PathBuf,
    allow: Vec<(Utf8PathBuf, RootKind, Origin)>,
    home: Option<Utf8PathBuf>,
    deny: Vec<String>,
    ignore: IgnoreSettings,
    limits: Limits,
    cache_ttl: Duration,
    cache_bytes: u64,
    fast_path: bool,
    overlay: Option<Overlay>,
}

impl SandboxBuilder {
    /// Starts a sandbox whose workspace root is `workspace`.
    pub fn new(workspace: impl Into<Utf8PathBuf>) -> SandboxBuilder {
        SandboxBuilder {
            workspace: workspace.into(),
            allow: Vec::new(),
            home: std::env::home_dir().and_then(|h| Utf8PathBuf::try_from(h).ok()),
            deny: Vec::new(),
            ignore: IgnoreSettings::default(),
            limits: Limits::default(),
            cache_ttl: Duration::from_secs(60),
            cache_bytes: 64 * 1024 * 1024,
            fast_path: true,
            overlay: None,
        }
    }

    /// Adds an extra read-only root (`--allow DIR`), searched for relative paths after the
    /// workspace root.
    pub fn allow(self, dir: impl Into<Utf8PathBuf>) -> SandboxBuilder {
        self.root(dir, RootKind::Allowed)
    }

    /// The user's home directory, which `~` and `~/…` name, in paths and in roots given as
    /// `~` or `~/sub` (default: the `HOME` variable, else the platform's lookup; `None`: no
    /// home path resolves, and a `~` root cannot be opened).
    pub fn home(mut self, dir: Option<Utf8PathBuf>) -> SandboxBuilder {
        self.home = dir;
        self
    }

    /// Adds an extra read-only root of the given kind ([`RootKind::Workspace`] counts as
    /// [`RootKind::Allowed`]: there is one workspace). A root that lies inside the workspace
    /// is opened through the workspace's handle, so it never leads out of it; any other is
    /// opened by its path, as the user gave it. One that cannot be opened fails
    /// [`SandboxBuilder::open`].
    pub fn root(self, dir: impl Into<Utf8PathBuf>, kind: RootKind) -> SandboxBuilder {
        self.add(dir.into(), kind, Origin::User)
    }

    /// Adds a root that a file of the workspace asks for (a configuration found there, a
    /// solution's source folders), as [`SandboxBuilder::root`] does, except that it is judged
    /// where it really is: the real path of the opened handle (where every link on the way
    /// leads) must pass the root rule ([`root_refusal`](crate::root_refusal)): never a file
    /// system root, a system folder, the home folder or above, a denied or hidden folder of
    /// the home folder. A root that fails the rule or cannot be opened is left out and listed
    /// by [`Sandbox::refused_roots`]; it never fails the build.
    ///
    /// Whether the user trusts such a root at all is the caller's decision, made before.
    pub fn project_root(self, dir: impl Into<Utf8PathBuf>, kind: RootKind) -> SandboxBuilder {
        self.add(dir.into(), kind, Origin::Project)
    }

    fn add(mut self, dir: Utf8PathBuf, kind: RootKind, origin: Origin) -> SandboxBuilder {
        let kind = if kind == RootKind::Workspace { RootKind::Allowed } else { kind };
        self.allow.push((dir, kind, origin));
        self
    }

    /// Adds a deny glob, matched case-insensitively against every in-root
    /// path and each of its ancestors (`secrets` denies `secrets/a.md`; `*`
    /// also matches `/`, so `*.sqlite` denies them at any depth).
    pub fn deny(mut self, glob: impl Into<String>) -> SandboxBuilder {
        self.deny.push(glob.into());
        self
    }

    /// Replaces the walk ignore settings.
    pub fn ignore(mut self, ignore: IgnoreSettings) -> SandboxBuilder {
        self.ignore = ignore;
        self
    }

    /// Replaces the limits.
    pub fn limits(mut self, limits: Limits) -> SandboxBuilder {
        self.limits = limits;
        self
    }

    /// Sets how long a cached file stays cached (default 60 s).
    pub fn cache_ttl(mut self, ttl: Duration) -> SandboxBuilder {
        self.cache_ttl = ttl;
        self
    }

    /// Sets the cache capacity in bytes of text (default 64 MiB; 0 turns
    /// the cache off).
    pub fn cache_capacity(mut self, bytes: u64) -> SandboxBuilder {
        self.cache_bytes = bytes;
        self
    }

    /// Whether to try the one-call Linux fast path (`openat2` beneath the
    /// root, refusing every symbolic link) before the portable
    /// component-by-component resolution (default true; elsewhere it does
    /// nothing). Both give the same answers; tests run both.
    pub fn fast_path(mut self, on: bool) -> SandboxBuilder {
        self.fast_path = on;
        self
    }

    /// Serves the texts of `overlay` in place of the bytes on disk of the files it names
    /// (an editor's unsaved buffers). Every check of a disk read still applies.
    pub fn overlay(mut self, overlay: Overlay) -> SandboxBuilder {
        self.overlay = Some(overlay);
        self
    }

    /// Opens the roots and builds the sandbox.
    ///
    /// # Ambient Authority
    ///
    /// This opens the root directories by path in the process's ambient
    /// file system namespace. It is the only place where the sandbox uses
    /// ambient authority; every later access goes through the handles
    /// opened here.
    pub fn open(self, ambient_authority: AmbientAuthority) -> Result<Sandbox> {
        let deny = DenyList::new(&self.deny)?;
        let workspace = Root::open(&self.workspace, RootKind::Workspace, ambient_authority)?;
        let cache = moka::sync::Cache::builder()
            .max_capacity(self.cache_bytes)
            .time_to_live(self.cache_ttl)
            .weigher(|key: &(usize, String), value: &Arc<Cached>| {
                u32::try_from(key.1.len() + value.content.weight() + 64).unwrap_or(u32::MAX)
            })
            .build();
        let mut sandbox = Sandbox {
            roots: vec![workspace],
            refused: Vec::new(),
            home: self.home.as_deref().map(|h| absolute_comps(h.as_str())),
            deny,
            ignore: self.ignore,
            limits: self.limits,
            cache,
            cache_on: self.cache_bytes > 0,
            fast_path: self.fast_path,
            overlay: self.overlay,
        };
        for (dir, kind, origin) in self.allow {
            let opened = match home_relative(dir.as_str()) {
                // `~` and `~/sub` are the home directory and a folder in it, which serve home
                // paths and absolute ones, never relative paths.
                Some(rest) => match &self.home {
                    Some(home) => sandbox.open_root(&home.join(rest), RootKind::Home, origin),
                    None => Err((
                        Error::new(ErrorKind::Config, dir.as_str())
                            .with_detail("cannot open root: no home directory is known"),
                        None,
                    )),
                },
                None => sandbox.open_root(&dir, kind, origin),
            };
            match (opened, origin) {
                (Ok(root), _) => sandbox.roots.push(root),
                (Err((error, refusal)), Origin::Project) => {
                    sandbox.refused.push(RefusedRoot { written: dir, kind, error, refusal });
                }
                (Err((error, _)), Origin::User) => return Err(error),
            }
        }
        Ok(sandbox)
    }
}

impl Sandbox {
    /// Opens an extra root: through the workspace's handle when its path lies in the
    /// workspace, by its path otherwise; a project's root must then pass the root rule where
    /// it really is.
    fn open_root(
        &self,
        path: &Utf8Path,
        kind: RootKind,
        origin: Origin,
    ) -> std::result::Result<Root, (Error, Option<(Utf8PathBuf, crate::RootRefusal)>)> {
        let given = absolute_comps(absolute(path).map_err(|e| (e, None))?.as_str());
        let workspace = &self.roots[0];
        let inside = given
            .strip_prefix(workspace.given.as_slice())
            .or_else(|| given.strip_prefix(workspace.canonical.as_slice()));
        if let Some(inside) = inside {
            let location = crate::location::Location::new(crate::RootId::WORKSPACE, inside);
            let (comps, dir) = self.open_dir(&location, path.as_str()).map_err(|e| (e, None))?;
            let mut canonical = workspace.canonical.clone();
            canonical.extend(comps);
            let display = joined(&canonical);
            return Ok(Root { dir, canonical, given, display, kind });
        }
        let root = Root::open(path, kind, cap_std::ambient_authority()).map_err(|e| (e, None))?;
        if origin == Origin::Project {
            let home = self.home.as_deref().map(joined);
            let home = home.as_ref().map(|h| h.as_str());
            if let Some(why) = crate::root_refusal(root.display.as_str(), home) {
                let detail = format!("not opened: it leads to {}, {why}", root.display);
                let error = Error::new(ErrorKind::Config, path.as_str()).with_detail(detail);
                return Err((error, Some((root.display, why))));
            }
        }
        Ok(root)
    }
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
fn absolute(path: &Utf8Path) -> Result<Utf8PathBuf> {
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
fn joined(comps: &[String]) -> Utf8PathBuf {
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
fn absolute_comps(path: &str) -> Vec<String> {
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
