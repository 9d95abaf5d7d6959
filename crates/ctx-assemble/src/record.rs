//! The records of an assembly, which are also the JSON output's schema (assembly.md §7):
//! the assembly itself, one record per reference, one per diagnostic, and the totals.

use std::ops::Range;

use ctx_syntax::{Code, Severity};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// The result of an assembly: what `--format json` prints (assembly.md §7). Field names and
/// order are the documented, stable schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assembly {
    /// The rendered text of the chosen mode (empty when it was streamed to a writer).
    pub content: String,
    /// The top-level document's description.
    pub description: String,
    /// The params of every included Markdown file, merged.
    pub params: Vec<String>,
    /// The other keys of the top-level document's front matter.
    pub metadata: Map<String, Value>,
    /// One record per recognised item, depth first (a document's record before the records
    /// of what it includes), in source order.
    pub references: Vec<ReferenceRecord>,
    /// Every diagnostic of the run, in the order the walk met them.
    pub diagnostics: Vec<DiagnosticRecord>,
    /// Totals.
    pub stats: Stats,
}

/// How a reference was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Syntax {
    /// `@path`.
    Mention,
    /// `@[...]`.
    Include,
    /// `@{include "..."}`.
    Directive,
}

/// What a reference names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A file.
    File,
    /// A directory.
    Directory,
    /// A glob.
    Glob,
    /// A tool call.
    Tool,
}

/// A 1-based inclusive line range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Lines {
    /// First line.
    pub start: u32,
    /// Last line, clamped to the file.
    pub end: u32,
}

/// Where an item is: the file (relative to its root, `/`-separated), line and column.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct At {
    /// The file that holds the item.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in Unicode scalar values.
    pub column: u32,
}

/// The error of a reference that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorRecord {
    /// The stable code, such as `E_NOT_FOUND`.
    #[serde(serialize_with = "code_str")]
    pub code: Code,
    /// The lower-case message.
    pub message: String,
}

/// One recognised item of the document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReferenceRecord {
    /// The item's exact source text.
    pub raw: String,
    /// How it was written.
    pub syntax: Syntax,
    /// What it names.
    pub kind: Kind,
    /// The resolved path relative to its root, `/`-separated, no trailing slash; for tools,
    /// the tool name.
    pub path: String,
    /// The lines actually taken, or `null` for a whole file.
    pub lines: Option<Lines>,
    /// Bytes of content it contributed.
    pub bytes: u64,
    /// Tokens of that content, `null` unless token counting was asked for.
    pub tokens: Option<u64>,
    /// Whether its content was cut (line limit or token budget).
    pub truncated: bool,
    /// The front matter of an included Markdown file, or `null`.
    pub front_matter: Option<Value>,
    /// Where the item is.
    pub at: At,
    /// Why it failed, or `null`.
    pub error: Option<ErrorRecord>,
    /// How deep the item is: 0 in the top-level document, 1 in a file it includes, and so on.
    pub depth: usize,
    /// For a directory or glob: how many entries the sandbox refused in its walk (denied
    /// names, links out of the roots…); written only when some were.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped: u64,
    /// Whether the item is an attachment that ctx suggested for the text rather than a
    /// reference the text holds (assembly.md, "Attachments"); written only when it is.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub suggested: bool,
    /// For a file that was not UTF-8: the encoding its text was decoded from (`UTF-16LE`,
    /// `windows-1252`, `GBK`, …); written only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// What the token budget cut of its content (for a directory or glob, of the file it
    /// cut); written only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<CutRecord>,
    /// How many files the token budget left out (1 for a file, the files not written for a
    /// directory or glob), each said in the output by a note; written only when some were.
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped: u64,
}

