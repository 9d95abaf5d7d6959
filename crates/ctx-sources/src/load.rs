//! Building an index from the project files: the solution, database or project read through
//! the workspace's sandbox; each distinct project read once, in parallel, a few at a time,
//! within a reading budget; their items merged (each file and each wildcard once); the files
//! cut to the cap and the source roots chosen.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use ctx_fs::{Location, Sandbox, Text};

use crate::bounds::Bounds;
use crate::cache::{key_of, stamp_of, stamps_of};
use crate::index::{
    FileState, Pending, Project, SourceFile, SourceIndex, Stamp, absolute_of, workspace_of,
};
use crate::items::{Entry, Items};
use crate::msbuild::{self, ProjectRef};
use crate::paths::{self, Dirs, Language};
use crate::warning::{Tally, Warning, clip};
use crate::{Error, Options, compdb, roots};

/// How many files (a project, its `.filters`, the `.vcxitems` it imports) one project reads
/// at most.
const MAX_FILES_PER_PROJECT: usize = 64;

/// Projects read ahead per thread: at most this many times the threads are parsed and not yet
/// merged at once; the reading budget, checked before each project, bounds them whatever
/// the window.
const SHARE_PER_THREAD: usize = 64;

/// Most distinct wildcard items of an index; past it the rest are left out with a warning.
const MAX_WILDCARDS: usize = 1024;

impl SourceIndex {
    /// Reads the solution, XML solution, project or `compile_commands.json` at `path`
    /// (resolved in `sandbox`, usually the workspace alone) and every distinct project it
    /// lists, in parallel. The files are checked against the disk by
    /// [`SourceIndex::verify`], once a sandbox holds the [`SourceIndex::source_roots`].
    ///
    /// The solution (or the one project, or database) that cannot be read or parsed is an
    /// error; a project of a solution that cannot be is a warning ([`SourceIndex::warnings`]),
    /// as is every item left out.
    pub fn load(sandbox: &Sandbox, path: &str, options: &Options) -> Result<SourceIndex, Error> {
        let (location, text) = read_text(sandbox, path)?;
        let solution = absolute_of(sandbox, &location);
        let dir = paths::parent(&solution).to_owned();
        let workspace = workspace_of(sandbox);
        let mut index = SourceIndex {
            key: key_of(&solution, &workspace, options),
            solution: solution.clone(),
            workspace,
            max_files: options.max_files,
            max_projects: options.max_projects,
            ..SourceIndex::default()
        };
        index.stamps.extend(stamp_of(sandbox, &location, &solution));
        let lower = solution.to_ascii_lowercase();
        if lower.ends_with(".json") {
            let db = compdb::parse(text.as_str(), &dir).map_err(|e| Error::config(&solution, e))?;
            drop(text);
            let name = "compile_commands".to_owned();
            index.projects.push(Project { name, path: solution, files: 0 });
            index.add_units(db);
        } else if lower.ends_with(".sln") || lower.ends_with(".slnx") {
            let refs = if lower.ends_with(".sln") {
                msbuild::parse_sln(text.as_str(), &dir)
            } else {
                msbuild::parse_slnx(text.as_str(), &dir).map_err(|(line, why)| {
                    Error::config(&solution, format!("line {line}: {why}"))
                })?
            };
            drop(text);
            index.add_projects(sandbox, &dir, refs);
        } else {
            drop(text);
            let name = paths::file_name(&solution).split('.').next().unwrap_or_default().to_owned();
            let one = ProjectRef { name, path: solution.clone(), line: 1 };
            // A project named alone is the whole index: it must parse.
            if let Some(why) = index.add_projects(sandbox, &dir, vec![one]) {
                return Err(Error::config(&solution, why));
            }
        }
        // Cut first, so that no source root comes from a file the index leaves out.
        index.cap();
        if index.files.len() < index.max_files {
            // A wildcard's folder counts only while the cap leaves room for its files.
            let folders: HashSet<String> =
                index.pending.iter().map(|p| crate::walk::split(&p.pattern).0).collect();
            index.folders = folders.into_iter().collect();
            index.folders.sort();
        }
        let (roots, more) = index.roots_from_files(options.home.as_deref());
        index.roots = roots;
        if more > 0 {
            index.warnings.push(Warning::general(format!(
                "{more} more source roots left out: an index has at most {} (their files \
                 stay listed, unreadable)",
                roots::MAX_SOURCE_ROOTS
            )));
        }
        Ok(index)
    }

