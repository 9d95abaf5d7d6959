//! `@path` imports as each agent finds them, and where they lead.
//!
//! Finding follows each agent's own scanner (docs/agents.md, "Imports"): Claude Code's
//! `(?:^|\s)@((?:[^\s\\]|\\ )+)` on text outside code, a `#fragment` dropped and `\ ` an
//! escaped space; Gemini CLI's scan for an `@` at the start or after white space, the path up
//! to the next white space, starting with `.`, `/` or a letter; Copilot CLI's, as observed:
//! the same, with an extension required.
//!
//! Where an import leads is worked out twice, and the two never mix: lexically, on absolute
//! paths, for the agent's own rule (is it inside the project? is it external?), and through
//! the sandbox of the file that holds it, for what ctx reads. A path that leaves the roots is
//! refused by the sandbox from its text alone, so nothing tells whether it exists.

use ctx_fs::{ErrorKind, Location, RootId, Sandbox};

use crate::lint::position;
use crate::markdown::{CodeKind, Flavor, code_regions, in_code};

/// One `@` import as an agent finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// Byte offset of the `@`.
    pub(crate) at: usize,
    /// Byte offset just past the path.
    pub(crate) end: usize,
    /// The path as written after the `@`.
    pub(crate) raw: String,
    /// The path the agent takes from it (Claude: fragment dropped, spaces unescaped).
    pub(crate) path: String,
    /// 1-based line and column of the `@`.
    pub(crate) line: u32,
    pub(crate) column: u32,
    /// The code it lies in, where the agent skips it.
    pub(crate) code: Option<CodeKind>,
}

/// The imports of `text` as `flavor` finds them, in order; those in code are kept, marked.
pub(crate) fn tokens(text: &str, flavor: Flavor) -> Vec<Token> {
    let regions = code_regions(text, flavor);
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(pos) = memchr(b'@', &bytes[i..]) {
        let at = i + pos;
        i = at + 1;
        let after_space = at == 0
            || matches!(bytes[at - 1], b' ' | b'\t' | b'\n' | b'\r')
            || (flavor == Flavor::Claude
                && text[..at].chars().next_back().is_some_and(char::is_whitespace));
        if !after_space {
            continue;
        }
        let (end, raw) = match flavor {
            Flavor::Claude => claude_extent(text, at + 1),
            Flavor::Gemini | Flavor::Copilot => {
                let end =
                    text[at + 1..].find([' ', '\t', '\n', '\r']).map_or(text.len(), |p| at + 1 + p);
                (end, text[at + 1..end].to_owned())
            }
        };
        let Some(path) = accepted(flavor, &raw) else { continue };
        let (line, column) = position(text, at);
        out.push(Token { at, end, raw, path, line, column, code: in_code(&regions, at) });
        i = end.max(i);
    }
    out
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// Claude Code's path after an `@`: characters that are neither white space nor a backslash,
/// or a backslash and a space.
fn claude_extent(text: &str, from: usize) -> (usize, String) {
    let mut end = from;
    let mut chars = text[from..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            if text[from + i + 1..].starts_with(' ') {
                chars.next();
                end = from + i + 2;
                continue;
            }
            break;
        }
        if c.is_whitespace() {
            break;
        }
        end = from + i + c.len_utf8();
    }
    (end, text[from..end].to_owned())
}

/// The path an agent takes from what follows an `@`, if it takes one.
fn accepted(flavor: Flavor, raw: &str) -> Option<String> {
    match flavor {
        Flavor::Claude => {
            let path = raw.split('#').next().unwrap_or("").replace("\\ ", " ");
            let first = path.chars().next()?;
            let ok = path.starts_with("./")
                || path.starts_with("~/")
                || (path.starts_with('/') && path != "/")
                || (first != '@'
                    && !matches!(first, '#' | '%' | '^' | '&' | '*' | '(' | ')')
                    && (first.is_ascii_alphanumeric() || matches!(first, '.' | '_' | '-')));
            ok.then_some(path)
        }
        Flavor::Gemini => {
            let first = raw.chars().next()?;
            (first == '.' || first == '/' || first.is_ascii_alphabetic()).then(|| raw.to_owned())
        }
        Flavor::Copilot => {
            let first = raw.chars().next()?;
            let name = raw.rsplit('/').next().unwrap_or(raw);
            let has_extension = name.rfind('.').is_some_and(|i| i > 0 && i + 1 < name.len());
            ((first == '.' || first == '/' || first.is_ascii_alphanumeric()) && has_extension)
                .then(|| raw.to_owned())
        }
    }
}

