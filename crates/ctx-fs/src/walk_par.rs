//! A walk on every core: the walked directory's own level is listed first, then each of its
//! subdirectories is walked on one of a few threads, and the pieces are put back in the walk's
//! order. The answer is always the serial walk's ([`Sandbox::walk`]): where the pieces could
//! differ from it (a symbolic link followed to a directory, whose cycle check depends on what
//! was walked before it; a limit reached; a subdirectory that fails to open) the serial walk is
//! run instead.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Result;
use crate::location::{FileKind, Location};
use crate::sandbox::Sandbox;
use crate::walk::{COUNT_PAST_LIMIT, SkipReason, Walk, WalkOptions};

/// Most threads a walk uses.
const MAX_THREADS: usize = 8;

impl Sandbox {
    /// Walks like [`Sandbox::walk`], and gives the same answer, with the subdirectories of
    /// `dir` walked on every core.
    pub fn walk_parallel(&self, dir: &Location) -> Result<Walk> {
        let options = WalkOptions::of(self);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS));
        if threads < 2 || options.max_depth < 2 {
            return self.walk_with(dir, options);
        }
        let top = self.walk_with(dir, options.max_depth(1))?;
        let split: Vec<usize> =
            (0..top.entries.len()).filter(|&i| top.entries[i].kind == FileKind::Dir).collect();
        if top.truncated || split.iter().any(|&i| top.entries[i].via_symlink) {
            return self.walk(dir);
        }
        let below = options.max_depth(options.max_depth - 1);
        let parts = self.walk_each(&top, &split, below, threads);
        match join(top, &split, parts, options) {
            Some(walk) => Ok(walk),
            None => self.walk(dir),
        }
    }

    /// Walks the directories `split` of `top`, a few at a time; `None` for one that failed or
    /// was not walked because the walks so far hold more entries than the limit (the serial
    /// walk then answers, so the pieces never hold much more than one walk may).
    fn walk_each(
        &self,
        top: &Walk,
        split: &[usize],
        options: WalkOptions,
        threads: usize,
    ) -> Vec<Option<Walk>> {
        let next = AtomicUsize::new(0);
        let (kept, most) = (AtomicUsize::new(top.entries.len()), options.max_entries);
        let parts: Mutex<Vec<Option<Walk>>> = Mutex::new(vec![None; split.len()]);
        std::thread::scope(|scope| {
            for _ in 0..threads.min(split.len()) {
                scope.spawn(|| {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = split.get(k) else { break };
                        if kept.load(Ordering::Relaxed) > most {
                            break;
                        }
                        let walk = self.walk_with(&top.entries[i].location, options).ok();
                        let n = walk.as_ref().map_or(0, |w| w.entries.len());
                        kept.fetch_add(n, Ordering::Relaxed);
                        if let Ok(mut parts) = parts.lock() {
                            parts[k] = walk;
                        }
                    }
                });
            }
        });
        parts.into_inner().unwrap_or_default()
    }
}

/// The walk of `top` with the walks of its directories `split` put in after each; `None` where
/// the serial walk could have answered otherwise.
fn join(
    mut top: Walk,
    split: &[usize],
    parts: Vec<Option<Walk>>,
    options: WalkOptions,
) -> Option<Walk> {
    let parts: Vec<Walk> = parts.into_iter().collect::<Option<_>>()?;
    let entries: usize = top.entries.len() + parts.iter().map(|p| p.entries.len()).sum::<usize>();
    let looked: usize = top.looked + parts.iter().map(|p| p.looked).sum::<usize>();
    let followed = |p: &Walk| p.entries.iter().any(|e| e.kind == FileKind::Dir && e.via_symlink);
    if entries > options.max_entries
        || looked >= options.max_entries.saturating_mul(COUNT_PAST_LIMIT)
        || parts.iter().any(|p| p.truncated || followed(p))
    {
        return None;
    }
    // The directories walked here were not too deep: their notes of it go.
    let split_paths: std::collections::HashSet<_> =
        split.iter().map(|&i| top.entries[i].path.clone()).collect();
    let mut skipped: Vec<_> = std::mem::take(&mut top.skipped)
        .into_iter()
        .filter(|s| !(s.reason == SkipReason::TooDeep && split_paths.contains(&s.path)))
        .collect();
    let sort = !skipped.is_empty();
    let mut out = Walk { looked, ..Walk::default() };
    out.entries.reserve(entries);
    let mut parts = parts.into_iter();
    let mut next = split.iter().peekable();
    for (i, entry) in top.entries.into_iter().enumerate() {
        out.entries.push(entry);
        if next.next_if(|&&k| k == i).is_some() {
            let part = parts.next()?;
            out.entries.extend(part.entries.into_iter().map(|mut e| {
                e.depth += 1;
                e
            }));
            skipped.extend(part.skipped);
        }
    }
    // The walk's order is that of the paths' components, which each part keeps.
    if sort {
        skipped.sort_by(|a, b| a.path.components().cmp(b.path.components()));
    }
    out.skipped = skipped;
    Some(out)
}
