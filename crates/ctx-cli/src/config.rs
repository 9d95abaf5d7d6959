//! The configuration file: `ctx.toml`, else `.ctx/config.toml`, in the root, or `--config`;
//! the user's own `config.toml` under it; and the configuration types the settings keep of
//! them ([`AutoContext`], [`ConversationConfig`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde::Deserialize;

use crate::cli::ColorChoice;

/// Every key of the configuration file; all are optional and named as the long options.
#[derive(Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// Extra read-only roots, relative to the directory of the configuration file.
    pub(crate) allow: Option<Vec<PathBuf>>,
    /// Deny globs on top of the built-in deny list.
    pub(crate) deny: Option<Vec<String>>,
    /// Predefined macros.
    pub(crate) defines: Option<BTreeMap<String, String>>,
    /// Output format of `assemble` and `expand`.
    pub(crate) format: Option<String>,
    /// Output mode of `assemble` and `expand`.
    pub(crate) mode: Option<String>,
    /// Include syntaxes read besides ctx's: `ctx`, `mdbook` or `auto`.
    pub(crate) dialect: Option<String>,
    /// What a failed item leaves in inline output: `marker`, `keep` or `drop`.
    pub(crate) on_error: Option<String>,
    /// Solution or project of an out-of-source build, relative to the configuration file.
    pub(crate) sln: Option<PathBuf>,
    /// `compile_commands.json` of an out-of-source build, relative to the configuration file.
    pub(crate) compile_commands: Option<PathBuf>,
    /// Do not look for a solution or compilation database.
    pub(crate) no_sources: Option<bool>,
    /// Most files of a source index.
    pub(crate) sources_max_files: Option<usize>,
    /// Stop at the first error.
    pub(crate) strict: Option<bool>,
    /// Token budget.
    pub(crate) max_tokens: Option<usize>,
    /// The tokenizer counts and budgets are in (`o200k`, `anthropic-estimate`).
    pub(crate) tokenizer: Option<String>,
    /// Largest file read.
    pub(crate) max_file_bytes: Option<u64>,
    /// Lines of a file taken without a range.
    pub(crate) max_lines: Option<usize>,
    /// Files a directory or glob expands to.
    pub(crate) max_files: Option<usize>,
    /// Deepest include nesting.
    pub(crate) max_depth: Option<usize>,
    /// Bytes of output.
    pub(crate) max_output_bytes: Option<u64>,
    /// Includes of the whole run.
    pub(crate) max_includes: Option<usize>,
    /// Bytes the tools of a run may read and search.
    pub(crate) max_scan_bytes: Option<u64>,
    /// Count tokens.
    pub(crate) tokens: Option<bool>,
    /// Number included lines.
    pub(crate) line_numbers: Option<bool>,
    /// Recognise references inside code too.
    pub(crate) no_code_skip: Option<bool>,
    /// Switch mentions off.
    pub(crate) no_mentions: Option<bool>,
    /// Switch includes off.
    pub(crate) no_includes: Option<bool>,
    /// Switch directives off.
    pub(crate) no_directives: Option<bool>,
    /// Extensions of the files assembled recursively.
    pub(crate) recursive_extensions: Option<Vec<String>>,
    /// When to use colour.
    pub(crate) color: Option<ColorChoice>,
    /// No warnings.
    pub(crate) quiet: Option<bool>,
    /// `ctx expand` appends suggested files, as `--auto` does.
    pub(crate) autocontext: Option<bool>,
    /// Most files `--auto` appends (default 5).
    pub(crate) autocontext_max_files: Option<usize>,
    /// Token budget of what `--auto` appends (default 2000).
    pub(crate) autocontext_max_tokens: Option<usize>,
    /// Where the suggestion index takes its symbols from: `scan` (default) or `tree-sitter`.
    pub(crate) suggest_symbols: Option<crate::cli::Symbols>,
    /// The suggestion index reads and searches data files, lock files, minified and
    /// generated code too (off by default).
    pub(crate) suggest_data_files: Option<bool>,
    /// The rules folder, relative to the root.
    pub(crate) rules_dir: Option<String>,
    /// The active rules, by file name.
    pub(crate) active_rules: Option<Vec<String>>,
    /// Token budget of the history block of `ctx messages`.
    pub(crate) history_tokens: Option<usize>,
    /// Largest image attached to a prompt, in bytes.
    pub(crate) max_image_bytes: Option<u64>,
}

