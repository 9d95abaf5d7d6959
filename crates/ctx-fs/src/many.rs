//! Many paths resolved together ([`Sandbox::resolve_many`], [`Sandbox::stat_many`]): grouped
//! by the folder they name an entry of, each folder opened or listed once, every answer the
//! one [`Sandbox::resolve`] (or [`Sandbox::resolve_stat`]) gives for the path alone.

use std::collections::HashMap;

use cap_std::fs_utf8::Dir;

use crate::error::{Error, ErrorKind, Result};
use crate::listing::{Kind, Listing, list_names};
use crate::location::{Location, RootId, Stat};
use crate::path;
use crate::sandbox::Sandbox;

/// A folder of a root, by its components as written.
type Folder = (RootId, Vec<String>);

/// Names asked for by folder, each with its place among the paths asked, in the order the
/// folders were first met.
type ByFolder = Vec<(Folder, Vec<(usize, String)>)>;

impl Sandbox {
    /// Resolves every path of `written` as [`Sandbox::resolve`] resolves each (relative paths
    /// from the workspace), in order, listing each folder that holds several of them once
    /// instead of opening every path from its root: for the files of a project, a listing per
    /// folder instead of an open per file. A name the listing shows as a regular file or a
    /// directory is taken from it, the deny list applied; anything else (a link, a special
    /// file, a name the listing lacks, a folder that cannot be listed) goes through
    /// [`Sandbox::resolve`], so each result is the one `resolve` gives.
    pub fn resolve_many(&self, written: &[&str]) -> Vec<Result<Location>> {
        /// Below this many names in one folder, opening each is cheaper than a listing.
        const MIN_LISTED: usize = 4;
        let (mut out, folders) = self.by_folder(written, |w| self.resolve(w, None));
        let mut buf = Vec::new();
        for ((root, parent), names) in folders {
            let listed = match names.len() >= MIN_LISTED {
                true => self.list(root, parent, &mut buf),
                false => None,
            };
            let kinds: Option<HashMap<&str, Kind>> =
                listed.as_ref().map(|(_, listing)| listing.entries().collect());
            for (i, name) in names {
                let from_listing = listed.as_ref().zip(kinds.as_ref()).and_then(|(l, kinds)| {
                    if !matches!(kinds.get(name.as_str())?, Kind::File | Kind::Dir) {
                        return None;
                    }
                    Some(self.entry_in(root, &l.0, name, written[i]))
                });
                out[i] = Some(from_listing.unwrap_or_else(|| self.resolve(written[i], None)));
            }
        }
        out.into_iter()
            .map(|r| r.unwrap_or_else(|| unreachable!("every path is settled")))
            .collect()
    }

    /// [`Sandbox::resolve_stat`] of every path of `written` (relative paths from the
    /// workspace), in order, each folder that holds several of them opened once and each name
    /// in it looked at with one `fstatat` that does not follow links, instead of a walk from
    /// the root per path. A name that is a regular file or a directory is taken so, the deny
    /// list applied to the folder's canonical path and the name; anything else (a link, a
    /// special file, a missing name, a folder that cannot be opened) goes through
    /// [`Sandbox::resolve_stat`], so each result is the one `resolve_stat` gives.
    pub fn stat_many(&self, written: &[&str]) -> Vec<Result<(Location, Stat)>> {
        let (mut out, folders) = self.by_folder(written, |w| self.resolve_stat(w, None));
        for ((root, parent), names) in folders {
            let dir = (names.len() > 1).then(|| self.traverse::<Dir>(root, parent, "").ok());
            for (i, name) in names {
                let direct = dir.as_ref().and_then(Option::as_ref).and_then(|(canonical, dir)| {
                    let md = dir.symlink_metadata(&name).ok()?;
                    if !(md.is_file() || md.is_dir()) {
                        return None;
                    }
                    let location = self.entry_in(root, canonical, name, written[i]);
                    Some(location.map(|l| (l, Stat::from_cap(&md))))
                });
                out[i] = Some(direct.unwrap_or_else(|| self.resolve_stat(written[i], None)));
            }
        }
        out.into_iter()
            .map(|r| r.unwrap_or_else(|| unreachable!("every path is settled")))
            .collect()
    }

