//! The items a scan yields: text, code, escapes, mentions, includes and directives.
//!
//! Every type here borrows from the scanned text.
//! Values that need unescaping (`\ ` in bare paths, `\"` in quoted ones, JSON escapes in
//! directive strings) keep their raw slice and unescape on demand, so a scan never allocates
//! per item beyond the item vector itself.

use std::borrow::Cow;
use std::fmt;

/// A half-open byte range `start..end` into the scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    /// First byte of the span.
    pub start: usize,
    /// One past the last byte of the span.
    pub end: usize,
}

impl Span {
    /// Creates a span; `start` must not exceed `end`.
    pub const fn new(start: usize, end: usize) -> Span {
        debug_assert!(start <= end);
        Span { start, end }
    }

    /// Length in bytes.
    pub const fn len(self) -> usize {
        self.end - self.start
    }

    /// Whether the span covers no byte.
    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The slice of `text` this span covers.
    ///
    /// # Panics
    ///
    /// Panics when the span is out of bounds or not on character boundaries of `text`.
    pub fn of(self, text: &str) -> &str {
        &text[self.start..self.end]
    }
}

impl From<std::ops::Range<usize>> for Span {
    fn from(r: std::ops::Range<usize>) -> Span {
        Span::new(r.start, r.end)
    }
}

/// A 1-based line and column; columns count Unicode scalar values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, in Unicode scalar values.
    pub column: u32,
}

impl Default for Position {
    fn default() -> Position {
        Position { line: 1, column: 1 }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One piece of scanned text.
///
/// The spans of all items of a scan are contiguous and in order: concatenating
/// `item.span.of(text)` for every item gives back the text byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<'a> {
    /// What the piece is.
    pub kind: ItemKind<'a>,
    /// Where it is, in bytes.
    pub span: Span,
    /// Where it starts, as line and column.
    pub pos: Position,
}

/// The kind of an [`Item`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind<'a> {
    /// Plain text, copied to the output as it is.
    Text,
    /// A fenced code block or an inline code span: literal text in which nothing is recognised.
    Code(CodeKind),
    /// A backslash escape in front of an `@` (or, in the mdBook dialect, of `{{#`, and an
    /// mdBook `{{#title …}}`, which leaves nothing); the output is [`Escape::unescaped`].
    Escape(Escape<'a>),
    /// An `@path` mention.
    Mention(Reference<'a>),
    /// An `@[...]` include or tool call.
    Include(Include<'a>),
    /// An `@{...}` directive (boxed: it is the largest kind and the rarest, and a document of
    /// many small items should cost little per item).
    Directive(Box<Directive<'a>>),
}

impl ItemKind<'_> {
    /// A short lower-case name for the kind: `text`, `code`, `escape`, `mention`, `include`,
    /// `tool`, or `directive`.
    pub fn name(&self) -> &'static str {
        match self {
            ItemKind::Text => "text",
            ItemKind::Code(_) => "code",
            ItemKind::Escape(_) => "escape",
            ItemKind::Mention(_) => "mention",
            ItemKind::Include(Include::Reference(_)) => "include",
            ItemKind::Include(Include::Tool(_)) => "tool",
            ItemKind::Directive(_) => "directive",
        }
    }
}

/// Which kind of code an [`ItemKind::Code`] item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeKind {
    /// A fenced code block, fences included.
    Fenced {
        /// Whether a closing fence was found; an unclosed fence runs to the end of the text.
        closed: bool,
    },
    /// An inline code span, backticks included.
    Span,
}

/// A run of backslashes in front of an `@`, and what it stands for.
///
/// Before `@[` and `@{` each pair of backslashes stands for one backslash, and an odd one out
/// makes the `@` literal. Before any other `@`, the backslash right in front of it makes it
/// literal and is removed. The output is always a suffix of the source text of the escape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Escape<'a> {
    /// The text that replaces the escape in inline output.
    pub unescaped: &'a str,
}