    /// The source roots the rule gives for the files as the projects wrote them and the
    /// folders of the wildcard items, and how many more it found than an index keeps.
    pub(crate) fn roots_from_files(&self, home: Option<&str>) -> (Vec<String>, usize) {
        let files = self.files.written();
        let folders = self.folders.iter().map(String::as_str);
        roots::source_roots(files, folders, &self.workspace, home)
    }

    /// Reads each distinct project (in parallel, a share at a time), its `.filters` and the
    /// `.vcxitems` it imports, and merges what they list; says why the first project's own
    /// file could not be read or parsed, if it could not.
    fn add_projects(
        &mut self,
        sandbox: &Sandbox,
        solution_dir: &str,
        refs: Vec<ProjectRef>,
    ) -> Option<String> {
        let refs = self.distinct(refs);
        let (solution, workspace) = (self.solution.clone(), self.workspace.clone());
        let reading = Reading {
            sandbox,
            solution: &solution,
            workspace: &workspace,
            solution_dir,
            bounds: Bounds::of(self.max_files),
            items: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
            lookups: AtomicUsize::new(0),
        };
        let mut merge = Merge::default();
        let mut unread = 0;
        let mut first_failure = None;
        // A project past the budget is not read (`read_project` says so) and counts as
        // unread; each is merged in the solution's order as soon as it and those before it are.
        crate::par_in_order(
            &refs,
            crate::threads() * SHARE_PER_THREAD,
            |r| read_project(&reading, r),
            |r, read| {
                unread += usize::from(read.unread);
                if self.projects.is_empty() {
                    first_failure.clone_from(&read.failure);
                }
                self.merge(r, read, &mut merge);
            },
        );
        if unread > 0 {
            let b = reading.bounds;
            self.warnings.push(Warning::new(
                &self.solution,
                0,
                format!(
                    "{unread} projects not read: the projects read before list {} items in {} \
                     bytes, past the budget of an index of at most {} files ({} items, {} bytes)",
                    reading.items.load(Ordering::Relaxed),
                    reading.bytes.load(Ordering::Relaxed),
                    self.max_files,
                    b.items,
                    b.bytes
                ),
            ));
        }
        if merge.wildcards_left_out > 0 {
            self.warnings.push(Warning::new(
                &self.solution,
                0,
                format!(
                    "{} more wildcard items left out: an index expands at most {MAX_WILDCARDS}",
                    merge.wildcards_left_out
                ),
            ));
        }
        first_failure
    }

    /// The projects of `refs`, each once (paths compared without ASCII case, as Windows and
    /// MSBuild compare them), at most [`Options::max_projects`]; a warning for each project
    /// listed again and one for those past the cap.
    fn distinct(&mut self, refs: Vec<ProjectRef>) -> Vec<ProjectRef> {
        // Per distinct path: its place among the kept (None past the cap), and its copies
        // with the line of the first.
        let mut first: HashMap<String, Option<usize>> = HashMap::new();
        let mut copies: Vec<(usize, u32)> = Vec::new();
        let mut kept = Vec::new();
        let mut past_cap = 0usize;
        for r in refs {
            match first.get(&r.path.to_ascii_lowercase()) {
                Some(Some(i)) => {
                    let (count, line) = &mut copies[*i];
                    *count += 1;
                    if *line == 0 {
                        *line = r.line;
                    }
                }
                Some(None) => {}
                None if kept.len() < self.max_projects => {
                    first.insert(r.path.to_ascii_lowercase(), Some(kept.len()));
                    copies.push((0, 0));
                    kept.push(r);
                }
                None => {
                    first.insert(r.path.to_ascii_lowercase(), None);
                    past_cap += 1;
                }
            }
        }
        for (r, &(count, line)) in kept.iter().zip(&copies).filter(|(_, c)| c.0 > 0) {
            let message = format!(
                "project {} listed {} times (the same path, however written): read once",
                clip(&r.path),
                count + 1
            );
            self.warnings.push(Warning::new(&self.solution, line, message));
        }
        if past_cap > 0 {
            let message = format!(
                "{past_cap} more projects not read: an index reads at most {} distinct projects",
                self.max_projects
            );
            self.warnings.push(Warning::new(&self.solution, 0, message));
        }
        kept
    }

