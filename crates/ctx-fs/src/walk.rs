//! Directory and glob walks through directory handles, with ignore files.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::sync::Arc;

use camino::Utf8PathBuf;
use cap_std::fs_utf8::Dir;
use ctx_diagnostics::Code;
use globset::{GlobBuilder, GlobMatcher};
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::error::{Error, ErrorKind, Result};
use crate::listing::{Entry, Facts, Kind};
use crate::location::{FileKind, Location, RootId};
use crate::path;
use cap_std::fs::Metadata;

use crate::listing::list_names;
use crate::sandbox::{Sandbox, open_file_nofollow};

/// One entry a walk found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalkEntry {
    /// The path as walked, relative to the root (through a symbolic link,
    /// this names the link, not its target).
    pub path: Utf8PathBuf,
    /// Where the entry really is, symbolic links resolved; read it with
    /// [`Sandbox::read_text`].
    pub location: Location,
    /// File or directory (walks list nothing else).
    pub kind: FileKind,
    /// Length in bytes.
    pub len: u64,
    /// Last modification time, where the platform has one.
    pub modified: Option<std::time::SystemTime>,
    /// The inode number on Unix (0 elsewhere), so a file replaced by
    /// another of the same length and time is still told apart.
    pub inode: u64,
    /// Level below the walked directory, its own entries being level 1.
    pub depth: usize,
    /// Whether the entry was reached through a symbolic link.
    pub via_symlink: bool,
}

/// Why a walk left an entry out, for entries worth reporting (ignored,
/// hidden and broken-link entries are left out silently).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SkipReason {
    /// A denied entry (`E_DENIED`).
    Denied,
    /// A symbolic link leaving the root (`E_OUTSIDE`).
    Outside,
    /// A name that breaks the path rules (`E_BAD_PATH`).
    BadName,
    /// A FIFO, socket or device (`E_NOT_REGULAR`).
    NotRegular,
    /// A directory at the depth limit, not descended into.
    TooDeep,
    /// A symbolic link to a directory already walked (a cycle or a
    /// duplicate).
    Cycle,
    /// An entry that could not be read.
    Io,
    /// An entry the operating system refused to open or list (`E_PERMISSION`).
    Permission,
}

impl SkipReason {
    /// Why an I/O error left an entry out: [`SkipReason::Permission`] for a refused access,
    /// [`SkipReason::Io`] for anything else.
    fn of_io(err: &std::io::Error) -> SkipReason {
        match err.kind() {
            std::io::ErrorKind::PermissionDenied => SkipReason::Permission,
            _ => SkipReason::Io,
        }
    }

    /// The diagnostic code matching the reason, where there is one.
    pub fn code(self) -> Option<Code> {
        match self {
            SkipReason::Denied => Some(ErrorKind::Denied.code()),
            SkipReason::Outside => Some(ErrorKind::Outside.code()),
            SkipReason::BadName => Some(ErrorKind::BadPath.code()),
            SkipReason::NotRegular => Some(ErrorKind::NotRegular.code()),
            SkipReason::Io => Some(ErrorKind::Io.code()),
            SkipReason::Permission => Some(ErrorKind::Permission.code()),
            SkipReason::TooDeep | SkipReason::Cycle => None,
        }
    }
}

/// An entry a walk left out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The path as walked, relative to the root.
    pub path: Utf8PathBuf,
    /// Why it was left out.
    pub reason: SkipReason,
}

impl Skipped {
    /// An entry left out for `reason`.
    pub fn new(path: Utf8PathBuf, reason: SkipReason) -> Skipped {
        Skipped { path, reason }
    }
}

/// How far past its entry limit a walk goes on counting (not keeping) entries, as a multiple
/// of the limit: so the marker of a cut can say how many entries it left out.
pub const COUNT_PAST_LIMIT: usize = 10;