    /// The location of `name` in the folder whose canonical components are `canonical`, the
    /// deny list applied to the whole: for an entry a listing or a look from the folder showed
    /// to be a regular file or a directory. The folder was opened by [`Sandbox::traverse`],
    /// which refuses a denied folder, so only the rules of the entry are left to try
    /// ([`DenyList::check_entry`], held to `check` of the whole path by a property test), and
    /// the path is built once, with no string per component.
    fn entry_in(
        &self,
        root: RootId,
        canonical: &[String],
        name: String,
        written: &str,
    ) -> Result<Location> {
        let len = canonical.iter().map(|c| c.len() + 1).sum::<usize>() + name.len();
        let mut path = String::with_capacity(len);
        for comp in canonical {
            path.push_str(comp);
            path.push('/');
        }
        path.push_str(&name);
        let parent = canonical.last().map_or("", String::as_str);
        match self.deny.check_entry(parent, &name, &path) {
            Some(reason) => Err(Error::new(ErrorKind::Denied, written).with_detail(reason)),
            None => Ok(Location { root, path: path.into() }),
        }
    }

    /// The paths of `written` (relative from the workspace) by the folder they name an entry
    /// of, each name with its place in `written`, for [`Sandbox::resolve_many`] and
    /// [`Sandbox::stat_many`]; the answer of a path that names no entry of a folder (a
    /// lexical error, the root itself, a last `..`) is settled at once, by `alone` past the
    /// lexical checks.
    ///
    /// A path written as the path before it up to its last `/`, then a plain name, names an
    /// entry of the same folder: the folder's lexical work is not done again (a project's
    /// files are listed folder by folder). The name is checked as [`path::parse`] checks each
    /// component, and it may not be the last component of a root (which would make the path
    /// a root of its own, as [`Sandbox::lexical`] finds); a property test holds the answers to
    /// `resolve`'s.
    fn by_folder<T>(
        &self,
        written: &[&str],
        alone: impl Fn(&str) -> Result<T>,
    ) -> (Vec<Option<Result<T>>>, ByFolder) {
        let mut out: Vec<Option<Result<T>>> = written.iter().map(|_| None).collect();
        let mut folders = ByFolder::new();
        let mut places: HashMap<Folder, usize> = HashMap::new();
        let root_names: Vec<&str> = self
            .roots
            .iter()
            .flat_map(|r| [r.canonical.last(), r.given.last()])
            .flatten()
            .map(String::as_str)
            .collect();
        // The folder of the last path settled by name: its written prefix (through the `/`)
        // and its place in `folders`.
        let mut last: Option<(&str, usize)> = None;
        for (i, w) in written.iter().enumerate() {
            let same_folder = last.and_then(|(prefix, place)| {
                let name = w.strip_prefix(prefix)?;
                let plain = !matches!(name, "" | "." | "..")
                    && path::check_name(name).is_ok()
                    && w.len() <= path::MAX_PATH_BYTES
                    && !root_names.contains(&name);
                plain.then_some((name, place))
            });
            if let Some((name, place)) = same_folder {
                folders[place].1.push((i, name.to_owned()));
                continue;
            }
            last = None;
            match self.lexical(w, None) {
                Err(e) => out[i] = Some(Err(e)),
                Ok((root, mut comps)) => match comps.pop() {
                    Some(name) if name != ".." => {
                        let place = *places.entry((root, comps)).or_insert_with_key(|key| {
                            folders.push((key.clone(), Vec::new()));
                            folders.len() - 1
                        });
                        // Written as a prefix and this name, with no separator to rewrite.
                        if !w.contains('\\')
                            && let Some(prefix) = w.strip_suffix(name.as_str())
                            && prefix.ends_with('/')
                        {
                            last = Some((prefix, place));
                        }
                        folders[place].1.push((i, name));
                    }
                    _ => out[i] = Some(alone(w)),
                },
            }
        }
        (out, folders)
    }

    /// The canonical components of the folder at `comps` and its listing, with the type of
    /// each entry as the listing gives it (a link not followed; `buf` is kept from one
    /// folder to the next); `None` when it cannot be listed whole.
    fn list(
        &self,
        root: RootId,
        comps: Vec<String>,
        buf: &mut Vec<std::mem::MaybeUninit<u8>>,
    ) -> Option<(Vec<String>, Listing)> {
        let (canonical, dir) = self.traverse::<Dir>(root, comps, "").ok()?;
        let listing = list_names(&dir, buf).ok().filter(|l| l.error.is_none())?;
        // A folder may be listable but not searchable (read permission without execute): its
        // names show, yet nothing in it can be opened, as `resolve` would find.
        if let Some(name) = listing.names().next() {
            dir.symlink_metadata(name).ok()?;
        }
        Some((canonical, listing))
    }
}
