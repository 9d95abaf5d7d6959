//! A lexical scanner of definitions and references: one pass that tells
//! code from comments and strings, then a pass over the tokens that
//! follows keywords, braces and indentation.
//!
//! It reads a file about forty times faster than tree-sitter parses it and
//! finds the same kinds of names its tags queries do (definitions with
//! their lines; calls, constructions, implemented traits and imported
//! names as references), without a syntax tree: a definition's last line
//! is its closing brace (or, in Python, its last indented line), and a C,
//! C++, Java or C# function is a name, a balanced parameter list and a
//! body or `;` where declarations stand.
//!
//! [`lexer`] makes the tokens for every language; [`scanner`] holds the state of the pass over
//! them and what the languages share; each family reads its own keywords (`rust`, `python`,
//! `js` for TypeScript, TSX and JavaScript, `go`, `c_family` for C, C++, C# and Java), and the
//! driver below hands each token to the brackets' bookkeeping or to its language.

mod c_family;
mod go;
mod js;
mod keywords;
mod lexer;
mod python;
mod rust;
mod scanner;

use lexer::{Kind, Tok};
use scanner::{Scanner, Scope};

use crate::symbols::found::Found;
use crate::symbols::lang::Lang;

/// Scans `source` for the definitions and references of `lang`; empty for
/// [`Lang::Other`].
pub(crate) fn scan(lang: Lang, source: &str) -> Found<'_> {
    if !lang.is_code() {
        return Found::default();
    }
    let (toks, macros) = lexer::lex(lang, source);
    let mut scanner = Scanner::new(lang, source, &toks);
    for (name, line) in macros {
        scanner.def(name, "macro", line);
    }
    scanner.run();
    let mut out = scanner.out;
    out.defs.sort_by_key(|d| d.start);
    out
}

/// The driver: each token goes to the brackets' bookkeeping or to its language.
impl Scanner<'_, '_> {
    fn run(&mut self) {
        let mut i = 0;
        while i < self.toks.len() {
            let t = self.toks[i];
            if self.lang == Lang::Python {
                i = self.python(i, t);
                continue;
            }
            match t.kind {
                Kind::Punct => self.punct(i, t),
                Kind::Ident => {
                    i = self.ident(i);
                    continue;
                }
                Kind::Str => {}
            }
            i += 1;
        }
        let last = self.toks.last().map_or(1, |t| t.end_line);
        while let Some((_, def)) = self.braces.pop() {
            self.end_def(def, last);
        }
        while let Some((_, def)) = self.blocks.pop() {
            self.end_def(Some(def), last);
        }
    }

    fn punct(&mut self, i: usize, t: Tok) {
        match t.p {
            b'(' | b'[' => self.parens += 1,
            b')' | b']' => self.parens = self.parens.saturating_sub(1),
            b'{' => {
                let here = (self.braces.len(), self.parens);
                let waiting = self
                    .pending
                    .filter(|p| (p.braces, p.parens) == here && p.body.is_none_or(|b| b == i));
                let opened = match waiting {
                    Some(p) => {
                        self.pending = None;
                        (p.scope, p.def)
                    }
                    None => {
                        let scope = match self.scope() {
                            Scope::Code => Scope::Code,
                            _ if !self.braces.is_empty()
                                && self.is_punct(i.wrapping_sub(1), b')') =>
                            {
                                Scope::Code
                            }
                            _ => Scope::Other,
                        };
                        (scope, None)
                    }
                };
                self.braces.push(opened);
            }
            b'}' => {
                if let Some((_, def)) = self.braces.pop() {
                    self.end_def(def, t.line);
                }
                if self.pending.is_some_and(|p| p.braces > self.braces.len()) {
                    self.pending = None;
                }
            }
            b';' => {
                if let Some(p) = self.pending
                    && (p.braces, p.parens) == (self.braces.len(), self.parens)
                {
                    self.end_def(p.def, t.line);
                    self.pending = None;
                }
                if let Some((depth, first)) = self.typedef
                    && depth == self.braces.len()
                    && self.parens == 0
                {
                    self.typedef = None;
                    self.typedef_name(first, i);
                }
            }
            _ => {}
        }
    }

