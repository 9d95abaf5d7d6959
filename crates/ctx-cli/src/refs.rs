//! `ctx refs FILE`: the reference tree of a document (what includes what, with line ranges
//! and sizes), drawn as an indented tree or written as JSON.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use ctx::assemble::record::ReferenceRecord;
use ctx::{Format, Mode};
use serde_json::{Value, json};

use crate::cli::RefsArgs;
use crate::diag::finish;
use crate::input;
use crate::progress::Progress;
use crate::settings::Settings;
use crate::term::{Visible, visible_json};

/// One reference and the references of what it included.
struct Node<'a> {
    record: &'a ReferenceRecord,
    children: Vec<Node<'a>>,
}

pub(crate) fn run(settings: &Settings, args: &RefsArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("refs", false)?;
    let ctx = settings.context_for(Mode::Inline, Format::Inline, Some(&args.file))?;
    let stdin = if args.file.as_os_str() == "-" {
        Some(input::read_stdin_document(settings.input_cap())?)
    } else {
        None
    };
    let name = args.file.display().to_string();
    let progress = Progress::start(
        settings.style.stderr_tty && !settings.quiet,
        settings.style.color,
        format!("reading the references of {name}"),
    );
    let assembly = match &stdin {
        Some(text) => {
            ctx.assembler().assemble_str_to(text, "-", &mut io::sink()).map_err(ctx::Error::from)?
        }
        None => input::document(&settings.root, &args.file, |path| {
            ctx.assemble_to(path, &mut io::sink())
        })?,
    };
    drop(progress);
    let tree = tree(&assembly.references);
    let written = (|| -> anyhow::Result<()> {
        let mut out = BufWriter::new(io::stdout().lock());
        if json {
            let references: Vec<_> = tree.iter().map(node_json).collect();
            let tokenizer = assembly.stats.tokenizer;
            let mut value =
                json!({ "file": name, "tokenizer": tokenizer, "references": references });
            visible_json(&mut value);
            serde_json::to_writer_pretty(&mut out, &value)?;
            writeln!(out)?;
        } else {
            // Reference text, paths and messages come from the documents.
            let mut out = Visible(&mut out);
            writeln!(out, "{name}")?;
            draw(&mut out, &tree, "", assembly.stats.tokenizer)?;
        }
        out.flush()?;
        Ok(())
    })();
    crate::term::unless_closed(written)?;
    finish(settings, &assembly)
}

/// Nests the records by their `depth`; the assembler writes them depth first, each parent
/// before its children.
fn tree(records: &[ReferenceRecord]) -> Vec<Node<'_>> {
    let mut index = 0;
    build(records, &mut index, 0)
}

/// Nests pre-order records by their `depth`.
fn build<'a>(records: &'a [ReferenceRecord], i: &mut usize, depth: usize) -> Vec<Node<'a>> {
    let mut out: Vec<Node<'a>> = Vec::new();
    while let Some(record) = records.get(*i) {
        if record.depth < depth {
            break;
        }
        if record.depth > depth
            && let Some(last) = out.last_mut()
        {
            last.children.extend(build(records, i, depth + 1));
            continue;
        }
        *i += 1;
        let children = build(records, i, depth + 1);
        out.push(Node { record, children });
    }
    out
}

fn draw(
    out: &mut Visible<'_>,
    nodes: &[Node<'_>],
    prefix: &str,
    tokenizer: &str,
) -> io::Result<()> {
    for (n, node) in nodes.iter().enumerate() {
        let last = n + 1 == nodes.len();
        let (branch, more) = if last { ("└── ", "    ") } else { ("├── ", "│   ") };
        writeln!(out, "{prefix}{branch}{}", describe(node.record, tokenizer))?;
        draw(out, &node.children, &format!("{prefix}{more}"), tokenizer)?;
    }
    Ok(())
}

/// `path:10-20  (file, 340 bytes)  line 3`, or the raw text and its error.
fn describe(r: &ReferenceRecord, tokenizer: &str) -> String {
    let raw = r.raw.replace(['\n', '\r'], " ");
    let at = format!("line {}", r.at.line);
    if let Some(error) = &r.error {
        return format!(
            "{raw}  {}[{}]: {}  {at}",
            error.code.severity().name(),
            error.code.as_str(),
            error.message
        );
    }
    let kind = serde_json::to_value(r.kind).ok().and_then(|v| v.as_str().map(str::to_owned));
    let kind = kind.unwrap_or_default();
    let lines = r.lines.map(|l| format!(":{}-{}", l.start, l.end)).unwrap_or_default();
    let mut facts = vec![kind, format!("{} bytes", r.bytes)];
    if let Some(tokens) = r.tokens {
        facts.push(format!("{tokens} tokens ({tokenizer})"));
    }
    if r.truncated {
        facts.push("truncated".to_owned());
    }
    let path = if r.path.is_empty() { "." } else { &r.path };
    format!("{path}{lines}  ({})  {raw}  {at}", facts.join(", "))
}

fn node_json(node: &Node<'_>) -> Value {
    let mut value = serde_json::to_value(node.record).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("children".to_owned(), node.children.iter().map(node_json).collect());
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_follows_depth() {
        let record = |depth| ReferenceRecord {
            raw: String::new(),
            syntax: ctx::assemble::record::Syntax::Include,
            kind: ctx::assemble::record::Kind::File,
            path: String::new(),
            lines: None,
            bytes: 0,
            tokens: None,
            truncated: false,
            front_matter: None,
            at: ctx::assemble::record::At { file: String::new(), line: 1, column: 1 },
            error: None,
            depth,
            skipped: 0,
            suggested: false,
            encoding: None,
            cut: None,
            dropped: 0,
        };
        let records: Vec<_> = [0, 1, 2, 1, 0, 2].into_iter().map(record).collect();
        let mut i = 0;
        let nodes = build(&records, &mut i, 0);
        assert_eq!(i, records.len());
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].children.len(), 2);
        assert_eq!(nodes[0].children[0].children.len(), 1);
        assert_eq!(nodes[1].children.len(), 1);

        assert_eq!(tree(&records).len(), 2);
    }
}
