//! [`Sandbox::watch`]: debounced change notifications for every root (feature `watch`), as
//! locations inside the roots.
//!
//! Roots are watched recursively as directories, never file by file, so a file deleted and
//! created again, or saved by writing a temporary file and renaming it over the original,
//! is still reported under its own name.
//! An event outside every root is dropped; one inside is reported as a [`Location`] and no
//! more (nothing is read), so what a caller learns is only that a path changed.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use camino::Utf8PathBuf;
use notify::event::{AccessKind, EventKind, MetadataKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

use crate::error::{Error, ErrorKind, Result};
use crate::location::{Location, RootId};
use crate::sandbox::Sandbox;

/// A running watch of every root of a sandbox; dropping it stops the watch.
pub struct Watcher {
    _watcher: RecommendedWatcher,
    events: mpsc::Receiver<notify::Result<notify::Event>>,
    debounce: Duration,
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
    /// Only changes count: a file opened, read or closed without writing is no change, so the
    /// reads of the caller's own run (and of anyone else's) never wake the watch.
    ///
    /// # Errors
    ///
    /// When the platform's watch cannot be set up on a root (`E_IO`).
    pub fn watch(&self, debounce: Duration) -> Result<Watcher> {
        let (tx, events) = mpsc::channel();
        // The detail names what failed, never the path the platform reports: that may lie
        // outside the roots.
        let handler = move |event: notify::Result<notify::Event>| {
            if event.as_ref().map_or(true, |e| changes(&e.kind)) {
                // The receiver is gone only when the watch was dropped.
                let _ = tx.send(event);
            }
        };
        let (watcher, roots) = self.watch_roots(handler)?;
        Ok(Watcher { _watcher: watcher, events, debounce, roots })
    }

    /// A platform watch of every root, recursive, with `handler` for its changes; the roots
    /// with their paths. Links are not followed: a link to `/` in a root must not watch the
    /// machine.
    pub(crate) fn watch_roots(
        &self,
        handler: impl notify::EventHandler,
    ) -> Result<(RecommendedWatcher, Vec<(RootId, Utf8PathBuf)>)> {
        let config = notify::Config::default().with_follow_symlinks(false);
        let mut watcher =
            RecommendedWatcher::new(handler, config).map_err(|e| watch_error(".", e))?;
        let mut roots = Vec::new();
        for (n, _) in self.roots.iter().enumerate() {
            let root = RootId(n);
            let path = self.root_path(root).to_path_buf();
            watcher
                .watch(path.as_std_path(), RecursiveMode::Recursive)
                .map_err(|e| watch_error(path.as_str(), e))?;
            roots.push((root, path));
        }
        Ok((watcher, roots))
    }
}

/// The error of a watch that could not be set up on `path`.
pub(crate) fn watch_error(path: &str, err: notify::Error) -> Error {
    let why = match err.kind {
        notify::ErrorKind::Io(io) => io.kind().to_string(),
        other => format!("{other:?}").to_lowercase(),
    };
    Error::new(ErrorKind::Io, path).with_detail(format!("cannot watch: {why}"))
}

/// Whether an event says that something changed, not only that it was looked at: opens,
/// reads, closes without a write and access times are left out.
pub(crate) fn changes(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(notify::event::AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        _ => true,
    }
}

impl Watcher {
    /// Waits for the next batch of changes (at most `timeout`, or for ever with `None`) and
    /// returns the locations that changed, sorted and without repeats; `None` on timeout or
    /// when the watch ended. A batch ends when no change came for the debounce time.
    pub fn next(&self, timeout: Option<Duration>) -> Option<Vec<Location>> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let first = match deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    self.events.recv_timeout(left).ok()?
                }
                None => self.events.recv().ok()?,
            };
            let mut batch = vec![first];
            while let Ok(event) = self.events.recv_timeout(self.debounce) {
                batch.push(event);
            }
            let mut changed = Vec::new();
            for event in batch {
                match event {
                    Ok(event) => changed.extend(event.paths.iter().filter_map(|p| self.locate(p))),
                    // A failed watch (an overflowing kernel queue) is a change of everything.
                    Err(_) => {
                        changed.extend(self.roots.iter().map(|(root, _)| Location::root_of(*root)));
                    }
                }
            }
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

    #[test]
    fn reading_is_no_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "x").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b.md"), "y").unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_path_buf()).unwrap();
        let sandbox = Sandbox::builder(root).open(cap_std::ambient_authority()).unwrap();
        let watcher = sandbox.watch(Duration::from_millis(20)).unwrap();
        for _ in 0..3 {
            let a = sandbox.resolve("a.md", None).unwrap();
            sandbox.read_text(&a).unwrap();
            let sub = sandbox.resolve("sub", None).unwrap();
            assert_eq!(sandbox.walk(&sub).unwrap().files().count(), 1);
        }
        assert_eq!(watcher.next(Some(Duration::from_millis(300))), None, "reads woke the watch");
        std::fs::write(dir.path().join("sub/b.md"), "z").unwrap();
        let changed = watcher.next(Some(Duration::from_secs(10))).expect("a write is a change");
        assert!(
            changed.contains(&Location::new(RootId::WORKSPACE, &["sub", "b.md"])),
            "{changed:?}"
        );
    }
}
