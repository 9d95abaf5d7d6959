//! The scanner: finds candidates with `memchr`, hands each to its parser, and keeps the
//! items contiguous.

use memchr::{memchr, memchr3, memrchr};

use crate::ast::{
    CodeKind, Directive, DirectiveKind, Escape, Item, ItemKind, PathText, Position, Reference, Span,
};
use crate::code::{code_span_close, fence_at, run_len};
use crate::diagnostic::{Code, Diagnostic};
use crate::reference::{
    JsonScan, fragment_prefix, is_ident_start, json_object_scan, mention_fragment,
    parse_include_body, parse_reference, quoted_prefix, target_kind,
};
use crate::{Options, Scan, directive};

/// The longest body of a path include that is looked for: the path limit of the sandbox plus
/// room for quotes, a range and blanks.
const REFERENCE_BODY_LIMIT: usize = 4096 + 256;
/// The longest JSON object of a tool call.
const TOOL_ARGS_LIMIT: usize = 64 * 1024;
/// The longest directive body.
const DIRECTIVE_BODY_LIMIT: usize = 4096;

/// Scans `text` with every family and code-skipping on.
pub fn scan(text: &str) -> Scan<'_> {
    scan_with(text, &Options::default())
}

/// Scans `text` with the given options.
pub fn scan_with<'a>(text: &'a str, options: &Options) -> Scan<'a> {
    // Each `@` starts at most one item and the text after it: reserving for them up front
    // spares a document dense with items the copies of a doubling vector (and the peak of
    // the old and the new buffer side by side). Reserved pages never written cost nothing.
    let ats = memchr::memchr_iter(b'@', text.as_bytes()).count();
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        options: *options,
        items: Vec::with_capacity(2 * ats + 1),
        diagnostics: Vec::new(),
        pending: 0,
        pending_pos: Some(Position::default()),
        cursor: Cursor::default(),
        span_failures: Vec::new(),
        bracket_free_until: std::cell::Cell::new(0),
    };
    scanner.run();
    Scan { text, items: scanner.items, diagnostics: scanner.diagnostics }
}

/// Line and column of byte offsets that only move forward, counted between consecutive
/// offsets.
#[derive(Debug)]
struct Cursor {
    offset: usize,
    line: u32,
    line_start: usize,
    column: u32,
}

