//! Checking an index against the disk through the sandbox that holds its source roots: the
//! roots it did not open, the wildcard items expanded (one walk per distinct folder, within
//! the index's walk budget), the state of every file, the case the disk spells, and each
//! root's own entries.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctx_diagnostics::Code;
use ctx_fs::{Location, RootKind, Sandbox, WalkOptions};

use crate::bounds::Bounds;
use crate::index::{FileState, Listed, Pending, SourceFile, SourceIndex, paths_of_os};
use crate::load::Seen;
use crate::paths;
use crate::walk::{self, Found, Patterns, Rests, Unwalked, Walks};
use crate::warning::{Warning, clip};

/// Deepest path below its root whose case is corrected; deeper ones stay missing.
const MAX_CORRECTED_DEPTH: usize = 64;

impl SourceIndex {
    /// Checks every file against the disk through `sandbox`, which holds the source roots:
    /// expands the wildcard items, corrects the case of paths the disk spells otherwise, marks
    /// stale and refused entries, and builds the lookup maps. Done once; a cached index is
    /// served verified.
    ///
    /// A source root the sandbox does not hold (it could not be opened, or was not to be) gets
    /// one warning, the same whether the folder is missing, is a file or exists; its files are
    /// refused like any outside the roots, and an index verified so is not stored.
    pub fn verify(&mut self, sandbox: &Sandbox) {
        self.unopened = self
            .roots
            .iter()
            .filter(|root| sandbox.resolve(root, None).is_err())
            .cloned()
            .collect();
        self.closed = self
            .unopened
            .iter()
            .map(|root| {
                Warning::general(format!(
                    "source root {} is not open: its files are not read",
                    clip(root)
                ))
            })
            .collect();
        if self.verified {
            self.walk_again(sandbox);
            // A file missing when the index was stored may be there now, and a root may hold
            // other names: never a stale answer.
            self.recheck_missing(sandbox);
            self.top_names = self.roots.iter().map(|root| top_names(sandbox, root)).collect();
            self.forget_maps();
            return;
        }
        self.check_states(sandbox, 0);
        self.top_names = self.roots.iter().map(|root| top_names(sandbox, root)).collect();
        if !self.pending.is_empty() {
            self.listed = Some(Box::new(Listed::of(self)));
        }
        self.expand(sandbox);
        let listed = self.listed.as_ref().map_or(self.files.len(), |l| l.files);
        self.check_states(sandbox, listed);
        self.verified = true;
        self.forget_maps();
    }

    /// The wildcard items of a verified index expanded again: what the walks found before
    /// is dropped (the files past those the projects list, their counts and warnings) and
    /// the folders walked anew, so that a stored index sees a file added, removed or renamed
    /// under a wildcard as a fresh build does.
    fn walk_again(&mut self, sandbox: &Sandbox) {
        let Some(listed) = self.listed.as_deref() else { return };
        let Listed { files, counts, warnings, left_out } = listed.clone();
        self.files.truncate(files);
        for (project, count) in self.projects.iter_mut().zip(counts) {
            project.files = count;
        }
        self.warnings = warnings;
        self.left_out = left_out;
        self.expand(sandbox);
        self.check_states(sandbox, files);
    }

    /// Expands the wildcard items: their folders each walked once (a few at a time, on every
    /// core), in the order the projects name them, while the cap leaves room and the walk
    /// budget lasts.
    fn expand(&mut self, sandbox: &Sandbox) {
        let pending = std::mem::take(&mut self.pending);
        self.expand_items(sandbox, &pending);
        self.pending = pending;
    }

