//! The server's state (open documents, the context) and its handlers.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;
use ctx::assemble::record::{DiagnosticRecord, Kind, ReferenceRecord};
use ctx::assemble::select;
use ctx::fs::{FileKind, Location, Overlay};
use ctx::syntax::{Include, ItemKind, Reference, Severity};
use ctx::{Context, Dependencies};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use lsp_types::Url;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::Config;
use crate::text;

/// The command that returns the assembled document: arguments `[uri]`.
pub const ASSEMBLE_COMMAND: &str = "ctx.assemble";

/// The folders whose documents make up the rule set that "find references" searches, besides
/// the open documents.
const RULE_DIRS: &[&str] = &[".ctx/rules", ".mutsumi/rules"];

/// The id of the server's registration for `workspace/didChangeWatchedFiles`, also the id
/// of the request that makes it.
const WATCH_REGISTRATION: &str = "ctx-watched-files";

/// How old the walk behind ranked completions may be before the roots are walked again, when
/// the client does not report file changes to the server.
const PATHS_MAX_AGE: Duration = Duration::from_secs(10);
/// The same while it does: changes drop the walk as they come, this is a safety net for those
/// the client misses.
const WATCHED_PATHS_MAX_AGE: Duration = Duration::from_secs(300);

/// Most lines and bytes a hover preview shows.
const PREVIEW_LINES: usize = 30;
const PREVIEW_BYTES: usize = 4000;

/// What the server tells the client it can do.
pub(crate) fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(lsp::PositionEncodingKind::UTF16),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
                ..lsp::TextDocumentSyncOptions::default()
            },
        )),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(
                ["@", "[", "{", "\"", "/", ":", "#"].map(str::to_owned).to_vec(),
            ),
            ..lsp::CompletionOptions::default()
        }),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        document_link_provider: Some(lsp::DocumentLinkOptions {
            resolve_provider: Some(false),
            work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
        }),
        code_lens_provider: Some(lsp::CodeLensOptions { resolve_provider: Some(false) }),
        execute_command_provider: Some(lsp::ExecuteCommandOptions {
            commands: vec![ASSEMBLE_COMMAND.to_owned()],
            work_done_progress_options: lsp::WorkDoneProgressOptions::default(),
        }),
        ..lsp::ServerCapabilities::default()
    }
}

/// An open document.
#[derive(Debug)]
pub(crate) struct Document {
    pub(crate) text: String,
    version: i32,
    /// Where it is in the sandbox; `None` for a document outside the roots or not on disk,
    /// which is assembled as a text in the workspace root.
    pub(crate) location: Option<Location>,
}

/// A reference found in a document: its span and what it names.
pub(crate) struct Found<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) reference: Reference<'a>,
}

