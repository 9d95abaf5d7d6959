//! The [`Sandbox`]: roots, resolution, stat and reads.

use std::io::{self, Read};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};
use cap_fs_ext::{DirExtUtf8, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::AmbientAuthority;
use cap_std::fs::{Metadata, OpenOptions};
use cap_std::fs_utf8::Dir;

use crate::decode::{self, Content};
use crate::deny::DenyList;
use crate::error::{Error, ErrorKind, Result};
use crate::path::{self, Anchor};

/// How many symbolic links one resolution follows before it reports a loop.
pub const MAX_SYMLINK_HOPS: usize = 40;

/// A file modified this recently is not cached: a second write within the
/// file system's time granularity could keep length and modification time.
const RACY_WINDOW: Duration = Duration::from_secs(2);

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
    root: RootId,
    path: Utf8PathBuf,
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

/// What [`Sandbox::stat`] tells about an entry.
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
    fn from_cap(md: &Metadata) -> Stat {
        Stat {
            kind: kind_of(md),
            len: md.len(),
            modified: md.modified().ok().map(|t| t.into_std()),
        }
    }
}

fn kind_of(md: &Metadata) -> FileKind {
    if md.is_file() {
        FileKind::File
    } else if md.is_dir() {
        FileKind::Dir
    } else {
        FileKind::Other
    }
}