    fn expand_items(&mut self, sandbox: &Sandbox, pending: &[Pending]) {
        if pending.is_empty() {
            return;
        }
        let plan = Plan::of(pending, &self.exclusions);
        let mut walks = Walks::new(sandbox, Bounds::of(self.max_files).walk);
        let mut seen = Seen::of(&self.files);
        let (mut full, mut unwalked) = (0usize, 0usize);
        let expand = |walks: &Walks<'_>, g: &Group, cap: usize| {
            let exclude: Vec<Option<&Patterns>> =
                g.members.iter().map(|&i| plan.exclusions.get(pending[i].exclude)).collect();
            walks.expand(&g.folder, &plan.compiled[g.rests], &exclude, cap)
        };
        for share in plan.groups.chunks(crate::threads() * 256) {
            if self.files.len() >= self.max_files {
                full += share.iter().map(|g| g.members.len()).sum::<usize>();
                continue;
            }
            // The share's walks run on every core, each with the cap the budget left at the
            // share's start gives, while what they cost in all stays within that budget (a
            // walk not run past it is run below if the budget still pays for it); they are
            // then charged in the items' order, and a walk that a smaller cap would have cut
            // is made again with that cap, so the index is what walks one after another give.
            let ahead = Walks::cap(walks.left());
            let unspent = AtomicUsize::new(walks.left());
            let walked = crate::par_map(share, 16, |g| {
                if unspent.load(Ordering::Relaxed) == 0 {
                    return None;
                }
                let found = expand(&walks, g, ahead);
                if let Ok(found) = &found {
                    let _ = unspent.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                        Some(left.saturating_sub(found.spent))
                    });
                }
                Some(found)
            });
            for (g, found) in share.iter().zip(walked) {
                if walks.left() == 0 {
                    unwalked += g.members.len();
                    continue;
                }
                let cap = Walks::cap(walks.left());
                let found = match found {
                    Some(Ok(found)) if found.holds_for(cap) => Ok(found),
                    Some(Err(why)) => Err(why),
                    _ => expand(&walks, g, cap),
                };
                match found {
                    Ok(found) => {
                        walks.charge(&found);
                        self.add_found(pending, g, found, &mut seen);
                    }
                    Err(why) => {
                        for &i in &g.members {
                            self.warn_unwalked(&pending[i], &g.folder, why);
                        }
                    }
                }
            }
        }
        if full + unwalked > 0 {
            let why = if unwalked > 0 {
                format!("the walk budget of {} entries is spent", Bounds::of(self.max_files).walk)
            } else {
                format!("the index holds at most {} files", self.max_files)
            };
            let message = format!("{} wildcard items not expanded: {why}", full + unwalked);
            self.warnings.push(Warning::new(&self.solution, 0, message));
        }
    }

    /// Adds the files one folder's walk found, each once, within the cap.
    fn add_found(&mut self, pending: &[Pending], g: &Group, found: Found, seen: &mut Seen) {
        if found.truncated {
            let p = &pending[g.members[0]];
            let message = format!(
                "wildcard `{}`: {} holds more entries than the walk budget leaves; the rest \
                 is not expanded",
                clip(&p.pattern),
                clip(&g.folder)
            );
            self.warnings.push(Warning::new(&p.file, p.line, message));
        }
        if found.unmatched > 0 {
            let p = &pending[g.members[0]];
            let message = format!(
                "wildcard `{}`: {} distinct patterns over {} are matched against its first \
                 files only (at most {} matches a folder); {} files are not expanded",
                clip(&p.pattern),
                g.members.len(),
                clip(&g.folder),
                crate::walk::MAX_MATCHES,
                found.unmatched
            );
            self.warnings.push(Warning::new(&p.file, p.line, message));
        }
        let mut left_out = 0;
        for (path, which) in found.files {
            let p = &pending[g.members[which]];
            let keep = self.files.len() < self.max_files;
            if !seen.insert(&path, &self.files, keep) {
                continue;
            }
            if !keep {
                left_out += 1;
                continue;
            }
            if let Some(project) = self.projects.get_mut(p.project) {
                project.files += 1;
            }
            let (project, line, state) = (p.project, p.line, FileState::Exists);
            self.files.push(SourceFile { path, project, line, state });
        }
        self.warn_cut(left_out);
    }

    /// The warning of a wildcard item whose folder was not walked. Outside the open roots, it
    /// says so whatever is there: whether a folder out there exists is not told.
    fn warn_unwalked(&mut self, p: &Pending, folder: &str, why: Unwalked) {
        let why = match why {
            Unwalked::Outside => "its folder is outside the open roots".to_owned(),
            Unwalked::Missing => format!("its folder {} is missing or is a file", clip(folder)),
            Unwalked::Refused(code) => format!("its folder is refused ({code})"),
        };
        let message = format!("wildcard `{}` not expanded: {why}", clip(&p.pattern));
        self.warnings.push(Warning::new(&p.file, p.line, message));
    }

    /// The state on disk of each file from `from` on, with the disk's spelling when only its
    /// case differs.
    fn check_states(&mut self, sandbox: &Sandbox, from: usize) {
        let from = from.min(self.files.len());
        let states = states_of(sandbox, &self.files[from..]);
        self.take_states(sandbox, from..self.files.len(), states);
    }

    /// The files listed as missing (those the projects list, not those the walks found, which
    /// were walked again) checked again.
    fn recheck_missing(&mut self, sandbox: &Sandbox) {
        let listed = self.listed.as_ref().map_or(self.files.len(), |l| l.files);
        let missing: Vec<usize> = (0..listed.min(self.files.len()))
            .filter(|&i| self.files[i].state == FileState::Missing)
            .collect();
        if missing.is_empty() {
            return;
        }
        let files: Vec<SourceFile> = missing.iter().map(|&i| self.files[i].clone()).collect();
        let states = states_of(sandbox, &files);
        self.take_states(sandbox, missing, states);
    }

    /// Sets the files at `at` to `states`, looking for the missing ones under another case.
    fn take_states(
        &mut self,
        sandbox: &Sandbox,
        at: impl IntoIterator<Item = usize>,
        states: Vec<FileState>,
    ) {
        let mut corrector = Corrector::new(sandbox, Bounds::of(self.max_files).walk);
        for (i, state) in at.into_iter().zip(states) {
            let file = &mut self.files[i];
            file.state = state;
            if file.state != FileState::Missing
                || paths::drive(&file.path).is_some() != cfg!(windows)
            {
                continue;
            }
            let Some(fixed) = corrector.correct(&file.path) else { continue };
            // The disk's spelling is resolved like any path: a link there may lead out.
            file.state = match sandbox.resolve(&fixed, None) {
                Ok(_) => {
                    let written = std::mem::replace(&mut file.path, fixed);
                    FileState::Corrected { written }
                }
                Err(err) if err.code() == Code::NotFound => FileState::Missing,
                Err(err) => FileState::Refused { code: err.code() },
            };
        }
        if corrector.skipped > 0 {
            let message = format!(
                "{} missing files not looked for under another case: the listing budget is spent",
                corrector.skipped
            );
            self.warnings.push(Warning::new(&self.solution, 0, message));
        }
    }
}

