//! Completions for a mention being typed (`src/ag`, `@"my f`, `@[docs/x`): ranked fuzzy
//! matches over the files and directories of every root, ignore and deny rules applied,
//! each with the mention that names it.

use std::cmp::Reverse;

use ctx_fs::{FileKind, Location, RootId, Sandbox, WalkEntry, WalkOptions};
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

impl Context {
    /// The `limit` best completions (0: all) of a partly typed mention, best first.
    ///
    /// The top level of each root is listed first; its directories are then walked on as
    /// many threads as there are cores. A literal prefix of a path scores above any fuzzy
    /// match.
    ///
    /// # Errors
    ///
    /// When a root cannot be walked.
    pub fn complete(&self, prefix: &str, limit: usize) -> Result<Vec<Completion>, Error> {
        let query = ctx_syntax::typed_path(prefix);
        let mut found = rank(self.sandbox(), &query).map_err(|e| Error::from(ErrorKind::Fs(e)))?;
        let key = |c: &Completion| {
            let path = c.path.trim_end_matches('/');
            (Reverse(c.score), path.matches('/').count(), path.len())
        };
        let order =
            |a: &Completion, b: &Completion| key(a).cmp(&key(b)).then_with(|| a.path.cmp(&b.path));
        if limit > 0 && found.len() > limit {
            found.select_nth_unstable_by(limit - 1, order);
            found.truncate(limit);
        }
        found.sort_by(order);
        Ok(found)
    }
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

    /// The completion for a walk entry, shown below `shown`, if it matches.
    fn score(&mut self, shown: &str, entry: &WalkEntry) -> Option<Completion> {
        let dir = entry.kind == FileKind::Dir;
        let mut path = format!("{shown}{}", entry.path);
        if dir {
            path.push('/');
        }
        let score = self.atom.score(Utf32Str::new(&path, &mut self.buf), &mut self.matcher)?;
        // A literal prefix is what the person most likely meant.
        let prefix = !self.lower.is_empty() && path.to_lowercase().starts_with(self.lower);
        let bonus = if prefix { 1000 } else { 0 };
        // A path no mention can name (a control character in a name) is not offered.
        let mention = ctx_syntax::mention_of(&path)?;
        Some(Completion { mention, path, dir, score: u32::from(score) + bonus })
    }
}

/// Walks every root and scores its entries.
fn rank(sandbox: &Sandbox, query: &str) -> ctx_fs::Result<Vec<Completion>> {
    let atom = Atom::new(query, CaseMatching::Smart, Normalization::Smart, AtomKind::Fuzzy, false);
    let lower = query.to_lowercase();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let top_level = WalkOptions::of(sandbox).max_depth(1);
    let below = WalkOptions::of(sandbox).max_entries(MAX_ENTRIES);
    let mut scorer = Scorer::new(&atom, &lower);
    let mut found = Vec::new();
    for root in sandbox.roots() {
        let shown = if root == RootId::WORKSPACE {
            String::new()
        } else {
            format!("{}/", sandbox.root_path(root).as_str().trim_end_matches('/'))
        };
        let location = Location::root_of(root);
        let top = sandbox.walk_with(&location, top_level)?;
        let dirs: Vec<&WalkEntry> =
            top.entries.iter().filter(|e| e.kind == FileKind::Dir).collect();
        // A directory reached through a link is walked under its target's name, so a tree
        // with one at the top is walked whole, as one walk names it.
        let linked = dirs.iter().any(|e| e.location.path() != e.path.as_path());
        if linked || threads == 1 {
            let walk = sandbox.walk_with(&location, below)?;
            found.extend(walk.entries.iter().filter_map(|e| scorer.score(&shown, e)));
            continue;
        }
        found.extend(top.entries.iter().filter_map(|e| scorer.score(&shown, e)));
        let (atom, lower, shown, dirs) = (&atom, &lower, &shown, &dirs);
        let parts = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    scope.spawn(move || -> ctx_fs::Result<Vec<Completion>> {
                        let mut scorer = Scorer::new(atom, lower);
                        let mut out = Vec::new();
                        for dir in dirs.iter().skip(t).step_by(threads) {
                            let walk = sandbox.walk_with(&dir.location, below)?;
                            out.extend(walk.entries.iter().filter_map(|e| scorer.score(shown, e)));
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