/// The result of a walk: entries in sorted depth-first order (each
/// directory's entries by name, a directory before its contents).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Walk {
    /// What was found.
    pub entries: Vec<WalkEntry>,
    /// What was left out and is worth reporting.
    pub skipped: Vec<Skipped>,
    /// Whether the walk stopped at the entry limit.
    pub truncated: bool,
    /// Past the limit, the entries the walk went on counting without keeping them: at most
    /// [`COUNT_PAST_LIMIT`] times the limit, so a count that reaches it is a lower bound
    /// ([`Walk::omitted_exact`]).
    pub omitted: usize,
    /// The regular files among [`Walk::omitted`].
    pub omitted_files: usize,
    /// The entries looked at, kept or not: a glob that matches little may look at many. A
    /// walk stops (and is [`Walk::truncated`]) once it has looked at [`COUNT_PAST_LIMIT`]
    /// times its entry limit, whatever it kept.
    pub looked: usize,
}

impl Walk {
    /// Whether [`Walk::omitted`] counts every entry left out, not only the first ones.
    pub fn omitted_exact(&self, limit: usize) -> bool {
        self.omitted < limit.saturating_mul(COUNT_PAST_LIMIT)
    }

    /// The regular files found.
    pub fn files(&self) -> impl Iterator<Item = &WalkEntry> {
        self.entries.iter().filter(|e| e.kind == FileKind::File)
    }
}

/// The limits of one walk, in place of the sandbox's own
/// ([`Limits::max_walk_depth`](crate::Limits), [`Limits::max_walk_entries`](crate::Limits)),
/// so that a one-level listing reads one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalkOptions {
    /// Deepest level listed, the walked directory's own entries being level 1; directories at
    /// this level are not descended into.
    pub max_depth: usize,
    /// Most entries listed; past it the walk stops and says it was truncated.
    pub max_entries: usize,
    /// Whether each entry's length, modification time and inode are read (a `stat` of every
    /// entry). Without them ([`WalkOptions::names_only`]) the walk takes what an entry is from
    /// the folder's listing where the listing says (a file or a folder, never following a
    /// link) and looks at the entry only where it does not; `len`, `modified` and `inode`
    /// are then 0, `None` and 0.
    pub stats: bool,
}

impl WalkOptions {
    /// The sandbox's own limits.
    pub fn of(sandbox: &Sandbox) -> WalkOptions {
        WalkOptions {
            max_depth: sandbox.limits.max_walk_depth,
            max_entries: sandbox.limits.max_walk_entries,
            stats: true,
        }
    }

    /// The same, without the entries' lengths, times and inodes: what a listing of names
    /// (completion, a tree, the files a pattern matches) needs, for a `stat` less an entry.
    pub fn names_only(mut self) -> WalkOptions {
        self.stats = false;
        self
    }

    /// The same, at most `depth` levels deep.
    pub fn max_depth(mut self, depth: usize) -> WalkOptions {
        self.max_depth = depth;
        self
    }

    /// The same, with at most `entries` entries.
    pub fn max_entries(mut self, entries: usize) -> WalkOptions {
        self.max_entries = entries;
        self
    }
}

impl Sandbox {
    /// Walks the directory at `dir`: every file and directory below it that
    /// is not ignored (see the crate documentation for the rules), in sorted
    /// depth-first order, within the walk limits.
    pub fn walk(&self, dir: &Location) -> Result<Walk> {
        self.walk_with(dir, WalkOptions::of(self))
    }

    /// Walks like [`Sandbox::walk`] within the limits of `options`: a walk
    /// with `max_depth(1)` opens the directory and nothing below it.
    pub fn walk_with(&self, dir: &Location, options: WalkOptions) -> Result<Walk> {
        let (canonical, handle) = self.open_dir(dir, dir.shown())?;
        let mut walker = Walker::new(self, dir.root(), None);
        walker.options = options;
        let shown = dir.comps();
        walker.visit(handle, Node { canonical, shown, depth: 0 }, false);
        walker.finish(dir.shown())
    }

