//! Symbol definitions and references, from a lexical scanner ([`scan`], every
//! language, the index's default) or from tree-sitter tags queries
//! ([`extract`], one grammar per cargo feature), and a line-based split of
//! comments from code for every language.

use serde::{Deserialize, Serialize};

mod found;
mod lang;
mod scan;

pub(crate) use found::Found;
pub use found::{Def, Symbols};
pub use lang::Lang;

/// Where an index takes its files' symbols from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SymbolSource {
    /// The lexical scanner ([`scan`]): every language, about forty times
    /// faster than parsing, definitions' ends found by braces and indentation.
    #[default]
    Scan,
    /// tree-sitter tags queries ([`extract`]): exact, for the languages whose
    /// grammar is compiled in; other files are scanned.
    TreeSitter,
}

impl SymbolSource {
    /// Its name in configuration and on the command line: `scan`, `tree-sitter`.
    pub fn name(self) -> &'static str {
        match self {
            SymbolSource::Scan => "scan",
            SymbolSource::TreeSitter => "tree-sitter",
        }
    }

    /// The source named `name` ([`SymbolSource::name`]).
    pub fn from_name(name: &str) -> Option<SymbolSource> {
        match name {
            "scan" => Some(SymbolSource::Scan),
            "tree-sitter" => Some(SymbolSource::TreeSitter),
            _ => None,
        }
    }

    /// Whether this build can take symbols from this source: the scanner always, tree-sitter
    /// with a grammar compiled in (cargo feature `tree-sitter`, or one language's). Without
    /// one, [`SymbolSource::TreeSitter`] scans every file.
    pub fn is_available(self) -> bool {
        match self {
            SymbolSource::Scan => true,
            SymbolSource::TreeSitter => cfg!(feature = "tree-sitter-runtime"),
        }
    }

    /// The symbols of `source`, a file of language `lang`, from this source.
    pub fn symbols(self, lang: Lang, source: &str) -> Symbols {
        self.find(lang, source).into_owned()
    }

    /// [`SymbolSource::symbols`], the references borrowed from `source`.
    pub(crate) fn find(self, lang: Lang, source: &str) -> Found<'_> {
        match self {
            #[cfg(feature = "tree-sitter-runtime")]
            SymbolSource::TreeSitter if has_grammar(lang) => grammars::extract(lang, source),
            _ => scan::scan(lang, source),
        }
    }
}

/// Scans `source` for its definitions and references without parsing it: a lexer that
/// tells code from comments and strings, then keywords, braces and indentation. Empty for
/// [`Lang::Other`].
pub fn scan(lang: Lang, source: &str) -> Symbols {
    scan::scan(lang, source).into_owned()
}

/// Extracts the symbols of `source`; empty for languages without a
/// grammar (or whose feature is off) and for sources that do not parse.
pub fn extract(lang: Lang, source: &str) -> Symbols {
    #[cfg(feature = "tree-sitter-runtime")]
    {
        grammars::extract(lang, source).into_owned()
    }
    #[cfg(not(feature = "tree-sitter-runtime"))]
    {
        let _ = (lang, source);
        Symbols::default()
    }
}

/// Whether a grammar for `lang` is compiled in.
pub fn has_grammar(lang: Lang) -> bool {
    #[cfg(feature = "tree-sitter-runtime")]
    {
        grammars::config(lang).is_some()
    }
    #[cfg(not(feature = "tree-sitter-runtime"))]
    {
        let _ = lang;
        false
    }
}

