//! Writing the syntax back: the mention that names a path (syntax.md §2), and the path that
//! a partly typed mention names so far. Completion and editors use these, so that what they
//! insert scans back to the very path they meant.

use std::borrow::Cow;

/// The characters that end a bare mention path (besides ASCII whitespace).
const TERMINATORS: &str = ",;!?()[]{}<>\"'`";

/// The mention that names `path` exactly: `@path` when a bare path reads back whole, else
/// `@"path"` with `\"` and `\\` escaped. `None` when no mention can name it: an empty path,
/// one with a control character or line break, or one whose end reads as a fragment even in
/// quotes (`notes#intro`, `a.md#L2`), which a mention cannot tell from a section.
///
/// ```
/// use ctx_syntax::mention_of;
///
/// assert_eq!(mention_of("src/agent.rs").as_deref(), Some("@src/agent.rs"));
/// assert_eq!(mention_of("my notes.md").as_deref(), Some("@\"my notes.md\""));
/// assert_eq!(mention_of("v1.").as_deref(), Some("@\"v1.\""));
/// assert_eq!(mention_of("a#intro"), None);
/// ```
pub fn mention_of(path: &str) -> Option<String> {
    if path.is_empty() || path.chars().any(char::is_control) || ends_like_fragment(path) {
        return None;
    }
    if bare_reads_back(path) {
        return Some(format!("@{path}"));
    }
    Some(format!("@\"{}\"", quote_body(path)))
}

/// The path written between the quotes of a quoted mention: `\` and `"` escaped.
fn quote_body(path: &str) -> Cow<'_, str> {
    if !path.contains(['\\', '"']) {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len() + 4);
    for c in path.chars() {
        if matches!(c, '\\' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// Whether `@path` scans back as a mention of exactly `path`: nothing in it ends a bare path
/// early, starts a fragment or an escape, and it does not end in `.` or `:` (which a bare
/// path drops before whitespace or the end).
fn bare_reads_back(path: &str) -> bool {
    let ends = |c: char| c.is_ascii_whitespace() || TERMINATORS.contains(c);
    !path.chars().any(|c| ends(c) || matches!(c, '#' | '\\' | '@'))
        && !path.ends_with(['.', ':'])
        && !path.chars().any(|c| !c.is_ascii() && c.is_whitespace())
}

/// Whether the end of a quoted path would be read as its fragment: `#L` and a line range, or
/// `#` and a name.
fn ends_like_fragment(path: &str) -> bool {
    let Some(at) = path.rfind('#') else { return false };
    let fragment = &path[at + 1..];
    let name = !fragment.is_empty()
        && fragment.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-'));
    let lines = fragment.strip_prefix('L').is_some_and(|range| {
        range.bytes().next().is_some_and(|b| b.is_ascii_digit())
            && range.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'L'))
    });
    name || lines
}

/// The path a partly typed mention names so far: `@`, a `[` and the quotes taken off,
/// escapes resolved as the grammar resolves them (`\"` and `\\` in quotes, `\ ` in a bare
/// path).
///
/// ```
/// use ctx_syntax::typed_path;
///
/// assert_eq!(typed_path("@src/ag"), "src/ag");
/// assert_eq!(typed_path("@\"my f"), "my f");
/// assert_eq!(typed_path("@[docs/x"), "docs/x");
/// assert_eq!(typed_path("my\\ f"), "my f");
/// ```
pub fn typed_path(typed: &str) -> String {
    let rest = typed.strip_prefix('@').unwrap_or(typed);
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    let (body, quoted) = match rest.strip_prefix('"') {
        Some(quoted) => (quoted.strip_suffix('"').unwrap_or(quoted), true),
        None => (rest, false),
    };
    crate::PathText { raw: body, quoted }.unescaped().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions() {
        assert_eq!(mention_of("src/agent.rs").as_deref(), Some("@src/agent.rs"));
        assert_eq!(mention_of("docs/").as_deref(), Some("@docs/"));
        assert_eq!(mention_of("a\"b").as_deref(), Some("@\"a\\\"b\""));
        assert_eq!(mention_of("C:\\x\\y.rs").as_deref(), Some("@\"C:\\\\x\\\\y.rs\""));
        assert_eq!(mention_of("notes:v2.md").as_deref(), Some("@notes:v2.md"));
        assert_eq!(mention_of("end:").as_deref(), Some("@\"end:\""));
        assert_eq!(mention_of("a#b.md").as_deref(), Some("@\"a#b.md\""));
        assert_eq!(mention_of(""), None);
        assert_eq!(mention_of("a\nb"), None);
        assert_eq!(mention_of("x.md#L10-20"), None);
        assert_eq!(mention_of("A#é"), None, "a name is any alphanumeric");
    }

    #[test]
    fn typed_paths() {
        assert_eq!(typed_path("@\"a \\\"b\\\"\""), "a \"b\"");
        assert_eq!(typed_path("plain"), "plain");
        assert_eq!(typed_path("@\"back\\\\slash"), "back\\slash");
    }
}
