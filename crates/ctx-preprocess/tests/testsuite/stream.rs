//! The streaming API as the assembler uses it: a caller that recurses into includes between
//! two events, carrying one `Macros`.

use std::collections::HashMap;

use ctx_preprocess::{Event, Macros, Preprocessor, RequestKind, preprocess};
use ctx_syntax::{Code, Options, Position, Span, scan};

/// A tiny assembler over an in-memory tree: includes are inlined, mentions written as
/// `<m:path>`, diagnostics collected as `file:CODE@pos`, and every opened file recorded.
struct Tree {
    files: HashMap<&'static str, &'static str>,
    opened: Vec<String>,
    diagnostics: Vec<String>,
}

impl Tree {
    fn new(files: &[(&'static str, &'static str)]) -> Tree {
        Tree { files: files.iter().copied().collect(), opened: Vec::new(), diagnostics: Vec::new() }
    }

    fn assemble(&mut self, name: &str, macros: &mut Macros, out: &mut String) {
        self.opened.push(name.to_owned());
        let text = self.files[name];
        let scan = scan(text);
        let mut pre = Preprocessor::new(&scan);
        while let Some(event) = pre.next_event(macros) {
            match event {
                Event::Text { text, .. } => out.push_str(text),
                Event::Escape { unescaped, .. } => out.push_str(unescaped),
                Event::Substitution { value, .. } => out.push_str(&value),
                Event::Request(request) => match request.kind {
                    RequestKind::Include(r) => self.assemble(r.path.raw, macros, out),
                    RequestKind::Mention(r) => out.push_str(&format!("<m:{}>", r.path.raw)),
                    RequestKind::Tool(call) => out.push_str(&format!("<t:{}>", call.name)),
                },
                Event::Diagnostic(d) => {
                    self.diagnostics.push(format!("{name}:{}@{}", d.code, d.pos))
                }
            }
        }
    }
}

#[test]
fn macros_flow_into_includes_and_back() {
    let mut tree = Tree::new(&[
        ("main.md", "@{define WHO, \"main\"}\n@[defs.md]\nafter: @{WHO} @{EXTRA}\n"),
        ("defs.md", "in defs: @{WHO}\n@{define WHO, \"defs\"}\n@{define EXTRA}\n"),
    ]);
    let mut macros = Macros::new();
    let mut out = String::new();
    tree.assemble("main.md", &mut macros, &mut out);
    // The include's own line stays: includes never remove a line.
    assert_eq!(out, "in defs: main\n\nafter: defs \n");
    assert!(tree.diagnostics.is_empty(), "{:?}", tree.diagnostics);
    assert_eq!(macros.get("WHO"), Some("defs"));
}

#[test]
fn inactive_includes_are_never_opened() {
    let mut tree = Tree::new(&[
        (
            "main.md",
            "@{ifdef FULL}\n@[big.md]\n@{include \"big.md\"}\n@big.md\n@{else}\n@{include \"small.md\"}\n@{endif}\n",
        ),
        ("small.md", "small\n"),
    ]);
    let mut out = String::new();
    tree.assemble("main.md", &mut Macros::new(), &mut out);
    assert_eq!(out, "small\n\n");
    assert_eq!(tree.opened, ["main.md", "small.md"]);
}

#[test]
fn condition_stacks_are_per_file() {
    // The block left open in the included file is closed at its end, with an error there;
    // the including file's `else` and `endif` still match its own `ifdef`.
    let mut tree = Tree::new(&[
        ("main.md", "@{ifdef A}\n@[inc.md]\n@{else}\nno\n@{endif}\nend\n"),
        ("inc.md", "@{ifndef B}\ninc\n"),
    ]);
    let mut macros = Macros::new();
    macros.define("A", "");
    let mut out = String::new();
    tree.assemble("main.md", &mut macros, &mut out);
    assert_eq!(out, "inc\n\nend\n");
    assert_eq!(tree.diagnostics, ["inc.md:E_DIRECTIVE@1:1"]);
}

#[test]
fn include_directive_is_a_bracket_include() {
    for (directive, bracket) in [
        ("@{include \"a.md\"}", "@[a.md]"),
        ("@{include: \"a.md:2:3\"}", "@[a.md:2:3]"),
        ("@{include \"docs/b.md#intro\"}", "@[docs/b.md#intro]"),
        ("@{include \"src/\"}", "@[src/]"),
        ("@{include \"*.rs\"}", "@[*.rs]"),
    ] {
        let mut macros = Macros::new();
        let a = preprocess(directive, &Options::default(), &mut macros);
        let b = preprocess(bracket, &Options::default(), &mut macros);
        assert_eq!(a.requests.len(), 1, "{directive}");
        assert_eq!(a.requests[0].kind, b.requests[0].kind, "{directive} vs {bracket}");
        assert!(matches!(a.requests[0].kind, RequestKind::Include(_)));
    }
}

#[test]
fn requests_carry_spans_and_positions() {
    let text = "x\n @a.md @[t{\"k\":1}] @{include \"b\"}";
    let out = preprocess(text, &Options::default(), &mut Macros::new());
    let got: Vec<(&str, &str, Position)> = out
        .requests
        .iter()
        .map(|r| {
            let kind = match r.kind {
                RequestKind::Include(_) => "include",
                RequestKind::Mention(_) => "mention",
                RequestKind::Tool(_) => "tool",
            };
            (kind, r.span.of(text), r.pos)
        })
        .collect();
    let p = |line, column| Position { line, column };
    assert_eq!(
        got,
        [
            ("mention", "@a.md", p(2, 2)),
            ("tool", "@[t{\"k\":1}]", p(2, 8)),
            ("include", "@{include \"b\"}", p(2, 20)),
        ]
    );
}

