//! The outline of a file: its definitions from the lexical scanner (every language it reads)
//! or its headings (Markdown), each with its lines, nested by scope, its first line as
//! written; ranked for a prompt and fitted to a token budget, what is left out said in-band.
//!
//! No I/O: the caller reads the files ([`of_text`]), then fits them together ([`fit`]).

use serde::Serialize;

use ctx_tokens::Tokenizer;

use crate::symbols::{self, Lang};
use crate::tokenize;

/// Longest first line shown for one entry, in characters; a longer one ends with `…`.
pub const MAX_SIGNATURE_CHARS: usize = 160;

/// Most entries outlined for one file; the others are counted in-band.
pub const MAX_ENTRIES_PER_FILE: usize = 5_000;

/// Deepest indentation shown: entries nested deeper are shown at this depth.
pub const MAX_DEPTH: u32 = 12;

/// One definition or heading.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// The name as written.
    pub name: String,
    /// `function`, `struct`, `method`, `heading`, …
    pub kind: String,
    /// First line, 1-based.
    pub start: u32,
    /// Last line, inclusive.
    pub end: u32,
    /// How many entries enclose it (0 at the top level).
    pub depth: u32,
    /// Its first line as written, trimmed, hidden and control characters made visible, at
    /// most [`MAX_SIGNATURE_CHARS`] characters.
    pub signature: String,
    /// What it is worth for the prompt (higher first; only the order means something).
    #[serde(skip)]
    pub value: f64,
}

/// The outline of one file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileOutline {
    /// The path as shown.
    pub path: String,
    /// Its number of lines.
    pub lines: u32,
    /// Its entries, in source order.
    pub entries: Vec<Entry>,
    /// Entries past [`MAX_ENTRIES_PER_FILE`], not outlined.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_outlined: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Whether a file of this path has an outline: a language the scanner reads, or Markdown.
pub fn outlines(path: &str) -> bool {
    is_markdown(path) || Lang::of(path).is_code()
}

fn is_markdown(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(ext.to_ascii_lowercase().as_str(), "md" | "markdown" | "mdx")
}

/// The outline of `text`, a file shown as `path`; `None` when the file has none
/// ([`outlines`]).
pub fn of_text(path: &str, text: &str) -> Option<FileOutline> {
    let starts = line_starts(text);
    let lines = u32::try_from(line_count(text, &starts)).unwrap_or(u32::MAX);
    let raw: Vec<(String, String, u32, u32)> = if is_markdown(path) {
        headings(text, lines)
    } else if Lang::of(path).is_code() {
        let found = symbols::scan(Lang::of(path), text);
        found.defs.into_iter().map(|d| (d.name, d.kind, d.start, d.end.max(d.start))).collect()
    } else {
        return None;
    };
    let not_outlined = raw.len().saturating_sub(MAX_ENTRIES_PER_FILE);
    let mut open: Vec<u32> = Vec::new();
    let mut entries = Vec::with_capacity(raw.len().min(MAX_ENTRIES_PER_FILE));
    for (name, kind, start, end) in raw.into_iter().take(MAX_ENTRIES_PER_FILE) {
        while open.last().is_some_and(|&e| e < start) {
            open.pop();
        }
        let depth = u32::try_from(open.len()).unwrap_or(u32::MAX);
        open.push(end);
        let signature = signature(text, &starts, start);
        let signature = if signature.is_empty() { format!("{kind} {name}") } else { signature };
        entries.push(Entry { name, kind, start, end, depth, signature, value: 0.0 });
    }
    Some(FileOutline { path: path.to_owned(), lines, entries, not_outlined })
}

/// Byte offsets where each line starts.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1)).collect()
}

fn line_count(text: &str, starts: &[usize]) -> usize {
    if text.is_empty() {
        0
    } else if text.ends_with('\n') {
        starts.len() - 1
    } else {
        starts.len()
    }
}

