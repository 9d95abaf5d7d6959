//! Tools called from documents as `@[name{json}]`: the [`Tool`] trait, the registry, and the
//! built-in `read_file`, `ls`, `tree`, `grep` and `glob`, all inside the sandbox.

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write;
use std::sync::Arc;

pub use crate::tool_budget::ToolBudget;
pub use crate::tool_error::ToolError;
use ctx_fs::{
    FileKind, Location, RootId, RootKind, Sandbox, SkipReason, Walk, WalkEntry, WalkOptions,
};
use ctx_syntax::{Code, LineEnd};
use serde_json::{Map, Value};

/// What a tool gets besides its arguments: the sandbox, the directory of the document that
/// calls it (from which relative paths resolve first), and the run's tool budget.
#[derive(Clone, Copy)]
pub struct ToolContext<'a> {
    /// The sandbox every read goes through.
    pub sandbox: &'a Sandbox,
    /// The directory of the calling document.
    pub base: &'a Location,
    /// What the tools of the run may still spend, shared walks, and the warnings of the call.
    pub budget: &'a ToolBudget,
}

impl fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext").field("base", self.base).finish_non_exhaustive()
    }
}

impl ToolContext<'_> {
    /// Resolves a path as the assembler does: from the calling document's directory, then
    /// from the workspace root.
    pub fn resolve(&self, written: &str) -> Result<Location, ToolError> {
        let resolved = match crate::resolve::not_a_path(written) {
            Some(failure) => Err(failure),
            None => crate::resolve::resolve_relative(self.sandbox, written, self.base),
        };
        resolved.map_err(|failure| match failure {
            crate::resolve::Failure::Fs(err) => ToolError::from_fs(&err),
            crate::resolve::Failure::Other(code, message) => ToolError { code, message },
        })
    }

    /// The path of a location as shown to the user: relative to the workspace, or prefixed
    /// with its root for the extra roots.
    pub fn display(&self, location: &Location) -> String {
        crate::resolve::display_path(self.sandbox, location)
    }

    /// The path of a walked entry as shown to the user: through a symbolic link, the link's
    /// own path, so a file and a link to it are two entries, each under its name.
    pub fn display_walked(&self, entry: &WalkEntry) -> String {
        crate::resolve::display_in(self.sandbox, entry.location.root(), entry.path.as_str())
    }
}

/// A tool that documents can call as `@[name{json}]`.
///
/// Tools run inside the sandbox: they read only through [`ToolContext::sandbox`].
pub trait Tool: Send + Sync {
    /// The name documents call it by.
    fn name(&self) -> &str;

    /// The keys of the JSON object of arguments the tool takes, for editors to complete
    /// (empty when the tool does not say).
    fn keys(&self) -> &[&str] {
        &[]
    }

    /// Runs the tool with the JSON object of arguments; the result replaces the call.
    fn call(&self, args: &Map<String, Value>, cx: &ToolContext<'_>) -> Result<String, ToolError>;
}

/// The tools an assembler knows, by name.
#[derive(Clone, Default)]
pub struct Tools {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl fmt::Debug for Tools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl Tools {
    /// No tools at all.
    pub fn none() -> Tools {
        Tools::default()
    }

    /// The built-in tools: `read_file`, `ls`, `tree`, `grep` and `glob`.
    pub fn builtin() -> Tools {
        let mut tools = Tools::none();
        tools.register(Arc::new(ReadFile));
        tools.register(Arc::new(Ls));
        tools.register(Arc::new(TreeTool));
        tools.register(Arc::new(Grep));
        tools.register(Arc::new(GlobTool));
        tools
    }

    /// Adds a tool, replacing any tool of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name().to_owned(), tool);
    }

    /// Switches a tool off; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        self.tools.remove(name).is_some()
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// The names of the tools, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }
}

fn string_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::args(format!("argument `{key}` must be a string"))),
    }
}