/// What `ctx expand` appends from suggestions: configuration keys `autocontext`,
/// `autocontext_max_files` and `autocontext_max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AutoContext {
    /// Append suggestions even without `--auto`.
    pub(crate) enabled: bool,
    /// Most files appended.
    pub(crate) max_files: usize,
    /// Estimated tokens of everything appended.
    pub(crate) max_tokens: usize,
}

impl AutoContext {
    pub(crate) fn from_config(config: &Config) -> AutoContext {
        AutoContext {
            enabled: config.autocontext.unwrap_or(false),
            max_files: config.autocontext_max_files.unwrap_or(5),
            max_tokens: config.autocontext_max_tokens.unwrap_or(2000),
        }
    }
}

/// The keys of the configuration file for conversations.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConversationConfig {
    /// The rules folder, relative to the root.
    pub(crate) rules_dir: Option<String>,
    /// The active rules, by file name.
    pub(crate) active_rules: Vec<String>,
    /// Token budget of the history block of `ctx messages`.
    pub(crate) history_tokens: Option<usize>,
    /// Largest image attached to a prompt, in bytes.
    pub(crate) max_image_bytes: Option<u64>,
}

impl ConversationConfig {
    pub(crate) fn from_config(config: &Config) -> ConversationConfig {
        ConversationConfig {
            rules_dir: config.rules_dir.clone(),
            active_rules: config.active_rules.clone().unwrap_or_default(),
            history_tokens: config.history_tokens,
            max_image_bytes: config.max_image_bytes,
        }
    }
}

/// Who wrote a configuration: the workspace's own (found in the root: a cloned repository's),
/// or the user's (named with `--config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Origin {
    /// `ctx.toml` or `.ctx/config.toml` found in the workspace: it may ask for roots, which
    /// the user trusts or not, and lower bounds, never raise them.
    #[default]
    Workspace,
    /// Named by the user: as trusted as the command line.
    User,
}

/// A setting of the configuration that is not used, with where it is (`W_CONFIG`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ignored {
    /// `path:line:col`.
    pub(crate) at: String,
    pub(crate) message: String,
}

/// A configuration and the directory its relative paths start from.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) config: Config,
    /// The directory of the file (relative paths in it start here).
    pub(crate) dir: PathBuf,
    /// The file read, if any, as shown to the user.
    pub(crate) path: Option<String>,
    pub(crate) origin: Origin,
    /// Settings of a workspace's configuration that were ignored.
    pub(crate) ignored: Vec<Ignored>,
}

/// The names of a workspace's own configuration, in the order they are looked for.
const WORKSPACE_CONFIGS: [&str; 2] = ["ctx.toml", ".ctx/config.toml"];

