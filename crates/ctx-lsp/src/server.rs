//! The session: the loop over the client's messages, the handshake, the dispatch of
//! requests and notifications to the document store ([`crate::documents`]), the checks
//! ([`crate::diagnostics`]) and the handlers ([`crate::handlers`], [`crate::complete`]), and
//! the watching of files on disk.

use std::collections::HashMap;
use std::io;
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;
use ctx::fs::{Location, Overlay};
use ctx::{Context, Deferred, Dependencies};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use lsp_types::Url;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::documents::{self, Documents, Incoming};
use crate::protocol::{Config, Ending, Failure, capabilities, publish, send};
use crate::workspace::Workspace;

/// Most notifications kept from before `initialize`; later ones are dropped.
const MAX_EARLY: usize = 32;

/// The id of the server's registration for `workspace/didChangeWatchedFiles`, also the id
/// of the request that makes it.
const WATCH_REGISTRATION: &str = "ctx-watched-files";

/// How old the walk behind ranked completions may be before the roots are walked again, when
/// the client does not report file changes to the server.
const PATHS_MAX_AGE: Duration = Duration::from_secs(10);
/// The same while it does: changes drop the walk as they come, this is a safety net for those
/// the client misses.
const WATCHED_PATHS_MAX_AGE: Duration = Duration::from_secs(300);

/// Logs what the context could not honour (roots left closed, untrusted folders) to the
/// server's log, but for the notices `known` already logged.
fn log_notices(ctx: &Context, known: &[ctx::Notice]) {
    for notice in ctx.notices().iter().filter(|n| !known.contains(n)) {
        let message = ctx::assemble::sanitize::sanitize(&notice.message).text.into_owned();
        tracing::warn!("{}: {message}", notice.code);
    }
}

/// How often the loop looks whether the source index read in the background is ready.
const PENDING_POLL: Duration = Duration::from_millis(50);

/// The language server: a context whose sandbox sees the open documents through an
/// overlay.
#[derive(Debug)]
pub struct Server {
    ctx: Context,
    /// The same context with its source index, while that is read in the background.
    pending: Option<Deferred>,
    docs: Documents,
    /// When the next check is due (after the debounce), if a document changed.
    due: Option<Instant>,
    /// Where the session is in the protocol.
    state: State,
    /// Notifications that came before `initialize` (at most [`MAX_EARLY`]), applied once it
    /// is answered.
    early: Vec<Notification>,
    /// What the client can watch for the server.
    watch: Watch,
    /// What each open document's last check depended on.
    deps: HashMap<Url, Dependencies>,
}

/// The watching of files: what the client offers, what the server asked.
#[derive(Debug, Default)]
struct Watch {
    /// The client registers `workspace/didChangeWatchedFiles` dynamically.
    dynamic: bool,
    /// Its watchers take a base folder (a root outside its workspace folders can be watched).
    relative: bool,
    /// The registration request sent, if it was.
    request: Option<RequestId>,
    /// Whether the client watches every root for the server: registered, not refused, and
    /// either by root or with a single root.
    all_roots: bool,
}

/// Where a session is in the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for `initialize`.
    Uninitialized,
    /// `initialize` answered: serving.
    Running,
    /// `shutdown` answered: waiting for `exit`.
    ShutDown,
}

impl Server {
    /// A server over `ctx`, whose sandbox must serve `overlay`. Open documents are kept up
    /// to the sandbox's cap of a file read.
    pub fn new(ctx: Context, overlay: Overlay) -> Server {
        let max_bytes = ctx.sandbox().limits().max_file_bytes;
        Server {
            ctx,
            pending: None,
            docs: Documents::new(overlay, max_bytes),
            due: None,
            state: State::Uninitialized,
            early: Vec::new(),
            watch: Watch::default(),
            deps: HashMap::new(),
        }
    }

    /// A server over a context whose source index may still be read in the background
    /// ([`ctx::ContextBuilder::build_deferred`]): it serves at once with the workspace, and
    /// checks the open documents again through the index once that is read.
    pub fn deferred(ctx: Deferred, overlay: Overlay) -> Server {
        let mut server = Server::new(ctx.current(), overlay);
        log_notices(&server.ctx, &[]);
        if !ctx.is_complete() {
            server.pending = Some(ctx);
        }
        server
    }

