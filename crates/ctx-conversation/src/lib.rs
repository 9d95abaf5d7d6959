//! Conversations: what an agent sends a model, built from the project's rules, earlier turns
//! and the user's prompt with its images, in the request shapes of the chat APIs.
//!
//! - [`rules`]: the rules folder (`.ctx/rules`, or mutsumi's `.mutsumi/rules`), the active
//!   rules, and `ctx init`;
//! - [`history`]: mai's history file summarised within a token budget, transcripts of
//!   OpenAI-style messages (JSON or JSON Lines), and appending a turn;
//! - [`image`]: image references in prompts, read through the sandbox and checked by their
//!   content;
//! - [`messages`]: the [`Conversation`] and its request body for OpenAI or Anthropic.
//!
//! Every file is read through a [`ctx_fs::Sandbox`] and written through a [`ctx_fs::Store`];
//! the facade's `Context::conversation` puts the pieces together.

pub mod history;
pub mod image;
pub mod messages;
pub mod rules;

use std::fmt;

use ctx_diagnostics::Code;

pub use messages::{Conversation, ImagePart, Provider};

/// Why a piece of a conversation could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: Option<Code>,
    message: String,
}

impl Error {
    pub(crate) fn new(code: Code, message: String) -> Error {
        Error { code: Some(code), message }
    }

    pub(crate) fn usage(message: String) -> Error {
        Error { code: None, message }
    }

    pub(crate) fn fs(err: ctx_fs::Error) -> Error {
        Error { code: Some(err.code()), message: err.to_string() }
    }

    /// An error with a message and no code, for callers that put pieces together.
    pub fn from_message(message: &str) -> Error {
        Error { code: None, message: message.to_owned() }
    }

    /// An error with its code and message, for callers that put pieces together.
    pub fn with_code(code: Code, message: &str) -> Error {
        Error { code: Some(code), message: message.to_owned() }
    }

    /// The code, when the error has one (a bad selection or argument has none).
    pub fn code(&self) -> Option<Code> {
        self.code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A problem that does not stop the conversation: a skipped transcript line, an image left
/// out, a history cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Its code (`W_HISTORY`, `E_IMAGE`, `E_NOT_FOUND`…).
    pub code: Code,
    /// What happened, naming the file and line where there is one.
    pub message: String,
    /// Where in the prompt it is about, for a problem with one of its references (an image
    /// that cannot be attached: the line and column of its `![…](…)` or `@path`).
    pub at: Option<ctx_syntax::Position>,
}

impl Warning {
    /// A warning with its code and message.
    pub fn new(code: Code, message: String) -> Warning {
        Warning { code, message, at: None }
    }

    /// A warning about the reference of the prompt at `at`.
    pub fn at(code: Code, message: String, at: ctx_syntax::Position) -> Warning {
        Warning { code, message, at: Some(at) }
    }
}