/// The user's own configuration, `config.toml` in the folder of the user's settings (that of
/// the trust file, `CTX_CONFIG_DIR` or `~/.config/ctx`), when there is one: as trusted as the
/// command line, under the workspace's configuration (or the one named with `--config`).
/// One that lies in the workspace is the workspace's, not the user's: it is ignored, with a
/// warning.
pub(crate) fn load_user(root: &Path, dir: Option<&Path>) -> anyhow::Result<Option<Loaded>> {
    let Some(dir) = dir else { return Ok(None) };
    let path = dir.join(USER_CONFIG);
    let read = match ctx::read_user_config(&path) {
        Ok(read) => read,
        Err(e) if absent(&e) => return Ok(None),
        Err(e) => bail!("cannot read the configuration file {}: {e}", path.display()),
    };
    let shown = path.display().to_string();
    let inside = |p: &Path| {
        let (Ok(p), Ok(root)) = (std::path::absolute(p), std::path::absolute(root)) else {
            return false;
        };
        p.starts_with(&root)
    };
    if inside(&path) || ctx::lies_in(&path, root) {
        let ignored = Ignored {
            at: format!("{shown}:1:1"),
            message: "ignored: the user's configuration lies in the workspace, which cannot \
                      configure itself as the user; keep it elsewhere (CTX_CONFIG_DIR)"
                .to_owned(),
        };
        return Ok(Some(Loaded {
            dir: dir.to_path_buf(),
            ignored: vec![ignored],
            ..Default::default()
        }));
    }
    let mut config =
        parse(&read.text).map_err(|e| anyhow::anyhow!("bad configuration {shown}:{e}"))?;
    let ignored = unbuilt(&mut config, &read.text, &shown);
    // Its paths are its own folder's, wherever it lies under another.
    config.sln = config.sln.map(|p| dir.join(p));
    config.compile_commands = config.compile_commands.map(|p| dir.join(p));
    Ok(Some(Loaded {
        config,
        dir: dir.to_path_buf(),
        path: Some(shown),
        origin: Origin::User,
        ignored,
    }))
}

/// The line and column at the end of `path:line:col`, for ordering warnings.
fn place_of(at: &str) -> (usize, usize) {
    let mut parts = at.rsplitn(3, ':');
    let col = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    (line, col)
}

/// Whether the user's configuration could not be read only because there is none: no file,
/// or no folder of the user's settings at all.
fn absent(err: &ctx::Error) -> bool {
    match err.kind() {
        ctx::ErrorKind::Config(_) => true,
        ctx::ErrorKind::Fs(fs) => {
            fs.io_error().is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound)
        }
        _ => false,
    }
}

/// What of the user's own configuration stays the user's once it lies under another: its roots
/// and deny globs (absolute or `~`), and its solution (absolute).
#[derive(Debug, Default)]
pub(crate) struct UserLayer {
    pub(crate) allow: Vec<PathBuf>,
    pub(crate) deny: Vec<String>,
    pub(crate) solution: Option<PathBuf>,
}

impl UserLayer {
    pub(crate) fn of(loaded: &Loaded) -> UserLayer {
        let home = |dir: &PathBuf| dir.to_str().is_some_and(|d| d == "~" || d.starts_with("~/"));
        let config = &loaded.config;
        let allow = config.allow.iter().flatten();
        UserLayer {
            allow: allow.map(|d| if home(d) { d.clone() } else { loaded.dir.join(d) }).collect(),
            deny: config.deny.clone().unwrap_or_default(),
            solution: config.sln.clone().or_else(|| config.compile_commands.clone()),
        }
    }
}

/// The name of the user's own configuration in the folder of the user's settings.
pub(crate) const USER_CONFIG: &str = "config.toml";

/// `top` over `base`: each key `top` sets wins; `defines` are merged name by name. Lists of
/// roots and globs are `top`'s alone (whose they are matters: the caller keeps them apart).
pub(crate) fn under(mut top: Config, base: &Config) -> Config {
    let (allow, deny) = (top.allow.take(), top.deny.take());
    let merged = match (serde_json::to_value(base), serde_json::to_value(&top)) {
        (Ok(serde_json::Value::Object(mut merged)), Ok(serde_json::Value::Object(over))) => {
            for (key, value) in over.into_iter().filter(|(_, v)| !v.is_null()) {
                match (merged.get_mut(&key), value) {
                    (Some(serde_json::Value::Object(inner)), serde_json::Value::Object(more)) => {
                        inner.extend(more);
                    }
                    (_, value) => {
                        merged.insert(key, value);
                    }
                }
            }
            merged.remove("allow");
            merged.remove("deny");
            serde_json::from_value(serde_json::Value::Object(merged)).ok()
        }
        _ => None,
    };
    let mut config = merged.unwrap_or(top);
    config.allow = allow;
    config.deny = deny;
    config
}

