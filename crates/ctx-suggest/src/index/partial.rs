//! [`Index::refresh_paths`]: bringing the index up to date after changes a file watch reported,
//! by listing again only the folders they lie in, with the walk's own rules, instead of
//! walking the whole workspace.
//!
//! For each changed path, its folder is listed (one level, the walk's ignore files, hidden
//! entries, skipped folders and deny list applying as in a whole walk, ancestors' ignore files
//! included), and when the path is a folder the walk lists, all of it. The index's files in
//! those folders are replaced by what the listings hold: kept when their stamp did not move,
//! read again otherwise, dropped when gone. The answer is the one a whole walk would give
//! whenever the watch reported every change; where a partial listing could differ from a
//! whole walk it is not used, and `Ok(None)` asks for a whole walk instead: an ignore file
//! changed (it rules over everything below it), the last whole walk reached anything through
//! a link (a file behind a link changes without a change under the link's path), a listing
//! met a link, stopped at a limit or failed, a change at the workspace's own folder or near
//! the depth limit, or more changed folders than a whole walk is worth.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use camino::{Utf8Path, Utf8PathBuf};
use ctx_fs::{ErrorKind, FileKind, Sandbox, Walk, WalkEntry, WalkOptions};

use super::change::Change;
use super::refresh::{Listed, same_stamp};
use super::{FileRec, Index, UpdateStats};
use crate::error::{Error, Result};

/// Most folders listed again by one partial refresh; past it, a whole walk is as cheap.
pub const MAX_PARTIAL_FOLDERS: usize = 64;

impl Index {
    /// Brings the index up to date after changes at `changed` (paths relative to the
    /// workspace's root, `/`-separated, as a watch of the sandbox reports them), listing only
    /// the folders they lie in; `Ok(None)` when only a walk of the whole workspace can tell
    /// ([`Index::refresh`]): see the module's documentation. A path that is not plainly
    /// inside the workspace (`..`, absolute, empty) asks for a whole walk, and nothing
    /// outside the workspace is ever listed.
    ///
    /// # Errors
    ///
    /// As [`Index::refresh`].
    pub fn refresh_paths(
        &mut self,
        sandbox: &Sandbox,
        changed: &[&str],
    ) -> Result<Option<UpdateStats>> {
        let started = Instant::now();
        if self.walked_links != Some(false) {
            return Ok(None);
        }
        let Some(scope) = Scope::of(sandbox, changed) else { return Ok(None) };
        let Some(listed) = scope.list(sandbox)? else { return Ok(None) };
        let mut change = Change { before: self.mark(), ..Change::default() };
        let mut stats = UpdateStats::default();
        // The new file list: the records outside the scope as they are, the listings' files in
        // their place, in the walk's order (by path, component by component). Each listed
        // file's place among the records is found by a binary search, so that only the
        // records of the scope are compared by path, and only the run of records from the
        // first to the last of them is taken out and put back (the others are not moved).
        let old = &self.data.files;
        let by_path = |e: &WalkEntry| old.partition_point(|r| Utf8Path::new(&r.path) < e.path);
        let placed: Vec<(usize, bool)> = listed
            .iter()
            .map(|e| {
                let at = by_path(e);
                (at, old.get(at).is_some_and(|r| Utf8Path::new(&r.path) == e.path))
            })
            .collect();
        let covered = scope.covered(old);
        let firsts = [covered.first().copied(), placed.first().map(|p| p.0)];
        let lasts = [covered.last().map(|&c| c + 1), placed.last().map(|p| p.0 + usize::from(p.1))];
        let start = firsts.into_iter().flatten().min().unwrap_or(0);
        let end = lasts.into_iter().flatten().max().unwrap_or(0).max(start);
        stats.reused = old.len() - (end - start);
        let old: Vec<FileRec> = self.data.files.drain(start..end).collect();
        let mut covered = covered.into_iter().peekable();
        let mut entries = listed.iter().zip(placed).peekable();
        let mut files = Vec::with_capacity(old.len() + listed.len());
        let mut todo = Vec::new();
        for (place, rec) in (start..).zip(old) {
            // The listed files before this record that it is not.
            while let Some((entry, _)) = entries.next_if(|(_, (at, same))| *at == place && !same) {
                todo.push((files.len(), entry));
                files.push(None);
            }
            let in_scope = covered.next_if_eq(&place).is_some();
            match entries.next_if(|(_, (at, same))| *at == place && *same) {
                Some((entry, _)) if same_stamp(&rec, entry) => {
                    stats.reused += 1;
                    files.push(Some((rec, false)));
                }
                // Read again: a tombstone for the old record.
                Some((entry, _)) => {
                    change.gone.push((place as u32, rec.parts));
                    change.removed.push(rec.path);
                    todo.push((files.len(), entry));
                    files.push(None);
                }
                // A record of the scope no listing holds is gone.
                None if in_scope => {
                    stats.removed += 1;
                    change.gone.push((place as u32, rec.parts));
                    change.removed.push(rec.path);
                }
                None => {
                    stats.reused += 1;
                    files.push(Some((rec, false)));
                }
            }
        }
        for (entry, _) in entries {
            todo.push((files.len(), entry));
            files.push(None);
        }
        let listed = Listed { files, todo, change, stats, started, at: start };
        self.take_in(sandbox, listed).map(Some)
    }
}

