//! A stable, line-per-item text rendering of a scan, for fixtures and debugging.

use std::fmt::Write;

use crate::Scan;
use crate::ast::{
    CodeKind, Condition, DirectiveKind, Include, ItemKind, LineEnd, Operand, Reference, Selector,
};

impl Scan<'_> {
    /// Renders the items and diagnostics one per line:
    /// `KIND START..END LINE:COL fields`, then `---` and the diagnostics.
    ///
    /// The format is meant for tests and for `ctx parse --format text`; it is stable within a
    /// version of the syntax.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        for item in &self.items {
            let _ = write!(
                out,
                "{} {}..{} {}:{}",
                item.kind.name(),
                item.span.start,
                item.span.end,
                item.pos.line,
                item.pos.column
            );
            match &item.kind {
                ItemKind::Text => {
                    let _ = write!(out, " {:?}", item.span.of(self.text));
                }
                ItemKind::Code(CodeKind::Span) => out.push_str(" span"),
                ItemKind::Code(CodeKind::Fenced { closed }) => {
                    out.push_str(if *closed { " fenced" } else { " fenced unclosed" });
                }
                ItemKind::Escape(escape) => {
                    let _ = write!(out, " {:?} -> {:?}", item.span.of(self.text), escape.unescaped);
                }
                ItemKind::Mention(reference) | ItemKind::Include(Include::Reference(reference)) => {
                    reference_fields(&mut out, reference);
                }
                ItemKind::Include(Include::Tool(tool)) => {
                    let _ = write!(out, " name={:?} args={}", tool.name, tool.args);
                }
                ItemKind::Directive(directive) => {
                    out.push(' ');
                    directive_fields(&mut out, &directive.kind);
                    if let Some(line) = directive.line {
                        let _ = write!(out, " alone={}..{}", line.start, line.end);
                    }
                }
            }
            out.push('\n');
        }
        if !self.diagnostics.is_empty() {
            out.push_str("---\n");
            for d in &self.diagnostics {
                let _ = writeln!(
                    out,
                    "{}[{}] {}..{} {}:{} {}",
                    d.severity().name(),
                    d.code,
                    d.span.start,
                    d.span.end,
                    d.pos.line,
                    d.pos.column,
                    d.message
                );
            }
        }
        out
    }
}

fn reference_fields(out: &mut String, reference: &Reference<'_>) {
    let _ = write!(out, " {} path={:?}", reference.target.name(), reference.path.unescaped());
    if reference.path.quoted {
        out.push_str(" quoted");
    }
    if let Some(selector) = &reference.selector {
        out.push(' ');
        selector_fields(out, selector);
    }
}

/// Renders a selector as `lines=A..B`, `lines=A..`, `anchor=NAME` or `fragment=NAME`.
fn selector_fields(out: &mut String, selector: &Selector<'_>) {
    let _ = match selector {
        Selector::Lines { start, end: LineEnd::Line(end) } => write!(out, "lines={start}..{end}"),
        Selector::Lines { start, end: LineEnd::Eof } => write!(out, "lines={start}.."),
        Selector::Anchor(name) => write!(out, "anchor={name}"),
        Selector::Fragment(name) => write!(out, "fragment={name}"),
        Selector::Book(part) => {
            write!(out, "book={:?}{}", part.range, if part.rustdoc { " rustdoc" } else { "" })
        }
    };
}

fn directive_fields(out: &mut String, kind: &DirectiveKind<'_>) {
    let condition = |out: &mut String, word: &str, c: &Condition<'_>| {
        let _ = write!(out, "{word} {} {} ", c.name, c.op.keyword());
        let _ = match c.operand {
            Operand::Str(s) => write!(out, "{:?}", s.value()),
            Operand::Macro(name) => write!(out, "{name}"),
        };
    };
    let _ = match kind {
        DirectiveKind::Define { name, value: Some(v) } => {
            write!(out, "define {name} {:?}", v.value())
        }
        DirectiveKind::Define { name, value: None } => write!(out, "define {name}"),
        DirectiveKind::Undef { name } => write!(out, "undef {name}"),
        DirectiveKind::Ifdef { name } => write!(out, "ifdef {name}"),
        DirectiveKind::Ifndef { name } => write!(out, "ifndef {name}"),
        DirectiveKind::If(c) => {
            condition(out, "if", c);
            Ok(())
        }
        DirectiveKind::Elif(c) => {
            condition(out, "elif", c);
            Ok(())
        }
        DirectiveKind::Else => write!(out, "else"),
        DirectiveKind::Endif => write!(out, "endif"),
        DirectiveKind::Include(reference) => {
            out.push_str("include");
            reference_fields(out, reference);
            Ok(())
        }
        DirectiveKind::Substitute { name } => write!(out, "substitute {name}"),
        DirectiveKind::Unknown => write!(out, "unknown"),
    };
}
