//! Looking paths up in an index (assembly.md §2, rule 5): the maps built once from its files
//! (file name → files, path relative to a source root → files), and the order of the rules.

use ctx_fs::Sandbox;

use crate::index::{Candidate, FileState, Lookup, SourceFile, SourceIndex, Via};
use crate::keys::{Keys, Maps, key_hash};
use crate::paths;

/// Most cells of the edit-distance tables one search for the closest name fills; past it the
/// search stops with the best so far, so that a miss costs the same on any index.
const CLOSEST_BUDGET: usize = 4_000_000;

impl SourceIndex {
    /// Looks `query` up (assembly.md §2, rule 5): a path relative to a source root in the
    /// index, then joined to each source root on disk, then the end of one indexed path,
    /// then a unique file name; a miss names the indexed path whose file name is closest.
    pub fn lookup(&self, query: &str, sandbox: &Sandbox) -> Lookup {
        match self.find(query, sandbox) {
            Lookup::NotFound(_) => Lookup::NotFound(self.closest_to(query)),
            found => found,
        }
    }

    /// The indexed path whose file name is closest to `query`'s, for a miss.
    fn closest_to(&self, query: &str) -> Option<Candidate> {
        let query = query.trim().replace('\\', "/");
        let query = query.trim_start_matches("./");
        if query.is_empty() || paths::is_absolute(query) {
            return None;
        }
        self.closest(paths::file_name(&query.to_ascii_lowercase()))
    }

    /// Looks `query` up as [`SourceIndex::lookup`] does, but a miss is `NotFound(None)`: what
    /// resolving a path needs, at the cost of a few hash lookups, where the closest name costs
    /// comparisons with the indexed names (a document of many misses would pay them for each).
    pub fn find(&self, query: &str, sandbox: &Sandbox) -> Lookup {
        let query = query.trim().replace('\\', "/");
        let query = query.trim_start_matches("./");
        if query.is_empty() || paths::is_absolute(query) {
            return Lookup::NotFound(None);
        }
        let lower = query.to_ascii_lowercase();
        let relative: Vec<u32> = self
            .maps()
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
            _ => return Lookup::Ambiguous(joined.iter().map(|p| self.candidate(p)).collect()),
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
            _ => Lookup::Ambiguous(left.iter().map(|f| self.candidate(&f.path)).collect()),
        })
    }

    /// Whether the index lists `path`.
    fn holds(&self, path: &str) -> bool {
        self.named(paths::file_name(path)).any(|i| self.files[i as usize].path == path)
    }

    /// The files whose name is `name`, without case.
    pub(crate) fn named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = u32> + 's {
        self.maps().by_name.get(name).filter(move |&i| {
            paths::file_name(&self.files[i as usize].path).eq_ignore_ascii_case(name)
        })
    }

    /// The path of file `i` relative to its source root, if it has one.
    pub(crate) fn relative(&self, i: u32) -> Option<&str> {
        let path = &self.files[i as usize].path;
        let root = self.roots.iter().find(|r| paths::within(path, r))?;
        Some(paths::relative_to(path, root))
    }

    /// A path as candidates show it: relative to its source root (`App/a.h in /src`), to
    /// the workspace, or whole.
    pub fn shown(&self, path: &str) -> String {
        self.candidate(path).to_string()
    }

    /// The absolute `path` with the root it lies in (the workspace, else a source root) and
    /// its path relative to that root.
    pub fn candidate(&self, path: &str) -> Candidate {
        if paths::within(path, &self.workspace) {
            let relative = paths::relative_to(path, &self.workspace);
            return Candidate {
                in_workspace: true,
                ..Candidate::new(path, relative, &self.workspace)
            };
        }
        match self.roots.iter().find(|r| paths::within(path, r)) {
            Some(root) => Candidate::new(path, paths::relative_to(path, root), root),
            None => Candidate::new(path, path.trim_start_matches('/'), "/"),
        }
    }

    /// The indexed path whose file name is closest to `name`, if one is close.
    /// Names whose length differs by more than the distance allowed are not compared, and
    /// the comparisons stop at [`CLOSEST_BUDGET`] cells.
    fn closest(&self, name: &str) -> Option<Candidate> {
        let allowed = (name.len() / 3).max(1);
        let chars = name.chars().count();
        let mut budget = CLOSEST_BUDGET;
        let mut best: Option<(usize, usize, usize)> = None;
        for (i, f) in self.files.iter().enumerate() {
            let other = paths::file_name(&f.path);
            let other_chars = other.chars().count();
            if other_chars.abs_diff(chars) > allowed {
                continue;
            }
            let cells = (chars + 1) * (other_chars + 1);
            if cells > budget {
                break;
            }
            budget -= cells;
            let d = strsim::levenshtein(&other.to_ascii_lowercase(), name);
            if best.is_none_or(|(bd, bl, _)| (d, f.path.len()) < (bd, bl)) {
                best = Some((d, f.path.len(), i));
            }
        }
        let (distance, _, i) = best?;
        (distance <= allowed).then(|| self.candidate(&self.files[i].path))
    }

    /// Forgets the lookup maps, for the files have changed: the next lookup builds them.
    pub(crate) fn forget_maps(&mut self) {
        self.maps = std::sync::OnceLock::new();
    }

    /// The lookup maps, built on first use.
    fn maps(&self) -> &Maps {
        self.maps.get_or_init(|| {
            let names = (0..self.files.len() as u32)
                .map(|i| (key_hash(paths::file_name(&self.files[i as usize].path)), i));
            let relative = (0..self.files.len() as u32)
                .filter_map(|i| self.relative(i).map(|rel| (key_hash(rel), i)));
            Maps { by_name: Keys::new(names.collect()), by_path: Keys::new(relative.collect()) }
        })
    }
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
