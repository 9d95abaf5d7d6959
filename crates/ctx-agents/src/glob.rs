//! The globs of scoping front matter, matched as each agent matches them.
//!
//! - Claude Code (`paths:`): the `ignore` package, gitignore semantics, relative to the
//!   folder holding `.claude/` (a pattern without `/` matches at any depth, a folder matches
//!   what is in it); braces are expanded first, up to 1 000 patterns.
//! - Copilot (`applyTo:`): VS Code's matcher, case-insensitive, a relative pattern prefixed
//!   with `**/`, and `*`, `**`, `**/*` meaning every file.
//! - Cursor (`globs:`), Windsurf (`globs:`): not documented; ctx matches them relative to the
//!   project root, `*` within a folder, `**` across folders, and a pattern without `/`
//!   against the file name at any depth.
//!
//! Every pattern is bounded before it is compiled: its brace expansion is counted (never
//! made) with saturating arithmetic, and compilation is globset's, linear in the pattern;
//! a pattern is parsed at once (its problems are reported whether or not a file is given)
//! and compiled when it is first matched.

use std::cell::OnceCell;

use globset::GlobBuilder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Most patterns Claude Code expands braces to, per rule (`{a,b}{c,d}` is four).
pub(crate) const CLAUDE_BRACE_BUDGET: u64 = 1_000;

/// Whose reading of globs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// Claude Code: gitignore semantics after brace expansion.
    Gitignore,
    /// Copilot: VS Code's glob.
    VsCode,
    /// Cursor and Windsurf: globset, `*` within a folder, a pattern without `/` matched
    /// against the file name.
    Plain,
}

/// A glob the agent will not use, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) glob: String,
    pub(crate) message: String,
}

/// The globs of one rule, compiled.
pub(crate) struct Matcher {
    style: Style,
    /// Each usable pattern, as written, with what matches it.
    globs: Vec<(String, Compiled)>,
    /// Whether one of them means every file.
    all: Option<String>,
}

/// A pattern checked (parsed, its braces counted) and compiled when first matched: a view
/// without a file worked on matches nothing, and compiles nothing.
enum Compiled {
    Git(String, OnceCell<Option<Gitignore>>),
    Set(globset::Glob, OnceCell<globset::GlobMatcher>),
}

impl Compiled {
    fn is_match(&self, rel: &str) -> bool {
        match self {
            // A pattern that parsed and fails to build (past the regex size limit) matches
            // nothing, as a glob that does not parse.
            Compiled::Git(line, git) => git
                .get_or_init(|| {
                    let mut builder = GitignoreBuilder::new("/");
                    builder.add_line(None, line).ok()?;
                    builder.build().ok()
                })
                .as_ref()
                .is_some_and(|git| git.matched_path_or_any_parents(rel, false).is_ignore()),
            Compiled::Set(glob, set) => set.get_or_init(|| glob.compile_matcher()).is_match(rel),
        }
    }
}

impl Matcher {
    /// Compiles `patterns` as `style` reads them; the patterns the agent would not use are
    /// returned as problems (they match nothing).
    pub(crate) fn new(style: Style, patterns: &[String]) -> (Matcher, Vec<Problem>) {
        let mut problems = Vec::new();
        let mut matcher = Matcher { style, globs: Vec::new(), all: None };
        for written in patterns {
            match compile(style, written) {
                Ok(Some(compiled)) => matcher.globs.push((written.clone(), compiled)),
                Ok(None) => matcher.all = matcher.all.take().or_else(|| Some(written.clone())),
                Err(message) => problems.push(Problem { glob: written.clone(), message }),
            }
        }
        (matcher, problems)
    }

    /// Whether the rule applies to every file (`**` alone, `*` for Copilot).
    pub(crate) fn matches_all(&self) -> Option<&str> {
        self.all.as_deref()
    }

    /// The first glob matching `rel` (a path relative to the glob's base; for Copilot the
    /// absolute path), if any.
    pub(crate) fn first_match(&self, rel: &str) -> Option<&str> {
        if let Some(all) = &self.all {
            return Some(all);
        }
        let name = rel.rsplit('/').next().unwrap_or(rel);
        self.globs.iter().find_map(|(written, compiled)| {
            let hit = match compiled {
                Compiled::Git(..) => compiled.is_match(rel),
                Compiled::Set(..) => {
                    compiled.is_match(rel)
                        || (self.style == Style::Plain
                            && !written.contains('/')
                            && compiled.is_match(name))
                }
            };
            hit.then_some(written.as_str())
        })
    }
}

fn compile(style: Style, written: &str) -> Result<Option<Compiled>, String> {
    let pattern = written.trim();
    if pattern.is_empty() {
        return Err("an empty glob matches nothing".to_owned());
    }
    match style {
        Style::Gitignore => {
            let expansions = brace_expansions(pattern);
            if expansions > CLAUDE_BRACE_BUDGET {
                return Err(format!(
                    "its braces expand to {} patterns, past Claude Code's budget of {CLAUDE_BRACE_BUDGET}",
                    shown_count(expansions)
                ));
            }
            // A trailing `/**` is dropped: the folder itself then matches what is in it.
            let pattern = pattern.strip_suffix("/**").unwrap_or(pattern);
            if pattern == "**" || pattern.is_empty() {
                return Ok(None);
            }
            // Parsed now, for the problem; built when first matched.
            let mut builder = GitignoreBuilder::new("/");
            builder.add_line(None, pattern).map_err(|e| glob_error(&e.to_string()))?;
            Ok(Some(Compiled::Git(pattern.to_owned(), OnceCell::new())))
        }
        Style::VsCode => {
            if matches!(pattern, "*" | "**" | "**/*") {
                return Ok(None);
            }
            let pattern = if pattern.starts_with('/') || pattern.starts_with("**/") {
                pattern.to_owned()
            } else {
                format!("**/{pattern}")
            };
            set(&pattern, true)
        }
        Style::Plain => {
            if matches!(pattern, "**" | "**/*") {
                return Ok(None);
            }
            set(pattern.trim_start_matches("./"), false)
        }
    }
}

