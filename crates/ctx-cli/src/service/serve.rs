//! `ctx index --watch`: keeps the workspace's suggestion index in memory, current with a file
//! watch, and answers the commands that ask on a local socket (docs/suggest.md, "The index
//! service").
//!
//! Before it answers, a question syncs the watch ([`ctx::fs::SyncWatcher::sync`]): every
//! change made before the question arrived has then been seen, and when one may touch the
//! index (or the watch asked for a rescan) the index is brought up to date by the usual walk
//! first. A watch that failed, or a sync that did not come through, gets a refusal, and the
//! asker ranks by itself. The service ends when its workspace goes away, when its watch
//! fails, or after `--idle` seconds without a question.

use std::io::{self, Write as _};
use std::os::unix::net::UnixStream;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use ctx::fs::{Location, RootId, SyncWatcher};
use ctx::{Format, Mode, SuggestOptions};

use super::place;
use super::proto::{self, Answer, Ask, MAX_REQUEST, Request, Status, VERSION};
use crate::cli::IndexArgs;
use crate::settings::Settings;

/// Most connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 16;

/// How long a question waits for the watch to report its own cookie.
const SYNC_TIMEOUT: Duration = Duration::from_secs(2);

/// Changes are gathered this long before the index is brought up to date in the background.
const DEBOUNCE: Duration = Duration::from_millis(100);

/// How often the keeper looks whether the workspace is gone or the service idle.
const TICK: Duration = Duration::from_secs(1);

/// Changes taken in by a partial update are stored this long after the first one, so that a
/// burst of saves costs one segment of the stored index.
const SAVE_AFTER: Duration = Duration::from_secs(5);

/// When the stored index must be written whole (its log is full), it is written once no
/// question came for this long, so that no question waits for the write...
const MERGE_WHEN_IDLE: Duration = Duration::from_secs(30);

/// ... unless it is smaller than this: then the write takes milliseconds.
const SMALL_INDEX: u64 = 16 << 20;

/// The service's state.
struct Service {
    ctx: ctx::Context,
    root: String,
    fingerprint: String,
    state: Mutex<State>,
    busy: AtomicUsize,
    /// Whether the first update is done.
    ready: AtomicBool,
}

struct State {
    watcher: SyncWatcher,
    last_question: Instant,
    /// Why the watch can no longer vouch for the index, once it cannot.
    broken: Option<String>,
    bytes: u64,
    truncated: bool,
    /// When the index took in changes it has not stored yet.
    unsaved: Option<Instant>,
    /// Whether the changes taken in wait for a write of the whole index (when no question
    /// comes, or when the service ends).
    merge_due: bool,
}

/// `ctx index --watch`.
pub(crate) fn run(settings: &Settings, args: &IndexArgs) -> anyhow::Result<ExitCode> {
    let cache = settings.cache_dir()?;
    let ctx = settings
        .ranking_context(Mode::Append, Format::Xml)?
        .with_index_store(cache)
        .with_context(|| format!("cannot open the cache {}", cache.display()))?;
    let dir = place::socket_dir(settings)?;
    let root = place::root_of(&ctx);
    let name = place::socket_name(&root);
    let listener = match dir.listen(&name) {
        Ok(listener) => listener,
        Err(err) if err.io_error().is_some_and(|e| e.kind() == io::ErrorKind::AddrInUse) => {
            anyhow::bail!("an index service already runs for {root}")
        }
        Err(err) => return Err(err).context("cannot listen for questions"),
    };
    // The watch starts before the first update, so a change made while it runs is seen.
    let mut watcher = ctx.sandbox().watch_synced(&dir).context("cannot watch the workspace")?;
    let wake = watcher.wake().expect("a new watch has its waker");
    let service = Arc::new(Service {
        fingerprint: place::fingerprint(settings, &ctx),
        ctx,
        root,
        state: Mutex::new(State {
            watcher,
            last_question: Instant::now(),
            broken: None,
            bytes: 0,
            truncated: false,
            unsaved: None,
            merge_due: false,
        }),
        busy: AtomicUsize::new(0),
        ready: AtomicBool::new(false),
    });
    // Questions are taken from the start: until the first update is done they are refused at
    // once, and their commands rank by themselves instead of waiting.
    let path = listener.path().to_string();
    std::thread::spawn({
        let service = Arc::clone(&service);
        move || take_questions(&service, &listener)
    });
    let stats = service.ctx.update_index()?;
    {
        let mut state = service.state.lock().unwrap_or_else(|e| e.into_inner());
        (state.bytes, state.truncated) = (stats.bytes, stats.truncated);
        state.last_question = Instant::now();
    }
    service.ctx.with_index_as_is(|index| index.keep_term_lists());
    service.ready.store(true, Ordering::SeqCst);
    if !settings.quiet {
        let mut err = io::stderr().lock();
        let _ = writeln!(
            err,
            "keeping the index of {} ({} files) current; questions on {path}",
            service.root, stats.files,
        );
    }
    let why = keep(&service, &wake, Duration::from_secs(args.idle));
    dir.remove_socket(&name);
    tracing::info!("index service ends: {why}");
    // The threads that serve connections end with the process.
    std::process::exit(0)
}