/// What the token budget kept of a piece of content it cut; the output says the same in the
/// marker that ends the content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CutRecord {
    /// The file cut (a tool's name for a tool's result).
    pub path: String,
    /// The lines kept, as lines of the file (`start` > `end` when none were).
    pub kept: Lines,
    /// Lines of the content before the cut.
    pub total_lines: u64,
    /// Tokens kept, in the run's tokenizer.
    pub kept_tokens: u64,
    /// Tokens of the content before the cut.
    pub total_tokens: u64,
    /// `outline` when the file was reduced to its outline and the ranges in `ranges` rather
    /// than cut at its head (`kept` is then the first of them); written only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
    /// The ranges of lines kept beside the outline, in line order; written only when some
    /// were.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranges: Vec<Lines>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One diagnostic of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiagnosticRecord {
    /// `error` or `warning`.
    #[serde(serialize_with = "severity_str")]
    pub severity: Severity,
    /// The stable code.
    #[serde(serialize_with = "code_str")]
    pub code: Code,
    /// The lower-case message.
    pub message: String,
    /// The file it is about, relative to its root, `/`-separated.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The source the diagnostic is about, when the walk had it at hand: enough for a printer
    /// to show the line with a caret under the span without reading or scanning anything.
    /// Not part of the JSON schema.
    #[serde(skip)]
    pub source: Option<Source>,
}

/// Most diagnostics one run keeps; past them each is counted, not kept, and one `W_LIMIT` at
/// the end says how many were left out (docs/assembly.md, "Diagnostics"). An error past them
/// is kept when none was, so that whether the run had errors stands.
pub const MAX_DIAGNOSTICS: usize = 10_000;

/// Most characters a diagnostic keeps of its source: the window of its line around the span
/// (docs/assembly.md, "Diagnostics"). A document of one long line with many problems keeps
/// this much per problem, not the line each time.
pub const WINDOW_CHARS: usize = 240;

/// Most characters of the window before the span.
pub const WINDOW_BEFORE: usize = 80;

/// Most characters of the span kept in the window; a longer span is clipped there.
pub const WINDOW_SPAN: usize = 160;

/// The source a diagnostic is about: a window of the lines that hold its span, at most
/// [`WINDOW_CHARS`] characters, and where the span lies in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The byte span in the file (or in the text given as a string).
    pub span: Range<usize>,
    /// The window: up to [`WINDOW_BEFORE`] characters of the span's line before it, up to
    /// [`WINDOW_SPAN`] of the span, then the rest of its last line up to [`WINDOW_CHARS`] in
    /// all, without the final line ending. Cut on character boundaries.
    pub lines: String,
    /// The 1-based line number of the window's first line.
    pub first_line: u32,
    /// The 1-based column of the window's first character on its line, in characters
    /// counted on the whole line.
    pub first_column: u32,
    /// Whether the line starts before the window.
    pub clipped_before: bool,
    /// Whether the line (or the span itself) goes on past the window's end.
    pub clipped_after: bool,
    /// The span as a byte range of `lines` (clamped to them; a clipped span ends with them).
    pub in_lines: Range<usize>,
}

impl Source {
    /// The source of the bytes `span` of `text`, a text whose first line is line `first_line`
    /// of its file and which starts at byte `offset` of it. It counts the lines and columns
    /// before the span: for one diagnostic, not for each of many (see [`Source::on_line`]).
    pub fn of(text: &str, span: Range<usize>, first_line: u32, offset: usize) -> Source {
        let start = floor_boundary(text, span.start.min(text.len()));
        let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..start]).map_or(0, |i| i + 1);
        let line = first_line.saturating_add(bytecount_newlines(&text.as_bytes()[..line_start]));
        let column = u32::try_from(text[line_start..start].chars().count() + 1).unwrap_or(u32::MAX);
        Source::on_line(text, span, line, column, offset)
    }

    /// The same, when the line and column of the span's start are known (`line` 1-based in
    /// its file, `column` 1-based in characters): only the window itself is looked at, so its
    /// cost does not grow with the line.
    pub fn on_line(
        text: &str,
        span: Range<usize>,
        line: u32,
        column: u32,
        offset: usize,
    ) -> Source {
        let start = floor_boundary(text, span.start.min(text.len()));
        let end = floor_boundary(text, span.end.clamp(start, text.len()));
        // Back to the line's start, or WINDOW_BEFORE characters.
        let mut from = start;
        let mut before = 0;
        for c in text[..start].chars().rev() {
            if c == '\n' || before == WINDOW_BEFORE {
                break;
            }
            from -= c.len_utf8();
            before += 1;
        }
        // The span, up to WINDOW_SPAN characters.
        let mut to = start;
        let mut kept = 0;
        for c in text[start..end].chars() {
            if kept == WINDOW_SPAN {
                break;
            }
            to += c.len_utf8();
            kept += 1;
        }
        let span_end = to;
        // After a whole span, the rest of its line up to WINDOW_CHARS in all.
        if span_end == end {
            let mut room = WINDOW_CHARS - before - kept;
            for c in text[to..].chars() {
                if c == '\n' || room == 0 {
                    break;
                }
                to += c.len_utf8();
                room -= 1;
            }
        }
        let rest = &text[to..];
        let line_ends = rest.is_empty() || rest.starts_with('\n') || rest.starts_with("\r\n");
        let clipped_after = span_end < end || !(line_ends || rest == "\r");
        let mut lines = &text[from..to];
        if !clipped_after && let Some(trimmed) = lines.strip_suffix('\r') {
            lines = trimmed;
        }
        let clipped_before = from > 0 && text.as_bytes()[from - 1] != b'\n';
        let first_column = u32::try_from(before).map_or(1, |b| column.saturating_sub(b).max(1));
        Source {
            span: offset + start..offset + end,
            lines: lines.to_owned(),
            first_line: line,
            first_column,
            clipped_before,
            clipped_after,
            in_lines: (start - from).min(lines.len())..(span_end - from).min(lines.len()),
        }
    }
}