    /// Takes the complete context once it is built, and checks every open document again.
    fn complete(&mut self, connection: &Connection) {
        if !self.pending.as_ref().is_some_and(Deferred::is_complete) {
            return;
        }
        if let Some(pending) = self.pending.take() {
            let full = pending.current();
            log_notices(&full, self.ctx.notices());
            self.ctx = full;
            self.deps.clear();
            if self.state == State::Running {
                self.publish_all(connection);
            }
        }
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The view the handlers work on.
    fn workspace(&self) -> Workspace<'_> {
        Workspace { ctx: &self.ctx, docs: &self.docs }
    }

    /// Opens (or reopens) a document.
    pub fn open(&mut self, uri: Url, text: String, version: i32) {
        let location = self.workspace().locate(&uri);
        self.docs.open(uri, Incoming::Text(text), version, location);
    }

    /// Closes a document: the disk is read again for it.
    pub fn close(&mut self, uri: &Url) {
        self.docs.close(uri);
    }

    /// Assembles an open document as `ctx check` does, its unsaved text and that of every
    /// open document it includes winning over the disk.
    pub fn assemble(&self, uri: &Url, sink: &mut dyn io::Write) -> Option<ctx::Assembly> {
        self.workspace().assemble(uri, sink)
    }

    /// The diagnostics of an open document: those the assembly reports in the document
    /// itself, with the codes and messages of `ctx check`, and on each of its references
    /// whose included files have problems, a summary of them.
    pub fn diagnostics(&self, uri: &Url) -> Vec<lsp::Diagnostic> {
        self.workspace().check(uri).map(|checked| checked.diagnostics).unwrap_or_default()
    }

