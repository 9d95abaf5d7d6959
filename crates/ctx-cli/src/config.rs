//! The configuration file: `ctx.toml`, else `.ctx/config.toml`, in the root, or `--config`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Deserialize;

use crate::cli::ColorChoice;

/// Every key of the configuration file; all are optional and named as the long options.
#[derive(Debug, Default, Deserialize)]
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
    /// The rules folder, relative to the root.
    pub(crate) rules_dir: Option<String>,
    /// The active rules, by file name.
    pub(crate) active_rules: Option<Vec<String>>,
    /// Token budget of the history block of `ctx messages`.
    pub(crate) history_tokens: Option<usize>,
    /// Largest image attached to a prompt, in bytes.
    pub(crate) max_image_bytes: Option<u64>,
}

/// A configuration and the directory its relative paths start from.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) config: Config,
    /// The directory of the file (relative paths in it start here).
    pub(crate) dir: PathBuf,
    /// The file read, if any.
    pub(crate) path: Option<PathBuf>,
}

/// Loads `explicit`, or the default file of `root` if there is one.
#[allow(clippy::disallowed_methods)] // The configuration file is read before any sandbox exists.
pub(crate) fn load(root: &Path, explicit: Option<&Path>) -> anyhow::Result<Loaded> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => {
            let candidates = [root.join("ctx.toml"), root.join(".ctx").join("config.toml")];
            match candidates.into_iter().find(|p| p.is_file()) {
                Some(path) => path,
                None => return Ok(Loaded { dir: root.to_path_buf(), ..Loaded::default() }),
            }
        }
    };
    let bytes = std::fs::read(&path)
        .with_context(|| format!("cannot read the configuration file {}", path.display()))?;
    let Ok(text) = String::from_utf8(bytes) else {
        bail!("bad configuration {}: not UTF-8 text", path.display());
    };
    let config =
        parse(&text).map_err(|e| anyhow::anyhow!("bad configuration {}: {e}", path.display()))?;
    tracing::info!(path = %path.display(), "configuration loaded");
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
    Ok(Loaded { config, dir, path: Some(path) })
}

/// Why a root that a configuration found in the workspace asks for is not trusted, if it is
/// not: a file system root, a system folder or anything in one, a folder holding the home
/// directory, a hidden folder of the home directory (tools' settings and tokens), a folder
/// the deny list covers (`~/.ssh`, a `.git`), or a `~` path that leads out of the home
/// directory (`~/..`). A cloned repository's `ctx.toml` must not widen the sandbox to the
/// machine or to the user's secrets (docs/security.md); roots given on the command line, or
/// by a configuration named with `--config`, are the user's.
#[allow(clippy::disallowed_methods)] // Interprets the configuration, before any sandbox exists.
pub(crate) fn untrusted_root(dir: &Path) -> Option<&'static str> {
    // Whole trees of the system; `/home` and `/root` only as themselves (projects live below).
    const SYSTEM_TREES: [&str; 12] = [
        "/bin", "/boot", "/dev", "/etc", "/lib", "/lib64", "/proc", "/run", "/sbin", "/sys",
        "/usr", "/var",
    ];
    const SYSTEM: [&str; 2] = ["/root", "/home"];
    let home = std::env::home_dir().and_then(|h| h.canonicalize().ok());
    let written = dir.to_str().unwrap_or_default();
    let dir = match written.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let home = home.as_ref()?;
            let lexical = lexically_normal(&home.join(rest.trim_start_matches('/')));
            if !lexical.starts_with(home) {
                return Some("outside the home directory");
            }
            lexical
        }
        _ => dir.to_path_buf(),
    };
    let real = dir.canonicalize().ok()?;
    if real.parent().is_none() {
        return Some("a file system root");
    }
    if SYSTEM_TREES.iter().any(|s| real.starts_with(s))
        || SYSTEM.iter().any(|s| real == Path::new(s))
    {
        return Some("a system folder");
    }
    if home.as_ref().is_some_and(|home| *home == real) {
        return Some("the home directory");
    }
    if home.as_ref().is_some_and(|home| home.starts_with(&real)) {
        return Some("a folder holding the home directory");
    }
    let names: Vec<&str> = real.iter().filter_map(|c| c.to_str()).collect();
    if ctx::fs::builtin_denial(&names).is_some() {
        return Some("a folder the deny list covers");
    }
    if let Some(home) = &home
        && let Ok(inside) = real.strip_prefix(home)
        && inside.iter().any(|c| c.to_str().is_some_and(|c| c.starts_with('.')))
    {
        return Some("a hidden folder of the home directory");
    }
    None
}

/// `path` with `.` and `..` applied to its text, without looking at the disk.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Parses a configuration; the error names the key and its line.
pub(crate) fn parse(text: &str) -> Result<Config, String> {
    toml::from_str::<Config>(text).map_err(|e| {
        let message = e.message().trim_end().to_owned();
        let Some(span) = e.span() else { return message };
        let start = span.start.min(text.len());
        let line = 1 + text[..start].matches('\n').count();
        let line_text = text[..start].rsplit('\n').next().unwrap_or("").to_owned()
            + text[start..].split('\n').next().unwrap_or("");
        match line_text.split_once('=') {
            Some((key, _)) if !key.trim().is_empty() => {
                format!("line {line}, key `{}`: {message}", key.trim())
            }
            _ => format!("line {line}: {message}"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_wrong_types_name_the_key_and_line() {
        let err = parse("strict = true\nmax_tokes = 3\n").unwrap_err();
        assert!(err.starts_with("line 2, key `max_tokes`: unknown field `max_tokes`"), "{err}");
        let err = parse("\n\nmax_tokens = \"many\"\n").unwrap_err();
        assert!(err.starts_with("line 3, key `max_tokens`:"), "{err}");
        let ok = parse("allow = [\"../shared\"]\n[defines]\nDEBUG = \"1\"\n").unwrap();
        assert_eq!(ok.defines.unwrap()["DEBUG"], "1");
    }
}
