//! `ctx complete PREFIX`: ranked fuzzy completions of a partly typed mention over the files
//! and directories of the sandbox, ignore and deny rules applied.

use std::cmp::Reverse;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use ctx::fs::{FileKind, Sandbox, WalkEntry};
use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use serde_json::json;

use crate::cli::CompleteArgs;
use crate::progress::Progress;
use crate::settings::Settings;

/// Most entries one completion walks per root.
const MAX_ENTRIES: usize = 5_000_000;

/// One candidate and its score.
struct Candidate {
    path: String,
    dir: bool,
    score: u32,
}

pub(crate) fn run(settings: &Settings, args: &CompleteArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("complete", false)?;
    let query = query(&args.prefix);
    let sandboxes = open(settings)?;
    let progress = Progress::start(
        settings.style.stderr_tty && !settings.quiet,
        "walking the workspace".into(),
    );
    let started = Instant::now();
    let candidates = rank(&sandboxes, &query, args.limit)?;
    drop(progress);
    tracing::info!(elapsed_ms = started.elapsed().as_secs_f64() * 1000.0, "completed");
    let mut out = BufWriter::new(io::stdout().lock());
    if json {
        let list: Vec<_> = candidates
            .iter()
            .map(|c| {
                json!({
                    "completion": mention(&c.path),
                    "path": c.path,
                    "kind": if c.dir { "directory" } else { "file" },
                    "score": c.score,
                })
            })
            .collect();
        serde_json::to_writer_pretty(
            &mut out,
            &json!({ "prefix": args.prefix, "completions": list }),
        )?;
        writeln!(out)?;
    } else {
        for c in &candidates {
            writeln!(out, "{}", mention(&c.path))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The sandboxes of a completion: one whose walks list a root's top level only, and one
/// whose walks go all the way down, with an entry limit large enough for big trees.
struct Sandboxes {
    top: Sandbox,
    full: Sandbox,
}

/// Opens the sandboxes of the settings.
fn open(settings: &Settings) -> anyhow::Result<Sandboxes> {
    let mut top = ctx::fs::Limits::default();
    top.max_walk_depth = 1;
    let mut full = ctx::fs::Limits::default();
    full.max_walk_entries = MAX_ENTRIES;
    Ok(Sandboxes { top: open_with(settings, top)?, full: open_with(settings, full)? })
}

/// Opens the roots of the settings with walk limits of their own.
#[allow(clippy::disallowed_methods)] // Opens the roots named on the command line.
fn open_with(settings: &Settings, limits: ctx::fs::Limits) -> anyhow::Result<Sandbox> {
    let (root, allow, deny) = settings.roots();
    let utf8 = |p: &std::path::Path| {
        p.to_str().map(str::to_owned).with_context(|| format!("path is not UTF-8: {}", p.display()))
    };
    let mut builder = Sandbox::builder(utf8(root)?).limits(limits);
    for dir in allow {
        builder = builder.allow(utf8(dir)?);
    }
    for glob in deny {
        builder = builder.deny(glob.clone());
    }
    builder.open(cap_std::ambient_authority()).context("cannot open a root")
}

/// What was typed, without its `@`, bracket or quotes.
fn query(prefix: &str) -> String {
    let rest = prefix.strip_prefix('@').unwrap_or(prefix);
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    match rest.strip_prefix('"') {
        Some(quoted) => {
            let quoted = quoted.strip_suffix('"').unwrap_or(quoted);
            quoted.replace("\\\"", "\"").replace("\\\\", "\\")
        }
        None => rest.replace("\\ ", " "),
    }
}

/// Scores paths against the query.
struct Scorer<'a> {
    atom: &'a Atom,
    lower: &'a str,
    matcher: Matcher,
    buf: Vec<char>,
}

impl<'a> Scorer<'a> {
    fn new(atom: &'a Atom, lower: &'a str) -> Scorer<'a> {
        Scorer {
            atom,
            lower,
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
            buf: Vec::new(),
        }
    }

    /// The candidate for a walk entry, shown below `shown`, if it matches.
    fn score(&mut self, shown: &str, entry: &WalkEntry) -> Option<Candidate> {
        let dir = entry.kind == FileKind::Dir;
        let mut path = format!("{shown}{}", entry.path);
        if dir {
            path.push('/');
        }
        let score = self.atom.score(Utf32Str::new(&path, &mut self.buf), &mut self.matcher)?;
        // A literal prefix is what the person most likely meant.
        let prefix = !self.lower.is_empty() && path.to_lowercase().starts_with(self.lower);
        let bonus = if prefix { 1000 } else { 0 };
        Some(Candidate { path, dir, score: u32::from(score) + bonus })
    }
}

/// Walks every root and keeps the `limit` best matches of `query`. The top level of a root
/// is listed first; its directories are then walked on as many threads as there are cores.
fn rank(sandboxes: &Sandboxes, query: &str, limit: usize) -> anyhow::Result<Vec<Candidate>> {
    let atom = Atom::new(query, CaseMatching::Smart, Normalization::Smart, AtomKind::Fuzzy, false);
    let lower = query.to_lowercase();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let mut scorer = Scorer::new(&atom, &lower);
    let mut found = Vec::new();
    let full = &sandboxes.full;
    let roots: Vec<_> = full.roots().collect();
    for root in roots {
        let shown = if root == ctx::fs::RootId::WORKSPACE {
            String::new()
        } else {
            format!("{}/", full.root_path(root).as_str().trim_end_matches('/'))
        };
        let location = if shown.is_empty() {
            full.workspace()
        } else {
            full.resolve(full.root_path(root).as_str(), None)?
        };
        let walked = Instant::now();
        let top = sandboxes.top.walk(&location)?;
        let dirs: Vec<&WalkEntry> =
            top.entries.iter().filter(|e| e.kind == FileKind::Dir).collect();
        // A directory reached through a link is walked under its target's name, so a tree
        // with one at the top is walked whole, as one walk names it.
        let linked = dirs.iter().any(|e| e.location.path() != e.path.as_path());
        if linked || threads == 1 {
            let walk = full.walk(&location)?;
            found.extend(walk.entries.iter().filter_map(|e| scorer.score(&shown, e)));
        } else {
            found.extend(top.entries.iter().filter_map(|e| scorer.score(&shown, e)));
            let (atom, lower, shown, dirs) = (&atom, &lower, &shown, &dirs);
            let parts = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        scope.spawn(move || -> ctx::fs::Result<Vec<Candidate>> {
                            let mut scorer = Scorer::new(atom, lower);
                            let mut out = Vec::new();
                            for dir in dirs.iter().skip(t).step_by(threads) {
                                let walk = full.walk(&dir.location)?;
                                out.extend(
                                    walk.entries.iter().filter_map(|e| scorer.score(shown, e)),
                                );
                            }
                            Ok(out)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
            });
            for part in parts {
                match part {
                    Ok(part) => found.extend(part?),
                    Err(_) => anyhow::bail!("a walking thread panicked"),
                }
            }
        }
        tracing::debug!(
            candidates = found.len(),
            walk_ms = walked.elapsed().as_secs_f64() * 1000.0,
            "walked and scored a root"
        );
    }
    let key = |c: &Candidate| {
        let path = c.path.trim_end_matches('/');
        (Reverse(c.score), path.matches('/').count(), path.len())
    };
    if found.len() > limit && limit > 0 {
        found.select_nth_unstable_by(limit - 1, |a, b| {
            key(a).cmp(&key(b)).then_with(|| a.path.cmp(&b.path))
        });
        found.truncate(limit);
    }
    found.sort_by(|a, b| key(a).cmp(&key(b)).then_with(|| a.path.cmp(&b.path)));
    if limit > 0 {
        found.truncate(limit);
    }
    Ok(found)
}

/// `@path`, or `@"path"` when the path has a space or a character that would end a bare
/// mention.
fn mention(path: &str) -> String {
    let special = |c: char| c.is_whitespace() || ",;!?()[]{}<>\"'`\\".contains(c);
    let ends_badly = path.trim_end_matches('/').ends_with(['.', ':']);
    if path.chars().any(special) || ends_badly {
        format!("@\"{}\"", path.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        format!("@{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_lose_their_decoration() {
        assert_eq!(query("@src/ag"), "src/ag");
        assert_eq!(query("@\"my f"), "my f");
        assert_eq!(query("@\"a \\\"b\\\"\""), "a \"b\"");
        assert_eq!(query("@[docs/x"), "docs/x");
        assert_eq!(query("my\\ f"), "my f");
    }

    #[test]
    fn mentions_are_quoted_when_needed() {
        assert_eq!(mention("src/agent.rs"), "@src/agent.rs");
        assert_eq!(mention("my file.md"), "@\"my file.md\"");
        assert_eq!(mention("docs/"), "@docs/");
        assert_eq!(mention("a\"b"), "@\"a\\\"b\"");
        assert_eq!(mention("dir./"), "@\"dir./\"");
    }
}