/// Accepts connections for ever, each served on a thread of its own, at most
/// [`MAX_CONNECTIONS`] at once.
fn take_questions(service: &Arc<Service>, listener: &ctx::fs::Listener) {
    loop {
        let stream = match listener.accept() {
            Ok(stream) => stream,
            // A peer of another user, or a failed accept: that connection only.
            Err(err) => {
                tracing::warn!("refused a connection: {err}");
                continue;
            }
        };
        if service.busy.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            service.busy.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let service = Arc::clone(service);
        std::thread::spawn(move || {
            serve(&service, stream);
            service.busy.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// Brings the index up to date as changes come, until the workspace is gone, the watch
/// failed or no question came for `idle`; returns why it stopped.
fn keep(service: &Service, wake: &ctx::fs::Wake, idle: Duration) -> String {
    loop {
        let woke = wake.wait(TICK);
        let mut state = service.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.watcher.workspace_gone() {
            return "the workspace is gone".to_owned();
        }
        if let Some(why) = &state.broken {
            return why.clone();
        }
        if state.last_question.elapsed() >= idle {
            // What is left to store, written whole if need be: no question waits any more.
            if state.merge_due || state.unsaved.is_some() {
                store(service, &mut state, true);
            }
            return "idle".to_owned();
        }
        if state.unsaved.is_some_and(|at| at.elapsed() >= SAVE_AFTER) {
            state.unsaved = None;
            store(service, &mut state, false);
        }
        if state.merge_due && state.last_question.elapsed() >= MERGE_WHEN_IDLE {
            store(service, &mut state, true);
        }
        if woke {
            drop(state);
            std::thread::sleep(DEBOUNCE);
            let mut state = service.state.lock().unwrap_or_else(|e| e.into_inner());
            // A failure is kept in the state: the next round ends the service.
            let _ = current(service, &mut state);
        } else {
            drop(state);
        }
        // The postings by term (and the order of the paths), when an update dropped them, built
        // again between questions: a question ranks with them when they are there, by every
        // file's postings when not.
        service.ctx.with_index_as_is(|index| index.keep_term_lists());
    }
}

/// Stores what the index took in since it was last stored: a segment appended to the stored
/// index, or, when its log is full and `whole` or the index is small, the whole index (else
/// that waits until no question comes, [`MERGE_WHEN_IDLE`]).
fn store(service: &Service, state: &mut State, whole: bool) {
    let stored = match whole || state.bytes < SMALL_INDEX {
        true => service.ctx.save_index().map(Some),
        false => service.ctx.save_index_appending(),
    };
    match stored {
        Ok(Some(bytes)) => {
            state.merge_due = false;
            if bytes > 0 {
                state.bytes = bytes;
            }
        }
        Ok(None) => state.merge_due = true,
        // The stored index is only a head start for commands without the service: they walk
        // before they trust it.
        Err(err) => tracing::warn!("cannot store the index: {err}"),
    }
}

/// Syncs the watch and brings the index up to date when a change may touch it; an error
/// says why the service cannot vouch for its index now.
fn current(service: &Service, state: &mut State) -> Result<(), String> {
    if let Some(why) = &state.broken {
        return Err(why.clone());
    }
    let changes = match state.watcher.sync(SYNC_TIMEOUT) {
        Ok(changes) => changes,
        Err(err) => {
            let why = format!("the watch cannot vouch for the index: {err}");
            if state.watcher.has_failed() {
                state.broken = Some(why.clone());
            }
            return Err(why);
        }
    };
    let sandbox = service.ctx.sandbox();
    let paths: Vec<&str> = changes
        .paths
        .iter()
        .filter(|l| may_be_listed(sandbox, l))
        .map(|l| l.path().as_str())
        .collect();
    if !changes.rescan && paths.is_empty() {
        return Ok(());
    }
    let cannot = |e: ctx::Error| format!("cannot update: {e}");
    // The folders of the changes are listed again when that is enough, else the whole tree.
    let partial = match changes.rescan {
        true => None,
        false => service.ctx.update_index_paths(&paths).map_err(cannot)?,
    };
    match partial {
        Some(stats) if stats.indexed > 0 || stats.removed > 0 => {
            state.unsaved.get_or_insert_with(Instant::now);
        }
        Some(_) => {}
        None => {
            let stats = service.ctx.update_index().map_err(cannot)?;
            if stats.bytes > 0 {
                state.bytes = stats.bytes;
            }
            state.truncated = stats.truncated;
        }
    }
    Ok(())
}

/// Whether a change may touch the index: a path in the workspace that a walk may list (the
/// built-in denials, hidden entries but the ignore files, and the folders skipped by name are
/// never listed).
fn may_be_listed(sandbox: &ctx::fs::Sandbox, location: &Location) -> bool {
    location.root() == RootId::WORKSPACE && listable(sandbox, location.path().as_str())
}

/// Whether a whole walk may list the workspace's path `path`.
fn listable(sandbox: &ctx::fs::Sandbox, path: &str) -> bool {
    let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    if ctx::fs::builtin_denial(&comps).is_some() {
        return false;
    }
    let ignore = sandbox.ignore_settings();
    let last = comps.len().saturating_sub(1);
    !comps.iter().enumerate().any(|(i, c)| {
        let hidden = ignore.skip_hidden
            && c.starts_with('.')
            && !(i == last && ignore.ignore_files.iter().any(|f| f == c));
        hidden || (i < last && ignore.skip_dirs.iter().any(|d| d == c))
    })
}

/// One connection: one question, one answer; a malformed or slow question ends it.
fn serve(service: &Service, mut stream: UnixStream) {
    let request: Request = match proto::receive(&mut stream, MAX_REQUEST) {
        Ok(request) => request,
        Err(err) => {
            tracing::debug!("dropped a question: {err}");
            return;
        }
    };
    let answer = answer(service, request);
    if let Err(err) = proto::send(&mut stream, &answer) {
        tracing::debug!("could not answer: {err}");
    }
}

fn answer(service: &Service, request: Request) -> Answer {
    if request.version != VERSION {
        return Answer::Refused(format!("protocol version {VERSION} only"));
    }
    if request.root != service.root {
        return Answer::Refused("this service keeps the index of another workspace".to_owned());
    }
    if request.fingerprint != service.fingerprint {
        return Answer::Refused("this service runs with other settings".to_owned());
    }
    if !service.ready.load(Ordering::SeqCst) {
        return Answer::Refused("the index is being built".to_owned());
    }
    let mut state = service.state.lock().unwrap_or_else(|e| e.into_inner());
    state.last_question = Instant::now();
    if let Err(why) = current(service, &mut state) {
        return Answer::Refused(why);
    }
    let ctx = &service.ctx;
    let found = match request.ask {
        Ask::Suggest { prompt, limit, max_lines, max_tokens, explain } => {
            let opts = SuggestOptions::default()
                .limit(limit)
                .max_lines(max_lines)
                .max_tokens(max_tokens)
                .explain(explain);
            ctx.with_index_as_is(|index| index.suggest(ctx.sandbox(), &prompt, &opts))
                .map(Answer::Suggestions)
        }
        Ask::Status => ctx.with_index_as_is(|index| {
            Answer::Status(Status {
                files: index.len(),
                terms: index.term_count(),
                symbols: index.symbol_count(),
                definitions: index.definition_count(),
                classes: index
                    .class_counts()
                    .into_iter()
                    .map(|(c, n)| (c.name().to_owned(), n))
                    .collect(),
                symbol_source: index.settings().symbols.name().to_owned(),
                data_files: index.settings().data_files,
                truncated: state.truncated,
                bytes: state.bytes,
            })
        }),
    };
    found.unwrap_or_else(|| Answer::Refused("no index yet".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_that_no_walk_lists_touch_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx::Context::builder().root(dir.path()).build().unwrap();
        let sandbox = ctx.sandbox();
        for quiet in [".git/index", "target/debug/x.o", "a/node_modules/b.js", ".env", ".cache/x"] {
            assert!(!listable(sandbox, quiet), "{quiet}");
        }
        for loud in ["src/a.rs", ".gitignore", "sub/.ignore", "target", "build"] {
            assert!(listable(sandbox, loud), "{loud}");
        }
    }
}