    /// Adds what one project listed: each file once in the whole index, each wildcard item
    /// (with its exclusions) once.
    fn merge(&mut self, r: &ProjectRef, read: ProjectRead, merge: &mut Merge) {
        let project = self.projects.len();
        let mut count = 0;
        for w in read.warnings {
            self.warnings.push(w);
        }
        self.stamps.extend(read.stamps);
        for (file, items) in read.items {
            // A `.filters` repeats its project's items (to file them in folders): only the
            // files it alone names count for the project.
            let filters = file.to_ascii_lowercase().ends_with(".filters");
            let Items { entries, excludes, .. } = items;
            let excludes: Vec<usize> =
                excludes.iter().map(|e| merge.exclusion(e, &mut self.exclusions)).collect();
            for entry in entries {
                match entry {
                    Entry::File { path, line } => {
                        count += usize::from(!filters);
                        let keep = self.files.len() < self.max_files;
                        if merge.seen.insert(&path, &self.files, keep) {
                            count += usize::from(filters);
                            if keep {
                                let state = FileState::Exists;
                                self.files.push(SourceFile { path, project, line, state });
                            } else {
                                self.left_out += 1;
                            }
                        }
                    }
                    Entry::Pattern { pattern, exclude, line } => {
                        let exclude = match excludes.get(exclude) {
                            Some(&id) => id,
                            None => merge.exclusion(&[], &mut self.exclusions),
                        };
                        let key = (pattern, exclude);
                        if merge.wildcards.contains(&key) {
                            continue;
                        }
                        // Past the cap, items are counted, not remembered.
                        if self.pending.len() >= MAX_WILDCARDS {
                            merge.wildcards_left_out += 1;
                            continue;
                        }
                        merge.wildcards.insert(key.clone());
                        let (pattern, file) = (key.0, file.clone());
                        self.pending.push(Pending { pattern, exclude, project, file, line });
                    }
                }
            }
        }
        self.projects.push(Project { name: r.name.clone(), path: r.path.clone(), files: count });
    }

    /// The translation units of a database, then the headers of their folders: one wildcard
    /// item per distinct folder.
    fn add_units(&mut self, db: compdb::Database) {
        let compdb::Database { units, includes, includes_left } = db;
        let mut folders: HashSet<String> = HashSet::new();
        let mut pending = Vec::new();
        self.exclusions = vec![Vec::new()];
        let extensions = compdb::HEADER_EXTENSIONS.join(",");
        // The headers beside each unit and one folder below it (a private `detail/` or
        // `internal/`): one walk of two levels a folder.
        for unit in &units {
            let dir = paths::parent(&unit.path);
            if !folders.contains(dir) {
                folders.insert(dir.to_owned());
                let pattern = format!("{}/{{*,*/*}}.{{{extensions}}}", dir.trim_end_matches('/'));
                let file = self.solution.clone();
                let line = unit.line;
                pending.push(Pending { pattern, exclude: 0, project: 0, file, line });
            }
        }
        // The header folders of the project's own tree, walked whole (`#include
        // "mylib/api.h"` under `include/`): a folder whose parent, two levels or more below
        // the top of the disk, holds a translation unit. The others (the system's, a package
        // manager's) are not the project's sources.
        let mut skipped = includes_left;
        for include in &includes {
            let dir = include.path.trim_end_matches('/');
            let parent = paths::parent(dir);
            // A parent at the top of the disk (`/usr` of `/usr/include`) holds everything.
            let deep = parent.trim_matches('/').split('/').filter(|c| !c.is_empty()).count() >= 2;
            let own = deep && units.iter().any(|u| paths::within(&u.path, parent));
            if !own {
                skipped += 1;
                continue;
            }
            let pattern = format!("{dir}/**/*.{{{extensions}}}");
            let file = self.solution.clone();
            pending.push(Pending { pattern, exclude: 0, project: 0, file, line: include.line });
        }
        if skipped > 0 {
            self.warnings.push(Warning::general(format!(
                "{skipped} header folders of the compile commands not indexed: outside the \
                 project's tree, or past {} (their headers are found through the units' \
                 folders and the source roots only)",
                compdb::MAX_INCLUDE_DIRS
            )));
        }
        self.projects[0].files = units.len();
        for unit in units {
            if self.files.len() >= self.max_files {
                self.left_out += 1;
                continue;
            }
            let state = FileState::Exists;
            self.files.push(SourceFile { path: unit.path, project: 0, line: unit.line, state });
        }
        self.pending = pending;
    }