    /// Walks the files matching a glob, `/` separated (`\` counts as `/`),
    /// taken from `base` (a directory location) or the workspace root. The
    /// leading components without glob characters are resolved like a path
    /// (so they may be absolute or use `..`); the rest is matched against
    /// paths relative to that directory with globset, `*` not crossing `/`
    /// and `**` crossing any number of directories. Only files are listed.
    ///
    /// Hidden entries are reached only when the literal prefix names them
    /// (`.github/*.yml` works, `**/.github/*.yml` finds nothing).
    pub fn glob(&self, pattern: &str, base: Option<&Location>) -> Result<Walk> {
        self.glob_with(pattern, base, WalkOptions::of(self))
    }

    /// Walks the files matching a glob like [`Sandbox::glob`] within the limits of `options`
    /// (a glob of names alone, [`WalkOptions::names_only`], reads no entry's length or time).
    pub fn glob_with(
        &self,
        pattern: &str,
        base: Option<&Location>,
        options: WalkOptions,
    ) -> Result<Walk> {
        path::parse(pattern)
            .map_err(|reason| Error::new(ErrorKind::BadPath, pattern).with_detail(reason))?;
        let normalised = pattern.replace('\\', "/");
        let (prefix, rest) = split_glob(&normalised);
        let depth_parts = rest.split('/').count();
        if rest.is_empty() || rest.split('/').any(|p| p == "..") {
            return Err(Error::new(ErrorKind::BadPath, pattern).with_detail("bad glob pattern"));
        }
        let start = if prefix.is_empty() {
            if normalised.starts_with('/') {
                return Err(Error::new(ErrorKind::Outside, pattern));
            }
            base.cloned().unwrap_or_else(|| self.workspace())
        } else {
            let prefix = if normalised.starts_with('/') && !prefix.starts_with('/') {
                format!("/{prefix}")
            } else {
                prefix
            };
            self.resolve(&prefix, base).map_err(|e| e.renamed(pattern))?
        };
        let glob = GlobBuilder::new(&rest)
            .literal_separator(true)
            .build()
            .map_err(|e| Error::new(ErrorKind::BadPath, pattern).with_detail(e.kind().to_string()))?
            .compile_matcher();
        let depth = if rest.contains("**") { None } else { Some(depth_parts) };
        let (canonical, handle) = self.open_dir(&start, pattern)?;
        let mut walker = Walker::new(self, start.root(), Some(GlobFilter { glob, depth }));
        walker.options = options;
        walker.base_len = start.comps().len();
        walker.visit(handle, Node { canonical, shown: start.comps(), depth: 0 }, false);
        walker.finish(pattern)
    }
}

/// Splits a glob pattern (`/`-separated) into its literal folder prefix and the rest, which
/// starts at the first component holding a glob character (`src/*/a.rs` → `src`, `*/a.rs`;
/// `*.md` → ``, `*.md`); a pattern without one keeps its last component as the rest.
pub fn split_glob(pattern: &str) -> (String, String) {
    let parts: Vec<&str> = pattern.split('/').collect();
    let split = parts
        .iter()
        .position(|p| p.contains(['*', '?', '[', '{']))
        .unwrap_or(parts.len().saturating_sub(1));
    (parts[..split].join("/"), parts[split..].join("/"))
}

struct GlobFilter {
    glob: GlobMatcher,
    /// Deepest level a match can be at, when the glob has no `**`.
    depth: Option<usize>,
}

type Matcher = Option<Arc<Gitignore>>;

/// How to open a directory a walk descends into.
enum Source<'d> {
    /// A real subdirectory, opened through its parent's handle; the flag
    /// says a symbolic link led to the parent.
    Child(&'d Dir, &'d str, bool),
    /// The target of a symbolic link, opened from the root with links resolved.
    Link,
}

/// A place a walk reached: its canonical components inside the root, the components it is
/// shown under (a link's own path, not its target's), and its level.
struct Node {
    canonical: Vec<String>,
    shown: Vec<String>,
    depth: usize,
}