fn set(pattern: &str, case_insensitive: bool) -> Result<Option<Compiled>, String> {
    if brace_expansions(pattern) > 1_000_000 {
        return Err("its braces expand to more than a million patterns".to_owned());
    }
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(case_insensitive)
        .build()
        .map(|g| Some(Compiled::Set(g, OnceCell::new())))
        .map_err(|e| glob_error(&e.kind().to_string()))
}

fn glob_error(message: &str) -> String {
    format!("the glob does not parse ({message}); it matches nothing")
}

fn shown_count(n: u64) -> String {
    if n == u64::MAX { "more than 18 quintillion".to_owned() } else { n.to_string() }
}

/// How deep braces nest before the count gives up (as the most there can be).
const MAX_BRACE_NESTING: usize = 64;

/// How many patterns `{…}` alternatives expand `pattern` to (`{a,b}{c,d}` is 4; nested
/// groups add their alternatives), counted without expanding, saturating at `u64::MAX`
/// (also for braces nested deeper than 64 levels).
pub(crate) fn brace_expansions(pattern: &str) -> u64 {
    fn group(bytes: &[u8], mut i: usize, depth: usize) -> (u64, usize) {
        if depth > MAX_BRACE_NESTING {
            return (u64::MAX, bytes.len());
        }
        // Inside a `{`: a sum over the alternatives of each one's product.
        let mut total: u64 = 0;
        let mut product: u64 = 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'{' => {
                    let (n, next) = group(bytes, i + 1, depth + 1);
                    if next >= bytes.len() && n == u64::MAX {
                        return (u64::MAX, next);
                    }
                    product = product.saturating_mul(n);
                    i = next;
                }
                b',' => {
                    total = total.saturating_add(product);
                    product = 1;
                    i += 1;
                }
                b'}' => return (total.saturating_add(product), i + 1),
                _ => i += 1,
            }
        }
        // Unclosed: literal text, one pattern.
        (1, i)
    }
    let bytes = pattern.as_bytes();
    let mut product: u64 = 1;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'{' => {
                let (n, next) = group(bytes, i + 1, 1);
                product = product.saturating_mul(n);
                i = next;
            }
            _ => i += 1,
        }
    }
    product
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(style: Style, globs: &[&str], path: &str) -> Option<String> {
        let globs: Vec<String> = globs.iter().map(|g| (*g).to_owned()).collect();
        let (m, _) = Matcher::new(style, &globs);
        m.first_match(path).map(str::to_owned)
    }

    #[test]
    fn claude_uses_gitignore_semantics() {
        assert!(first(Style::Gitignore, &["src/**/*.rs"], "src/a/b.rs").is_some());
        assert!(first(Style::Gitignore, &["src/**/*.rs"], "lib/a.rs").is_none());
        // Without a slash a pattern matches at any depth; a folder matches its contents.
        assert!(first(Style::Gitignore, &["*.md"], "docs/a.md").is_some());
        assert!(first(Style::Gitignore, &["docs"], "docs/a/b.md").is_some());
        assert!(first(Style::Gitignore, &["docs/**"], "docs/a/b.md").is_some());
        assert!(first(Style::Gitignore, &["src/{a,b}.rs"], "src/b.rs").is_some());
    }

    #[test]
    fn copilot_uses_vscode_semantics() {
        assert!(first(Style::VsCode, &["src/*.py"], "/x/other/src/a.py").is_some());
        assert!(first(Style::VsCode, &["**/*.RS"], "/x/src/main.rs").is_some());
        assert_eq!(first(Style::VsCode, &["*"], "/x/a/b.c").as_deref(), Some("*"));
    }

    #[test]
    fn plain_globs_match_names_without_a_slash() {
        assert!(first(Style::Plain, &["*.ts"], "src/a.ts").is_some());
        assert!(first(Style::Plain, &["src/*.ts"], "src/a/b.ts").is_none());
        assert!(first(Style::Plain, &["src/**/*.ts"], "src/a/b.ts").is_some());
    }

    #[test]
    fn brace_bombs_are_counted_not_expanded() {
        assert_eq!(brace_expansions("{a,b}{c,d}"), 4);
        assert_eq!(brace_expansions("{a,{b,c}}"), 3);
        assert_eq!(brace_expansions("{a,b"), 1);
        let bomb = "{a,b}".repeat(100_000);
        assert_eq!(brace_expansions(&bomb), u64::MAX);
        let (m, problems) = Matcher::new(Style::Gitignore, std::slice::from_ref(&bomb));
        assert!(m.first_match("a").is_none());
        assert!(problems[0].message.contains("past Claude Code's budget of 1000"));
        let ten = "{a,b}".repeat(10);
        let (_, problems) = Matcher::new(Style::Gitignore, &[ten]);
        assert!(problems[0].message.contains("1024 patterns"));
        let (_, problems) = Matcher::new(Style::Plain, &[bomb]);
        assert_eq!(problems.len(), 1);
        // Nesting deeper than the count follows is a bomb too, and no stack overflow.
        let deep = "{".repeat(60_000) + &"}".repeat(60_000);
        assert_eq!(brace_expansions(&deep), u64::MAX);
    }

    #[test]
    fn bad_globs_are_problems() {
        let (m, problems) = Matcher::new(Style::Plain, &["src/[".to_owned(), "*.md".to_owned()]);
        assert_eq!(problems.len(), 1);
        assert!(m.first_match("a.md").is_some());
    }
}