/// Line `line` (1-based) trimmed, capped and made visible.
fn signature(text: &str, starts: &[usize], line: u32) -> String {
    let Some(&from) = starts.get(line.saturating_sub(1) as usize) else {
        return String::new();
    };
    let rest = &text[from..];
    let end = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
    let line = rest[..end].trim();
    let mut shown: String = line.chars().take(MAX_SIGNATURE_CHARS).collect();
    if shown.len() < line.len() {
        shown.push('…');
    }
    ctx_fs::sanitize::sanitize(&shown).text.into_owned()
}

/// The ATX headings of a Markdown text outside fenced code: `(title, "heading", start, end)`,
/// a heading's section ending before the next heading of its level or above.
fn headings(text: &str, lines: u32) -> Vec<(String, String, u32, u32)> {
    let mut found: Vec<(String, usize, u32)> = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    for (no, line) in text.lines().enumerate() {
        let no = u32::try_from(no + 1).unwrap_or(u32::MAX);
        let t = line.trim_start_matches(' ');
        if line.len() - t.len() > 3 {
            continue;
        }
        let marker = t.bytes().next().filter(|b| *b == b'`' || *b == b'~');
        if let Some(m) = marker {
            let run = t.bytes().take_while(|b| *b == m).count();
            if run >= 3 {
                fence = match fence {
                    None => Some((m, run)),
                    Some((fm, fr)) if fm == m && run >= fr && t[run..].trim().is_empty() => None,
                    open => open,
                };
                continue;
            }
        }
        if fence.is_some() {
            continue;
        }
        let level = t.bytes().take_while(|b| *b == b'#').count();
        let rest = &t[level..];
        if (1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t'])) {
            let title = rest.trim().trim_end_matches('#').trim_end();
            found.push((title.chars().take(MAX_SIGNATURE_CHARS).collect(), level, no));
        }
    }
    let mut out = Vec::with_capacity(found.len());
    for (i, (title, level, start)) in found.iter().enumerate() {
        let end = found[i + 1..]
            .iter()
            .find(|(_, l, _)| l <= level)
            .map_or(lines.max(*start), |(_, _, s)| s.saturating_sub(1).max(*start));
        out.push((title.clone(), "heading".to_owned(), *start, end));
    }
    out
}

/// Sets each entry's value for `prompt`: shallower entries first, then entries whose name,
/// first line or file path share terms with the prompt; an entry is worth at least the best
/// of the entries it encloses, so an entry kept keeps the entries around it.
pub fn rank(files: &mut [FileOutline], prompt: Option<&str>) {
    let wanted: std::collections::HashSet<String> =
        prompt.map(tokenize::terms).unwrap_or_default().into_iter().collect();
    let hits = |text: &str| {
        let mut seen = std::collections::HashSet::new();
        tokenize::terms(text)
            .into_iter()
            .filter(|t| wanted.contains(t) && seen.insert(t.clone()))
            .count()
    };
    for file in files {
        let path_hits = if wanted.is_empty() { 0 } else { hits(&file.path) };
        for e in &mut file.entries {
            let mut value = 1.0 / f64::from(1 + e.depth.min(MAX_DEPTH));
            if !wanted.is_empty() {
                value += 4.0 * hits(&e.name) as f64 + 1.0 * hits(&e.signature) as f64;
                value += 0.5 * path_hits as f64;
            }
            e.value = value;
        }
        // Enclosing entries come before what they enclose: a pass from the end lifts each
        // entry to the best value found within its lines.
        let mut best: Vec<(u32, f64)> = Vec::new();
        for e in file.entries.iter_mut().rev() {
            let mut inner = e.value;
            while let Some(&(start, v)) = best.last() {
                if start > e.end || start < e.start {
                    break;
                }
                inner = inner.max(v);
                best.pop();
            }
            e.value = e.value.max(inner);
            best.push((e.start, e.value));
        }
    }
}

/// Outlines fitted to a budget: the text a model is shown and what was left out.
#[derive(Clone, Debug, Serialize)]
pub struct Fitted {
    /// The files with the entries kept.
    pub files: Vec<FileOutline>,
    /// The rendered text, notes included.
    #[serde(skip)]
    pub text: String,
    /// Its o200k tokens.
    pub tokens: usize,
    /// Entries left out to fit the budget.
    pub left_out: usize,
    /// Files left out whole to fit the budget.
    pub files_left_out: usize,
}