/// What a reference points at, judging by how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetKind {
    /// A single file.
    File,
    /// A directory: the path ends in `/`.
    Directory,
    /// A glob: the path contains `*` or `?` (then `[...]` classes work too; a `[` alone does
    /// not make a glob, so `@[a[1].md]` names the file `a[1].md`).
    Glob,
}

impl TargetKind {
    /// `file`, `directory` or `glob`.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::Directory => "directory",
            TargetKind::Glob => "glob",
        }
    }
}

/// A path as written, before unescaping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PathText<'a> {
    /// The raw text: without the surrounding quotes when quoted, escapes left in place.
    pub raw: &'a str,
    /// Whether the path was written in double quotes.
    pub quoted: bool,
}

impl<'a> PathText<'a> {
    /// The path with its escapes resolved: `\ ` in a bare mention path, `\"` and `\\` in a
    /// quoted path. Borrows when there is nothing to resolve.
    pub fn unescaped(&self) -> Cow<'a, str> {
        let needle = if self.quoted { ['"', '\\'] } else { [' ', ' '] };
        if !self.raw.contains('\\') {
            return Cow::Borrowed(self.raw);
        }
        let mut out = String::with_capacity(self.raw.len());
        let mut chars = self.raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\'
                && let Some(&next) = chars.peek()
                && needle.contains(&next)
            {
                out.push(next);
                chars.next();
                continue;
            }
            out.push(c);
        }
        Cow::Owned(out)
    }
}

/// The end of a line selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineEnd {
    /// Up to and including this 1-based line.
    Line(u32),
    /// Up to the end of the file.
    Eof,
}

/// Which part of a file a reference takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Selector<'a> {
    /// A range of 1-based lines, inclusive: `:N`, `:N:M`, `:N-M`, `:N:`, `:N-`, `::M`, `#LN…`.
    /// Numbers are kept as written (`:0` is kept as 0 so the assembler can refuse it);
    /// numbers beyond `u32::MAX` saturate.
    Lines {
        /// First line.
        start: u32,
        /// Last line, or the end of the file.
        end: LineEnd,
    },
    /// `:name`: the region between `ANCHOR: name` and `ANCHOR_END: name` lines.
    Anchor(&'a str),
    /// `#name`: on Markdown, the section whose heading slug is `name`; elsewhere an anchor.
    Fragment(&'a str),
    /// The part an mdBook `{{#include}}` or `{{#rustdoc_include}}` takes (dialect `mdbook`),
    /// by mdBook's own rules.
    Book(BookPart<'a>),
}

/// What an mdBook include takes, as mdBook reads `file:start:end` or `file:anchor`: line
/// numbers are 1-based as written and become a 0-based range whose end is exclusive, and
/// nothing is ever refused (a range past the end takes nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BookPart<'a> {
    /// The lines or the anchor.
    pub range: BookRange<'a>,
    /// `{{#rustdoc_include}}`: the lines outside the part are kept too, hidden behind `# `.
    pub rustdoc: bool,
    /// `{{#playground file attr…}}`: the whole file in a ` ```rust ` block, the words after
    /// the path (if any) as the block's attributes.
    pub playground: Option<&'a str>,
}

/// Lines or an anchor of an mdBook include.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BookRange<'a> {
    /// Lines `start..end`, 0-based, end exclusive; no end: to the end of the file.
    Lines {
        /// The first line taken, 0-based.
        start: usize,
        /// The line after the last one taken, 0-based; `None` for the end of the file.
        end: Option<usize>,
    },
    /// The lines between `ANCHOR: name` and `ANCHOR_END: name`, other anchor lines dropped.
    Anchor(&'a str),
}

/// A reference to a file, directory or glob: the target of a mention or a bracket include.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reference<'a> {
    /// The path as written.
    pub path: PathText<'a>,
    /// The lines or region selected, if any.
    pub selector: Option<Selector<'a>>,
    /// What the path names, judging by how it is written.
    pub target: TargetKind,
}

/// A tool call `@[name{json}]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolCall<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// The JSON object of arguments, braces included, not yet validated.
    pub args: &'a str,
}

