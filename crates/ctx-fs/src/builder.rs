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

/// Configures and opens a [`Sandbox`].
#[derive(Clone, Debug)]
pub struct SandboxBuilder {
    workspace: Utf8PathBuf,
    allow: Vec<(Utf8PathBuf, RootKind)>,
    home: Option<Utf8PathBuf>,
    deny: Vec<String>,
    ignore: IgnoreSettings,
    limits: Limits,
    cache_ttl: Duration,
    cache_bytes: u64,
    fast_path: bool,
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
    /// [`RootKind::Allowed`]: there is one workspace).
    pub fn root(mut self, dir: impl Into<Utf8PathBuf>, kind: RootKind) -> SandboxBuilder {
        let kind = if kind == RootKind::Workspace { RootKind::Allowed } else { kind };
        self.allow.push((dir.into(), kind));
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
        let mut roots = Vec::new();
        let mut all = vec![(self.workspace.clone(), RootKind::Workspace)];
        for (dir, kind) in &self.allow {
            all.push(match home_relative(dir.as_str()) {
                // `~` and `~/sub` are the home directory and a folder in it, which serve home
                // paths and absolute ones, never relative paths.
                Some(rest) => {
                    let home = self.home.as_ref().ok_or_else(|| {
                        Error::new(ErrorKind::Config, dir.as_str())
                            .with_detail("cannot open root: no home directory is known")
                    })?;
                    (home.join(rest), RootKind::Home)
                }
                None => (dir.clone(), *kind),
            });
        }
        for (dir, kind) in &all {
            roots.push(Root::open(dir, *kind, ambient_authority)?);
        }
        let cache = moka::sync::Cache::builder()
            .max_capacity(self.cache_bytes)
            .time_to_live(self.cache_ttl)
            .weigher(|key: &(usize, String), value: &Arc<Cached>| {
                u32::try_from(key.1.len() + value.content.weight() + 64).unwrap_or(u32::MAX)
            })
            .build();
        Ok(Sandbox {
            roots,
            home: self.home.as_deref().map(|h| absolute_comps(h.as_str())),
            deny,
            ignore: self.ignore,
            limits: self.limits,
            cache,
            cache_on: self.cache_bytes > 0,
            fast_path: self.fast_path,
        })
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
    #[allow(clippy::disallowed_methods)]
    pub(crate) fn open(path: &Utf8Path, kind: RootKind, ambient: AmbientAuthority) -> Result<Root> {
        let fail = |e: io::Error| {
            Error::new(ErrorKind::Config, path.as_str())
                .with_detail(format!("cannot open root: {e}"))
                .with_source(e)
        };
        let dir = Dir::open_ambient_dir(path, ambient).map_err(fail)?;
        let canonical = std::fs::canonicalize(path).map_err(fail)?;
        let canonical = Utf8PathBuf::try_from(canonical).map_err(|e| fail(e.into_io_error()))?;
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            let cwd = std::env::current_dir().map_err(fail)?;
            let cwd = Utf8PathBuf::try_from(cwd).map_err(|e| fail(e.into_io_error()))?;
            cwd.join(path)
        };
        Ok(Root {
            dir,
            canonical: absolute_comps(canonical.as_str()),
            given: absolute_comps(absolute.as_str()),
            display: canonical,
            kind,
        })
    }
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