    /// Says how many files the cap left out (the merge counts them rather than keep them).
    fn cap(&mut self) {
        if self.files.len() > self.max_files {
            self.left_out += self.files.len() - self.max_files;
            self.files.truncate(self.max_files);
        }
        self.warn_cut(0);
    }

    /// Warns that `left` more files were left out, in one warning however many cuts there are.
    pub(crate) fn warn_cut(&mut self, left: usize) {
        self.left_out += left;
        if self.left_out == 0 {
            return;
        }
        let message = format!(
            "{} files left out: the index holds at most {} (raise `sources_max_files`)",
            self.left_out, self.max_files
        );
        self.warnings.tally(Tally::Cut, message);
    }
}

/// What the merge of the projects keeps between them.
#[derive(Default)]
struct Merge {
    seen: Seen,
    /// Each wildcard item taken: its pattern and exclusion list.
    wildcards: HashSet<(String, usize)>,
    wildcards_left_out: usize,
    /// The number of each distinct exclusion list in the index's.
    exclusion_ids: HashMap<Vec<String>, usize>,
}

impl Merge {
    /// The number of the exclusion list `list` in `all`, added when new.
    fn exclusion(&mut self, list: &[String], all: &mut Vec<Vec<String>>) -> usize {
        if let Some(&id) = self.exclusion_ids.get(list) {
            return id;
        }
        all.push(list.to_vec());
        self.exclusion_ids.insert(list.to_vec(), all.len() - 1);
        all.len() - 1
    }
}

/// The paths an index took, by hash: each kept file's number, or [`Seen::LEFT_OUT`] for a
/// path past the cap (counted, not kept). A path whose hash a kept file has is compared whole,
/// so two kept paths never pass for one; the rare ones that collide are kept whole apart.
#[derive(Default)]
pub(crate) struct Seen {
    by_hash: HashMap<u64, u32>,
    collided: HashSet<String>,
}

impl Seen {
    const LEFT_OUT: u32 = u32::MAX;

    /// The paths of `files`.
    pub(crate) fn of(files: &[SourceFile]) -> Seen {
        let mut seen = Seen::default();
        for (i, f) in files.iter().enumerate() {
            seen.by_hash.entry(exact_hash(&f.path)).or_insert(i as u32);
        }
        seen
    }

    /// Whether `path` is new; if `keep`, it becomes `files`' next file.
    pub(crate) fn insert(&mut self, path: &str, files: &[SourceFile], keep: bool) -> bool {
        let hash = exact_hash(path);
        match self.by_hash.get(&hash) {
            None => {
                let number = if keep { files.len() as u32 } else { Seen::LEFT_OUT };
                self.by_hash.insert(hash, number);
                true
            }
            // Past the cap the count may merge two paths of one hash: it is a count.
            Some(&Seen::LEFT_OUT) => false,
            Some(&i) if files.get(i as usize).is_some_and(|f| f.path == path) => false,
            Some(_) => self.collided.insert(path.to_owned()),
        }
    }
}

/// A hash of the bytes of `path`, eight at a time (a multiply and a rotation a word, as
/// rustc's Fx hash). It only keys [`Seen`], whose map hashes it again with its own random
/// keys and which compares paths whole when two share it, so a crafted collision costs a
/// path kept apart, never a wrong answer.
fn exact_hash(path: &str) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let bytes = path.as_bytes();
    let mut words = bytes.chunks_exact(8);
    let mut h = bytes.len() as u64;
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        h = (h.rotate_left(26) ^ word).wrapping_mul(K);
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    (h.rotate_left(26) ^ u64::from_le_bytes(last)).wrapping_mul(K)
}

