//! [`SourceIndex`]: every file a solution or compilation database names, by name and by path.

use std::collections::HashSet;
use std::time::UNIX_EPOCH;

use ctx_diagnostics::Code;
use ctx_fs::{Location, RootKind, Sandbox, Store, WalkOptions};
use serde::{Deserialize, Serialize};

use crate::msbuild::{self, Entry, Items};
use crate::paths::{self, Dirs};
use crate::{Error, compdb, roots, walk};

/// How many files an index holds at most, unless configured otherwise.
pub const DEFAULT_MAX_FILES: usize = 50_000;

/// How an index is built.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// Most files indexed; past it the rest is left out with a warning.
    pub max_files: usize,
    /// The home folder, which is never a source root (nor any of its ancestors).
    pub home: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        let home = std::env::home_dir().and_then(|h| h.to_str().map(paths_of_os));
        Options { max_files: DEFAULT_MAX_FILES, home }
    }
}

fn paths_of_os(path: &str) -> String {
    paths::normalize(&path.replace('\\', "/"))
}

/// A project of the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Project {
    /// Its name in the solution.
    pub name: String,
    /// Its file, absolute.
    pub path: String,
    /// How many files it lists.
    pub files: usize,
}

/// What the disk says about an indexed file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum FileState {
    /// It is there.
    Exists,
    /// It is not there (a stale entry), or it names a drive of another platform.
    Missing,
    /// It is there under another case than written (`Test/x.c` for `test/x.c`); the
    /// index holds the disk's spelling.
    Corrected {
        /// The path as the project wrote it.
        written: String,
    },
    /// The sandbox refuses it (a denied name, a link out of its root, a file outside every
    /// source root); it is listed, never read.
    Refused {
        /// The sandbox's code.
        #[serde(with = "code_name")]
        code: Code,
    },
}

/// One indexed file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// Absolute, normalised, `/`-separated.
    pub path: String,
    /// Index of the project that lists it first.
    pub project: usize,
    /// The line of that project file (or database) that names it.
    pub line: u32,
    /// What the disk says.
    pub state: FileState,
}

/// A wildcard item or a folder of headers, expanded once the source roots are open.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Pending {
    pattern: String,
    exclude: Vec<String>,
    project: usize,
    line: u32,
}

/// The length and modification time of a file read to build the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    path: String,
    len: u64,
    mtime_ns: u128,
}

/// The files of an out-of-source build: file name → paths, path relative to a source root →
/// path, the source roots, the projects, the stale entries.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SourceIndex {
    solution: String,
    workspace: String,
    /// What the index was built for (solution, workspace, home, file cap): the name of its
    /// store entry, and checked again when it is read back.
    key: String,
    projects: Vec<Project>,
    files: Vec<SourceFile>,
    roots: Vec<String>,
    warnings: Vec<String>,
    pending: Vec<Pending>,
    stamps: Vec<Stamp>,
    /// The most files the index holds, wildcard expansions included.
    max_files: usize,
    /// How many files the cap left out, and which warning says so.
    left_out: usize,
    cut_warning: Option<usize>,
    verified: bool,
    /// Per source root, the names of the entries directly in it, listed when the
    /// index was verified: a bare name joined to a root is checked against them.
    top_names: Vec<Vec<String>>,
    #[serde(skip)]
    by_name: Keys,
    #[serde(skip)]
    by_path: Keys,
    #[serde(skip)]
    cached: bool,
}

/// What an index holds, for reports (`ctx sources --format json`, the MCP `sources` tool).
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Summary<'a> {
    /// The solution or database, absolute.
    pub solution: &'a str,
    /// The projects with their item counts.
    pub projects: &'a [Project],
    /// How many files are indexed.
    pub files: usize,
    /// The stale entries: path, project name and line.
    pub missing: Vec<Missing<'a>>,
    /// The entries whose case the disk corrected.
    pub corrected: Vec<Corrected<'a>>,
    /// The entries the sandbox refuses.
    pub refused: Vec<&'a str>,
    /// The source roots.
    pub source_roots: &'a [String],
    /// What was left out while reading the projects.
    pub warnings: &'a [String],
    /// Whether the index came from the store.
    pub cached: bool,
}

