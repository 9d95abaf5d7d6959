//! The outline view: the definitions of files and folders with their lines
//! (`ctx_suggest::outline`), read through the sandbox within a run's tool budget, and the
//! assembler's `outline` tool (`@[outline{"uri":"src"}]`) that shows it.

use std::fmt::Write;
use std::sync::Arc;

use ctx_assemble::tools::{Tool, ToolContext, ToolError, Tools};
use ctx_diagnostics::Code;
use ctx_fs::{FileKind, Location, SkipReason, Walk};
use ctx_suggest::outline::{self, FileOutline, Fitted};
use serde_json::{Map, Value};

/// The default budget of the `outline` tool, in o200k tokens: a map, not the code.
pub const TOOL_MAX_TOKENS: usize = 4000;

/// What [`Context::outline`](crate::Context::outline) is asked for.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct OutlineOptions {
    /// A prompt to rank the entries for: the entries that share its words are kept first.
    pub prompt: Option<String>,
    /// A budget for the whole text, notes included, in the tokens of the context's
    /// tokenizer.
    pub max_tokens: Option<usize>,
}

impl OutlineOptions {
    /// Sets the prompt.
    pub fn prompt(mut self, prompt: Option<String>) -> OutlineOptions {
        self.prompt = prompt;
        self
    }

    /// Sets the budget.
    pub fn max_tokens(mut self, tokens: Option<usize>) -> OutlineOptions {
        self.max_tokens = tokens;
        self
    }
}

/// An outline of files and folders.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct Outline {
    /// The files with the entries kept, the counts of what was left out.
    #[serde(flatten)]
    pub fitted: Fitted,
    /// The text a model is shown: each file, its entries, and a note for every cut.
    #[serde(skip)]
    pub text: String,
    /// The cuts (`W_LIMIT`, `W_BUDGET`) and the paths that could not be read, with codes.
    #[serde(skip)]
    pub warnings: Vec<(Code, String)>,
}

/// The built-in tools with `outline` among them.
pub(crate) fn tools() -> Tools {
    let mut tools = Tools::builtin();
    tools.register(Arc::new(OutlineTool));
    tools
}

/// `outline{"uri": PATH, "prompt": TEXT, "max_tokens": N}`: the definitions of a file or
/// folder with their lines (default budget [`TOOL_MAX_TOKENS`]).
struct OutlineTool;

impl Tool for OutlineTool {
    fn name(&self) -> &str {
        "outline"
    }

    fn keys(&self) -> &[&str] {
        &["uri", "prompt", "max_tokens"]
    }

    fn call(&self, args: &Map<String, Value>, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        if let Some(key) = args.keys().find(|k| !self.keys().contains(&k.as_str())) {
            return Err(ToolError::args(format!(
                "unknown argument `{key}` (expected: uri, prompt, max_tokens)"
            )));
        }
        let text = |key: &str| match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(ToolError::args(format!("argument `{key}` must be a string"))),
        };
        let uri = text("uri")?.unwrap_or(".");
        let prompt = text("prompt")?;
        let max_tokens = match args.get("max_tokens") {
            None | Some(Value::Null) => TOOL_MAX_TOKENS,
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| ToolError::args("argument `max_tokens` must be a whole number"))?,
        };
        // The path must resolve: a tool call that names nothing is an error, as for `tree`.
        cx.resolve(uri)?;
        let budget = (max_tokens > 0).then_some((max_tokens, ctx_tokens::Tokenizer::O200k));
        let outline = outline_of(cx, &[uri], prompt, budget);
        for (code, message) in outline.warnings {
            cx.budget.warn(code, message);
        }
        Ok(outline.text)
    }
}

/// What was read for an outline, and what was not.
#[derive(Default)]
struct Collected {
    files: Vec<FileOutline>,
    /// In-band notes, one line each.
    notes: Vec<String>,
    warnings: Vec<(Code, String)>,
    other_kinds: usize,
    too_large: usize,
    unreadable: usize,
    unscanned: usize,
}