/// One piece that may be kept: an entry, or the heading of a file without entries.
#[derive(Clone, Copy)]
struct Piece {
    file: usize,
    entry: Option<usize>,
    value: f64,
    depth: u32,
}

/// Keeps the most valuable entries of `files` (ranked by [`rank`]) whose rendering, notes
/// included, fits `max_tokens` o200k tokens; everything without a budget. The order of the
/// output is the order of `files`, then of lines, whatever the ranking.
pub fn fit(files: Vec<FileOutline>, max_tokens: Option<usize>) -> Fitted {
    fit_in(&files, max_tokens, max_tokens.map(|n| (n, Tokenizer::O200k)))
}

/// [`fit`] within `room` o200k tokens, the note naming `budget` (in the tokens of its
/// tokenizer): for a caller that adds lines of its own after the outline, their tokens set
/// aside. When nothing fits beside the note, its shorter forms say what was left out.
pub fn fit_in(
    files: &[FileOutline],
    room: Option<usize>,
    budget: Option<(usize, Tokenizer)>,
) -> Fitted {
    let max_tokens = room;
    let mut pieces: Vec<Piece> = Vec::new();
    for (f, file) in files.iter().enumerate() {
        if file.entries.is_empty() {
            pieces.push(Piece { file: f, entry: None, value: -1.0, depth: 0 });
        }
        for (e, entry) in file.entries.iter().enumerate() {
            pieces.push(Piece { file: f, entry: Some(e), value: entry.value, depth: entry.depth });
        }
    }
    pieces.sort_by(|a, b| {
        b.value
            .total_cmp(&a.value)
            .then(a.depth.cmp(&b.depth))
            .then(a.file.cmp(&b.file))
            .then(a.entry.cmp(&b.entry))
    });
    let render_first = |k: usize| {
        let kept = keep(files, &pieces[..k]);
        let text = render(&kept, files, budget, 0);
        (kept, text)
    };
    let Some(room) = max_tokens else {
        let (kept, text) = render_first(pieces.len());
        return finish(kept, text, files);
    };
    // Each piece costs at least a token, so no more than the budget can fit.
    let (mut lo, mut hi) = (0, pieces.len().min(room));
    let fits = |k: usize| {
        let (kept, text) = render_first(k);
        ctx_tokens::count_at_most(&text, room).map(|_| (kept, text))
    };
    if let Some((kept, text)) = fits(hi) {
        return finish(kept, text, files);
    }
    let mut best = fits(0);
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        match fits(mid) {
            Some(found) => {
                best = Some(found);
                lo = mid;
            }
            None => hi = mid,
        }
    }
    if let Some((kept, text)) = best {
        return finish(kept, text, files);
    }
    // Not even the note fits: its shorter forms, the longest that does.
    let kept = keep(files, &[]);
    let text = (1..NOTE_FORMS)
        .map(|form| render(&kept, files, budget, form))
        .find(|text| ctx_tokens::count_at_most(text, room).is_some())
        .unwrap_or_default();
    finish(kept, text, files)
}

/// How many forms the note of what the budget left out has ([`render`]).
const NOTE_FORMS: usize = 3;

fn finish(kept: Vec<FileOutline>, text: String, all: &[FileOutline]) -> Fitted {
    let total: usize = all.iter().map(|f| f.entries.len()).sum();
    let shown: usize = kept.iter().map(|f| f.entries.len()).sum();
    let files_left_out = all.len() - kept.len();
    Fitted {
        tokens: ctx_tokens::count(&text),
        files: kept,
        text,
        left_out: total - shown,
        files_left_out,
    }
}