/// Loads `explicit`, or the default file of `root` if there is one. Both are read like any
/// other file, through a sandbox (docs/security.md).
pub(crate) fn load(root: &Path, explicit: Option<&Path>) -> anyhow::Result<Loaded> {
    let (read, origin, dir) = match explicit {
        Some(path) => {
            let read = ctx::read_user_config(path).map_err(|e| {
                anyhow::anyhow!("cannot read the configuration file {}: {e}", path.display())
            })?;
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            (read, Origin::User, dir)
        }
        None => match ctx::read_workspace_config(root, &WORKSPACE_CONFIGS) {
            Ok(Some(read)) => {
                let dir = root.join(&read.path).parent().map(Path::to_path_buf).unwrap_or_default();
                (read, Origin::Workspace, dir)
            }
            Ok(None) => return Ok(Loaded { dir: root.to_path_buf(), ..Loaded::default() }),
            Err(e) => bail!("cannot read the configuration of {}: {e}", root.display()),
        },
    };
    let shown = match origin {
        Origin::Workspace => root.join(&read.path).display().to_string(),
        Origin::User => read.path.clone(),
    };
    let mut config =
        parse(&read.text).map_err(|e| anyhow::anyhow!("bad configuration {shown}:{e}"))?;
    // Warnings name a workspace's file relative to its root, as diagnostics do.
    let named = match origin {
        Origin::Workspace => read.path.clone(),
        Origin::User => shown.clone(),
    };
    let mut ignored = match origin {
        Origin::Workspace => no_raised_bounds(&mut config, &read.text, &named),
        Origin::User => Vec::new(),
    };
    ignored.extend(unbuilt(&mut config, &read.text, &named));
    // In the file's order, whatever order the checks ran in.
    ignored.sort_by_key(|i| place_of(&i.at));
    tracing::info!(path = %shown, "configuration loaded");
    let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
    Ok(Loaded { config, dir, path: Some(shown), origin, ignored })
}

/// Removes from a configuration what this build of ctx cannot do, each reported with its place:
/// `suggest_symbols = "tree-sitter"` without the cargo feature `tree-sitter` (the index then
/// takes its symbols from the scanner). A configuration may be shared by builds with and
/// without it, so this is a warning, where `--symbols tree-sitter` is an error.
fn unbuilt(config: &mut Config, text: &str, shown: &str) -> Vec<Ignored> {
    let Some(symbols) = config.suggest_symbols else { return Vec::new() };
    if ctx::SymbolSource::from(symbols).is_available() {
        return Vec::new();
    }
    config.suggest_symbols = None;
    let (line, col) = key_position(text, "suggest_symbols").unwrap_or((1, 1));
    vec![Ignored {
        at: format!("{shown}:{line}:{col}"),
        message: "`suggest_symbols = \"tree-sitter\"` ignored: this ctx was built without \
                  tree-sitter (cargo feature `tree-sitter`); the index takes its symbols from \
                  the scanner"
            .to_owned(),
    }]
}

