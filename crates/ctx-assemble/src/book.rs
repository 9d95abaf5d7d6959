//! The parts of a file that mdBook's `{{#include}}` and `{{#rustdoc_include}}` take, by
//! mdBook's own rules (docs/dialects.md): lines are split as Rust's `str::lines` splits them
//! and joined with `\n` (so the last line has no line ending), a range past the end takes
//! nothing, a missing anchor takes nothing, and every anchor marker line is dropped.
//! `rustdoc_include` keeps the other lines too, hidden behind `# ` (marker lines aside).

use std::borrow::Cow;
use std::sync::LazyLock;

use ctx_syntax::{BookPart, BookRange};
use regex::Regex;

use crate::selection::{LineRange, Selection};

static ANCHOR_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"ANCHOR:\s*(?P<name>[\w_-]+)").expect("a valid pattern"));
static ANCHOR_END: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"ANCHOR_END:\s*(?P<name>[\w_-]+)").expect("a valid pattern"));

/// The part of `text` that `part` names.
pub(crate) fn select<'a>(text: &'a str, part: &BookPart<'_>) -> Selection<'a> {
    if let Some(attributes) = part.playground {
        return Selection {
            text: Cow::Owned(playground(text, attributes)),
            lines: None,
            skipped: Vec::new(),
        };
    }
    let taken = match (part.range, part.rustdoc) {
        (BookRange::Lines { start, end }, false) => lines(text, start, end),
        (BookRange::Anchor(name), false) => anchored(text, name),
        (BookRange::Lines { start, end }, true) => hidden_lines(text, start, end),
        (BookRange::Anchor(name), true) => hidden_anchored(text, name),
    };
    let lines = match part.range {
        BookRange::Lines { start, end } if !part.rustdoc => {
            let count = text.lines().count();
            let last = end.unwrap_or(count).min(count);
            (start < last && (start > 0 || end.is_some())).then(|| LineRange {
                start: u32::try_from(start + 1).unwrap_or(u32::MAX),
                end: u32::try_from(last).unwrap_or(u32::MAX),
            })
        }
        _ => None,
    };
    Selection { text: Cow::Owned(taken), lines, skipped: Vec::new() }
}

/// A playground: the whole file in a ` ```rust ` block whose info string carries the
/// attributes separated by commas, as mdBook writes it (its last line ending dropped, as every
/// insertion of mdBook's loses it).
fn playground(text: &str, attributes: &str) -> String {
    let words: Vec<&str> = attributes.split_whitespace().collect();
    let info =
        if words.is_empty() { "rust".to_owned() } else { format!("rust,{}", words.join(",")) };
    let mut body: Vec<&str> = vec![];
    body.extend(text.lines());
    format!("```{info}\n{}\n```", body.join("\n"))
}

fn in_range(index: usize, start: usize, end: Option<usize>) -> bool {
    index >= start && end.is_none_or(|end| index < end)
}

fn lines(text: &str, start: usize, end: Option<usize>) -> String {
    let taken: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| in_range(*i, start, end))
        .map(|(_, l)| l)
        .collect();
    taken.join("\n")
}

fn is_named(regex: &Regex, line: &str, name: &str) -> Option<bool> {
    regex.captures(line).map(|cap| &cap["name"] == name)
}

fn anchored(text: &str, name: &str) -> String {
    let mut kept = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if inside {
            match is_named(&ANCHOR_END, line, name) {
                Some(true) => break,
                Some(false) => {}
                None if !ANCHOR_START.is_match(line) => kept.push(line),
                None => {}
            }
        } else if is_named(&ANCHOR_START, line, name) == Some(true) {
            inside = true;
        }
    }
    kept.join("\n")
}

fn hidden_lines(text: &str, start: usize, end: Option<usize>) -> String {
    let shown: Vec<Cow<'_, str>> =
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                if in_range(i, start, end) {
                    Cow::Borrowed(l)
                } else {
                    Cow::Owned(format!("# {l}"))
                }
            })
            .collect();
    shown.join("\n")
}

fn hidden_anchored(text: &str, name: &str) -> String {
    let mut shown: Vec<Cow<'_, str>> = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if inside {
            match is_named(&ANCHOR_END, line, name) {
                Some(true) => inside = false,
                Some(false) => {}
                None if !ANCHOR_START.is_match(line) => shown.push(Cow::Borrowed(line)),
                None => {}
            }
        } else if let Some(named) = is_named(&ANCHOR_START, line, name) {
            // The start of any anchor is a marker line, dropped like every other marker.
            inside = named;
        } else if !ANCHOR_END.is_match(line) {
            shown.push(Cow::Owned(format!("# {line}")));
        }
    }
    shown.join("\n")
}