impl Default for Cursor {
    fn default() -> Cursor {
        Cursor { offset: 0, line: 1, line_start: 0, column: 1 }
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Cursor {
    fn advance(&mut self, bytes: &[u8], to: usize) -> Position {
        debug_assert!(to >= self.offset);
        let segment = &bytes[self.offset..to];
        let newlines = bytecount::count(segment, b'\n');
        if newlines > 0 {
            self.line = self.line.saturating_add(saturate(newlines));
            self.line_start = self.offset + memrchr(b'\n', segment).map_or(0, |i| i + 1);
            self.column =
                1u32.saturating_add(saturate(bytecount::num_chars(&bytes[self.line_start..to])));
        } else {
            self.column = self.column.saturating_add(saturate(bytecount::num_chars(segment)));
        }
        self.offset = to;
        Position { line: self.line, column: self.column }
    }
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    options: Options,
    items: Vec<Item<'a>>,
    diagnostics: Vec<Diagnostic>,
    /// Start of the text not yet covered by an item.
    pending: usize,
    /// Position of `pending`, once computed.
    pending_pos: Option<Position>,
    cursor: Cursor,
    /// For inline code spans: (opening run length, position up to which no closer exists).
    span_failures: Vec<(usize, usize)>,
    /// Where the last search for the `]` of an over-long include body met the end of its line.
    bracket_free_until: std::cell::Cell<usize>,
}

impl<'a> Scanner<'a> {
    fn run(&mut self) {
        let len = self.bytes.len();
        let mut pos = 0;
        while pos < len {
            let rest = &self.bytes[pos..];
            let found = if self.options.mdbook {
                rest.iter().position(|b| matches!(b, b'@' | b'`' | b'~' | b'{'))
            } else if self.options.code_skip {
                memchr3(b'@', b'`', b'~', rest)
            } else {
                memchr(b'@', rest)
            };
            let Some(offset) = found else { break };
            let at = pos + offset;
            pos = match self.bytes[at] {
                b'@' => self.at_sign(at),
                b'{' => self.book_link(at),
                b'`' if self.options.code_skip => self.backtick(at),
                b'~' if self.options.code_skip => self.tilde(at),
                _ => at + 1,
            };
        }
        self.flush_text(len);
    }

    /// The position of `offset`, which must not lie before the last position computed.
    fn position(&mut self, offset: usize) -> Position {
        if self.pending_pos.is_none() && offset >= self.pending {
            self.pending_pos = Some(self.cursor.advance(self.bytes, self.pending));
        }
        self.cursor.advance(self.bytes, offset)
    }

    fn flush_text(&mut self, end: usize) {
        if end > self.pending {
            let pos = match self.pending_pos {
                Some(pos) => pos,
                None => self.cursor.advance(self.bytes, self.pending),
            };
            self.items.push(Item { kind: ItemKind::Text, span: Span::new(self.pending, end), pos });
            self.pending = end;
            self.pending_pos = None;
        }
    }

    fn emit(&mut self, kind: ItemKind<'a>, start: usize, end: usize) {
        self.flush_text(start);
        let pos = self.position(start);
        self.items.push(Item { kind, span: Span::new(start, end), pos });
        self.pending = end;
        self.pending_pos = None;
    }

    fn diagnose(&mut self, code: Code, message: String, span: Span) {
        let pos = self.position(span.start);
        self.diagnostics.push(Diagnostic { code, message, span, pos });
    }

    /// Backslashes right before `at` that are still pending text.
    fn backslashes_before(&self, at: usize) -> usize {
        self.bytes[self.pending..at].iter().rev().take_while(|&&b| b == b'\\').count()
    }

    fn tilde(&mut self, at: usize) -> usize {
        if let Some((end, closed)) = fence_at(self.bytes, at) {
            self.fenced(at, end, closed);
            return end;
        }
        at + run_len(self.bytes, at, b'~')
    }

    fn backtick(&mut self, at: usize) -> usize {
        let len = run_len(self.bytes, at, b'`');
        if len >= 3
            && let Some((end, closed)) = fence_at(self.bytes, at)
        {
            self.fenced(at, end, closed);
            return end;
        }
        // A backslash-escaped backtick is literal; the rest of the run may still open a span.
        let escaped = self.bytes[..at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1;
        if escaped {
            return at + 1;
        }
        if self.span_failures.iter().any(|&(l, limit)| l == len && at < limit) {
            return at + len;
        }
        match code_span_close(self.bytes, at + len, len) {
            Ok(end) => {
                self.code_span(at, end);
                end
            }
            Err(limit) => {
                match self.span_failures.iter_mut().find(|(l, _)| *l == len) {
                    Some(entry) => entry.1 = limit,
                    None => self.span_failures.push((len, limit)),
                }
                at + len
            }
        }
    }

    /// An mdBook link at `at` (a `{`), with the mdBook dialect on; `\{{#…}}` is its escape.
    fn book_link(&mut self, at: usize) -> usize {
        if self.backslashes_before(at) > 0
            && let Some(len) = crate::book::escaped(&self.text[at - 1..])
        {
            let unescaped = &self.text[at..at - 1 + len];
            self.emit(ItemKind::Escape(Escape { unescaped }), at - 1, at - 1 + len);
            return at - 1 + len;
        }
        if let Some(len) = crate::book::title(&self.text[at..]) {
            self.emit(title_kind(self.text, at + len), at, at + len);
            return at + len;
        }
        match crate::book::link(&self.text[at..]) {
            Some((len, reference)) => {
                let kind = ItemKind::Include(crate::ast::Include::Reference(reference));
                self.emit(kind, at, at + len);
                at + len
            }
            None => at + 1,
        }
    }

    /// The mdBook links (and their escapes) of a line inside fenced code, which mdBook
    /// expands wherever they stand.
    fn book_links_in(
        &self,
        line_start: usize,
        line_end: usize,
    ) -> Vec<(usize, usize, ItemKind<'a>)> {
        let mut found = Vec::new();
        let mut at = line_start;
        while let Some(i) = memchr(b'{', &self.bytes[at..line_end]) {
            let pos = at + i;
            if pos > at
                && self.bytes[pos - 1] == b'\\'
                && let Some(len) = crate::book::escaped(&self.text[pos - 1..line_end])
            {
                let unescaped = &self.text[pos..pos - 1 + len];
                found.push((pos - 1, pos - 1 + len, ItemKind::Escape(Escape { unescaped })));
                at = pos - 1 + len;
            } else if let Some(len) = crate::book::title(&self.text[pos..line_end]) {
                found.push((pos, pos + len, title_kind(self.text, pos + len)));
                at = pos + len;
            } else if let Some((len, reference)) = crate::book::link(&self.text[pos..line_end]) {
                let kind = ItemKind::Include(crate::ast::Include::Reference(reference));
                found.push((pos, pos + len, kind));
                at = pos + len;
            } else {
                at = pos + 1;
            }
        }
        found
    }

    /// An inline code span from `at` to `end`: literal, but for mdBook's links when the
    /// mdBook dialect is on (mdBook expands them wherever they stand).
    fn code_span(&mut self, at: usize, end: usize) {
        let mut piece = at;
        if self.options.mdbook {
            for (start, stop, kind) in self.book_links_in(at, end) {
                if start > piece {
                    self.emit(ItemKind::Code(CodeKind::Span), piece, start);
                }
                self.emit(kind, start, stop);
                piece = stop;
            }
        }
        if end > piece {
            self.emit(ItemKind::Code(CodeKind::Span), piece, end);
        }
    }

    /// A fenced code block from `at` to `end`: literal, but for the lines that hold one path
    /// include and nothing else when [`Options::fence_includes`] is on (syntax.md §1), and for
    /// mdBook's links anywhere when [`Options::mdbook`] is. The block is then cut into code
    /// pieces around them.
    fn fenced(&mut self, at: usize, end: usize, closed: bool) {
        let code = ItemKind::Code(CodeKind::Fenced { closed });
        let first_line_end = memchr(b'\n', &self.bytes[at..end]).map(|i| at + i);
        // Includes switched off are off in a fence too.
        let fence_includes = self.options.fence_includes && self.options.includes;
        let inner = fence_includes || self.options.mdbook;
        let (true, Some(first_line_end)) = (inner, first_line_end) else {
            self.emit(code, at, end);
            return;
        };
        let mut piece = at;
        let mut line_start = first_line_end + 1;
        while line_start < end {
            let line_end =
                memchr(b'\n', &self.bytes[line_start..end]).map_or(end, |i| line_start + i);
            let mut items = if self.options.mdbook {
                self.book_links_in(line_start, line_end)
            } else {
                Vec::new()
            };
            if items.is_empty()
                && fence_includes
                && let Some((start, escape, stop, kind)) = self.fence_include(line_start, line_end)
            {
                match escape {
                    // `\@[...]` prints as `@[...]`: the backslash goes, the rest stays code.
                    Some(unescaped) => {
                        items.push((start, start + 2, ItemKind::Escape(Escape { unescaped })));
                    }
                    None => items.push((start, stop, kind)),
                }
            }
            for (start, stop, kind) in items {
                if start > piece {
                    self.emit(code.clone(), piece, start);
                }
                self.emit(kind, start, stop);
                piece = stop;
            }
            line_start = line_end + 1;
        }
        if end > piece {
            self.emit(code, piece, end);
        }
    }

    /// The include alone on a line of a fenced block, between spaces or tabs: where it
    /// starts, the unescaped `@` when it is written `\@[`, where it ends, and the item.
    #[allow(clippy::type_complexity)]
    fn fence_include(
        &self,
        line_start: usize,
        line_end: usize,
    ) -> Option<(usize, Option<&'a str>, usize, ItemKind<'a>)> {
        let line = &self.bytes[line_start..line_end];
        let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
        let lead = line.iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
        let trail = line.iter().rev().take_while(|b| blank(b)).count();
        let (start, stop) = (line_start + lead, line_end - trail.min(line.len() - lead));
        let escaped = self.bytes[start..stop].starts_with(b"\\@[");
        let at = if escaped { start + 1 } else { start };
        if !self.bytes[at..stop].starts_with(b"@[") {
            return None;
        }
        let (end, kind) = self.include(at)?;
        let reference = matches!(kind, ItemKind::Include(crate::ast::Include::Reference(_)));
        if end != stop || !reference {
            return None;
        }
        let unescaped = escaped.then(|| &self.text[at..at + 1]);
        Some((start, unescaped, end, kind))
    }

    fn at_sign(&mut self, at: usize) -> usize {
        match self.bytes.get(at + 1) {
            Some(b'[') if self.options.includes => self.bracketed(at, true),
            Some(b'{') if self.options.directives => self.bracketed(at, false),
            _ if self.options.mentions => self.mention(at),
            _ => at + 1,
        }
    }

    /// An include (`@[`) or a directive (`@{`) at `at`, with the backslashes before it.
    fn bracketed(&mut self, at: usize, include: bool) -> usize {
        let backslashes = self.backslashes_before(at);
        if backslashes % 2 == 1 {
            let unescaped = &self.text[at - backslashes / 2..at + 1];
            self.emit(ItemKind::Escape(Escape { unescaped }), at - backslashes, at + 1);
            return at + 1;
        }
        let found = if include { self.include(at) } else { self.directive(at) };
        let Some((end, kind)) = found else {
            let what = if include {
                "`@[` without its closing `]`"
            } else {
                "`@{` without its closing `}`"
            };
            self.diagnose(
                Code::Unterminated,
                format!("{what}; left as text (write `\\@` for a literal `@`)"),
                Span::new(at, at + 2),
            );
            return at + 2;
        };
        if backslashes > 0 {
            let unescaped = &self.text[at - backslashes / 2..at];
            self.emit(ItemKind::Escape(Escape { unescaped }), at - backslashes, at);
        }
        if matches!(&kind, ItemKind::Directive(d) if d.kind == DirectiveKind::Unknown) {
            let body = &self.text[at + 2..end - 1];
            self.diagnose(
                Code::Directive,
                format!("unknown directive `@{{{}}}`", shorten(body.trim())),
                Span::new(at, end),
            );
        }
        self.emit(kind, at, end);
        end
    }

    /// A reference body longer than any path may be, still unclosed at `from`: when its `]`
    /// is on the same line, it is an include whose path the sandbox refuses (`E_BAD_PATH`), not
    /// unterminated text. The end of a line found without a `]` is remembered, so that a long
    /// line of openers is searched once.
    fn long_include(&self, start: usize, from: usize) -> Option<(usize, ItemKind<'a>)> {
        if from < self.bracket_free_until.get() {
            return None;
        }
        let found = memchr::memchr2(b']', b'\n', &self.bytes[from..]).map(|k| from + k);
        match found {
            Some(close) if self.bytes[close] == b']' => {
                let body = &self.text[start..close];
                let reference = crate::ast::Include::Reference(parse_reference(body));
                Some((close + 1, ItemKind::Include(reference)))
            }
            _ => {
                self.bracket_free_until.set(found.unwrap_or(self.bytes.len()));
                None
            }
        }
    }

    fn include(&self, at: usize) -> Option<(usize, ItemKind<'a>)> {
        let bytes = self.bytes;
        let start = at + 2;
        let skip_blanks = |mut i: usize| {
            while bytes.get(i).is_some_and(|b| matches!(b, b' ' | b'\t')) {
                i += 1;
            }
            i
        };
        // A tool call: `name{json}`, whose JSON may hold `]` and `}` in strings.
        let mut i = skip_blanks(start);
        if bytes.get(i).is_some_and(|&b| is_ident_start(b)) {
            while bytes
                .get(i)
                .is_some_and(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
            {
                i += 1;
            }
            i = skip_blanks(i);
            if bytes.get(i) == Some(&b'{') {
                let limit = (i + TOOL_ARGS_LIMIT).min(bytes.len());
                let scan = json_object_scan(&bytes[i..limit]);
                // Arguments longer than the limit: the call is left as text, unterminated
                // (never read as a path named after the tool).
                if scan == JsonScan::Open && limit < bytes.len() {
                    return None;
                }
                if let JsonScan::Closed(len) = scan {
                    let mut j = i + len;
                    while bytes.get(j).is_some_and(u8::is_ascii_whitespace) {
                        j += 1;
                    }
                    if bytes.get(j) == Some(&b']') {
                        let body = &self.text[start..j];
                        return Some((j + 1, ItemKind::Include(parse_include_body(body))));
                    }
                }
            }
        }
        // A reference: brackets nest, a leading quoted path may hold anything, and the body
        // ends at its line.
        let mut i = skip_blanks(start);
        if bytes.get(i) == Some(&b'"')
            && let Some((_, len)) = quoted_prefix(&self.text[i..])
        {
            i += len;
        }
        let limit = (start + REFERENCE_BODY_LIMIT).min(bytes.len());
        let mut depth = 0usize;
        while i < limit {
            match bytes[i] {
                b'[' => depth += 1,
                b']' if depth == 0 => {
                    let body = &self.text[start..i];
                    return Some((
                        i + 1,
                        ItemKind::Include(crate::ast::Include::Reference(parse_reference(body))),
                    ));
                }
                b']' => depth -= 1,
                b'\n' | b'\r' => return None,
                b'@' if bytes.get(i + 1) == Some(&b'[') => return None,
                _ => {}
            }
            i += 1;
        }
        if i < bytes.len() {
            return self.long_include(start, i);
        }
        None
    }

    fn directive(&self, at: usize) -> Option<(usize, ItemKind<'a>)> {
        let bytes = self.bytes;
        let start = at + 2;
        let limit = (start + DIRECTIVE_BODY_LIMIT).min(bytes.len());
        // Strings are honoured until a character appears that no directive can hold; from
        // there on the body is plain text up to the first `}`.
        let mut strings = true;
        let mut i = start;
        let close = loop {
            if i >= limit {
                return None;
            }
            match bytes[i] {
                b'}' => break i,
                b'"' if strings => {
                    i += 1;
                    loop {
                        match bytes.get(i) {
                            Some(b'"') => break,
                            Some(b'\\')
                                if !matches!(bytes.get(i + 1), Some(b'\n' | b'\r') | None) =>
                            {
                                i += 2
                            }
                            Some(b'\n' | b'\r') | None => return None,
                            Some(_) => i += 1,
                        }
                    }
                    if i >= limit {
                        return None;
                    }
                }
                b'\n' | b'\r' => return None,
                b'@' if bytes.get(i + 1) == Some(&b'{') => return None,
                b if b.is_ascii_alphanumeric()
                    || matches!(b, b'_' | b' ' | b'\t' | b',' | b':') => {}
                _ => strings = false,
            }
            i += 1;
        };
        let body = &self.text[start..close];
        let kind = directive::parse(body);
        let end = close + 1;
        Some((
            end,
            ItemKind::Directive(Box::new(Directive {
                kind,
                body,
                line: self.alone_on_line(at, end),
            })),
        ))
    }

    /// The span of the line holding `start..end` when only spaces and tabs stand beside it,
    /// line ending included.
    fn alone_on_line(&self, start: usize, end: usize) -> Option<Span> {
        let bytes = self.bytes;
        let mut line_start = start;
        while line_start > 0 && matches!(bytes[line_start - 1], b' ' | b'\t') {
            line_start -= 1;
        }
        if line_start > 0 && bytes[line_start - 1] != b'\n' {
            return None;
        }
        let mut line_end = end;
        while line_end < bytes.len() && matches!(bytes[line_end], b' ' | b'\t') {
            line_end += 1;
        }
        match &bytes[line_end..] {
            [] => {}
            [b'\n', ..] => line_end += 1,
            [b'\r', b'\n', ..] => line_end += 2,
            _ => return None,
        }
        Some(Span::new(line_start, line_end))
    }

    fn mention(&mut self, at: usize) -> usize {
        if at > self.pending && self.bytes[at - 1] == b'\\' {
            self.emit(
                ItemKind::Escape(Escape { unescaped: &self.text[at..at + 1] }),
                at - 1,
                at + 1,
            );
            return at + 1;
        }
        if let Some(prev) = self.text[..at].chars().next_back() {
            let active =
                prev.is_whitespace() || !(prev.is_alphanumeric() || prev.is_ascii_punctuation());
            if !active {
                return at + 1;
            }
        }
        match self.mention_at(at) {
            Some((end, reference)) => {
                self.emit(ItemKind::Mention(reference), at, end);
                end
            }
            None => at + 1,
        }
    }

    fn mention_at(&self, at: usize) -> Option<(usize, Reference<'a>)> {
        let start = at + 1;
        let rest = &self.text[start..];
        if rest.starts_with('"') {
            let (raw, len) = quoted_prefix(rest)?;
            let after = start + len;
            let (raw, inner) = match raw.rfind('#') {
                Some(hash) if hash > 0 => match mention_fragment(&raw[hash..]) {
                    Some(selector) => (&raw[..hash], Some(selector)),
                    None => (raw, None),
                },
                _ => (raw, None),
            };
            if raw.is_empty() {
                return None;
            }
            let (selector, end) = match fragment_prefix(&self.text[after..]) {
                Some((selector, flen)) => (Some(selector), after + flen),
                None => (inner, after),
            };
            let path = PathText { raw, quoted: true };
            return Some((end, Reference { path, selector, target: target_kind(raw) }));
        }
        let bytes = self.bytes;
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if bytes.get(i + 1) == Some(&b' ') => i += 2,
                b',' | b';' | b'!' | b'?' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<'
                | b'>' | b'"' | b'\'' | b'`' => break,
                b'@' if matches!(bytes.get(i + 1), Some(b'[' | b'{')) => break,
                b if b.is_ascii_whitespace() => break,
                _ => i += 1,
            }
        }
        // A run of `.` and `:` at the end is punctuation of the sentence, not of the path.
        while i > start && matches!(bytes[i - 1], b'.' | b':') {
            i -= 1;
        }
        let token = &self.text[start..i];
        let (raw, selector) = match token.rfind('#') {
            Some(hash) => match mention_fragment(&token[hash..]) {
                Some(selector) => (&token[..hash], Some(selector)),
                None => (token, None),
            },
            None => (token, None),
        };
        if raw.is_empty() {
            return None;
        }
        let path = PathText { raw, quoted: false };
        Some((i, Reference { path, selector, target: target_kind(raw) }))
    }
}

/// At most 60 characters of `text`, for messages.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// Line and column for any byte offset of a text, by binary search over its line starts.
///
/// The scanner counts positions as it goes; this index is for callers that need the
/// position of an arbitrary offset later, such as a diagnostic inside an item.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes the line starts of `text`.
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { text, line_starts }
    }

    /// The 1-based line and column of byte `offset` (clamped to the text, and moved back to a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line - 1];
        let column = bytecount::num_chars(&self.text.as_bytes()[start..offset]) + 1;
        Position { line: saturate(line), column: saturate(column) }
    }

    /// The number of lines (a final line without a line ending counts; an empty text has one).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

/// An mdBook `{{#title …}}` ending at `end`: an escape whose output is nothing (the empty
/// suffix of its text), as mdBook leaves nothing in its place.
fn title_kind(text: &str, end: usize) -> ItemKind<'_> {
    ItemKind::Escape(Escape { unescaped: &text[end..end] })
}