fn required_string<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, ToolError> {
    string_arg(args, key)?.ok_or_else(|| ToolError::args(format!("missing argument `{key}`")))
}

fn number_arg(args: &Map<String, Value>, key: &str) -> Result<Option<u64>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .map(Some)
            .ok_or_else(|| ToolError::args(format!("argument `{key}` must be a whole number"))),
    }
}

fn check_keys(args: &Map<String, Value>, allowed: &[&str]) -> Result<(), ToolError> {
    match args.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(ToolError::args(format!(
            "unknown argument `{key}` (expected: {})",
            allowed.join(", ")
        ))),
        None => Ok(()),
    }
}

/// A file's text and, when it was not UTF-8, the encoding it was decoded from.
fn read_text(
    cx: &ToolContext<'_>,
    location: &Location,
    written: &str,
) -> Result<(ctx_fs::Text, Option<&'static str>), ToolError> {
    match cx.sandbox.read_text(location).map_err(|e| ToolError::from_fs(&e))? {
        ctx_fs::Content::Text { text, encoding } => Ok((text, encoding.note())),
        _ => Err(ToolError {
            code: Code::Binary,
            message: format!("binary file left out: {written}"),
        }),
    }
}

/// `read_file{"uri": PATH, "start": N, "end": M}`: the file or its line range.
struct ReadFile;

impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }

    fn keys(&self) -> &[&str] {
        &["uri", "start", "end"]
    }

    fn call(&self, args: &Map<String, Value>, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        check_keys(args, self.keys())?;
        let uri = required_string(args, "uri")?;
        let start = number_arg(args, "start")?;
        let end = number_arg(args, "end")?;
        let location = cx.resolve(uri)?;
        let (text, encoding) = read_text(cx, &location, uri)?;
        let mut out = if start.is_none() && end.is_none() {
            text.to_string()
        } else {
            let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
            let start = start.map_or(1, clamp);
            let end = end.map_or(LineEnd::Eof, |n| LineEnd::Line(clamp(n)));
            crate::select::lines(&text, start, end)
                .map(|selection| selection.text.into_owned())
                .map_err(|err| ToolError { code: err.code(), message: err.to_string() })?
        };
        if let Some(encoding) = encoding {
            // Said after the text, as the other tools' notes are, so its lines keep their
            // numbers.
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            let _ = writeln!(out, "[... text decoded from {encoding} ...]");
            cx.budget.warn(Code::Encoding, crate::printer::encoding_message(uri, encoding));
        }
        Ok(out)
    }
}

/// Resolves the `uri` argument to a directory (default: the calling document's directory).
fn directory_arg(cx: &ToolContext<'_>, args: &Map<String, Value>) -> Result<Location, ToolError> {
    let location = match string_arg(args, "uri")? {
        Some(uri) => cx.resolve(uri)?,
        None => cx.base.clone(),
    };
    let stat = cx.sandbox.stat(&location).map_err(|e| ToolError::from_fs(&e))?;
    if stat.kind != FileKind::Dir {
        return Err(ToolError::args(format!("not a directory: {}", cx.display(&location))));
    }
    Ok(location)
}

/// The name of a walk entry relative to the walked directory.
fn relative<'a>(dir: &Location, path: &'a str) -> &'a str {
    let prefix = dir.path().as_str();
    if prefix.is_empty() {
        path
    } else {
        path.strip_prefix(prefix).map_or(path, |rest| rest.trim_start_matches('/'))
    }
}

/// `ls{"uri": DIR}`: one entry per line, directories first with a trailing `/`.
struct Ls;

impl Tool for Ls {
    fn name(&self) -> &str {
        "ls"
    }

    fn keys(&self) -> &[&str] {
        &["uri"]
    }

