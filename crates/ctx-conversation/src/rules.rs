//! Rules folders: where the rules are, which are active, and `ctx init`.

use ctx_fs::{FileKind, Sandbox, Store, WalkOptions};

use crate::Error;

/// The rules folders looked for, in order, when none is configured.
pub const RULE_DIRS: [&str; 2] = [".ctx/rules", ".mutsumi/rules"];

/// One rule: a Markdown file of the rules folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Its file name (`default.md`), the key of the rule in reports.
    pub key: String,
    /// Its path relative to the workspace root.
    pub path: String,
}

/// The rules folder: `configured` when given, else the first of [`RULE_DIRS`] that exists.
pub fn rules_dir(sandbox: &Sandbox, configured: Option<&str>) -> Option<String> {
    if let Some(dir) = configured {
        return Some(dir.trim_end_matches('/').to_owned());
    }
    RULE_DIRS.iter().find(|dir| is_dir(sandbox, dir)).map(|dir| (*dir).to_owned())
}

fn is_dir(sandbox: &Sandbox, dir: &str) -> bool {
    sandbox
        .resolve_in_workspace(dir)
        .and_then(|l| sandbox.stat(&l))
        .is_ok_and(|s| s.kind == FileKind::Dir)
}

/// The active rules of `dir`: the `.md` files named in `names` (with or without `.md`), in
/// that order, or every `.md` file sorted by name when `names` is empty. A name that is not
/// a rule is an error listing the rules there are.
pub fn active_rules(sandbox: &Sandbox, dir: &str, names: &[String]) -> Result<Vec<Rule>, Error> {
    let location = sandbox.resolve_in_workspace(dir).map_err(Error::fs)?;
    let options = WalkOptions::of(sandbox).max_depth(1).names_only();
    let walk = sandbox.walk_with(&location, options).map_err(Error::fs)?;
    let mut all: Vec<Rule> = walk
        .files()
        .filter(|e| e.path.extension().is_some_and(|x| x.eq_ignore_ascii_case("md")))
        .map(|e| Rule {
            key: e.path.file_name().unwrap_or_default().to_owned(),
            path: e.path.to_string(),
        })
        .collect();
    all.sort_by(|a, b| a.key.cmp(&b.key));
    if names.is_empty() {
        return Ok(all);
    }
    names
        .iter()
        .map(|name| {
            let wanted = if name.ends_with(".md") { name.clone() } else { format!("{name}.md") };
            all.iter().find(|r| r.key == wanted).cloned().ok_or_else(|| {
                let known: Vec<&str> = all.iter().map(|r| r.key.as_str()).collect();
                Error::usage(format!(
                    "no rule `{name}` in {dir} (the rules are: {})",
                    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                ))
            })
        })
        .collect()
}

/// What `ctx init` did: the files it created and those it found and kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InitReport {
    /// Created, relative to the root.
    pub created: Vec<String>,
    /// There already, left as they were.
    pub kept: Vec<String>,
}

/// Creates `.ctx/rules/default.md` and `ctx.toml` in the workspace `root` where missing; an
/// existing file is never overwritten (each is created exclusively).
pub fn init(root: &Store) -> Result<InitReport, Error> {
    let mut report = InitReport::default();
    let dot = root.sub(".ctx").map_err(Error::fs)?;
    let rules = dot.sub("rules").map_err(Error::fs)?;
    let mut files = vec![(&rules, "default.md", ".ctx/rules/default.md", DEFAULT_RULE)];
    // A `ctx.toml` would take the place of a `.ctx/config.toml` already there: it is kept.
    let config_there = dot.read("config.toml").map_err(Error::fs)?.is_some();
    if !config_there {
        files.push((root, "ctx.toml", "ctx.toml", DEFAULT_CONFIG));
    }
    for (store, name, shown, text) in files {
        if store.create_new(name, text.as_bytes()).map_err(Error::fs)? {
            report.created.push(shown.to_owned());
        } else {
            report.kept.push(shown.to_owned());
        }
    }
    if config_there {
        report.kept.push(".ctx/config.toml".to_owned());
    }
    Ok(report)
}

/// The rule `ctx init` writes: front matter, a conditional and a tool call. Everything in it
/// that speaks to people is a comment of its front matter, which never reaches the model (the
/// front matter is metadata, not text); nothing of it reads `ctx.toml`, whose comments are for
/// people too.
pub const DEFAULT_RULE: &str = r#"---
# Notes for people: this front matter, its comments included, never reaches the model.
# Every .md file of this folder is a rule; `ctx system-prompt` assembles them all, in the
# order of their names, into one system prompt (`active_rules` in ctx.toml picks some).
# A rule can include a file, or some of its lines, by its path from the rule:
#   @[../../docs/style.md]      @[../../src/lib.rs:10:40]      @[../../README.md#usage]
# and keep a part for `ctx system-prompt -D DEBUG` between @{ifdef DEBUG} and @{endif}.
Description: Project rules for coding agents, assembled by `ctx system-prompt`.
Params:
  - project
---
# Project rules

Answer in the language of the question. Keep changes small and explain why.
@{ifdef DEBUG}

## Debugging

Show the commands you ran and what they printed.
@{endif}

## Layout

The top of the workspace:

@[tree{"uri": "../..", "depth": 1}]
"#;

/// The configuration `ctx init` writes: every key commented out, with its default.
pub const DEFAULT_CONFIG: &str = r#"# ctx configuration (docs/cli.md lists every key).
# Rules live in .ctx/rules/; `ctx system-prompt` assembles them.

# rules_dir = ".ctx/rules"       # default: the first of .ctx/rules, .mutsumi/rules
# active_rules = ["default"]     # default: every .md file of the rules folder
# max_tokens = 32000             # token budget of included content
# allow = ["../shared"]          # extra read-only roots
# history_tokens = 2000          # token budget of the history block of `ctx messages`
# max_image_bytes = 20971520     # largest image attached to a prompt

[defines]
# DEBUG = "1"
"#;
