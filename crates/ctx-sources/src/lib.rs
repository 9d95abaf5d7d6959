//! Out-of-source builds: the real sources of a build folder, found through its solution
//! (`.sln`, `.slnx` with `.vcxproj`, `.vcxproj.filters`, `.vcxitems`, `.csproj`) or its
//! `compile_commands.json`.
//!
//! A [`SourceIndex`] is read from the project files through a [`ctx_fs::Sandbox`] (this
//! crate touches no file itself), names the folders the sources share
//! ([`SourceIndex::source_roots`]), which the caller opens as read-only roots of its sandbox,
//! and then answers lookups by path and by file name ([`SourceIndex::lookup`]), the last rule
//! of path resolution (assembly.md §2).
//!
//! The index and its roots come only from project files: never from a path in a prompt or a
//! rule. A project file that names `/etc/passwd` or `~/.ssh/id_rsa` gets that one path
//! indexed; no root is ever widened to reach it, and the sandbox still refuses it.
//!
//! The order of work: [`SourceIndex::load`] through a sandbox of the workspace; a sandbox
//! with each of [`SourceIndex::source_roots`] added as a [`ctx_fs::RootKind::Source`] root;
//! [`SourceIndex::verify`] through it; then [`SourceIndex::lookup`] for each path that the
//! earlier rules of assembly.md §2 did not resolve. The facade's `ContextBuilder::solution`
//! does all of it.

mod bounds;
mod cache;
mod compdb;
mod files;
mod index;
mod items;
mod keys;
mod load;
mod lookup;
mod merge;
mod msbuild;
mod paths;
mod roots;
mod verify;
mod walk;
mod warning;

use std::fmt;

use ctx_diagnostics::Code;
use ctx_fs::{FileKind, Location, Sandbox};

pub use index::{
    Candidate, Corrected, DEFAULT_MAX_FILES, DEFAULT_MAX_PROJECTS, FileState, Lookup, Missing,
    Options, Project, SourceFile, SourceIndex, Summary, Via,
};
pub use roots::MAX_SOURCE_ROOTS;
pub use warning::{MAX_WARNINGS, Warning};

/// Why an index could not be built.
#[derive(Debug)]
pub struct Error {
    code: Code,
    message: String,
}

impl Error {
    pub(crate) fn fs(err: ctx_fs::Error) -> Error {
        Error { code: err.code(), message: err.to_string() }
    }

    pub(crate) fn config(path: &str, why: String) -> Error {
        Error { code: Code::Config, message: format!("cannot read {path}: {why}") }
    }

