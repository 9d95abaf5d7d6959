//! The invariants of a scan, asserted; what the fuzzer and the property tests run.

use crate::ast::{Include, ItemKind, Position};
use crate::{LineIndex, Options, scan_with};

/// Scans `text` under several option sets and panics if an invariant does not hold:
/// the items are in order, contiguous and non-empty, cover the text byte for byte, lie on
/// character boundaries, carry the right line and column, and every slice an item holds lies
/// inside the item's span; diagnostics lie inside the text, in order; scanning is
/// deterministic.
pub fn check(text: &str) {
    let index = LineIndex::new(text);
    let all = Options::default();
    let variants = [
        all,
        Options { code_skip: false, ..all },
        Options { mentions: false, ..all },
        Options { includes: false, directives: false, ..all },
        Options { fence_includes: true, ..all },
        Options { mdbook: true, fence_includes: true, ..all },
        Options { mdbook: true, code_skip: false, ..all },
    ];
    for options in variants {
        let scan = scan_with(text, &options);
        let mut at = 0;
        for item in &scan.items {
            assert_eq!(item.span.start, at, "items must be contiguous: {item:?}");
            assert!(item.span.end > item.span.start, "items must not be empty: {item:?}");
            assert!(text.is_char_boundary(item.span.end), "span off a char boundary: {item:?}");
            assert_eq!(item.pos, index.position(item.span.start), "wrong position: {item:?}");
            let source = item.span.of(text);
            for part in borrowed_parts(&item.kind) {
                assert!(within(part, source), "{part:?} lies outside its item {item:?}");
            }
            check_kind(&item.kind, &options);
            at = item.span.end;
        }
        assert_eq!(at, text.len(), "items must cover the whole text");
        let mut last = Position { line: 1, column: 1 };
        for diagnostic in &scan.diagnostics {
            assert!(
                diagnostic.span.end <= text.len() && diagnostic.span.start <= diagnostic.span.end
            );
            assert!(text.is_char_boundary(diagnostic.span.start));
            assert_eq!(diagnostic.pos, index.position(diagnostic.span.start));
            assert!(diagnostic.pos >= last, "diagnostics out of order");
            last = diagnostic.pos;
        }
        assert_eq!(scan, scan_with(text, &options), "scanning must be deterministic");
    }
}

fn check_kind(kind: &ItemKind<'_>, options: &Options) {
    match kind {
        ItemKind::Mention(_) => assert!(options.mentions),
        ItemKind::Include(_) => assert!(options.includes),
        ItemKind::Directive(_) => assert!(options.directives),
        ItemKind::Code(_) => assert!(options.code_skip),
        ItemKind::Text | ItemKind::Escape(_) => {}
    }
}

/// The slices of the source that an item kind holds.
fn borrowed_parts<'a>(kind: &ItemKind<'a>) -> Vec<&'a str> {
    match kind {
        ItemKind::Text | ItemKind::Code(_) => vec![],
        ItemKind::Escape(escape) => vec![escape.unescaped],
        ItemKind::Mention(reference) | ItemKind::Include(Include::Reference(reference)) => {
            vec![reference.path.raw]
        }
        ItemKind::Include(Include::Tool(tool)) => vec![tool.name, tool.args],
        ItemKind::Directive(directive) => vec![directive.body],
    }
}

fn within(part: &str, whole: &str) -> bool {
    let (p, w) = (part.as_ptr() as usize, whole.as_ptr() as usize);
    p >= w && p + part.len() <= w + whole.len()
}