/// Splits source lines into comment lines and code lines by their leading
/// marker (`//`, `#`, `/* … */`, `*`, Python docstrings): calls `emit`
/// with each line and whether it is a comment.
pub fn split_comments<'a>(lang: Lang, source: &'a str, mut emit: impl FnMut(&'a str, bool)) {
    let markers = lang.line_comments();
    let mut in_block = false;
    let mut in_docstring = false;
    for line in source.lines() {
        let t = line.trim_start();
        if in_block {
            emit(line, true);
            in_block = !t.contains("*/");
            continue;
        }
        if in_docstring {
            emit(line, true);
            in_docstring = !(t.contains("\"\"\"") || t.contains("'''"));
            continue;
        }
        if lang != Lang::Python && lang != Lang::Other && t.starts_with("/*") {
            emit(line, true);
            in_block = !t[2..].contains("*/");
            continue;
        }
        if lang == Lang::Python && (t.starts_with("\"\"\"") || t.starts_with("'''")) {
            emit(line, true);
            let rest = &t[3..];
            in_docstring = !(rest.contains("\"\"\"") || rest.contains("'''"));
            continue;
        }
        let comment = markers.iter().any(|m| t.starts_with(m));
        emit(line, comment);
    }
}

#[cfg(feature = "tree-sitter-runtime")]
mod grammars {
    use std::cell::RefCell;
    use std::sync::OnceLock;

    use tree_sitter_tags::{TagsConfiguration, TagsContext};

    use super::{Def, Found, Lang};

    /// Files larger than this are indexed as plain text: parsing them costs
    /// more than their symbols are worth (minified or generated code).
    const MAX_PARSE_BYTES: usize = 1 << 20;

    thread_local! {
        static CONTEXT: RefCell<TagsContext> = RefCell::new(TagsContext::new());
    }

    fn build(lang: Lang) -> Option<TagsConfiguration> {
        let (language, query): (tree_sitter::Language, String) = match lang {
            #[cfg(feature = "rust")]
            Lang::Rust => (tree_sitter_rust::LANGUAGE.into(), tree_sitter_rust::TAGS_QUERY.into()),
            #[cfg(feature = "python")]
            Lang::Python => {
                (tree_sitter_python::LANGUAGE.into(), tree_sitter_python::TAGS_QUERY.into())
            }
            #[cfg(feature = "typescript")]
            Lang::TypeScript => {
                (tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), typescript_query())
            }
            #[cfg(feature = "typescript")]
            Lang::Tsx => (tree_sitter_typescript::LANGUAGE_TSX.into(), typescript_query()),
            #[cfg(feature = "javascript")]
            Lang::JavaScript => {
                (tree_sitter_javascript::LANGUAGE.into(), tree_sitter_javascript::TAGS_QUERY.into())
            }
            // Without its own grammar, JavaScript (JSX included) is read by TSX's, which is
            // built on it: the default build saves the 0.4 MB of a second JavaScript parser.
            #[cfg(all(feature = "typescript", not(feature = "javascript")))]
            Lang::JavaScript => (tree_sitter_typescript::LANGUAGE_TSX.into(), typescript_query()),
            #[cfg(feature = "go")]
            Lang::Go => (tree_sitter_go::LANGUAGE.into(), tree_sitter_go::TAGS_QUERY.into()),
            #[cfg(feature = "c")]
            Lang::C => {
                (tree_sitter_c::LANGUAGE.into(), format!("{}{C_CALLS}", tree_sitter_c::TAGS_QUERY))
            }
            // Without its own grammar, C is read by C++'s, which extends it; C++'s tags hold
            // every pattern of C's. Only C code naming things with C++ keywords (`new`,
            // `class`) parses worse.
            #[cfg(all(feature = "cpp", not(feature = "c")))]
            Lang::C => (tree_sitter_cpp::LANGUAGE.into(), cpp_query()),
            #[cfg(feature = "cpp")]
            Lang::Cpp => (tree_sitter_cpp::LANGUAGE.into(), cpp_query()),
            #[cfg(feature = "c-sharp")]
            Lang::CSharp => (tree_sitter_c_sharp::LANGUAGE.into(), CSHARP_TAGS.into()),
            #[cfg(feature = "java")]
            Lang::Java => (tree_sitter_java::LANGUAGE.into(), tree_sitter_java::TAGS_QUERY.into()),
            _ => return None,
        };
        match TagsConfiguration::new(language, &query, "") {
            Ok(config) => Some(config),
            Err(e) => {
                debug_assert!(false, "the tags query of {lang:?} does not compile: {e}");
                None
            }
        }
    }

    /// TypeScript's own tags only cover what JavaScript lacks; its grammar
    /// is a superset, so the JavaScript tags apply too.
    #[cfg(feature = "typescript")]
    fn typescript_query() -> String {
        format!("{}\n{}", tree_sitter_typescript::TAGS_QUERY, JS_FOR_TS)
    }

    /// The JavaScript tags patterns that hold for TypeScript's grammar.
    #[cfg(feature = "typescript")]
    const JS_FOR_TS: &str = r#"
