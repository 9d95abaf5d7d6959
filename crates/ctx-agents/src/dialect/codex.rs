//! Codex CLI (0.171.0, observed): the global `AGENTS.override.md` or `AGENTS.md` of
//! `CODEX_HOME` (`~/.codex`), then one file per folder from the project root (the nearest
//! folder holding a `project_root_markers` entry, `.git` by default; without one, the working
//! folder alone) down to the working folder: the first of `AGENTS.override.md`, `AGENTS.md`
//! and the `project_doc_fallback_filenames` that exists, even empty (an empty override still
//! claims its folder). The project files share one budget of `project_doc_max_bytes` (32 KiB):
//! each is cut at the byte the budget ends (a character cut there is sent as U+FFFD), the
//! ones after it are dropped, without a word to the model. Those settings come from
//! `$CODEX_HOME/config.toml`, then from a trusted project's `.codex/config.toml` layers from
//! its root down (all but `project_root_markers`).
//!
//! Sent as one user message: `# AGENTS.md instructions for CWD` and the text in
//! `<INSTRUCTIONS>`; the global file first, then `--- project-doc ---`.

use ctx_diagnostics::Code;

use crate::agent::Agent;
use crate::env::{Env, join, shown_dir};
use crate::lint::{self, Diagnostic};
use crate::model::{Cut, Placement, Reason, Rules, Segment, Unit, Why};
use crate::read;
use crate::reader::{Reader, View};

/// Codex CLI's reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Codex;

/// `project_doc_max_bytes` when `config.toml` does not set it.
const DEFAULT_MAX_BYTES: u64 = 32 * 1024;

/// The settings of `CODEX_HOME/config.toml` that decide which files load.
struct Config {
    max_bytes: u64,
    fallbacks: Vec<String>,
    markers: Vec<String>,
}

impl Reader for Codex {
    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Codex);
        let mut config = config(env, &mut view);
        global(env, &mut view);
        let root = if config.markers.is_empty() { None } else { env.marked_root(&config.markers) };
        let chain: Vec<String> = match &root {
            Some(root) => env.cwd_chain().into_iter().filter(|d| d.len() >= root.len()).collect(),
            None => {
                if !config.markers.is_empty() {
                    view.note(format!(
                        "no {} from the working folder up to the workspace root: Codex reads the working folder only (above the workspace, outside ctx's roots, nothing was looked at)",
                        config.markers.join(" or ")
                    ));
                }
                vec![env.cwd.clone()]
            }
        };
        // The project's `.codex/config.toml` layers, from the project root down, each over
        // the one before (a trusted project's; `agents_md.rs` takes every key but the root
        // markers from them).
        let project = env.project_place();
        let mut layers = Vec::new();
        for dir in &chain {
            let rel = join(dir, ".codex/config.toml");
            if let Some(table) = layer(&project, &rel, &mut view) {
                apply(&table, &mut config, false);
                layers.push(rel);
            }
        }
        if !layers.is_empty() {
            view.note(format!(
                "Codex reads {} only in a project the user trusts; ctx shows what it reads once trusted",
                layers.join(", ")
            ));
        }
        if config.max_bytes == 0 {
            view.note("project_doc_max_bytes is 0: Codex reads no project file");
        }
        let mut names = vec!["AGENTS.override.md".to_owned(), "AGENTS.md".to_owned()];
        for name in &config.fallbacks {
            if !name.is_empty() && !names.contains(name) {
                names.push(name.clone());
            }
        }
        let mut remaining = config.max_bytes;
        for dir in &chain {
            project_file(env, &mut view, dir, &names, &config, &mut remaining);
        }
        // The other `AGENTS.md` files of the workspace: Codex reads none below the working
        // folder, nor beside it; nor the rule files of the chain of other names.
        crate::reader::others(env, &mut view, &chain, &names, false);
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let global = rules.pieces.iter().find(|p| p.why == Why::Global).map(|p| p.text.as_str());
        let docs: Vec<&str> =
            rules.pieces.iter().filter(|p| p.why != Why::Global).map(|p| p.text.as_str()).collect();
        let body = match (global, docs.is_empty()) {
            (None, true) => return Vec::new(),
            (Some(global), true) => global.to_owned(),
            (Some(global), false) => {
                format!("{global}\n\n--- project-doc ---\n\n{}", docs.join("\n\n"))
            }
            (None, false) => docs.join("\n\n"),
        };
        let heading = if docs.is_empty() {
            "# AGENTS.md instructions".to_owned()
        } else {
            format!("# AGENTS.md instructions for {}", rules.cwd_abs)
        };
        vec![Segment {
            placement: Placement::User,
            text: format!("{heading}\n\n<INSTRUCTIONS>\n{body}\n</INSTRUCTIONS>"),
        }]
    }
}