/// Removes from a workspace's configuration the bounds it lifts (`0`, which means none) or
/// raises above their defaults: a repository's configuration comes with its documents, and
/// may tighten what a run spends on them but never loosen it (docs/security.md). Each one is
/// reported, with its place.
fn no_raised_bounds(config: &mut Config, text: &str, shown: &str) -> Vec<Ignored> {
    let lim = ctx::Limits::default();
    let sources = ctx::sources::DEFAULT_MAX_FILES as u64;
    let mut ignored = Vec::new();
    let mut bound = |key: &str, value: Option<u64>, default: u64, zero_lifts: bool| -> bool {
        let Some(v) = value else { return false };
        let raised = (v == 0 && zero_lifts) || v > default;
        if raised {
            let (line, col) = key_position(text, key).unwrap_or((1, 1));
            ignored.push(Ignored {
                at: format!("{shown}:{line}:{col}"),
                message: format!(
                    "`{key} = {v}` ignored: a configuration found in the workspace may lower \
                     this bound (default {default}) but not lift or raise it; give it on the \
                     command line, or in a configuration of your own (--config)"
                ),
            });
        }
        raised
    };
    let n = |v: Option<usize>| v.map(|v| v as u64);
    // `max_tokens` is bounded by the default guard: a workspace may lower it, not lift it.
    if bound("max_tokens", n(config.max_tokens), ctx::DEFAULT_MAX_TOKENS as u64, true) {
        config.max_tokens = None;
    }
    if bound("max_includes", n(config.max_includes), lim.max_includes as u64, true) {
        config.max_includes = None;
    }
    if bound("max_output_bytes", config.max_output_bytes, lim.max_output_bytes, true) {
        config.max_output_bytes = None;
    }
    if bound("max_depth", n(config.max_depth), lim.max_depth as u64, true) {
        config.max_depth = None;
    }
    if bound("max_scan_bytes", config.max_scan_bytes, lim.max_scan_bytes, true) {
        config.max_scan_bytes = None;
    }
    if bound("max_lines", n(config.max_lines), lim.max_lines as u64, true) {
        config.max_lines = None;
    }
    if bound("max_files", n(config.max_files), lim.max_files as u64, true) {
        config.max_files = None;
    }
    if bound("max_file_bytes", config.max_file_bytes, 1 << 20, true) {
        config.max_file_bytes = None;
    }
    if bound("max_image_bytes", config.max_image_bytes, 20 << 20, true) {
        config.max_image_bytes = None;
    }
    if bound("sources_max_files", n(config.sources_max_files), sources, true) {
        config.sources_max_files = None;
    }
    if bound("history_tokens", n(config.history_tokens), 2000, false) {
        config.history_tokens = None;
    }
    if bound("autocontext_max_files", n(config.autocontext_max_files), 5, false) {
        config.autocontext_max_files = None;
    }
    if bound("autocontext_max_tokens", n(config.autocontext_max_tokens), 2000, false) {
        config.autocontext_max_tokens = None;
    }
    ignored
}

/// The 1-based line and column (in characters) of the top-level `key` of a TOML text.
pub(crate) fn key_position(text: &str, key: &str) -> Option<(usize, usize)> {
    let table = toml::de::DeTable::parse(text).ok()?;
    let (k, _) = table.get_ref().iter().find(|(k, _)| k.get_ref().as_ref() == key)?;
    Some(line_col(text, k.span().start))
}

fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let at = (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (1 + before.matches('\n').count(), 1 + before[line_start..].chars().count())
}

/// Every key of [`Config`], for "did you mean" (a test checks it against the struct).
const KEYS: &[&str] = &[
    "allow",
    "deny",
    "defines",
    "format",
    "mode",
    "dialect",
    "on_error",
    "sln",
    "compile_commands",
    "no_sources",
    "sources_max_files",
    "strict",
    "max_tokens",
    "tokenizer",
    "max_file_bytes",
    "max_lines",
    "max_files",
    "max_depth",
    "max_output_bytes",
    "max_includes",
    "max_scan_bytes",
    "tokens",
    "line_numbers",
    "no_code_skip",
    "no_mentions",
    "no_includes",
    "no_directives",
    "recursive_extensions",
    "color",
    "quiet",
    "autocontext",
    "autocontext_max_files",
    "autocontext_max_tokens",
    "suggest_symbols",
    "suggest_data_files",
    "rules_dir",
    "active_rules",
    "history_tokens",
    "max_image_bytes",
];

/// Parses a configuration. The error (after the file name: `:line:col: …`) names the key
/// where it is one of ctx's and says what was expected, and never quotes the file: a
/// "configuration" that is really another file (a link to credentials) must not be printed
/// back through an error message.
pub(crate) fn parse(text: &str) -> Result<Config, String> {
    let err = match toml::de::DeTable::parse(text) {
        Err(e) => e,
        Ok(_) => match toml::from_str::<Config>(text) {
            Ok(config) => return values_hold(&config, text).map(|()| config),
            Err(e) => e,
        },
    };
    let at = err.span().map_or(0, |s| s.start);
    let (line, col) = line_col(text, at);
    let key = err.span().and_then(|span| key_at(text, span));
    let what = describe(err.message());
    Err(match key {
        Some(key) => format!("{line}:{col}: key `{key}`: {what}"),
        None => format!("{line}:{col}: {what}"),
    })
}

