//! A Model Context Protocol server for ctx, built on `rmcp`, the official Rust SDK: JSON-RPC
//! 2.0 over a byte stream (newline-delimited messages, the MCP stdio transport), protocol
//! revisions `2024-11-05` to [`PROTOCOL_VERSION`].
//!
//! Tools: `assemble` (a rule document, with macros and a format), `expand` (a prompt),
//! `check` (diagnostics of documents), `refs` (the reference tree of a document), `resolve`
//! (how paths resolve), `sources` (the build folder's source index) and `suggest` (the files
//! that matter for a prompt), `rules` (what a coding agent loads from its rule files).
//! Resources: the rule files of `.ctx/rules` and `.mutsumi/rules` in the workspace root, and
//! each coding agent's rule files of the workspace (`CLAUDE.md`, `AGENTS.md`, `.cursor/rules`
//! …).
//!
//! Properties:
//! - every path argument goes through the [`ctx::Context`]'s sandbox, so nothing outside the
//!   roots is read or named;
//! - a document that cannot be assembled at all is an MCP tool error (`isError: true`) whose
//!   text starts with the ctx code (`E_NOT_FOUND: …`); problems inside a document are
//!   diagnostics in the result, with their codes, as `ctx --format json` prints them;
//! - one bad message never ends the session: a request gets a JSON-RPC error, a message that
//!   is not JSON is skipped, and a notification before `initialize` is dropped;
//! - the ctx calls are synchronous and run on tokio's blocking pool, so a slow `suggest`
//!   does not hold up the other requests; answers may come in another order than the
//!   requests (a client matches them by id).
//!
//! [`serve`] runs one session on async streams, inside a tokio runtime; [`run`] does the same
//! on a runtime of its own (what the tests call) and [`run_stdio`] is what `ctx mcp` calls.
//!
//! # Example
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # std::fs::write(dir.path().join("a.md"), "hello\n")?;
//! let ctx = ctx::Context::builder().root(dir.path()).build()?;
//! let input = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#, "\n",
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"assemble","arguments":{"path":"a.md"}}}"#, "\n",
//! );
//! let mut output = Vec::new();
//! ctx_mcp::run(&ctx, input.as_bytes(), &mut output)?;
//! assert!(String::from_utf8(output)?.contains("hello"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod agents;
mod server;
mod tools;

use std::fmt;
use std::future::Future;
use std::io;

use ctx::{Context, Deferred};
use rmcp::ServiceExt;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, JsonRpcError,
    JsonRpcMessage, ProtocolVersion, RequestId,
};
use rmcp::service::{RoleServer, ServerInitializeError, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

pub use server::Server;

/// The newest protocol revision this server speaks, and the one it answers with when a
/// client asks for a revision it does not know.
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The folders whose files are offered as resources.
pub const RULE_DIRS: &[&str] = &[".ctx/rules", ".mutsumi/rules"];

/// Why a session stopped with an error.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The tokio runtime could not be started.
    Runtime(io::Error),
    /// The handshake failed: the first request was not `initialize`, the client asked for
    /// a revision with no `initialize`, or the streams failed before it was answered.
    Handshake(Box<ServerInitializeError>),
    /// The task that serves the session panicked or was cancelled.
    Task(tokio::task::JoinError),
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Runtime(err) => write!(f, "cannot start the model context server: {err}"),
            ErrorKind::Handshake(err) => {
                write!(f, "model context protocol handshake failed: {err}")
            }
            ErrorKind::Task(err) => write!(f, "model context session failed: {err}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Runtime(err) => Some(err),
            ErrorKind::Handshake(err) => Some(&**err),
            ErrorKind::Task(err) => Some(err),
        }
    }
}

/// Serves one MCP session: messages read from `input`, one JSON object per line, answers
/// written to `output`, until `input` ends and the calls under way are answered.
/// Must be called inside a tokio runtime (the session is a task of its own).
///
/// A client that leaves before `initialize` is not an error.
///
/// # Errors
///
/// When the handshake fails or the session's task panics.
pub async fn serve<R, W>(ctx: impl Into<Deferred>, input: R, output: W) -> Result<(), Error>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let transport = BeforeInitialize::new(AsyncRwTransport::new_server(input, output));
    let session = match Server::deferred(ctx.into()).serve(transport).await {
        Ok(session) => session,
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(err) => return Err(Error { kind: ErrorKind::Handshake(Box::new(err)) }),
    };
    session.waiting().await.map_err(|err| Error { kind: ErrorKind::Task(err) })?;
    Ok(())
}

/// [`serve`] on a current-thread runtime of its own, for callers without one; `input` and
/// `output` are borrowed for the session (a byte slice and a `Vec<u8>` will do).
///
/// # Errors
///
/// As [`serve`], and when the runtime cannot be started.
pub fn run<R, W>(ctx: &Context, input: R, output: W) -> Result<(), Error>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    run_deferred(&Deferred::from(ctx.clone()), input, output)
}