    fn call(&self, args: &Map<String, Value>, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        check_keys(args, self.keys())?;
        let dir = directory_arg(cx, args)?;
        // One level is read, not the whole tree below it, and only the names of its entries.
        let options = WalkOptions::of(cx.sandbox).max_depth(1).names_only();
        cx.budget.admit_walk(cx.sandbox)?;
        let walk = cx.sandbox.walk_with(&dir, options).map_err(|e| ToolError::from_fs(&e))?;
        cx.budget.charge_walk(&walk);
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        for entry in walk.entries.iter().filter(|e| e.depth == 1) {
            let name = relative(&dir, entry.path.as_str());
            match entry.kind {
                FileKind::Dir => dirs.push(format!("{name}/")),
                _ => files.push(name.to_owned()),
            }
        }
        dirs.sort();
        files.sort();
        let mut out = String::new();
        for line in dirs.iter().chain(&files) {
            out.push_str(line);
            out.push('\n');
        }
        cut_walk(cx, &walk, &mut out);
        name_source_roots(cx, &dir, &mut out);
        Ok(out)
    }
}

/// The source roots of an out-of-source build (assembly.md §3), which the workspace root's
/// listings name and its searches cover.
fn source_roots(sandbox: &Sandbox) -> Vec<RootId> {
    sandbox.roots().filter(|&r| sandbox.root_kind(r) == RootKind::Source).collect()
}

/// Ends a listing of the workspace root with a line naming the source roots, if any.
fn name_source_roots(cx: &ToolContext<'_>, dir: &Location, out: &mut String) {
    let roots = source_roots(cx.sandbox);
    if *dir != cx.sandbox.workspace() || roots.is_empty() {
        return;
    }
    let names: Vec<&str> = roots.iter().map(|&r| cx.sandbox.root_path(r).as_str()).collect();
    let _ = writeln!(out, "[source roots, read-only: {}]", names.join(", "));
}

/// Renders walk entries (sorted depth-first, each with its level) as an ASCII tree.
pub(crate) fn render_tree(root_name: &str, entries: &[(String, usize, bool)]) -> String {
    let mut out = String::new();
    out.push_str(root_name);
    out.push('\n');
    // For each entry, whether it is the last of its siblings: the next entry at the same
    // level comes before any entry at a lower level.
    let last: Vec<bool> = (0..entries.len())
        .map(|i| {
            let level = entries[i].1;
            entries[i + 1..].iter().map(|e| e.1).find(|&l| l <= level) != Some(level)
        })
        .collect();
    let mut open: Vec<bool> = Vec::new();
    for (i, (name, level, is_dir)) in entries.iter().enumerate() {
        open.truncate(level - 1);
        for &more in &open {
            out.push_str(if more { "│   " } else { "    " });
        }
        out.push_str(if last[i] { "└── " } else { "├── " });
        out.push_str(name);
        if *is_dir {
            out.push('/');
        }
        out.push('\n');
        open.push(!last[i]);
    }
    out
}

/// `tree{"uri": DIR, "depth": N}`: an ASCII tree, ignore rules applied (default depth 3).
struct TreeTool;

impl Tool for TreeTool {
    fn name(&self) -> &str {
        "tree"
    }

    fn keys(&self) -> &[&str] {
        &["uri", "depth"]
    }

    fn call(&self, args: &Map<String, Value>, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        check_keys(args, self.keys())?;
        let dir = directory_arg(cx, args)?;
        let depth = number_arg(args, "depth")?.unwrap_or(3).max(1) as usize;
        let options = WalkOptions::of(cx.sandbox).names_only();
        let options = options.max_depth(depth.min(options.max_depth));
        cx.budget.admit_walk(cx.sandbox)?;
        let walk = cx.sandbox.walk_with(&dir, options).map_err(|e| ToolError::from_fs(&e))?;
        cx.budget.charge_walk(&walk);
        let entries: Vec<(String, usize, bool)> = walk
            .entries
            .iter()
            .filter(|e| e.depth <= depth)
            .map(|e| {
                let name = e.path.file_name().unwrap_or(e.path.as_str()).to_owned();
                (name, e.depth, e.kind == FileKind::Dir)
            })
            .collect();
        let shown = cx.display(&dir);
        let root_name = if shown.is_empty() { "./".to_owned() } else { format!("{shown}/") };
        let mut out = render_tree(&root_name, &entries);
        cut_walk(cx, &walk, &mut out);
        name_source_roots(cx, &dir, &mut out);
        Ok(out)
    }
}