/// The values that name one of a few choices, the deny globs and the names of `[defines]`,
/// checked as the settings use them: one that does not hold is an error at its place, naming
/// the key and what it expects, never the value (as for a wrong type).
fn values_hold(config: &Config, text: &str) -> Result<(), String> {
    type Check = fn(&str) -> bool;
    let choices: [(&str, Option<&String>, Check, &str); 5] = [
        (
            "format",
            config.format.as_ref(),
            |v| v.parse::<ctx::Format>().is_ok(),
            "inline, xml, markdown, json",
        ),
        ("mode", config.mode.as_ref(), |v| v.parse::<ctx::Mode>().is_ok(), "inline, append"),
        (
            "dialect",
            config.dialect.as_ref(),
            |v| matches!(v, "ctx" | "mdbook" | "auto"),
            "ctx, mdbook, auto",
        ),
        (
            "on_error",
            config.on_error.as_ref(),
            |v| v.parse::<ctx::OnError>().is_ok(),
            "marker, keep, drop",
        ),
        (
            "tokenizer",
            config.tokenizer.as_ref(),
            |v| ctx::tokens::Tokenizer::from_name(v).is_some(),
            "o200k, anthropic-estimate",
        ),
    ];
    for (key, value, holds, expected) in choices {
        if value.is_some_and(|v| !holds(v)) {
            let (line, col) = place(text, key, None);
            return Err(format!(
                "{line}:{col}: key `{key}`: unknown value, expected one of: {expected}"
            ));
        }
    }
    if config.deny.iter().flatten().any(|glob| !ctx::fs::deny_glob_parses(glob)) {
        let (line, col) = place(text, "deny", None);
        return Err(format!("{line}:{col}: key `deny`: a glob that does not parse"));
    }
    for name in config.defines.iter().flat_map(BTreeMap::keys) {
        if !ctx::preprocess::is_macro_name(name) {
            let (line, col) = place(text, "defines", Some(name));
            return Err(format!(
                "{line}:{col}: key `defines`: a name that is not a macro name (letters, digits \
                 and `_`, not starting with a digit)"
            ));
        }
    }
    Ok(())
}

/// The line and column of the value of `key` (or of its entry `inner`, a table's), 1:1 when it
/// cannot be found.
fn place(text: &str, key: &str, inner: Option<&str>) -> (usize, usize) {
    let Ok(table) = toml::de::DeTable::parse(text) else { return (1, 1) };
    for (k, v) in table.get_ref().iter() {
        if k.get_ref().as_ref() != key {
            continue;
        }
        let at = match (inner, v.get_ref()) {
            (Some(inner), toml::de::DeValue::Table(entries)) => entries
                .iter()
                .find(|(ik, _)| ik.get_ref().as_ref() == inner)
                .map_or(v.span().start, |(ik, _)| ik.span().start),
            _ => v.span().start,
        };
        return line_col(text, at);
    }
    (1, 1)
}

/// The known key whose name or value holds `span`, if any.
fn key_at(text: &str, span: std::ops::Range<usize>) -> Option<String> {
    let table = toml::de::DeTable::parse(text).ok()?;
    let mut found = None;
    let holds = |r: std::ops::Range<usize>| r.start <= span.start && span.end <= r.end;
    for (k, v) in table.get_ref().iter() {
        let name = k.get_ref().as_ref();
        if holds(k.span()) || holds(v.span()) {
            found = Some(name.to_owned());
        }
        if let toml::de::DeValue::Table(inner) = v.get_ref() {
            for (ik, iv) in inner.iter() {
                let inner = ik.get_ref().as_ref();
                if (holds(ik.span()) || holds(iv.span())) && ctx::preprocess::is_macro_name(inner) {
                    found = Some(format!("{name}.{inner}"));
                }
            }
        }
    }
    found.filter(|k| KEYS.contains(&k.split('.').next().unwrap_or_default()))
}

