//! [`Sandbox::watch_synced`]: a watch of every root that can say what changed up to now
//! (feature `watch`, Unix only), for a process that keeps an index current between queries.
//!
//! A platform's watch reports changes late: the kernel queues them and the watch's thread
//! reads them when it can, so a change made just before a question may not have been seen
//! yet. [`SyncWatcher::sync`] closes that gap with a cookie: it writes and removes a file in
//! a folder of the user's own ([`SocketDir`]) watched by the same watch, and waits until that
//! change comes through; a watch delivers its changes in the order they were made (one
//! inotify queue on Linux, one FSEvents stream on macOS), so every change made before the
//! cookie has then been seen.
//! A queue that overflowed (the kernel dropped changes) or too many changes at once give a
//! rescan; a failed watch (a folder that could not be watched) makes every later `sync` an
//! error, for the caller can no longer vouch for what it holds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use camino::Utf8PathBuf;
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

use crate::error::{Error, ErrorKind, Result};
use crate::location::{Location, RootId};
use crate::sandbox::Sandbox;
use crate::socket::SocketDir;

/// Most changes kept between two syncs; past it, the changes are dropped and a rescan asked
/// for, so a burst of changes holds a bounded amount of memory.
pub const MAX_PENDING_CHANGES: usize = 10_000;

/// What changed since the last [`SyncWatcher::sync`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Changes {
    /// The locations that changed, sorted and without repeats (empty when `rescan`).
    pub paths: Vec<Location>,
    /// Whether changes may have been missed (a queue overflowed, too many changes): every
    /// file must be looked at again.
    pub rescan: bool,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && !self.rescan
    }
}

/// What the watch's thread hands over.
enum Note {
    /// Paths that changed, and whether the change may have given the watch a folder to add
    /// (a folder created or moved in).
    Paths(Vec<std::path::PathBuf>, bool),
    Rescan,
    Failed,
}

/// Whether the watch adds a watch for what `kind` reports: a folder created, or anything
/// moved in (the watch adds those after the batch of changes it read them in).
fn adds_watch(kind: &notify::EventKind) -> bool {
    use notify::event::{CreateKind, ModifyKind, RenameMode};
    matches!(
        kind,
        notify::EventKind::Create(CreateKind::Folder | CreateKind::Any | CreateKind::Other)
            | notify::EventKind::Modify(ModifyKind::Name(
                RenameMode::To | RenameMode::Both | RenameMode::Any | RenameMode::Other
            ))
    )
}

/// A running watch of every root, with a cookie folder; dropping it stops the watch.
pub struct SyncWatcher {
    watcher: RecommendedWatcher,
    notes: mpsc::Receiver<Note>,
    wake: Option<mpsc::Receiver<()>>,
    queued: Arc<AtomicUsize>,
    overflow: Arc<AtomicBool>,
    roots: Vec<(RootId, Utf8PathBuf)>,
    cookies: SocketDir,
    next_cookie: u64,
    failed: bool,
    pending: Changes,
    /// The workspace's device and inode when the watch began.
    workspace: Option<(u64, u64)>,
}

impl std::fmt::Debug for SyncWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncWatcher").field("roots", &self.roots).finish_non_exhaustive()
    }
}

/// Wakes a thread when a change may be waiting (see [`SyncWatcher::wake`]).
#[derive(Debug)]
pub struct Wake(mpsc::Receiver<()>);

impl Wake {
    /// Waits at most `timeout` for a change; true when one came (or may have), false on
    /// timeout or when the watch is gone.
    pub fn wait(&self, timeout: Duration) -> bool {
        let woke = self.0.recv_timeout(timeout).is_ok();
        // One wake stands for every change before it.
        while self.0.try_recv().is_ok() {}
        woke
    }
}

impl Sandbox {
    /// Starts watching every root and the folder `cookies`, for [`SyncWatcher::sync`].
    ///
    /// # Errors
    ///
    /// When the platform's watch cannot be set up on a root or on the folder (`E_IO`).
    pub fn watch_synced(&self, cookies: &SocketDir) -> Result<SyncWatcher> {
        let (tx, notes) = mpsc::channel();
        let (wake_tx, wake) = mpsc::sync_channel(1);
        let queued = Arc::new(AtomicUsize::new(0));
        let overflow = Arc::new(AtomicBool::new(false));
        let cookie_dir = cookies.path().file_name().unwrap_or_default().to_owned();
        let handler = {
            let (queued, overflow) = (Arc::clone(&queued), Arc::clone(&overflow));
            move |event: notify::Result<notify::Event>| {
                // A cookie wakes no one: the thread that acts on changes syncs, and its own
                // cookie must not wake it again.
                let cookie_only = event.as_ref().is_ok_and(|e| {
                    !e.paths.is_empty() && e.paths.iter().all(|p| is_cookie(p, &cookie_dir))
                });
                let note = match event {
                    Err(_) => Note::Failed,
                    Ok(e) if e.need_rescan() || e.paths.is_empty() => Note::Rescan,
                    Ok(e) if !crate::watch::changes(&e.kind) => return,
                    Ok(e) => {
                        let adds = adds_watch(&e.kind);
                        Note::Paths(e.paths, adds)
                    }
                };
                // Past the bound, changes are dropped for a rescan: memory stays bounded
                // whoever is slow to sync. A cookie is never dropped (one sync writes one at
                // a time), or the sync waiting for it could not end.
                if queued.fetch_add(1, Ordering::SeqCst) >= MAX_PENDING_CHANGES && !cookie_only {
                    queued.fetch_sub(1, Ordering::SeqCst);
                    overflow.store(true, Ordering::SeqCst);
                } else if tx.send(note).is_err() {
                    return;
                }
                if !cookie_only {
                    let _ = wake_tx.try_send(());
                }
            }
        };
        let (mut watcher, roots) = self.watch_roots(handler)?;
        let dir = cookies.path();
        watcher
            .watch(dir.as_std_path(), RecursiveMode::NonRecursive)
            .map_err(|e| crate::watch::watch_error(dir.as_str(), e))?;
        Ok(SyncWatcher {
            watcher,
            notes,
            wake: Some(wake),
            queued,
            overflow,
            roots,
            cookies: cookies.clone(),
            next_cookie: 0,
            failed: false,
            pending: Changes::default(),
            workspace: identity(self.root_path(RootId::WORKSPACE).as_std_path()),
        })
    }
}

