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
//!   the end (or inside a surrogate pair);
//! - a request about a document the server does not know, or with bad parameters, gets an
//!   empty answer or an error response; the loop goes on;
//! - the handshake is tolerant (see [`Server::serve`]): only `exit` ends the loop;
//! - the client cannot make it panic or grow without bound: on a byte stream
//!   ([`run_stdio`], [`run_io`]) a message's length is checked against
//!   [`Config::max_message_bytes`] before its body is read, and the body is read as it
//!   comes; a body that is not JSON gets a parse error and the session goes on; a document
//!   larger than the sandbox's cap of a file read keeps no text and gets one `E_TOO_LARGE`
//!   diagnostic; at most 1 000 diagnostics are published for a document;
//! - text taken from files (hover previews, completion labels, diagnostic messages) has its
//!   hidden and control characters made visible, as assembled content does.
//!
//! Modules: `server` (the loop and the dispatch), `documents` (the open documents and the
//! overlay), `diagnostics` (checks), `handlers` and `complete` (requests), `workspace` (the
//! lookups they share), `text` (positions), `protocol` (capabilities and shared pieces of
//! the protocol), `transport`, `frame` and `decode` (the byte stream).
//!
//! [`run`] serves one [`lsp_server::Connection`], so a test drives the server in-process
//! through [`lsp_server::Connection::memory`]; [`run_io`] serves a pair of byte streams
//! through the framing `ctx lsp` uses, and [`run_stdio`] is what `ctx lsp` calls.

mod complete;
mod decode;
mod diagnostics;
mod documents;
mod frame;
mod handlers;
mod protocol;
mod server;
mod text;
mod transport;
mod workspace;

use std::fmt;
use std::io::{Read, Write};

use lsp_server::Connection;

pub use protocol::{ASSEMBLE_COMMAND, Config, DEFAULT_MAX_MESSAGE_BYTES, Ending};
pub use server::Server;

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
    /// Reading the input or writing the output failed.
    Io(std::io::Error),
    /// The client sent bytes that cannot be framed as a message (the reason is given); a
    /// frame that cannot be read cannot be skipped, so the session ended.
    Framing(String),
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
            ErrorKind::Framing(why) => write!(
                f,
                "the language server stopped: the client sent a message it cannot read: {why}"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Context(err) => Some(err),
            ErrorKind::Io(err) => Some(err),
            ErrorKind::Framing(_) => None,
        }
    }
}

/// What a decoded message may cost besides its document texts.
const DECODED_BYTES: u64 = 16 << 20;

/// Serves the Language Server Protocol on standard input and output until the client
/// says `exit` (or closes the input); [`Ending::exit_code`] is the status to exit with.
///
/// # Errors
///
/// When the roots cannot be opened, the streams fail or the client sends a message that
/// cannot be framed.
pub fn run_stdio(builder: ctx::ContextBuilder, config: &Config) -> Result<Ending, Error> {
    run_io(std::io::stdin(), std::io::stdout(), builder, config)
}

/// Serves the Language Server Protocol on a pair of byte streams, framed as on standard
/// input and output (see [`run_stdio`]).
///
/// # Errors
///
/// When the roots cannot be opened, the streams fail or the client sends a message that
/// cannot be framed.
pub fn run_io<R, W>(
    input: R,
    output: W,
    builder: ctx::ContextBuilder,
    config: &Config,
) -> Result<Ending, Error>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let server = server(builder)?;
    let max_string = server.context().sandbox().limits().max_file_bytes;
    let kept = max_string.min(config.max_message_bytes).saturating_mul(2);
    let limits = transport::Limits {
        max_message: config.max_message_bytes,
        decode: decode::Limits {
            max_string,
            max_decoded: usize::try_from(DECODED_BYTES.saturating_add(kept)).unwrap_or(usize::MAX),
        },
    };
    let (connection, threads) = transport::spawn(input, output, limits)
        .map_err(|err| Error { kind: ErrorKind::Io(err) })?;
    let ending = server.serve(&connection, config);
    drop(connection);
    threads.join().map_err(|failed| Error {
        kind: match failed {
            transport::Failed::Framing(frame::FrameError::Io(err)) | transport::Failed::Io(err) => {
                ErrorKind::Io(err)
            }
            transport::Failed::Framing(err) => ErrorKind::Framing(err.to_string()),
        },
    })?;
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
    Ok(server(builder)?.serve(connection, config))
}

/// A server over the context `builder` makes, with an overlay for the open documents.
fn server(builder: ctx::ContextBuilder) -> Result<Server, Error> {
    let overlay = ctx::fs::Overlay::new();
    // The source index of an out-of-source build is read off the request path.
    let ctx = builder
        .overlay(overlay.clone())
        .build_deferred()
        .map_err(|err| Error { kind: ErrorKind::Context(err) })?;
    Ok(Server::deferred(ctx, overlay))
}