pub(crate) fn outline_of(
    cx: &ToolContext<'_>,
    paths: &[&str],
    prompt: Option<&str>,
    budget: Option<(usize, ctx_tokens::Tokenizer)>,
) -> Outline {
    let mut got = Collected::default();
    for path in paths {
        collect(cx, path, &mut got);
    }
    // The file cap is the sandbox's own (`--max-file-bytes`); the outline has no other.
    let cap = cx.sandbox.limits().max_file_bytes;
    let skipped = [
        (got.too_large, format!("too large (over {cap} bytes)"), "; --max-file-bytes lifts it"),
        (got.unreadable, "unreadable".to_owned(), ""),
        (
            got.unscanned,
            "past the scan budget of the run".to_owned(),
            "; --max-scan-bytes lifts it",
        ),
    ];
    for (n, why, hint) in skipped {
        if n > 0 {
            let files = if n == 1 { "file" } else { "files" };
            got.notes.push(format!("[... {n} {files} not outlined: {why} ...]"));
            got.warnings.push((Code::Limit, format!("{n} {files} not outlined: {why}{hint}")));
        }
    }
    if got.other_kinds > 0 {
        let files = if got.other_kinds == 1 { "file" } else { "files" };
        got.notes.push(format!(
            "[... {} {files} of kinds without definitions not outlined ...]",
            got.other_kinds
        ));
    }
    if got.files.is_empty() && got.notes.is_empty() {
        got.notes.push("[... no definitions ...]".to_owned());
    }
    // The notes of what was not read come after the outline, their tokens set aside first.
    let mut notes = String::new();
    for note in &got.notes {
        notes.push_str(note);
        notes.push('\n');
    }
    let notes_tokens = ctx_tokens::count(&notes);
    // The room in o200k tokens; notes that do not fit beside the outline's own note give it
    // their room (the outline says what the budget left out, the warnings what was not read).
    let (room, mut notes) = match budget {
        Some((max, tokenizer)) => {
            let max = tokenizer.o200k_within(max);
            match max.checked_sub(notes_tokens) {
                Some(left) if left > 0 || notes_tokens == 0 => (Some(left), notes),
                _ => (Some(max), String::new()),
            }
        }
        None => (None, notes),
    };
    outline::rank(&mut got.files, prompt);
    let mut fitted = outline::fit_in(&got.files, room, budget);
    if (fitted.left_out > 0 || fitted.files_left_out > 0) && fitted.text.is_empty() {
        // No room was left for saying what the budget left out: that comes first.
        let whole = budget.map(|(max, t)| t.o200k_within(max));
        fitted = outline::fit_in(&got.files, whole, budget);
        notes.clear();
    }
    if let Some((max, tokenizer)) = budget
        && (fitted.left_out > 0 || fitted.files_left_out > 0)
    {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        got.warnings.push((
            Code::TokenBudget,
            format!(
                "the outline left out {} and {} to fit {} ({})",
                plural(fitted.left_out, "definition", "definitions"),
                plural(fitted.files_left_out, "file", "files"),
                plural(max, "token", "tokens"),
                tokenizer.name(),
            ),
        ));
    }
    let text = format!("{}{notes}", fitted.text);
    Outline { fitted, text, warnings: got.warnings }
}

/// Reads the outline of one path into `got`; a path that does not resolve is a warning.
fn collect(cx: &ToolContext<'_>, path: &str, got: &mut Collected) {
    let location = match cx.resolve(path) {
        Ok(location) => location,
        Err(err) => {
            got.notes.push(format!("[... {path}: {} ...]", err.message));
            got.warnings.push((err.code, err.message));
            return;
        }
    };
    let kind = cx.sandbox.stat(&location).map(|s| s.kind);
    match kind {
        Ok(FileKind::Dir) => match cx.budget.walk(cx.sandbox, &location) {
            Ok(walk) => {
                for entry in walk.files() {
                    let shown = cx.display_walked(entry);
                    read_one(cx, &entry.location, &shown, got);
                }
                walk_notes(cx, &walk, got);
            }
            Err(err) => {
                got.notes.push(format!("[... {path}: {} ...]", err.message));
                got.warnings.push((err.code, err.message));
            }
        },
        Ok(_) => {
            let shown = cx.display(&location);
            read_one(cx, &location, &shown, got);
        }
        Err(err) => {
            let err = ToolError::from_fs(&err);
            got.notes.push(format!("[... {path}: {} ...]", err.message));
            got.warnings.push((err.code, err.message));
        }
    }
}

/// The outline of one file, if it has one and can be read within the run's scan budget.
fn read_one(cx: &ToolContext<'_>, location: &Location, shown: &str, got: &mut Collected) {
    if !outline::outlines(shown) {
        got.other_kinds += 1;
        return;
    }
    let content = match cx.sandbox.read_text(location) {
        Ok(content) => content,
        Err(err) if err.code() == Code::TooLarge => {
            got.too_large += 1;
            return;
        }
        Err(_) => {
            got.unreadable += 1;
            return;
        }
    };
    let Some(text) = content.text() else {
        got.other_kinds += 1;
        return;
    };
    if !cx.budget.scan(text.len() as u64) {
        got.unscanned += 1;
        return;
    }
    got.files.extend(outline::of_text(shown, text));
}

/// The cuts of a walk: entries past its limit, entries the sandbox refused or could not read.
fn walk_notes(cx: &ToolContext<'_>, walk: &Walk, got: &mut Collected) {
    if walk.truncated {
        let limit = cx.sandbox.limits().max_walk_entries;
        let n = walk.omitted;
        let counted =
            if walk.omitted_exact(limit) { format!("{n}") } else { format!("at least {n}") };
        got.notes.push(format!("[... {counted} more entries omitted ...]"));
        got.warnings.push((
            Code::Limit,
            format!(
                "a walk stopped at its limit of {limit} entries; {counted} later entries are left out (--max-files 0 lifts it)"
            ),
        ));
    }
    let unread = walk
        .skipped
        .iter()
        .filter(|s| matches!(s.reason, SkipReason::Permission | SkipReason::Io))
        .count();
    if !walk.skipped.is_empty() {
        let n = walk.skipped.len();
        let entries = if n == 1 { "entry" } else { "entries" };
        let mut note = String::new();
        let _ = write!(note, "[... {n} {entries} skipped by the sandbox ...]");
        got.notes.push(note);
    }
    if unread > 0 {
        got.warnings.push((
            Code::Limit,
            format!("a walk could not read {unread} entries; what they hold is left out"),
        ));
    }
}