    /// Runs the session: the `initialize` handshake, then requests and notifications until
    /// `exit` (or until the client goes away).
    ///
    /// The handshake is tolerant: a request before `initialize` gets `ServerNotInitialized`
    /// and a notification before it is kept (up to 32 of them) and applied once
    /// `initialize` is answered; the server serves as soon as it has answered `initialize`,
    /// without waiting for `initialized`; after `shutdown` every request gets
    /// `InvalidRequest` and only `exit` ends the loop.
    pub fn serve(mut self, connection: &Connection, config: &Config) -> Ending {
        loop {
            self.complete(connection);
            // While the source index is read, the loop looks up now and then to take it.
            let poll = self.pending.as_ref().map(|_| Instant::now() + PENDING_POLL);
            let wake = match (self.due, poll) {
                (Some(due), Some(poll)) => Some(due.min(poll)),
                (due, poll) => due.or(poll),
            };
            let message = match wake {
                Some(wake) => {
                    match connection
                        .receiver
                        .recv_timeout(wake.saturating_duration_since(Instant::now()))
                    {
                        Ok(message) => message,
                        Err(RecvTimeoutError::Timeout) => {
                            if self.due.is_some_and(|due| due <= Instant::now()) {
                                self.due = None;
                                self.publish_all(connection);
                            }
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => return self.ending(),
                    }
                }
                None => match connection.receiver.recv() {
                    Ok(message) => message,
                    Err(_) => return self.ending(),
                },
            };
            match message {
                Message::Request(request) => self.dispatch(connection, config, request),
                Message::Notification(notification) => {
                    if notification.method == "exit" {
                        return self.ending();
                    }
                    match self.state {
                        State::Uninitialized if self.early.len() < MAX_EARLY => {
                            self.early.push(notification);
                        }
                        State::Uninitialized => {
                            tracing::warn!(
                                "dropped a notification before initialize: {}",
                                notification.method
                            );
                        }
                        State::Running => self.notify(connection, config, notification),
                        State::ShutDown => {}
                    }
                }
                Message::Response(response) => self.answered(&response),
            }
        }
    }

    /// How the session ends when `exit` comes (or the client goes away) now. The token
    /// counts the session took are kept for the next one (a client gone without `shutdown`
    /// included; nothing is written when nothing new was counted).
    fn ending(&self) -> Ending {
        self.keep_counts();
        if self.state == State::ShutDown { Ending::Shutdown } else { Ending::Abandoned }
    }

    /// Stores the token counts taken so far (docs/assembly.md, "Counts kept between runs"),
    /// or logs why it could not: a cache that cannot be written costs the next session
    /// time, never an answer.
    fn keep_counts(&self) {
        if let Err(err) = self.ctx.keep_counts() {
            let message = ctx::assemble::sanitize::sanitize(&err.to_string()).text.into_owned();
            tracing::warn!("token counts not kept: {message}");
        }
    }

    /// Answers a request according to the state of the session.
    fn dispatch(&mut self, connection: &Connection, config: &Config, request: Request) {
        let id = request.id.clone();
        let response = match (self.state, request.method.as_str()) {
            (State::Uninitialized, "initialize") => {
                self.initialize(&request.params);
                let result = json!({
                    "capabilities": capabilities(),
                    "serverInfo": { "name": "ctx", "version": env!("CARGO_PKG_VERSION") },
                });
                self.state = State::Running;
                send(connection, Message::Response(Response::new_ok(id, result)));
                // What came before `initialize` is applied now, in order.
                for notification in std::mem::take(&mut self.early) {
                    self.notify(connection, config, notification);
                }
                return;
            }
            (State::Uninitialized, method) => Response::new_err(
                id,
                ErrorCode::ServerNotInitialized as i32,
                format!("{method} before initialize"),
            ),
            (State::Running, "initialize") => Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is already initialized".to_owned(),
            ),
            (State::Running, "shutdown") => {
                self.state = State::ShutDown;
                self.due = None;
                self.keep_counts();
                Response::new_ok(id, ())
            }
            (State::Running, _) => self.request(request),
            (State::ShutDown, method) => Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                format!("{method} after shutdown"),
            ),
        };
        send(connection, Message::Response(response));
    }

    /// Reads what the server needs of the client's capabilities (read leniently: a client
    /// that sends odd ones is served without them).
    fn initialize(&mut self, params: &Value) {
        let watched = params.pointer("/capabilities/workspace/didChangeWatchedFiles");
        let flag = |name: &str| {
            watched.and_then(|w| w.get(name)).and_then(Value::as_bool).unwrap_or(false)
        };
        self.watch.dynamic = flag("dynamicRegistration");
        self.watch.relative = flag("relativePatternSupport");
    }

    /// Asks the client to report changes to every file of the roots, if it can.
    fn register_watchers(&mut self, connection: &Connection) {
        if !self.watch.dynamic || self.watch.request.is_some() {
            return;
        }
        let sandbox = self.ctx.sandbox();
        let roots: Vec<Url> = sandbox
            .roots()
            .filter_map(|root| Url::from_directory_path(sandbox.root_path(root).as_std_path()).ok())
            .collect();
        let watchers = if self.watch.relative {
            roots
                .iter()
                .map(|root| lsp::FileSystemWatcher {
                    glob_pattern: lsp::GlobPattern::Relative(lsp::RelativePattern {
                        base_uri: lsp::OneOf::Right(root.clone()),
                        pattern: "**/*".to_owned(),
                    }),
                    kind: None,
                })
                .collect()
        } else {
            // Relative to the client's workspace folders.
            vec![lsp::FileSystemWatcher {
                glob_pattern: lsp::GlobPattern::String("**/*".to_owned()),
                kind: None,
            }]
        };
        let options = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
        let params = lsp::RegistrationParams {
            registrations: vec![lsp::Registration {
                id: WATCH_REGISTRATION.to_owned(),
                method: "workspace/didChangeWatchedFiles".to_owned(),
                register_options: serde_json::to_value(options).ok(),
            }],
        };
        let id = RequestId::from(WATCH_REGISTRATION.to_owned());
        let request = Request::new(id.clone(), "client/registerCapability".to_owned(), params);
        send(connection, Message::Request(request));
        self.watch.request = Some(id);
        self.watch.all_roots = self.watch.relative || roots.len() == 1;
    }

    /// How old the walk behind ranked completions may be: while the client reports file
    /// changes, long (only a safety net for changes it misses); else short.
    pub(crate) fn paths_max_age(&self) -> Duration {
        if self.watch.all_roots { WATCHED_PATHS_MAX_AGE } else { PATHS_MAX_AGE }
    }

    /// Applies a notification of a running session and refreshes what it changed.
    fn notify(&mut self, connection: &Connection, config: &Config, notification: Notification) {
        if notification.method == "initialized" {
            self.register_watchers(connection);
            return;
        }
        match self.notification(notification) {
            Change::Now => self.publish_all(connection),
            Change::Later => self.due = Some(Instant::now() + config.debounce),
            Change::Files(changed) => self.publish_affected(connection, &changed),
            Change::Closed(uri) => {
                // Its diagnostics are cleared, then the others checked without its text.
                self.deps.remove(&uri);
                publish(connection, uri, Vec::new(), None);
                self.publish_all(connection);
            }
            Change::None => {}
        }
    }

    /// Takes note of the client's answer to a request of the server.
    fn answered(&mut self, response: &Response) {
        if self.watch.request.as_ref() == Some(&response.id) && response.error.is_some() {
            // Refused: the walk is kept only briefly again.
            self.watch.all_roots = false;
        }
    }

    /// Where a file the client reports as changed is in the sandbox: the file itself, or for
    /// one deleted, its nearest directory that still exists. `None` outside the roots and
    /// for what the sandbox never serves (`.git`, keys…), whose changes are frequent and
    /// matter to no document.
    fn changed(&self, event: &lsp::FileEvent) -> Option<Location> {
        let path = event.uri.to_file_path().ok()?;
        let names: Vec<&str> = path.iter().filter_map(|c| c.to_str()).collect();
        if ctx::fs::builtin_denial(&names).is_some() {
            return None;
        }
        let sandbox = self.ctx.sandbox();
        if event.typ == lsp::FileChangeType::DELETED {
            path.ancestors().find_map(|p| sandbox.resolve_in_workspace(p.to_str()?).ok())
        } else {
            sandbox.resolve_in_workspace(path.to_str()?).ok()
        }
    }

    /// Answers one request.
    pub fn request(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        let result = match request.method.as_str() {
            "textDocument/completion" => self.with(request, |s, p: lsp::CompletionParams| {
                Ok(s.workspace().completion(&p, s.paths_max_age()))
            }),
            "textDocument/hover" => {
                self.with(request, |s, p: lsp::HoverParams| Ok(s.workspace().hover(&p)))
            }
            "textDocument/definition" => self
                .with(request, |s, p: lsp::GotoDefinitionParams| Ok(s.workspace().definition(&p))),
            "textDocument/references" => {
                self.with(request, |s, p: lsp::ReferenceParams| Ok(s.workspace().references(&p)))
            }
            "textDocument/documentLink" => self.with(request, |s, p: lsp::DocumentLinkParams| {
                Ok(s.workspace().links(&p.text_document.uri))
            }),
            "textDocument/codeLens" => self.with(request, |s, p: lsp::CodeLensParams| {
                Ok(s.workspace().lenses(&p.text_document.uri))
            }),
            "workspace/executeCommand" => {
                self.with(request, |s, p: lsp::ExecuteCommandParams| s.workspace().execute(&p))
            }
            method => Err((ErrorCode::MethodNotFound, format!("unknown method: {method}"))),
        };
        match result {
            Ok(value) => Response::new_ok(id, value),
            Err((code, message)) => Response::new_err(id, code as i32, message),
        }
    }

    /// Parses the parameters of a request and runs its handler.
    fn with<P: DeserializeOwned, R: Serialize>(
        &self,
        request: Request,
        handler: impl FnOnce(&Server, P) -> Result<R, Failure>,
    ) -> Result<Value, Failure> {
        let params: P = serde_json::from_value(request.params)
            .map_err(|err| (ErrorCode::InvalidParams, format!("bad parameters: {err}")))?;
        let result = handler(self, params)?;
        serde_json::to_value(result).map_err(|err| (ErrorCode::InternalError, err.to_string()))
    }

    /// Applies a notification; says whether diagnostics must be refreshed.
    fn notification(&mut self, notification: Notification) -> Change {
        let params = notification.params;
        match notification.method.as_str() {
            "textDocument/didOpen" => {
                let Some((uri, text, version)) = documents::open_params(params) else {
                    return Change::None;
                };
                let location = self.workspace().locate(&uri);
                self.docs.open(uri, text, version, location);
                Change::Now
            }
            "textDocument/didChange" => {
                let Some((uri, version, edits)) = documents::change_params(params) else {
                    return Change::None;
                };
                if self.docs.change(&uri, version, edits) { Change::Later } else { Change::None }
            }
            "textDocument/didSave" => {
                // A saved file may be new: the next completion walks the roots again.
                self.context().forget_paths();
                Change::Now
            }
            "workspace/didChangeWatchedFiles" => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeWatchedFilesParams>(params)
                else {
                    self.context().forget_paths();
                    return Change::Now;
                };
                let changed: Vec<Location> =
                    p.changes.iter().filter_map(|event| self.changed(event)).collect();
                if changed.is_empty() {
                    return Change::None;
                }
                // Files may have come or gone: the next completion walks the roots again.
                self.context().forget_paths();
                Change::Files(changed)
            }
            "workspace/didCreateFiles"
            | "workspace/didDeleteFiles"
            | "workspace/didRenameFiles" => {
                self.context().forget_paths();
                Change::Now
            }
            "textDocument/didClose" => {
                let Ok(p) = serde_json::from_value::<lsp::DidCloseTextDocumentParams>(params)
                else {
                    return Change::None;
                };
                self.docs.close(&p.text_document.uri);
                Change::Closed(p.text_document.uri)
            }
            _ => Change::None,
        }
    }

    /// Publishes the diagnostics of every open document (an edit to one may change what
    /// another includes).
    fn publish_all(&mut self, connection: &Connection) {
        let uris: Vec<Url> = self.docs.iter().map(|(uri, _)| uri.clone()).collect();
        self.publish(connection, uris);
    }

    /// Publishes the diagnostics of the open documents that depend on changed locations (or
    /// whose dependencies are not known).
    fn publish_affected(&mut self, connection: &Connection, changed: &[Location]) {
        let uris: Vec<Url> = self
            .docs
            .iter()
            .map(|(uri, _)| uri)
            .filter(|uri| self.deps.get(*uri).is_none_or(|deps| deps.affected_by(changed)))
            .cloned()
            .collect();
        self.publish(connection, uris);
    }

    /// Checks open documents, keeps what each depends on and publishes their diagnostics.
    fn publish(&mut self, connection: &Connection, mut uris: Vec<Url>) {
        uris.sort();
        for uri in uris {
            let checked = self.workspace().check(&uri);
            let (diagnostics, deps) = match checked {
                Some(checked) => (checked.diagnostics, checked.deps),
                None => (Vec::new(), None),
            };
            match deps {
                Some(deps) => self.deps.insert(uri.clone(), deps),
                None => self.deps.remove(&uri),
            };
            let version = self.docs.get(&uri).map(|d| d.version);
            publish(connection, uri, diagnostics, version);
        }
    }
}

