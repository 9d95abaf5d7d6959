//! The JSON form of a scan (feature `serde`): `{"items": [...], "diagnostics": [...]}`, each
//! item with its kind, byte span, line, column and text, and the fields of its kind. This is
//! what `ctx parse` prints; `items` come first, and below the top level keys come in
//! alphabetical order.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::Scan;
use crate::ast::{
    CodeKind, DirectiveKind, Include, Item, ItemKind, LineEnd, Operand, Reference, Selector, Span,
};
use crate::diagnostic::Diagnostic;

/// A JSON value built from the scan's borrowed strings.
enum Field<'a> {
    Null,
    Bool(bool),
    Num(u64),
    Str(Cow<'a, str>),
    Obj(Vec<(&'static str, Field<'a>)>),
}

impl Serialize for Field<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Null => s.serialize_none(),
            Field::Bool(b) => s.serialize_bool(*b),
            Field::Num(n) => s.serialize_u64(*n),
            Field::Str(text) => s.serialize_str(text),
            Field::Obj(fields) => {
                let mut sorted: Vec<&(&str, Field<'_>)> = fields.iter().collect();
                sorted.sort_by_key(|(key, _)| *key);
                let mut map = s.serialize_map(Some(sorted.len()))?;
                for (key, value) in sorted {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

fn str<'a>(text: impl Into<Cow<'a, str>>) -> Field<'a> {
    Field::Str(text.into())
}

fn span(span: Span) -> Field<'static> {
    Field::Obj(vec![("start", Field::Num(span.start as u64)), ("end", Field::Num(span.end as u64))])
}

impl Serialize for Scan<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("items", &Items(self))?;
        map.serialize_entry("diagnostics", &Diagnostics(&self.diagnostics))?;
        map.end()
    }
}

struct Items<'s, 'a>(&'s Scan<'a>);

impl Serialize for Items<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.items.len()))?;
        for item in &self.0.items {
            seq.serialize_element(&item_field(self.0.text, item))?;
        }
        seq.end()
    }
}

struct Diagnostics<'s>(&'s [Diagnostic]);

impl Serialize for Diagnostics<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for d in self.0 {
            seq.serialize_element(&Field::Obj(vec![
                ("severity", str(d.severity().name())),
                ("code", str(d.code.as_str())),
                ("message", str(d.message.as_str())),
                ("span", span(d.span)),
                ("line", Field::Num(u64::from(d.pos.line))),
                ("column", Field::Num(u64::from(d.pos.column))),
            ]))?;
        }
        seq.end()
    }
}

fn item_field<'a>(text: &'a str, item: &Item<'a>) -> Field<'a> {
    let mut fields = vec![
        ("kind", str(item.kind.name())),
        ("span", span(item.span)),
        ("line", Field::Num(u64::from(item.pos.line))),
        ("column", Field::Num(u64::from(item.pos.column))),
        ("text", str(item.span.of(text))),
    ];
    match &item.kind {
        ItemKind::Text => {}
        ItemKind::Code(CodeKind::Span) => fields.push(("code", str("span"))),
        ItemKind::Code(CodeKind::Fenced { closed }) => {
            fields.push(("code", str("fenced")));
            fields.push(("closed", Field::Bool(*closed)));
        }
        ItemKind::Escape(escape) => fields.push(("unescaped", str(escape.unescaped))),
        ItemKind::Mention(reference) | ItemKind::Include(Include::Reference(reference)) => {
            reference_fields(&mut fields, reference);
        }
        ItemKind::Include(Include::Tool(tool)) => {
            fields.push(("name", str(tool.name)));
            fields.push(("args", str(tool.args)));
        }
        ItemKind::Directive(directive) => {
            directive_fields(&mut fields, &directive.kind);
            fields.push(("alone_on_line", Field::Bool(directive.line.is_some())));
        }
    }
    Field::Obj(fields)
}

