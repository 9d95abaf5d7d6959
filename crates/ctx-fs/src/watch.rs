//! [`Sandbox::watch`]: debounced change notifications for every root (feature `watch`), as
//! locations inside the roots.
//!
//! Roots are watched recursively as directories, never file by file, so a file deleted and
//! created again, or saved by writing a temporary file and renaming it over the original,
//! is still reported under its own name.
//! An event outside every root is dropped; one inside is reported as a [`Location`] and no
//! more (nothing is read), so what a caller learns is only that a path changed.

use std::sync::mpsc;
use std::time::Duration;

use camino::Utf8PathBuf;
use notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};

use crate::error::{Error, ErrorKind, Result};
use crate::location::{Location, RootId};
use crate::sandbox::Sandbox;

/// A running watch of every root of a sandbox; dropping it stops the watch.
pub struct Watcher {
    _debouncer: Debouncer<notify::RecommendedWatcher>,
    events: mpsc::Receiver<DebounceEventResult>,
    /// Each root's canonical path, which the events are reported under.
    roots: Vec<(RootId, Utf8PathBuf)>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").field("roots", &self.roots).finish_non_exhaustive()
    }
}

impl Sandbox {
    /// Starts watching every root; changes are gathered for `debounce` after the last one
    /// before they are reported.
    ///
    /// # Errors
    ///
    /// When the platform's watch cannot be set up on a root (`E_IO`).
    pub fn watch(&self, debounce: Duration) -> Result<Watcher> {
        let (tx, events) = mpsc::channel();
        let fail = |path: &str, err: notify::Error| {
            Error::new(ErrorKind::Io, path).with_detail(format!("cannot watch: {err}"))
        };
        let mut debouncer = new_debouncer(debounce, tx).map_err(|e| fail(".", e))?;
        let mut roots = Vec::new();
        for (n, _) in self.roots.iter().enumerate() {
            let root = RootId(n);
            let path = self.root_path(root).to_path_buf();
            debouncer
                .watcher()
                .watch(path.as_std_path(), RecursiveMode::Recursive)
                .map_err(|e| fail(path.as_str(), e))?;
            roots.push((root, path));
        }
        Ok(Watcher { _debouncer: debouncer, events, roots })
    }
}

impl Watcher {
    /// Waits for the next batch of changes (at most `timeout`, or for ever with `None`) and
    /// returns the locations that changed, sorted and without repeats; `None` on timeout or
    /// when the watch ended.
    pub fn next(&self, timeout: Option<Duration>) -> Option<Vec<Location>> {
        loop {
            let batch = match timeout {
                Some(timeout) => self.events.recv_timeout(timeout).ok()?,
                None => self.events.recv().ok()?,
            };
            // A failed batch (an overflowing kernel queue) is a change of everything.
            let Ok(events) = batch else {
                return Some(self.roots.iter().map(|(root, _)| Location::root_of(*root)).collect());
            };
            let mut changed: Vec<Location> =
                events.iter().filter_map(|event| self.locate(&event.path)).collect();
            changed.sort();
            changed.dedup();
            if !changed.is_empty() {
                return Some(changed);
            }
        }
    }

    fn locate(&self, path: &std::path::Path) -> Option<Location> {
        let path = camino::Utf8Path::from_path(path)?;
        self.roots.iter().find_map(|(root, dir)| {
            let rest = path.strip_prefix(dir).ok()?;
            let comps: Vec<&str> = rest.components().map(|c| c.as_str()).collect();
            Some(Location::new(*root, &comps))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_changes_as_locations() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_path_buf()).unwrap();
        let sandbox = Sandbox::builder(root).open(cap_std::ambient_authority()).unwrap();
        let watcher = sandbox.watch(Duration::from_millis(20)).unwrap();
        std::fs::write(dir.path().join("a.md"), "x").unwrap();
        let wanted = Location::new(RootId::WORKSPACE, &["a.md"]);
        let mut seen = Vec::new();
        while !seen.contains(&wanted) {
            seen.extend(watcher.next(Some(Duration::from_secs(10))).expect("a change"));
        }
        assert!(seen.iter().all(|l| l.root() == RootId::WORKSPACE));
    }
}