/// The body of an `@[...]` include.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Include<'a> {
    /// A file, directory or glob with an optional selector.
    Reference(Reference<'a>),
    /// A tool call.
    Tool(ToolCall<'a>),
}

/// A string literal in a directive, with JSON escapes still in place.
///
/// The scanner has checked that every escape is valid, so [`StrLit::value`] cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StrLit<'a> {
    /// The text between the quotes, escapes included.
    pub raw: &'a str,
}

impl<'a> StrLit<'a> {
    /// The value with its JSON escapes resolved. Borrows when there are none.
    pub fn value(&self) -> Cow<'a, str> {
        crate::json::unescape(self.raw).unwrap_or(Cow::Borrowed(self.raw))
    }
}

/// A comparison operator of `@{if}` and `@{elif}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `IS`: equal.
    Is,
    /// `ISNT`: not equal.
    Isnt,
    /// `CONTAINS`: the operand is a substring.
    Contains,
    /// `DOESNT_CONTAIN`: the operand is not a substring.
    DoesntContain,
    /// `MATCHES`: the operand, a regular expression, matches somewhere.
    Matches,
    /// `DOESNT_MATCH`: the operand, a regular expression, matches nowhere.
    DoesntMatch,
}

impl Op {
    /// Every operator, longest keyword first where one is a prefix of another.
    pub const ALL: [Op; 6] =
        [Op::DoesntContain, Op::DoesntMatch, Op::Contains, Op::Matches, Op::Isnt, Op::Is];

    /// The keyword as written.
    pub fn keyword(self) -> &'static str {
        match self {
            Op::Is => "IS",
            Op::Isnt => "ISNT",
            Op::Contains => "CONTAINS",
            Op::DoesntContain => "DOESNT_CONTAIN",
            Op::Matches => "MATCHES",
            Op::DoesntMatch => "DOESNT_MATCH",
        }
    }
}

/// The right-hand side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand<'a> {
    /// A string literal.
    Str(StrLit<'a>),
    /// The value of a macro.
    Macro(&'a str),
}

/// A condition of `@{if}` or `@{elif}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Condition<'a> {
    /// The macro on the left.
    pub name: &'a str,
    /// The operator.
    pub op: Op,
    /// The right-hand side.
    pub operand: Operand<'a>,
}

/// What an `@{...}` directive says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DirectiveKind<'a> {
    /// `@{define NAME, "value"}`; without a value the macro is the empty string.
    Define {
        /// The macro.
        name: &'a str,
        /// The value, if one was given.
        value: Option<StrLit<'a>>,
    },
    /// `@{undef NAME}`.
    Undef {
        /// The macro.
        name: &'a str,
    },
    /// `@{ifdef NAME}`.
    Ifdef {
        /// The macro.
        name: &'a str,
    },
    /// `@{ifndef NAME}`.
    Ifndef {
        /// The macro.
        name: &'a str,
    },
    /// `@{if NAME OP operand}`.
    If(Condition<'a>),
    /// `@{elif NAME OP operand}`.
    Elif(Condition<'a>),
    /// `@{else}`.
    Else,
    /// `@{endif}`.
    Endif,
    /// `@{include "path"}`: the same as `@[path]` in the same place.
    Include(Reference<'a>),
    /// `@{NAME}`: the macro's value.
    Substitute {
        /// The macro.
        name: &'a str,
    },
    /// A body that is none of the above (error `E_DIRECTIVE`); it stays in the text.
    Unknown,
}

impl DirectiveKind<'_> {
    /// Whether the directive controls the preprocessor (define, undef and the conditionals),
    /// the kinds that remove their line when they stand alone on it.
    pub fn is_control(&self) -> bool {
        !matches!(
            self,
            DirectiveKind::Include(_) | DirectiveKind::Substitute { .. } | DirectiveKind::Unknown
        )
    }
}

/// An `@{...}` directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Directive<'a> {
    /// What it says.
    pub kind: DirectiveKind<'a>,
    /// The body between the braces, untrimmed.
    pub body: &'a str,
    /// When the directive stands alone on its line (only spaces or tabs around it), the span
    /// of that whole line including its line ending; the preprocessor removes it for control
    /// directives.
    pub line: Option<Span>,
}