/// A stale entry of a [`Summary`].
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Missing<'a> {
    /// The file.
    pub path: &'a str,
    /// The name of the project that lists it.
    pub project: &'a str,
    /// The line that names it.
    pub line: u32,
}

/// A case-corrected entry of a [`Summary`].
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Corrected<'a> {
    /// As the project wrote it.
    pub written: &'a str,
    /// As the disk spells it.
    pub path: &'a str,
}

/// How a query was resolved by the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Via {
    /// A path relative to a source root, or the end of an indexed path.
    Index,
    /// Joined to a source root: a file there that no project lists.
    SourceRoot,
    /// A bare file name that one indexed file has.
    FileName,
}

impl Via {
    /// The name used in JSON (`index`, `source_root`, `file_name`).
    pub fn name(self) -> &'static str {
        match self {
            Via::Index => "index",
            Via::SourceRoot => "source_root",
            Via::FileName => "file_name",
        }
    }
}

/// What the index says about a query.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lookup {
    /// One file, absolute, and the rule that found it.
    Found {
        /// The file.
        path: String,
        /// The rule.
        via: Via,
    },
    /// Several files; each shown relative to its root (`App/a.h in /src/FreeCAD/src`).
    Ambiguous(Vec<String>),
    /// None; the closest indexed path, if one is close.
    NotFound(Option<String>),
}

impl SourceIndex {
    /// Reads the solution, XML solution, project or `compile_commands.json` at `path`
    /// (resolved in `sandbox`, usually the workspace alone) and every project it lists, in
    /// parallel. The files are checked against the disk by [`SourceIndex::verify`], once a
    /// sandbox holds the [`SourceIndex::source_roots`].
    pub fn load(sandbox: &Sandbox, path: &str, options: &Options) -> Result<SourceIndex, Error> {
        let (location, text) = read_text(sandbox, path)?;
        let solution = absolute_of(sandbox, &location);
        let dir = paths::parent(&solution).to_owned();
        let workspace = sandbox.root_path(sandbox.workspace().root()).as_str();
        let workspace = paths_of_os(workspace);
        let mut index = SourceIndex {
            key: key_of(&solution, &workspace, options),
            solution: solution.clone(),
            workspace,
            max_files: options.max_files,
            ..SourceIndex::default()
        };
        index.stamp(sandbox, &location, &solution);
        let lower = solution.to_ascii_lowercase();
        if lower.ends_with(".json") {
            let units = compdb::parse(&text, &dir).map_err(|e| Error::config(&solution, e))?;
            index.projects.push(Project {
                name: "compile_commands".into(),
                path: solution,
                files: 0,
            });
            index.add_units(&units);
        } else if lower.ends_with(".sln") || lower.ends_with(".slnx") {
            let refs = if lower.ends_with(".sln") {
                msbuild::parse_sln(&text, &dir)
            } else {
                msbuild::parse_slnx(&text, &dir).map_err(|e| Error::config(&solution, e))?
            };
            index.add_projects(sandbox, &dir, &refs);
        } else {
            let name = paths::file_name(&solution).split('.').next().unwrap_or_default().to_owned();
            let one = msbuild::ProjectRef { name, path: solution, line: 1 };
            index.add_projects(sandbox, &dir, &[one]);
        }
        // Cut first, so that no source root comes from a file the index leaves out.
        index.cap();
        index.roots =
            roots::source_roots(&index.root_members(), &index.workspace, options.home.as_deref());
        Ok(index)
    }

    /// Loads like [`SourceIndex::load`], served from `store` when the stored index was built
    /// for the same solution, workspace and options, from a solution and project files that
    /// have not changed since (length and modification time of each); a stored index of
    /// another version or a corrupt one is rebuilt.
    pub fn load_cached(
        sandbox: &Sandbox,
        path: &str,
        options: &Options,
        store: &Store,
    ) -> Result<SourceIndex, Error> {
        let location = sandbox.resolve(path, None).map_err(Error::fs)?;
        let workspace = paths_of_os(sandbox.root_path(sandbox.workspace().root()).as_str());
        let key = key_of(&absolute_of(sandbox, &location), &workspace, options);
        if let Ok(Some(bytes)) = store.read(&crate::store_name(&key))
            && let Some(mut index) = crate::decode(&bytes)
            && index.key == key
            && index.fresh(sandbox)
        {
            index.cached = true;
            index.build_maps();
            return Ok(index);
        }
        SourceIndex::load(sandbox, path, options)
    }