    /// The stable code: `E_NOT_FOUND`, `E_DENIED`… from the sandbox, `E_CONFIG` for a file
    /// that does not parse.
    pub fn code(&self) -> Code {
        self.code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The name of a compilation database.
const DATABASE: &str = "compile_commands.json";

/// What [`detect`] found in the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detected {
    /// Nothing to index.
    None,
    /// One solution or database, as a path relative to the workspace.
    One(String),
    /// One solution and one `compile_commands.json` side by side (the solution first): both
    /// are read into one index ([`SourceIndex::load_all`]).
    Both(String, String),
    /// Several, which one to use is for the user to say (`--sln`, `--compile-commands`).
    Several(Vec<String>),
}

/// Looks for a single `*.sln`, `*.slnx` or `compile_commands.json` in the workspace root,
/// else in its `build/` folder; a solution with a `compile_commands.json` beside it is
/// [`Detected::Both`].
pub fn detect(sandbox: &Sandbox) -> Detected {
    for dir in ["", "build"] {
        let location = if dir.is_empty() {
            sandbox.workspace()
        } else {
            match sandbox.resolve(dir, None) {
                Ok(location) => location,
                Err(_) => continue,
            }
        };
        let found = candidates(sandbox, &location);
        match found.len() {
            0 => continue,
            1 => return Detected::One(found.into_iter().next().unwrap_or_default()),
            2 => {
                let database = |p: &String| paths::file_name(p).eq_ignore_ascii_case(DATABASE);
                return match (found.iter().position(database), found) {
                    (Some(i), mut found) => {
                        let database = found.remove(i);
                        Detected::Both(found.remove(0), database)
                    }
                    (None, found) => Detected::Several(found),
                };
            }
            _ => return Detected::Several(found),
        }
    }
    Detected::None
}

/// The solutions and compilation databases in `dir`: its listing's names, then only the
/// matching ones resolved and checked to be files, so that looking costs one read of the
/// listing (every command looks). Ignore rules do not apply: a generated
/// `compile_commands.json` is usually git-ignored.
fn candidates(sandbox: &Sandbox, dir: &Location) -> Vec<String> {
    let Ok(names) = sandbox.names(dir) else {
        return Vec::new();
    };
    names
        .iter()
        .filter(|name| {
            let name = name.to_ascii_lowercase();
            name.ends_with(".sln") || name.ends_with(".slnx") || name == DATABASE
        })
        .filter_map(|name| {
            let location = sandbox.resolve(name, Some(dir)).ok()?;
            let stat = sandbox.stat(&location).ok()?;
            (stat.kind == FileKind::File).then(|| location.path().to_string())
        })
        .collect()
}

/// `f` of each item, in order, the items shared among the cores when there are at least
/// `min_share` for each (fewer stay on the calling thread). Each thread, the calling one
/// included, takes the next item not yet taken, so that a thread the machine runs less
/// (other processes share the cores) does less of the work rather than hold up the rest: for
/// work whose results do not depend on which thread does what first.
pub(crate) fn par_map<T: Sync, R: Send>(
    items: &[T],
    min_share: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let used = threads().min(items.len().div_ceil(min_share.max(1)));
    if used <= 1 {
        return items.iter().map(&f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(item) = items.get(i) else { return done };
            done.push((i, f(item)));
        }
    };
    std::thread::scope(|scope| {
        let spawned: Vec<_> = (1..used).map(|_| scope.spawn(work)).collect();
        let own = work();
        let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
        for p in spawned {
            let done = p.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (i, r) in done {
                slots[i] = Some(r);
            }
        }
        for (i, r) in own {
            slots[i] = Some(r);
        }
        // Each item was taken by exactly one thread.
        slots.into_iter().flatten().collect()
    })
}

/// `take` of each item and its `f`, in order, on the calling thread, while every thread (the
/// calling one included, when it has nothing to take) computes `f` of the next items: at most
/// `window` items past the last one taken are computed ahead, so that what is held waiting is
/// bounded whatever the items, and no thread waits for a share to end before it goes on.
pub(crate) fn par_in_order<T: Sync, R: Send>(
    items: &[T],
    window: usize,
    f: impl Fn(&T) -> R + Sync,
    mut take: impl FnMut(&T, R),
) {
    use std::sync::{Condvar, Mutex, PoisonError};
    let window = window.max(1);
    let threads = threads();
    if threads <= 1 || items.len() < 2 {
        for item in items {
            take(item, f(item));
        }
        return;
    }
    /// The items claimed (`next`), taken (`taken`), and those done and not yet taken.
    struct State<R> {
        next: usize,
        taken: usize,
        done: Vec<Option<R>>,
        /// A thread panicked: the item it held will never be done.
        failed: bool,
        /// Threads waiting for a change: a change wakes them only when there are some.
        waiting: usize,
    }
    /// Tells the others that its thread panicked, so that none waits for it.
    struct Guard<'a, R> {
        state: &'a Mutex<State<R>>,
        changed: &'a Condvar,
    }
    impl<R> Drop for Guard<'_, R> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.state.lock().unwrap_or_else(PoisonError::into_inner).failed = true;
                self.changed.notify_all();
            }
        }
    }
    let done = std::iter::repeat_with(|| None).take(items.len()).collect();
    let state = Mutex::new(State { next: 0, taken: 0, done, failed: false, waiting: 0 });
    let changed = Condvar::new();
    let lock = || state.lock().unwrap_or_else(PoisonError::into_inner);
    /// Waits for a change, counted among the waiting meanwhile.
    fn wait<'a, R>(
        changed: &Condvar,
        mut s: std::sync::MutexGuard<'a, State<R>>,
    ) -> std::sync::MutexGuard<'a, State<R>> {
        s.waiting += 1;
        let mut s = changed.wait(s).unwrap_or_else(PoisonError::into_inner);
        s.waiting -= 1;
        s
    }
    let finish = |i: usize, r: R| {
        let mut s = lock();
        s.done[i] = Some(r);
        if s.waiting > 0 {
            changed.notify_all();
        }
    };
    let worker = || {
        let _guard = Guard { state: &state, changed: &changed };
        loop {
            let mut s = lock();
            while s.next < items.len() && s.next >= s.taken + window && !s.failed {
                s = wait(&changed, s);
            }
            if s.next >= items.len() || s.failed {
                return;
            }
            let i = s.next;
            s.next += 1;
            drop(s);
            finish(i, f(&items[i]));
        }
    };
    std::thread::scope(|scope| {
        let _spawned: Vec<_> = (1..threads.min(items.len())).map(|_| scope.spawn(worker)).collect();
        let _guard = Guard { state: &state, changed: &changed };
        loop {
            let mut s = lock();
            let t = s.taken;
            if t >= items.len() || s.failed {
                return;
            }
            if let Some(r) = s.done[t].take() {
                s.taken += 1;
                if s.waiting > 0 {
                    changed.notify_all();
                }
                drop(s);
                take(&items[t], r);
            } else if s.next < items.len() && s.next < t + window {
                let i = s.next;
                s.next += 1;
                drop(s);
                finish(i, f(&items[i]));
            } else {
                drop(wait(&changed, s));
            }
        }
    });
}

