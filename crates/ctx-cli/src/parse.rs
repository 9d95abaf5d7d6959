//! `ctx parse`: the scanned items of one text.

use std::io::{self, Write};
use std::process::ExitCode;

use ctx_syntax::{
    CodeKind, DirectiveKind, Include, Item, ItemKind, LineEnd, Operand, Reference, Scan, Selector,
    Severity,
};
use serde_json::{Value, json};

use crate::cli::ParseArgs;
use crate::settings::Settings;

/// `ctx parse FILE`: JSON by default, `--format text` for the fixture dump. It reads the file
/// directly (it is a debugging aid that resolves nothing); empty input is an empty scan.
pub(crate) fn run(settings: &Settings, args: &ParseArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("parse", true)?;
    let text = crate::input::read_text(&args.file)?;
    let scan = ctx_syntax::scan_with(&text, &settings.options.syntax);
    let mut out = io::stdout().lock();
    match json {
        false => out.write_all(scan.dump().as_bytes())?,
        true => {
            serde_json::to_writer_pretty(&mut out, &to_json(&scan))?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    let failed = scan.diagnostics.iter().any(|d| d.severity() == Severity::Error);
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The JSON form of a scan: `{ "items": [...], "diagnostics": [...] }`.
fn to_json(scan: &Scan<'_>) -> Value {
    let items: Vec<Value> = scan.items.iter().map(|item| item_json(scan.text, item)).collect();
    let diagnostics: Vec<Value> = scan
        .diagnostics
        .iter()
        .map(|d| {
            json!({
                "severity": d.severity().name(),
                "code": d.code.as_str(),
                "message": d.message,
                "span": {"start": d.span.start, "end": d.span.end},
                "line": d.pos.line,
                "column": d.pos.column,
            })
        })
        .collect();
    json!({ "items": items, "diagnostics": diagnostics })
}

fn item_json(text: &str, item: &Item<'_>) -> Value {
    let mut value = json!({
        "kind": item.kind.name(),
        "span": {"start": item.span.start, "end": item.span.end},
        "line": item.pos.line,
        "column": item.pos.column,
        "text": item.span.of(text),
    });
    let fields = match &item.kind {
        ItemKind::Text => json!({}),
        ItemKind::Code(CodeKind::Span) => json!({"code": "span"}),
        ItemKind::Code(CodeKind::Fenced { closed }) => json!({"code": "fenced", "closed": closed}),
        ItemKind::Escape(escape) => json!({"unescaped": escape.unescaped}),
        ItemKind::Mention(reference) | ItemKind::Include(Include::Reference(reference)) => {
            reference_json(reference)
        }
        ItemKind::Include(Include::Tool(tool)) => json!({"name": tool.name, "args": tool.args}),
        ItemKind::Directive(directive) => {
            let mut fields = directive_json(&directive.kind);
            fields["alone_on_line"] = json!(directive.line.is_some());
            fields
        }
    };
    if let (Value::Object(map), Value::Object(extra)) = (&mut value, fields) {
        map.extend(extra);
    }
    value
}

fn reference_json(reference: &Reference<'_>) -> Value {
    json!({
        "path": reference.path.unescaped(),
        "quoted": reference.path.quoted,
        "target": reference.target.name(),
        "selector": reference.selector.as_ref().map(selector_json),
    })
}

fn selector_json(selector: &Selector<'_>) -> Value {
    match selector {
        Selector::Lines { start, end } => json!({
            "lines": {"start": start, "end": match end { LineEnd::Line(n) => json!(n), LineEnd::Eof => Value::Null }}
        }),
        Selector::Anchor(name) => json!({"anchor": name}),
        Selector::Fragment(name) => json!({"fragment": name}),
    }
}

fn directive_json(kind: &DirectiveKind<'_>) -> Value {
    let operand = |operand: &Operand<'_>| match operand {
        Operand::Str(s) => json!({"string": s.value()}),
        Operand::Macro(name) => json!({"macro": name}),
    };
    match kind {
        DirectiveKind::Define { name, value } => {
            json!({"directive": "define", "name": name, "value": value.map(|v| v.value())})
        }
        DirectiveKind::Undef { name } => json!({"directive": "undef", "name": name}),
        DirectiveKind::Ifdef { name } => json!({"directive": "ifdef", "name": name}),
        DirectiveKind::Ifndef { name } => json!({"directive": "ifndef", "name": name}),
        DirectiveKind::If(c) | DirectiveKind::Elif(c) => json!({
            "directive": if matches!(kind, DirectiveKind::If(_)) { "if" } else { "elif" },
            "name": c.name,
            "op": c.op.keyword(),
            "operand": operand(&c.operand),
        }),
        DirectiveKind::Else => json!({"directive": "else"}),
        DirectiveKind::Endif => json!({"directive": "endif"}),
        DirectiveKind::Include(reference) => {
            let mut value = reference_json(reference);
            value["directive"] = json!("include");
            value
        }
        DirectiveKind::Substitute { name } => json!({"directive": "substitute", "name": name}),
        DirectiveKind::Unknown => json!({"directive": "unknown"}),
    }
}
