//! The shared lexer: one pass over a file's bytes that tells code from comments and strings
//! (raw, triple-quoted, template, verbatim and C++ raw strings, Rust lifetimes, JavaScript
//! regular expressions, C preprocessor lines) and yields the tokens of the code, each with its
//! lines and whether it starts its line.

use crate::symbols::lang::Lang;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Ident,
    Punct,
    /// A string, character or regular-expression literal.
    Str,
}

/// Two-byte punctuation, as the byte of a `Punct` token.
pub(super) const PATH: u8 = 1; // `::`
pub(super) const ARROW: u8 = 2; // `->`
pub(super) const FAT_ARROW: u8 = 3; // `=>`

#[derive(Clone, Copy, Debug)]
pub(super) struct Tok {
    pub(super) kind: Kind,
    /// The byte of a `Punct` token.
    pub(super) p: u8,
    pub(super) start: u32,
    pub(super) end: u32,
    /// 1-based lines of its first and last byte.
    pub(super) line: u32,
    pub(super) end_line: u32,
    /// Whether it is the first token of its line, and its column then.
    pub(super) bol: bool,
    pub(super) col: u32,
}

/// How a language writes comments, strings and identifiers.
#[derive(Clone, Copy)]
struct Flavor {
    slash_comments: bool,
    hash_comments: bool,
    nested_blocks: bool,
    /// `'` opens a string (Python, JavaScript) rather than a character.
    single_quote_strings: bool,
    /// Rust: `'a` is a lifetime, `r#"…"#` a raw string.
    rust: bool,
    python: bool,
    /// `` ` `` opens a string that may span lines (JavaScript templates, Go raw strings).
    backtick: bool,
    /// `#` at the start of a line is a preprocessor directive (C, C++, C#).
    preprocessor: bool,
    /// `/…/` may be a regular expression (JavaScript).
    regex: bool,
    /// `$` is an identifier character (JavaScript, Java).
    dollar: bool,
    /// C# `@"…"` verbatim strings; C++ `R"(…)"` raw strings.
    verbatim: bool,
    cpp_raw: bool,
    /// Ordinary strings may span lines (Rust).
    multiline_strings: bool,
}

impl Flavor {
    fn of(lang: Lang) -> Flavor {
        let base = Flavor {
            slash_comments: true,
            hash_comments: false,
            nested_blocks: false,
            single_quote_strings: false,
            rust: false,
            python: false,
            backtick: false,
            preprocessor: false,
            regex: false,
            dollar: false,
            verbatim: false,
            cpp_raw: false,
            multiline_strings: false,
        };
        match lang {
            Lang::Rust => {
                Flavor { nested_blocks: true, rust: true, multiline_strings: true, ..base }
            }
            Lang::Python => Flavor {
                slash_comments: false,
                hash_comments: true,
                single_quote_strings: true,
                python: true,
                ..base
            },
            Lang::TypeScript | Lang::Tsx | Lang::JavaScript => Flavor {
                single_quote_strings: true,
                backtick: true,
                regex: true,
                dollar: true,
                ..base
            },
            Lang::Go => Flavor { backtick: true, ..base },
            Lang::C | Lang::Cpp => Flavor { preprocessor: true, cpp_raw: true, ..base },
            Lang::CSharp => Flavor { preprocessor: true, verbatim: true, ..base },
            Lang::Java => Flavor { dollar: true, ..base },
            Lang::Other => base,
        }
    }
}

/// The tokens of `source`, a file of `lang`, and the `#define NAME` lines of C and C++ (each
/// name with its line).
pub(super) fn lex(lang: Lang, source: &str) -> (Vec<Tok>, Vec<(&str, u32)>) {
    let mut lexer = Lexer::new(source.as_bytes(), Flavor::of(lang));
    lexer.run();
    (lexer.toks, lexer.macros)
}

struct Lexer<'s> {
    b: &'s [u8],
    f: Flavor,
    i: usize,
    line: u32,
    line_start: usize,
    /// Where the line of the token being lexed began.
    tok_line_start: usize,
    bol: bool,
    toks: Vec<Tok>,
    /// `#define NAME` lines of C and C++.
    macros: Vec<(&'s str, u32)>,
}

fn is_ident_start(c: u8, dollar: bool) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 || (dollar && c == b'$')
}

fn is_ident(c: u8, dollar: bool) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 || (dollar && c == b'$')
}

