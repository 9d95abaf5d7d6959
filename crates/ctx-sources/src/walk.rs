//! Wildcard items, expanded through the sandbox: one walk per distinct folder, within a budget
//! of entries shared by every walk of an index.

use camino::Utf8Path;
use ctx_diagnostics::Code;
use ctx_fs::{COUNT_PAST_LIMIT, FileKind, Location, Sandbox, WalkOptions};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Absolute glob patterns, matched without case as MSBuild does, `*` not crossing `/`.
pub(crate) struct Patterns {
    set: GlobSet,
    /// The place in the patterns given of each glob of `set` (one that does not build is
    /// left out of it).
    places: Vec<usize>,
}

impl Patterns {
    pub(crate) fn new(patterns: &[String]) -> Patterns {
        let mut builder = GlobSetBuilder::new();
        let mut places = Vec::new();
        for (place, pattern) in patterns.iter().enumerate() {
            let glob =
                GlobBuilder::new(pattern).case_insensitive(true).literal_separator(true).build();
            if let Ok(glob) = glob {
                builder.add(glob);
                places.push(place);
            }
        }
        let set = builder.build().unwrap_or_else(|_| GlobSet::empty());
        Patterns { set, places }
    }

    pub(crate) fn matches(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// The places in `patterns` of those that match `path`, into `into` (cleared first).
    pub(crate) fn matching(&self, path: &str, into: &mut Vec<usize>) {
        self.set.matches_into(path, into);
        for place in into.iter_mut() {
            *place = self.places[*place];
        }
    }
}

/// A wildcard pattern split at its first wildcard component: the folder walked (absolute,
/// as written) and the rest, matched against paths relative to it (`/src/a/**/*.c` →
/// `/src/a`, `**/*.c`).
pub(crate) fn split(pattern: &str) -> (String, String) {
    let (folder, rest) = ctx_fs::split_glob(pattern);
    let folder =
        if folder.is_empty() && pattern.starts_with('/') { "/".to_owned() } else { folder };
    (folder, rest)
}

/// Why the folder of wildcard items was not walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unwalked {
    /// No open root holds it (or a link on its way leads out of its root): said the same way
    /// whether or not it exists.
    Outside,
    /// In an open root, it is missing or is a file.
    Missing,
    /// The sandbox refuses it otherwise (a denied name…).
    Refused(Code),
}

/// The files one walk found for the patterns of one folder.
pub(crate) struct Found {
    /// Each file, absolute under the folder as written, with the first pattern that takes it.
    pub(crate) files: Vec<(String, usize)>,
    /// Whether the walk stopped at its share of the budget.
    pub(crate) truncated: bool,
    /// What the walk costs the budget: the folder itself and every entry it looked at.
    pub(crate) spent: usize,
    /// The entries the walk listed (none for a listing of one folder, which has no cap): a
    /// walk that was not truncated is the walk any cap of at least this many would give.
    pub(crate) listed: usize,
    /// Files the walk found that were not matched against its patterns, past
    /// [`MAX_MATCHES`].
    pub(crate) unmatched: usize,
}

/// Most matches of a pattern against an entry one walk makes: a project of a thousand
/// distinct wildcards over one folder of a large tree matches the first files only, with a
/// warning, rather than take seconds on every run (about 0.2 µs a match).
pub(crate) const MAX_MATCHES: usize = 2_000_000;

impl Found {
    /// Whether this walk, made with a larger cap, is the one a cap of `cap` entries makes.
    pub(crate) fn holds_for(&self, cap: usize) -> bool {
        !self.truncated && self.unmatched == 0 && self.listed <= cap
    }
}

/// The patterns of one folder, compiled once for every folder that has the same: the rests
/// after the folder, in the sandbox's glob syntax, matched without case as MSBuild matches
/// them on Windows, where the projects are written (`*.CPP` takes `a.cpp`), `*` not crossing
/// `/`.
pub(crate) struct Rests {
    globs: GlobSet,
    /// For each glob of the set, which rest it is (a rest that does not compile matches
    /// nothing and is not in the set).
    kept: Vec<usize>,
    /// The deepest level a match can be at, `None` with a `**`.
    depth: Option<usize>,
}

impl Rests {
    pub(crate) fn new(rests: &[String]) -> Rests {
        let mut globs = GlobSetBuilder::new();
        let mut kept = Vec::new();
        for (i, rest) in rests.iter().enumerate() {
            let glob =
                GlobBuilder::new(rest).case_insensitive(true).literal_separator(true).build();
            if let Ok(glob) = glob {
                globs.add(glob);
                kept.push(i);
            }
        }
        let globs = globs.build().unwrap_or_else(|_| GlobSet::empty());
        let deep = rests.iter().any(|r| r.contains("**"));
        let depth = rests.iter().map(|r| r.split('/').count()).max().unwrap_or(1);
        Rests { globs, kept, depth: (!deep).then_some(depth) }
    }
}

/// The walks of one index build: every entry a walk lists (folders too), and each walk
/// itself, is taken from one budget, in the order of the items, whatever the order the walks
/// ran in: a walk's cap is its share of what the walks before it left, so the index is the
/// same on every run, however the threads were timed.
pub(crate) struct Walks<'s> {
    sandbox: &'s Sandbox,
    left: usize,
}