/// The folders a partial refresh lists again: one level of each changed path's folder
/// (`shallow`), and the whole of each changed path that the walk lists as a folder (`deep`,
/// decided once the shallow listings are known).
struct Scope {
    shallow: BTreeSet<Utf8PathBuf>,
    deep: BTreeSet<Utf8PathBuf>,
    max_depth: usize,
}

impl Scope {
    /// The scope of `changed`, or `None` when a whole walk is needed.
    fn of(sandbox: &Sandbox, changed: &[&str]) -> Option<Scope> {
        let ignore_files = &sandbox.ignore_settings().ignore_files;
        let max_depth = sandbox.limits().max_walk_depth;
        let mut scope = Scope { shallow: BTreeSet::new(), deep: BTreeSet::new(), max_depth };
        for path in changed {
            let plain =
                !path.is_empty() && path.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
            if !plain {
                return None;
            }
            let path = Utf8Path::new(path);
            let name = path.file_name()?;
            if ignore_files.iter().any(|f| f == name) {
                return None;
            }
            let parent = path.parent()?;
            if parent.components().count() + 1 >= max_depth {
                return None;
            }
            scope.shallow.insert(parent.to_owned());
            scope.deep.insert(path.to_owned());
        }
        (scope.shallow.len() <= MAX_PARTIAL_FOLDERS).then_some(scope)
    }

    /// The places of the records of `files` (sorted in the walk's order) that lie in the
    /// scope, ascending: directly in a shallow folder, or anywhere under a deep one. Each
    /// folder's records are found by a binary search, so the others are never looked at
    /// (but for the workspace's own folder, whose files are all the records).
    fn covered(&self, files: &[FileRec]) -> Vec<usize> {
        let mut places = Vec::new();
        for (dir, deep) in
            self.shallow.iter().map(|d| (d, false)).chain(self.deep.iter().map(|d| (d, true)))
        {
            let (start, under) = under(files, dir);
            let skip = if dir.as_str().is_empty() { 0 } else { dir.as_str().len() + 1 };
            for (k, rec) in under.iter().enumerate() {
                // The record of the folder's own path (a file it replaced) is its parent's.
                let Some(rest) = rec.path.get(skip..).filter(|r| !r.is_empty()) else { continue };
                if deep || !rest.contains('/') {
                    places.push(start + k);
                }
            }
        }
        places.sort_unstable();
        places.dedup();
        places
    }