impl<'s> Lexer<'s> {
    fn new(b: &'s [u8], f: Flavor) -> Lexer<'s> {
        Lexer {
            b,
            f,
            i: 0,
            line: 1,
            line_start: 0,
            tok_line_start: 0,
            bol: true,
            toks: Vec::with_capacity(b.len() / 5),
            macros: Vec::new(),
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.b.get(i).copied().unwrap_or(0)
    }

    /// Pushes the token from `start` (on `line`) to here.
    fn push(&mut self, kind: Kind, p: u8, start: usize, line: u32) {
        let col = u32::try_from(start.saturating_sub(self.tok_line_start)).unwrap_or(u32::MAX);
        self.toks.push(Tok {
            kind,
            p,
            start: start as u32,
            end: self.i as u32,
            line,
            end_line: self.line,
            bol: std::mem::take(&mut self.bol),
            col,
        });
    }

    /// Moves past byte `i`, counting a line end.
    fn newline_at(&mut self, i: usize) {
        self.line += 1;
        self.line_start = i + 1;
    }

    fn run(&mut self) {
        let n = self.b.len();
        while self.i < n {
            let c = self.b[self.i];
            let start = self.i;
            let line = self.line;
            self.tok_line_start = self.line_start;
            match c {
                b'\n' => {
                    self.newline_at(self.i);
                    self.i += 1;
                    self.bol = true;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.i += 1,
                b'/' if self.f.slash_comments && self.at(self.i + 1) == b'/' => self.skip_line(),
                b'/' if self.f.slash_comments && self.at(self.i + 1) == b'*' => {
                    self.block_comment();
                }
                b'#' if self.f.hash_comments => self.skip_line(),
                b'#' if self.f.preprocessor && self.bol => self.directive(),
                b'"' => {
                    self.quoted(b'"', self.f.multiline_strings);
                    self.push(Kind::Str, 0, start, line);
                }
                b'\'' if self.f.single_quote_strings => {
                    self.quoted(b'\'', false);
                    self.push(Kind::Str, 0, start, line);
                }
                b'\'' if self.f.rust => {
                    if self.rust_char() {
                        self.push(Kind::Str, 0, start, line);
                    }
                }
                b'\'' => {
                    self.string(b'\'', 1, false);
                    self.push(Kind::Str, 0, start, line);
                }
                b'`' if self.f.backtick => {
                    self.string(b'`', 1, true);
                    self.push(Kind::Str, 0, start, line);
                }
                b'@' if self.f.verbatim && self.at(self.i + 1) == b'"' => {
                    self.i += 1;
                    self.verbatim();
                    self.push(Kind::Str, 0, start, line);
                }
                b'/' if self.f.regex && self.regex_allowed() => {
                    self.regex();
                    self.push(Kind::Str, 0, start, line);
                }
                b'0'..=b'9' => {
                    while self.i < n && (is_ident(self.b[self.i], false) || self.b[self.i] == b'.')
                    {
                        // `1..2` is a range, not a number.
                        if self.b[self.i] == b'.' && self.at(self.i + 1) == b'.' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ if is_ident_start(c, self.f.dollar) => self.ident(),
                b':' if self.at(self.i + 1) == b':' => {
                    self.i += 2;
                    self.push(Kind::Punct, PATH, start, line);
                }
                b'-' if self.at(self.i + 1) == b'>' => {
                    self.i += 2;
                    self.push(Kind::Punct, ARROW, start, line);
                }
                b'=' if self.at(self.i + 1) == b'>' => {
                    self.i += 2;
                    self.push(Kind::Punct, FAT_ARROW, start, line);
                }
                _ => {
                    self.i += 1;
                    self.push(Kind::Punct, c, start, line);
                }
            }
        }
    }

    fn skip_line(&mut self) {
        self.i = memchr::memchr(b'\n', &self.b[self.i..]).map_or(self.b.len(), |k| self.i + k);
    }

    fn block_comment(&mut self) {
        let mut depth = 0usize;
        while self.i < self.b.len() {
            match (self.b[self.i], self.at(self.i + 1)) {
                (b'/', b'*') if depth == 0 || self.f.nested_blocks => {
                    depth += 1;
                    self.i += 2;
                }
                (b'*', b'/') => {
                    self.i += 2;
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                (b'\n', _) => {
                    self.newline_at(self.i);
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
    }

    /// A string from its opening quote, or Python's `"""`/`'''` from the first of its three.
    fn quoted(&mut self, quote: u8, multiline: bool) {
        let triple = self.f.python && self.at(self.i + 1) == quote && self.at(self.i + 2) == quote;
        if triple {
            self.string(quote, 3, true);
        } else {
            self.string(quote, 1, multiline);
        }
    }

    /// A string from its opening quote (`width` of them, closed by as many), with `\` escapes;
    /// one that may not span lines ends at the line's end too (an unterminated literal does not
    /// swallow the file).
    fn string(&mut self, quote: u8, width: usize, multiline: bool) {
        self.i += width;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if c == quote && (1..width).all(|k| self.at(self.i + k) == quote) {
                self.i += width;
                return;
            }
            match c {
                b'\\' => {
                    if self.at(self.i + 1) == b'\n' {
                        self.newline_at(self.i + 1);
                    }
                    self.i += 2;
                }
                b'\n' if !multiline => return,
                b'\n' => {
                    self.newline_at(self.i);
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        self.i = self.i.min(self.b.len());
    }

    /// C# `@"…"` (from its quote): `""` is a quote, and it may span lines.
    fn verbatim(&mut self) {
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'"' if self.at(self.i + 1) == b'"' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return;
                }
                b'\n' => {
                    self.newline_at(self.i);
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
    }

    /// A raw string whose body ends at `close` (Rust `"###`, C++ `)delim"`), from `self.i`.
    fn raw_until(&mut self, close: &[u8]) {
        let rest = &self.b[self.i..];
        let len = memchr::memmem::find(rest, close).map_or(rest.len(), |k| k + close.len());
        for k in memchr::memchr_iter(b'\n', &rest[..len]) {
            self.newline_at(self.i + k);
        }
        self.i += len;
    }

    /// Rust's `'`: a character literal (`'x'`, `'\n'`) is a token; a lifetime
    /// or label (`'a`, `'static`) is skipped, name and all.
    fn rust_char(&mut self) -> bool {
        let next = self.at(self.i + 1);
        if next == b'\\' {
            self.string(b'\'', 1, false);
            return true;
        }
        let width = match next {
            0..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        if self.at(self.i + 1 + width) == b'\'' && next != b'\n' {
            self.i += 2 + width;
            return true;
        }
        self.i += 1;
        while self.i < self.b.len() && is_ident(self.b[self.i], false) {
            self.i += 1;
        }
        false
    }

    /// Whether a `/` here starts a regular expression: after an operator, an
    /// opening bracket, a separator or a keyword that takes an expression.
    fn regex_allowed(&self) -> bool {
        match self.toks.last() {
            None => true,
            Some(t) => match t.kind {
                Kind::Str => false,
                // `</` closes a JSX element.
                Kind::Punct => !matches!(t.p, b')' | b']' | b'}' | b'<'),
                Kind::Ident => {
                    let word = &self.b[t.start as usize..t.end as usize];
                    matches!(
                        word,
                        b"return"
                            | b"typeof"
                            | b"case"
                            | b"in"
                            | b"of"
                            | b"delete"
                            | b"void"
                            | b"throw"
                            | b"new"
                            | b"yield"
                            | b"await"
                    )
                }
            },
        }
    }

    fn regex(&mut self) {
        self.i += 1;
        let mut class = false;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => {
                    self.i += 1;
                    while self.i < self.b.len() && self.b[self.i].is_ascii_alphabetic() {
                        self.i += 1;
                    }
                    return;
                }
                b'\n' => return,
                _ => {}
            }
            self.i += 1;
        }
        self.i = self.i.min(self.b.len());
    }

    fn ident(&mut self) {
        let start = self.i;
        let line = self.line;
        while self.i < self.b.len() && is_ident(self.b[self.i], self.f.dollar) {
            self.i += 1;
        }
        let word = &self.b[start..self.i];
        let next = self.at(self.i);
        if self.f.rust && matches!(word, b"r" | b"br" | b"cr") && matches!(next, b'"' | b'#') {
            let hashes = self.b[self.i..].iter().take_while(|&&c| c == b'#').count();
            if self.at(self.i + hashes) == b'"' {
                self.i += hashes + 1;
                let mut close = vec![b'"'];
                close.resize(hashes + 1, b'#');
                self.raw_until(&close);
                self.push(Kind::Str, 0, start, line);
                return;
            }
            if word == b"r" && hashes == 1 {
                // A raw identifier, `r#type`: lexed as `type`.
                self.i += 1;
                return;
            }
        }
        if self.f.cpp_raw && word.ends_with(b"R") && word.len() <= 3 && next == b'"' {
            let open = self.i + 1;
            let delim_len =
                self.b[open..].iter().take(17).position(|&c| c == b'(').unwrap_or(usize::MAX);
            if delim_len != usize::MAX {
                let mut close = vec![b')'];
                close.extend_from_slice(&self.b[open..open + delim_len]);
                close.push(b'"');
                self.i = open + delim_len + 1;
                self.raw_until(&close);
                self.push(Kind::Str, 0, start, line);
                return;
            }
        }
        if self.f.python
            && word.len() <= 2
            && word.iter().all(|c| b"rbfuRBFU".contains(c))
            && matches!(next, b'"' | b'\'')
        {
            // A string prefix: the string is the next token.
            return;
        }
        self.push(Kind::Ident, 0, start, line);
    }

    /// A preprocessor line: `#define NAME` is a macro definition; the line
    /// (with its `\` continuations) is skipped.
    fn directive(&mut self) {
        let line = self.line;
        self.i += 1;
        let skip_blank = |l: &Self, mut i: usize| {
            while matches!(l.at(i), b' ' | b'\t') {
                i += 1;
            }
            i
        };
        let word = skip_blank(self, self.i);
        if self.b[word..].starts_with(b"define") {
            let name = skip_blank(self, word + 6);
            let mut end = name;
            while end < self.b.len() && is_ident(self.b[end], false) {
                end += 1;
            }
            let text = std::str::from_utf8(&self.b[name..end]).unwrap_or("");
            if end > name && is_ident_start(self.b[name], false) {
                self.macros.push((text, line));
            }
        }
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' if self.at(self.i + 1) == b'\n' => {
                    self.newline_at(self.i + 1);
                    self.i += 2;
                }
                b'\\' if self.at(self.i + 1) == b'\r' && self.at(self.i + 2) == b'\n' => {
                    self.newline_at(self.i + 2);
                    self.i += 3;
                }
                b'\n' => return,
                _ => self.i += 1,
            }
        }
    }
}
