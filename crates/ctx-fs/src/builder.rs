//! Configuring and opening a [`Sandbox`]: its limits, ignore settings and roots. Opening the
//! roots is the one use of ambient authority.

use std::sync::Arc;
use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use cap_std::AmbientAuthority;

use crate::cache::Cached;
use crate::deny::DenyList;
use crate::error::{Error, ErrorKind, Result};
use crate::location::RootKind;
use crate::overlay::Overlay;
use crate::root::{RefusedRoot, Root, absolute, absolute_comps, home_relative, joined};
use crate::sandbox::Sandbox;
use crate::settings::{IgnoreSettings, Limits};

/// Who asked for a root: the user (the command line, the user's own configuration, an
/// embedder), or a file of the workspace, whose roots are judged by the root rule on their
/// real path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    User,
    Project,
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
    /// Starts configuring a sandbox whose workspace root is `workspace`;
    /// shorthand for [`SandboxBuilder::new`].
    pub fn builder(workspace: impl Into<Utf8PathBuf>) -> SandboxBuilder {
        SandboxBuilder::new(workspace)
    }

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
