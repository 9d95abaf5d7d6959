//! Diagnostics of a scan: a stable code (from ctx-diagnostics), a message and a position.

use std::fmt;

pub use ctx_diagnostics::{Code, Severity};

use crate::ast::{Position, Span};

/// A problem found in a text, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable code.
    pub code: Code,
    /// A lower-case message without a final period.
    pub message: String,
    /// The bytes it is about.
    pub span: Span,
    /// Where the span starts.
    pub pos: Position,
}

impl Diagnostic {
    /// The severity of the code.
    pub fn severity(&self) -> Severity {
        self.code.severity()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}[{}]: {}", self.pos, self.severity().name(), self.code, self.message)
    }
}
