//! The [`Sandbox`]: roots, resolution, stat and reads.

use std::io::{self, Read};
use std::sync::Arc;
use std::time::SystemTime;

use camino::{Utf8Path, Utf8PathBuf};
use cap_fs_ext::{DirExtUtf8, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Metadata, OpenOptions};
use cap_std::fs_utf8::Dir;

use crate::Text;
use crate::cache::{Cached, Fingerprint, RACY_WINDOW};
use crate::decode::{self, BINARY_SNIFF_BYTES, Content};
use crate::deny::DenyList;
use crate::error::{Error, ErrorKind, Result};
use crate::location::{Location, RootId, RootKind, Stat};
use crate::overlay::Overlay;
use crate::path::{self, Anchor};
use crate::root::{RefusedRoot, Root};
use crate::settings::{IgnoreSettings, Limits};
use crate::stream::{Streamed, TextStream};

/// How many symbolic links one resolution follows before it reports a loop.
pub const MAX_SYMLINK_HOPS: usize = 40;

/// How a traversal opens its last component (see [`Target`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Stat,
    File,
    Dir,
}

/// What a traversal opens at its last component, by the type it gives back: the metadata of
/// the entry itself ([`Metadata`], a link not followed), a file to read ([`std::fs::File`],
/// opened without blocking), or a directory handle ([`Dir`]).
pub(crate) trait Target: Sized {
    /// How the Linux fast path opens it.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    const MODE: Mode;

    /// Opens the entry `name` of `dir` without following a final link.
    fn open(dir: &Dir, name: &str) -> io::Result<Self>;

    /// The root itself as this target.
    fn root(dir: &Dir, written: &str) -> Result<Self>;

    /// Whether what was opened is a symbolic link, to be followed by the traversal (only
    /// metadata can be a link; the other opens refuse one).
    fn is_link(&self) -> bool {
        false
    }

    /// The fast path's opened descriptor as this target; `None` sends the path to the slow
    /// walk.
    #[cfg(target_os = "linux")]
    fn from_fast(file: std::fs::File) -> Option<Self>;
}

impl Target for Metadata {
    const MODE: Mode = Mode::Stat;

    fn open(dir: &Dir, name: &str) -> io::Result<Metadata> {
        dir.symlink_metadata(name)
    }

    fn root(dir: &Dir, written: &str) -> Result<Metadata> {
        dir.dir_metadata().map_err(|e| Error::io(written, e))
    }

    fn is_link(&self) -> bool {
        self.is_symlink()
    }

    #[cfg(target_os = "linux")]
    fn from_fast(file: std::fs::File) -> Option<Metadata> {
        // With O_PATH | O_NOFOLLOW a final link is opened itself.
        Metadata::from_file(&file).ok().filter(|md| !md.is_symlink())
    }
}

impl Target for std::fs::File {
    const MODE: Mode = Mode::File;

    fn open(dir: &Dir, name: &str) -> io::Result<std::fs::File> {
        open_file_nofollow(dir, name)
    }

    fn root(_: &Dir, written: &str) -> Result<std::fs::File> {
        Err(Error::new(ErrorKind::NotRegular, written))
    }

    #[cfg(target_os = "linux")]
    fn from_fast(file: std::fs::File) -> Option<std::fs::File> {
        Some(file)
    }
}

impl Target for Dir {
    const MODE: Mode = Mode::Dir;

    fn open(dir: &Dir, name: &str) -> io::Result<Dir> {
        dir.open_dir_nofollow(name)
    }

    fn root(dir: &Dir, written: &str) -> Result<Dir> {
        dir.try_clone().map_err(|e| Error::io(written, e))
    }

    #[cfg(target_os = "linux")]
    fn from_fast(file: std::fs::File) -> Option<Dir> {
        Some(Dir::from_std_file(file))
    }
}