/// Configures and opens a [`Sandbox`].
#[derive(Clone, Debug)]
pub struct SandboxBuilder {
    workspace: Utf8PathBuf,
    allow: Vec<(Utf8PathBuf, RootKind)>,
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
        let all = std::iter::once((&self.workspace, RootKind::Workspace))
            .chain(self.allow.iter().map(|(dir, kind)| (dir, *kind)));
        for (dir, kind) in all {
            roots.push(Root::open(dir, kind, ambient_authority)?);
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
struct Root {
    dir: Dir,
    /// The root's canonical absolute path, as components.
    canonical: Vec<String>,
    /// The root's path as given, made absolute lexically.
    given: Vec<String>,
    display: Utf8PathBuf,
    kind: RootKind,
}

impl Root {
    #[allow(clippy::disallowed_methods)]
    fn open(path: &Utf8Path, kind: RootKind, ambient: AmbientAuthority) -> Result<Root> {
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

#[derive(Debug)]
pub(crate) struct Cached {
    /// The file as it was opened and checked before it was read.
    print: Fingerprint,
    /// Whether a stat of the path alone may validate this entry (the warm
    /// path): the status-change time was settled too when the file was read.
    warm: bool,
    content: Content,
}

/// What identifies a file and its state: device, inode, length,
/// modification and status-change times on Unix; length and modification
/// time elsewhere. Every write moves the modification and status-change
/// times; no user can set the status-change time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint {
    dev: u64,
    ino: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Fingerprint {
    #[cfg(unix)]
    fn of(md: &std::fs::Metadata) -> Fingerprint {
        use std::os::unix::fs::MetadataExt;
        Fingerprint {
            dev: md.dev(),
            ino: md.ino(),
            len: md.len(),
            modified: (md.mtime(), md.mtime_nsec()),
            changed: (md.ctime(), md.ctime_nsec()),
        }
    }

    #[cfg(not(unix))]
    fn of(md: &std::fs::Metadata) -> Fingerprint {
        let modified = md
            .modified()
            .ok()
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or((-1, -1), |d| (d.as_secs() as i64, i64::from(d.subsec_nanos())));
        Fingerprint { dev: 0, ino: 0, len: md.len(), modified, changed: (0, 0) }
    }

    /// The fingerprint in a raw `stat` result, whose field types vary by platform.
    #[cfg(unix)]
    #[allow(clippy::unnecessary_cast)]
    fn of_stat(st: &rustix::fs::Stat) -> Fingerprint {
        Fingerprint {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            len: st.st_size as u64,
            modified: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            changed: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }

    /// Whether the status-change time lies at least [`RACY_WINDOW`] before `now`.
    #[cfg(unix)]
    fn change_settled(&self, now: SystemTime) -> bool {
        let (secs, nanos) = self.changed;
        let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else {
            return false;
        };
        let changed = std::time::UNIX_EPOCH + Duration::new(secs, nanos);
        now.duration_since(changed).is_ok_and(|age| age >= RACY_WINDOW)
    }

    /// Without a status-change time a stat alone never validates an entry.
    #[cfg(not(unix))]
    fn change_settled(&self, _now: SystemTime) -> bool {
        false
    }
}

/// What the final step of a traversal produced.
pub(crate) enum Opened {
    Meta(Metadata),
    File(std::fs::File),
    Dir(Dir),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Stat,
    File,
    Dir,
}

/// The capability sandbox: every read of ctx goes through one.
///
/// It holds a capability handle per root and never opens anything by an
/// ambient path after [`SandboxBuilder::open`]. It is `Send + Sync` and
/// meant to be shared (behind an `Arc`) by everything in one run or process.
#[derive(Debug)]
pub struct Sandbox {
    roots: Vec<Root>,
    pub(crate) deny: DenyList,
    pub(crate) ignore: IgnoreSettings,
    pub(crate) limits: Limits,
    cache: moka::sync::Cache<(usize, String), Arc<Cached>>,
    cache_on: bool,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fast_path: bool,
}

impl Sandbox {
    /// Starts configuring a sandbox whose workspace root is `workspace`;
    /// shorthand for [`SandboxBuilder::new`].
    pub fn builder(workspace: impl Into<Utf8PathBuf>) -> SandboxBuilder {
        SandboxBuilder::new(workspace)
    }

    /// The workspace root as a location.
    pub fn workspace(&self) -> Location {
        Location { root: RootId::WORKSPACE, path: Utf8PathBuf::new() }
    }

    /// The roots, workspace first.
    pub fn roots(&self) -> impl Iterator<Item = RootId> + '_ {
        (0..self.roots.len()).map(RootId)
    }

    /// The canonical absolute path of a root, for display.
    ///
    /// # Panics
    ///
    /// When `root` is not one of this sandbox's roots.
    pub fn root_path(&self, root: RootId) -> &Utf8Path {
        &self.roots[root.0].display
    }

    /// What a root is for.
    ///
    /// # Panics
    ///
    /// When `root` is not one of this sandbox's roots.
    pub fn root_kind(&self, root: RootId) -> RootKind {
        self.roots[root.0].kind
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Resolves a path as written to a location inside a root.
    ///
    /// `written` may be relative or absolute, use `/` or `\` and contain
    /// `..`. A relative path is taken from `base`, a directory location
    /// (the directory of the including file), or from the workspace root
    /// when `base` is `None`. Symbolic links are followed while they stay
    /// inside their root and the result names the final target, so it
    /// exists; the deny list is checked both on the path as written and on
    /// that target.
    ///
    /// A `..` that climbs above the base's root refuses with `E_OUTSIDE`
    /// unless the lexical result lies inside another root: re-entering the
    /// same root that way (`../ws/x` from root `ws`) is refused.
    pub fn resolve(&self, written: &str, base: Option<&Location>) -> Result<Location> {
        let (root, comps) = self.lexical(written, base)?;
        let (canonical, _) = self.traverse(root, comps, Mode::Stat, written)?;
        Ok(Location::new(root, &canonical))
    }

    /// Resolves a path relative to the workspace root; shorthand for
    /// `resolve(written, None)`.
    pub fn resolve_in_workspace(&self, written: &str) -> Result<Location> {
        self.resolve(written, None)
    }

    /// Whether `written` resolves to something readable or walkable. It is
    /// `false` for anything outside the roots or denied, whether or not it
    /// exists, so it tells nothing about what lies outside.
    pub fn exists(&self, written: &str, base: Option<&Location>) -> bool {
        self.resolve(written, base).is_ok()
    }

    /// Type, length and modification time of a location.
    pub fn stat(&self, location: &Location) -> Result<Stat> {
        let written = location.shown();
        match self.traverse(location.root, location.comps(), Mode::Stat, written)? {
            (_, Opened::Meta(md)) => Ok(Stat::from_cap(&md)),
            _ => unreachable!("stat traversal returns metadata"),
        }
    }

    /// Reads a file as text.
    ///
    /// The file is opened without following a final symbolic link and
    /// without blocking (so a FIFO that replaced it cannot hang the read),
    /// its type and size are checked on the opened handle, and at most
    /// `max_file_bytes + 1` bytes are read. Binary content is
    /// [`Content::Binary`], not an error. Contents are cached; a hit is
    /// served only when the opened file still has the cached length,
    /// modification time, inode, device and (on Unix) status-change time.
    /// On Unix, a file whose status-change time was at least two seconds
    /// old when it was read is then served after a single `fstatat` of the
    /// path through the root's handle, without an open, when that stat
    /// gives exactly those values (see `docs/security.md`, promise 7).
    pub fn read_text(&self, location: &Location) -> Result<Content> {
        let written = location.shown();
        self.read_text_as(location, written)
    }

    /// Resolves `written` like [`Sandbox::resolve`] and reads it like
    /// [`Sandbox::read_text`], with errors naming `written`.
    ///
    /// The lexical checks (hygiene, `..`, absolute paths, the deny list on
    /// the path as written) always come first; a cache hit for the
    /// lexical result then costs one `fstatat`, as for `read_text`.
    pub fn read_path(&self, written: &str, base: Option<&Location>) -> Result<(Location, Content)> {
        let (root, comps) = self.lexical(written, base)?;
        let location = Location::new(root, &comps);
        if let Some(content) = self.warm_hit(root, location.path.as_str()) {
            return Ok((location, content));
        }
        let (canonical, opened) = self.traverse(root, comps, Mode::File, written)?;
        let Opened::File(file) = opened else { unreachable!("file traversal returns a file") };
        let location = Location::new(root, &canonical);
        let content = self.read_opened(&location, file, written)?;
        Ok((location, content))
    }

    fn read_text_as(&self, location: &Location, written: &str) -> Result<Content> {
        if let Some(content) = self.warm_hit(location.root, location.path.as_str()) {
            return Ok(content);
        }
        let (canonical, opened) =
            self.traverse(location.root, location.comps(), Mode::File, written)?;
        let Opened::File(file) = opened else { unreachable!("file traversal returns a file") };
        self.read_opened(&Location::new(location.root, &canonical), file, written)
    }

    /// Checks an opened file's type and size on the handle, then serves it
    /// from the cache or reads it, bounded.
    fn read_opened(
        &self,
        location: &Location,
        file: std::fs::File,
        written: &str,
    ) -> Result<Content> {
        let md = file.metadata().map_err(|e| Error::io(written, e))?;
        if !md.is_file() {
            return Err(Error::new(ErrorKind::NotRegular, written));
        }
        let cap = self.limits.max_file_bytes;
        if md.len() > cap {
            return Err(too_large(written, Some(md.len()), cap));
        }
        let print = Fingerprint::of(&md);
        let key = (location.root.0, location.path.as_str().to_owned());
        if let Some(hit) = self.cache_on.then(|| self.cache.get(&key)).flatten() {
            if hit.print == print {
                return Ok(hit.content.clone());
            }
            self.cache.invalidate(&key);
        }
        // Bounded read: a file growing after the size check still stops at cap + 1.
        // `saturating_add`: a cap of `u64::MAX` (no limit) must not wrap to a zero-byte read.
        let mut bytes = Vec::with_capacity(md.len().min(cap).saturating_add(1) as usize);
        file.take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(written, e))?;
        if bytes.len() as u64 > cap {
            return Err(too_large(written, None, cap));
        }
        let content = decode::decode(&bytes);
        let now = SystemTime::now();
        let settled = md
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= RACY_WINDOW);
        if self.cache_on && settled && bytes.len() as u64 == md.len() {
            // A write during the read moved the times past `print`, so such an entry never
            // matches again.
            let warm = print.change_settled(now);
            let cached = Cached { print, warm, content: content.clone() };
            self.cache.insert(key, Arc::new(cached));
        }
        Ok(content)
    }

    /// The warm path: serves a cached file after one `fstatat` of its path
    /// through the root's handle, with no open, when the stat gives exactly
    /// the fingerprint recorded when the file was opened and read safely.
    ///
    /// `path` must have passed the lexical checks (`..`, absolute paths,
    /// the deny list on the path as written). Only entries whose key is
    /// `path` are considered, and keys are final in-root paths: at the safe
    /// read, `path` had no symbolic link in it and was not denied.
    ///
    /// Why following links here is safe: `fstatat` follows links in the
    /// directories on the way (the final component is not followed), so
    /// after a swap it may look at a file elsewhere, even outside the root.
    /// It only looks; nothing is opened or read, and a look at a file
    /// elsewhere decides nothing, since the bytes served are those already
    /// read safely, and only when the stat shows the very same file in the
    /// very same state: device and inode (one file, whatever its names),
    /// length, modification time, and a status-change time that was at
    /// least [`RACY_WINDOW`] old at the safe read. No user can set the
    /// status-change time, and the kernel moves it on every write and on
    /// every new hard link; a file reusing the inode number of the cached
    /// one is created after the safe read ended, so its status-change time
    /// is later than the recorded one and cannot match either. On any
    /// difference the full safe path decides, with its own answer. The one
    /// answer that can differ from the full path's: a link swapped into a
    /// directory on the way so that the path now reaches a hard link of the
    /// cached file which already existed at the safe read (a new one moves
    /// the status-change time), under a denied name or outside the root.
    /// Then the warm path serves the bytes already served where the full
    /// path would refuse; they are the cached, allowed file's own bytes, so
    /// nothing is revealed that was not read from an allowed name.
    #[cfg(unix)]
    fn warm_hit(&self, root: RootId, path: &str) -> Option<Content> {
        if !self.cache_on || path.is_empty() {
            return None;
        }
        let hit = self.cache.get(&(root.0, path.to_owned()))?;
        if !hit.warm {
            return None;
        }
        let dir = &self.roots.get(root.0)?.dir;
        let st = rustix::fs::statat(dir, path, warm_stat_flags()).ok()?;
        let regular =
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile;
        (regular && Fingerprint::of_stat(&st) == hit.print).then(|| hit.content.clone())
    }

    #[cfg(not(unix))]
    fn warm_hit(&self, _root: RootId, _path: &str) -> Option<Content> {
        None
    }

    /// Lexical resolution: hygiene, `..`, absolute paths, and the deny list
    /// on the path as written.
    pub(crate) fn lexical(
        &self,
        written: &str,
        base: Option<&Location>,
    ) -> Result<(RootId, Vec<String>)> {
        let parsed = path::parse(written)
            .map_err(|reason| Error::new(ErrorKind::BadPath, written).with_detail(reason))?;
        let outside = || Error::new(ErrorKind::Outside, written);
        let (root, comps) = match parsed.anchor {
            Anchor::Relative => {
                let workspace;
                let base = match base {
                    Some(base) => base,
                    None => {
                        workspace = self.workspace();
                        &workspace
                    }
                };
                match path::normalise(base.comps(), &parsed.comps) {
                    Some(comps) => (base.root, comps),
                    None => {
                        let root = self.roots.get(base.root.0).ok_or_else(outside)?;
                        let mut start = root.canonical.clone();
                        start.extend(base.comps());
                        let absolute = path::normalise_absolute(&start, &parsed.comps);
                        self.find_root(&absolute, Some(base.root)).ok_or_else(outside)?
                    }
                }
            }
            Anchor::Absolute => {
                let absolute = path::normalise_absolute(&[], &parsed.comps);
                self.find_root(&absolute, None).ok_or_else(outside)?
            }
            Anchor::Drive(drive) => {
                self.find_drive_root(drive, &parsed.comps).ok_or_else(outside)?
            }
        };
        if let Some(reason) = self.deny.check(&comps) {
            return Err(Error::new(ErrorKind::Denied, written).with_detail(reason));
        }
        Ok((root, comps))
    }

    /// The innermost root containing an absolute path, and the path in it.
    fn find_root(
        &self,
        absolute: &[String],
        exclude: Option<RootId>,
    ) -> Option<(RootId, Vec<String>)> {
        let mut best: Option<(usize, usize)> = None;
        for (i, root) in self.roots.iter().enumerate() {
            if Some(RootId(i)) == exclude {
                continue;
            }
            for prefix in [&root.canonical, &root.given] {
                if absolute.starts_with(prefix) && best.is_none_or(|(_, len)| prefix.len() > len) {
                    best = Some((i, prefix.len()));
                }
            }
        }
        best.map(|(i, len)| (RootId(i), absolute[len..].to_vec()))
    }

    #[cfg(windows)]
    fn find_drive_root(&self, drive: char, comps: &[path::Comp]) -> Option<(RootId, Vec<String>)> {
        let mut absolute = vec![format!("{drive}:")];
        absolute = path::normalise_absolute(&absolute, comps);
        if absolute.first().map(String::as_str) != Some(&format!("{drive}:")) {
            absolute.insert(0, format!("{drive}:"));
        }
        self.find_root(&absolute, None)
    }

    /// Drive-absolute paths name nothing on this platform: always outside.
    #[cfg(not(windows))]
    fn find_drive_root(
        &self,
        _drive: char,
        _comps: &[path::Comp],
    ) -> Option<(RootId, Vec<String>)> {
        None
    }

    /// Walks `comps` from the root one component at a time through
    /// directory handles, never following a symbolic link implicitly: each
    /// link is read and its target spliced into the path, refused when it
    /// is absolute; a `..` met on the way goes to the parent of the real
    /// directories walked so far, refused when that would leave the root. Returns the final
    /// in-root path (no links in it) and what `mode` asks for, after
    /// checking the deny list on that path.
    pub(crate) fn traverse(
        &self,
        root: RootId,
        mut comps: Vec<String>,
        mode: Mode,
        written: &str,
    ) -> Result<(Vec<String>, Opened)> {
        let Some(root_dir) = self.roots.get(root.0).map(|r| &r.dir) else {
            return Err(Error::new(ErrorKind::Config, written).with_detail("unknown root"));
        };
        #[cfg(target_os = "linux")]
        if let Some(opened) = self.fast_path.then(|| fast::open(root_dir, &comps, mode)).flatten() {
            if let Some(reason) = self.deny.check(&comps) {
                return Err(Error::new(ErrorKind::Denied, written).with_detail(reason));
            }
            return Ok((comps, opened));
        }
        let mut hops = 0;
        'restart: loop {
            let mut current: Option<Dir> = None;
            if comps.is_empty() {
                let opened = match mode {
                    Mode::Stat => {
                        Opened::Meta(root_dir.dir_metadata().map_err(|e| Error::io(written, e))?)
                    }
                    Mode::File => return Err(Error::new(ErrorKind::NotRegular, written)),
                    Mode::Dir => {
                        Opened::Dir(root_dir.try_clone().map_err(|e| Error::io(written, e))?)
                    }
                };
                return Ok((comps, opened));
            }
            for i in 0..comps.len() {
                // A `..` from a link target: `comps[..i]` was just walked through real
                // directories, so its parent is the physical parent, as the OS would take it.
                if comps[i] == ".." {
                    if i == 0 {
                        return Err(Error::new(ErrorKind::Outside, written));
                    }
                    comps.drain(i - 1..=i);
                    continue 'restart;
                }
                let dir = current.as_ref().unwrap_or(root_dir);
                let name = comps[i].as_str();
                let last = i + 1 == comps.len();
                // Fast path: open without following; only on failure find out why.
                let attempt = if !last || mode == Mode::Dir {
                    dir.open_dir_nofollow(name).map(Opened::Dir)
                } else if mode == Mode::File {
                    open_file_nofollow(dir, name).map(Opened::File)
                } else {
                    dir.symlink_metadata(name).map(Opened::Meta)
                };
                let err = match attempt {
                    Ok(Opened::Dir(sub)) if !last => {
                        current = Some(sub);
                        continue;
                    }
                    Ok(Opened::Meta(md)) if md.is_symlink() => None,
                    Ok(opened) => {
                        if let Some(reason) = self.deny.check(&comps) {
                            return Err(Error::new(ErrorKind::Denied, written).with_detail(reason));
                        }
                        return Ok((comps, opened));
                    }
                    Err(e) => Some(e),
                };
                let md = match dir.symlink_metadata(name) {
                    Ok(md) => md,
                    Err(e) => return Err(Error::io(written, e)),
                };
                if !md.is_symlink() {
                    if !last && !md.is_dir() {
                        return Err(Error::new(ErrorKind::NotFound, written));
                    }
                    if !md.is_file() && !md.is_dir() {
                        return Err(Error::new(ErrorKind::NotRegular, written));
                    }
                    if mode == Mode::Dir && !md.is_dir() {
                        return Err(
                            Error::new(ErrorKind::NotFound, written).with_detail("not a directory")
                        );
                    }
                    let err = err.unwrap_or_else(|| io::Error::other("entry changed while opened"));
                    return Err(Error::io(written, err));
                }
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(Error::new(ErrorKind::NotFound, written)
                        .with_detail("too many levels of symbolic links"));
                }
                let target = dir.read_link_contents(name).map_err(|e| Error::io(written, e))?;
                // Absolute targets are refused even when they point inside, as cap-std does.
                if target.is_absolute()
                    || target.as_str().starts_with('/')
                    || target.as_str().is_empty()
                {
                    return Err(Error::new(ErrorKind::Outside, written));
                }
                // Spliced in place of the link; its `..` parts are taken physically
                // when the walk reaches them (a link target is not normalised lexically).
                let mut spliced: Vec<String> = comps[..i].to_vec();
                let parts = target.as_str().split('/').filter(|p| !p.is_empty() && *p != ".");
                spliced.extend(parts.map(str::to_owned));
                spliced.extend(comps.drain(i + 1..));
                comps = spliced;
                continue 'restart;
            }
            unreachable!("the last component always returns or restarts");
        }
    }

    /// Opens the directory at a location as a handle.
    pub(crate) fn open_dir(
        &self,
        location: &Location,
        written: &str,
    ) -> Result<(Vec<String>, Dir)> {
        match self.traverse(location.root, location.comps(), Mode::Dir, written)? {
            (canonical, Opened::Dir(dir)) => Ok((canonical, dir)),
            _ => unreachable!("dir traversal returns a directory"),
        }
    }
}

/// `len` is the length on the handle, `None` when the file grew past the cap while read.
fn too_large(written: &str, len: Option<u64>, cap: u64) -> Error {
    let shown = match len {
        Some(len) => format!("{len} bytes"),
        None => format!("more than {cap} bytes"),
    };
    Error::new(ErrorKind::TooLarge, written).with_detail(format!("{shown}, limit {cap}"))
}

/// Opens a file for reading without following a final symbolic link and,
/// on Unix, without blocking and without acquiring a controlling terminal.
pub(crate) fn open_file_nofollow(dir: &Dir, name: &str) -> io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        options.custom_flags(flags.bits() as i32);
    }
    dir.open_with(name, &options).map(cap_std::fs_utf8::File::into_std)
}