/// The files with only the pieces given, in their own order.
fn keep(files: &[FileOutline], pieces: &[Piece]) -> Vec<FileOutline> {
    let mut chosen: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
    let mut header = vec![false; files.len()];
    for p in pieces {
        header[p.file] = true;
        if let Some(e) = p.entry {
            chosen[p.file].push(e);
        }
    }
    let mut out = Vec::new();
    for (f, file) in files.iter().enumerate() {
        if !header[f] {
            continue;
        }
        chosen[f].sort_unstable();
        let entries = chosen[f].iter().map(|&e| file.entries[e].clone()).collect();
        out.push(FileOutline { entries, ..file.clone() });
    }
    out
}

/// The text of `kept` (out of `all`), with the note of what the budget left out in its
/// `form`: 0, the full note (what was left out of what, the budget and its tokenizer, how to
/// get the rest); 1, what was left out; 2, that the budget is spent.
fn render(
    kept: &[FileOutline],
    all: &[FileOutline],
    budget: Option<(usize, Tokenizer)>,
    form: usize,
) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for file in kept {
        let lines = if file.lines == 1 { "line" } else { "lines" };
        let _ = writeln!(out, "{} ({} {lines})", file.path, file.lines);
        for e in &file.entries {
            let indent = "  ".repeat(1 + e.depth.min(MAX_DEPTH) as usize);
            if e.start == e.end {
                let _ = writeln!(out, "{indent}L{} {}", e.start, e.signature);
            } else {
                let _ = writeln!(out, "{indent}L{}-{} {}", e.start, e.end, e.signature);
            }
        }
        if file.not_outlined > 0 {
            let _ = writeln!(
                out,
                "  [... {} more definitions not outlined (at most {MAX_ENTRIES_PER_FILE} per file) ...]",
                file.not_outlined
            );
        }
    }
    let total: usize = all.iter().map(|f| f.entries.len()).sum();
    let shown: usize = kept.iter().map(|f| f.entries.len()).sum();
    let files_out = all.len() - kept.len();
    if (shown < total || files_out > 0)
        && let Some((budget, tokenizer)) = budget
    {
        let files = match files_out {
            0 => String::new(),
            1 => " and 1 file".to_owned(),
            n => format!(" and {n} files"),
        };
        let left = total - shown;
        let definitions = if left == 1 { "definition" } else { "definitions" };
        // With nothing listed there is no path to ask lines of.
        let rest = if kept.is_empty() {
            "raise the token budget"
        } else {
            "ask for lines with @path#Lstart-end"
        };
        let tokenizer = tokenizer.name();
        let tokens = if budget == 1 { "token" } else { "tokens" };
        let _ = match form {
            0 => writeln!(
                out,
                "[... {left} of {total} {definitions}{files} left out to fit {budget} {tokens} ({tokenizer}); {rest} ...]",
            ),
            1 => writeln!(out, "[... {left} {definitions}{files} left out ...]"),
            _ => writeln!(out, "[... budget spent ...]"),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};
    use proptest::prelude::*;

    use super::*;

    fn check(path: &str, text: &str, expected: Expect) {
        let files: Vec<FileOutline> = of_text(path, text).into_iter().collect();
        expected.assert_eq(&fit(files, None).text);
    }

    #[test]
    fn rust_nested_with_lines_and_signatures() {
        check(
            "src/retry.rs",
            "/// Retries.\npub fn retry(s: &str) -> u32 {\n    1\n}\nstruct Backoff;\nimpl Backoff {\n    fn next(&self) -> u32 {\n        2\n    }\n}\n",
            expect![[r#"
                src/retry.rs (10 lines)
                  L2-4 pub fn retry(s: &str) -> u32 {
                  L5 struct Backoff;
                  L7-9 fn next(&self) -> u32 {
            "#]],
        );
        check(
            "src/a.rs",
            "mod inner {\n    pub fn f() {}\n    pub struct S { a: u8 }\n}\n",
            expect![[r#"
                src/a.rs (4 lines)
                  L1-4 mod inner {
                    L2 pub fn f() {}
                    L3 pub struct S { a: u8 }
            "#]],
        );
    }

    #[test]
    fn every_language_the_scanner_reads() {
        let cases: &[(&str, &str)] = &[
            (
                "a.py",
                "class Pool:\n    def get(self):\n        return 1\n\ndef main():\n    pass\n",
            ),
            ("a.ts", "export class Pool {\n  get(): number { return 1; }\n}\nfunction main() {}\n"),
            ("a.tsx", "export function App() {\n  return <div/>;\n}\n"),
            ("a.js", "class Pool {\n  get() { return 1; }\n}\nfunction main() {}\n"),
            (
                "a.go",
                "package a\n\ntype Pool struct {\n\tn int\n}\n\nfunc (p *Pool) Get() int {\n\treturn 1\n}\n",
            ),
            ("a.c", "struct pool { int n; };\nint pool_get(struct pool *p) {\n  return p->n;\n}\n"),
            (
                "a.cpp",
                "namespace net {\nclass Pool {\n public:\n  int get() { return 1; }\n};\n}\n",
            ),
            ("A.java", "public class Pool {\n  public int get() {\n    return 1;\n  }\n}\n"),
            (
                "A.cs",
                "namespace Net {\n  public class Pool {\n    public int Get() { return 1; }\n  }\n}\n",
            ),
            (
                "README.md",
                "# Title\n\ntext\n\n## Install\n\n```sh\n# not a heading\n```\n\n### Linux\n\n## Use\n",
            ),
        ];
        let mut all = String::new();
        for (path, text) in cases {
            let outline = of_text(path, text).expect("outlined");
            assert!(!outline.entries.is_empty(), "{path}");
            all.push_str(&fit(vec![outline], None).text);
        }
        expect![[r#"
            a.py (6 lines)
              L1-3 class Pool:
                L2-3 def get(self):
              L5-6 def main():
            a.ts (4 lines)
              L1-3 export class Pool {
                L2 get(): number { return 1; }
              L4 function main() {}
            a.tsx (3 lines)
              L1-3 export function App() {
            a.js (4 lines)
              L1-3 class Pool {
                L2 get() { return 1; }
              L4 function main() {}
            a.go (9 lines)
              L3-5 type Pool struct {
              L7-9 func (p *Pool) Get() int {
            a.c (4 lines)
              L1 struct pool { int n; };
              L2-4 int pool_get(struct pool *p) {
            a.cpp (6 lines)
              L1-6 namespace net {
                L2-5 class Pool {
                  L4 int get() { return 1; }
            A.java (5 lines)
              L1-5 public class Pool {
                L2-4 public int get() {
            A.cs (5 lines)
              L1-5 namespace Net {
                L2-4 public class Pool {
                  L3 public int Get() { return 1; }
            README.md (13 lines)
              L1-13 # Title
                L5-12 ## Install
                  L11-12 ### Linux
                L13 ## Use
        "#]]
        .assert_eq(&all);
    }

    #[test]
    fn files_without_an_outline() {
        assert!(of_text("Cargo.toml", "[package]\n").is_none());
        assert!(!outlines("notes.txt"));
        // An empty file has an outline with no entries: its path and size.
        let empty = of_text("src/empty.rs", "").expect("a Rust file");
        assert_eq!((empty.lines, empty.entries.len()), (0, 0));
        assert_eq!(fit(vec![empty], None).text, "src/empty.rs (0 lines)\n");
    }

    fn many(n: usize) -> String {
        (0..n).map(|i| format!("fn function_number_{i}() {{}}\n")).collect()
    }

    #[test]
    fn a_budget_keeps_the_valuable_entries_and_says_what_it_left_out() {
        let text = format!("{}fn retry_timeout() {{}}\n{}", many(200), many(10));
        let mut files: Vec<FileOutline> = of_text("src/a.rs", &text).into_iter().collect();
        rank(&mut files, Some("fix the retry timeout"));
        let fitted = fit(files, Some(60));
        assert!(fitted.tokens <= 60, "{}", fitted.tokens);
        assert_eq!(fitted.tokens, ctx_tokens::count(&fitted.text));
        assert!(fitted.text.contains("L201 fn retry_timeout() {}"), "{}", fitted.text);
        assert!(fitted.left_out > 0);
        assert!(fitted.text.contains(&format!("[... {} of 211 definitions", fitted.left_out)));
        assert!(fitted.text.ends_with("ask for lines with @path#Lstart-end ...]\n"));
        // Kept entries stay in line order.
        let lines: Vec<u32> = fitted.files[0].entries.iter().map(|e| e.start).collect();
        assert!(lines.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
    }

    #[test]
    fn an_entry_kept_keeps_what_encloses_it() {
        let text = "mod outer {\n    mod middle {\n        fn needle() {}\n    }\n    fn other() {}\n}\nfn third() {}\n";
        let mut files: Vec<FileOutline> = of_text("a.rs", text).into_iter().collect();
        rank(&mut files, Some("needle"));
        let fitted = fit(files, Some(50));
        let names: Vec<&str> = fitted.files[0].entries.iter().map(|e| e.name.as_str()).collect();
        assert!(names.starts_with(&["outer", "middle", "needle"]), "{names:?}");
    }

    #[test]
    fn a_budget_too_small_for_anything_gives_nothing() {
        let files: Vec<FileOutline> = of_text("a.rs", &many(50)).into_iter().collect();
        let fitted = fit(files, Some(3));
        assert!(fitted.tokens <= 3);
        assert_eq!(fitted.left_out, 50);
    }

    #[test]
    fn attack_a_hundred_thousand_definitions() {
        let text = many(100_000);
        let outline = of_text("a.rs", &text).expect("outlined");
        assert_eq!(outline.entries.len(), MAX_ENTRIES_PER_FILE);
        assert_eq!(outline.not_outlined, 100_000 - MAX_ENTRIES_PER_FILE);
        let fitted = fit(vec![outline], Some(2000));
        assert!(fitted.tokens <= 2000);
        assert!(fitted.text.contains("more definitions not outlined"), "{}", fitted.text);
    }

    #[test]
    fn attack_one_long_line_and_deep_nesting() {
        let long = format!("fn f() {{ let s = \"{}\"; }}\n", "x".repeat(5 << 20));
        let outline = of_text("a.rs", &long).expect("outlined");
        assert!(outline.entries[0].signature.chars().count() <= MAX_SIGNATURE_CHARS + 1);
        assert!(outline.entries[0].signature.ends_with('…'));
        let deep: String =
            (0..2000).map(|i| format!("mod m{i} {{\n")).collect::<String>() + &"}\n".repeat(2000);
        let outline = of_text("a.rs", &deep).expect("outlined");
        let text = fit(vec![outline], None).text;
        let widest = text.lines().map(|l| l.len() - l.trim_start().len()).max();
        assert_eq!(widest, Some(2 * (1 + MAX_DEPTH as usize)));
    }

    #[test]
    fn attack_hidden_characters_in_a_signature_are_made_visible() {
        let text = "fn admin\u{202E}() {}\n/// x\nfn f\u{1b}[31m() {}\n# h\u{E0041}\n";
        let outline = of_text("a.rs", text).expect("outlined");
        let shown = fit(vec![outline], None).text;
        assert!(!shown.contains('\u{202E}') && !shown.contains('\u{1b}'), "{shown}");
        assert!(shown.contains("\\u{202E}"), "{shown}");
        let md = of_text("a.md", "# h\u{E0041}i\n").expect("outlined");
        assert!(fit(vec![md], None).text.contains("\\u{E0041}"));
    }

    proptest! {
        #[test]
        fn any_text_outlines_within_its_lines(text in "[a-z{}()#;:\\n `~\\t]{0,400}", md in any::<bool>()) {
            let path = if md { "a.md" } else { "a.rs" };
            let outline = of_text(path, &text).expect("outlined");
            for e in &outline.entries {
                prop_assert!(1 <= e.start && e.start <= e.end);
                prop_assert!(e.end <= outline.lines.max(1));
            }
            let fitted = fit(vec![outline], Some(20));
            prop_assert!(fitted.tokens <= 20);
        }
    }
}