/// The project files read so far, shared by the threads that read them.
struct Reading<'a> {
    sandbox: &'a Sandbox,
    solution: &'a str,
    workspace: &'a str,
    solution_dir: &'a str,
    bounds: Bounds,
    items: AtomicUsize,
    bytes: AtomicUsize,
    /// Project and import files looked for under another case so far.
    lookups: AtomicUsize,
}

impl Reading<'_> {
    fn spent(&self) -> bool {
        self.items.load(Ordering::Relaxed) >= self.bounds.items
            || self.bytes.load(Ordering::Relaxed) >= self.bounds.bytes
    }
}

/// What reading one project gave.
#[derive(Default)]
struct ProjectRead {
    /// Each file read (the project, its `.filters`, the `.vcxitems` it imports) and its items.
    items: Vec<(String, Items)>,
    warnings: Vec<Warning>,
    stamps: Vec<Stamp>,
    /// The budget was spent before it was read.
    unread: bool,
    /// Why the project's own file could not be read or parsed.
    failure: Option<String>,
}

/// A file one project reads: its path, its folder, and the file and line of the import that
/// names it (none for the project and its `.filters`).
#[derive(Clone)]
struct ToRead {
    path: String,
    dir: String,
    named: Option<(String, u32)>,
    /// Its text, when it was read ahead (the `.filters` beside the project).
    text: Option<(Location, Text)>,
}

fn read_project(reading: &Reading<'_>, r: &ProjectRef) -> ProjectRead {
    let mut read = ProjectRead::default();
    if reading.spent() {
        read.unread = true;
        return read;
    }
    let sandbox = reading.sandbox;
    let mut project_dir = paths::parent(&r.path).to_owned();
    let mut files =
        vec![ToRead { path: r.path.clone(), dir: project_dir.clone(), named: None, text: None }];
    // The files read, stated together once read (a project and its `.filters` share a folder);
    // and those that were not there, whose coming makes the index stale.
    let mut stamped = Vec::new();
    let mut absent = Vec::new();
    let mut i = 0;
    while let Some(ToRead { mut path, dir: mut this_dir, named, text }) = files.get(i).cloned() {
        i += 1;
        let mut read_as = text.map_or_else(|| read_text(sandbox, &path), Ok);
        // A solution or project written on Windows may spell a file otherwise than the disk.
        if read_as.as_ref().is_err_and(|e| e.code() == ctx_fs::Code::NotFound)
            && let Some(found) = disk_case(reading, &path)
            && let Ok(read) = read_text(sandbox, &found)
        {
            this_dir = paths::parent(&found).to_owned();
            if i == 1 {
                project_dir.clone_from(&this_dir);
            }
            path = found;
            read_as = Ok(read);
        }
        let (_, text) = match read_as {
            Ok(read) => read,
            Err(err) => {
                if err.code() == ctx_fs::Code::NotFound {
                    absent.push(path.clone());
                }
                read.warnings.push(match named {
                    Some((by, line)) => Warning::new(&by, line, format!("import not read: {err}")),
                    None if i > 1 => Warning::new(&path, 0, format!("not read: {err}")),
                    None => {
                        read.failure = Some(err.to_string());
                        let why = format!("project {} skipped: {err}", clip(&r.name));
                        Warning::new(reading.solution, r.line, why)
                    }
                });
                continue;
            }
        };
        // The `.filters` beside a project that could be read comes next, before its imports;
        // one the sandbox does not resolve (not there, refused) is not read, silently. It is
        // read at once, and resolved alone only when that fails, to tell a file that is not
        // there from one that could not be read: one open where there were two.
        if i == 1 && r.path.to_ascii_lowercase().ends_with(".vcxproj") {
            let path = format!("{path}.filters");
            let text = read_text(sandbox, &path).ok();
            let found = match &text {
                Some(_) => Ok(()),
                None => sandbox.resolve(&path, None).map(drop).map_err(|e| e.code()),
            };
            match found {
                Ok(()) => files.push(ToRead { path, dir: project_dir.clone(), named: None, text }),
                Err(ctx_fs::Code::NotFound) => absent.push(path),
                Err(_) => {}
            }
        }
        reading.bytes.fetch_add(text.as_str().len(), Ordering::Relaxed);
        stamped.push(path.clone());
        let dirs = Dirs {
            solution: reading.solution_dir,
            project: &project_dir,
            this_file: &this_dir,
            language: Language::of(&r.path),
        };
        match msbuild::parse_project(text.as_str(), &dirs) {
            Ok(items) => {
                reading.items.fetch_add(items.entries.len(), Ordering::Relaxed);
                for (import, line) in &items.imports {
                    if files.len() < MAX_FILES_PER_PROJECT
                        && !files.iter().any(|f| f.path == *import)
                    {
                        let dir = paths::parent(import).to_owned();
                        let named = Some((path.clone(), *line));
                        files.push(ToRead { path: import.clone(), dir, named, text: None });
                    }
                }
                for (line, why) in &items.warnings {
                    read.warnings.push(Warning::new(&path, *line, why.clone()));
                }
                read.items.push((path, items));
            }
            Err((line, why)) => {
                read.warnings.push(Warning::new(&path, line, format!("not read: {why}")));
                if i == 1 {
                    read.failure = Some(format!("line {line}: {why}"));
                }
            }
        }
        if reading.spent() {
            break;
        }
    }
    read.stamps = stamps_of(sandbox, &stamped, reading.workspace);
    read.stamps.extend(absent.into_iter().map(Stamp::absent));
    read
}

