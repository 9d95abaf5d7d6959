//! A language server for ctx rule documents (Markdown, text and `.mdc` files), over the
//! Language Server Protocol, built on `lsp-server` and `lsp-types` (the pair rust-analyzer
//! uses: a synchronous loop over a channel of messages, no async runtime).
//!
//! Features: diagnostics of the unsaved buffer (debounced, the codes and messages of
//! `ctx check`, the problems of included files summarised on the reference that includes
//! them), completion after `@`, `@"`, `@[` and `@{`, go to definition, document links, hover
//! previews, references of a file across the rule set, an `ctx.assemble` command and a code
//! lens with the assembled size in tokens on front matter. Files changed on disk are
//! reported by the client's watchers (`workspace/didChangeWatchedFiles`, registered
//! dynamically) and check again the open documents that depend on them.
//!
//! Properties:
//! - every read goes through the context's sandbox; open documents are served from a
//!   [`ctx::fs::Overlay`], after the same checks as a disk read, so an open included
//!   document's unsaved text wins over the disk;
//! - positions are UTF-16 code units as LSP requires, clamped when a client sends one past
//!   the end;
//! - a request about a document the server does not know, or with bad parameters, gets an
//!   empty answer or an error response; the loop goes on;
//! - the handshake is tolerant (see [`Server::serve`]): only `exit` ends the loop.
//!
//! [`run`] serves one [`lsp_server::Connection`], so a test drives the server in-process
//! through [`lsp_server::Connection::memory`]; [`run_stdio`] is what `ctx lsp` calls.

mod complete;
mod server;
mod text;

use std::fmt;
use std::time::Duration;

use lsp_server::Connection;

pub use server::{ASSEMBLE_COMMAND, Ending, Server};

/// Why the server stopped with an error.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The context (its roots) could not be built.
    Context(ctx::Error),
    /// The standard input or output threads failed.
    Io(std::io::Error),
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
            ErrorKind::Context(err) => write!(f, "cannot start the language server: {err}"),
            ErrorKind::Io(err) => write!(f, "language server input or output failed: {err}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Context(err) => Some(err),
            ErrorKind::Io(err) => Some(err),
        }
    }
}

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct Config {
    /// How long the buffer must rest after a change before it is checked again.
    pub debounce: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config { debounce: Duration::from_millis(200) }
    }
}

/// Serves the Language Server Protocol on standard input and output until the client
/// says `exit` (or closes the input); [`Ending::exit_code`] is the status to exit with.
///
/// # Errors
///
/// When the roots cannot be opened or the streams fail.
pub fn run_stdio(builder: ctx::ContextBuilder) -> Result<Ending, Error> {
    let (connection, threads) = Connection::stdio();
    let ending = run(&connection, builder, &Config::default())?;
    drop(connection);
    threads.join().map_err(|err| Error { kind: ErrorKind::Io(err) })?;
    Ok(ending)
}

/// Serves one connection: the `initialize` handshake, then requests and notifications until
/// `exit` (or until the client goes away). See [`Server::serve`] for what the server
/// tolerates.
///
/// # Errors
///
/// When the roots cannot be opened.
pub fn run(
    connection: &Connection,
    builder: ctx::ContextBuilder,
    config: &Config,
) -> Result<Ending, Error> {
    let overlay = ctx::fs::Overlay::new();
    let ctx = builder
        .overlay(overlay.clone())
        .build()
        .map_err(|err| Error { kind: ErrorKind::Context(err) })?;
    Ok(Server::new(ctx, overlay).serve(connection, config))
}