/// [`run`] over a context whose source index may still be read in the background
/// ([`ctx::ContextBuilder::build_deferred`]): calls are answered at once, through the index
/// once it is there.
///
/// # Errors
///
/// As [`run`].
pub fn run_deferred<R, W>(ctx: &Deferred, mut input: R, mut output: W) -> Result<(), Error>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    // The session needs owned streams; pipes pump the borrowed ones through.
    const PIPE: usize = 64 * 1024;
    block_on(async {
        let (server_in, mut feed) = tokio::io::duplex(PIPE);
        let (mut drain, server_out) = tokio::io::duplex(PIPE);
        let pump_in = async move {
            // A session that ends early closes its side; the rest of the input is not read.
            let _ = tokio::io::copy(&mut input, &mut feed).await;
            let _ = feed.shutdown().await;
        };
        let pump_out = async move {
            let _ = tokio::io::copy(&mut drain, &mut output).await;
            let _ = output.flush().await;
        };
        let (result, (), ()) =
            tokio::join!(serve(ctx.clone(), server_in, server_out), pump_in, pump_out);
        result
    })
}

/// [`serve`] on standard input and output, on a runtime of its own: what `ctx mcp` runs.
///
/// # Errors
///
/// As [`run`].
pub fn run_stdio(ctx: &Deferred) -> Result<(), Error> {
    block_on(serve(ctx.clone(), tokio::io::stdin(), tokio::io::stdout()))
}

/// Runs `session` to its end on a current-thread runtime (the ctx calls go to the blocking
/// pool, so one thread is enough for the protocol).
fn block_on(session: impl Future<Output = Result<(), Error>>) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Error { kind: ErrorKind::Runtime(err) })?;
    let result = runtime.block_on(session);
    // A session that ended on an error may leave a read of standard input pending on the
    // blocking pool; it is not waited for.
    runtime.shutdown_background();
    result
}

/// A transport that lets only requests through until `initialize` has arrived, and that
/// reports the end of the input only once every request received has been answered or
/// cancelled, or [`DRAIN`] has passed.
///
/// rmcp ends a session whose first message is a notification or a response; a client that
/// sends `notifications/initialized` too early, or answers something we never asked, keeps
/// its session this way (a notification gets no answer in any case).
///
/// rmcp also ends the session as soon as the input ends, dropping the answers of calls still
/// under way: a client that writes its requests and closes its side (`ctx mcp < script`)
/// would lose them. So after the end of the input, `receive` waits until every request
/// received has its answer (a result or an error) or was cancelled by the client (which gets
/// no answer), for at most [`DRAIN`].
struct BeforeInitialize<T> {
    inner: T,
    initialized: bool,
    /// The input has ended.
    ended: bool,
    /// The ids of the requests received and neither answered nor cancelled yet.
    pending: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<RequestId>>>,
    /// Woken at each answer sent and each request cancelled.
    answered: std::sync::Arc<tokio::sync::Notify>,
}

/// How long the calls under way may take to be answered once the input has ended.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

impl<T> BeforeInitialize<T> {
    fn new(inner: T) -> BeforeInitialize<T> {
        BeforeInitialize {
            inner,
            initialized: false,
            ended: false,
            pending: Default::default(),
            answered: Default::default(),
        }
    }

    /// `id` is answered or cancelled: no longer under way.
    fn settle(
        pending: &std::sync::Mutex<std::collections::HashSet<RequestId>>,
        answered: &tokio::sync::Notify,
        id: &RequestId,
    ) {
        pending.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        answered.notify_waiters();
    }
}

/// Waits until no request is `pending`, woken by `answered`.
async fn drained(
    pending: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<RequestId>>>,
    answered: std::sync::Arc<tokio::sync::Notify>,
) {
    loop {
        let woken = answered.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if pending.lock().unwrap_or_else(|e| e.into_inner()).is_empty() {
            return;
        }
        woken.await;
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for BeforeInitialize<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let sent = self.inner.send(item);
        let (pending, answered) = (self.pending.clone(), self.answered.clone());
        async move {
            let result = sent.await;
            if let Some(id) = id {
                Self::settle(&pending, &answered, &id);
            }
            result
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.ended {
                let drain = drained(self.pending.clone(), self.answered.clone());
                // A call that outlives the wait is not answered: the client has left.
                let _ = tokio::time::timeout(DRAIN, drain).await;
                return None;
            }
            let Some(message) = self.inner.receive().await else {
                self.ended = true;
                continue;
            };
            if !self.initialized {
                let JsonRpcMessage::Request(request) = &message else { continue };
                match request.request {
                    ClientRequest::InitializeRequest(_) => self.initialized = true,
                    ClientRequest::PingRequest(_) => {}
                    // Any other request waits for the handshake, even one that carries the
                    // `_meta` of a revision without one: those revisions are not offered.
                    _ => {
                        let why = "the session is not initialized: send initialize first";
                        let error = ErrorData::invalid_params(why, None);
                        let answer = JsonRpcError::new(Some(request.id.clone()), error);
                        if self.inner.send(JsonRpcMessage::Error(answer)).await.is_err() {
                            return None;
                        }
                        continue;
                    }
                }
            }
            match &message {
                JsonRpcMessage::Request(request) => {
                    self.pending
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(request.id.clone());
                }
                // A cancelled request gets no answer (rmcp drops it): not under way any more.
                JsonRpcMessage::Notification(notification) => {
                    if let ClientNotification::CancelledNotification(cancel) =
                        &notification.notification
                        && let Some(id) = &cancel.params.request_id
                    {
                        Self::settle(&self.pending, &self.answered, id);
                    }
                }
                _ => {}
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