/// Reads a text file of the index's inputs through the sandbox: the sandbox's own text, shared
/// rather than copied.
/// Most project and import files looked for under another case in one build (each costs a
/// listing of every folder on its way).
const MAX_CASE_LOOKUPS: usize = 256;

/// `path` as the disk spells it, when it differs only in ASCII case (Windows and MSBuild
/// compare paths without case) and each folder on the way, from the workspace, holds one
/// name that matches; `None` past [`MAX_CASE_LOOKUPS`].
fn disk_case(reading: &Reading<'_>, path: &str) -> Option<String> {
    let root = reading.workspace.trim_end_matches('/');
    if root.is_empty() || !paths::within(path, root) {
        return None;
    }
    if reading.lookups.fetch_add(1, Ordering::Relaxed) >= MAX_CASE_LOOKUPS {
        return None;
    }
    let mut current = root.to_owned();
    let mut changed = false;
    for comp in paths::relative_to(path, root).split('/') {
        let location = reading.sandbox.resolve(&current, None).ok()?;
        let names = reading.sandbox.names(&location).ok()?;
        let (name, otherwise) = paths::disk_name(&names, comp, names.iter().any(|n| n == comp))?;
        changed |= otherwise;
        current = format!("{current}/{name}");
    }
    changed.then_some(current)
}

pub(crate) fn read_text(sandbox: &Sandbox, path: &str) -> Result<(Location, Text), Error> {
    let (location, content) = sandbox.read_path(path, None).map_err(Error::fs)?;
    match content.text() {
        Some(text) => Ok((location, text.clone())),
        None => Err(Error::config(path, "binary content".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FileState;

    fn file(path: &str) -> SourceFile {
        SourceFile { path: path.to_owned(), project: 0, line: 1, state: FileState::Exists }
    }

    /// The attack: paths made to share a hash (here one put in the map by hand, as a crafted
    /// collision would). What must not happen: a new path taken for a kept one. Each is new
    /// once, then seen.
    #[test]
    fn paths_that_share_a_hash_are_told_apart() {
        let mut files = vec![file("/src/a.c")];
        let mut seen = Seen::of(&files);
        for path in ["/src/b.c", "/src/c.c"] {
            seen.by_hash.insert(exact_hash(path), 0);
            assert!(seen.insert(path, &files, true), "{path} is new");
            assert!(!seen.insert(path, &files, true), "{path} is seen");
        }
        assert!(!seen.insert("/src/a.c", &files, true));
        assert!(seen.insert("/src/d.c", &files, true));
        files.push(file("/src/d.c"));
        assert!(!seen.insert("/src/d.c", &files, true));
        // Every length of a last word, so that no byte is left out of the hash.
        let long = "/src/0123456789abcdef.c";
        let hashes: HashSet<u64> = (1..=long.len()).map(|n| exact_hash(&long[..n])).collect();
        assert_eq!(hashes.len(), long.len());
        assert_ne!(exact_hash("/src/a.c\0"), exact_hash("/src/a.c"));
    }
}
