//! The server's configuration, what it tells the client it can do, how a session ends, and
//! the small pieces of the protocol the other modules share. A leaf: it uses no other module
//! of the crate.

use std::time::Duration;

use lsp_server::{Connection, ErrorCode, Message, Notification};
use lsp_types as lsp;
use lsp_types::Url;
use serde_json::Value;

/// The command that returns the assembled document: arguments `[uri]`.
pub const ASSEMBLE_COMMAND: &str = "ctx.assemble";

/// The key of the object that stands for a string too long to keep
/// ([`too_large_marker`]).
const TOO_LARGE_KEY: &str = "ctx/tooLargeBytes";

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

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct Config {
    /// How long the buffer must rest after a change before it is checked again.
    pub debounce: Duration,
    /// The largest message read from a byte stream, in bytes (default 64 MiB; `u64::MAX`
    /// for no cap); a larger `Content-Length` is answered with an error and ends the
    /// session. Either way a body is read as it comes, never allocated ahead of its bytes.
    pub max_message_bytes: u64,
}

/// The default of [`Config::max_message_bytes`].
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 64 << 20;

impl Default for Config {
    fn default() -> Config {
        Config {
            debounce: Duration::from_millis(200),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

/// A failed request: an LSP error code and a message.
pub(crate) type Failure = (ErrorCode, String);

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

/// What the decoder puts in place of a string longer than the document cap: an object
/// holding the string's length, so the text itself is never copied.
pub(crate) fn too_large_marker(bytes: u64) -> Value {
    serde_json::json!({ TOO_LARGE_KEY: bytes })
}

/// If `value` is a [`too_large_marker`], replaces it with an empty string and returns the
/// length it stood for.
pub(crate) fn take_too_large(value: &mut Value) -> Option<u64> {
    let bytes = value.as_object()?.get(TOO_LARGE_KEY)?.as_u64()?;
    *value = Value::String(String::new());
    Some(bytes)
}

/// Sends the diagnostics of a document.
pub(crate) fn publish(
    connection: &Connection,
    uri: Url,
    diagnostics: Vec<lsp::Diagnostic>,
    version: Option<i32>,
) {
    let params = lsp::PublishDiagnosticsParams { uri, diagnostics, version };
    let note = Notification::new("textDocument/publishDiagnostics".to_owned(), params);
    send(connection, Message::Notification(note));
}

/// Sends a message; a client that went away ends the loop at the next receive.
pub(crate) fn send(connection: &Connection, message: Message) {
    let _ = connection.sender.send(message);
}
