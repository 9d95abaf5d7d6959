//! Earlier turns: mai's history file, summarised and cut to a token budget, and transcripts
//! of OpenAI-style messages (JSON or JSON Lines), read and appended.

use ctx_diagnostics::Code;
use ctx_fs::Store;
use serde::Deserialize;
use serde_json::Value;

use crate::{Error, Warning};

/// Where mai keeps its history, in the project's folder or the home folder.
pub const MAI_HISTORY: &str = ".mai/history.json";

/// The default token budget of the history block (`--history-tokens`).
pub const DEFAULT_HISTORY_TOKENS: usize = 2000;

/// One entry of mai's history (newest first in the file).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Entry {
    /// Its id.
    #[serde(default)]
    pub id: String,
    /// An optional name.
    #[serde(default)]
    pub name: Option<String>,
    /// What was asked for, in a sentence.
    #[serde(default)]
    pub description: Option<String>,
    /// When (as the file has it: text or a number).
    #[serde(default)]
    pub timestamp: Option<Value>,
    /// The prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// The model's answer (never shown whole).
    #[serde(default)]
    pub ai_response: Option<String>,
    /// What the answer did to the files.
    #[serde(default)]
    pub operations: Vec<Operation>,
    /// Whether the operations were applied.
    #[serde(default)]
    pub applied: Option<bool>,
}

/// One operation of an entry.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Operation {
    /// `create`, `delete`, `move`, `writeWithReplace` or `response`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The file it touches.
    #[serde(default)]
    pub file_path: Option<String>,
    /// The content written (counted in lines, never shown).
    #[serde(default)]
    pub content: Option<String>,
    /// A move's source.
    #[serde(default)]
    pub old_path: Option<String>,
    /// A move's destination.
    #[serde(default)]
    pub new_path: Option<String>,
    /// A comment.
    #[serde(default)]
    pub comment: Option<String>,
}

/// Parses mai's history file: a JSON array of entries, newest first.
pub fn parse_mai(text: &str) -> Result<Vec<Entry>, Error> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(Code::Config, format!("{MAI_HISTORY}: not a history (line {}): {e}", e.line()))
    })
}

/// Which entries to take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The newest N.
    Newest(usize),
    /// One: by id, by name, or `~N` (1-based, newest first).
    One(String),
}

/// The entries `selection` names, newest first.
pub fn select(entries: &[Entry], selection: &Selection) -> Result<Vec<Entry>, Error> {
    match selection {
        Selection::Newest(n) => Ok(entries.iter().take(*n).cloned().collect()),
        Selection::One(key) => {
            if let Some(n) = key.strip_prefix('~') {
                let range = if entries.is_empty() {
                    "the history is empty".to_owned()
                } else {
                    format!("valid: ~1 to ~{}", entries.len())
                };
                let n: usize = n.parse().map_err(|_| {
                    Error::usage(format!("history entry `{key}`: not a number after `~` ({range})"))
                })?;
                return n
                    .checked_sub(1)
                    .and_then(|i| entries.get(i))
                    .map(|e| vec![e.clone()])
                    .ok_or_else(|| {
                        Error::usage(format!("history entry `{key}` is out of range ({range})"))
                    });
            }
            entries
                .iter()
                .find(|e| e.id == *key)
                .or_else(|| entries.iter().find(|e| e.name.as_deref() == Some(key.as_str())))
                .map(|e| vec![e.clone()])
                .ok_or_else(|| {
                    Error::usage(format!("no history entry with the id or name `{key}`"))
                })
        }
    }
}

/// An entry as a compact summary: id and time, prompt, description, one line per operation,
/// and whether it was applied; never a file's content.
pub fn summarize(entry: &Entry) -> String {
    let mut out = format!("- {}", if entry.id.is_empty() { "(no id)" } else { &entry.id });
    if let Some(name) = &entry.name {
        out.push_str(&format!(" \"{name}\""));
    }
    match &entry.timestamp {
        Some(Value::String(t)) => out.push_str(&format!(" ({t})")),
        Some(Value::Number(t)) => out.push_str(&format!(" ({t})")),
        _ => {}
    }
    out.push('\n');
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(prompt) = &entry.prompt {
        out.push_str(&format!("  prompt: {}\n", one_line(prompt)));
    }
    if let Some(description) = &entry.description {
        out.push_str(&format!("  description: {}\n", one_line(description)));
    }
    for op in &entry.operations {
        out.push_str(&format!("  {}\n", operation(op)));
    }
    let result = match entry.applied {
        Some(true) => "applied",
        Some(false) => "not applied",
        None => "unknown",
    };
    out.push_str(&format!("  result: {result}\n"));
    out
}