/// The language server: a context whose sandbox sees the open documents through an
/// overlay.
#[derive(Debug)]
pub struct Server {
    ctx: Context,
    overlay: Overlay,
    pub(crate) docs: HashMap<Url, Document>,
    /// When the next check is due (after the debounce), if a document changed.
    due: Option<Instant>,
    /// Where the session is in the protocol.
    state: State,
    /// Notifications that came before `initialize`, applied once it is answered.
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

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ending {
    /// `exit` after `shutdown` (or the client went away after `shutdown`).
    Shutdown,
    /// `exit` without `shutdown`, or the client went away before it.
    Abandoned,
}

impl Ending {
    /// The process exit status LSP asks for: 0 after `shutdown`, 1 without.
    pub fn exit_code(self) -> u8 {
        match self {
            Ending::Shutdown => 0,
            Ending::Abandoned => 1,
        }
    }
}

/// A failed request: an LSP error code and a message.
type Failure = (ErrorCode, String);

impl Server {
    /// A server over `ctx`, whose sandbox must serve `overlay`.
    pub fn new(ctx: Context, overlay: Overlay) -> Server {
        Server {
            ctx,
            overlay,
            docs: HashMap::new(),
            due: None,
            state: State::Uninitialized,
            early: Vec::new(),
            watch: Watch::default(),
            deps: HashMap::new(),
        }
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Runs the session: the `initialize` handshake, then requests and notifications until
    /// `exit` (or until the client goes away).
    ///
    /// The handshake is tolerant: a request before `initialize` gets `ServerNotInitialized`
    /// and a notification before it is kept and applied once `initialize` is answered; the
    /// server serves as soon as it has answered `initialize`, without waiting for
    /// `initialized`; after `shutdown` every request gets `InvalidRequest` and only `exit`
    /// ends the loop.
    pub fn serve(mut self, connection: &Connection, config: &Config) -> Ending {
        loop {
            let message = match self.due {
                Some(due) => {
                    match connection
                        .receiver
                        .recv_timeout(due.saturating_duration_since(Instant::now()))
                    {
                        Ok(message) => message,
                        Err(RecvTimeoutError::Timeout) => {
                            self.due = None;
                            self.publish_all(connection);
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
                        State::Uninitialized => self.early.push(notification),
                        State::Running => self.notify(connection, config, &notification),
                        State::ShutDown => {}
                    }
                }
                Message::Response(response) => self.answered(&response),
            }
        }
    }

    /// How the session ends when `exit` comes (or the client goes away) now.
    fn ending(&self) -> Ending {
        if self.state == State::ShutDown { Ending::Shutdown } else { Ending::Abandoned }
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
                    self.notify(connection, config, &notification);
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
    fn notify(&mut self, connection: &Connection, config: &Config, notification: &Notification) {
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
            "textDocument/completion" => {
                self.with(request, |s, p: lsp::CompletionParams| Ok(s.completion(&p)))
            }
            "textDocument/hover" => self.with(request, |s, p: lsp::HoverParams| Ok(s.hover(&p))),
            "textDocument/definition" => {
                self.with(request, |s, p: lsp::GotoDefinitionParams| Ok(s.definition(&p)))
            }
            "textDocument/references" => {
                self.with(request, |s, p: lsp::ReferenceParams| Ok(s.references(&p)))
            }
            "textDocument/documentLink" => self
                .with(request, |s, p: lsp::DocumentLinkParams| Ok(s.links(&p.text_document.uri))),
            "textDocument/codeLens" => {
                self.with(request, |s, p: lsp::CodeLensParams| Ok(s.lenses(&p.text_document.uri)))
            }
            "workspace/executeCommand" => {
                self.with(request, |s, p: lsp::ExecuteCommandParams| s.execute(&p))
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
        &mut self,
        request: Request,
        handler: impl FnOnce(&mut Server, P) -> Result<R, Failure>,
    ) -> Result<Value, Failure> {
        let params: P = serde_json::from_value(request.params)
            .map_err(|err| (ErrorCode::InvalidParams, format!("bad parameters: {err}")))?;
        let result = handler(self, params)?;
        serde_json::to_value(result).map_err(|err| (ErrorCode::InternalError, err.to_string()))
    }

    /// Applies a notification; says whether diagnostics must be refreshed.
    fn notification(&mut self, notification: &Notification) -> Change {
        let params = notification.params.clone();
        match notification.method.as_str() {
            "textDocument/didOpen" => {
                let Ok(p) = serde_json::from_value::<lsp::DidOpenTextDocumentParams>(params) else {
                    return Change::None;
                };
                self.open(p.text_document.uri, p.text_document.text, p.text_document.version);
                Change::Now
            }
            "textDocument/didChange" => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeTextDocumentParams>(params)
                else {
                    return Change::None;
                };
                if self.change(&p) { Change::Later } else { Change::None }
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
                self.close(&p.text_document.uri);
                Change::Closed(p.text_document.uri)
            }
            _ => Change::None,
        }
    }

    /// Opens (or reopens) a document.
    pub fn open(&mut self, uri: Url, text: String, version: i32) {
        let location = self.locate(&uri);
        if let Some(location) = &location {
            self.overlay.set(location, text.as_str());
        }
        self.docs.insert(uri, Document { text, version, location });
    }

    /// Applies the changes of a `didChange`; `false` when the document is not open or the
    /// change is older than what the server has.
    fn change(&mut self, params: &lsp::DidChangeTextDocumentParams) -> bool {
        let Some(doc) = self.docs.get_mut(&params.text_document.uri) else { return false };
        if params.text_document.version < doc.version {
            return false;
        }
        doc.version = params.text_document.version;
        for change in &params.content_changes {
            match change.range {
                Some(range) => {
                    let start = text::offset(&doc.text, range.start);
                    let end = text::offset(&doc.text, range.end).max(start);
                    doc.text.replace_range(start..end, &change.text);
                }
                None => doc.text.clone_from(&change.text),
            }
        }
        if let Some(location) = &doc.location {
            self.overlay.set(location, doc.text.as_str());
        }
        true
    }

    /// Closes a document: the disk is read again for it.
    pub fn close(&mut self, uri: &Url) {
        if let Some(Document { location: Some(location), .. }) = self.docs.remove(uri) {
            self.overlay.remove(&location);
        }
    }

    /// The location of a `file:` URI in the sandbox, if it is inside a root and on disk.
    fn locate(&self, uri: &Url) -> Option<Location> {
        if uri.scheme() != "file" {
            return None;
        }
        let path = uri.to_file_path().ok()?;
        let location = self.ctx.sandbox().resolve_in_workspace(path.to_str()?).ok()?;
        let stat = self.ctx.sandbox().stat(&location).ok()?;
        (stat.kind == FileKind::File).then_some(location)
    }

    /// The `file:` URI of a location.
    pub(crate) fn uri(&self, location: &Location) -> Option<Url> {
        let root = self.ctx.sandbox().root_path(location.root());
        let path = if location.path().as_str().is_empty() {
            root.to_path_buf()
        } else {
            root.join(location.path())
        };
        Url::from_file_path(path.as_std_path()).ok()
    }

    /// Assembles an open document as `ctx check` does, its unsaved text and that of every
    /// open document it includes winning over the disk.
    pub fn assemble(&self, uri: &Url, sink: &mut dyn io::Write) -> Option<ctx::Assembly> {
        let doc = self.docs.get(uri)?;
        let assembler = self.ctx.assembler();
        match &doc.location {
            Some(location) => {
                let path = self.absolute(location);
                assembler.assemble_file_to(&path, sink).ok()
            }
            None => assembler.assemble_str_to(&doc.text, &display_name(uri), sink).ok(),
        }
    }

    fn absolute(&self, location: &Location) -> String {
        let root = self.ctx.sandbox().root_path(location.root());
        if location.path().as_str().is_empty() {
            root.to_string()
        } else {
            root.join(location.path()).to_string()
        }
    }

    /// The diagnostics of an open document: those the assembly reports in the document
    /// itself, with the codes and messages of `ctx check`, and on each of its references
    /// whose included files have problems, a summary of them.
    pub fn diagnostics(&self, uri: &Url) -> Vec<lsp::Diagnostic> {
        self.check(uri).map(|(diagnostics, _)| diagnostics).unwrap_or_default()
    }

    /// The diagnostics of an open document and what its assembly depends on; `None` when it
    /// is not open or could not be assembled.
    fn check(&self, uri: &Url) -> Option<(Vec<lsp::Diagnostic>, Dependencies)> {
        let doc = self.docs.get(uri)?;
        let assembly = self.assemble(uri, &mut io::sink())?;
        let name = display_name(uri);
        let mut same: HashMap<&str, bool> = HashMap::new();
        let scan = ctx::syntax::scan_with(&doc.text, &self.ctx.assembler().options().syntax);
        let mut out = Vec::new();
        let mut inside = Vec::new();
        for d in &assembly.diagnostics {
            let mine = *same.entry(d.file.as_str()).or_insert_with(|| match &doc.location {
                Some(location) => self
                    .ctx
                    .sandbox()
                    .resolve_in_workspace(&d.file)
                    .is_ok_and(|found| &found == location),
                None => d.file == name,
            });
            if !mine {
                inside.push(d);
                continue;
            }
            let start = text::offset_of_line_column(&doc.text, d.line, d.column);
            out.push(lsp::Diagnostic {
                range: text::range(&doc.text, start, item_end(&doc.text, &scan, start)),
                severity: Some(severity(d.severity)),
                code: Some(lsp::NumberOrString::String(d.code.as_str().to_owned())),
                source: Some("ctx".to_owned()),
                message: d.message.clone(),
                ..lsp::Diagnostic::default()
            });
        }
        out.extend(self.included(doc, &scan, &assembly.references, &inside));
        let path = doc.location.as_ref().map(|location| self.absolute(location));
        let deps = self.ctx.dependencies(path.as_deref(), &assembly.references);
        Some((out, deps))
    }

    /// One diagnostic per reference of the document whose included files have problems: on
    /// the reference, a summary; the problems themselves, in their files, as related
    /// information.
    fn included(
        &self,
        doc: &Document,
        scan: &ctx::syntax::Scan<'_>,
        references: &[ReferenceRecord],
        problems: &[&DiagnosticRecord],
    ) -> Vec<lsp::Diagnostic> {
        /// A reference of the document and what lies below it.
        struct Group<'a> {
            record: &'a ReferenceRecord,
            files: Vec<Location>,
            dir: Option<Location>,
            problems: Vec<(&'a DiagnosticRecord, Option<Location>)>,
        }
        if problems.is_empty() {
            return Vec::new();
        }
        let sandbox = self.ctx.sandbox();
        let mut known: HashMap<String, Option<Location>> = HashMap::new();
        let mut locate = |path: &str| -> Option<Location> {
            known
                .entry(path.to_owned())
                .or_insert_with(|| sandbox.resolve_in_workspace(path).ok())
                .clone()
        };
        // The records are depth first: each of the document's own references (depth 0) comes
        // before the records of what it includes. A failed reference below is the problem of
        // the group it lies in, so that a file included under two references counts under each.
        let mut groups: Vec<Group<'_>> = Vec::new();
        let mut failed: Vec<(usize, &ReferenceRecord)> = Vec::new();
        for record in references {
            if record.depth > 0 && record.error.is_some() && !groups.is_empty() {
                failed.push((groups.len() - 1, record));
            }
            if record.depth == 0 {
                let found = if record.error.is_none() { locate(&record.path) } else { None };
                let (files, dir) = match (found, record.kind) {
                    (Some(location), Kind::File) => (vec![location], None),
                    (Some(location), Kind::Directory) => (Vec::new(), Some(location)),
                    _ => (Vec::new(), None),
                };
                groups.push(Group { record, files, dir, problems: Vec::new() });
            } else if let Some(group) = groups.last_mut()
                && let Some(location) = locate(&record.at.file)
            {
                group.files.push(location);
            }
        }
        let mut seen = BTreeSet::new();
        for &problem in problems {
            let location = locate(&problem.file);
            let below = |group: &Group<'_>| {
                let Some(location) = &location else { return false };
                group.files.contains(location)
                    || group.dir.as_ref().is_some_and(|dir| {
                        dir.root() == location.root() && location.path().starts_with(dir.path())
                    })
            };
            let reference = failed.iter().position(|(_, r)| {
                r.at.file == problem.file
                    && r.at.line == problem.line
                    && r.at.column == problem.column
                    && r.error.as_ref().is_some_and(|e| e.code == problem.code)
            });
            // Else the first reference whose files hold it; a problem in a file met through a
            // glob or a tool has no record of its own: it goes to the first glob, directory or
            // tool of the document.
            let group = match reference {
                Some(n) => Some(failed.remove(n).0),
                None => groups
                    .iter()
                    .position(below)
                    .or_else(|| groups.iter().position(|g| g.record.kind != Kind::File)),
            };
            // A file included twice under one reference reports its problems twice.
            if let Some(n) = group
                && seen.insert((n, &problem.file, problem.line, problem.column, &problem.message))
            {
                groups[n].problems.push((problem, location));
            }
        }
        groups
            .iter()
            .filter(|group| !group.problems.is_empty())
            .map(|group| {
                let at = &group.record.at;
                let start = text::offset_of_line_column(&doc.text, at.line, at.column);
                let first = group
                    .problems
                    .iter()
                    .find(|(p, _)| p.severity == Severity::Error)
                    .unwrap_or(&group.problems[0])
                    .0;
                lsp::Diagnostic {
                    range: text::range(&doc.text, start, item_end(&doc.text, scan, start)),
                    severity: Some(severity(first.severity)),
                    code: Some(lsp::NumberOrString::String(first.code.as_str().to_owned())),
                    source: Some("ctx".to_owned()),
                    message: summary(&group.problems),
                    related_information: Some(
                        group
                            .problems
                            .iter()
                            .filter_map(|(p, location)| self.related(p, location.as_ref()?))
                            .collect(),
                    ),
                    ..lsp::Diagnostic::default()
                }
            })
            .collect()
    }

    /// A problem of an included file as related information: where it is in that file.
    fn related(
        &self,
        problem: &DiagnosticRecord,
        location: &Location,
    ) -> Option<lsp::DiagnosticRelatedInformation> {
        let text = self.read(location)?;
        let start = text::offset_of_line_column(&text, problem.line, problem.column);
        let end = match &problem.source {
            Some(source) if !source.span.is_empty() => start + source.span.len(),
            _ => text[start..].chars().next().map_or(start, |c| start + c.len_utf8()),
        };
        Some(lsp::DiagnosticRelatedInformation {
            location: lsp::Location::new(self.uri(location)?, text::range(&text, start, end)),
            message: format!("{} {}", problem.code.as_str(), problem.message),
        })
    }

    /// Publishes the diagnostics of every open document (an edit to one may change what
    /// another includes).
    fn publish_all(&mut self, connection: &Connection) {
        let uris: Vec<Url> = self.docs.keys().cloned().collect();
        self.publish(connection, uris);
    }

    /// Publishes the diagnostics of the open documents that depend on changed locations (or
    /// whose dependencies are not known).
    fn publish_affected(&mut self, connection: &Connection, changed: &[Location]) {
        let uris: Vec<Url> = self
            .docs
            .keys()
            .filter(|uri| self.deps.get(*uri).is_none_or(|deps| deps.affected_by(changed)))
            .cloned()
            .collect();
        self.publish(connection, uris);
    }

    /// Checks open documents, keeps what each depends on and publishes their diagnostics.
    fn publish(&mut self, connection: &Connection, mut uris: Vec<Url>) {
        uris.sort();
        for uri in uris {
            let diagnostics = match self.check(&uri) {
                Some((diagnostics, deps)) => {
                    self.deps.insert(uri.clone(), deps);
                    diagnostics
                }
                None => {
                    self.deps.remove(&uri);
                    Vec::new()
                }
            };
            let version = self.docs.get(&uri).map(|d| d.version);
            publish(connection, uri, diagnostics, version);
        }
    }

    /// The references of a text with their spans (mentions and path includes).
    pub(crate) fn references_in<'a>(&self, text: &'a str) -> Vec<Found<'a>> {
        let scan = ctx::syntax::scan_with(text, &self.ctx.assembler().options().syntax);
        scan.items
            .into_iter()
            .filter_map(|item| {
                let reference = match item.kind {
                    ItemKind::Mention(reference) => reference,
                    ItemKind::Include(Include::Reference(reference)) => reference,
                    _ => return None,
                };
                Some(Found { start: item.span.start, end: item.span.end, reference })
            })
            .collect()
    }