    /// The identifier at `i`; returns the next token to look at.
    fn ident(&mut self, i: usize) -> usize {
        match self.lang {
            Lang::Rust => self.rust(i),
            Lang::Go => self.go(i),
            Lang::TypeScript | Lang::Tsx | Lang::JavaScript => self.js(i),
            Lang::C | Lang::Cpp => self.c(i),
            Lang::CSharp | Lang::Java => self.java(i),
            Lang::Python | Lang::Other => i + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `kind:name:start-end` of each definition, in order.
    fn defs(lang: Lang, src: &str) -> Vec<String> {
        let found = scan(lang, src);
        found.defs.iter().map(|d| format!("{}:{}:{}-{}", d.kind, d.name, d.start, d.end)).collect()
    }

    fn refs(lang: Lang, src: &str) -> Vec<String> {
        scan(lang, src).refs.into_iter().map(str::to_owned).collect()
    }

    #[test]
    fn rust_items_methods_and_calls() {
        let src = r##"/// Retries until the deadline.
pub fn retry_with_timeout<'a>(s: &'a str) -> Result<(), Error> {
    let brace = "}"; let raw = r#"fn fake() {"#; let c = '{';
    sleep_for(1); client.send::<u8>(x); Backoff::new(); vec![1]
}
struct Backoff { delay: &'static str }
impl Policy for Backoff {
    fn next(&self) -> u32 { 1 }
}
trait Policy { fn next(&self) -> u32; }
const LIMIT: u32 = 3;
macro_rules! retry { () => {} }
mod inner;
"##;
        assert_eq!(
            defs(Lang::Rust, src),
            [
                "function:retry_with_timeout:2-5",
                "struct:Backoff:6-6",
                "method:next:8-8",
                "trait:Policy:10-10",
                "method:next:10-10",
                "constant:LIMIT:11-11",
                "macro:retry:12-12",
                "module:inner:13-13",
            ]
        );
        let r = refs(Lang::Rust, src);
        for name in ["sleep_for", "send", "new", "vec", "Policy", "Backoff"] {
            assert!(r.contains(&name.to_owned()), "{name} in {r:?}");
        }
        assert!(!r.iter().any(|n| n == "fake"), "strings are not code: {r:?}");
    }

    #[test]
    fn python_blocks_end_at_their_last_indented_line() {
        let src = "LIMIT = 3\n\nclass Client(Base):\n    \"\"\"A client.\n    def not_a_def():\n    \"\"\"\n\n    @property\n    def send(self, body={\n        'a': 1}):\n        build_request()\n        # trailing comment\n\n    async def close(self): pass\n\ndef main():\n    return Client().send()\n";
        assert_eq!(
            defs(Lang::Python, src),
            [
                "constant:LIMIT:1-1",
                "class:Client:3-14",
                "method:send:9-11",
                "method:close:14-14",
                "function:main:16-17",
            ]
        );
        assert!(refs(Lang::Python, src).contains(&"build_request".to_owned()));
    }

    #[test]
    fn typescript_without_semicolons() {
        let src = "import { route, type Env as E } from './r'\nexport interface Env {\n  send(data: string): void\n}\nexport class Hono extends Base implements Router {\n  get(path: string): Hono {\n    return route(path)\n  }\n}\nexport const cors = (opts?: O) => {\n  const re = /[{]/\n  return `${'{'}`\n}\nexport const handler: H = (c) => ({\n  ok: true,\n})\nexport const stream = <\n  S extends Schema = {},\n>(app: S): Handler => {\n  return app\n}\nexport type Pair = {\n  a: string\n}\nfunction start() {\n  await fetch(url)\n  if (x) {\n  }\n}\nimport type { Ctx } from './c'\nconst v = { key: value }\n";
        assert_eq!(
            defs(Lang::TypeScript, src),
            [
                "interface:Env:2-4",
                "method:send:3-3",
                "class:Hono:5-9",
                "method:get:6-8",
                "function:cors:10-13",
                "function:handler:14-16",
                "function:stream:17-21",
                "type:Pair:22-24",
                "function:start:25-29",
            ]
        );
        let r = refs(Lang::TypeScript, src);
        // Calls, heritage, imported names (`type` ones too) and annotated types (`): Hono`).
        for name in ["route", "Base", "Router", "fetch", "Env", "Ctx", "Hono", "O", "H"] {
            assert!(r.contains(&name.to_owned()), "{name} in {r:?}");
        }
        // Neither the values of object literals nor primitive types.
        for name in ["value", "string", "E"] {
            assert!(!r.contains(&name.to_owned()), "{name} not in {r:?}");
        }
    }

    #[test]
    fn jsx_closing_tags_are_not_regular_expressions() {
        let src = "function App() {\n  return <div>{render()}</div>\n}\nconst go = () => start()\n";
        assert_eq!(defs(Lang::Tsx, src), ["function:App:1-3", "function:go:4-4"]);
        assert!(refs(Lang::Tsx, src).contains(&"start".to_owned()));
    }

    #[test]
    fn go_functions_methods_and_types() {
        let src = "package x\n\ntype Client struct {\n\tconn net.Conn\n}\n\nfunc (c *Client) Send(b []byte) error {\n\treturn write(c.conn, b)\n}\n\nfunc New() *Client { return &Client{} }\n\ntype (\n\tID int\n\tName string\n)\n";
        assert_eq!(
            defs(Lang::Go, src),
            [
                "struct:Client:3-5",
                "method:Send:7-9",
                "function:New:11-11",
                "type:ID:14-14",
                "type:Name:15-15",
            ]
        );
        assert!(refs(Lang::Go, src).contains(&"write".to_owned()));
    }

    #[test]
    fn c_functions_prototypes_types_and_macros() {
        let src = "#define MAX_RETRY 3\n#define SQUARE(x) \\\n  ((x) * (x))\nstruct conn { int fd; int (*cb)(int); };\ntypedef int handle_t;\ntypedef void (*callback_t)(int);\nenum mode { A, B };\nint send_all(struct conn *c);\nstatic int\nretry(struct conn *c)\n{\n  if (c) { return send_all(c); }\n  return 0;\n}\n";
        assert_eq!(
            defs(Lang::C, src),
            [
                "macro:MAX_RETRY:1-1",
                "macro:SQUARE:2-2",
                "struct:conn:4-4",
                "type:handle_t:5-5",
                "type:callback_t:6-6",
                "enum:mode:7-7",
                "function:send_all:8-8",
                "function:retry:9-14",
            ]
        );
        let r = refs(Lang::C, src);
        assert!(r.contains(&"send_all".to_owned()) && !r.contains(&"if".to_owned()), "{r:?}");
    }

    #[test]
    fn cpp_classes_methods_and_constructors() {
        let src = "namespace net {\nclass Client : public Base {\n public:\n  Client(int fd) : fd_(fd) {}\n  void send(const char* s) const;\n  virtual int close() = 0;\n};\nvoid Client::send(const char* s) const {\n  write_all(fd_, s);\n  auto p = new Buffer(4);\n}\n}\n";
        assert_eq!(
            defs(Lang::Cpp, src),
            [
                "module:net:1-12",
                "class:Client:2-7",
                "method:Client:4-4",
                "method:send:5-5",
                "method:close:6-6",
                "method:send:8-11",
            ]
        );
        let r = refs(Lang::Cpp, src);
        for name in ["Base", "write_all", "Buffer"] {
            assert!(r.contains(&name.to_owned()), "{name} in {r:?}");
        }
    }

    #[test]
    fn java_annotations_anonymous_classes_and_enum_bodies() {
        let src = "package a.b;\nimport java.util.List;\n\n@Deprecated(since = \"1\")\npublic class Gson implements Api {\n  Gson() {}\n  public <T> T fromJson(String s) throws IOException {\n    return new TypeAdapter<T>() {\n      @Override public T read(Reader in) { return parse(in); }\n    }.read(null);\n  }\n}\nenum Policy {\n  IDENTITY() {\n    @Override String translate(String n) { return n; }\n  };\n  abstract String translate(String n);\n}\n";
        assert_eq!(
            defs(Lang::Java, src),
            [
                "class:Gson:4-12",
                "method:Gson:6-6",
                "method:fromJson:7-11",
                "method:read:9-9",
                "enum:Policy:13-18",
                "method:translate:15-15",
                "method:translate:17-17",
            ]
        );
        let r = refs(Lang::Java, src);
        for name in ["Api", "TypeAdapter", "parse"] {
            assert!(r.contains(&name.to_owned()), "{name} in {r:?}");
        }
    }

    #[test]
    fn csharp_namespaces_properties_and_expression_bodies() {
        let src = "namespace App.Net {\n  public class Client : Base, IClient {\n    public int Port { get; set; }\n    public Client(int port) { Port = port; }\n    string Name() => Build(@\"a\"\"{\");\n  }\n}\n";
        assert_eq!(
            defs(Lang::CSharp, src),
            [
                "module:Net:1-7",
                "class:Client:2-6",
                "property:Port:3-3",
                "method:Client:4-4",
                "method:Name:5-5",
            ]
        );
        let r = refs(Lang::CSharp, src);
        for name in ["Base", "IClient", "Build"] {
            assert!(r.contains(&name.to_owned()), "{name} in {r:?}");
        }
    }

    /// Every language the scanner reads.
    fn langs() -> impl Iterator<Item = Lang> {
        let exts = ["rs", "py", "ts", "tsx", "js", "go", "c", "cpp", "cs", "java"];
        exts.into_iter().map(|ext| Lang::of(&format!("a.{ext}")))
    }

    /// Scans `text` on a thread and fails if that has not ended within a minute (a hang
    /// guard: generous for a debug build on a loaded machine, where the scanner reads a
    /// mebibyte in about a second); returns the counts of definitions and references.
    fn scan_within_a_minute(lang: Lang, text: &str) -> (usize, usize) {
        let (tx, rx) = std::sync::mpsc::channel();
        let text = text.to_owned();
        std::thread::spawn(move || {
            let found = scan(lang, &text);
            let _ = tx.send((found.defs.len(), found.refs.len()));
        });
        let limit = std::time::Duration::from_secs(60);
        rx.recv_timeout(limit).unwrap_or_else(|_| panic!("scanning {lang:?} hangs"))
    }

    /// The attack: a file of the largest size read (1 MiB) of `(`s then `]`s, every closer
    /// matching nothing. It must not take time quadratic in its length.
    #[test]
    fn unbalanced_closers_do_not_hang() {
        let text = "(".repeat(1 << 19) + &"]".repeat(1 << 19);
        for lang in langs() {
            assert_eq!(scan_within_a_minute(lang, &text), (0, 0));
        }
    }

    /// The attack: a file of 1 MiB on one line, of definitions that ask for the column of
    /// their line. It must not take time quadratic in its length.
    #[test]
    fn one_line_of_definitions_does_not_hang() {
        let line = |unit: &str| unit.repeat((1 << 20) / unit.len());
        assert_eq!(scan_within_a_minute(Lang::TypeScript, &line("const a=1;")), (0, 0));
        let defs = (1 << 20) / "def f():pass;".len();
        assert_eq!(scan_within_a_minute(Lang::Python, &line("def f():pass;")), (defs, 0));
    }

    /// The attack: import braces nested in import braces. Each name inside is a reference
    /// once, not once for each group around it (which made a mebibyte of them take
    /// quadratic time and memory).
    #[test]
    fn nested_import_braces_are_read_once() {
        let n = (32 << 10) / "import {a }".len();
        let text = "import {a ".repeat(n) + &"}".repeat(n);
        for lang in [Lang::TypeScript, Lang::Tsx, Lang::JavaScript] {
            assert_eq!(scan_within_a_minute(lang, &text), (0, n));
        }
    }

    /// The attack: Go `type (…)` groups nested in groups. Each name inside is defined once,
    /// not once for each group around it.
    #[test]
    fn nested_go_type_groups_are_read_once() {
        let n = (8 << 10) / "type (\nA\n)".len();
        let text = "type (\nA\n".repeat(n) + &")".repeat(n);
        let (defs, _) = scan_within_a_minute(Lang::Go, &text);
        assert!(defs < 2 * n, "{defs} definitions of {n} names");
    }

    /// The attack: a file of 1 MiB on one line, of definitions without semicolons whose ends
    /// are found by reading on to the end of their statement. It must not take time quadratic
    /// in its length.
    #[test]
    fn one_line_of_statements_does_not_hang() {
        for unit in ["export const a = 1 ", "type A = B "] {
            let n = (1 << 20) / unit.len();
            assert_eq!(scan_within_a_minute(Lang::TypeScript, &unit.repeat(n)), (n, 0));
        }
    }

    #[test]
    fn other_languages_have_no_symbols() {
        assert!(scan(Lang::Other, "fn main() {}").defs.is_empty());
    }

    proptest! {
        /// Any text, in any language: no panic, and every definition's lines lie in the file
        /// in order.
        #[test]
        fn any_text_scans(
            text in "(\\PC|[ \\n{}()\\[\\];:'\"`/*#@<>=\\\\rRbf$.,-]){0,400}",
            lang in prop::sample::select(vec![
                Lang::Rust, Lang::Python, Lang::TypeScript, Lang::Tsx, Lang::JavaScript,
                Lang::Go, Lang::C, Lang::Cpp, Lang::CSharp, Lang::Java,
            ]),
        ) {
            let found = scan(lang, &text);
            let lines = u32::try_from(text.lines().count().max(1)).unwrap();
            for d in &found.defs {
                prop_assert!(1 <= d.start && d.start <= d.end && d.end <= lines + 1, "{d:?}");
                prop_assert!(!d.name.is_empty());
            }
            prop_assert!(found.defs.windows(2).all(|w| w[0].start <= w[1].start));
            for r in &found.refs {
                prop_assert!(text.contains(r));
            }
        }
    }
}