struct Walker<'a> {
    sandbox: &'a Sandbox,
    root: RootId,
    filter: Option<GlobFilter>,
    /// Ignore matchers by in-root directory path.
    matchers: HashMap<Vec<String>, Matcher>,
    /// Canonical directories already walked.
    visited: HashSet<Vec<String>>,
    /// Components of the glob's start directory, stripped before matching.
    base_len: usize,
    options: WalkOptions,
    out: Walk,
    /// Why the walked directory itself could not be listed: the walk fails rather than
    /// showing it empty.
    failed: Option<std::io::Error>,
    /// The buffer folders are listed into, kept from one to the next.
    dents: Vec<std::mem::MaybeUninit<u8>>,
}

impl<'a> Walker<'a> {
    fn new(sandbox: &'a Sandbox, root: RootId, filter: Option<GlobFilter>) -> Walker<'a> {
        Walker {
            sandbox,
            root,
            filter,
            matchers: HashMap::new(),
            visited: HashSet::new(),
            base_len: 0,
            options: WalkOptions::of(sandbox),
            out: Walk::default(),
            failed: None,
            dents: Vec::new(),
        }
    }

    /// The walk, or the error that kept its directory (written as `written`) from being listed.
    fn finish(self, written: &str) -> Result<Walk> {
        match self.failed {
            Some(err) => Err(Error::io(written, err)),
            None => Ok(self.out),
        }
    }

    /// Whether a glob walk's pattern passes by the file `name` of `dir` (shown as `shown`)
    /// without matching it; `false` for a directory, which may hold matches, and without a
    /// glob.
    fn glob_passes_by(&self, dir: &Dir, name: &str, shown: &[String]) -> bool {
        let Some(filter) = &self.filter else { return false };
        if dir.symlink_metadata(name).is_ok_and(|md| md.is_dir()) {
            return false;
        }
        let relative = shown[self.base_len.min(shown.len())..].join("/");
        !filter.glob.is_match(&relative)
    }

    /// Whether the walk is past its limit and has counted as far as it counts, or has looked at
    /// as many entries as it may (a glob that matches little pays for what it looks at).
    fn counted_enough(&mut self) -> bool {
        let most = self.options.max_entries.saturating_mul(COUNT_PAST_LIMIT);
        if self.out.looked >= most {
            self.out.truncated = true;
            return true;
        }
        self.out.truncated && self.out.omitted >= most
    }

    fn skip(&mut self, shown: &[String], reason: SkipReason) {
        self.out.skipped.push(Skipped { path: join(shown), reason });
    }

    /// Lists the directory `dir` at `node`; `via` says a symbolic link led there.
    fn visit(&mut self, dir: Dir, node: Node, via: bool) {
        let Node { canonical, shown, depth } = node;
        self.visited.insert(canonical.clone());
        let listing = match list_names(&dir, &mut self.dents) {
            Ok(listing) => listing,
            Err(e) if depth == 0 => {
                self.failed = Some(e);
                return;
            }
            Err(e) => return self.skip(&shown, SkipReason::of_io(&e)),
        };
        // A name that is not UTF-8 cannot be named in ctx.
        for _ in 0..listing.bad_names {
            self.skip(&shown, SkipReason::BadName);
        }
        if let Some(e) = &listing.error {
            self.skip(&shown, SkipReason::of_io(e));
        }
        let mut entries: Vec<(&str, Kind)> = listing.entries().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let names: Vec<&str> = entries.iter().map(|e| e.0).collect();
        // The listing says which ignore files the directory holds: only those are opened.
        let chain = self.chain(&canonical, Some((&dir, &names)));
        let settings = &self.sandbox.ignore;
        // Each entry's paths are made in one buffer from the folder's, not as components.
        let mut at = Paths::new(&canonical, &shown);
        // An entry of a folder that passed the deny list is checked on its last component.
        let clean = self.sandbox.deny.check(&canonical).is_none();
        for (name, listed) in entries {
            if self.counted_enough() {
                return;
            }
            self.out.looked += 1;
            at.set(name);
            if settings.skip_hidden && name.starts_with('.') {
                // A hidden entry stays out unless an ignore file brings it back by name.
                let is_dir = match listed {
                    Kind::Dir => true,
                    Kind::File => false,
                    Kind::Other => dir.symlink_metadata(name).is_ok_and(|md| md.is_dir()),
                };
                if !whitelisted(&chain, &at, is_dir) {
                    continue;
                }
            }
            if path::check_name(name).is_err() {
                self.skip(&at.child(&shown, name), SkipReason::BadName);
                continue;
            }
            let denied = match clean {
                true => {
                    let parent = canonical.last().map_or("", String::as_str);
                    self.sandbox.deny.check_entry(parent, name, at.path())
                }
                false => self.sandbox.deny.check(&at.child(&canonical, name)),
            };
            if denied.is_some() {
                // Under a glob, a denied file is worth a note only if the glob would have
                // taken it (a `server.pem` is no refusal for `*.rs`).
                let child_shown = at.child(&shown, name);
                if !self.glob_passes_by(&dir, name, &child_shown) {
                    self.skip(&child_shown, SkipReason::Denied);
                }
                continue;
            }
            // What the entry is: from the listing when the walk needs no more of it, else
            // from a look at the entry itself (never following a link).
            let (kind, facts) = match (self.options.stats, listed) {
                (false, Kind::File) => (Entry::File, Facts::default()),
                (false, Kind::Dir) => (Entry::Dir, Facts::default()),
                _ => match dir.symlink_metadata(name) {
                    Ok(md) => (Entry::of(&md), Facts::of(&md)),
                    Err(_) => continue,
                },
            };
            let depth = depth + 1;
            let node = |name: &str| Node {
                canonical: at.child(&canonical, name),
                shown: at.child(&shown, name),
                depth,
            };
            match kind {
                Entry::Link => {
                    if ignored(&chain, &at, false) || ignored(&chain, &at, true) {
                        continue;
                    }
                    self.visit_link(&canonical, node(name));
                }
                Entry::Dir => {
                    if settings.skip_dirs.iter().any(|d| d == name) || ignored(&chain, &at, true) {
                        continue;
                    }
                    self.enter(Source::Child(&dir, name, via), node(name), facts);
                }
                Entry::File => {
                    if ignored(&chain, &at, false) {
                        continue;
                    }
                    match self.filter {
                        None => self.push_file(&at, facts, depth, via),
                        Some(_) => self.push(node(name), FileKind::File, facts, via),
                    }
                }
                Entry::Other if !ignored(&chain, &at, false) => {
                    self.skip(&at.child(&shown, name), SkipReason::NotRegular);
                }
                Entry::Other => {}
            }
        }
    }

    /// Lists a directory and descends into it within the limits.
    fn enter(&mut self, source: Source<'_>, node: Node, facts: Facts) {
        let via_symlink = match source {
            Source::Child(_, _, via) => via,
            Source::Link => true,
        };
        let Node { canonical, shown, depth } = node;
        let listed = Node { canonical: canonical.clone(), shown: shown.clone(), depth };
        self.push(listed, FileKind::Dir, facts, via_symlink);
        if self.counted_enough() {
            return;
        }
        let glob_depth = self.filter.as_ref().and_then(|f| f.depth);
        if glob_depth.is_some_and(|max| depth >= max) {
            return;
        }
        if depth >= self.options.max_depth {
            return self.skip(&shown, SkipReason::TooDeep);
        }
        let handle = match source {
            Source::Child(parent, name, _) => {
                cap_fs_ext::DirExtUtf8::open_dir_nofollow(parent, name)
                    .map_err(|e| Error::io(name, e))
            }
            Source::Link => {
                let location = Location::new(self.root, &canonical);
                self.sandbox.open_dir(&location, location.shown()).map(|(_, dir)| dir)
            }
        };
        match handle {
            Ok(dir) => self.visit(dir, Node { canonical, shown, depth }, via_symlink),
            Err(e) if e.kind() == ErrorKind::Permission => {
                self.skip(&shown, SkipReason::Permission)
            }
            Err(_) => self.skip(&shown, SkipReason::Io),
        }
    }

    /// A symbolic link met in a walk: followed when its target stays inside
    /// the root and is not ignored, skipped silently when broken.
    fn visit_link(&mut self, parent: &[String], node: Node) {
        let Node { canonical: link, shown, depth } = node;
        let written = join(&link);
        let target = self.sandbox.traverse::<Metadata>(self.root, link, written.as_str());
        let (target, md) = match target {
            Ok((target, md)) => (target, md),
            Err(e) => {
                let reason = match e.kind() {
                    ErrorKind::NotFound => return,
                    ErrorKind::Outside => SkipReason::Outside,
                    ErrorKind::Denied => SkipReason::Denied,
                    ErrorKind::NotRegular => SkipReason::NotRegular,
                    ErrorKind::BadPath => SkipReason::BadName,
                    ErrorKind::Permission => SkipReason::Permission,
                    _ => SkipReason::Io,
                };
                return self.skip(&shown, reason);
            }
        };
        let is_dir = md.is_dir();
        if self.target_ignored(&target, is_dir) {
            return;
        }
        if is_dir {
            // A link to an ancestor or to a directory already walked would repeat it.
            if self.visited.contains(&target) || parent.starts_with(&target) {
                return self.skip(&shown, SkipReason::Cycle);
            }
            let facts = Facts::of(&md);
            self.enter(Source::Link, Node { canonical: target, shown, depth }, facts);
        } else if md.is_file() {
            let facts = Facts::of(&md);
            self.push(Node { canonical: target, shown, depth }, FileKind::File, facts, true);
        } else {
            self.skip(&shown, SkipReason::NotRegular);
        }
    }

    /// Whether a link target is ignored where it lies: hidden, a skipped
    /// directory, or matched by the ignore files on its own path.
    fn target_ignored(&mut self, target: &[String], is_dir: bool) -> bool {
        let settings = &self.sandbox.ignore;
        for (i, name) in target.iter().enumerate() {
            let last = i + 1 == target.len();
            let this_is_dir = !last || is_dir;
            if settings.skip_hidden && name.starts_with('.') {
                return true;
            }
            if this_is_dir && settings.skip_dirs.contains(name) {
                return true;
            }
            let chain = self.chain(&target[..i], None);
            if ignored(&chain, &target[..=i], this_is_dir) {
                return true;
            }
        }
        false
    }

    /// The ignore matchers that apply inside the in-root directory `dir`,
    /// outermost first.
    /// `listed` is the directory's handle with its sorted entry names, when it was just listed.
    fn chain(
        &mut self,
        dir: &[String],
        listed: Option<(&Dir, &[&str])>,
    ) -> Vec<(usize, Arc<Gitignore>)> {
        let mut chain = Vec::new();
        for len in 0..=dir.len() {
            let matcher = match self.matchers.get(&dir[..len]) {
                Some(m) => m.clone(),
                None => {
                    let key = dir[..len].to_vec();
                    let m = match listed {
                        Some((handle, names)) if len == dir.len() => {
                            self.load(Some(handle), &key, Some(names))
                        }
                        _ => {
                            let location = Location::new(self.root, &key);
                            match self.sandbox.open_dir(&location, location.shown()) {
                                Ok((_, d)) => self.load(Some(&d), &key, None),
                                Err(_) => None,
                            }
                        }
                    };
                    self.matchers.insert(key, m.clone());
                    m
                }
            };
            if let Some(m) = matcher {
                chain.push((len, m));
            }
        }
        chain
    }

    /// Reads the ignore files of one directory through its handle; with the directory's entry
    /// names, only the ignore files among them.
    fn load(&self, handle: Option<&Dir>, dir: &[String], names: Option<&[&str]>) -> Matcher {
        let handle = handle?;
        let settings = &self.sandbox.ignore;
        let mut builder = GitignoreBuilder::new("/");
        let mut any = false;
        // Without case, as a case-insensitive disk opens `.GitIgnore` for `.gitignore`.
        let listed = |file: &String| {
            names.is_none_or(|names| {
                file.contains('/') || names.iter().any(|n| n.eq_ignore_ascii_case(file))
            })
        };
        for file in settings.ignore_files.iter().filter(|f| listed(f)) {
            let Ok(f) = open_file_nofollow(handle, file) else { continue };
            if !f.metadata().is_ok_and(|m| m.is_file()) {
                continue;
            }
            let mut bytes = Vec::new();
            if f.take(self.sandbox.limits.max_file_bytes).read_to_end(&mut bytes).is_err() {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            // An editor may start the file with a byte order mark, which git skips.
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            for line in text.lines() {
                // A bad line is skipped, as git does; so is a lone `!`, which negates nothing
                // for git (and would bring back every hidden entry here).
                if line.trim_end() == "!" {
                    continue;
                }
                if builder.add_line(None, line).is_ok() {
                    any = true;
                }
            }
        }
        if dir.is_empty() {
            for line in &settings.extra_rules {
                if builder.add_line(None, line).is_ok() {
                    any = true;
                }
            }
        }
        if !any {
            return None;
        }
        builder.build().ok().map(Arc::new)
    }

    /// [`Walker::push`] of a file of a walk without a glob, whose paths `at` holds.
    fn push_file(&mut self, at: &Paths, facts: Facts, depth: usize, via: bool) {
        if self.out.entries.len() >= self.options.max_entries {
            self.out.truncated = true;
            self.out.omitted += 1;
            self.out.omitted_files += 1;
            return;
        }
        self.out.entries.push(WalkEntry {
            path: Utf8PathBuf::from(at.shown_path()),
            location: Location { root: self.root, path: Utf8PathBuf::from(at.path()) },
            kind: FileKind::File,
            len: facts.len,
            modified: facts.modified,
            inode: facts.inode,
            depth,
            via_symlink: via,
        });
    }

    fn push(&mut self, node: Node, kind: FileKind, facts: Facts, via_symlink: bool) {
        let Node { canonical, shown, depth } = node;
        if let Some(filter) = &self.filter {
            if kind != FileKind::File {
                return;
            }
            let relative = shown[self.base_len.min(shown.len())..].join("/");
            if !filter.glob.is_match(&relative) {
                return;
            }
        }
        if self.out.entries.len() >= self.options.max_entries {
            // Past the limit: counted, not kept, until the count reaches the limit again.
            self.out.truncated = true;
            self.out.omitted += 1;
            self.out.omitted_files += usize::from(kind == FileKind::File);
            return;
        }
        self.out.entries.push(WalkEntry {
            path: join(&shown),
            location: Location::new(self.root, &canonical),
            kind,
            len: facts.len,
            modified: facts.modified,
            inode: facts.inode,
            depth,
            via_symlink,
        });
    }
}

/// Whether the deepest matcher with an opinion ignores `path` (`!`
/// negation in a deeper file wins over a shallower ignore).
fn ignored<R: Relative + ?Sized>(
    chain: &[(usize, Arc<Gitignore>)],
    path: &R,
    is_dir: bool,
) -> bool {
    verdict(chain, path, is_dir) == Some(true)
}

/// Whether an ignore file names `path` with a `!` rule, which brings back even a hidden entry
/// (`!/.github/` in ruff's `.ignore`), as the `ignore` crate does.
fn whitelisted<R: Relative + ?Sized>(
    chain: &[(usize, Arc<Gitignore>)],
    path: &R,
    is_dir: bool,
) -> bool {
    verdict(chain, path, is_dir) == Some(false)
}

/// A path inside the root that ignore files are matched against from the folder they lie in.
trait Relative {
    /// The path from its `len`th component on, joined by `/`.
    fn from(&self, len: usize) -> std::borrow::Cow<'_, str>;
}

impl Relative for [String] {
    fn from(&self, len: usize) -> std::borrow::Cow<'_, str> {
        std::borrow::Cow::Owned(self[len.min(self.len())..].join("/"))
    }
}

/// The paths of the entries of one listed folder, made in place: its canonical path and the
/// path it is shown under, each joined by `/`, with where each of its components starts;
/// [`Paths::set`] puts an entry's name after both.
struct Paths {
    /// The folder's canonical path, then `/` and the entry's name.
    path: String,
    /// Where the canonical path's components start, then where the entry's name starts.
    starts: Vec<usize>,
    /// Components of the folder's canonical path.
    comps: usize,
    /// The folder's length in `path`.
    folder: usize,
    /// The path the folder is shown under, then `/` and the entry's name; `None` when it is
    /// the canonical one.
    shown: Option<(String, usize)>,
}

impl Paths {
    fn new(canonical: &[String], shown: &[String]) -> Paths {
        let mut path = String::new();
        let mut starts = Vec::with_capacity(canonical.len() + 1);
        for comp in canonical {
            if !path.is_empty() {
                path.push('/');
            }
            starts.push(path.len());
            path.push_str(comp);
        }
        let folder = path.len();
        let shown = (shown != canonical).then(|| {
            let joined = shown.join("/");
            let len = joined.len();
            (joined, len)
        });
        Paths { path, comps: canonical.len(), starts, folder, shown }
    }