    /// Stores the index (verified or not) in `store`, for [`SourceIndex::load_cached`].
    pub fn save(&self, store: &Store) -> Result<(), Error> {
        let name = crate::store_name(&self.key);
        let _lock = store.lock(&name).map_err(Error::fs)?;
        store.write(&name, &crate::encode(self)).map_err(Error::fs)
    }

    /// Checks every file against the disk through `sandbox`, which holds the source roots:
    /// expands the wildcard items, corrects the case of paths the disk spells otherwise, marks
    /// stale and refused entries, and builds the lookup maps. Done once; a cached index is
    /// served verified.
    pub fn verify(&mut self, sandbox: &Sandbox) {
        if self.verified {
            self.build_maps();
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let mut seen: HashSet<String> = self.files.iter().map(|f| f.path.clone()).collect();
        let mut left_out = 0usize;
        for p in pending {
            for path in walk::expand(sandbox, &p.pattern, &p.exclude) {
                if self.files.len() >= self.max_files {
                    left_out += usize::from(seen.insert(path));
                    continue;
                }
                if seen.insert(path.clone()) {
                    self.projects[p.project].files += 1;
                    let file = SourceFile {
                        path,
                        project: p.project,
                        line: p.line,
                        state: FileState::Exists,
                    };
                    self.files.push(file);
                }
            }
        }
        if left_out > 0 {
            self.warn_cut(left_out);
        }
        let states = states_of(sandbox, &self.files);
        for (file, (state, fixed)) in self.files.iter_mut().zip(states) {
            file.state = state;
            if let Some(fixed) = fixed {
                let written = std::mem::replace(&mut file.path, fixed);
                file.state = FileState::Corrected { written };
            }
        }
        self.top_names = self.roots.iter().map(|root| top_names(sandbox, root)).collect();
        self.verified = true;
        self.build_maps();
    }

    /// The solution or database the index was built from, absolute.
    pub fn solution(&self) -> &str {
        &self.solution
    }

    /// The projects, in the solution's order.
    pub fn projects(&self) -> &[Project] {
        &self.projects
    }

    /// Every indexed file.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The source roots, absolute: each becomes a read-only root of the sandbox.
    pub fn source_roots(&self) -> &[String] {
        &self.roots
    }

    /// What was left out while reading the projects, one message each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The "Source roots" section of a system prompt: the roots, how paths resolve through
    /// them, how to pick one of several matches, and that they are read-only.
    pub fn prompt_section(&self) -> String {
        let mut text = String::from("## Source roots\n\n");
        text.push_str(
            "This workspace is the build folder of an out-of-source build. The sources it \
             builds live in these folders, which are read-only:\n\n",
        );
        for root in &self.roots {
            text.push_str(&format!("- {root}\n"));
        }
        text.push_str(
            "\nA path relative to one of them resolves (`@App/Application.h`), and so does a \
             file name that only one indexed file has (`@Application.h`). When a name matches \
             several files, ctx lists them numbered, each relative to its root: write the \
             path relative to its root to choose one. Files there can be read and searched, \
             never written.\n",
        );
        text
    }

    /// What the index holds, for reports.
    pub fn summary(&self) -> Summary<'_> {
        let project = |i: usize| self.projects.get(i).map_or("", |p| p.name.as_str());
        let mut summary = Summary {
            solution: &self.solution,
            projects: &self.projects,
            files: self.files.len(),
            missing: Vec::new(),
            corrected: Vec::new(),
            refused: Vec::new(),
            source_roots: &self.roots,
            warnings: &self.warnings,
            cached: self.cached,
        };
        for f in &self.files {
            match &f.state {
                FileState::Missing => {
                    let missing =
                        Missing { path: &f.path, project: project(f.project), line: f.line };
                    summary.missing.push(missing);
                }
                FileState::Corrected { written } => {
                    summary.corrected.push(Corrected { written, path: &f.path });
                }
                FileState::Refused { .. } => summary.refused.push(&f.path),
                FileState::Exists => {}
            }
        }
        summary
    }

