//! The mdBook dialect (`Options::mdbook`): `{{#include file}}`, `{{#include file:2:10}}`,
//! `{{#include file:anchor}}`, `{{#rustdoc_include file:…}}`, `{{#playground file}}`,
//! `{{#title …}}` (which mdBook takes out of the text), and `\{{#…}}` for the literal text,
//! read as mdBook's link preprocessor reads them (see docs/dialects.md).

use crate::ast::{BookPart, BookRange, PathText, Reference, Selector, TargetKind};

/// A link of the `{{#` family at the start of `text`: its length and the reference it makes,
/// or `None` when `text` does not start with one of the links ctx reads (`{{#title}}`,
/// `{{#playground}}` and unknown kinds stay text, as they do not name a part of a file).
pub(crate) fn link(text: &str) -> Option<(usize, Reference<'_>)> {
    let rest = text.strip_prefix("{{")?;
    let blanks = rest.len() - rest.trim_start().len();
    let rest = rest[blanks..].strip_prefix('#')?;
    let kind_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    let (kind, rest) = rest.split_at(kind_len);
    let (rustdoc, playground) = match kind {
        "include" => (false, false),
        "rustdoc_include" => (true, false),
        "playground" | "playpen" => (false, true),
        _ => return None,
    };
    // At least one blank, then the target up to the first `}`, which must open `}}`.
    let target_start = rest.len() - rest.trim_start().len();
    if target_start == 0 {
        return None;
    }
    let body_end = rest.find('}')?;
    if body_end <= target_start || !rest[body_end..].starts_with("}}") {
        return None;
    }
    let body = &rest[target_start..body_end];
    // The path is the first word; mdBook ignores the rest of an include's words and takes a
    // playground's as the code block's attributes.
    let word = body.split_whitespace().next()?;
    let attributes = body.trim_start()[word.len()..].trim();
    if playground {
        let range = BookRange::Lines { start: 0, end: None };
        let part = BookPart { range, rustdoc: false, playground: Some(attributes) };
        return Some((text.len() - rest.len() + body_end + 2, book_reference(word, part)));
    }
    let (path, range) = match word.split_once(':') {
        Some((path, range)) => (path, Some(range)),
        None => (word, None),
    };
    let part = BookPart { range: range_of(range), rustdoc, playground: None };
    let len = text.len() - rest.len() + body_end + 2;
    Some((len, book_reference(path, part)))
}

fn book_reference<'a>(path: &'a str, part: BookPart<'a>) -> Reference<'a> {
    Reference {
        path: PathText { raw: path, quoted: false },
        target: TargetKind::File,
        selector: Some(Selector::Book(part)),
    }
}

/// The length of a `{{#title …}}` link at the start of `text`: mdBook sets the page's title
/// from it and leaves nothing in its place. As for every link, at least one blank follows the
/// kind, and the title runs to the first `}`, which must open `}}`.
pub(crate) fn title(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("{{")?;
    let rest = rest.trim_start().strip_prefix("#title")?;
    let blanks = rest.len() - rest.trim_start().len();
    let body_end = rest.find('}')?;
    // A blank, then at least one more character (a blank will do) before the `}}`.
    if blanks == 0 || body_end < 2 || !rest[body_end..].starts_with("}}") {
        return None;
    }
    Some(text.len() - rest.len() + body_end + 2)
}

/// The length of an escaped link `\{{#…}}` at the start of `text` (from the backslash to the
/// last `}}` on its line), as mdBook finds it.
pub(crate) fn escaped(text: &str) -> Option<usize> {
    let rest = text.strip_prefix("\\{{#")?;
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let end = line.rfind("}}")?;
    Some(4 + end + 2)
}

/// mdBook's reading of `start:end` (each part optional) or `anchor`: a number is a 1-based
/// line that becomes 0-based; an end that is not a number means the end of the file; no end
/// at all means the one line.
fn range_of(range: Option<&str>) -> BookRange<'_> {
    let mut parts = range.unwrap_or("").splitn(3, ':');
    let first = parts.next();
    let start = match first.map(str::parse::<usize>) {
        Some(Ok(n)) => Some(n.saturating_sub(1)),
        _ if first.is_none_or(str::is_empty) => None,
        _ => return BookRange::Anchor(first.unwrap_or_default()),
    };
    let end = parts.next().map(str::parse::<usize>);
    match (start, end) {
        (Some(start), Some(Ok(end))) => BookRange::Lines { start, end: Some(end) },
        (Some(start), Some(Err(_))) => BookRange::Lines { start, end: None },
        (Some(start), None) => BookRange::Lines { start, end: Some(start + 1) },
        (None, Some(Ok(end))) => BookRange::Lines { start: 0, end: Some(end) },
        (None, _) => BookRange::Lines { start: 0, end: None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str) -> Option<(usize, &str, BookPart<'_>)> {
        let (len, reference) = link(text)?;
        let Some(Selector::Book(part)) = reference.selector else { unreachable!() };
        Some((len, reference.path.raw, part))
    }

    fn lines(start: usize, end: Option<usize>) -> BookRange<'static> {
        BookRange::Lines { start, end }
    }

    #[test]
    fn the_forms_of_the_mdbook_guide() {
        let cases = [
            ("{{#include file.rs}}", lines(0, None)),
            ("{{#include file.rs:2}}", lines(1, Some(2))),
            ("{{#include file.rs::10}}", lines(0, Some(10))),
            ("{{#include file.rs:2:}}", lines(1, None)),
            ("{{#include file.rs:2:10}}", lines(1, Some(10))),
            ("{{#include file.rs:component}}", BookRange::Anchor("component")),
            ("{{#include file.rs:0}}", lines(0, Some(1))),
            ("{{#include file.rs:5:2}}", lines(4, Some(2))),
        ];
        for (text, range) in cases {
            let (len, path, part) = part(text).unwrap();
            assert_eq!(
                (len, path, part.range, part.rustdoc),
                (text.len(), "file.rs", range, false)
            );
        }
        let (_, _, rustdoc) = part("{{ #rustdoc_include ../a.rs:3 }} tail").unwrap();
        assert_eq!((rustdoc.range, rustdoc.rustdoc), (lines(2, Some(3)), true));
        let (_, path, play) = part("{{#playground example.rs editable}}").unwrap();
        assert_eq!((path, play.playground), ("example.rs", Some("editable")));
    }

    #[test]
    fn what_is_not_a_link() {
        for text in ["{{#title A}}", "{{#include}}", "{{#includea.rs}}", "{{#include a}", "{x}"] {
            assert!(link(text).is_none(), "{text}");
        }
        assert_eq!(escaped("\\{{#include a.rs}} and }} x\nnext }}"), Some(25));
    }

    #[test]
    fn titles() {
        assert_eq!(title("{{#title My Title}}\n# My Chapter"), Some(19));
        assert_eq!(title("{{ #title  A }} b"), Some(15));
        // mdBook's pattern takes one blank as the title and the other as the separator.
        assert_eq!(title("{{#title  }}"), Some(12));
        for text in ["{{#title}}", "{{#title }}", "{{#titles A}}", "{{#title A}", "{{#title A} }}"]
        {
            assert_eq!(title(text), None, "{text}");
        }
        assert_eq!(escaped("\\{{#include a.rs\n}}"), None);
    }
}
