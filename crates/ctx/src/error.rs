//! [`Error`]: why a context could not be built or a document not assembled.

use std::fmt;
use std::io;
use std::path::PathBuf;

use ctx_assemble::AssembleError;
use ctx_syntax::Code;

/// Why a context could not be built or a document not assembled.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A root could not be opened, or the top-level document not resolved or read.
    Fs(ctx_fs::Error),
    /// A root path is not UTF-8.
    NotUtf8(PathBuf),
    /// A macro name given to [`ContextBuilder::define`](crate::ContextBuilder::define) is not a valid name.
    BadDefine(String),
    /// The top-level document is binary.
    Binary(String),
    /// Writing the output failed.
    Io(io::Error),
    /// A background task failed.
    Task(String),
    /// The suggestion index could not be built, read or stored.
    Suggest(ctx_suggest::Error),
    /// The solution or compilation database could not be read.
    Sources(ctx_sources::Error),
    /// A piece of a conversation could not be built: a rule, the history, a transcript.
    Conversation(ctx_conversation::Error),
    /// A configuration file that cannot be used.
    Config(String),
    /// An agent's view could not be made: the working folder or the file is not one of the
    /// workspace.
    Rules(ctx_agents::Error),
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The diagnostic code, for the errors that have one (`E_NOT_FOUND`, `E_OUTSIDE`…).
    pub fn code(&self) -> Option<Code> {
        match &self.kind {
            ErrorKind::Fs(err) => Some(err.code()),
            ErrorKind::Binary(_) => Some(Code::Binary),
            ErrorKind::Suggest(err) => Some(err.code()),
            ErrorKind::Sources(err) => Some(err.code()),
            ErrorKind::Conversation(err) => err.code(),
            ErrorKind::Config(_) => Some(Code::Config),
            _ => None,
        }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error { kind }
    }
}

impl From<AssembleError> for Error {
    fn from(err: AssembleError) -> Error {
        let kind = match err {
            AssembleError::Input(err) => ErrorKind::Fs(err),
            AssembleError::Binary(path) => ErrorKind::Binary(path),
            AssembleError::Io(err) => ErrorKind::Io(err),
        };
        Error { kind }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Fs(err) => write!(f, "{}: {err}", err.code()),
            ErrorKind::NotUtf8(path) => write!(f, "path is not UTF-8: {}", path.display()),
            ErrorKind::BadDefine(name) => write!(f, "not a macro name: {name:?}"),
            ErrorKind::Binary(path) => write!(f, "W_BINARY: binary file: {path}"),
            ErrorKind::Io(err) => write!(f, "cannot write the output: {err}"),
            ErrorKind::Task(why) => write!(f, "background task failed: {why}"),
            ErrorKind::Suggest(err) => write!(f, "{}: {err}", err.code()),
            ErrorKind::Sources(err) => write!(f, "{}: {err}", err.code()),
            ErrorKind::Config(why) => f.write_str(why),
            ErrorKind::Rules(err) => write!(f, "{err}"),
            ErrorKind::Conversation(err) => match err.code() {
                Some(code) => write!(f, "{code}: {err}"),
                None => write!(f, "{err}"),
            },
        }
    }
}

/// The message of the error it wraps is part of an error's own message, so it is not its
/// source too (a report that walks the chain would say it twice); [`Error::kind`] gives it.
impl std::error::Error for Error {}