    /// Whether [`SourceIndex::load_cached`] served the index from the store.
    pub fn cached(&self) -> bool {
        self.cached
    }

    /// Looks `query` up (assembly.md §2, rule 5): a path relative to a source root in the
    /// index, then joined to each source root on disk, then the end of one indexed path,
    /// then a unique file name; a miss names the indexed path whose file name is closest.
    pub fn lookup(&self, query: &str, sandbox: &Sandbox) -> Lookup {
        match self.find(query, sandbox) {
            Lookup::NotFound(_) => Lookup::NotFound(self.closest_to(query)),
            found => found,
        }
    }

    /// Looks `query` up as [`SourceIndex::lookup`] does, but a miss is `NotFound(None)`: what
    /// resolving a path needs, at the cost of a few hash lookups, where the closest name costs
    /// a comparison with every indexed file (a document of many misses would pay it for each).
    pub fn find(&self, query: &str, sandbox: &Sandbox) -> Lookup {
        let query = query.trim().replace('\\', "/");
        let query = query.trim_start_matches("./");
        if query.is_empty() || paths::is_absolute(query) {
            return Lookup::NotFound(None);
        }
        let lower = query.to_ascii_lowercase();
        let relative: Vec<u32> = self
            .by_path
            .get(&lower)
            .filter(|&i| self.relative(i).is_some_and(|rel| rel.eq_ignore_ascii_case(query)))
            .collect();
        if let Some(found) = self.pick(&relative, query, Via::Index) {
            return found;
        }
        let mut joined: Vec<String> = if query.contains('/') {
            self.roots
                .iter()
                .flat_map(|root| joins(root, query))
                .filter(|path| self.roots.iter().any(|r| paths::within(path, r)))
                .filter(|path| sandbox.resolve(path, None).is_ok())
                .collect()
        } else {
            // A bare name joined to a root: the root's listing says whether it is there.
            self.roots
                .iter()
                .zip(&self.top_names)
                .filter(|(_, names)| names.binary_search_by(|n| n.as_str().cmp(query)).is_ok())
                .map(|(root, _)| format!("{}/{query}", root.trim_end_matches('/')))
                .collect()
        };
        joined.dedup();
        match joined.len() {
            0 => {}
            1 => {
                let via = if self.holds(&joined[0]) { Via::Index } else { Via::SourceRoot };
                return Lookup::Found { path: joined[0].clone(), via };
            }
            _ => return Lookup::Ambiguous(joined.iter().map(|p| self.shown(p)).collect()),
        }
        let name = paths::file_name(&lower);
        let named: Vec<u32> = self.named(name).collect();
        if query.contains('/') {
            let tail = format!("/{lower}");
            let ends: Vec<u32> = named
                .into_iter()
                .filter(|&i| self.files[i as usize].path.to_ascii_lowercase().ends_with(&tail))
                .collect();
            if let Some(found) = self.pick(&ends, query, Via::Index) {
                return found;
            }
        } else if let Some(found) = self.pick(&named, query, Via::FileName) {
            return found;
        }
        Lookup::NotFound(None)
    }

    /// The indexed path whose file name is closest to `query`'s, for a miss.
    fn closest_to(&self, query: &str) -> Option<String> {
        let query = query.trim().replace('\\', "/");
        let query = query.trim_start_matches("./");
        if query.is_empty() || paths::is_absolute(query) {
            return None;
        }
        self.closest(paths::file_name(&query.to_ascii_lowercase()))
    }