    /// The reference under the cursor.
    fn reference_at<'a>(&self, text: &'a str, position: lsp::Position) -> Option<Found<'a>> {
        let offset = text::offset(text, position);
        self.references_in(text).into_iter().find(|f| f.start <= offset && offset < f.end)
    }

    /// The directory a document's relative paths start from.
    pub(crate) fn base_of(&self, doc: &Document) -> Location {
        let sandbox = self.ctx.sandbox();
        doc.location.as_ref().and_then(Location::parent).unwrap_or_else(|| sandbox.workspace())
    }

    /// Resolves a written path as the assembler does: from the document's directory, then
    /// from the workspace root.
    pub(crate) fn resolve(&self, written: &str, base: &Location) -> Option<Location> {
        let sandbox = self.ctx.sandbox();
        sandbox.resolve(written, Some(base)).or_else(|_| sandbox.resolve(written, None)).ok()
    }

    /// The text of a location: the overlay's if open, else the disk's, through the sandbox.
    pub(crate) fn read(&self, location: &Location) -> Option<ctx::fs::Text> {
        self.ctx.sandbox().read_text(location).ok()?.text().cloned()
    }

    /// What a reference points at: the file and the lines its selector picks.
    fn target(&self, doc: &Document, found: &Found<'_>) -> Option<(Location, Option<(u32, u32)>)> {
        let base = self.base_of(doc);
        let location = self.resolve(&found.reference.path.unescaped(), &base)?;
        let lines = found.reference.selector.as_ref().and_then(|selector| {
            let content = self.read(&location)?;
            let markdown = ctx::assemble::is_markdown(location.path().as_str());
            let selection = select::select(&content, selector, markdown).ok()?;
            selection.lines.map(|l| (l.start, l.end))
        });
        Some((location, lines))
    }

    fn definition(
        &self,
        params: &lsp::GotoDefinitionParams,
    ) -> Option<lsp::GotoDefinitionResponse> {
        let at = &params.text_document_position_params;
        let doc = self.docs.get(&at.text_document.uri)?;
        let found = self.reference_at(&doc.text, at.position)?;
        let (location, lines) = self.target(doc, &found)?;
        let range = match lines {
            Some((start, end)) => lsp::Range::new(
                lsp::Position::new(start.saturating_sub(1), 0),
                lsp::Position::new(end, 0),
            ),
            None => lsp::Range::default(),
        };
        Some(lsp::GotoDefinitionResponse::Scalar(lsp::Location::new(self.uri(&location)?, range)))
    }

    fn hover(&self, params: &lsp::HoverParams) -> Option<lsp::Hover> {
        let at = &params.text_document_position_params;
        let doc = self.docs.get(&at.text_document.uri)?;
        let found = self.reference_at(&doc.text, at.position)?;
        let (location, _) = self.target(doc, &found)?;
        let path = location.path().as_str();
        let stat = self.ctx.sandbox().stat(&location).ok()?;
        let body = if stat.kind == FileKind::Dir {
            let walk = self.ctx.sandbox().walk(&location).ok()?;
            let names: Vec<String> =
                walk.entries.iter().take(PREVIEW_LINES).map(|e| e.path.to_string()).collect();
            format!("```\n{}\n```", names.join("\n"))
        } else {
            let content = self.read(&location)?;
            let markdown = ctx::assemble::is_markdown(path);
            let selected: Cow<'_, str> = match &found.reference.selector {
                Some(selector) => select::select(&content, selector, markdown).ok()?.text,
                None => Cow::Borrowed(&content),
            };
            let preview = preview(&selected);
            let language = ctx::assemble::render::language(path);
            let fence = ctx::assemble::render::fence(&preview);
            format!("{fence}{language}\n{preview}{fence}")
        };
        let title = format!("**{}**\n\n", if path.is_empty() { "." } else { path });
        Some(lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: format!("{title}{body}"),
            }),
            range: Some(text::range(&doc.text, found.start, found.end)),
        })
    }

    fn links(&self, uri: &Url) -> Vec<lsp::DocumentLink> {
        let Some(doc) = self.docs.get(uri) else { return Vec::new() };
        self.references_in(&doc.text)
            .iter()
            .filter_map(|found| {
                let (location, lines) = self.target(doc, found)?;
                let mut target = self.uri(&location)?;
                if let Some((start, _)) = lines {
                    target.set_fragment(Some(&format!("L{start}")));
                }
                Some(lsp::DocumentLink {
                    range: text::range(&doc.text, found.start, found.end),
                    target: Some(target),
                    tooltip: None,
                    data: None,
                })
            })
            .collect()
    }

    /// Where the file under the cursor (or the document itself) is referenced, in the rule
    /// folders and the open documents.
    fn references(&self, params: &lsp::ReferenceParams) -> Vec<lsp::Location> {
        let at = &params.text_document_position;
        let Some(doc) = self.docs.get(&at.text_document.uri) else { return Vec::new() };
        let wanted = match self.reference_at(&doc.text, at.position) {
            Some(found) => self.target(doc, &found).map(|(location, _)| location),
            None => doc.location.clone(),
        };
        let Some(wanted) = wanted else { return Vec::new() };
        let mut documents: BTreeMap<Url, (String, Location)> = BTreeMap::new();
        let sandbox = self.ctx.sandbox();
        for dir in RULE_DIRS {
            let Ok(location) = sandbox.resolve_in_workspace(dir) else { continue };
            let Ok(walk) = sandbox.walk(&location) else { continue };
            for entry in walk.entries.iter().filter(|e| e.kind == FileKind::File) {
                let (Some(uri), Some(text)) =
                    (self.uri(&entry.location), self.read(&entry.location))
                else {
                    continue;
                };
                let base = entry.location.parent().unwrap_or_else(|| sandbox.workspace());
                documents.insert(uri, (text.to_string(), base));
            }
        }
        for (uri, open) in &self.docs {
            documents.insert(uri.clone(), (open.text.clone(), self.base_of(open)));
        }
        let mut out = Vec::new();
        for (uri, (text, base)) in &documents {
            for found in self.references_in(text) {
                let written = found.reference.path.unescaped();
                if self.resolve(&written, base).as_ref() == Some(&wanted) {
                    out.push(lsp::Location::new(
                        uri.clone(),
                        text::range(text, found.start, found.end),
                    ));
                }
            }
        }
        out
    }

    /// A lens on front matter: the assembled document's size in tokens, and the command that
    /// assembles it.
    fn lenses(&self, uri: &Url) -> Vec<lsp::CodeLens> {
        let Some(doc) = self.docs.get(uri) else { return Vec::new() };
        if !(doc.text.starts_with("---\n") || doc.text.starts_with("---\r\n")) {
            return Vec::new();
        }
        let mut content = Vec::new();
        if self.assemble(uri, &mut content).is_none() {
            return Vec::new();
        }
        let tokens = ctx::assemble::tokens::count(&String::from_utf8_lossy(&content));
        vec![lsp::CodeLens {
            range: lsp::Range::new(lsp::Position::new(0, 0), lsp::Position::new(0, 3)),
            command: Some(lsp::Command {
                title: format!("{tokens} tokens assembled"),
                command: ASSEMBLE_COMMAND.to_owned(),
                arguments: Some(vec![Value::String(uri.to_string())]),
            }),
            data: None,
        }]
    }

    fn execute(&self, params: &lsp::ExecuteCommandParams) -> Result<Value, Failure> {
        if params.command != ASSEMBLE_COMMAND {
            return Err((ErrorCode::InvalidParams, format!("unknown command: {}", params.command)));
        }
        let uri = params
            .arguments
            .first()
            .and_then(Value::as_str)
            .and_then(|s| Url::parse(s).ok())
            .ok_or_else(|| (ErrorCode::InvalidParams, "expected a document URI".to_owned()))?;
        let mut content = Vec::new();
        self.assemble(&uri, &mut content)
            .ok_or_else(|| (ErrorCode::InvalidParams, format!("not an open document: {uri}")))?;
        Ok(Value::String(String::from_utf8_lossy(&content).into_owned()))
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

/// Where the item of a document that starts at `start` ends: the whole item, else the next
/// character.
fn item_end(text: &str, scan: &ctx::syntax::Scan<'_>, start: usize) -> usize {
    scan.items
        .iter()
        .find(|item| item.span.start == start && !matches!(item.kind, ItemKind::Text))
        .map_or_else(
            || text[start..].chars().next().map_or(start, |c| start + c.len_utf8()),
            |item| item.span.end,
        )
}

/// The LSP severity of a ctx severity.
fn severity(severity: Severity) -> lsp::DiagnosticSeverity {
    match severity {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        _ => lsp::DiagnosticSeverity::WARNING,
    }
}

/// Most problems of included files a summary lists.
const SUMMARY_LINES: usize = 10;

/// The message of a summary of problems in included files: `common/bad.md: 1 error:
/// E_NOT_FOUND …` for one problem; the files and the counts, then a line per problem, for
/// several.
fn summary(problems: &[(&DiagnosticRecord, Option<Location>)]) -> String {
    let errors = problems.iter().filter(|(p, _)| p.severity == Severity::Error).count();
    let warnings = problems.len() - errors;
    let mut counts = Vec::new();
    for (n, what) in [(errors, "error"), (warnings, "warning")] {
        match n {
            0 => {}
            1 => counts.push(format!("1 {what}")),
            n => counts.push(format!("{n} {what}s")),
        }
    }
    let mut files: Vec<&str> = Vec::new();
    for (p, _) in problems {
        if !files.contains(&p.file.as_str()) {
            files.push(&p.file);
        }
    }
    let files = if files.len() > 3 {
        format!("{} and {} more files", files[..3].join(", "), files.len() - 3)
    } else {
        files.join(", ")
    };
    if let [(p, _)] = problems {
        return format!("{files}: {}: {} {}", counts.join(", "), p.code.as_str(), p.message);
    }
    let mut message = format!("{files}: {}", counts.join(", "));
    for (p, _) in problems.iter().take(SUMMARY_LINES) {
        message.push_str(&format!(
            "\n{}:{}:{}: {} {}",
            p.file,
            p.line,
            p.column,
            p.code.as_str(),
            p.message
        ));
    }
    if problems.len() > SUMMARY_LINES {
        message.push_str(&format!("\n… and {} more", problems.len() - SUMMARY_LINES));
    }
    message
}

/// The name of a document outside the sandbox, for its diagnostics.
fn display_name(uri: &Url) -> String {
    uri.path_segments().and_then(|mut s| s.next_back().map(str::to_owned)).unwrap_or_default()
}

/// The first lines of a text, cut to a preview's size.
fn preview(text: &str) -> String {
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        if n == PREVIEW_LINES || out.len() + line.len() > PREVIEW_BYTES {
            out.push_str("…\n");
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Sends the diagnostics of a document.
fn publish(
    connection: &Connection,
    uri: Url,
    diagnostics: Vec<lsp::Diagnostic>,
    version: Option<i32>,
) {
    let params = lsp::PublishDiagnosticsParams { uri, diagnostics, version };
    let note = Notification::new("textDocument/publishDiagnostics".to_owned(), params);
    send(connection, Message::Notification(note));
}

fn send(connection: &Connection, message: Message) {
    // A client that went away ends the loop at the next receive.
    let _ = connection.sender.send(message);
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
