//! Diagnostics: stable codes, severities, messages and positions.

use std::fmt;

use crate::ast::{Position, Span};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Something worth knowing; the run is still clean.
    Warning,
    /// Something failed; the run completes but exits with status 1.
    Error,
}

impl Severity {
    /// `warning` or `error`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal, $sev:ident;)*) => {
        /// Every diagnostic code of the ctx specification. The codes are stable API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as written in output, such as `E_NOT_FOUND`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }

            /// The severity that goes with the code: `E_` codes are errors, `W_` codes warnings.
            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$sev,)*
                }
            }

            /// Looks a code up by its text.
            pub fn from_name(name: &str) -> Option<Code> {
                match name {
                    $($text => Some(Code::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

codes! {
    /// An `@[` or `@{` without its closing bracket; left as text.
    Unterminated = "W_UNTERMINATED", Warning;
    /// A directive body that is none of the known forms, or a misplaced `else`/`elif`/`endif`,
    /// or a block left open at the end of a file.
    Directive = "E_DIRECTIVE", Error;
    /// A macro used but never defined.
    UndefinedMacro = "W_UNDEFINED_MACRO", Warning;
    /// A regular expression that does not compile or is too large.
    Regex = "E_REGEX", Error;
    /// A mention whose path does not exist; its text is kept.
    Unresolved = "W_UNRESOLVED", Warning;
    /// A URL or other scheme where a path was expected.
    Scheme = "E_SCHEME", Error;
    /// A file name that matches several files of the source index.
    Ambiguous = "E_AMBIGUOUS", Error;
    /// A path that leaves every allowed root.
    Outside = "E_OUTSIDE", Error;
    /// A path that names a denied entry.
    Denied = "E_DENIED", Error;
    /// A FIFO, socket or device.
    NotRegular = "E_NOT_REGULAR", Error;
    /// A path with forbidden characters, names or lengths.
    BadPath = "E_BAD_PATH", Error;
    /// A missing file or a dangling link.
    NotFound = "E_NOT_FOUND", Error;
    /// A file over the size cap.
    TooLarge = "E_TOO_LARGE", Error;
    /// Binary content, left out.
    Binary = "W_BINARY", Warning;
    /// A line range that is empty, reversed or starts past the end of the file.
    Range = "E_RANGE", Error;
    /// A file included from itself, directly or through others.
    Cycle = "E_CYCLE", Error;
    /// Includes nested deeper than the depth limit.
    Depth = "E_DEPTH", Error;
    /// The output-bytes or include-count budget is spent.
    Budget = "E_BUDGET", Error;
    /// Front matter that is not valid YAML or exceeds its limits.
    FrontMatter = "E_FRONT_MATTER", Error;
    /// Front matter values of the wrong type, dropped.
    FrontMatterValue = "W_FRONT_MATTER", Warning;
    /// Tool arguments that are not valid JSON or not what the tool takes.
    ToolArgs = "E_TOOL_ARGS", Error;
    /// A tool that does not exist or is switched off.
    ToolUnknown = "E_TOOL_UNKNOWN", Error;
    /// Content that looked like a wrapper tag and was escaped.
    Escaped = "W_ESCAPED", Warning;
    /// Hidden Unicode characters made visible.
    HiddenText = "W_HIDDEN_TEXT", Warning;
    /// Terminal control characters made visible.
    Control = "W_CONTROL", Warning;
    /// Content cut or left out to stay within the token budget.
    TokenBudget = "W_BUDGET", Warning;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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