fn operation(op: &Operation) -> String {
    let file = op.file_path.as_deref().unwrap_or("?");
    let lines = |c: &Option<String>| c.as_deref().map_or(0, |c| c.lines().count());
    match op.kind.as_str() {
        "create" | "writeWithReplace" => {
            let n = lines(&op.content);
            format!("{}: {file} ({n} line{})", op.kind, if n == 1 { "" } else { "s" })
        }
        "delete" => format!("delete: {file}"),
        "move" => format!(
            "move: {} -> {}",
            op.old_path.as_deref().unwrap_or("?"),
            op.new_path.as_deref().unwrap_or("?")
        ),
        "response" => {
            let first = op.comment.as_deref().and_then(|c| c.lines().next()).unwrap_or("");
            format!("response: {first}")
        }
        other => format!("{other}: {file}"),
    }
}

/// The history block: a heading, then the summaries of `entries` (newest first) while they
/// fit in `budget` tokens, then a marker saying how many were left out.
pub fn block(entries: &[Entry], budget: usize) -> (String, usize) {
    let mut out = String::from("### History\n\n");
    let mut spent = ctx_assemble::tokens::count(&out);
    let mut taken = 0;
    for entry in entries {
        let summary = summarize(entry);
        let cost = ctx_assemble::tokens::count(&summary);
        if spent + cost > budget {
            break;
        }
        spent += cost;
        out.push_str(&summary);
        taken += 1;
    }
    let left = entries.len() - taken;
    if left > 0 {
        out.push_str(&format!(
            "[... {left} older history entries left out: the history budget is {budget} tokens ...]\n"
        ));
    }
    (out, left)
}

/// Reads a transcript: a JSON array of messages, or JSON Lines with one message a line.
/// A line that is not a message object with a `role` is reported (`W_HISTORY`, with its line)
/// and skipped; order is kept, image parts too.
pub fn parse_transcript(text: &str, name: &str) -> Result<(Vec<Value>, Vec<Warning>), Error> {
    if text.trim_start().starts_with('[') {
        let messages: Vec<Value> = serde_json::from_str(text).map_err(|e| {
            Error::new(
                Code::Config,
                format!("{name}: not a JSON array of messages (line {}): {e}", e.line()),
            )
        })?;
        let mut warnings = Vec::new();
        let kept = messages
            .into_iter()
            .enumerate()
            .filter(|(i, m)| {
                let ok = is_message(m);
                if !ok {
                    warnings.push(Warning::new(
                        Code::History,
                        format!("{name}: message {} has no role; skipped", i + 1),
                    ));
                }
                ok
            })
            .map(|(_, m)| m)
            .collect();
        return Ok((kept, warnings));
    }
    let mut messages = Vec::new();
    let mut warnings = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(m) if is_message(&m) => messages.push(m),
            Ok(_) => warnings.push(Warning::new(
                Code::History,
                format!("{name}:{}: not a message (an object with a `role`); skipped", i + 1),
            )),
            Err(e) => warnings.push(Warning::new(
                Code::History,
                format!("{name}:{}: a torn or corrupt line ({e}); skipped", i + 1),
            )),
        }
    }
    Ok((messages, warnings))
}

fn is_message(m: &Value) -> bool {
    m.get("role").and_then(Value::as_str).is_some()
}