impl<'s> Walks<'s> {
    pub(crate) fn new(sandbox: &'s Sandbox, budget: usize) -> Walks<'s> {
        Walks { sandbox, left: budget }
    }

    /// What the walks charged so far left of the budget.
    pub(crate) fn left(&self) -> usize {
        self.left
    }

    /// The cap of a walk made with `left` entries of the budget left: a walk past its limit
    /// goes on counting up to [`COUNT_PAST_LIMIT`] times the limit, so its share is cut to
    /// what the budget can pay for whole.
    pub(crate) fn cap(left: usize) -> usize {
        (left / (COUNT_PAST_LIMIT + 1)).max(1)
    }

    /// Takes what a walk cost from the budget.
    pub(crate) fn charge(&mut self, found: &Found) {
        self.left = self.left.saturating_sub(found.spent);
    }

    /// The files under `folder` matching one of `rests`, minus what that rest's
    /// `exclude[i]` excludes, listed with the sandbox's rules (ignore files, hidden and
    /// denied entries, links that lead out), the walk listing at most `cap` entries; nothing
    /// is charged ([`Walks::charge`]).
    pub(crate) fn expand(
        &self,
        folder: &str,
        rests: &Rests,
        exclude: &[Option<&Patterns>],
        cap: usize,
    ) -> Result<Found, Unwalked> {
        // The folder as written: opening it for the listing or walk resolves it (links
        // followed within the roots), so it is not resolved first as well.
        let location =
            self.sandbox.written_location(folder, None).map_err(|e| unwalked(e.code()))?;
        if rests.depth == Some(1) {
            return self.list(folder, &location, rests, exclude);
        }
        // The files found are stated when the index checks them; the walk needs their names.
        let mut options = WalkOptions::of(self.sandbox).names_only();
        if let Some(depth) = rests.depth {
            options = options.max_depth(depth);
        }
        let walk = self
            .sandbox
            .walk_with(&location, options.max_entries(cap))
            .map_err(|e| unwalked(e.code()))?;
        let base = folder.trim_end_matches('/');
        let mut found = Found {
            files: Vec::new(),
            truncated: walk.truncated,
            spent: 1 + walk.entries.len() + walk.omitted,
            listed: walk.entries.len(),
            unmatched: 0,
        };
        let most = MAX_MATCHES / rests.kept.len().max(1);
        found.unmatched = walk.files().count().saturating_sub(most);
        let mut hits = Vec::new();
        for entry in walk.files().take(most) {
            let Some(relative) = relative(&entry.path, location.path()) else { continue };
            let path = format!("{base}/{relative}");
            rests.globs.matches_into(relative, &mut hits);
            let mut taken = hits.iter().map(|&h| rests.kept[h]);
            if let Some(i) =
                taken.find(|&i| exclude.get(i).copied().flatten().is_none_or(|e| !e.matches(&path)))
            {
                found.files.push((path, i));
            }
        }
        Ok(found)
    }
}

impl Walks<'_> {
    /// The files directly in `folder` matching one of `rests`: one read of its listing, the
    /// names that match then checked one by one (hidden names are left out, as walks leave
    /// them out; ignore files are not read).
    fn list(
        &self,
        folder: &str,
        location: &Location,
        rests: &Rests,
        exclude: &[Option<&Patterns>],
    ) -> Result<Found, Unwalked> {
        let names = self.sandbox.names(location).map_err(|e| unwalked(e.code()))?;
        let base = folder.trim_end_matches('/');
        let mut found = Found {
            files: Vec::new(),
            truncated: false,
            spent: 1 + names.len(),
            listed: 0,
            unmatched: 0,
        };
        let most = MAX_MATCHES / rests.kept.len().max(1);
        found.unmatched = names.len().saturating_sub(most);
        let mut hits = Vec::new();
        for name in names.iter().take(most).filter(|n| !n.starts_with('.')) {
            rests.globs.matches_into(name, &mut hits);
            if hits.is_empty() {
                continue;
            }
            let path = format!("{base}/{name}");
            let mut taken = hits.iter().map(|&h| rests.kept[h]);
            let Some(i) = taken
                .find(|&i| exclude.get(i).copied().flatten().is_none_or(|e| !e.matches(&path)))
            else {
                continue;
            };
            let file = self
                .sandbox
                .resolve(name, Some(location))
                .and_then(|l| self.sandbox.stat(&l))
                .is_ok_and(|stat| stat.kind == FileKind::File);
            if file {
                found.files.push((path, i));
            }
        }
        Ok(found)
    }
}

/// A walked path relative to the walked folder.
fn relative<'p>(path: &'p Utf8Path, folder: &Utf8Path) -> Option<&'p str> {
    path.strip_prefix(folder).ok().map(Utf8Path::as_str).filter(|r| !r.is_empty())
}

fn unwalked(code: Code) -> Unwalked {
    match code {
        Code::Outside => Unwalked::Outside,
        Code::NotFound => Unwalked::Missing,
        code => Unwalked::Refused(code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rests_match_without_case_as_msbuild_does() {
        let rests = Rests::new(&["*.CPP".to_owned(), "Sub/**/*.h".to_owned()]);
        for name in ["a.cpp", "B.Cpp", "sub/x/y.H", "SUB/z.h"] {
            assert!(rests.globs.is_match(name), "{name}");
        }
        for name in ["a.cppx", "dir/a.cpp", "other/z.h"] {
            assert!(!rests.globs.is_match(name), "{name}");
        }
    }
}