/// The names of the entries directly in `root`, sorted.
fn top_names(sandbox: &Sandbox, root: &str) -> Vec<String> {
    let Ok(location) = sandbox.resolve(root, None) else { return Vec::new() };
    let options = WalkOptions::of(sandbox).max_depth(1).names_only();
    let Ok(walk) = sandbox.walk_with(&location, options) else {
        return Vec::new();
    };
    let mut names: Vec<String> =
        walk.entries.iter().filter_map(|e| e.path.file_name().map(str::to_owned)).collect();
    names.sort();
    names
}

/// The state of each file on disk. The files go in shares of neighbours (a project's files
/// sit together) to every core, each share resolved at once, so that a folder of many files
/// is listed once rather than each file opened from its root.
fn states_of(sandbox: &Sandbox, files: &[SourceFile]) -> Vec<FileState> {
    const SHARE: usize = 256;
    let shares: Vec<&[SourceFile]> = files.chunks(SHARE).collect();
    let states = crate::par_map(&shares, 16, |share| {
        let written: Vec<&str> = share.iter().map(|f| f.path.as_str()).collect();
        let resolved = sandbox.resolve_many(&written);
        share.iter().zip(resolved).map(|(f, r)| state_of(&f.path, r)).collect::<Vec<_>>()
    });
    states.into_iter().flatten().collect()
}

/// What the sandbox made of an indexed path. A path outside every open root is refused
/// (`E_OUTSIDE`) before anything is looked at, so its state says nothing of what is there.
fn state_of(path: &str, resolved: Result<Location, ctx_fs::Error>) -> FileState {
    if paths::drive(path).is_some() != cfg!(windows) {
        return FileState::Missing;
    }
    match resolved {
        Ok(_) => FileState::Exists,
        Err(err) if err.code() == Code::NotFound => FileState::Missing,
        Err(err) => FileState::Refused { code: err.code() },
    }
}