/// serde's and toml's message with nothing of the file in it: unknown keys and values are
/// not quoted (an unknown key is named only as the known one it is close to), types are
/// named by kind.
fn describe(message: &str) -> String {
    let message = message.trim_end();
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let unknown = rest.split('`').next().unwrap_or_default();
        let close = KEYS
            .iter()
            .map(|k| (strsim::damerau_levenshtein(k, unknown), *k))
            .filter(|(d, k)| *d <= 2.max(k.len() / 4))
            .min();
        // A key a typo away from a known one is named, as cli.md has it; any other is not,
        // since a "configuration" named with `--config` may be a file of secrets whose keys
        // are secrets too (an access key's id), and an agent may be led to name one.
        return match close {
            Some((_, k)) => {
                format!("unknown key `{}` (did you mean `{k}`?)", key_name(unknown))
            }
            None => "unknown key (the keys are listed in docs/cli.md)".to_owned(),
        };
    }
    for (prefix, what) in [("invalid type: ", "wrong type"), ("invalid value: ", "invalid value")] {
        if let Some(rest) = message.strip_prefix(prefix) {
            let found = rest.split_whitespace().next().unwrap_or("value").trim_end_matches(',');
            let expected = rest.rsplit_once(", expected ").map_or("", |(_, e)| e);
            // A number out of the type's range: negative, or too large.
            let found = match (found, rest.contains("`-")) {
                ("integer", true) => "a negative number".to_owned(),
                ("integer", false) if what == "invalid value" => "a number too large".to_owned(),
                (found, _) => article(found),
            };
            return format!("{what}: expected {}, found {found}", kind(expected));
        }
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let expected = rest.split_once(", expected ").map_or("", |(_, e)| e);
        return format!("unknown value, expected {expected}");
    }
    without_quotes(message)
}

/// An unknown key as a message names it: at most 40 characters, anything but letters, digits,
/// `_`, `-` and `.` shown as `?`.
fn key_name(key: &str) -> String {
    let mut named: String = key
        .chars()
        .take(40)
        .map(|c| if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '?' })
        .collect();
    if key.chars().count() > 40 {
        named.push('…');
    }
    named
}

/// serde's name of an expected type in words.
fn kind(expected: &str) -> String {
    match expected {
        "usize" | "u64" | "u32" | "u16" | "u8" | "i64" | "i32" => "a whole number".to_owned(),
        "a sequence" => "a list".to_owned(),
        "a map" => "a table".to_owned(),
        other => other.to_owned(),
    }
}

fn article(kind: &str) -> String {
    match kind {
        "integer" => "a whole number".to_owned(),
        "floating" => "a decimal number".to_owned(),
        "sequence" => "a list".to_owned(),
        "map" => "a table".to_owned(),
        other => format!("a {other}"),
    }
}

