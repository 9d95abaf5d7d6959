//! [`ToolError`]: why a tool call failed, with its diagnostic code.

use std::fmt;

use ctx_syntax::Code;

/// Why a tool call failed, with its diagnostic code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// The code: `E_TOOL_ARGS` for bad arguments, or a sandbox code such as `E_NOT_FOUND`.
    pub code: Code,
    /// A lower-case message.
    pub message: String,
}

impl ToolError {
    /// An `E_TOOL_ARGS` error.
    pub fn args(message: impl Into<String>) -> ToolError {
        ToolError { code: Code::ToolArgs, message: message.into() }
    }

    /// The error of a sandbox refusal.
    pub fn from_fs(err: &ctx_fs::Error) -> ToolError {
        ToolError { code: err.code(), message: err.to_string() }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}