(method_definition name: (property_identifier) @name) @definition.method
(class_declaration name: (type_identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @definition.function
(variable_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @definition.function
(export_statement (lexical_declaration (variable_declarator name: (identifier) @name))) @definition.constant
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (member_expression property: (property_identifier) @name)) @reference.call
(import_specifier name: (identifier) @name) @reference.import
"#;

    /// The tags queries of C and C++ hold definitions only; calls make the references that
    /// link a file to the definitions it uses.
    #[cfg(any(feature = "c", feature = "cpp"))]
    const C_CALLS: &str = r#"
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
"#;

    /// C++'s tags, the calls of C, and C++'s qualified calls and constructions.
    #[cfg(feature = "cpp")]
    fn cpp_query() -> String {
        format!(
            "{}{C_CALLS}{}",
            tree_sitter_cpp::TAGS_QUERY,
            r#"
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(new_expression type: (type_identifier) @name) @reference.class
"#
        )
    }

    /// The tags query shipped with tree-sitter-c-sharp 0.23 names node
    /// types its grammar no longer has, so it does not compile; these are
    /// its patterns that still hold, plus structs, enums and records.
    #[cfg(feature = "c-sharp")]
    const CSHARP_TAGS: &str = r#"
(class_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.enum
(interface_declaration name: (identifier) @name) @definition.interface
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(property_declaration name: (identifier) @name) @definition.field
(namespace_declaration name: (identifier) @name) @definition.module
(object_creation_expression type: (identifier) @name) @reference.class
(base_list (identifier) @name) @reference.class
(invocation_expression function: (member_access_expression name: (identifier) @name)) @reference.send
(invocation_expression function: (identifier) @name) @reference.call
"#;

    /// The configuration for `lang`, built once.
    pub(super) fn config(lang: Lang) -> Option<&'static TagsConfiguration> {
        macro_rules! slot {
            () => {{
                static SLOT: OnceLock<Option<TagsConfiguration>> = OnceLock::new();
                SLOT.get_or_init(|| build(lang)).as_ref()
            }};
        }
        match lang {
            Lang::Rust => slot!(),
            Lang::Python => slot!(),
            Lang::TypeScript => slot!(),
            Lang::Tsx => slot!(),
            Lang::JavaScript => slot!(),
            Lang::Go => slot!(),
            Lang::C => slot!(),
            Lang::Cpp => slot!(),
            Lang::CSharp => slot!(),
            Lang::Java => slot!(),
            Lang::Other => None,
        }
    }

    pub(super) fn extract(lang: Lang, source: &str) -> Found<'_> {
        let mut out = Found::default();
        if source.len() > MAX_PARSE_BYTES {
            return out;
        }
        let Some(config) = config(lang) else { return out };
        let line_starts = line_starts(source);
        CONTEXT.with(|cx| {
            let mut cx = cx.borrow_mut();
            let Ok((tags, _)) = cx.generate_tags(config, source.as_bytes(), None) else {
                return;
            };
            for tag in tags.flatten() {
                let Some(name) = source.get(tag.name_range.clone()) else { continue };
                if tag.is_definition {
                    let start = line_of(&line_starts, tag.range.start);
                    let end =
                        line_of(&line_starts, tag.range.end.saturating_sub(1).max(tag.range.start));
                    let doc = tag
                        .docs
                        .as_deref()
                        .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
                        .map(str::to_owned);
                    out.defs.push(Def {
                        name: name.to_owned(),
                        kind: config.syntax_type_name(tag.syntax_type_id).to_owned(),
                        start,
                        end,
                        doc,
                    });
                } else {
                    out.refs.push(name);
                }
            }
        });
        out
    }

    fn line_starts(source: &str) -> Vec<usize> {
        std::iter::once(0).chain(memchr_newlines(source.as_bytes()).map(|i| i + 1)).collect()
    }

    fn memchr_newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
        bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i)
    }

    /// The 1-based line holding byte `offset`.
    fn line_of(starts: &[usize], offset: usize) -> u32 {
        let i = starts.partition_point(|&s| s <= offset);
        u32::try_from(i.max(1)).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "tree-sitter-runtime")]
    fn names(s: &Symbols) -> Vec<String> {
        s.defs.iter().map(|d| format!("{}:{}:{}-{}", d.kind, d.name, d.start, d.end)).collect()
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Lang::of("a/b.rs"), Lang::Rust);
        assert_eq!(Lang::of("x.tsx"), Lang::Tsx);
        assert_eq!(Lang::of("Makefile"), Lang::Other);
    }

    #[cfg(feature = "rust")]
    #[test]
    fn rust_definitions_and_references() {
        let src = "/// Retries until the deadline.\nfn retry_with_timeout() {\n    sleep_for(1);\n}\nstruct Backoff;\n";
        let s = extract(Lang::Rust, src);
        assert_eq!(names(&s), ["function:retry_with_timeout:2-4", "class:Backoff:5-5"]);
        assert!(s.refs.contains(&"sleep_for".to_owned()));
    }

    #[cfg(feature = "python")]
    #[test]
    fn python_definitions() {
        let src = "class Client:\n    def send(self):\n        \"\"\"Send a request.\"\"\"\n        build_request()\n";
        let s = extract(Lang::Python, src);
        assert_eq!(names(&s), ["class:Client:1-4", "function:send:2-4"]);
        assert!(s.refs.contains(&"build_request".to_owned()));
    }

    #[cfg(feature = "c-sharp")]
    #[test]
    fn csharp_definitions() {
        let src =
            "namespace App {\n  class Client : Base {\n    void Send() { Build(); }\n  }\n}\n";
        let s = extract(Lang::CSharp, src);
        assert_eq!(names(&s), ["module:App:1-5", "class:Client:2-4", "method:Send:3-3"]);
        assert!(s.refs.contains(&"Build".to_owned()));
    }

    #[cfg(feature = "typescript")]
    #[test]
    fn typescript_definitions() {
        let src = "export interface Env {}\nexport class Hono {\n  get(path: string) { return route(path) }\n}\nexport const cors = () => {}\n";
        let s = extract(Lang::TypeScript, src);
        let n = names(&s);
        assert!(n.contains(&"interface:Env:1-1".to_owned()), "{n:?}");
        assert!(n.contains(&"class:Hono:2-4".to_owned()), "{n:?}");
        assert!(n.contains(&"method:get:3-3".to_owned()), "{n:?}");
        assert!(n.contains(&"function:cors:5-5".to_owned()), "{n:?}");
        assert!(s.refs.contains(&"route".to_owned()));
    }

    #[cfg(any(feature = "javascript", feature = "typescript"))]
    #[test]
    fn javascript_definitions_with_jsx() {
        let src = "import { h } from './h'\nclass Store {\n  load() { return fetchAll() }\n}\nfunction App() {\n  return <div>{render()}</div>\n}\nconst go = () => start()\n";
        let s = extract(Lang::JavaScript, src);
        let n = names(&s);
        for want in ["class:Store:2-4", "method:load:3-3", "function:App:5-7", "function:go:8-8"] {
            assert!(n.contains(&want.to_owned()), "{want} in {n:?}");
        }
        for call in ["fetchAll", "render", "start"] {
            assert!(s.refs.contains(&call.to_owned()), "{call} in {:?}", s.refs);
        }
    }

    #[cfg(feature = "go")]
    #[test]
    fn go_definitions() {
        let src = "package retry\n\ntype Backoff struct{}\n\nfunc (b Backoff) Wait() {\n\tsleepFor(1)\n}\n";
        let s = extract(Lang::Go, src);
        let n = names(&s);
        for want in ["type:Backoff:3-3", "method:Wait:5-7"] {
            assert!(n.contains(&want.to_owned()), "{want} in {n:?}");
        }
        assert!(s.refs.contains(&"sleepFor".to_owned()), "{:?}", s.refs);
    }

    #[cfg(feature = "java")]
    #[test]
    fn java_definitions() {
        let src = "class Client {\n  void send() {\n    build();\n  }\n}\n";
        let s = extract(Lang::Java, src);
        let n = names(&s);
        for want in ["class:Client:1-5", "method:send:2-4"] {
            assert!(n.contains(&want.to_owned()), "{want} in {n:?}");
        }
        assert!(s.refs.contains(&"build".to_owned()), "{:?}", s.refs);
    }

    #[test]
    fn tree_sitter_is_available_with_a_grammar() {
        assert!(SymbolSource::Scan.is_available());
        assert_eq!(SymbolSource::TreeSitter.is_available(), cfg!(feature = "tree-sitter-runtime"));
    }

    #[cfg(any(feature = "c", feature = "cpp"))]
    #[test]
    fn c_definitions() {
        let src = "struct conn { int fd; };\ntypedef int handle_t;\nenum mode { A, B };\nstatic int retry(struct conn *c) {\n  return do_send(c);\n}\n";
        let s = extract(Lang::C, src);
        let n = names(&s);
        for want in ["class:conn:1-1", "type:handle_t:2-2", "type:mode:3-3", "function:retry:4-4"] {
            assert!(n.contains(&want.to_owned()), "{want} in {n:?}");
        }
        assert!(s.refs.contains(&"do_send".to_owned()), "{:?}", s.refs);
    }

    #[test]
    fn every_compiled_grammar_has_a_working_query() {
        let all = [
            Lang::Rust,
            Lang::Python,
            Lang::TypeScript,
            Lang::Tsx,
            Lang::JavaScript,
            Lang::Go,
            Lang::C,
            Lang::Cpp,
            Lang::CSharp,
            Lang::Java,
        ];
        let expected: Vec<Lang> = all
            .into_iter()
            .filter(|l| match l {
                Lang::Rust => cfg!(feature = "rust"),
                Lang::Python => cfg!(feature = "python"),
                Lang::TypeScript | Lang::Tsx => cfg!(feature = "typescript"),
                Lang::JavaScript => cfg!(any(feature = "javascript", feature = "typescript")),
                Lang::Go => cfg!(feature = "go"),
                Lang::C => cfg!(any(feature = "c", feature = "cpp")),
                Lang::Cpp => cfg!(feature = "cpp"),
                Lang::CSharp => cfg!(feature = "c-sharp"),
                Lang::Java => cfg!(feature = "java"),
                Lang::Other => false,
            })
            .collect();
        let working: Vec<Lang> = all.into_iter().filter(|l| has_grammar(*l)).collect();
        assert_eq!(working, expected);
    }

    #[test]
    fn comments_are_told_from_code() {
        let src = "// one\nlet x = 1;\n/* two\n three */\ncode();\n";
        let mut comments = Vec::new();
        split_comments(Lang::Rust, src, |line, c| {
            if c {
                comments.push(line);
            }
        });
        assert_eq!(comments, ["// one", "/* two", " three */"]);
    }
}