/// What a notification changed.
enum Change {
    /// Nothing diagnostics depend on.
    None,
    /// A document opened or was saved: check now.
    Now,
    /// The text changed: check after the debounce.
    Later,
    /// Files changed on disk: check now the documents that depend on them.
    Files(Vec<Location>),
    /// A document was closed.
    Closed(Url),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_is_kept_long_while_the_client_watches_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::builder().root(dir.path()).build().unwrap();
        let mut server = Server::new(ctx, Overlay::new());
        assert_eq!(server.paths_max_age(), PATHS_MAX_AGE);
        let (connection, client) = Connection::memory();
        server.register_watchers(&connection);
        assert!(client.receiver.try_recv().is_err(), "not offered: not asked");
        let watched = json!({ "capabilities": { "workspace": { "didChangeWatchedFiles": {
            "dynamicRegistration": true, "relativePatternSupport": true,
        } } } });
        server.initialize(&watched);
        server.register_watchers(&connection);
        let Ok(Message::Request(request)) = client.receiver.try_recv() else { panic!() };
        let watcher = &request.params["registrations"][0]["registerOptions"]["watchers"][0];
        assert_eq!(watcher["globPattern"]["pattern"], "**/*");
        assert!(watcher["globPattern"]["baseUri"].as_str().unwrap().starts_with("file:///"));
        assert_eq!(server.paths_max_age(), WATCHED_PATHS_MAX_AGE);
        // Refused by the client: kept briefly again.
        server.answered(&Response::new_err(
            request.id,
            ErrorCode::InternalError as i32,
            "no".into(),
        ));
        assert_eq!(server.paths_max_age(), PATHS_MAX_AGE);
    }
}