/// `fstatat` flags of the warm path: the final component is not followed
/// (a link swapped in there is a different inode) and, on Linux, nothing is
/// automounted.
#[cfg(unix)]
fn warm_stat_flags() -> rustix::fs::AtFlags {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    return rustix::fs::AtFlags::SYMLINK_NOFOLLOW | rustix::fs::AtFlags::NO_AUTOMOUNT;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    return rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
}

/// The Linux fast path: one `openat2` beneath the root that refuses every
/// symbolic link. When it succeeds the path has no link in it, so it is
/// already the final in-root path; on any error the caller takes the slow
/// path, which also classifies the error.
#[cfg(target_os = "linux")]
mod fast {
    use std::sync::atomic::{AtomicBool, Ordering};

    use cap_std::fs::Metadata;
    use cap_std::fs_utf8::Dir;
    use rustix::fs::{Mode as Perm, OFlags, ResolveFlags, openat2};
    use rustix::io::Errno;

    use super::{Mode, Opened};

    static UNSUPPORTED: AtomicBool = AtomicBool::new(false);

    pub(super) fn open(root: &Dir, comps: &[String], mode: Mode) -> Option<Opened> {
        if comps.is_empty() || UNSUPPORTED.load(Ordering::Relaxed) {
            return None;
        }
        let path = comps.join("/");
        let flags = OFlags::CLOEXEC
            | OFlags::NOFOLLOW
            | match mode {
                Mode::File => OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
                Mode::Stat => OFlags::PATH,
                Mode::Dir => OFlags::RDONLY | OFlags::DIRECTORY,
            };
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match openat2(root, path.as_str(), flags, Perm::empty(), resolve) {
            Ok(fd) => {
                let file = std::fs::File::from(fd);
                Some(match mode {
                    Mode::File => Opened::File(file),
                    Mode::Stat => {
                        // With O_PATH | O_NOFOLLOW a final link is opened itself.
                        let md = Metadata::from_file(&file).ok()?;
                        if md.is_symlink() {
                            return None;
                        }
                        Opened::Meta(md)
                    }
                    Mode::Dir => Opened::Dir(Dir::from_std_file(file)),
                })
            }
            Err(Errno::NOSYS) => {
                UNSUPPORTED.store(true, Ordering::Relaxed);
                None
            }
            Err(_) => None,
        }
    }
}
