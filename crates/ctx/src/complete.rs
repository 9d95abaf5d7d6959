//! Completions for a mention being typed (`src/ag`, `@"my f`, `@[docs/x`): ranked fuzzy
//! matches over the files and directories of every root, ignore and deny rules applied,
//! each with the mention that names it.

use std::cmp::Reverse;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ctx_fs::{Code, FileKind, Location, RootId, Sandbox, WalkEntry, WalkOptions};
use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use crate::{Context, Error, ErrorKind};

/// Most entries one completion walks below a top-level directory.
const MAX_ENTRIES: usize = 5_000_000;

/// One completion.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Completion {
    /// What to insert: the mention that names the path (`@src/agent.rs`, `@"my notes.md"`).
    pub mention: String,
    /// The path, relative to the workspace root or prefixed with its extra root; a directory
    /// ends with `/`.
    pub path: String,
    /// Whether it is a directory.
    pub dir: bool,
    /// The match score; higher is better.
    pub score: u32,
}

/// The paths of every root, walked once and kept for the completions that follow while they
/// are recent enough (an editor asks on every keystroke).
#[derive(Debug, Default)]
pub(crate) struct PathCache {
    walked: Mutex<Option<(Instant, Arc<Vec<Found>>)>>,
}

/// A path of a root, as offered: relative to the workspace or prefixed with its root.
#[derive(Debug)]
struct Found {
    path: String,
    dir: bool,
}

impl Context {
    /// The `limit` best completions (0: all) of a partly typed mention, best first, from a
    /// fresh walk of every root.
    ///
    /// The top level of each root is listed first; its directories are then walked on as
    /// many threads as there are cores. A literal prefix of a path scores above any fuzzy
    /// match.
    ///
    /// # Errors
    ///
    /// When a root cannot be walked.
    pub fn complete(&self, prefix: &str, limit: usize) -> Result<Vec<Completion>, Error> {
        let found = walk_all(self.sandbox()).map_err(|e| Error::from(ErrorKind::Fs(e)))?;
        Ok(rank(&found, prefix, limit))
    }

    /// Completions as [`Context::complete`] gives them, from the paths walked by an earlier
    /// call if that walk is at most `max_age` old (walked again otherwise): what a language
    /// server answers on every keystroke. [`Context::forget_paths`] drops the walk when files
    /// are known to have come or gone.
    ///
    /// # Errors
    ///
    /// When a root cannot be walked.
    pub fn complete_recent(
        &self,
        prefix: &str,
        limit: usize,
        max_age: Duration,
    ) -> Result<Vec<Completion>, Error> {
        let mut walked = self.paths().walked.lock().unwrap_or_else(|e| e.into_inner());
        let found = match &*walked {
            Some((at, found)) if at.elapsed() <= max_age => found.clone(),
            _ => {
                let found =
                    Arc::new(walk_all(self.sandbox()).map_err(|e| Error::from(ErrorKind::Fs(e)))?);
                *walked = Some((Instant::now(), found.clone()));
                found
            }
        };
        drop(walked);
        Ok(rank(&found, prefix, limit))
    }