/// A folder's device and inode, by its path.
fn identity(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(path).ok()?;
    meta.is_dir().then(|| (meta.dev(), meta.ino()))
}

/// Whether `path` is a cookie of the folder named `dir`.
fn is_cookie(path: &std::path::Path, dir: &str) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let parent = path.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str());
    name.starts_with("cookie-") && parent == Some(dir)
}

impl SyncWatcher {
    /// The waker of a thread that acts on changes as they come (taken once).
    pub fn wake(&mut self) -> Option<Wake> {
        self.wake.take().map(Wake)
    }

    /// Every change made before this call and not reported by an earlier one: writes a
    /// cookie and gathers the changes until its own comes through (at most `timeout`).
    ///
    /// # Errors
    ///
    /// `E_IO` when the watch failed (now or before: a failed watch stays failed), when the
    /// cookie cannot be written, or when it did not come through in time; the caller cannot
    /// then tell what changed.
    pub fn sync(&mut self, timeout: Duration) -> Result<Changes> {
        if self.failed {
            return Err(self.failure());
        }
        let deadline = Instant::now() + timeout;
        // A folder created or moved in is watched only once the watch's thread has handled
        // every change it read with the one that reported it, the cookie's among them: a file
        // made in the folder before then gives no change. So after such a change, a call into
        // that thread (watching the cookie folder again, which changes nothing) waits until it
        // has added the folder; whoever lists the folder after this sync sees what was made in
        // it before, and the watch reports what is made after.
        if self.round(deadline)? {
            let dir = self.cookies.path().as_std_path().to_owned();
            if self.watcher.watch(&dir, RecursiveMode::NonRecursive).is_err() {
                self.failed = true;
                return Err(self.failure());
            }
        }
        if self.overflow.swap(false, Ordering::SeqCst) {
            self.pending.rescan = true;
        }
        let mut changes = std::mem::take(&mut self.pending);
        if changes.rescan {
            changes.paths.clear();
        }
        changes.paths.sort();
        changes.paths.dedup();
        Ok(changes)
    }