    /// Makes the paths those of the folder's entry `name`.
    fn set(&mut self, name: &str) {
        fn put(path: &mut String, folder: usize, name: &str) -> usize {
            path.truncate(folder);
            if folder > 0 {
                path.push('/');
            }
            let start = path.len();
            path.push_str(name);
            start
        }
        let start = put(&mut self.path, self.folder, name);
        self.starts.truncate(self.comps);
        self.starts.push(start);
        if let Some((shown, folder)) = &mut self.shown {
            put(shown, *folder, name);
        }
    }

    /// The entry's canonical path.
    fn path(&self) -> &str {
        &self.path
    }

    /// The path the entry is shown under.
    fn shown_path(&self) -> &str {
        self.shown.as_ref().map_or(&self.path, |(shown, _)| shown)
    }

    /// The components `folder` and then `name`, for a node or a report.
    fn child(&self, folder: &[String], name: &str) -> Vec<String> {
        let mut comps = Vec::with_capacity(folder.len() + 1);
        comps.extend(folder.iter().cloned());
        comps.push(name.to_owned());
        comps
    }
}

impl Relative for Paths {
    fn from(&self, len: usize) -> std::borrow::Cow<'_, str> {
        let start = self.starts.get(len).copied().unwrap_or(self.path.len());
        std::borrow::Cow::Borrowed(&self.path[start..])
    }
}