/// The capability sandbox: every read of ctx goes through one.
///
/// It holds a capability handle per root and never opens anything by an
/// ambient path after [`SandboxBuilder::open`](crate::SandboxBuilder::open). It is `Send + Sync` and
/// meant to be shared (behind an `Arc`) by everything in one run or process.
#[derive(Debug)]
pub struct Sandbox {
    pub(crate) roots: Vec<Root>,
    /// The roots a project file asked for that were not opened.
    pub(crate) refused: Vec<RefusedRoot>,
    /// The home directory's absolute components, which `~` paths start from.
    pub(crate) home: Option<Vec<String>>,
    pub(crate) deny: DenyList,
    pub(crate) ignore: IgnoreSettings,
    pub(crate) limits: Limits,
    pub(crate) cache: moka::sync::Cache<(usize, String), Arc<Cached>>,
    pub(crate) cache_on: bool,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fast_path: bool,
    /// Unsaved texts served in place of the disk's bytes.
    pub(crate) overlay: Option<Overlay>,
}

impl Sandbox {
    /// The workspace root as a location.
    pub fn workspace(&self) -> Location {
        Location { root: RootId::WORKSPACE, path: Utf8PathBuf::new() }
    }

    /// The roots, workspace first.
    pub fn roots(&self) -> impl Iterator<Item = RootId> + '_ {
        (0..self.roots.len()).map(RootId)
    }

    /// The roots added with [`SandboxBuilder::project_root`](crate::SandboxBuilder::project_root)
    /// that were not opened, and why.
    pub fn refused_roots(&self) -> &[RefusedRoot] {
        &self.refused
    }

    /// The canonical absolute path of a root, for display.
    ///
    /// # Panics
    ///
    /// When `root` is not one of this sandbox's roots.
    pub fn root_path(&self, root: RootId) -> &Utf8Path {
        &self.roots[root.0].display
    }

    /// How a root is named to the user: its canonical absolute path, but `~` or `~/sub` for
    /// the home directory and its folders, so that output names no home path.
    ///
    /// # Panics
    ///
    /// When `root` is not one of this sandbox's roots.
    pub fn root_name(&self, root: RootId) -> String {
        let r = &self.roots[root.0];
        if r.kind == RootKind::Home
            && let Some(home) = &self.home
            && let Some(rest) = r.given.strip_prefix(home.as_slice())
        {
            return if rest.is_empty() { "~".to_owned() } else { format!("~/{}", rest.join("/")) };
        }
        r.display.as_str().trim_end_matches('/').to_owned()
    }

    /// What a root is for.
    ///
    /// # Panics
    ///
    /// When `root` is not one of this sandbox's roots.
    pub fn root_kind(&self, root: RootId) -> RootKind {
        self.roots[root.0].kind
    }

    /// What walks skip: ignore files, hidden entries, the folders skipped by name.
    pub fn ignore_settings(&self) -> &IgnoreSettings {
        &self.ignore
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
        let (canonical, _) = self.traverse::<Metadata>(root, comps, written)?;
        Ok(Location::new(root, &canonical))
    }

    /// Resolves `written` as [`Sandbox::resolve`] does and gives the metadata of what it
    /// names, as [`Sandbox::stat`] would, from the same walk: one traversal where the two
    /// calls make two.
    pub fn resolve_stat(&self, written: &str, base: Option<&Location>) -> Result<(Location, Stat)> {
        let (root, comps) = self.lexical(written, base)?;
        let (canonical, md) = self.traverse::<Metadata>(root, comps, written)?;
        Ok((Location::new(root, &canonical), Stat::from_cap(&md)))
    }

    /// The location `written` names as written, its symbolic links not followed (a link is
    /// shown under its own name): the lexical checks of [`Sandbox::resolve`] only. For
    /// display; read through [`Sandbox::resolve`]'s location.
    pub fn written_location(&self, written: &str, base: Option<&Location>) -> Result<Location> {
        let (root, comps) = self.lexical(written, base)?;
        Ok(Location::new(root, &comps))
    }

    /// Resolves a path relative to the workspace root; shorthand for
    /// `resolve(written, None)`.
    pub fn resolve_in_workspace(&self, written: &str) -> Result<Location> {
        self.resolve(written, None)
    }

    /// The names in the folder at `dir`, sorted, as one read of its listing gives them:
    /// nothing in it is opened or looked at, so this costs one system call or a few whatever
    /// the folder holds. Names the deny list refuses are left out; the rest may still be
    /// links, folders or ignored entries, so a caller resolves a name before using it.
    pub fn names(&self, dir: &Location) -> Result<Vec<String>> {
        let written = dir.shown();
        let (_, handle) = self.open_dir(dir, written)?;
        let mut names = Vec::new();
        for entry in handle.entries().map_err(|e| Error::io(written, e))? {
            let entry = entry.map_err(|e| Error::io(written, e))?;
            if let Ok(name) = entry.file_name()
                && self.lexical(&name, Some(dir)).is_ok()
            {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// Whether the folder at `dir` holds an entry named `name`, of any type, a link not
    /// followed and the deny list not applied: for markers such as `.git`, whose presence
    /// says what the folder is (the root of a repository) without anything in it being read.
    /// Only the folder is opened; the entry itself is looked up, never opened, so nothing
    /// outside the roots is looked at. A name that is not one plain component (`a/b`, `..`,
    /// an empty or malformed name) holds nothing.
    pub fn holds(&self, dir: &Location, name: &str) -> bool {
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
            return false;
        }
        if path::parse(name).is_err() {
            return false;
        }
        let Ok((_, handle)) = self.open_dir(dir, dir.shown()) else { return false };
        handle.symlink_metadata(name).is_ok()
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
        let (_, md) = self.traverse::<Metadata>(location.root, location.comps(), written)?;
        Ok(Stat::from_cap(&md))
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
        match self.read_path_up_to(written, base, u64::MAX)? {
            (location, Some(content)) => Ok((location, content)),
            (_, None) => unreachable!("no file is longer than u64::MAX bytes"),
        }
    }

    /// Opens the regular file at `location` to read its text part by part
    /// ([`TextStream::read_parts`]), with every rule of [`Sandbox::read_text`] but the cache:
    /// for a large file that is only passed on, so that it is never held whole. A file the
    /// cache or the overlay holds, or one in UTF-16 or UTF-32, is [`Streamed::Whole`]: read
    /// it with `read_text`.
    pub fn text_stream(&self, location: &Location) -> Result<Streamed> {
        let written = location.shown();
        if self.warm_hit(location.root, location.path.as_str()).is_some()
            || self.overlay_text(location.root, location.path.as_str()).is_some()
        {
            return Ok(Streamed::Whole);
        }
        let (_, file) = self.traverse::<std::fs::File>(location.root, location.comps(), written)?;
        let md = regular_within(&file, written, self.limits.max_file_bytes)?;
        let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
        (&file)
            .take(BINARY_SNIFF_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| Error::io(written, e))?;
        Ok(TextStream::open(file, written, &head, md.len()))
    }

    /// Resolves `written` like [`Sandbox::read_path`] and reads it when it is at most
    /// `whole_up_to` bytes long; a longer file is resolved and checked but not read (`None`),
    /// for a caller that reads large files part by part ([`Sandbox::text_stream`]). A cached
    /// or unsaved text is always returned.
    pub fn read_path_up_to(
        &self,
        written: &str,
        base: Option<&Location>,
        whole_up_to: u64,
    ) -> Result<(Location, Option<Content>)> {
        let (root, comps) = self.lexical(written, base)?;
        let location = Location::new(root, &comps);
        if let Some(content) = self.warm_hit(root, location.path.as_str()) {
            return Ok((location, Some(content)));
        }
        let (canonical, file) = self.traverse::<std::fs::File>(root, comps, written)?;
        let location = Location::new(root, &canonical);
        let md = regular_within(&file, written, self.limits.max_file_bytes)?;
        if md.len() > whole_up_to && self.overlay_text(root, location.path.as_str()).is_none() {
            return Ok((location, None));
        }
        let content = self.read_opened(&location, file, &md, written)?;
        Ok((location, Some(content)))
    }

    /// Resolves `written` like [`Sandbox::read_path`] and reads its raw bytes, at most `max`
    /// (`E_TOO_LARGE` past it, checked on the opened handle and while reading), for content
    /// that is not text, such as images. Every rule of the sandbox applies; nothing is cached.
    pub fn read_bytes(
        &self,
        written: &str,
        base: Option<&Location>,
        max: u64,
    ) -> Result<(Location, Vec<u8>)> {
        let (root, comps) = self.lexical(written, base)?;
        let (canonical, file) = self.traverse::<std::fs::File>(root, comps, written)?;
        let md = regular_within(&file, written, max)?;
        let mut bytes = Vec::with_capacity(md.len().min(max).saturating_add(1) as usize);
        file.take(max.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(written, e))?;
        if bytes.len() as u64 > max {
            return Err(too_large(written, None, max));
        }
        Ok((Location::new(root, &canonical), bytes))
    }

    /// The first `n` bytes (fewer for a shorter file) of the regular file at `location`,
    /// with every rule of the sandbox, for telling a file's kind by its content.
    pub fn read_prefix(&self, location: &Location, n: usize) -> Result<Vec<u8>> {
        let written = location.shown();
        let (_, file) = self.traverse::<std::fs::File>(location.root, location.comps(), written)?;
        regular_within(&file, written, u64::MAX)?;
        let mut bytes = Vec::with_capacity(n);
        file.take(n as u64).read_to_end(&mut bytes).map_err(|e| Error::io(written, e))?;
        Ok(bytes)
    }

    fn read_text_as(&self, location: &Location, written: &str) -> Result<Content> {
        if let Some(content) = self.warm_hit(location.root, location.path.as_str()) {
            return Ok(content);
        }
        let (canonical, file) =
            self.traverse::<std::fs::File>(location.root, location.comps(), written)?;
        let md = regular_within(&file, written, self.limits.max_file_bytes)?;
        self.read_opened(&Location::new(location.root, &canonical), file, &md, written)
    }

    /// Serves an opened file, whose type and size `md` says were checked on the handle
    /// ([`regular_within`]), from the overlay or the cache, or reads it, bounded.
    fn read_opened(
        &self,
        location: &Location,
        file: std::fs::File,
        md: &std::fs::Metadata,
        written: &str,
    ) -> Result<Content> {
        let cap = self.limits.max_file_bytes;
        if let Some(text) = self.overlay_text(location.root, location.path.as_str()) {
            return Ok(Content::Text { text, encoding: crate::decode::Encoding::Utf8 });
        }
        let print = Fingerprint::of(md);
        let key = (location.root.0, location.path.as_str().to_owned());
        if let Some(hit) = self.cache_on.then(|| self.cache.get(&key)).flatten() {
            if hit.print == print {
                return Ok(hit.content.clone());
            }
            self.cache.invalidate(&key);
        }
        // Bounded read: a file growing after the size check still stops at cap + 1.
        // `saturating_add`: a cap of `u64::MAX` (no limit) must not wrap to a zero-byte read.
        let bytes = read_sized(file, md.len().min(cap), cap.saturating_add(1))
            .map_err(|e| Error::io(written, e))?;
        if bytes.len() as u64 > cap {
            return Err(too_large(written, None, cap));
        }
        let read = bytes.len() as u64;
        let content = decode::decode_owned(bytes);
        let now = SystemTime::now();
        let settled = md
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= RACY_WINDOW);
        if self.cache_on && settled && read == md.len() {
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
        // An overlaid file takes the full checks, then the overlay's text.
        if !self.cache_on || path.is_empty() || self.overlay_text(root, path).is_some() {
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

    /// The unsaved text an overlay holds for a checked in-root path.
    fn overlay_text(&self, root: RootId, path: &str) -> Option<Text> {
        self.overlay.as_ref()?.lookup(root, path)
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
            Anchor::Home => {
                let outside_home = || {
                    Error::new(ErrorKind::Outside, written)
                        .with_detail("no root holds it; allow the home directory with --allow '~'")
                };
                let home = self.home.as_ref().ok_or_else(outside_home)?;
                let absolute = path::normalise_absolute(home, &parsed.comps);
                self.find_root(&absolute, None).ok_or_else(outside_home)?
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
    pub(crate) fn traverse<T: Target>(
        &self,
        root: RootId,
        mut comps: Vec<String>,
        written: &str,
    ) -> Result<(Vec<String>, T)> {
        let Some(root_dir) = self.roots.get(root.0).map(|r| &r.dir) else {
            return Err(Error::new(ErrorKind::Config, written).with_detail("unknown root"));
        };
        #[cfg(target_os = "linux")]
        if let Some(opened) = self.fast_path.then(|| fast::open::<T>(root_dir, &comps)).flatten() {
            if let Some(reason) = self.deny.check(&comps) {
                return Err(Error::new(ErrorKind::Denied, written).with_detail(reason));
            }
            return Ok((comps, opened));
        }
        let mut hops = 0;
        'restart: loop {
            let mut current: Option<Dir> = None;
            if comps.is_empty() {
                return Ok((comps, T::root(root_dir, written)?));
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
                // Open without following; only on failure find out why.
                let err = if !last {
                    match dir.open_dir_nofollow(name) {
                        Ok(sub) => {
                            current = Some(sub);
                            continue;
                        }
                        Err(e) => Some(e),
                    }
                } else {
                    match T::open(dir, name) {
                        Ok(opened) if opened.is_link() => None,
                        Ok(opened) => {
                            if let Some(reason) = self.deny.check(&comps) {
                                let err = Error::new(ErrorKind::Denied, written);
                                return Err(err.with_detail(reason));
                            }
                            return Ok((comps, opened));
                        }
                        Err(e) => Some(e),
                    }
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
                    if T::MODE == Mode::Dir && !md.is_dir() {
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
        self.traverse::<Dir>(location.root, location.comps(), written)
    }
}

/// `len` is the length on the handle, `None` when the file grew past the cap while read.
/// The metadata of an opened file, checked on the handle: a regular file (`E_NOT_REGULAR`
/// otherwise) of at most `cap` bytes (`E_TOO_LARGE` otherwise).
pub(crate) fn regular_within(
    file: &std::fs::File,
    written: &str,
    cap: u64,
) -> Result<std::fs::Metadata> {
    let md = file.metadata().map_err(|e| Error::io(written, e))?;
    if !md.is_file() {
        return Err(Error::new(ErrorKind::NotRegular, written));
    }
    if md.len() > cap {
        return Err(too_large(written, Some(md.len()), cap));
    }
    Ok(md)
}

/// The bytes of `file`, at most `limit`, read into a buffer of its length as the metadata
/// gave it (`len`) and one byte more: a file that did not change is read in one call and its
/// end seen with a second (reading to the end with a buffer of unknown size took four calls
/// for a file of 33 KB); one that grew is read on, up to `limit`.
fn read_sized(mut file: std::fs::File, len: u64, limit: u64) -> io::Result<Vec<u8>> {
    let first = len.saturating_add(1).min(limit);
    let mut bytes = vec![0; usize::try_from(first).unwrap_or(usize::MAX)];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    if filled as u64 == first && first < limit {
        file.take(limit - first).read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

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

    use cap_std::fs_utf8::Dir;
    use rustix::fs::{Mode as Perm, OFlags, ResolveFlags, openat2};
    use rustix::io::Errno;

    use super::{Mode, Target};

    static UNSUPPORTED: AtomicBool = AtomicBool::new(false);

    pub(super) fn open<T: Target>(root: &Dir, comps: &[String]) -> Option<T> {
        if comps.is_empty() || UNSUPPORTED.load(Ordering::Relaxed) {
            return None;
        }
        let path = comps.join("/");
        let flags = OFlags::CLOEXEC
            | OFlags::NOFOLLOW
            | match T::MODE {
                Mode::File => OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
                Mode::Stat => OFlags::PATH,
                Mode::Dir => OFlags::RDONLY | OFlags::DIRECTORY,
            };
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match openat2(root, path.as_str(), flags, Perm::empty(), resolve) {
            Ok(fd) => T::from_fast(std::fs::File::from(fd)),
            Err(Errno::NOSYS) => {
                UNSUPPORTED.store(true, Ordering::Relaxed);
                None
            }
            Err(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_sized;

    fn file_of(bytes: &[u8]) -> (tempfile::TempDir, std::fs::File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        (dir, file)
    }

    /// A file read with the length its metadata gave is read whole; one that grew since (a
    /// length smaller than it is) is read on, and neither is read past the limit, whatever
    /// length the metadata said.
    #[test]
    fn a_sized_read_gives_the_whole_file_and_never_more_than_its_limit() {
        let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        for (len, limit, want) in [
            (100_000, u64::MAX, 100_000),
            (100_000, 100_001, 100_000),
            (10, u64::MAX, 100_000),
            (0, 100_001, 100_000),
            (10, 50_001, 50_001),
            (100_000, 50_001, 50_001),
            (200_000, 20, 20),
            (100_000, 0, 0),
        ] {
            let (_dir, file) = file_of(&bytes);
            let read = read_sized(file, len, limit).unwrap();
            assert_eq!(read.len(), want, "{len} {limit}");
            assert_eq!(read, bytes[..want], "{len} {limit}");
        }
    }
}
