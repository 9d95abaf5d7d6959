//! A view as text for people (`ctx rules --format text`): what loads, in order, why and how
//! much; what does not, and why; the problems; the notes.

use std::fmt::Write as _;

use crate::model::{Cut, NotLoaded, Piece, Placement, Reason, Rules, Why};

/// The view as JSON (`ctx rules --format json`, the MCP `rules` tool): the typed value, the
/// parts of the request it makes (`segments`), and its bytes and tokens.
pub fn to_json(rules: &Rules) -> serde_json::Value {
    let mut value = serde_json::to_value(rules).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "segments".to_owned(),
            serde_json::to_value(crate::render(rules)).unwrap_or_default(),
        );
        object.insert("bytes".to_owned(), rules.bytes().into());
        object.insert("tokens".to_owned(), rules.tokens().into());
    }
    value
}

/// The view as text for people.
pub fn report(rules: &Rules) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}: {}", rules.agent, rules.version);
    let cwd = if rules.cwd.is_empty() { "." } else { rules.cwd.as_str() };
    let _ = write!(out, "working folder: {cwd}");
    if let Some(file) = &rules.for_path {
        let _ = write!(out, "; for: {file}");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "loaded: {}, {}, {} (o200k)",
        counted(rules.pieces.len() as u64, "piece"),
        counted(rules.bytes(), "byte"),
        counted(rules.tokens(), "token"),
    );
    for (i, piece) in rules.pieces.iter().enumerate() {
        let _ = writeln!(out, "  {}. {}", i + 1, piece_line(piece));
        if let Some(cut) = &piece.cut {
            let _ = writeln!(out, "     {}", cut_line(cut));
        }
    }
    if !rules.not_loaded.is_empty() {
        out.push_str("not loaded:\n");
        for entry in &rules.not_loaded {
            let _ = writeln!(out, "  - {}", not_loaded_line(entry));
        }
    }
    if !rules.diagnostics.is_empty() {
        out.push_str("problems:\n");
        for d in &rules.diagnostics {
            let _ = write!(
                out,
                "  {}:{}:{}: {}[{}]: {}",
                d.file,
                d.line,
                d.column,
                d.severity.name(),
                d.code.as_str(),
                d.message
            );
            if let Some(hint) = &d.hint {
                let _ = write!(out, " (hint: {hint})");
            }
            out.push('\n');
        }
    }
    for note in &rules.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

fn piece_line(piece: &Piece) -> String {
    let name = piece.name.as_deref().map(|n| format!(" \"{n}\"")).unwrap_or_default();
    let inlined = if piece.inlined { ", inside the file importing it" } else { "" };
    format!(
        "{}:{}{name}: {}; {}; {}, {}{inlined}",
        if piece.path.is_empty() { "(generated)" } else { &piece.path },
        piece.line,
        why_text(&piece.why),
        placement_text(piece.placement),
        counted(piece.bytes, "byte"),
        counted(piece.tokens, "token"),
    )
}

/// `n` and its noun, `s` added but for one.
fn counted(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Why a piece loads, in words.
pub fn why_text(why: &Why) -> String {
    match why {
        Why::Always => "always".to_owned(),
        Why::Ancestor { dir } => format!("ancestor folder {dir}"),
        Why::Global => "the user's own, for every project".to_owned(),
        Why::Glob { key, glob, file } => format!("{key} glob `{glob}` matched {file}"),
        Why::Import { from, line, written } => format!("import `@{written}` of {from}:{line}"),
        Why::Lazy { dir } => format!("lazy: loaded when a file of {dir} is read"),
        Why::Listed => "listed (name or description); read when the model decides".to_owned(),
    }
}

fn placement_text(placement: Placement) -> &'static str {
    match placement {
        Placement::System => "system prompt",
        Placement::User => "first user message",
        Placement::Later => "later, when the file is read",
    }
}

fn cut_line(cut: &Cut) -> String {
    format!(
        "cut: {} of {} {} kept (cap {}{}); {} lost",
        cut.kept,
        cut.total,
        cut.unit.name(),
        cut.cap,
        if cut.shared { ", shared by the files before it" } else { "" },
        cut.total - cut.kept
    )
}

fn not_loaded_line(entry: &NotLoaded) -> String {
    let head = match (&entry.from, entry.line) {
        (Some(from), Some(line)) => format!("`@{}` ({from}:{line})", entry.path),
        _ => entry.path.clone(),
    };
    format!("{head}: {}", reason_text(&entry.reason))
}

/// Why something is not loaded, in words.
pub fn reason_text(reason: &Reason) -> String {
    match reason {
        Reason::GlobNotMatched { key, globs, file: Some(file) } => {
            format!("{key} {} did not match {file}", globs.join(", "))
        }
        Reason::GlobNotMatched { key, globs, file: None } => {
            format!("{key} {}: loaded only for a matching file (give --for)", globs.join(", "))
        }
        Reason::FrontMatter { message } => format!("front matter unusable ({message}); dropped"),
        Reason::Manual => "only when the user mentions it".to_owned(),
        Reason::ImportDepth { limit } => format!("past the import depth ({limit})"),
        Reason::ImportInCode { what } => format!("inside {what}: not an import"),
        Reason::ImportOutside { agent_reads: true } => {
            "outside the project: the agent would read it; ctx did not".to_owned()
        }
        Reason::ImportOutside { agent_reads: false } => {
            "outside the project: the agent refuses it".to_owned()
        }
        Reason::ImportNotApproved => {
            "outside the working folder: skipped until the user approves external imports"
                .to_owned()
        }
        Reason::ImportMissing => "no such file".to_owned(),
        Reason::ImportNotText => "not a text file the agent imports".to_owned(),
        Reason::AlreadyLoaded => "already loaded (a cycle or a repeat)".to_owned(),
        Reason::CapSpent { cap, unit } => {
            format!("the files before it spent the shared cap of {cap} {}", unit.name())
        }
        Reason::TooLarge { cap } => format!("larger than the {cap} bytes the agent reads"),
        Reason::WrongFolder { dir } => format!("in {dir}, a folder the agent does not read here"),
        Reason::Lazy { dir } => format!("lazy: loaded when a file of {dir} is read (give --for)"),
        Reason::Shadowed { by } => format!("{by} takes its place"),
        Reason::Empty => "empty".to_owned(),
        Reason::NotThisAgent => "not a file this agent reads".to_owned(),
        Reason::Unreadable { code, message } => format!("not read by ctx ({code}: {message})"),
    }
}
