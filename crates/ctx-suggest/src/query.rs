//! What a prompt asks for: weighted terms, identifiers and paths written in
//! it, and whether it asks for tests, docs or other demoted files.

use std::collections::HashMap;

use crate::tokenize;

/// A term of the prompt and its weight.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct QueryTerm {
    pub(crate) term: String,
    pub(crate) weight: f64,
}

/// Which demoted classes the prompt asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wants {
    pub(crate) tests: bool,
    pub(crate) docs: bool,
    pub(crate) locks: bool,
    pub(crate) generated: bool,
}

/// A parsed prompt.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query {
    pub(crate) terms: Vec<QueryTerm>,
    /// Identifiers as written (`retry_timeout`, `Client`), with a weight:
    /// full for code-looking words and backticked ones, less for the rest.
    pub(crate) idents: Vec<(String, f64)>,
    /// Path-like words (`src/retry.rs`, `retry.rs`, `src/retry`).
    pub(crate) paths: Vec<String>,
    /// Words that may name a file (`router` for `router.ts` or `router/index.ts`):
    /// lower case, `-` and `_` removed, with a plural `s` dropped too.
    pub(crate) names: Vec<String>,
    pub(crate) wants: Wants,
}

/// Weight of a joined identifier term (`retrytimeout`), which is rare and
/// precise, relative to a prose word.
const JOINED: f64 = 2.0;
/// Weight of the parts of a code-looking identifier.
const IDENT_PART: f64 = 1.5;

impl Query {
    pub(crate) fn parse(prompt: &str) -> Query {
        let mut q = Query::default();
        let mut weights: HashMap<String, f64> = HashMap::new();
        let mut order = Vec::new();
        let backticked = backticked_spans(prompt);
        for (at, word) in tokenize::words(prompt) {
            let quoted = backticked.iter().any(|(s, e)| *s <= at && at < *e);
            let ident = quoted || tokenize::looks_like_identifier(word);
            let parts = tokenize::split_identifier(word);
            let lower = word.to_ascii_lowercase();
            match lower.as_str() {
                "test" | "tests" | "testing" | "spec" | "specs" | "fixture" | "fixtures" => {
                    q.wants.tests = true
                }
                "doc" | "docs" | "documentation" | "readme" | "changelog" | "guide" | "manual" => {
                    q.wants.docs = true
                }
                "lock" | "lockfile" | "dependency" | "dependencies" | "deps" => {
                    q.wants.locks = true
                }
                "generated" | "codegen" | "vendor" | "vendored" => q.wants.generated = true,
                _ => {}
            }
            let mut n = 0;
            tokenize::word_terms(word, |t| {
                n += 1;
                let joined = parts.len() > 1 && n == parts.len() + 1;
                let w = if joined {
                    JOINED
                } else if ident {
                    IDENT_PART
                } else {
                    1.0
                };
                match weights.get_mut(&t) {
                    Some(old) => *old = old.max(w) + 0.1,
                    None => {
                        order.push(t.clone());
                        weights.insert(t, w);
                    }
                }
            });
            let name: String = lower.chars().filter(|c| *c != '-' && *c != '_').collect();
            if name.len() >= 3 && !crate::tokenize::is_stop_word(&name) {
                for n in [Some(name.clone()), name.strip_suffix('s').map(str::to_owned)]
                    .into_iter()
                    .flatten()
                {
                    if n.len() >= 3 && !q.names.contains(&n) {
                        q.names.push(n);
                    }
                }
            }
            if word.len() >= 3 && word.chars().any(char::is_alphabetic) {
                let w = if ident { 1.0 } else { 0.35 };
                if !q.idents.iter().any(|(i, _)| i == word) {
                    q.idents.push((word.to_owned(), w));
                }
            }
        }
        q.terms = order
            .into_iter()
            .map(|t| {
                let weight = weights[&t];
                QueryTerm { term: t, weight }
            })
            .collect();
        q.paths = path_mentions(prompt);
        q
    }
}

/// Byte spans inside backticks.
fn backticked_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut open = None;
    for (i, c) in text.char_indices() {
        if c == '`' {
            match open.take() {
                Some(s) => spans.push((s, i)),
                None => open = Some(i + 1),
            }
        }
    }
    spans
}

/// Words that look like paths: with a `/`, or a name with a short
/// extension made of letters (`retry.rs`, not `e.g.` or `1.5`).
fn path_mentions(prompt: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in prompt.split(|c: char| {
        c.is_whitespace()
            || matches!(c, '`' | '"' | '\'' | '(' | ')' | ',' | ';' | '<' | '>' | '[' | ']')
    }) {
        let w = raw.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?' | '@' | '#'));
        let w = w.strip_prefix("./").unwrap_or(w);
        if w.len() < 3 || w.contains("://") {
            continue;
        }
        let has_ext = w.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphabetic())
                && ext.chars().any(|c| c.is_ascii_lowercase())
                && !stem.contains('.')
        });
        let slashed = w.contains('/') && w.split('/').filter(|c| !c.is_empty()).count() >= 2;
        if (has_ext && (w.contains('/') || !w.contains('(')) && looks_like_file_ext(w)) || slashed {
            out.push(w.trim_end_matches('/').to_owned());
        }
    }
    out.dedup();
    out
}

/// A name whose extension is one a source tree commonly has, so that
/// `self.client` or `Client.send` is not taken for a file.
fn looks_like_file_ext(w: &str) -> bool {
    const EXTS: &[&str] = &[
        "rs", "py", "pyi", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "c", "h", "cc", "cpp",
        "hpp", "cs", "java", "kt", "rb", "php", "swift", "md", "rst", "txt", "toml", "yaml", "yml",
        "json", "lock", "cfg", "ini", "sh", "vue", "html", "css", "scss", "sql", "proto",
    ];
    match w.rsplit_once('.') {
        Some((_, ext)) => EXTS.contains(&ext) || w.contains('/'),
        None => w.contains('/'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_weigh_more_than_prose() {
        let q = Query::parse("fix the `retryTimeout` handling in retry loop");
        let w = |t: &str| q.terms.iter().find(|x| x.term == t).map(|x| x.weight);
        assert_eq!(w("retrytimeout"), Some(JOINED));
        assert!(w("timeout").unwrap() >= IDENT_PART);
        assert_eq!(w("handl"), Some(1.0));
        assert_eq!(w("the"), None);
    }

    #[test]
    fn names_of_files() {
        let q = Query::parse("fix(body-limit): Routers drop the body");
        assert_eq!(q.names, ["fix", "bodylimit", "routers", "router", "drop", "body"]);
    }

    #[test]
    fn paths_are_found() {
        let q = Query::parse("see src/retry.rs and cookies.py, e.g. version 1.5 of Client.send");
        assert_eq!(q.paths, ["src/retry.rs", "cookies.py"]);
    }

    #[test]
    fn asking_for_tests_and_docs() {
        let q = Query::parse("add tests and update the docs");
        assert!(q.wants.tests && q.wants.docs && !q.wants.locks);
    }
}