fn reference_fields<'a>(fields: &mut Vec<(&'static str, Field<'a>)>, reference: &Reference<'a>) {
    fields.push(("path", str(reference.path.unescaped())));
    fields.push(("quoted", Field::Bool(reference.path.quoted)));
    fields.push(("target", str(reference.target.name())));
    let selector = match &reference.selector {
        None => Field::Null,
        Some(Selector::Lines { start, end }) => {
            let end = match end {
                LineEnd::Line(n) => Field::Num(u64::from(*n)),
                LineEnd::Eof => Field::Null,
            };
            let lines = Field::Obj(vec![("start", Field::Num(u64::from(*start))), ("end", end)]);
            Field::Obj(vec![("lines", lines)])
        }
        Some(Selector::Anchor(name)) => Field::Obj(vec![("anchor", str(*name))]),
        Some(Selector::Fragment(name)) => Field::Obj(vec![("fragment", str(*name))]),
        Some(Selector::Book(part)) => {
            let range = match part.range {
                crate::ast::BookRange::Lines { start, end } => Field::Obj(vec![
                    ("start", Field::Num(start as u64)),
                    ("end", end.map_or(Field::Null, |e| Field::Num(e as u64))),
                ]),
                crate::ast::BookRange::Anchor(name) => Field::Obj(vec![("anchor", str(name))]),
            };
            Field::Obj(vec![("book", range), ("rustdoc", Field::Bool(part.rustdoc))])
        }
    };
    fields.push(("selector", selector));
}

fn directive_fields<'a>(fields: &mut Vec<(&'static str, Field<'a>)>, kind: &DirectiveKind<'a>) {
    let operand = |operand: &Operand<'a>| match operand {
        Operand::Str(s) => Field::Obj(vec![("string", str(s.value()))]),
        Operand::Macro(name) => Field::Obj(vec![("macro", str(*name))]),
    };
    let (directive, name) = match kind {
        DirectiveKind::Define { name, value } => {
            fields.push(("value", value.as_ref().map_or(Field::Null, |v| str(v.value()))));
            ("define", Some(*name))
        }
        DirectiveKind::Undef { name } => ("undef", Some(*name)),
        DirectiveKind::Ifdef { name } => ("ifdef", Some(*name)),
        DirectiveKind::Ifndef { name } => ("ifndef", Some(*name)),
        DirectiveKind::If(c) | DirectiveKind::Elif(c) => {
            fields.push(("op", str(c.op.keyword())));
            fields.push(("operand", operand(&c.operand)));
            let word = if matches!(kind, DirectiveKind::If(_)) { "if" } else { "elif" };
            (word, Some(c.name))
        }
        DirectiveKind::Else => ("else", None),
        DirectiveKind::Endif => ("endif", None),
        DirectiveKind::Include(reference) => {
            reference_fields(fields, reference);
            ("include", None)
        }
        DirectiveKind::Substitute { name } => ("substitute", Some(*name)),
        DirectiveKind::Unknown => ("unknown", None),
    };
    fields.push(("directive", str(directive)));
    if let Some(name) = name {
        fields.push(("name", str(name)));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_json_form_of_a_scan() {
        let scan = crate::scan("see @a.md#L2 @{define X, \"v\"}");
        let json: serde_json::Value = serde_json::to_value(&scan).unwrap();
        assert_eq!(json["diagnostics"], serde_json::json!([]));
        let mention = &json["items"][1];
        assert_eq!(
            mention,
            &serde_json::json!({
                "column": 5, "kind": "mention", "line": 1, "path": "a.md", "quoted": false,
                "selector": {"lines": {"end": 2, "start": 2}}, "span": {"end": 12, "start": 4},
                "target": "file", "text": "@a.md#L2"
            })
        );
        let define = &json["items"][3];
        assert_eq!(define["directive"], "define");
        assert_eq!(define["value"], "v");
        assert_eq!(define["alone_on_line"], false);
        // `items` first, as docs/cli.md shows; below, keys in alphabetical order.
        let text = serde_json::to_string(&scan).unwrap();
        assert!(text.starts_with("{\"items\":[{\"column\":1,"), "{text}");
        assert!(text.ends_with("],\"diagnostics\":[]}"), "{text}");
    }
}