    /// Writes a cookie and takes the changes in until it comes through (by `deadline`);
    /// true when one of them may have given the watch a folder to add.
    fn round(&mut self, deadline: Instant) -> Result<bool> {
        self.next_cookie += 1;
        let cookie = format!("cookie-{}-{}", std::process::id(), self.next_cookie);
        self.cookies.touch(&cookie)?;
        let mut added = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let note = match self.notes.recv_timeout(left) {
                Ok(note) => note,
                Err(_) => {
                    return Err(Error::new(ErrorKind::Io, self.cookies.path().as_str())
                        .with_detail("the watch did not report its own change in time"));
                }
            };
            self.queued.fetch_sub(1, Ordering::SeqCst);
            let seen = match note {
                Note::Failed => {
                    self.failed = true;
                    return Err(self.failure());
                }
                Note::Rescan => {
                    self.pending.rescan = true;
                    false
                }
                Note::Paths(paths, adds) => {
                    let seen = self.take(&paths, &cookie);
                    added |= adds && !seen;
                    seen
                }
            };
            if seen {
                return Ok(added);
            }
        }
    }

    /// Takes the changed paths in; true when one of them is the cookie.
    fn take(&mut self, paths: &[std::path::PathBuf], cookie: &str) -> bool {
        let mut seen = false;
        for path in paths {
            if path.file_name().is_some_and(|n| n == cookie) {
                seen = true;
                continue;
            }
            let Some(path) = camino::Utf8Path::from_path(path) else {
                // A name that is not UTF-8 is not in the index: only a rescan tells.
                self.pending.rescan = true;
                continue;
            };
            let found = self.roots.iter().find_map(|(root, dir)| {
                let rest = path.strip_prefix(dir).ok()?;
                let comps: Vec<&str> = rest.components().map(|c| c.as_str()).collect();
                Some(Location::new(*root, &comps))
            });
            if let Some(location) = found {
                if self.pending.paths.len() >= MAX_PENDING_CHANGES {
                    self.pending.rescan = true;
                    self.pending.paths.clear();
                } else if !self.pending.rescan {
                    self.pending.paths.push(location);
                }
            }
        }
        seen
    }

    /// Whether the watch failed: every later [`SyncWatcher::sync`] is an error.
    pub fn has_failed(&self) -> bool {
        self.failed
    }

    /// Whether the workspace's folder is gone: removed, or another folder in its place.
    pub fn workspace_gone(&self) -> bool {
        let path = self.roots.first().map(|(_, p)| p.as_std_path());
        path.map(identity) != Some(self.workspace) || self.workspace.is_none()
    }

    fn failure(&self) -> Error {
        Error::new(ErrorKind::Io, ".").with_detail("the watch failed: changes may have been missed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Sandbox, SyncWatcher) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("ws")).unwrap();
        let root = Utf8PathBuf::try_from(tmp.path().join("ws")).unwrap();
        let sandbox = Sandbox::builder(root).open(cap_std::ambient_authority()).unwrap();
        let cookies = Utf8PathBuf::try_from(tmp.path().join("cookies")).unwrap();
        let cookies = SocketDir::open(cookies, cap_std::ambient_authority()).unwrap();
        let watcher = sandbox.watch_synced(&cookies).unwrap();
        (tmp, sandbox, watcher)
    }

    const WAIT: Duration = Duration::from_secs(20);

    #[test]
    fn a_sync_sees_every_change_made_before_it() {
        let (tmp, _sandbox, mut watcher) = setup();
        assert!(watcher.sync(WAIT).unwrap().is_empty(), "nothing changed yet");
        for i in 0..20 {
            std::fs::write(tmp.path().join(format!("ws/f{i}.rs")), "x").unwrap();
            // Asked right after the write: the change must be there, never a later sync's.
            let changes = watcher.sync(WAIT).unwrap();
            let want = Location::new(RootId::WORKSPACE, &[format!("f{i}.rs").as_str()]);
            assert!(changes.rescan || changes.paths.contains(&want), "{i}: {changes:?}");
        }
        assert!(watcher.sync(WAIT).unwrap().is_empty(), "the cookies are no change");
    }

    #[test]
    fn files_in_a_new_folder_are_seen() {
        // The race: the watch adds a new folder only after the batch of changes that
        // reported it, which may hold the sync's cookie too; a file written in the folder
        // right after that sync must still be seen by the next one.
        let (tmp, _sandbox, mut watcher) = setup();
        for i in 0..20 {
            let name = format!("new{i}");
            std::fs::create_dir(tmp.path().join("ws").join(&name)).unwrap();
            let changes = watcher.sync(WAIT).unwrap();
            assert!(!changes.is_empty());
            std::fs::write(tmp.path().join("ws").join(&name).join("a.rs"), "x").unwrap();
            let changes = watcher.sync(WAIT).unwrap();
            let want = Location::new(RootId::WORKSPACE, &[name.as_str(), "a.rs"]);
            assert!(changes.rescan || changes.paths.contains(&want), "{i}: {changes:?}");
        }
    }

    #[test]
    fn a_flood_of_changes_asks_for_a_rescan_and_holds_no_more_than_the_bound() {
        let (tmp, _sandbox, mut watcher) = setup();
        std::fs::create_dir(tmp.path().join("ws/flood")).unwrap();
        // Each file gives several changes (created, written, closed): past the bound.
        for i in 0..MAX_PENDING_CHANGES / 2 {
            std::fs::write(tmp.path().join(format!("ws/flood/f{i}")), "x").unwrap();
        }
        assert!(watcher.queued.load(Ordering::SeqCst) <= MAX_PENDING_CHANGES);
        let changes = watcher.sync(WAIT).unwrap();
        assert!(changes.rescan, "{} paths and no rescan", changes.paths.len());
        assert!(changes.paths.is_empty());
        assert!(watcher.sync(WAIT).unwrap().is_empty(), "the flood is over");
    }

    #[test]
    fn a_workspace_removed_is_gone() {
        let (tmp, _sandbox, watcher) = setup();
        assert!(!watcher.workspace_gone());
        std::fs::rename(tmp.path().join("ws"), tmp.path().join("moved")).unwrap();
        assert!(watcher.workspace_gone());
        std::fs::create_dir(tmp.path().join("ws")).unwrap();
        assert!(watcher.workspace_gone(), "another folder in its place");
    }

    #[test]
    fn a_wake_comes_with_a_change() {
        let (tmp, _sandbox, mut watcher) = setup();
        let wake = watcher.wake().unwrap();
        assert!(watcher.wake().is_none(), "taken once");
        assert!(!wake.wait(Duration::from_millis(50)));
        std::fs::write(tmp.path().join("ws/a.rs"), "x").unwrap();
        assert!(wake.wait(WAIT));
    }
}