/// The largest character boundary of `text` at or before `at` (at most its length).
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn bytecount_newlines(bytes: &[u8]) -> u32 {
    u32::try_from(memchr::memchr_iter(b'\n', bytes).count()).unwrap_or(u32::MAX)
}

impl DiagnosticRecord {
    /// A record whose severity is the code's own.
    pub fn new(code: Code, message: String, file: String, line: u32, column: u32) -> Self {
        DiagnosticRecord {
            severity: code.severity(),
            code,
            message,
            file,
            line,
            column,
            source: None,
        }
    }

    /// The same record, with its source.
    pub fn with_source(mut self, source: Option<Source>) -> Self {
        self.source = source;
        self
    }
}

/// Totals of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// Files read.
    pub files: u64,
    /// Bytes of output content.
    pub bytes: u64,
    /// Tokens of output content, `null` unless token counting was asked for.
    pub tokens: Option<u64>,
    /// The tokenizer every count and budget of the run is in: `o200k` or
    /// `anthropic-estimate`.
    pub tokenizer: &'static str,
    /// Wall-clock time of the run, in milliseconds.
    pub elapsed_ms: f64,
    /// Of the files read, those written part by part without being held whole (large files
    /// when nothing needs them whole; docs/assembly.md). Not part of the JSON record.
    #[serde(skip)]
    pub streamed: u64,
}

fn code_str<S: Serializer>(code: &Code, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(code.as_str())
}

fn severity_str<S: Serializer>(severity: &Severity, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(severity.name())
}