/// Appends one turn (an OpenAI-style message) to the JSON Lines transcript `name` of `store`,
/// in one write under the entry's lock, so that concurrent appenders never mix their lines.
pub fn append_turn(store: &Store, name: &str, message: &Value) -> Result<(), Error> {
    if !is_message(message) {
        return Err(Error::usage("a turn is an object with a `role`".into()));
    }
    let mut line = serde_json::to_string(message).map_err(|e| Error::usage(e.to_string()))?;
    line.push('\n');
    store.append(name, line.as_bytes()).map_err(Error::fs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HISTORY: &str = r#"[
      {"id": "c3", "name": "retry", "timestamp": "2026-11-20T10:00:00Z", "prompt": "add retries\nto the client",
       "description": "Retry failed requests", "aiResponse": "done",
       "operations": [
         {"type": "create", "filePath": "src/retry.rs", "content": "a\nb\nc\n"},
         {"type": "move", "oldPath": "src/old.rs", "newPath": "src/new.rs"},
         {"type": "delete", "filePath": "src/gone.rs"},
         {"type": "writeWithReplace", "filePath": "src/lib.rs", "content": "x\n"},
         {"type": "response", "comment": "Explained the change\nin detail"}
       ], "applied": true, "files": ["src/retry.rs"]},
      {"id": "b2", "timestamp": 1763000000, "prompt": "fix the build", "operations": [], "applied": false},
      {"id": "a1", "prompt": "first"}
    ]"#;

    #[test]
    fn selections() {
        let entries = parse_mai(HISTORY).unwrap();
        let ids = |s: Selection| -> Vec<String> {
            select(&entries, &s).unwrap().into_iter().map(|e| e.id).collect()
        };
        assert_eq!(ids(Selection::Newest(2)), ["c3", "b2"]);
        assert_eq!(ids(Selection::Newest(9)), ["c3", "b2", "a1"]);
        assert_eq!(ids(Selection::One("~1".into())), ["c3"]);
        assert_eq!(ids(Selection::One("~3".into())), ["a1"]);
        assert_eq!(ids(Selection::One("b2".into())), ["b2"]);
        assert_eq!(ids(Selection::One("retry".into())), ["c3"]);
        let err = select(&entries, &Selection::One("~4".into())).unwrap_err();
        assert!(err.to_string().contains("valid: ~1 to ~3"), "{err}");
        assert!(select(&entries, &Selection::One("~0".into())).is_err());
        assert!(select(&entries, &Selection::One("nope".into())).is_err());
        assert!(
            select(&[], &Selection::One("~1".into())).unwrap_err().to_string().contains("empty")
        );
    }

    #[test]
    fn a_summary_never_holds_content() {
        let entries = parse_mai(HISTORY).unwrap();
        let text = summarize(&entries[0]);
        assert_eq!(
            text,
            "- c3 \"retry\" (2026-11-20T10:00:00Z)\n  prompt: add retries to the client\n  description: Retry failed requests\n  create: src/retry.rs (3 lines)\n  move: src/old.rs -> src/new.rs\n  delete: src/gone.rs\n  writeWithReplace: src/lib.rs (1 line)\n  response: Explained the change\n  result: applied\n"
        );
        assert!(
            summarize(&entries[1]).contains("(1763000000)")
                && summarize(&entries[1]).contains("not applied")
        );
    }

    #[test]
    fn the_block_is_cut_to_its_budget() {
        let entries = parse_mai(HISTORY).unwrap();
        let (all, left) = block(&entries, 10_000);
        assert_eq!(left, 0);
        assert!(all.contains("- a1"));
        let (cut, left) = block(&entries, 60);
        assert!(left >= 1, "{cut}");
        assert!(cut.contains(&format!("[... {left} older history entries left out")), "{cut}");
        assert!(
            ctx_assemble::tokens::count(&cut) <= 60 + 30,
            "only the marker goes past the budget"
        );
    }

    #[test]
    fn transcripts_in_both_shapes_and_a_torn_line() {
        let array = r#"[{"role": "user", "content": "hi"}, {"content": "no role"}, {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}]"#;
        let (messages, warnings) = parse_transcript(array, "t.json").unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!(warnings.len(), 1);
        let lines = "{\"role\": \"user\", \"content\": [{\"type\": \"image_url\", \"image_url\": {\"url\": \"data:image/png;base64,AQID\"}}]}\n{\"role\": \"assist\n{\"role\": \"assistant\", \"content\": \"ok\"}\n";
        let (messages, warnings) = parse_transcript(lines, "t.jsonl").unwrap();
        assert_eq!(messages.len(), 2, "the torn line is skipped, the rest kept in order");
        assert_eq!(messages[0]["content"][0]["type"], "image_url");
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].code, Code::History);
        assert!(warnings[0].message.starts_with("t.jsonl:2:"), "{}", warnings[0].message);
        assert!(parse_transcript("[{", "bad.json").is_err());
    }
}