/// `message` with every quoted part longer than a punctuation token (`` `=` ``) removed.
fn without_quotes(message: &str) -> String {
    let mut out = String::new();
    for (i, part) in message.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        } else if part.chars().count() <= 3 && !part.chars().any(char::is_alphanumeric) {
            out.push('`');
            out.push_str(part);
            out.push('`');
        } else {
            out.push('…');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attack: a "configuration" whose values are something else (a secret linked or
    /// pasted in). What must not happen: the value printed back; each bad value is named by
    /// its key and place, with what the key expects.
    #[test]
    fn bad_values_are_placed_and_never_quoted() {
        for (text, want) in [
            ("format = \"s3cr3t\"\n", "1:10: key `format`: unknown value, expected one of:"),
            ("\nmode = \"s3cr3t\"\n", "2:8: key `mode`: unknown value"),
            ("dialect = \"s3cr3t\"\n", "1:11: key `dialect`: unknown value"),
            ("on_error = \"s3cr3t\"\n", "1:12: key `on_error`: unknown value"),
            ("tokenizer = \"s3cr3t\"\n", "1:13: key `tokenizer`: unknown value"),
            ("deny = [\"[s3cr3t\"]\n", "1:8: key `deny`: a glob that does not parse"),
            ("[defines]\n\"s3 cr3t\" = \"1\"\n", "2:1: key `defines`: a name that is not"),
            (
                "max_tokens = -5\n",
                "1:14: key `max_tokens`: invalid value: expected a whole number, found a negative number",
            ),
            (
                "max_tokens = 1.5\n",
                "1:14: key `max_tokens`: wrong type: expected a whole number, found a decimal number",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.starts_with(want), "{text:?}: {err}");
            assert!(!err.contains("s3cr3t") && !err.contains("cr3t"), "{text:?}: {err}");
        }
        let good = "format = \"xml\"\nmode = \"append\"\ndialect = \"auto\"\non_error = \"keep\"\n\
                    tokenizer = \"anthropic-estimate\"\ndeny = [\"*.secret\"]\n[defines]\nDEBUG = \"1\"\n";
        assert!(parse(good).is_ok(), "{:?}", parse(good).err());
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_key_and_line() {
        let err = parse("strict = true\nmax_tokes = 3\n").unwrap_err();
        assert_eq!(err, "2:1: unknown key `max_tokes` (did you mean `max_tokens`?)");
        let err = parse("\"max_tokens\\u001b\" = 1\n").unwrap_err();
        assert_eq!(err, "1:1: unknown key `max_tokens?` (did you mean `max_tokens`?)");
        let err = parse("AKIAIOSFODNN7EXAMPLE = 1\n").unwrap_err();
        assert_eq!(err, "1:1: unknown key (the keys are listed in docs/cli.md)");
        let err = parse("\n\nmax_tokens = \"many\"\n").unwrap_err();
        assert_eq!(
            err,
            "3:14: key `max_tokens`: wrong type: expected a whole number, found a string"
        );
        let err = parse("[defines]\nDEBUG = 1\n").unwrap_err();
        assert!(err.starts_with("2:9: key `defines.DEBUG`: wrong type"), "{err}");
        let ok = parse("allow = [\"../shared\"]\n[defines]\nDEBUG = \"1\"\n").unwrap();
        assert_eq!(ok.defines.unwrap()["DEBUG"], "1");
    }

    /// A file that is not a configuration (credentials linked in as `ctx.toml`) is never
    /// quoted back: only where parsing failed.
    #[test]
    fn errors_never_quote_the_file() {
        let docker =
            "{\n  \"auths\": {\n    \"registry\": { \"auth\": \"dXNlcjpzM2NyZXQ=\" }\n  }\n}\n";
        let netrc = "machine example.com login me password hunter2secret\n";
        let keys = "AKIAIOSFODNN7EXAMPLE = \"wJalrXUtnFEMIK7MDENG\"\n";
        let typed = "max_tokens = \"s3cr3t-token-value\"\n";
        let table = "[aws_secret_access_key]\nvalue = 1\n";
        for (text, secrets) in [
            (docker, &["auths", "dXNlcjpzM2NyZXQ", "registry"][..]),
            (netrc, &["hunter2secret", "example.com", "machine"]),
            (keys, &["AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMIK7MDENG"]),
            (typed, &["s3cr3t-token-value"]),
            (table, &["aws_secret_access_key"]),
        ] {
            let err = parse(text).unwrap_err();
            for secret in secrets {
                assert!(!err.contains(secret), "{err} quotes {secret}");
            }
            assert!(err.split(':').next().unwrap().parse::<u32>().is_ok(), "{err} names a line");
        }
    }

    #[test]
    fn the_keys_are_the_configs() {
        let text: String = KEYS.iter().map(|k| format!("{k} = 0\n")).collect();
        // Each key is known (a wrong type is the only complaint, never an unknown key).
        for line in text.lines() {
            let err = parse(line).err().unwrap_or_default();
            assert!(!err.contains("unknown key"), "{line}: {err}");
        }
    }
}