/// `project_doc_max_bytes`, `project_doc_fallback_filenames` and `project_root_markers` of
/// the user's `config.toml` (read through the sandbox of `CODEX_HOME`).
fn config(env: &Env<'_>, view: &mut View) -> Config {
    let mut config = Config {
        max_bytes: DEFAULT_MAX_BYTES,
        fallbacks: Vec::new(),
        markers: vec![".git".to_owned()],
    };
    let Some(home) = env.home_place(".codex") else { return config };
    if let Some(table) = layer(&home, "config.toml", view) {
        apply(&table, &mut config, true);
    }
    config
}

/// The table of the configuration file `rel` of `place`, when there is one that parses (one
/// that does not is noted: Codex's defaults, or the layers before it, are assumed).
fn layer(place: &crate::env::Place<'_>, rel: &str, view: &mut View) -> Option<toml::Table> {
    let Ok(Some(file)) = read::read(place, rel, &mut view.budget) else { return None };
    match file.text.parse() {
        Ok(table) => Some(table),
        Err(_) => {
            view.note(format!("{}: not valid TOML; it is passed over", place.shown(rel)));
            None
        }
    }
}

/// Takes the keys of a configuration layer that decide what Codex reads: the project layers
/// do not set `project_root_markers` (`markers` false), which decides where they are looked
/// for.
fn apply(table: &toml::Table, config: &mut Config, markers: bool) {
    if let Some(n) = table.get("project_doc_max_bytes").and_then(toml::Value::as_integer) {
        config.max_bytes = u64::try_from(n).unwrap_or(0);
    }
    let strings = |key: &str| -> Option<Vec<String>> {
        table
            .get(key)?
            .as_array()
            .map(|items| items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
    };
    if let Some(fallbacks) = strings("project_doc_fallback_filenames") {
        config.fallbacks = fallbacks;
    }
    if let Some(list) = strings("project_root_markers").filter(|_| markers) {
        config.markers = list;
    }
}

fn is_too_large(reason: &Reason) -> bool {
    matches!(reason, Reason::Unreadable { code, .. } if code == ctx_fs::Code::TooLarge.as_str())
}

/// The first `n` bytes of the file `rel` of `place` (at most what ctx's budget for a view
/// holds), as text: what Codex reads of a file larger than the size cap when `n` bytes of
/// its budget are left.
fn head_of(place: &crate::env::Place<'_>, rel: &str, n: u64) -> Option<(read::File, u64)> {
    let location = place.location(rel)?;
    let len = place.sandbox.stat(&location).ok()?.len;
    let n = usize::try_from(n.min(DEFAULT_MAX_BYTES.max(1 << 20))).ok()?;
    let bytes = place.sandbox.read_prefix(&location, n).ok()?;
    // Binary bytes are left out, as a whole read would leave them.
    if bytes.contains(&0) {
        return None;
    }
    let bom = bytes.starts_with(b"\xEF\xBB\xBF");
    let text = String::from_utf8_lossy(&bytes[if bom { 3 } else { 0 }..]).into_owned();
    Some((read::File { text, bom }, len))
}

/// The global file: `AGENTS.override.md` when it has text, else `AGENTS.md`, trimmed.
fn global(env: &Env<'_>, view: &mut View) {
    let Some(home) = env.home_place(".codex") else { return };
    let mut chosen: Option<String> = None;
    for name in ["AGENTS.override.md", "AGENTS.md"] {
        let shown = home.shown(name);
        if let Some(by) = &chosen {
            if home.location(name).is_some() {
                view.not_file(shown, Reason::Shadowed { by: by.clone() });
            }
            continue;
        }
        match read::read(&home, name, &mut view.budget) {
            Ok(Some(file)) if file.text.trim().is_empty() => view.not_file(shown, Reason::Empty),
            Ok(Some(file)) => {
                view.diags(lint::hidden(Agent::Codex, &shown, &file.text, 1));
                let text = file.text.trim().to_owned();
                view.piece(read::piece(&home, name, 1, Why::Global, Placement::User, text));
                chosen = Some(shown);
            }
            Ok(None) => {}
            Err(reason) => view.not_file(shown, reason),
        }
    }
}

/// The one file of the folder `dir`, within what is left of the shared budget.
fn project_file(
    env: &Env<'_>,
    view: &mut View,
    dir: &str,
    names: &[String],
    config: &Config,
    remaining: &mut u64,
) {
    let project = env.project_place();
    // A name the folder lists that ctx may not read (a link out of the workspace) is named.
    for name in names.iter().filter(|name| env.lists(dir, name)) {
        if let Some(reason) = project.refusal(&join(dir, name)) {
            view.not_file(join(dir, name), reason);
        }
    }
    let mut found = names.iter().filter(|name| {
        env.lists(dir, name) && project.kind(&join(dir, name)) == Some(ctx_fs::FileKind::File)
    });
    let Some(name) = found.next() else { return };
    let rel = join(dir, name);
    for other in found {
        view.not_file(join(dir, other), Reason::Shadowed { by: rel.clone() });
    }
    if config.max_bytes == 0 {
        view.not_file(rel, Reason::CapSpent { cap: 0, unit: Unit::Bytes });
        return;
    }
    // The file's length when only its head is read (a file over the size cap).
    let mut whole = None;
    let file = match read::read(&project, &rel, &mut view.budget) {
        Ok(Some(file)) => file,
        Ok(None) => return,
        // A file over the size cap still takes the budget: Codex reads its first bytes up to
        // what is left, and the files after it get nothing.
        Err(reason) if is_too_large(&reason) && *remaining > 0 => {
            match head_of(&project, &rel, *remaining) {
                Some((file, len)) => {
                    whole = Some(len);
                    file
                }
                None => return view.not_file(rel, reason),
            }
        }
        Err(reason) => return view.not_file(rel, reason),
    };
    let raw = file.raw();
    let total = whole.unwrap_or(raw.len() as u64);
    if *remaining == 0 {
        view.not_file(&rel, Reason::CapSpent { cap: config.max_bytes, unit: Unit::Bytes });
        view.diag(cap(&rel, config.max_bytes, total, 0));
        return;
    }
    let kept = total.min(*remaining).min(raw.len() as u64);
    let text = String::from_utf8_lossy(&raw[..kept as usize]).into_owned();
    if text.trim().is_empty() {
        view.not_file(rel, Reason::Empty);
        return;
    }
    *remaining -= kept;
    view.diags(lint::hidden(Agent::Codex, &rel, &file.text, 1));
    let why =
        if dir == env.cwd { Why::Always } else { Why::Ancestor { dir: shown_dir(dir).to_owned() } };
    let mut piece = read::piece(&project, &rel, 1, why, Placement::User, text);
    if kept < total {
        piece =
            piece.cut(Cut { unit: Unit::Bytes, kept, total, cap: config.max_bytes, shared: true });
        view.diag(cap(&rel, config.max_bytes, total, kept));
    }
    view.piece(piece);
}

fn cap(file: &str, max: u64, total: u64, kept: u64) -> Diagnostic {
    let message = if kept == 0 {
        format!(
            "the files before it spent Codex's shared budget of {max} bytes (project_doc_max_bytes): all {total} bytes of this file are lost, without a word to the model"
        )
    } else {
        format!(
            "Codex keeps the first {kept} of its {total} bytes (project_doc_max_bytes, {max} bytes shared from the project root down): {} bytes are lost, without a word to the model",
            total - kept
        )
    };
    Diagnostic::new(Code::RulesCap, Agent::Codex, file, (1, 1), message)
        .hint("shorten the AGENTS.md files, or raise project_doc_max_bytes in ~/.codex/config.toml")
}