/// How many threads [`par_map`] shares work among.
pub(crate) fn threads() -> usize {
    // Asked once: each answer reads the process's control-group limits (several files).
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()).min(8))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::par_map;

    #[test]
    fn par_map_gives_each_result_in_order_and_calls_each_item_once() {
        for n in [0usize, 1, 2, 3, 17, 300, 1000] {
            for min_share in [0, 1, 4, 16, 2000] {
                let items: Vec<usize> = (0..n).collect();
                let calls = AtomicUsize::new(0);
                let f = |&i: &usize| {
                    calls.fetch_add(1, Ordering::Relaxed);
                    i * 3
                };
                let expected: Vec<usize> = items.iter().map(|i| i * 3).collect();
                assert_eq!(par_map(&items, min_share, f), expected);
                assert_eq!(calls.load(Ordering::Relaxed), n);
            }
        }
    }

    #[test]
    fn par_in_order_takes_each_item_once_in_order_within_its_window() {
        for n in [0usize, 1, 2, 3, 17, 300] {
            for window in [0usize, 1, 2, 5, 128, 1000] {
                let items: Vec<usize> = (0..n).collect();
                let ahead = AtomicUsize::new(0);
                let taken = AtomicUsize::new(0);
                let mut seen = Vec::new();
                super::par_in_order(
                    &items,
                    window,
                    |&i| {
                        // Never more than the window computed past what was taken. The
                        // item being taken counts as taken once the scheduler hands it over,
                        // a moment before `taken` below says so: hence `<=`, not `<`.
                        let past = i.saturating_sub(taken.load(Ordering::SeqCst));
                        ahead.fetch_max(past, Ordering::SeqCst);
                        i * 3
                    },
                    |&i, r| {
                        assert_eq!(r, i * 3);
                        seen.push(i);
                        taken.store(i + 1, Ordering::SeqCst);
                    },
                );
                assert_eq!(seen, items);
                assert!(ahead.load(Ordering::SeqCst) <= window.max(1), "{n} {window}");
            }
        }
    }

    #[test]
    fn a_panic_while_computing_in_order_reaches_the_caller_without_a_hang() {
        let items: Vec<usize> = (0..64).collect();
        let caught = std::panic::catch_unwind(|| {
            super::par_in_order(
                &items,
                4,
                |&i| {
                    assert!(i != 9, "item 9");
                    i
                },
                |_, _| {},
            );
        });
        assert!(caught.is_err());
    }

    #[test]
    fn a_panic_in_a_worker_reaches_the_caller() {
        let items: Vec<usize> = (0..64).collect();
        let caught = std::panic::catch_unwind(|| {
            par_map(&items, 1, |&i| {
                assert!(i != 40, "item 40");
                i
            })
        });
        assert!(caught.is_err());
    }
}