#[cfg(test)]
mod tests {
    //! The expectations of mdBook's own tests of its line-taking helpers (rust-lang/mdBook at
    //! 641d06a, crates/mdbook-driver/src/builtin_preprocessors/links/take_lines.rs:
    //! `take_lines_test`, `take_anchored_lines_test`, `take_rustdoc_include_lines_test`,
    //! `take_rustdoc_include_anchored_lines_test`), restated as cases of ctx's mdBook dialect.

    use super::*;

    const FIVE: &str = "Lorem\nipsum\ndolor\nsit\namet";

    fn part(range: BookRange<'_>, rustdoc: bool) -> BookPart<'_> {
        BookPart { range, rustdoc, playground: None }
    }

    #[test]
    fn playgrounds() {
        let all = BookRange::Lines { start: 0, end: None };
        let play = |attrs| BookPart { range: all, rustdoc: false, playground: Some(attrs) };
        let code = "fn main() {}\r\n";
        assert_eq!(select(code, &play("")).text, "```rust\nfn main() {}\n```");
        assert_eq!(
            select(code, &play("editable ignore")).text,
            "```rust,editable,ignore\nfn main() {}\n```"
        );
    }

    fn take(text: &str, start: usize, end: Option<usize>, rustdoc: bool) -> String {
        select(text, &part(BookRange::Lines { start, end }, rustdoc)).text.into_owned()
    }

    fn anchor(text: &str, name: &str, rustdoc: bool) -> String {
        select(text, &part(BookRange::Anchor(name), rustdoc)).text.into_owned()
    }

    #[test]
    fn line_ranges_as_mdbook_takes_them() {
        assert_eq!(take(FIVE, 1, Some(3), false), "ipsum\ndolor");
        assert_eq!(take(FIVE, 3, None, false), "sit\namet");
        assert_eq!(take(FIVE, 0, Some(3), false), "Lorem\nipsum\ndolor");
        assert_eq!(take(FIVE, 0, None, false), FIVE);
        // A reversed range takes nothing; an end past the file takes to its end.
        assert_eq!(take(FIVE, 4, Some(3), false), "");
        assert_eq!(take(FIVE, 0, Some(100), false), FIVE);
        // The file's last line ending is not kept, and CRLF becomes LF.
        assert_eq!(take("a\r\nb\n", 0, None, false), "a\nb");
    }

    #[test]
    fn anchors_as_mdbook_takes_them() {
        assert_eq!(anchor(FIVE, "test", false), "");
        assert_eq!(anchor("Lorem\nipsum\ndolor\nANCHOR_END: test\nsit\namet", "test", false), "");
        let open = "Lorem\nipsum\nANCHOR: test\ndolor\nsit\namet";
        assert_eq!(anchor(open, "test", false), "dolor\nsit\namet");
        assert_eq!(anchor(open, "something", false), "");
        let closed = "Lorem\nipsum\nANCHOR: test\ndolor\nsit\namet\nANCHOR_END: test\nlorem\nipsum";
        assert_eq!(anchor(closed, "test", false), "dolor\nsit\namet");
        assert_eq!(anchor(closed, "something", false), "");
        let twice = "Lorem\nANCHOR: test\nipsum\nANCHOR: test\ndolor\nsit\namet\nANCHOR_END: test\nlorem\nipsum";
        assert_eq!(anchor(twice, "test", false), "ipsum\ndolor\nsit\namet");
        assert_eq!(anchor(twice, "something", false), "");
        let nested = "Lorem\nANCHOR:    test2\nipsum\nANCHOR: test\ndolor\nsit\namet\nANCHOR_END: test\nlorem\nANCHOR_END:test2\nipsum";
        assert_eq!(anchor(nested, "test2", false), "ipsum\ndolor\nsit\namet\nlorem");
        assert_eq!(anchor(nested, "test", false), "dolor\nsit\namet");
        assert_eq!(anchor(nested, "something", false), "");
    }

    #[test]
    fn rustdoc_include_hides_the_rest() {
        assert_eq!(take(FIVE, 1, Some(3), true), "# Lorem\nipsum\ndolor\n# sit\n# amet");
        assert_eq!(take(FIVE, 3, None, true), "# Lorem\n# ipsum\n# dolor\nsit\namet");
        assert_eq!(take(FIVE, 0, Some(3), true), "Lorem\nipsum\ndolor\n# sit\n# amet");
        assert_eq!(take(FIVE, 0, None, true), FIVE);
        assert_eq!(take(FIVE, 4, Some(3), true), "# Lorem\n# ipsum\n# dolor\n# sit\n# amet");
        assert_eq!(take(FIVE, 0, Some(100), true), FIVE);
        let hidden = "# Lorem\n# ipsum\n# dolor\n# sit\n# amet";
        assert_eq!(anchor(FIVE, "test", true), hidden);
        let closed = "Lorem\nipsum\nANCHOR: test\ndolor\nsit\namet\nANCHOR_END: test\nlorem\nipsum";
        assert_eq!(
            anchor(closed, "test", true),
            "# Lorem\n# ipsum\ndolor\nsit\namet\n# lorem\n# ipsum"
        );
        let twice = "Lorem\nANCHOR: test\nipsum\nANCHOR_END: test\ndolor\nANCHOR: test\nsit\nANCHOR_END: test\namet";
        assert_eq!(anchor(twice, "test", true), "# Lorem\nipsum\n# dolor\nsit\n# amet");
    }

    /// rust-lang/mdBook at 641d06a,
    /// crates/mdbook-driver/src/builtin_preprocessors/links/take_lines.rs,
    /// `take_rustdoc_include_anchored_lines_test`: every anchor marker line is dropped, those of
    /// other anchors too, and an anchor that is not in the file hides the whole file.
    #[test]
    fn rustdoc_include_drops_every_marker() {
        let all_hidden = "# Lorem\n# ipsum\n# dolor\n# sit\n# amet";
        let closed_only = "Lorem\nipsum\ndolor\nANCHOR_END: test\nsit\namet";
        assert_eq!(anchor(closed_only, "test", true), all_hidden);
        let open = "Lorem\nipsum\nANCHOR: test\ndolor\nsit\namet";
        assert_eq!(anchor(open, "test", true), "# Lorem\n# ipsum\ndolor\nsit\namet");
        assert_eq!(anchor(open, "something", true), all_hidden);
        let seven_hidden = "# Lorem\n# ipsum\n# dolor\n# sit\n# amet\n# lorem\n# ipsum";
        let closed = "Lorem\nipsum\nANCHOR: test\ndolor\nsit\namet\nANCHOR_END: test\nlorem\nipsum";
        assert_eq!(anchor(closed, "something", true), seven_hidden);
        let twice = "Lorem\nANCHOR: test\nipsum\nANCHOR: test\ndolor\nsit\namet\nANCHOR_END: test\nlorem\nipsum";
        assert_eq!(
            anchor(twice, "test", true),
            "# Lorem\nipsum\ndolor\nsit\namet\n# lorem\n# ipsum"
        );
        assert_eq!(anchor(twice, "something", true), seven_hidden);
        let nested = "Lorem\nANCHOR:    test2\nipsum\nANCHOR: test\ndolor\nsit\namet\nANCHOR_END: test\nlorem\nANCHOR_END:test2\nipsum";
        assert_eq!(
            anchor(nested, "test2", true),
            "# Lorem\nipsum\ndolor\nsit\namet\nlorem\n# ipsum"
        );
        assert_eq!(
            anchor(nested, "test", true),
            "# Lorem\n# ipsum\ndolor\nsit\namet\n# lorem\n# ipsum"
        );
        assert_eq!(anchor(nested, "something", true), seven_hidden);
        // An anchor inside another: the outer one's markers go too.
        let inner = "a\n// ANCHOR: all\nb\n// ANCHOR: part\nc\n// ANCHOR_END: part\nd\n// ANCHOR_END: all\ne\n";
        assert_eq!(anchor(inner, "part", true), "# a\n# b\nc\n# d\n# e");
    }

    #[test]
    fn the_lines_taken_are_recorded() {
        let lines = |start, end| select(FIVE, &part(BookRange::Lines { start, end }, false)).lines;
        assert_eq!(lines(1, Some(3)), Some(LineRange { start: 2, end: 3 }));
        assert_eq!(lines(3, None), Some(LineRange { start: 4, end: 5 }));
        assert_eq!(lines(0, None), None, "the whole file");
        assert_eq!(lines(4, Some(3)), None, "nothing taken");
    }
}