/// The deepest ignore file's opinion of `path`: ignored, brought back, or none.
fn verdict<R: Relative + ?Sized>(
    chain: &[(usize, Arc<Gitignore>)],
    path: &R,
    is_dir: bool,
) -> Option<bool> {
    for (len, matcher) in chain.iter().rev() {
        let relative = path.from(*len);
        let m = matcher.matched(&*relative, is_dir);
        if m.is_ignore() {
            return Some(true);
        }
        if m.is_whitelist() {
            return Some(false);
        }
    }
    None
}

fn join(comps: &[String]) -> Utf8PathBuf {
    Utf8PathBuf::from(comps.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// An entry's paths made in place are those joined from its components, from every
        /// folder an ignore file may lie in, for every entry of a folder in turn.
        #[test]
        fn paths_made_in_place_are_the_joined_components(
            canonical in proptest::collection::vec("[a-z.]{1,4}", 0..5),
            link in proptest::option::of(proptest::collection::vec("[A-Z]{1,3}", 0..4)),
            names in proptest::collection::vec("[a-zA-Z_.-]{1,6}", 1..4),
        ) {
            let shown = link.unwrap_or_else(|| canonical.clone());
            let mut at = Paths::new(&canonical, &shown);
            for name in &names {
                at.set(name);
                let child = at.child(&canonical, name);
                proptest::prop_assert_eq!(at.path(), child.join("/"));
                proptest::prop_assert_eq!(at.shown_path(), at.child(&shown, name).join("/"));
                for len in 0..=canonical.len() {
                    proptest::prop_assert_eq!(at.from(len), child[..].from(len));
                }
            }
        }
    }
}