    /// One hit among `ids`: the one spelled as written if several differ only in case, the
    /// one on disk if the others are stale; several left: ambiguous.
    fn pick(&self, ids: &[u32], query: &str, via: Via) -> Option<Lookup> {
        if ids.is_empty() {
            return None;
        }
        if let [one] = ids[..] {
            return Some(Lookup::Found { path: self.files[one as usize].path.clone(), via });
        }
        let files: Vec<&SourceFile> = ids.iter().map(|&i| &self.files[i as usize]).collect();
        let narrow = |keep: &dyn Fn(&SourceFile) -> bool| -> Vec<&SourceFile> {
            let kept: Vec<&SourceFile> = files.iter().copied().filter(|f| keep(f)).collect();
            if kept.is_empty() { files.clone() } else { kept }
        };
        let mut left = narrow(&|f| f.path.ends_with(query));
        if left.len() > 1 {
            left.retain(|f| !matches!(f.state, FileState::Missing));
            if left.is_empty() {
                left = files.clone();
            }
        }
        Some(match left[..] {
            [one] => Lookup::Found { path: one.path.clone(), via },
            _ => Lookup::Ambiguous(left.iter().map(|f| self.shown(&f.path)).collect()),
        })
    }

    /// Whether the index lists `path`.
    fn holds(&self, path: &str) -> bool {
        self.named(paths::file_name(path)).any(|i| self.files[i as usize].path == path)
    }