/// Finds the disk's spelling of missing paths, each folder on the way listed once for the
/// whole index, within a budget of listed names.
struct Corrector<'s> {
    sandbox: &'s Sandbox,
    /// The roots that may hold sources (the workspace and the source roots), as paths.
    roots: Vec<String>,
    /// Each folder listed so far: its names, or `None` when it could not be listed.
    listings: HashMap<String, Option<Vec<String>>>,
    left: usize,
    /// Missing files not looked for because the budget was spent.
    skipped: usize,
}

impl<'s> Corrector<'s> {
    fn new(sandbox: &'s Sandbox, budget: usize) -> Corrector<'s> {
        let roots = sandbox
            .roots()
            .filter(|&r| matches!(sandbox.root_kind(r), RootKind::Source | RootKind::Workspace))
            .map(|r| paths_of_os(sandbox.root_path(r).as_str()))
            .collect();
        Corrector { sandbox, roots, listings: HashMap::new(), left: budget, skipped: 0 }
    }

    /// The path as the disk spells it, when it differs from `path` only in case and each
    /// folder on the way has one name that matches.
    fn correct(&mut self, path: &str) -> Option<String> {
        let root =
            self.roots.iter().filter(|root| paths::within(path, root)).max_by_key(|r| r.len())?;
        let relative = paths::relative_to(path, root);
        if relative.is_empty() || relative.split('/').count() > MAX_CORRECTED_DEPTH {
            return None;
        }
        let mut current = root.trim_end_matches('/').to_owned();
        if current.is_empty() {
            return None;
        }
        let mut changed = false;
        for comp in relative.split('/') {
            if self.left == 0 && !self.listings.contains_key(&current) {
                self.skipped += 1;
                return None;
            }
            let names = self.listing(&current)?;
            let exact = names.binary_search_by(|n| n.as_str().cmp(comp)).is_ok();
            let (name, otherwise) = paths::disk_name(names, comp, exact)?;
            changed |= otherwise;
            current = format!("{current}/{name}");
        }
        changed.then_some(current)
    }

    /// The names in `folder`, listed once.
    fn listing(&mut self, folder: &str) -> Option<&Vec<String>> {
        if !self.listings.contains_key(folder) {
            let names = self
                .sandbox
                .resolve(folder, None)
                .ok()
                .and_then(|location| self.sandbox.names(&location).ok());
            self.left = self.left.saturating_sub(1 + names.as_ref().map_or(0, Vec::len));
            self.listings.insert(folder.to_owned(), names);
        }
        self.listings.get(folder)?.as_ref()
    }
}

/// The wildcard items of an index grouped by the folder they walk, their patterns and
/// exclusions compiled once each.
struct Plan {
    groups: Vec<Group>,
    /// The distinct lists of rests of the groups, compiled.
    compiled: Vec<Rests>,
    /// The exclusion lists of the index, compiled.
    exclusions: Vec<Patterns>,
}

/// The wildcard items of one folder.
struct Group {
    folder: String,
    /// The pending items, in order.
    members: Vec<usize>,
    /// Their rests after the folder, compiled: [`Plan::compiled`]`[rests]`.
    rests: usize,
}

impl Plan {
    fn of(pending: &[Pending], exclusions: &[Vec<String>]) -> Plan {
        let exclusions = exclusions.iter().map(|list| Patterns::new(list)).collect();
        let mut groups: Vec<(String, Vec<usize>, Vec<String>)> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        for (i, p) in pending.iter().enumerate() {
            let (folder, rest) = walk::split(&p.pattern);
            let g = *group_of.entry(folder.clone()).or_insert_with(|| {
                groups.push((folder, Vec::new(), Vec::new()));
                groups.len() - 1
            });
            groups[g].1.push(i);
            groups[g].2.push(rest);
        }
        // Folders with the same rests share one compiled set (a database gives every folder
        // of its units the same pattern of headers).
        let mut compiled_ids: HashMap<Vec<String>, usize> = HashMap::new();
        let mut compiled = Vec::new();
        let groups = groups
            .into_iter()
            .map(|(folder, members, rests)| {
                let rests = *compiled_ids.entry(rests).or_insert_with_key(|rests| {
                    compiled.push(Rests::new(rests));
                    compiled.len() - 1
                });
                Group { folder, members, rests }
            })
            .collect();
        Plan { groups, compiled, exclusions }
    }
}
