//! Every example of the syntax specification, one line each, with the expected dump.

use ctx_syntax::{ItemKind, Options, scan, scan_with};
use expect_test::{Expect, expect};

#[track_caller]
fn check(text: &str, expect: Expect) {
    ctx_syntax::check(text);
    expect.assert_eq(&scan(text).dump());
}

/// The kinds of the items that are not text, in order.
#[track_caller]
fn kinds(text: &str) -> Vec<&'static str> {
    scan(text).items.iter().map(|i| i.kind.name()).filter(|k| *k != "text").collect()
}

#[test]
fn activity() {
    check(
        "see。@file",
        expect![[r#"
        text 0..6 1:1 "see。"
        mention 6..11 1:5 file path="file"
    "#]],
    );
    for text in ["user@example.com", "foo.@bar", "(@x", "\"@x\"", "a@b"] {
        assert!(kinds(text).is_empty(), "{text:?}");
    }
    assert_eq!(kinds("@start"), ["mention"]);
    assert_eq!(kinds("tab\t@x and\n@y"), ["mention", "mention"]);
    assert_eq!(kinds("emoji🙂@x"), ["mention"]);
    check(
        "x@[a.md] (@{X})",
        expect![[r#"
        text 0..1 1:1 "x"
        include 1..8 1:2 file path="a.md"
        text 8..10 1:9 " ("
        directive 10..14 1:11 substitute X
        text 14..15 1:15 ")"
    "#]],
    );
}

#[test]
fn escapes() {
    check(
        r"\@[a.md]",
        expect![[r#"
        escape 0..2 1:1 "\\@" -> "@"
        text 2..8 1:3 "[a.md]"
    "#]],
    );
    check(
        r"\\@[a.md]",
        expect![[r#"
        escape 0..2 1:1 "\\\\" -> "\\"
        include 2..9 1:3 file path="a.md"
    "#]],
    );
    check(
        r"\\\@[a.md]",
        expect![[r#"
        escape 0..4 1:1 "\\\\\\@" -> "\\@"
        text 4..10 1:5 "[a.md]"
    "#]],
    );
    check(
        r"\@{X} \\@{X}",
        expect![[r#"
        escape 0..2 1:1 "\\@" -> "@"
        text 2..6 1:3 "{X} "
        escape 6..8 1:7 "\\\\" -> "\\"
        directive 8..12 1:9 substitute X
    "#]],
    );
    check(
        r"mail \@alice",
        expect![[r#"
        text 0..5 1:1 "mail "
        escape 5..7 1:6 "\\@" -> "@"
        text 7..12 1:8 "alice"
    "#]],
    );
    check(
        r"\\@[unterminated",
        expect![[r#"
        text 0..16 1:1 "\\\\@[unterminated"
        ---
        warning[W_UNTERMINATED] 2..4 1:3 `@[` without its closing `]`; left as text (write `\@` for a literal `@`)
    "#]],
    );
}

#[test]
fn code_is_literal() {
    check(
        "`@a.md` and ``x ` @[b.md]`` @c.md",
        expect![[r#"
        code 0..7 1:1 span
        text 7..12 1:8 " and "
        code 12..27 1:13 span
        text 27..28 1:28 " "
        mention 28..33 1:29 file path="c.md"
    "#]],
    );
    check(
        "```\n@[a.md]\n```\n@[b.md]",
        expect![[r#"
        code 0..15 1:1 fenced
        text 15..16 3:4 "\n"
        include 16..23 4:1 file path="b.md"
    "#]],
    );
    check(
        "~~~~ md\n@[a.md]\n~~~\n@{X}\n~~~~~\n@y",
        expect![[r#"
        code 0..30 1:1 fenced
        text 30..31 5:6 "\n"
        mention 31..33 6:1 file path="y"
    "#]],
    );
    check(
        "   ```\n@[a.md]\n   ```\n",
        expect![[r#"
        text 0..3 1:1 "   "
        code 3..21 1:4 fenced
        text 21..22 3:7 "\n"
    "#]],
    );
    check(
        "    ```\n@[a.md]\n",
        expect![[r#"
        text 0..8 1:1 "    ```\n"
        include 8..15 2:1 file path="a.md"
        text 15..16 2:8 "\n"
    "#]],
    );
    check(
        "```\nnever closed @[a.md]\n",
        expect![[r#"
        code 0..25 1:1 fenced unclosed
    "#]],
    );
    check(
        "`unclosed @a.md\n\nnext `para` @b.md",
        expect![[r#"
        text 0..10 1:1 "`unclosed "
        mention 10..15 1:11 file path="a.md"
        text 15..22 1:16 "\n\nnext "
        code 22..28 3:6 span
        text 28..29 3:12 " "
        mention 29..34 3:13 file path="b.md"
    "#]],
    );
    check(
        r"\`@[a.md]`",
        expect![[r#"
        text 0..2 1:1 "\\`"
        include 2..9 1:3 file path="a.md"
        text 9..10 1:10 "`"
    "#]],
    );
    // A fence in a list item or a block quote is code, and ends with its container; a code
    // span ends with its paragraph, so neither turns the rest of the text into code.
    assert_eq!(kinds("- ```\n  @a.md\n\n  ```\n\nlater @b.md"), ["code", "mention"]);
    assert_eq!(kinds("> ~~~\n> @a.md\nlater @b.md"), ["code", "mention"]);
    assert_eq!(kinds("`a\n```\nx`\n```\n\ntext @b.md"), ["code", "mention"]);
    assert_eq!(kinds("`a\n# heading @b.md`"), ["mention"]);
    let off = Options { code_skip: false, ..Options::default() };
    let scanned = scan_with("`@[a.md]`", &off);
    assert!(scanned.items.iter().any(|i| matches!(i.kind, ItemKind::Include(_))));
}

#[test]
fn mentions() {
    check(
        "@src/a.rs @\"my file.md\" @a.rs#L10-20",
        expect![[r#"
        mention 0..9 1:1 file path="src/a.rs"
        text 9..10 1:10 " "
        mention 10..23 1:11 file path="my file.md" quoted
        text 23..24 1:24 " "
        mention 24..36 1:25 file path="a.rs" lines=10..20
    "#]],
    );
    check(
        "@a#L10 @a#L10-20 @a#L10-L20 @a#L10- @a.md#intro",
        expect![[r#"
        mention 0..6 1:1 file path="a" lines=10..10
        text 6..7 1:7 " "
        mention 7..16 1:8 file path="a" lines=10..20
        text 16..17 1:17 " "
        mention 17..27 1:18 file path="a" lines=10..20
        text 27..28 1:28 " "
        mention 28..35 1:29 file path="a" lines=10..
        text 35..36 1:36 " "
        mention 36..47 1:37 file path="a.md" fragment=intro
    "#]],
    );
    check(
        "Check @readme.md. Then @a.test.ts: done @x...",
        expect![[r#"
        text 0..6 1:1 "Check "
        mention 6..16 1:7 file path="readme.md"
        text 16..23 1:17 ". Then "
        mention 23..33 1:24 file path="a.test.ts"
        text 33..40 1:34 ": done "
        mention 40..42 1:41 file path="x"
        text 42..45 1:43 "..."
    "#]],
    );
    check(
        r"@my\ file.md @src\main.rs",
        expect![[r#"
        mention 0..12 1:1 file path="my file.md"
        text 12..13 1:13 " "
        mention 13..25 1:14 file path="src\\main.rs"
    "#]],
    );
    check(
        "@a\u{202f}b.md",
        expect![[r#"
        mention 0..9 1:1 file path="a\u{202f}b.md"
    "#]],
    );
    check(
        "@\"docs/design notes.md#L10-20\" @\"design notes.md\"#L10-20",
        expect![[r#"
        mention 0..30 1:1 file path="docs/design notes.md" quoted lines=10..20
        text 30..31 1:31 " "
        mention 31..56 1:32 file path="design notes.md" quoted lines=10..20
    "#]],
    );
    check(
        "@src/util/ @src/*.rs @\"a?.md\"",
        expect![[r#"
        mention 0..10 1:1 directory path="src/util/"
        text 10..11 1:11 " "
        mention 11..20 1:12 glob path="src/*.rs"
        text 20..21 1:21 " "
        mention 21..29 1:22 glob path="a?.md" quoted
    "#]],
    );
    check(
        "@ @, @) lone @",
        expect![[r#"
        text 0..14 1:1 "@ @, @) lone @"
    "#]],
    );
    check(
        "(see @a.md, @b.md; @c.md!) @d.md?",
        expect![[r#"
        text 0..5 1:1 "(see "
        mention 5..10 1:6 file path="a.md"
        text 10..12 1:11 ", "
        mention 12..17 1:13 file path="b.md"
        text 17..19 1:18 "; "
        mention 19..24 1:20 file path="c.md"
        text 24..27 1:25 "!) "
        mention 27..32 1:28 file path="d.md"
        text 32..33 1:33 "?"
    "#]],
    );
    check(
        "@a.md@[b.md]",
        expect![[r#"
        mention 0..5 1:1 file path="a.md"
        include 5..12 1:6 file path="b.md"
    "#]],
    );
    check(
        "@\"unclosed",
        expect![[r#"
        text 0..10 1:1 "@\"unclosed"
    "#]],
    );
}

#[test]
fn includes() {
    check(
        r#"@[read_file{"uri":"src/a.rs"}]"#,
        expect![[r#"
        tool 0..30 1:1 name="read_file" args={"uri":"src/a.rs"}
    "#]],
    );
    check(
        r#"@[grep{"pattern":"]}\"x"}]"#,
        expect![[r#"
        tool 0..26 1:1 name="grep" args={"pattern":"]}\"x"}
    "#]],
    );
    check(
        "@[a[1].md]",
        expect![[r#"
        include 0..10 1:1 file path="a[1].md"
    "#]],
    );
    check(
        r"@[C:\src\a.rs] @[C:/src/a.rs:3]",
        expect![[r#"
        include 0..14 1:1 file path="C:\\src\\a.rs"
        text 14..15 1:15 " "
        include 15..31 1:16 file path="C:/src/a.rs" lines=3..3
    "#]],
    );
    check(
        r#"@["notes:v2.md":2]"#,
        expect![[r#"
        include 0..18 1:1 file path="notes:v2.md" quoted lines=2..2
    "#]],
    );
    check(
        "@[a:5] @[a:2:4] @[a:2-4] @[a:2:] @[a:2-] @[a::3] @[a#L2-4]",
        expect![[r#"
        include 0..6 1:1 file path="a" lines=5..5
        text 6..7 1:7 " "
        include 7..15 1:8 file path="a" lines=2..4
        text 15..16 1:16 " "
        include 16..24 1:17 file path="a" lines=2..4
        text 24..25 1:25 " "
        include 25..32 1:26 file path="a" lines=2..
        text 32..33 1:33 " "
        include 33..40 1:34 file path="a" lines=2..
        text 40..41 1:41 " "
        include 41..48 1:42 file path="a" lines=1..3
        text 48..49 1:49 " "
        include 49..58 1:50 file path="a" lines=2..4
    "#]],
    );
    check(
        "@[a.rs:region] @[a.md#getting-started] @[ my file.md ]",
        expect![[r#"
        include 0..14 1:1 file path="a.rs" anchor=region
        text 14..15 1:15 " "
        include 15..38 1:16 file path="a.md" fragment=getting-started
        text 38..39 1:39 " "
        include 39..54 1:40 file path="my file.md"
    "#]],
    );
    check(
        "@[a.md\nb]",
        expect![[r#"
        text 0..9 1:1 "@[a.md\nb]"
        ---
        warning[W_UNTERMINATED] 0..2 1:1 `@[` without its closing `]`; left as text (write `\@` for a literal `@`)
    "#]],
    );
    check(
        "@[unterminated",
        expect![[r#"
        text 0..14 1:1 "@[unterminated"
        ---
        warning[W_UNTERMINATED] 0..2 1:1 `@[` without its closing `]`; left as text (write `\@` for a literal `@`)
    "#]],
    );
    check(
        "@[]",
        expect![[r#"
        include 0..3 1:1 file path=""
    "#]],
    );
}

#[test]
fn directives() {
    check(
        "@{define A, \"x}y\"}\n@{define B}\n@{define C \"\\u00e9\\n\"}\n@{undef A}\n",
        expect![[r#"
        directive 0..18 1:1 define A "x}y" alone=0..19
        text 18..19 1:19 "\n"
        directive 19..30 2:1 define B alone=19..31
        text 30..31 2:12 "\n"
        directive 31..53 3:1 define C "é\n" alone=31..54
        text 53..54 3:23 "\n"
        directive 54..64 4:1 undef A alone=54..65
        text 64..65 4:11 "\n"
    "#]],
    );
    check(
        "@{ifdef X}\n@{ifndef Y}\n@{else}\n@{endif}\n",
        expect![[r#"
        directive 0..10 1:1 ifdef X alone=0..11
        text 10..11 1:11 "\n"
        directive 11..22 2:1 ifndef Y alone=11..23
        text 22..23 2:12 "\n"
        directive 23..30 3:1 else alone=23..31
        text 30..31 3:8 "\n"
        directive 31..39 4:1 endif alone=31..40
        text 39..40 4:9 "\n"
    "#]],
    );
    check(
        "@{if A IS \"1\"}@{elif A ISNT B}@{if A CONTAINS \"x\"}@{if A DOESNT_CONTAIN \"x\"}",
        expect![[r#"
            directive 0..14 1:1 if A IS "1"
            directive 14..30 1:15 elif A ISNT B
            directive 30..50 1:31 if A CONTAINS "x"
            directive 50..76 1:51 if A DOESNT_CONTAIN "x"
        "#]],
    );
    check(
        "@{if A MATCHES \"^a+$\"} @{if A DOESNT_MATCH \"(?i)b\"}",
        expect![[r#"
        directive 0..22 1:1 if A MATCHES "^a+$"
        text 22..23 1:23 " "
        directive 23..51 1:24 if A DOESNT_MATCH "(?i)b"
    "#]],
    );
    check(
        "@{include \"a.md\"} @{include: \"b.md:2:3\"} @{NAME}",
        expect![[r#"
        directive 0..17 1:1 include file path="a.md"
        text 17..18 1:18 " "
        directive 18..40 1:19 include file path="b.md" lines=2..3
        text 40..41 1:41 " "
        directive 41..48 1:42 substitute NAME
    "#]],
    );
    check(
        "  @{ifdef X}  \r\nx @{endif}\n\t@{endif}",
        expect![[r#"
        text 0..2 1:1 "  "
        directive 2..12 1:3 ifdef X alone=0..16
        text 12..18 1:13 "  \r\nx "
        directive 18..26 2:3 endif
        text 26..28 2:11 "\n\t"
        directive 28..36 3:2 endif alone=27..36
    "#]],
    );
    check(
        "@{define A, \"x\\\n\"}\n@{endif}",
        expect![[r#"
        text 0..19 1:1 "@{define A, \"x\\\n\"}\n"
        directive 19..27 3:1 endif alone=19..27
        ---
        warning[W_UNTERMINATED] 0..2 1:1 `@{` without its closing `}`; left as text (write `\@` for a literal `@`)
    "#]],
    );
    check(
        "@{bogus body} @{ifdef} @{unterminated",
        expect![[r#"
        directive 0..13 1:1 unknown
        text 13..14 1:14 " "
        directive 14..22 1:15 unknown
        text 22..37 1:23 " @{unterminated"
        ---
        error[E_DIRECTIVE] 0..13 1:1 unknown directive `@{bogus body}`
        error[E_DIRECTIVE] 14..22 1:15 unknown directive `@{ifdef}`
        warning[W_UNTERMINATED] 23..25 1:24 `@{` without its closing `}`; left as text (write `\@` for a literal `@`)
    "#]],
    );
}

#[test]
fn includes_alone_in_fenced_code() {
    let options = Options { fence_includes: true, ..Options::default() };
    let kinds = |text: &str| -> Vec<&'static str> {
        scan_with(text, &options).items.iter().map(|i| i.kind.name()).collect()
    };
    assert_eq!(kinds("```\n  @[a.rs:2]\n```"), ["code", "include", "code"]);
    assert_eq!(kinds("```\n\\@[a.rs]\n```"), ["code", "escape", "code"]);
    for literal in ["```\n@[a] x\n```", "```\n// @[a]\n```", "```\n@[t{}]\n```", "```\n@{X}\n```"] {
        assert_eq!(kinds(literal), ["code"], "{literal:?}");
    }
    // Off by default: append mode never expands inside code.
    assert_eq!(scan("```\n@[a.rs]\n```").items.len(), 1);
    // Includes switched off (`--no-includes`) are off in a fence too, escapes with them.
    let off = Options { includes: false, ..options };
    for text in ["```\n@[a.rs]\n```", "```\n\\@[a.rs]\n```"] {
        let kinds: Vec<_> = scan_with(text, &off).items.iter().map(|i| i.kind.name()).collect();
        assert_eq!(kinds, ["code"], "{text:?}");
    }
}

/// security.md, "Limits": tool-call arguments over 64 KiB are left as text with
/// `W_UNTERMINATED`, never read as a path named after the tool.
#[test]
fn tool_arguments_past_their_limit_are_left_as_text() {
    let long = format!("@[read_file{{\"uri\":\"a.md\",\"x\":\"{}\"}}] after", "a".repeat(65_600));
    let scan = ctx_syntax::scan(&long);
    assert!(kinds(&long).is_empty(), "{:?}", kinds(&long));
    assert!(scan.diagnostics.iter().any(|d| d.code == ctx_syntax::Code::Unterminated));
    // Just within the limit, it is a tool call.
    let within = format!("@[read_file{{\"uri\":\"a.md\",\"x\":\"{}\"}}]", "a".repeat(60_000));
    assert_eq!(kinds(&within), ["tool"]);
}