    /// The files whose name is `name`, without case.
    fn named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = u32> + 's {
        self.by_name.get(name).filter(move |&i| {
            paths::file_name(&self.files[i as usize].path).eq_ignore_ascii_case(name)
        })
    }

    /// The path of file `i` relative to its source root, if it has one.
    fn relative(&self, i: u32) -> Option<&str> {
        let path = &self.files[i as usize].path;
        let root = self.roots.iter().find(|r| paths::within(path, r))?;
        Some(paths::relative_to(path, root))
    }

    /// A path as candidates show it: relative to its source root (`App/a.h in /src`), to
    /// the workspace, or whole.
    pub fn shown(&self, path: &str) -> String {
        if paths::within(path, &self.workspace) {
            return paths::relative_to(path, &self.workspace).to_owned();
        }
        match self.roots.iter().find(|r| paths::within(path, r)) {
            Some(root) => format!("{} in {root}", paths::relative_to(path, root)),
            None => path.to_owned(),
        }
    }

    /// The indexed path whose file name is closest to `name`, if one is close. A name whose
    /// length alone differs by more than is close is not compared (the distance is at least
    /// that difference), so a long name costs no more than a short one.
    fn closest(&self, name: &str) -> Option<String> {
        let most = (name.len() / 3).max(1);
        let chars = name.chars().count();
        let (best, distance) = self
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let file = paths::file_name(&f.path);
                if file.chars().count().abs_diff(chars) > most {
                    return None;
                }
                Some((i, strsim::levenshtein(&file.to_ascii_lowercase(), name)))
            })
            .min_by_key(|&(i, d)| (d, self.files[i].path.len()))?;
        (distance <= most).then(|| self.shown(&self.files[best].path))
    }

    fn build_maps(&mut self) {
        let names = (0..self.files.len() as u32)
            .map(|i| (key_hash(paths::file_name(&self.files[i as usize].path)), i));
        self.by_name = Keys::new(names.collect());
        let relative = (0..self.files.len() as u32)
            .filter_map(|i| self.relative(i).map(|rel| (key_hash(rel), i)));
        self.by_path = Keys::new(relative.collect());
    }

    /// Reads each project (in parallel), its `.filters` and the `.vcxitems` it imports.
    fn add_projects(
        &mut self,
        sandbox: &Sandbox,
        solution_dir: &str,
        refs: &[msbuild::ProjectRef],
    ) {
        let results = par_map(refs, |r| read_project(sandbox, solution_dir, r));
        let mut seen: HashSet<String> = HashSet::new();
        for (r, read) in refs.iter().zip(results) {
            let project = self.projects.len();
            let mut count = 0;
            self.warnings.extend(read.warnings);
            self.stamps.extend(read.stamps);
            for items in read.items {
                for entry in items.entries {
                    match entry {
                        Entry::File { path, line } => {
                            count += 1;
                            if seen.insert(path.clone()) {
                                let state = FileState::Exists;
                                self.files.push(SourceFile { path, project, line, state });
                            }
                        }
                        Entry::Pattern { pattern, exclude, line } => {
                            self.pending.push(Pending { pattern, exclude, project, line });
                        }
                    }
                }
            }
            self.projects.push(Project {
                name: r.name.clone(),
                path: r.path.clone(),
                files: count,
            });
        }
    }

    /// The translation units of a database, then the headers of their folders.
    fn add_units(&mut self, units: &[compdb::Unit]) {
        let mut dirs = Vec::new();
        for unit in units {
            let dir = paths::parent(&unit.path).to_owned();
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
            let state = FileState::Exists;
            let file = SourceFile { path: unit.path.clone(), project: 0, line: unit.line, state };
            self.files.push(file);
        }
        self.projects[0].files = units.len();
        for dir in dirs {
            let pattern = format!(
                "{}/*.{{{}}}",
                dir.trim_end_matches('/'),
                compdb::HEADER_EXTENSIONS.join(",")
            );
            self.pending.push(Pending { pattern, exclude: Vec::new(), project: 0, line: 0 });
        }
    }

    /// The paths the source roots are chosen for: the files, and the folders of the patterns.
    fn root_members(&self) -> Vec<&str> {
        let mut members: Vec<&str> = self.files.iter().map(|f| f.path.as_str()).collect();
        // A wildcard's folder counts only while the cap leaves room for its files.
        let room = self.files.len() < self.max_files;
        for p in self.pending.iter().filter(|_| room) {
            let literal = p.pattern.split(['*', '?', '{', '[']).next().unwrap_or_default();
            members.push(literal);
        }
        members
    }

    /// Cuts the listed files to the cap; the wildcard items expanded later by
    /// [`SourceIndex::verify`] get no more than what is left.
    fn cap(&mut self) {
        let max = self.max_files;
        if self.files.len() > max {
            let left = self.files.len() - max;
            self.files.truncate(max);
            self.warn_cut(left);
        }
    }

    /// Warns that `left` more files were left out, in one warning however many cuts there are.
    fn warn_cut(&mut self, left: usize) {
        self.left_out += left;
        let message = format!(
            "{} files left out: the index holds at most {} (raise `sources_max_files`)",
            self.left_out, self.max_files
        );
        match self.cut_warning {
            Some(i) => self.warnings[i] = message,
            None => {
                self.cut_warning = Some(self.warnings.len());
                self.warnings.push(message);
            }
        }
    }

    fn stamp(&mut self, sandbox: &Sandbox, location: &Location, path: &str) {
        if let Some(stamp) = stamp_of(sandbox, location, path) {
            self.stamps.push(stamp);
        }
    }

    /// Whether every file the index was built from is unchanged.
    fn fresh(&self, sandbox: &Sandbox) -> bool {
        let same = |s: &Stamp| {
            sandbox
                .resolve(&s.path, None)
                .ok()
                .and_then(|l| stamp_of(sandbox, &l, &s.path))
                .is_some_and(|now| now == *s)
        };
        !self.stamps.is_empty() && par_map(&self.stamps, same).into_iter().all(|same| same)
    }
}

/// The names of the entries directly in `root`, sorted.
fn top_names(sandbox: &Sandbox, root: &str) -> Vec<String> {
    let Ok(location) = sandbox.resolve(root, None) else { return Vec::new() };
    let Ok(walk) = sandbox.walk_with(&location, WalkOptions::of(sandbox).max_depth(1)) else {
        return Vec::new();
    };
    let mut names: Vec<String> =
        walk.entries.iter().filter_map(|e| e.path.file_name().map(str::to_owned)).collect();
    names.sort();
    names
}

