//! Property tests: the scan invariants on arbitrary and on syntax-heavy text, and items
//! placed in random prose found with the right fields.

use ctx_syntax::{Include, ItemKind, LineEnd, Selector, TargetKind, scan};
use proptest::prelude::*;

/// Text built from the pieces the grammar cares about, so that random strings hit the
/// interesting paths far more often than uniform characters would.
fn syntax_soup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "{{#include a.md:2}}",
        "{{#rustdoc_include b.rs:x}}",
        "\\{{#",
        "}}",
        "@",
        "@[",
        "@{",
        "[",
        "]",
        "{",
        "}",
        "\"",
        "\\",
        "`",
        "```",
        "~~~",
        "#",
        "#L",
        ":",
        "::",
        "-",
        ".",
        ",",
        " ",
        "\t",
        "\n",
        "\r\n",
        "a",
        "b.md",
        "src/",
        "*",
        "?",
        "1",
        "20",
        "é",
        "😀",
        "\u{202f}",
        "。",
        "define X",
        "ifdef X",
        "endif",
        "else",
        "if X IS \"y\"",
        "include \"a.md\"",
        "grep{\"p\":\"]\"}",
        "\"x}y\"",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn invariants_hold_on_arbitrary_text(text in any::<String>()) {
        ctx_syntax::check(&text);
    }

    #[test]
    fn invariants_hold_on_syntax_soup(text in syntax_soup()) {
        ctx_syntax::check(&text);
    }

    #[test]
    fn a_mention_in_prose_is_found(
        before in "[a-z ]{0,30}",
        after in "[a-z ]{0,30}",
        path in "[a-z]{1,8}(/[a-z]{1,8}){0,3}\\.[a-z]{1,3}",
        lines in proptest::option::of((1u32..5000, proptest::option::of(1u32..5000))),
    ) {
        let fragment = match lines {
            None => String::new(),
            Some((start, None)) => format!("#L{start}"),
            Some((start, Some(end))) => format!("#L{start}-{end}"),
        };
        let text = format!("{before} @{path}{fragment} {after}");
        let scanned = scan(&text);
        let found: Vec<_> = scanned.items.iter().filter(|i| i.kind.name() != "text").collect();
        prop_assert_eq!(found.len(), 1);
        let ItemKind::Mention(reference) = &found[0].kind else { panic!("not a mention") };
        prop_assert_eq!(reference.path.raw, path.as_str());
        prop_assert_eq!(reference.target, TargetKind::File);
        let want = lines.map(|(start, end)| Selector::Lines {
            start,
            end: LineEnd::Line(end.unwrap_or(start)),
        });
        prop_assert_eq!(reference.selector, want);
        prop_assert_eq!(found[0].span.start, before.len() + 1);
        prop_assert_eq!(found[0].pos.column as usize, before.len() + 2);
    }

    #[test]
    fn an_include_in_prose_is_found(
        before in "[a-z \n]{0,30}",
        after in "[a-z \n]{0,30}",
        path in "[a-z ]{0,3}[a-z]{1,8}(/[a-z]{1,8}){0,2}\\.md",
        range in proptest::option::of((0u32..5000, 0u32..5000)),
    ) {
        let suffix = range.map_or(String::new(), |(a, b)| format!(":{a}:{b}"));
        let text = format!("{before}@[{path}{suffix}]{after}");
        let scanned = scan(&text);
        let found: Vec<_> = scanned.items.iter().filter(|i| i.kind.name() != "text").collect();
        prop_assert_eq!(found.len(), 1);
        let ItemKind::Include(Include::Reference(reference)) = &found[0].kind else {
            panic!("not an include")
        };
        prop_assert_eq!(reference.path.raw, path.trim());
        let want = range.map(|(start, end)| Selector::Lines { start, end: LineEnd::Line(end) });
        prop_assert_eq!(reference.selector, want);
        let line = before.matches('\n').count() as u32 + 1;
        prop_assert_eq!(found[0].pos.line, line);
    }
}

/// Paths as people name files: any printable characters, the grammar's terminators, spaces,
/// quotes, backslashes, `#`, dots and colons among them.
fn any_path() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zA-Z0-9_./-]{1,6}",
        prop::sample::select(vec![
            " ", "\"", "\\", "#", ".", ":", ",", ";", "!", "?", "(", ")", "[", "]", "{", "}", "<",
            ">", "'", "`", "@", "é", "日本", "\u{202f}", "\u{a0}", "~", "*", "L1", "-",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 1..8).prop_map(|pieces| pieces.concat())
}

proptest! {
    /// Scanning the mention written for a path gives that path back: one mention, the whole
    /// text, no fragment. Every path without control characters is nameable unless its end
    /// reads as a fragment.
    #[test]
    fn a_written_mention_scans_back_to_its_path(path in any_path()) {
        let Some(mention) = ctx_syntax::mention_of(&path) else {
            let fragment = path.rsplit_once('#').map(|(_, f)| f).unwrap_or("");
            prop_assert!(
                !fragment.is_empty()
                    && fragment.chars().all(|c| c.is_alphanumeric() || "_-".contains(c)),
                "{path:?} should be nameable"
            );
            return Ok(());
        };
        let scan = scan(&mention);
        prop_assert_eq!(scan.items.len(), 1, "{:?} -> {:?}: {:?}", path, mention, scan.items);
        let item = &scan.items[0];
        let ItemKind::Mention(reference) = &item.kind else {
            return Err(TestCaseError::fail(format!("{mention:?} is no mention")));
        };
        prop_assert_eq!(reference.path.unescaped(), path.as_str(), "{}", mention);
        prop_assert!(reference.selector.is_none(), "{}", mention);
        prop_assert_eq!(ctx_syntax::typed_path(&mention), path);
    }
}
