//! The per-file engine: walks the items of one scan, keeps the condition stack, and yields
//! events in document order.

use std::collections::VecDeque;
use std::sync::Arc;

use ctx_syntax::{
    Code, Condition, Diagnostic, Directive, DirectiveKind, Include, Item, ItemKind, Op, Operand,
    Position, Reference, Scan, Span, ToolCall,
};

use crate::macros::{Macros, REGEX_BUDGET, RegexError};

/// Something the caller must resolve: an active include, mention or tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    /// What is asked for.
    pub kind: RequestKind<'a>,
    /// The item's bytes in the scanned text (`@[...]`, `@{include "..."}` or `@path`).
    pub span: Span,
    /// Where the item starts.
    pub pos: Position,
}

/// What a [`Request`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind<'a> {
    /// `@[path]` or `@{include "path"}`: the two forms are indistinguishable here.
    Include(Reference<'a>),
    /// `@path` or `@"path"`.
    Mention(Reference<'a>),
    /// `@[tool{json}]`.
    Tool(ToolCall<'a>),
}

/// One piece of output or news from the engine, in document order.
///
/// Text is borrowed from the scanned text, never copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// Text to copy to the output as it is: plain text, code, and unknown directives.
    Text {
        /// The text.
        text: &'a str,
        /// Where it is in the scanned text.
        span: Span,
    },
    /// A backslash escape in front of an `@`. Inline output writes `unescaped`; append mode,
    /// which keeps a prompt exactly as written, writes `raw`.
    Escape {
        /// The escape as written.
        raw: &'a str,
        /// What it stands for.
        unescaped: &'a str,
        /// Where it is in the scanned text.
        span: Span,
    },
    /// `@{NAME}` with `NAME` defined: write `value` in its place.
    Substitution {
        /// The macro.
        name: &'a str,
        /// Its value, with escapes already resolved.
        value: Arc<str>,
        /// The directive's bytes.
        span: Span,
        /// Where the directive starts.
        pos: Position,
    },
    /// An active include, mention or tool call for the caller to resolve, with the same
    /// [`Macros`] before asking for the next event.
    Request(Request<'a>),
    /// A problem: the scan's own diagnostics, forwarded in order, and the preprocessor's.
    Diagnostic(Diagnostic),
}

/// One open `if`/`ifdef`/`ifndef` block.
#[derive(Debug, Clone, Copy)]
struct Block {
    /// Whether the enclosing code is active; if not, no branch of this block is.
    parent_active: bool,
    /// Whether the current branch is active.
    active: bool,
    /// Whether some branch has been taken already, so later ones are not.
    taken: bool,
    /// Whether an `else` has been seen.
    in_else: bool,
    /// The opening directive's bytes and position, for the error when it is never closed.
    open: Span,
    open_pos: Position,
}

/// The preprocessor for one file: feed it the file's scan, then ask for events.
///
/// It keeps the condition stack of that file; the [`Macros`] are passed to every call, so the
/// caller can resolve an include between two events by running another `Preprocessor` on the
/// included file with the same macros. Nothing inside an inactive branch has an effect: no
/// macro is defined, no condition is evaluated, no regular expression is compiled, and no
/// text, substitution or request comes out. Structure is still checked everywhere.
///
/// The scan's own diagnostics are forwarded as [`Event::Diagnostic`] in document order, so a
/// caller reports the events and nothing else.
///
/// # Example
///
/// ```
/// use ctx_preprocess::{Event, Macros, Preprocessor, RequestKind};
///
/// let scan = ctx_syntax::scan("@{ifdef A}\nsee @[a.md]\n@{else}\nnothing\n@{endif}\n");
/// let mut macros = Macros::new();
/// macros.define("A", "");
/// let mut out = String::new();
/// let mut pre = Preprocessor::new(&scan);
/// while let Some(event) = pre.next_event(&mut macros) {
///     match event {
///         Event::Text { text, .. } => out.push_str(text),
///         Event::Request(req) => {
///             let RequestKind::Include(r) = req.kind else { unreachable!() };
///             // A real caller would preprocess the included file here, with `&mut macros`.
///             out.push_str(&format!("<{}>", r.path.raw));
///         }
///         _ => {}
///     }
/// }
/// assert_eq!(out, "see <a.md>\n");
/// ```
#[derive(Debug)]
pub struct Preprocessor<'s, 'a> {
    text: &'a str,
    items: &'s [Item<'a>],
    scan_diagnostics: &'s [Diagnostic],
    /// The next item to process.
    next_item: usize,
    /// The next scan diagnostic to forward.
    next_diagnostic: usize,
    stack: Vec<Block>,
    /// Text before this offset belongs to a line removed by a control directive.
    consumed: usize,
    queue: VecDeque<Event<'a>>,
    finished: bool,
}

impl<'s, 'a> Preprocessor<'s, 'a> {
    /// A preprocessor for the file whose scan this is.
    pub fn new(scan: &'s Scan<'a>) -> Preprocessor<'s, 'a> {
        Preprocessor::from_parts(scan.text, &scan.items, &scan.diagnostics)
    }

    /// A preprocessor over the parts of a scan: the text, its items (contiguous, covering the
    /// text) and the scanner's diagnostics.
    pub fn from_parts(
        text: &'a str,
        items: &'s [Item<'a>],
        diagnostics: &'s [Diagnostic],
    ) -> Preprocessor<'s, 'a> {
        Preprocessor {
            text,
            items,
            scan_diagnostics: diagnostics,
            next_item: 0,
            next_diagnostic: 0,
            stack: Vec::new(),
            consumed: 0,
            queue: VecDeque::new(),
            finished: false,
        }
    }

    /// The next event, or `None` when the file is done (after the errors for blocks left
    /// open, which recovery closes).
    pub fn next_event(&mut self, macros: &mut Macros) -> Option<Event<'a>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            if self.next_item < self.items.len() {
                self.step(macros);
            } else if !self.finished {
                self.finish();
            } else {
                return None;
            }
        }
    }

    /// Runs the file to its end, handing every event to `f` together with the macros, so
    /// that `f` can recurse into includes.
    pub fn for_each(mut self, macros: &mut Macros, mut f: impl FnMut(Event<'a>, &mut Macros)) {
        while let Some(event) = self.next_event(macros) {
            f(event, macros);
        }
    }

    /// The events as an iterator, for callers that do not resolve requests on the way.
    pub fn events<'m>(self, macros: &'m mut Macros) -> Events<'s, 'a, 'm> {
        Events { pre: self, macros }
    }

    /// How deep the condition stack is now.
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    fn active(&self) -> bool {
        self.stack.last().is_none_or(|b| b.active)
    }

    fn step(&mut self, macros: &mut Macros) {
        let items = self.items;
        let item = &items[self.next_item];
        self.next_item += 1;
        while let Some(d) = self.scan_diagnostics.get(self.next_diagnostic) {
            if d.span.start >= item.span.end {
                break;
            }
            self.queue.push_back(Event::Diagnostic(d.clone()));
            self.next_diagnostic += 1;
        }
        let active = self.active();
        match &item.kind {
            ItemKind::Text | ItemKind::Code(_) if active => self.text_event(item.span),
            ItemKind::Escape(escape) if active => self.queue.push_back(Event::Escape {
                raw: item.span.of(self.text),
                unescaped: escape.unescaped,
                span: item.span,
            }),
            ItemKind::Mention(reference) if active => {
                self.request(RequestKind::Mention(*reference), item);
            }
            ItemKind::Include(Include::Reference(reference)) if active => {
                self.request(RequestKind::Include(*reference), item);
            }
            ItemKind::Include(Include::Tool(call)) if active => {
                self.request(RequestKind::Tool(*call), item);
            }
            ItemKind::Directive(directive) => self.directive(directive, item, active, macros),
            _ => {}
        }
    }

    /// Queues the part of `span` that no removed line covers.
    fn text_event(&mut self, span: Span) {
        let start = span.start.max(self.consumed);
        let mut end = span.end;
        // The blanks before a control directive alone on the next line go with that line.
        if let Some(Item { kind: ItemKind::Directive(next), .. }) = self.items.get(self.next_item)
            && let Some(line) = removed_line(next)
        {
            end = end.min(line.start);
        }
        if start < end {
            let span = Span::new(start, end);
            self.queue.push_back(Event::Text { text: span.of(self.text), span });
        }
    }

    fn request(&mut self, kind: RequestKind<'a>, item: &Item<'a>) {
        self.queue.push_back(Event::Request(Request { kind, span: item.span, pos: item.pos }));
    }

    fn error(&mut self, code: Code, message: String, item: &Item<'a>) {
        self.queue.push_back(Event::Diagnostic(Diagnostic {
            code,
            message,
            span: item.span,
            pos: item.pos,
        }));
    }

    fn directive(
        &mut self,
        directive: &Directive<'a>,
        item: &Item<'a>,
        active: bool,
        macros: &mut Macros,
    ) {
        if let Some(line) = removed_line(directive) {
            self.consumed = line.end;
        }
        match directive.kind {
            DirectiveKind::Define { name, value } => {
                if active {
                    let value: Arc<str> = match value {
                        Some(lit) => lit.value().into(),
                        None => "".into(),
                    };
                    macros.define(name, value);
                }
            }
            DirectiveKind::Undef { name } => {
                if active {
                    macros.undef(name);
                }
            }
            DirectiveKind::Ifdef { name } => {
                let truth = active && macros.is_defined(name);
                self.open(active, truth, item);
            }
            DirectiveKind::Ifndef { name } => {
                let truth = active && !macros.is_defined(name);
                self.open(active, truth, item);
            }
            DirectiveKind::If(condition) => {
                let truth = active && self.evaluate(&condition, item, macros);
                self.open(active, truth, item);
            }
            DirectiveKind::Elif(condition) => match self.stack.last() {
                None => self.error(
                    Code::Directive,
                    "`@{elif}` without an open `@{if}`; ignored".to_owned(),
                    item,
                ),
                Some(block) if block.in_else => self.error(
                    Code::Directive,
                    "`@{elif}` after `@{else}`; ignored".to_owned(),
                    item,
                ),
                Some(&block) => {
                    let truth = block.parent_active
                        && !block.taken
                        && self.evaluate(&condition, item, macros);
                    if let Some(block) = self.stack.last_mut() {
                        block.active = truth;
                        block.taken |= truth;
                    }
                }
            },
            DirectiveKind::Else => match self.stack.last_mut() {
                None => self.error(
                    Code::Directive,
                    "`@{else}` without an open `@{if}`; ignored".to_owned(),
                    item,
                ),
                Some(block) if block.in_else => self.error(
                    Code::Directive,
                    "`@{else}` after `@{else}`; ignored".to_owned(),
                    item,
                ),
                Some(block) => {
                    block.in_else = true;
                    block.active = block.parent_active && !block.taken;
                    block.taken = true;
                }
            },
            DirectiveKind::Endif => {
                if self.stack.pop().is_none() {
                    self.error(
                        Code::Directive,
                        "`@{endif}` without an open `@{if}`; ignored".to_owned(),
                        item,
                    );
                }
            }
            DirectiveKind::Include(reference) => {
                if active {
                    self.request(RequestKind::Include(reference), item);
                }
            }
            DirectiveKind::Substitute { name } => {
                if active {
                    match macros.get_shared(name) {
                        Some(value) => self.queue.push_back(Event::Substitution {
                            name,
                            value: Arc::clone(value),
                            span: item.span,
                            pos: item.pos,
                        }),
                        None => {
                            self.error(
                                Code::UndefinedMacro,
                                format!("macro `{name}` is not defined; left as text"),
                                item,
                            );
                            self.text_event(item.span);
                        }
                    }
                }
            }
            // The scanner has reported it; it stays in the text.
            DirectiveKind::Unknown => {
                if active {
                    self.text_event(item.span);
                }
            }
        }
    }

    fn open(&mut self, parent_active: bool, truth: bool, item: &Item<'a>) {
        self.stack.push(Block {
            parent_active,
            active: truth,
            taken: truth,
            in_else: false,
            open: item.span,
            open_pos: item.pos,
        });
    }

    fn evaluate(
        &mut self,
        condition: &Condition<'a>,
        item: &Item<'a>,
        macros: &mut Macros,
    ) -> bool {
        let left = self.lookup(condition.name, item, macros);
        let right: Arc<str> = match condition.operand {
            Operand::Str(lit) => lit.value().into(),
            Operand::Macro(name) => self.lookup(name, item, macros),
        };
        match condition.op {
            Op::Is => left == right,
            Op::Isnt => left != right,
            Op::Contains => left.contains(&*right),
            Op::DoesntContain => !left.contains(&*right),
            Op::Matches | Op::DoesntMatch => match macros.regex(&right) {
                Ok(re) => re.is_match(&left) == (condition.op == Op::Matches),
                Err(RegexError::Invalid(message)) => {
                    let message = format!(
                        "invalid regular expression `{}`: {message}; `{}` is false",
                        shorten(&right),
                        condition.op.keyword()
                    );
                    self.error(Code::Regex, message, item);
                    false
                }
                Err(RegexError::Budget) => {
                    let message = format!(
                        "regex budget of this assembly spent ({REGEX_BUDGET} compilations); `{}` is not compiled and `{}` is false",
                        shorten(&right),
                        condition.op.keyword()
                    );
                    self.error(Code::Budget, message, item);
                    false
                }
            },
        }
    }

    /// The value of a macro in a condition; an undefined one is the empty string, with a
    /// warning.
    fn lookup(&mut self, name: &str, item: &Item<'a>, macros: &Macros) -> Arc<str> {
        match macros.get_shared(name) {
            Some(value) => Arc::clone(value),
            None => {
                self.error(
                    Code::UndefinedMacro,
                    format!("macro `{name}` is not defined; compared as the empty string"),
                    item,
                );
                "".into()
            }
        }
    }

    fn finish(&mut self) {
        self.finished = true;
        for d in &self.scan_diagnostics[self.next_diagnostic..] {
            self.queue.push_back(Event::Diagnostic(d.clone()));
        }
        self.next_diagnostic = self.scan_diagnostics.len();
        for block in std::mem::take(&mut self.stack) {
            let body = block.open.of(self.text);
            self.queue.push_back(Event::Diagnostic(Diagnostic {
                code: Code::Directive,
                message: format!(
                    "`{}` is never closed; closed at the end of the file",
                    shorten(body)
                ),
                span: block.open,
                pos: block.open_pos,
            }));
        }
    }
}

/// The line a directive removes: its whole line when it is a control directive alone on it.
fn removed_line(directive: &Directive<'_>) -> Option<Span> {
    if directive.kind.is_control() { directive.line } else { None }
}

/// At most 60 characters of `text`, for messages.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// The events of one file as an iterator; see [`Preprocessor::events`].
#[derive(Debug)]
pub struct Events<'s, 'a, 'm> {
    pre: Preprocessor<'s, 'a>,
    macros: &'m mut Macros,
}

impl<'a> Iterator for Events<'_, 'a, '_> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        self.pre.next_event(self.macros)
    }
}