    /// Forgets the paths kept for [`Context::complete_recent`].
    pub fn forget_paths(&self) {
        *self.paths().walked.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Scores every path against what was typed and keeps the `limit` best (0: all), best first.
fn rank(found: &[Found], prefix: &str, limit: usize) -> Vec<Completion> {
    // A backslash left after the mention's escapes is a separator, as in every path.
    let query = ctx_syntax::typed_path(prefix).replace('\\', "/");
    let atom = Atom::new(&query, CaseMatching::Smart, Normalization::Smart, AtomKind::Fuzzy, false);
    let lower = query.to_lowercase();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let chunk = found.len().div_ceil(threads).max(1);
    let mut scored: Vec<Completion> = std::thread::scope(|scope| {
        let handles: Vec<_> = found
            .chunks(chunk)
            .map(|part| {
                let (atom, lower) = (&atom, &lower);
                scope.spawn(move || {
                    let mut scorer = Scorer::new(atom, lower);
                    part.iter().filter_map(|f| scorer.score(f)).collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let key = |c: &Completion| {
        let path = c.path.trim_end_matches('/');
        (Reverse(c.score), path.matches('/').count(), path.len())
    };
    let order =
        |a: &Completion, b: &Completion| key(a).cmp(&key(b)).then_with(|| a.path.cmp(&b.path));
    if limit > 0 && scored.len() > limit {
        scored.select_nth_unstable_by(limit - 1, order);
        scored.truncate(limit);
    }
    scored.sort_by(order);
    scored
}

/// Scores paths against the query.
struct Scorer<'a> {
    atom: &'a Atom,
    lower: &'a str,
    matcher: Matcher,
    buf: Vec<char>,
}

impl<'a> Scorer<'a> {
    fn new(atom: &'a Atom, lower: &'a str) -> Scorer<'a> {
        Scorer {
            atom,
            lower,
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
            buf: Vec::new(),
        }
    }

    /// The completion for a path, if it matches.
    fn score(&mut self, found: &Found) -> Option<Completion> {
        let path = &found.path;
        let score = self.atom.score(Utf32Str::new(path, &mut self.buf), &mut self.matcher)?;
        // A literal prefix is what the person most likely meant.
        let prefix = !self.lower.is_empty() && path.to_lowercase().starts_with(self.lower);
        let bonus = if prefix { 1000 } else { 0 };
        // A path no mention can name (a control character in a name) is not offered.
        let mention = ctx_syntax::mention_of(path)?;
        Some(Completion {
            mention,
            path: path.clone(),
            dir: found.dir,
            score: u32::from(score) + bonus,
        })
    }
}

/// Lists every path of every root: the top level of a root first, then its directories on
/// as many threads as there are cores.
/// Whether a folder's walk that failed with `err` is one the walk of the whole tree would
/// have passed over: a folder that cannot be read or that went away.
fn skippable(err: &ctx_fs::Error) -> bool {
    matches!(err.code(), Code::Permission | Code::Io | Code::NotFound)
}

fn walk_all(sandbox: &Sandbox) -> ctx_fs::Result<Vec<Found>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    // Completion needs the names and kinds of the entries, not a `stat` of each.
    let top_level = WalkOptions::of(sandbox).max_depth(1).names_only();
    let below = WalkOptions::of(sandbox).max_entries(MAX_ENTRIES).names_only();
    let mut found = Vec::new();
    for root in sandbox.roots() {
        let shown = if root == RootId::WORKSPACE {
            String::new()
        } else {
            format!("{}/", sandbox.root_path(root).as_str().trim_end_matches('/'))
        };
        let listed = |e: &WalkEntry| {
            let dir = e.kind == FileKind::Dir;
            let slash = if dir { "/" } else { "" };
            Found { path: format!("{shown}{}{slash}", e.path), dir }
        };
        let location = Location::root_of(root);
        let top = sandbox.walk_with(&location, top_level)?;
        let dirs: Vec<&WalkEntry> =
            top.entries.iter().filter(|e| e.kind == FileKind::Dir).collect();
        // A directory reached through a link is walked under its target's name, so a tree
        // with one at the top is walked whole, as one walk names it.
        let linked = dirs.iter().any(|e| e.location.path() != e.path.as_path());
        if linked || threads == 1 {
            found.extend(sandbox.walk_with(&location, below)?.entries.iter().map(listed));
            continue;
        }
        found.extend(top.entries.iter().map(listed));
        let (listed, dirs) = (&listed, &dirs);
        let parts = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || -> ctx_fs::Result<Vec<Found>> {
                        let mut out = Vec::new();
                        for dir in dirs.iter().skip(t).step_by(threads) {
                            // A folder that cannot be listed (no permission, gone since) is
                            // passed over, as the walk of the whole tree passes it over.
                            match sandbox.walk_with(&dir.location, below) {
                                Ok(walk) => out.extend(walk.entries.iter().map(listed)),
                                Err(e) if skippable(&e) => {}
                                Err(e) => return Err(e),
                            }
                        }
                        Ok(out)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect::<Vec<_>>()
        });
        for part in parts {
            found.extend(part?);
        }
    }
    Ok(found)
}