/// `written` resolved lexically from the absolute folder `base`: `~/` from `home`, `/…` as
/// it is, the rest joined to `base`; `.` and `..` taken lexically. `None` for `~/` without a
/// home folder.
pub(crate) fn lexical(base: &str, written: &str, home: Option<&str>) -> Option<String> {
    let joined = if let Some(rest) = written.strip_prefix("~/") {
        format!("{}/{rest}", home?)
    } else if written.starts_with('/') {
        written.to_owned()
    } else {
        format!("{}/{written}", base.trim_end_matches('/'))
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// Whether the absolute `path` is `dir` or lies below it.
pub(crate) fn abs_within(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    dir.is_empty() || path == dir || path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// Where an import leads, as ctx may read it.
#[derive(Debug)]
pub(crate) enum Target {
    /// A file inside a root of the sandbox.
    File(Location),
    /// Inside a root, and missing.
    Missing,
    /// Inside a root, and a folder (an agent that reads it fails as for a folder).
    Folder,
    /// Outside every root: not looked at.
    Outside,
    /// Refused by the sandbox (denied, a bad name …).
    Refused(ctx_fs::Error),
}

/// Resolves `written` from the folder `base` of `sandbox`, as ctx reads: through the
/// sandbox only.
pub(crate) fn resolve(sandbox: &Sandbox, base: &Location, written: &str) -> Target {
    match sandbox.resolve(written, Some(base)) {
        Ok(location) => match sandbox.stat(&location) {
            Ok(stat) if stat.kind == ctx_fs::FileKind::Dir => Target::Folder,
            _ => Target::File(location),
        },
        Err(err) if err.kind() == ErrorKind::NotFound => Target::Missing,
        Err(err) if err.kind() == ErrorKind::Outside => Target::Outside,
        Err(err) => Target::Refused(err),
    }
}

/// How a location of `sandbox` is named: relative to the workspace root, or the root's
/// name and the path in it.
pub(crate) fn shown(sandbox: &Sandbox, prefix: &str, location: &Location) -> String {
    if location.root() == RootId::WORKSPACE {
        format!("{prefix}{}", location.path())
    } else {
        format!("{}/{}", sandbox.root_name(location.root()), location.path())
    }
}

/// The absolute path of a location of `sandbox`.
pub(crate) fn abs_of(sandbox: &Sandbox, location: &Location) -> String {
    let root = sandbox.root_path(location.root()).as_str().trim_end_matches('/');
    if location.path().as_str().is_empty() {
        root.to_owned()
    } else {
        format!("{root}/{}", location.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str, flavor: Flavor) -> Vec<(String, Option<CodeKind>)> {
        tokens(text, flavor).into_iter().map(|t| (t.path, t.code)).collect()
    }

    #[test]
    fn claude_tokens() {
        let found = paths(
            "see @a.md#x, @my\\ file.md user@x.com @@b `x @c.md y` @/ @./d\n",
            Flavor::Claude,
        );
        assert_eq!(
            found,
            vec![
                ("a.md".to_owned(), None),
                ("my file.md".to_owned(), None),
                ("c.md".to_owned(), Some(CodeKind::Span)),
                ("./d".to_owned(), None),
            ]
        );
    }

    #[test]
    fn gemini_and_copilot_tokens() {
        let text = "@~/h.md @noext @a.txt @1x.md @.hidden.md\n";
        let gemini: Vec<String> = paths(text, Flavor::Gemini).into_iter().map(|p| p.0).collect();
        assert_eq!(gemini, vec!["noext", "a.txt", ".hidden.md"]);
        let copilot: Vec<String> = paths(text, Flavor::Copilot).into_iter().map(|p| p.0).collect();
        assert_eq!(copilot, vec!["a.txt", "1x.md", ".hidden.md"]);
    }

    #[test]
    fn lexical_paths() {
        assert_eq!(lexical("/w/repo", "../x.md", None).as_deref(), Some("/w/x.md"));
        assert_eq!(lexical("/w/repo", "/etc/passwd", None).as_deref(), Some("/etc/passwd"));
        assert_eq!(lexical("/w/repo", "~/x", Some("/home/me")).as_deref(), Some("/home/me/x"));
        assert_eq!(lexical("/w/repo", "~/x", None), None);
        assert_eq!(lexical("/w", "../../../../a", None).as_deref(), Some("/a"));
        assert!(abs_within("/w/repo/a", "/w/repo"));
        assert!(!abs_within("/w/repository", "/w/repo"));
    }
}