impl Assembly {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    /// The JSON output, pretty-printed, with a final line break. Every string in it is made
    /// visible as content is ([`crate::sanitize::sanitize_json`]): the records quote the
    /// documents (reference text, paths as written, front matter), and JSON itself escapes
    /// only the C0 controls.
    pub fn to_json(&self) -> String {
        let json = serde_json::to_value(self).and_then(|mut value| {
            crate::sanitize::sanitize_json(&mut value);
            serde_json::to_string_pretty(&value)
        });
        let mut json = json.unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        json.push('\n');
        json
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_schema() {
        let out = Assembly {
            content: "text".into(),
            description: "d".into(),
            params: vec!["p".into()],
            metadata: Map::new(),
            references: vec![ReferenceRecord {
                raw: "@[a.md:2:4]".into(),
                syntax: Syntax::Include,
                kind: Kind::File,
                path: "a.md".into(),
                lines: Some(Lines { start: 2, end: 4 }),
                bytes: 123,
                tokens: None,
                truncated: false,
                front_matter: None,
                at: At { file: "main.md".into(), line: 3, column: 5 },
                error: Some(ErrorRecord {
                    code: Code::NotFound,
                    message: "no such file: a.md".into(),
                }),
                depth: 0,
                skipped: 0,
                suggested: false,
                encoding: None,
                cut: None,
                dropped: 0,
            }],
            diagnostics: vec![DiagnosticRecord::new(
                Code::NotFound,
                "no such file: a.md".into(),
                "main.md".into(),
                3,
                5,
            )],
            stats: Stats {
                files: 3,
                bytes: 456,
                tokens: Some(120),
                tokenizer: "o200k",
                elapsed_ms: 1.5,
                streamed: 0,
            },
        };
        let value = serde_json::to_value(&out).unwrap();
        assert_eq!(
            value,
            json!({
                "content": "text", "description": "d", "params": ["p"], "metadata": {},
                "references": [{
                    "raw": "@[a.md:2:4]", "syntax": "include", "kind": "file", "path": "a.md",
                    "lines": {"start": 2, "end": 4}, "bytes": 123, "tokens": null,
                    "truncated": false, "front_matter": null,
                    "at": {"file": "main.md", "line": 3, "column": 5},
                    "error": {"code": "E_NOT_FOUND", "message": "no such file: a.md"},
                    "depth": 0
                }],
                "diagnostics": [{"severity": "error", "code": "E_NOT_FOUND",
                    "message": "no such file: a.md", "file": "main.md", "line": 3, "column": 5}],
                "stats": {"files": 3, "bytes": 456, "tokens": 120, "tokenizer": "o200k", "elapsed_ms": 1.5}
            })
        );
        // What the records quote from the documents is made visible; the order stays.
        let mut hostile = out.clone();
        hostile.description = "d\u{202e}".into();
        hostile.references[0].raw = "@[a\u{1b}]0;t\u{7}.md]".into();
        let json = hostile.to_json();
        assert!(json.contains(r#""description": "d\\u{202E}""#), "{json}");
        assert!(json.contains(r#""raw": "@[a\\u{1b}]0;t\\u{7}.md]""#), "{json}");
        assert_eq!(serde_json::from_str::<Value>(&json).unwrap()["references"][0]["path"], "a.md");
        // Field order is the documented order.
        let text = serde_json::to_string(&out).unwrap();
        let keys = [
            "\"content\"",
            "\"description\"",
            "\"params\"",
            "\"metadata\"",
            "\"references\"",
            "\"diagnostics\"",
            "\"stats\"",
        ];
        let positions: Vec<usize> = keys.iter().map(|k| text.find(k).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    }

    #[test]
    fn sources_cover_the_span_lines() {
        let text = "one\ntwo @[x] three\r\nfour\n";
        let at = text.find("@[x]").unwrap();
        let source = Source::of(text, at..at + 4, 10, 100);
        assert_eq!(source.lines, "two @[x] three");
        assert_eq!(source.first_line, 11);
        assert_eq!(source.in_lines, 4..8);
        assert_eq!(source.span, 100 + at..100 + at + 4);
        let multi = Source::of(text, 0..7, 1, 0);
        assert_eq!(multi.lines, "one\ntwo @[x] three");
        assert_eq!(multi.in_lines, 0..7);
        let empty = Source::of("", 0..0, 1, 0);
        assert_eq!((empty.lines.as_str(), empty.in_lines), ("", 0..0));
        assert!(!multi.clipped_before && !multi.clipped_after && multi.first_column == 1);
    }

    /// The column of byte `at` of `text`, counted from its line's start.
    fn column_of(text: &str, at: usize) -> u32 {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        text[line_start..at].chars().count() as u32 + 1
    }

    /// What every window must be: at most WINDOW_CHARS characters of the text, on character
    /// boundaries, the span where it is, its columns counted on the whole line, and a mark on
    /// each side the line goes on.
    fn check_window(text: &str, span: Range<usize>, source: &Source) {
        let lines = source.lines.as_str();
        assert!(lines.chars().count() <= WINDOW_CHARS, "{} chars", lines.chars().count());
        let from = span.start - source.in_lines.start;
        assert_eq!(&text[from..from + lines.len()], lines);
        assert_eq!(source.first_column, column_of(text, from));
        assert_eq!(source.clipped_before, from > 0 && !text[..from].ends_with('\n'));
        let end = from + lines.len();
        let rest = &text[end..];
        let rest = rest.strip_prefix('\r').unwrap_or(rest);
        let span_rest = &text[end.min(span.end)..span.end];
        let span_goes_on = !(span_rest.is_empty() || span_rest == "\r");
        let line_goes_on = !(rest.is_empty() || rest.starts_with('\n'));
        assert_eq!(source.clipped_after, span_goes_on || line_goes_on, "{rest:?}");
        // The span is kept whole (but a final `\r`) up to WINDOW_SPAN characters.
        let (kept, whole) = (&lines[source.in_lines.clone()], &text[span]);
        assert!(whole.starts_with(kept));
        let kept_chars = kept.chars().count();
        assert!(
            kept_chars == whole.chars().count().min(WINDOW_SPAN) || format!("{kept}\r") == whole
        );
    }

    /// A long line of failing mentions: each diagnostic keeps a window, not the line.
    #[test]
    fn windows_of_a_long_line() {
        let text = "@nothere.md ".repeat(1 << 16);
        for i in [0, 1, 6, 7, 100, 30_000, (1 << 16) - 1] {
            let at = i * 12;
            let source = Source::on_line(&text, at..at + 11, 1, at as u32 + 1, 5);
            check_window(&text, at..at + 11, &source);
            assert_eq!(&source.lines[source.in_lines.clone()], "@nothere.md");
            assert_eq!(source.span, at + 5..at + 16);
            assert_eq!(source.first_line, 1);
            assert_eq!(source.first_column + source.in_lines.start as u32, at as u32 + 1);
            assert_eq!(source.in_lines.start, at.min(WINDOW_BEFORE));
            assert_eq!(source.clipped_before, at > WINDOW_BEFORE);
            assert_eq!(source.clipped_after, i < (1 << 16) - 1);
            assert_eq!(Source::of(&text, at..at + 11, 1, 5), source);
        }
        // The last mention: the window ends with the line, its final blank included.
        let last = text.len() - 12;
        let source = Source::on_line(&text, last..last + 11, 1, last as u32 + 1, 0);
        assert_eq!(source.lines.len(), WINDOW_BEFORE + 12);
    }

    /// A span longer than the window is clipped to WINDOW_SPAN characters, nothing after it.
    #[test]
    fn long_spans_are_clipped() {
        let text = format!("ab {}) after\nnext", "@[".to_owned() + &"x".repeat(5000));
        let span = 3..text.find(')').unwrap() + 1;
        let source = Source::on_line(&text, span.clone(), 4, 4, 0);
        check_window(&text, span, &source);
        assert_eq!(source.lines, format!("ab @[{}", "x".repeat(WINDOW_SPAN - 2)));
        assert_eq!(source.in_lines, 3..3 + WINDOW_SPAN);
        assert!(!source.clipped_before && source.clipped_after);
        // A span over several lines keeps its lines within the window.
        let text = "one\ntwo\r\nthree";
        let source = Source::on_line(text, 1..7, 1, 2, 0);
        assert_eq!((source.lines.as_str(), source.in_lines), ("one\ntwo", 1..7));
        assert!(!source.clipped_after);
    }

    /// Characters of several bytes at both edges of the window: cut between characters.
    #[test]
    fn windows_cut_between_characters() {
        let text = format!("{}@x.md{}", "\u{1f600}".repeat(300), "\u{e9}".repeat(300));
        let at = 300 * 4;
        let source = Source::on_line(&text, at..at + 5, 1, 301, 0);
        check_window(&text, at..at + 5, &source);
        assert_eq!(source.lines.chars().count(), WINDOW_CHARS);
        assert_eq!(source.first_column, 301 - WINDOW_BEFORE as u32);
        // A span that starts or ends inside a character is moved back to its start.
        let source = Source::on_line(&text, 2..at + 6, 1, 1, 0);
        assert!(source.lines.starts_with('\u{1f600}'));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Random lines of characters of every width, line endings and spans: no panic, and
        /// every window is what `check_window` says.
        #[test]
        fn windows_hold_for_any_line_and_span(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", " ", "@x.md", "\u{e9}", "\u{20ac}", "\u{1f600}", "\n", "\r\n", "\t",
                    "\u{202e}", "\u{1b}",
                ]),
                0..600,
            ),
            start in 0usize..4000,
            len in 0usize..1200,
            offset in 0usize..10,
        ) {
            let text: String = pieces.concat();
            let mut start = start.min(text.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + len).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let column = column_of(&text, start);
            let line = text[..start].matches('\n').count() as u32 + 1;
            let source = Source::on_line(&text, start..end, line, column, offset);
            check_window(&text, start..end, &source);
            proptest::prop_assert_eq!(source.span.clone(), offset + start..offset + end);
            proptest::prop_assert_eq!(source.first_line, line);
            proptest::prop_assert_eq!(&Source::of(&text, start..end, 1, offset), &source);
            let before = source.lines[..source.in_lines.start].chars().count() as u32;
            proptest::prop_assert_eq!(source.first_column + before, column);
        }
    }
}