    /// The files the walk lists in the scope, sorted by path; `None` when a listing could
    /// differ from a whole walk's.
    fn list(&self, sandbox: &Sandbox) -> Result<Option<Vec<WalkEntry>>> {
        let mut levels = BTreeMap::new();
        let mut files = Vec::new();
        for dir in &self.shallow {
            let Some(listed) = level(&mut levels, sandbox, dir)? else { return Ok(None) };
            if listed && let Some(Level::Listed { files: here, .. }) = levels.get_mut(dir) {
                files.append(here);
            }
        }
        for dir in &self.deep {
            let parent = dir.parent().unwrap_or(Utf8Path::new(""));
            let listed = matches!(levels.get(parent), Some(Level::Listed { dirs, .. })
                if dirs.contains(dir));
            if !listed {
                continue;
            }
            let depth = self.max_depth - dir.components().count();
            let Some(walk) = list(sandbox, dir, depth)? else { return Ok(None) };
            files.extend(walk.entries.into_iter().filter(|e| e.kind == FileKind::File));
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.dedup_by(|a, b| a.path == b.path);
        Ok(Some(files))
    }
}

/// Where the records under the folder `dir` start in `files` (sorted in the walk's order), and
/// those records: the paths under a folder are one run of that order. The record of `dir`'s
/// own path, if any, is among them.
fn under<'a>(files: &'a [FileRec], dir: &Utf8Path) -> (usize, &'a [FileRec]) {
    let start = files.partition_point(|r| Utf8Path::new(&r.path) < dir);
    let rest = &files[start..];
    let len = rest.partition_point(|r| Utf8Path::new(&r.path).starts_with(dir));
    (start, &rest[..len])
}

/// One level of a folder, as a whole walk sees it.
enum Level {
    /// The whole walk does not list the folder (or it is gone).
    Unlisted,
    /// The folder's files (taken once) and the folders it lists.
    Listed { files: Vec<WalkEntry>, dirs: BTreeSet<Utf8PathBuf> },
}

/// Whether a whole walk lists the folder `dir` (the workspace's own folder always), its
/// level and its ancestors' kept in `levels`; `None` when a listing met a link or a limit.
fn level(
    levels: &mut BTreeMap<Utf8PathBuf, Level>,
    sandbox: &Sandbox,
    dir: &Utf8Path,
) -> Result<Option<bool>> {
    if let Some(known) = levels.get(dir) {
        return Ok(Some(matches!(known, Level::Listed { .. })));
    }
    let listed = match dir.parent() {
        None => true,
        Some(parent) => {
            let Some(up) = level(levels, sandbox, parent)? else { return Ok(None) };
            up && matches!(levels.get(parent), Some(Level::Listed { dirs, .. }) if dirs.contains(dir))
        }
    };
    let level = if listed {
        let Some(walk) = list(sandbox, dir, 1)? else { return Ok(None) };
        let (dirs, files): (Vec<WalkEntry>, Vec<WalkEntry>) =
            walk.entries.into_iter().partition(|e| e.kind == FileKind::Dir);
        Level::Listed { files, dirs: dirs.into_iter().map(|e| e.path).collect() }
    } else {
        Level::Unlisted
    };
    levels.insert(dir.to_owned(), level);
    Ok(Some(listed))
}

/// The walk of the workspace's folder `dir` to `depth` levels: empty when the folder is gone,
/// `None` when it met a link or a limit (a whole walk decides then).
fn list(sandbox: &Sandbox, dir: &Utf8Path, depth: usize) -> Result<Option<Walk>> {
    let found = match dir.as_str() {
        "" => Ok(sandbox.workspace()),
        path => sandbox.resolve_in_workspace(path),
    };
    let location = match found {
        // A path that leads elsewhere (through a link) is walked under another name.
        Ok(location) if location.path() == dir => location,
        Ok(_) => return Ok(None),
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(Some(Walk::default())),
        Err(_) => return Ok(None),
    };
    let options = WalkOptions::of(sandbox).max_depth(depth).max_entries(usize::MAX);
    let walk = match sandbox.walk_with(&location, options) {
        Ok(walk) => walk,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(Some(Walk::default())),
        Err(err) if err.kind() == ErrorKind::NotRegular => return Ok(None),
        Err(err) => return Err(Error::fs(err)),
    };
    if walk.truncated || walk.entries.iter().any(|e| e.via_symlink) {
        return Ok(None);
    }
    // The walk of a folder lists paths from the workspace's root, as a whole walk does.
    debug_assert!(walk.entries.iter().all(|e| e.path.starts_with(dir)));
    Ok(Some(walk))
}