/// `grep{"pattern": REGEX, "uri": PATH, "glob": GLOB, "max": N}`: matching lines as
/// `path:line: text` (default at most 100).
struct Grep;

impl Tool for Grep {
    fn name(&self) -> &str {
        "grep"
    }

    fn keys(&self) -> &[&str] {
        &["pattern", "uri", "glob", "max"]
    }

    fn call(&self, args: &Map<String, Value>, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        check_keys(args, self.keys())?;
        let pattern = required_string(args, "pattern")?;
        let regex = cx.budget.regex(pattern)?;
        let filter = match string_arg(args, "glob")? {
            Some(glob) => Some(
                globset::Glob::new(glob)
                    .map_err(|e| ToolError::args(format!("bad glob: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let max = number_arg(args, "max")?.unwrap_or(100) as usize;
        let start = match string_arg(args, "uri")? {
            Some(uri) => cx.resolve(uri)?,
            None => cx.sandbox.workspace(),
        };
        let stat = cx.sandbox.stat(&start).map_err(|e| ToolError::from_fs(&e))?;
        // One walk per directory and run, shared by every grep of it; the workspace root's
        // search covers the source roots too.
        let mut starts = vec![start.clone()];
        if stat.kind == FileKind::Dir && start == cx.sandbox.workspace() {
            starts.extend(source_roots(cx.sandbox).into_iter().map(Location::root_of));
        }
        let walks = match stat.kind {
            FileKind::Dir => starts
                .iter()
                .map(|dir| cx.budget.walk(cx.sandbox, dir))
                .collect::<Result<Vec<_>, _>>()?,
            _ => Vec::new(),
        };
        let files: Vec<(&Location, String)> = if walks.is_empty() {
            vec![(&start, cx.display(&start))]
        } else {
            walks
                .iter()
                .flat_map(|walk| walk.files().map(|e| (&e.location, cx.display_walked(e))))
                .collect()
        };
        let searched = search(cx, &files, &regex, filter.as_ref(), max);
        Ok(grep_report(cx, searched, max, &walks, filter.as_ref()))
    }
}

/// What one grep found in its files, and what it left unsearched.
struct Searched {
    /// The matching lines shown, `path:line: text`.
    out: String,
    /// Matches past `max`: counted, not shown.
    more: usize,
    skipped: Skips,
    /// Files not searched once a budget was spent.
    unsearched: usize,
    /// Whether the time budget of the run's searches was spent.
    timed_out: bool,
}

/// Searches `files` (those `filter` takes) for `regex`, showing at most `max` matches, within
/// the run's scan and time budgets.
fn search(
    cx: &ToolContext<'_>,
    files: &[(&Location, String)],
    regex: &regex_automata::meta::Regex,
    filter: Option<&globset::GlobMatcher>,
    max: usize,
) -> Searched {
    let mut s = Searched {
        out: String::new(),
        more: 0,
        skipped: Skips::default(),
        unsearched: 0,
        timed_out: false,
    };
    let mut found = 0;
    for (n, (location, shown)) in files.iter().enumerate() {
        if let Some(filter) = filter {
            let name = shown.rsplit('/').next().unwrap_or("");
            if !filter.is_match(shown) && !filter.is_match(name) {
                continue;
            }
        }
        let content = match cx.sandbox.read_text(location) {
            Ok(content) => content,
            Err(err) if err.code() == Code::TooLarge => {
                s.skipped.large += 1;
                continue;
            }
            Err(_) => {
                s.skipped.unreadable += 1;
                continue;
            }
        };
        let Some(text) = content.text() else {
            s.skipped.binary += 1;
            continue;
        };
        if !cx.budget.scan(text.len() as u64) {
            s.unsearched = files.len() - n;
            break;
        }
        let mut clock = std::time::Instant::now();
        for (no, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                if found == max {
                    s.more += 1;
                } else {
                    let _ = writeln!(s.out, "{shown}:{}: {line}", no + 1);
                    found += 1;
                }
            }
            // The search time is counted every few hundred lines.
            if no % 256 == 255 {
                let within = cx.budget.searched(clock.elapsed());
                clock = std::time::Instant::now();
                if !within {
                    s.timed_out = true;
                    s.unsearched = files.len() - n - 1;
                    break;
                }
            }
        }
        if s.timed_out || !cx.budget.searched(clock.elapsed()) {
            s.timed_out = true;
            s.unsearched = s.unsearched.max(files.len() - n - 1);
            break;
        }
    }
    s
}

/// The matches of a grep with its markers: what a budget or `max` left out, the files it
/// skipped, and the entries its walks could not take.
fn grep_report(
    cx: &ToolContext<'_>,
    searched: Searched,
    max: usize,
    walks: &[Arc<ctx_fs::Walk>],
    filter: Option<&globset::GlobMatcher>,
) -> String {
    let Searched { mut out, more, skipped, mut unsearched, timed_out } = searched;
    if out.is_empty() && more == 0 {
        // An empty result would leave an empty section, which reads as a failure.
        out.push_str("no matches\n");
    }
    if timed_out {
        cut(
            cx,
            &mut out,
            format!("[... {unsearched} more entries omitted ...]"),
            format!(
                "grep stopped after {}s of searching in this run; {unsearched} files were not searched (a simpler pattern searches faster)",
                crate::tool_budget::MAX_SEARCH_TIME.as_secs()
            ),
        );
        unsearched = 0;
    }
    if more > 0 {
        cut(
            cx,
            &mut out,
            format!("[... {more} more entries omitted ...]"),
            format!(
                "grep stopped at max {max} matches, {more} more not shown; raise `max` to see them"
            ),
        );
    }
    if unsearched > 0 {
        let budget = cx.budget.max_scan_bytes();
        cut(
            cx,
            &mut out,
            format!("[... {unsearched} more entries omitted ...]"),
            format!(
                "grep stopped after {budget} bytes scanned in this run; {unsearched} files were not searched (raise --max-scan-bytes)"
            ),
        );
    }
    if let Some(note) = skipped.note() {
        let raise = if skipped.large > 0 { " (--max-file-bytes raises the size cap)" } else { "" };
        cut(
            cx,
            &mut out,
            format!("[... {note} ...]"),
            format!("grep did not search {note}{raise}"),
        );
    }
    for walk in walks {
        match filter {
            // A denied file the `glob` filter would not take is no refusal of this search.
            Some(filter) => {
                let mut walk = walk.as_ref().clone();
                walk.skipped.retain(|s| {
                    let name = s.path.file_name().unwrap_or_default();
                    s.reason != SkipReason::Denied
                        || filter.is_match(s.path.as_str())
                        || filter.is_match(name)
                });
                cut_walk(cx, &walk, &mut out);
            }
            None => cut_walk(cx, walk, &mut out),
        }
    }
    out
}

/// Files a grep could not search, by reason.
#[derive(Default)]
struct Skips {
    large: usize,
    binary: usize,
    unreadable: usize,
}

impl Skips {
    fn note(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.large, "over the size cap"),
            (self.binary, "binary"),
            (self.unreadable, "unreadable"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, why)| format!("{n} {why}"))
        .collect();
        let total = self.large + self.binary + self.unreadable;
        let files = if total == 1 { "file" } else { "files" };
        (total > 0).then(|| format!("{total} {files} skipped: {}", parts.join(", ")))
    }
}

/// Ends a listing with a visible marker and raises `W_LIMIT` for the call.
fn cut(cx: &ToolContext<'_>, out: &mut String, marker: String, warning: String) {
    out.push_str(&marker);
    out.push('\n');
    cx.budget.warn(Code::Limit, warning);
}

/// The cut of a walk stopped at its entry limit, if it was, and the entries the sandbox
/// refused on the way (counted by reason, never named); those the system would not let it
/// read (`E_PERMISSION`, `E_IO`) leave matches unseen, so they are a cut too.
fn cut_walk(cx: &ToolContext<'_>, walk: &Walk, out: &mut String) {
    if walk.truncated {
        let limit = cx.sandbox.limits().max_walk_entries;
        let n = walk.omitted;
        let counted =
            if walk.omitted_exact(limit) { format!("{n}") } else { format!("at least {n}") };
        cut(
            cx,
            out,
            format!("[... {counted} more entries omitted ...]"),
            format!(
                "a walk stopped at its limit of {limit} entries; {counted} later entries are left out (--max-files 0 lifts it)"
            ),
        );
    }
    if let Some(note) = crate::render::skipped_note(&walk.skipped) {
        out.push_str(&note);
        out.push('\n');
        let unread = walk
            .skipped
            .iter()
            .filter(|s| matches!(s.reason, SkipReason::Permission | SkipReason::Io))
            .count();
        if unread > 0 {
            let entries = if unread == 1 { "entry" } else { "entries" };
            cx.budget.warn(
                Code::Limit,
                format!("a walk could not read {unread} {entries}; what they hold is left out"),
            );
        }
    }
}

/// `glob{"pattern": GLOB}`: the matching paths, one a line.
struct GlobTool;

impl Tool for GlobTool {
    fn name(&self) -> &str {
        "glob"
    }

    fn keys(&self) -> &[&str] {
        &["pattern"]
    }

    fn call(&self, args: &Map<String, Value>, cx: &ToolContext<'_>) -> Result<String, ToolError> {
        check_keys(args, self.keys())?;
        let pattern = required_string(args, "pattern")?;
        if pattern.trim().is_empty() {
            return Err(ToolError::args("`pattern` must not be empty".to_owned()));
        }
        // A pattern the sandbox cannot take as a glob is a bad argument, as `grep`'s is. The
        // tool lists names: no entry's length or time is read.
        let options = WalkOptions::of(cx.sandbox).names_only();
        cx.budget.admit_walk(cx.sandbox)?;
        let walk =
            cx.sandbox.glob_with(pattern, Some(cx.base), options).map_err(|e| match e.code() {
                Code::BadPath => ToolError::args(format!("bad glob: {e}")),
                _ => ToolError::from_fs(&e),
            })?;
        cx.budget.charge_walk(&walk);
        let mut walks = vec![walk];
        // From the workspace root, a relative pattern also matches in each source root.
        if *cx.base == cx.sandbox.workspace() && !pattern.starts_with(['/', '\\', '~']) {
            for root in source_roots(cx.sandbox) {
                let root = Location::root_of(root);
                if cx.budget.walk_room(cx.sandbox).is_err() {
                    break;
                }
                if let Ok(walk) = cx.sandbox.glob_with(pattern, Some(&root), options) {
                    cx.budget.charge_walk(&walk);
                    walks.push(walk);
                }
            }
        }
        let mut out = String::new();
        for walk in &walks {
            for entry in walk.files() {
                out.push_str(&cx.display_walked(entry));
                out.push('\n');
            }
            cut_walk(cx, walk, &mut out);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::render_tree;

    #[test]
    fn tree_drawing() {
        let entries = [
            ("a".to_owned(), 1, true),
            ("b.rs".to_owned(), 2, false),
            ("c".to_owned(), 2, true),
            ("d.rs".to_owned(), 3, false),
            ("e.md".to_owned(), 1, false),
        ];
        assert_eq!(
            render_tree("src/", &entries),
            "src/\n├── a/\n│   ├── b.rs\n│   └── c/\n│       └── d.rs\n└── e.md\n"
        );
    }
}