/// `query` joined to `root`, and, when the query starts with the root's own last folders
/// (`src/App` under the root `…/src`), joined to the folder above them.
fn joins(root: &str, query: &str) -> Vec<String> {
    let query = query.trim_end_matches('/');
    let mut out = vec![paths::normalize(&format!("{root}/{query}"))];
    let mut base = root;
    for _ in 0..3 {
        let name = paths::file_name(base);
        let up = paths::parent(base);
        if name.is_empty() || up == base {
            break;
        }
        let tail = paths::relative_to(root, up);
        if let Some(rest) = query.strip_prefix(tail).filter(|r| r.is_empty() || r.starts_with('/'))
        {
            out.push(paths::normalize(&format!("{root}/{rest}")));
        }
        base = up;
    }
    out
}

/// `f` of each item, in order, the items shared among the cores (a few items stay on one).
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    const MIN_SHARE: usize = 16;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let chunk = items.len().div_ceil(threads).max(MIN_SHARE);
    if chunk >= items.len() {
        return items.iter().map(&f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// A map from a hashed key (a lower-case name or path) to file numbers: one sorted array, so
/// building it allocates once and a lookup is a binary search. Hashes can collide; callers
/// compare the real names of what they get.
#[derive(Clone, Debug, Default)]
struct Keys(Vec<(u64, u32)>);

impl Keys {
    fn new(mut pairs: Vec<(u64, u32)>) -> Keys {
        pairs.sort_unstable();
        Keys(pairs)
    }

    /// The file numbers stored under the hash of `key`.
    fn get(&self, key: &str) -> impl Iterator<Item = u32> + '_ {
        let hash = key_hash(key);
        let start = self.0.partition_point(|&(h, _)| h < hash);
        self.0[start..].iter().take_while(move |&&(h, _)| h == hash).map(|&(_, i)| i)
    }
}

/// FNV-1a over the ASCII-lower-cased bytes of `key`.
fn key_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// What reading one project gave.
struct ProjectRead {
    items: Vec<Items>,
    warnings: Vec<String>,
    stamps: Vec<Stamp>,
}

fn read_project(sandbox: &Sandbox, solution_dir: &str, r: &msbuild::ProjectRef) -> ProjectRead {
    let mut read = ProjectRead { items: Vec::new(), warnings: Vec::new(), stamps: Vec::new() };
    let project_dir = paths::parent(&r.path).to_owned();
    let mut files = vec![(r.path.clone(), project_dir.clone())];
    if r.path.to_ascii_lowercase().ends_with(".vcxproj") {
        let filters = format!("{}.filters", r.path);
        if sandbox.resolve(&filters, None).is_ok() {
            files.push((filters, project_dir.clone()));
        }
    }
    let mut i = 0;
    while let Some((path, this_dir)) = files.get(i).cloned() {
        i += 1;
        let (location, text) = match read_text(sandbox, &path) {
            Ok(read) => read,
            Err(err) => {
                read.warnings.push(format!("project {} skipped: {err}", r.name));
                continue;
            }
        };
        read.stamps.extend(stamp_of(sandbox, &location, &path));
        let dirs = Dirs { solution: solution_dir, project: &project_dir, this_file: &this_dir };
        match msbuild::parse_project(&text, &dirs) {
            Ok(items) => {
                for import in &items.imports {
                    if files.len() < 64 && !files.iter().any(|(p, _)| p == import) {
                        files.push((import.clone(), paths::parent(import).to_owned()));
                    }
                }
                read.warnings.extend(items.warnings.iter().map(|w| format!("{path}: {w}")));
                read.items.push(items);
            }
            Err(err) => read.warnings.push(format!("{path}: not read: {err}")),
        }
    }
    read
}

/// Reads a text file of the index's inputs through the sandbox.
fn read_text(sandbox: &Sandbox, path: &str) -> Result<(Location, String), Error> {
    let (location, content) = sandbox.read_path(path, None).map_err(Error::fs)?;
    match content.text() {
        Some(text) => Ok((location, text.to_string())),
        None => Err(Error::config(path, "binary content".into())),
    }
}

/// The absolute, `/`-separated path of a location.
/// What shapes an index besides its files: the source roots depend on the workspace and the
/// home folder, the cut on the file cap.
fn key_of(solution: &str, workspace: &str, options: &Options) -> String {
    let home = options.home.as_deref().unwrap_or_default();
    format!("{solution}\n{workspace}\n{home}\n{}", options.max_files)
}

fn absolute_of(sandbox: &Sandbox, location: &Location) -> String {
    let root = sandbox.root_path(location.root()).as_str().replace('\\', "/");
    paths::normalize(&format!("{root}/{}", location.path()))
}

fn stamp_of(sandbox: &Sandbox, location: &Location, path: &str) -> Option<Stamp> {
    let stat = sandbox.stat(location).ok()?;
    let mtime_ns = stat.modified?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
    Some(Stamp { path: path.to_owned(), len: stat.len, mtime_ns })
}

/// The state of each file on disk, with the disk's spelling when only its case differs. The
/// files go in shares of neighbours (a project's files sit together) to every core, each share
/// resolved at once, so that a folder of many files is listed once rather than each file
/// opened from its root.
fn states_of(sandbox: &Sandbox, files: &[SourceFile]) -> Vec<(FileState, Option<String>)> {
    const SHARE: usize = 256;
    let shares: Vec<&[SourceFile]> = files.chunks(SHARE).collect();
    let states = par_map(&shares, |share| {
        let written: Vec<&str> = share.iter().map(|f| f.path.as_str()).collect();
        let resolved = sandbox.resolve_many(&written);
        share.iter().zip(resolved).map(|(f, r)| state_of(sandbox, &f.path, r)).collect::<Vec<_>>()
    });
    states.into_iter().flatten().collect()
}

/// What the sandbox made of an indexed path, as its state, and the disk's spelling of a path
/// found under another case.
fn state_of(
    sandbox: &Sandbox,
    path: &str,
    resolved: Result<Location, ctx_fs::Error>,
) -> (FileState, Option<String>) {
    if paths::drive(path).is_some() != cfg!(windows) {
        return (FileState::Missing, None);
    }
    match resolved {
        Ok(_) => (FileState::Exists, None),
        Err(err) if err.code() == Code::NotFound => match correct_case(sandbox, path) {
            Some(fixed) => (FileState::Exists, Some(fixed)),
            None => (FileState::Missing, None),
        },
        Err(err) => (FileState::Refused { code: err.code() }, None),
    }
}

/// The path as the disk spells it, when it differs from `path` only in case (each folder on
/// the way listed once).
fn correct_case(sandbox: &Sandbox, path: &str) -> Option<String> {
    let root = sandbox
        .roots()
        .filter(|&r| matches!(sandbox.root_kind(r), RootKind::Source | RootKind::Workspace))
        .map(|r| paths_of_os(sandbox.root_path(r).as_str()))
        .filter(|root| paths::within(path, root))
        .max_by_key(String::len)?;
    let mut current = root.clone();
    let mut changed = false;
    for comp in paths::relative_to(path, &root).split('/') {
        let exact = format!("{}/{comp}", current.trim_end_matches('/'));
        if sandbox.resolve(&exact, None).is_ok() {
            current = exact;
            continue;
        }
        let dir = sandbox.resolve(&current, None).ok()?;
        let listing = sandbox.walk_with(&dir, WalkOptions::of(sandbox).max_depth(1)).ok()?;
        let mut found = listing
            .entries
            .iter()
            .filter(|e| e.path.file_name().is_some_and(|n| n.eq_ignore_ascii_case(comp)));
        let (Some(entry), None) = (found.next(), found.next()) else { return None };
        current = format!("{}/{}", current.trim_end_matches('/'), entry.path.file_name()?);
        changed = true;
    }
    changed.then_some(current)
}

impl Lookup {
    /// The code of a lookup that found no single file.
    pub fn code(&self) -> Option<Code> {
        match self {
            Lookup::Found { .. } => None,
            Lookup::Ambiguous(_) => Some(Code::Ambiguous),
            Lookup::NotFound(_) => Some(Code::NotFound),
        }
    }
}

/// A code stored by its name, so that a stored index survives a renumbering of the codes.
mod code_name {
    use ctx_diagnostics::Code;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(code: &Code, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(code.as_str())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Code, D::Error> {
        let name = String::deserialize(d)?;
        Code::from_name(&name).ok_or_else(|| serde::de::Error::custom("unknown code"))
    }
}
