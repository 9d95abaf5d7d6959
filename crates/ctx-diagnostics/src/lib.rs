//! The stable diagnostic codes and severities of ctx, shared by every crate of the workspace.
//!
//! Properties:
//! - one [`Code`] per code of the specification (syntax.md, assembly.md, cli.md), from the
//!   scanner's `W_UNTERMINATED` to the sandbox's `E_PERMISSION`, so a code is never produced
//!   or compared as a string outside serialisation;
//! - no dependencies: the grammar, the sandbox and everything above them can use it.
//!
//! # Example
//!
//! ```
//! use ctx_diagnostics::{Code, Severity};
//!
//! assert_eq!(Code::NotFound.as_str(), "E_NOT_FOUND");
//! assert_eq!(Code::Limit.severity(), Severity::Warning);
//! assert_eq!(Code::from_name("E_IO"), Some(Code::Io));
//! ```

use std::fmt;

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

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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

            /// Looks a code up by its text (for reading serialised output back).
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
    /// A path found under several roots, or a file name that matches several files of the
    /// source index.
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
    /// The operating system refused access to a file or directory.
    Permission = "E_PERMISSION", Error;
    /// Any other input/output failure while opening, reading or listing.
    Io = "E_IO", Error;
    /// A file over the size cap.
    TooLarge = "E_TOO_LARGE", Error;
    /// Binary content, left out.
    Binary = "W_BINARY", Warning;
    /// Text that was not UTF-8 (UTF-16 or UTF-32, or a legacy encoding such as windows-1252,
    /// GBK or Shift_JIS), read as text decoded from the encoding the message names.
    Encoding = "W_ENCODING", Warning;
    /// An image reference whose file is not an image of the kinds a model takes (PNG, JPEG,
    /// GIF, WebP), or whose extension names another kind than its content.
    Image = "E_IMAGE", Error;
    /// A history or transcript entry that does not parse, reported with its line and
    /// skipped.
    History = "W_HISTORY", Warning;
    /// A line range that is empty, reversed or starts past the end of the file, or a range
    /// on something that is not a file.
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
    /// A listing (a walk, `ls`, `tree`, `glob`, `grep`) cut at an entry limit, or entries
    /// skipped; the output says how many.
    Limit = "W_LIMIT", Warning;
    /// A setting that cannot be used: a root that cannot be opened, a deny glob that does
    /// not parse.
    Config = "E_CONFIG", Error;
    /// Roots outside the workspace that a project file asks for (a repository's `ctx.toml`, a
    /// solution's source folders) and the user has not trusted; they are not opened.
    Untrusted = "W_UNTRUSTED", Warning;
    /// A setting of a project's own configuration that was ignored: a bound it may lower but
    /// not raise, a root the root rule refuses.
    ConfigIgnored = "W_CONFIG", Warning;
    /// A problem of an out-of-source build's project files: a folder that is missing or is a
    /// file, a project that cannot be read, a limit reached; the rest of the index is kept.
    Sources = "W_SOURCES", Warning;
    /// An agent's rule file whose front matter that agent cannot read (invalid YAML, not a
    /// mapping): the agent ignores the file, or its scoping, as it really does.
    RulesFrontMatter = "E_RULES_FRONT_MATTER", Error;
    /// A front-matter key of an agent's rule file with a value of the wrong type
    /// (`alwaysApply: "true"`, a string where the agent wants a list).
    RulesType = "E_RULES_TYPE", Error;
    /// A glob of an agent's rule file that the agent will not parse, or that YAML reads as
    /// something else (an unquoted `*` is an alias).
    RulesGlob = "E_RULES_GLOB", Error;
    /// An import of an agent's rule file that does not resolve: a missing file, or one the
    /// agent will not import.
    RulesImport = "E_RULES_IMPORT", Error;
    /// An import past the agent's depth limit, left out or as text.
    RulesDepth = "W_RULES_DEPTH", Warning;
    /// An import cycle, or a file imported again: the agent loads it once.
    RulesCycle = "W_RULES_CYCLE", Warning;
    /// An import that leaves the project: the agent refuses it, or reads it only once the
    /// user approved it; ctx never reads it.
    RulesOutside = "W_RULES_OUTSIDE", Warning;
    /// A rule file past an agent's size cap: the agent cuts it or drops it; the message says
    /// how much is lost.
    RulesCap = "W_RULES_CAP", Warning;
    /// A `SKILL.md` whose name or description breaks the Agent Skills rules.
    RulesSkill = "E_RULES_SKILL", Error;
    /// A rule file, or a key of one, that the agent ignores (a `.md` file in `.cursor/rules`,
    /// `paths:` for Cline, a trigger it does not know).
    RulesIgnored = "W_RULES_IGNORED", Warning;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_severity() {
        for &code in Code::ALL {
            assert_eq!(Code::from_name(code.as_str()), Some(code));
            let expected = if code.as_str().starts_with("E_") {
                Severity::Error
            } else {
                assert!(code.as_str().starts_with("W_"), "{code}");
                Severity::Warning
            };
            assert_eq!(code.severity(), expected, "{code}");
        }
        assert_eq!(Code::from_name("E_NOPE"), None);
    }

    #[test]
    fn codes_are_distinct() {
        let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len());
    }
}
