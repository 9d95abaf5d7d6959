//! The problems of rule files as an agent reads them: one [`Diagnostic`] each, with a stable
//! code of the `E_RULES_*` / `W_RULES_*` family (or `W_HIDDEN_TEXT`), the file, line and
//! column, a lower-case message and a hint.
//!
//! Each diagnostic names its file, so a caller that wants the problems of one file (an
//! editor, `ctx check`) keeps those whose `file` is that file ([`for_file`]).

use ctx_diagnostics::{Code, Severity};
use serde::{Serialize, Serializer};

use crate::agent::Agent;

/// One problem of a rule file, for one agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// The stable code.
    #[serde(serialize_with = "code_str")]
    pub code: Code,
    /// `error` or `warning`, the code's severity.
    #[serde(serialize_with = "severity_str")]
    pub severity: Severity,
    /// The agent whose reading it is about.
    pub agent: Agent,
    /// The file, relative to the workspace root, or `~/…` for the user's own.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// What is wrong, lower-case.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

fn code_str<S: Serializer>(code: &Code, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(code.as_str())
}

fn severity_str<S: Serializer>(severity: &Severity, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(severity.name())
}

impl Diagnostic {
    /// A diagnostic at `line`:`column` of `file`.
    pub(crate) fn new(
        code: Code,
        agent: Agent,
        file: &str,
        (line, column): (u32, u32),
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            agent,
            file: file.to_owned(),
            line: line.max(1),
            column: column.max(1),
            message: message.into(),
            hint: None,
        }
    }

    /// The same, with a hint.
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }
}

/// The diagnostics about `file` (as ctx names it: relative to the workspace root).
pub fn for_file<'a>(
    diagnostics: &'a [Diagnostic],
    file: &'a str,
) -> impl Iterator<Item = &'a Diagnostic> + 'a {
    diagnostics.iter().filter(move |d| d.file == file)
}

/// Sorts diagnostics by file, line and column and drops repeats (several agents reading one
/// file report its problem once per agent, which is kept: the agent is part of it).
pub fn sort_and_dedup(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(|a, b| {
        (&a.file, a.line, a.column, a.code, a.agent)
            .cmp(&(&b.file, b.line, b.column, b.code, b.agent))
    });
    diagnostics.dedup();
}

/// The `W_HIDDEN_TEXT` and `W_CONTROL` warnings of a rule file's text: hidden or control
/// characters the agent would pass to its model, which ctx shows made visible.
pub(crate) fn hidden(agent: Agent, file: &str, text: &str, first_line: u32) -> Vec<Diagnostic> {
    let found = ctx_fs::sanitize::sanitize(text);
    if !found.changed() {
        return Vec::new();
    }
    found
        .warnings_at(text)
        .into_iter()
        .map(|(code, line, column, message)| {
            Diagnostic::new(
                code,
                agent,
                file,
                (line + first_line.saturating_sub(1), column),
                format!("{message}; the agent passes them to its model as they are"),
            )
            .hint("remove them, or write what they hide as visible text")
        })
        .collect()
}

/// 1-based line and column (in characters) of byte `at` of `text`.
pub(crate) fn position(text: &str, at: usize) -> (u32, u32) {
    let at = floor(text, at.min(text.len()));
    let before = &text[..at];
    let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = 1 + before[line_start..].chars().count();
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
}

/// The largest character boundary at or before `at`.
pub(crate) fn floor(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters() {
        assert_eq!(position("ab\ncé@x", 6), (2, 3));
        assert_eq!(position("", 5), (1, 1));
    }

    #[test]
    fn hidden_characters_are_reported_where_they_are() {
        let found = hidden(Agent::Claude, "CLAUDE.md", "ok\nrun \u{202e}evil", 1);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].code, found[0].line, found[0].column), (Code::HiddenText, 2, 5));
        assert!(hidden(Agent::Claude, "CLAUDE.md", "clean", 1).is_empty());
    }
}