#[test]
fn events_borrow_and_order() {
    let text = "a\n\\@{X} @{U}\n  @{define X, \"v\"}\n@{X}";
    let scan = scan(text);
    let mut macros = Macros::new();
    let events: Vec<Event<'_>> = Preprocessor::new(&scan).events(&mut macros).collect();
    let mut shapes = Vec::new();
    for event in &events {
        shapes.push(match event {
            Event::Text { text: t, span } => {
                assert_eq!(span.of(text), *t);
                // Borrowed from the input, not copied.
                assert!(text.as_bytes().as_ptr_range().contains(&t.as_ptr()));
                format!("text {t:?}")
            }
            Event::Escape { raw, unescaped, span } => {
                assert_eq!(span.of(text), *raw);
                format!("escape {raw:?} {unescaped:?}")
            }
            Event::Substitution { name, value, span, .. } => {
                format!("sub {name}={value} {:?}", span.of(text))
            }
            Event::Request(_) => "request".to_owned(),
            Event::Diagnostic(d) => format!("diag {}@{}", d.code, d.pos),
        });
    }
    assert_eq!(
        shapes,
        [
            "text \"a\\n\"",
            "escape \"\\\\@\" \"@\"",
            "text \"{X} \"",
            "diag W_UNDEFINED_MACRO@2:7",
            "text \"@{U}\"",
            "text \"\\n\"",
            "sub X=v \"@{X}\"",
        ]
    );
}

#[test]
fn scan_diagnostics_come_before_their_item() {
    let text = "@{bogus thing}\n@[x";
    let scan = scan(text);
    let mut macros = Macros::new();
    let events: Vec<Event<'_>> = Preprocessor::new(&scan).events(&mut macros).collect();
    assert!(matches!(&events[0], Event::Diagnostic(d) if d.code == Code::Directive));
    assert!(matches!(&events[1], Event::Text { text: "@{bogus thing}", .. }));
    assert!(matches!(&events[2], Event::Diagnostic(d) if d.code == Code::Unterminated));
    assert!(matches!(&events[3], Event::Text { text: "\n@[x", .. }));
    assert_eq!(events.len(), 4);
}

#[test]
fn open_block_error_points_at_the_opener() {
    let text = "x\n  @{if A IS \"b\"}\ny\n";
    let out = preprocess(text, &Options::default(), &mut Macros::new());
    let errors: Vec<_> = out.diagnostics.iter().filter(|d| d.code == Code::Directive).collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].span, Span::new(4, 18));
    assert_eq!(errors[0].pos, Position { line: 2, column: 3 });
    assert_eq!(
        errors[0].message,
        "`@{if A IS \"b\"}` is never closed; closed at the end of the file"
    );
}

#[test]
fn regexes_compile_once_per_pattern() {
    let mut macros = Macros::new();
    macros.define("M", "abc");
    let text = "@{if M MATCHES \"b\"}1@{endif}@{if M DOESNT_MATCH \"b\"}2@{endif}\
                @{if M MATCHES \"(\"}3@{endif}@{if M MATCHES \"(\"}4@{endif}";
    let out = preprocess(text, &Options::default(), &mut macros);
    assert_eq!(out.text, "1");
    assert_eq!(out.diagnostics.iter().filter(|d| d.code == Code::Regex).count(), 2);
    assert_eq!(macros.cached_regexes(), 2);
    // The cache goes on with the macros into the next file.
    preprocess(text, &Options::default(), &mut macros);
    assert_eq!(macros.cached_regexes(), 2);
    // Inactive branches compile nothing.
    let mut fresh = Macros::new();
    preprocess("@{ifdef NO}@{if M MATCHES \"x\"}@{endif}@{endif}", &Options::default(), &mut fresh);
    assert_eq!(fresh.cached_regexes(), 0);
}

#[test]
fn regex_error_message() {
    let mut macros = Macros::new();
    macros.define("M", "x");
    let out = preprocess("@{if M MATCHES \"a(\"}@{endif}", &Options::default(), &mut macros);
    assert_eq!(
        out.diagnostics[0].message,
        "invalid regular expression `a(`: unclosed group; `MATCHES` is false"
    );
}

#[test]
fn for_each_hands_out_the_macros() {
    let scan = scan("@{define A, \"1\"}@[x]@{A}");
    let mut macros = Macros::new();
    let mut seen = Vec::new();
    Preprocessor::new(&scan).for_each(&mut macros, |event, macros| {
        if let Event::Request(_) = event {
            // An included file redefines A before the substitution that follows it.
            seen.push(macros.get("A").map(str::to_owned));
            macros.define("A", "2");
        }
        if let Event::Substitution { value, .. } = event {
            seen.push(Some(value.to_string()));
        }
    });
    assert_eq!(seen, [Some("1".to_owned()), Some("2".to_owned())]);
}

#[test]
fn switched_off_directives_are_text() {
    let options = Options { directives: false, ..Options::default() };
    let out = preprocess("@{ifdef A}x@{endif}", &options, &mut Macros::new());
    assert_eq!(out.text, "@{ifdef A}x@{endif}");
    assert!(out.diagnostics.is_empty());
}
