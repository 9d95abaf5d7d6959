//! The rooms of each crate, as tidy checks them: every source file of `crates/*/src` holds at
//! most [`MAX_CODE_LINES`] lines of code, every function at most [`MAX_FN_LINES`] lines, and
//! no two files of a crate refer to each other, directly or through others (a circle).
//!
//! - Lines of code are the lines that are neither blank nor only a comment, counted before the
//!   file's in-module tests (a `#[cfg(test)]` line followed by a `mod` line).
//! - A function runs from its `fn` line to its closing brace; functions of the in-module
//!   tests count as well.
//! - A file refers to another when a path in it names the other's module: `crate::a::b` or
//!   `super::b` (in `use` lines and in code), outside comments, strings and the in-module
//!   tests. A module's own submodules are not a circle (`a.rs` declares `a/b.rs`); the crate
//!   root refers to everything.
//!
//! docs/architecture.md names every source file of a crate (but `lib.rs`, `main.rs` and
//! `mod.rs`) in that crate's section, by its file name (`walk.rs`, or with its folder,
//! `symbols/scan.rs`), so that the map stays true.
//!
//! The lexing is deliberately small: comments (nested block comments too), strings (raw,
//! byte, escaped) and character literals are blanked, which is all that brace matching and
//! path finding need.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Most lines of code in one source file.
pub(crate) const MAX_CODE_LINES: usize = 700;

/// Most lines of one function, from its `fn` line to its closing brace.
pub(crate) const MAX_FN_LINES: usize = 120;

/// Checks every crate under `root/crates`; one message per problem.
pub(crate) fn check(root: &Path, problems: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(root.join("crates")) else { return };
    let mut crates: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    crates.sort();
    for krate in crates {
        let src = krate.join("src");
        let mut files = Vec::new();
        collect(&src, &mut files);
        files.sort();
        let mut modules = BTreeMap::new();
        for file in &files {
            let Ok(text) = fs::read_to_string(file) else { continue };
            let shown = file.strip_prefix(root).unwrap_or(file).display().to_string();
            let blank = blank_out(&text);
            let code = code_lines(&blank);
            if code > MAX_CODE_LINES {
                problems.push(format!(
                    "{shown}: {code} lines of code, more than {MAX_CODE_LINES}: split it by concern"
                ));
            }
            for (line, name, lines) in long_functions(&blank) {
                problems.push(format!(
                    "{shown}:{line}: fn {name} has {lines} lines, more than {MAX_FN_LINES}: split \
                     it along its steps"
                ));
            }
            modules.insert(module_of(&src, file), (shown, before_tests(&blank).to_owned()));
        }
        circles(&modules, problems);
        named_in_architecture(root, &krate, &src, &files, problems);
    }
}

/// Every source file of the crate at `krate` is named in its section of docs/architecture.md.
fn named_in_architecture(
    root: &Path,
    krate: &Path,
    src: &Path,
    files: &[PathBuf],
    problems: &mut Vec<String>,
) {
    let Ok(doc) = fs::read_to_string(root.join("docs/architecture.md")) else { return };
    let Some(name) = krate.file_name().and_then(|n| n.to_str()) else { return };
    let heading = format!("### `crates/{name}`");
    let Some(start) = doc.find(&heading) else { return };
    let rest = &doc[start + heading.len()..];
    let section = &rest[..rest.find("\n### ").or_else(|| rest.find("\n## ")).unwrap_or(rest.len())];
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(file);
        let Some(base) = relative.file_name().and_then(|n| n.to_str()) else { continue };
        if matches!(base, "lib.rs" | "main.rs" | "mod.rs") {
            continue;
        }
        let shown = relative.to_string_lossy().replace('\\', "/");
        if !section.contains(base) && !section.contains(&shown) {
            problems.push(format!(
                "docs/architecture.md: the section of crates/{name} does not name `{shown}`"
            ));
        }
    }
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The module path of `file` under `src`: `walk`, `tokens::o200k`; empty for the crate root.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> =
        relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|last| matches!(last.as_str(), "mod" | "lib" | "main")) {
        parts.pop();
    }
    parts.join("::")
}

/// `text` with comments, strings and character literals replaced by spaces (line ends kept),
/// so that braces and paths can be found by looking.
pub(crate) fn blank_out(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = memchr_from(bytes, i, b'\n');
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < bytes.len() && depth > 0 {
                    if bytes[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if bytes[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' | b'b' if raw_string_at(bytes, i).is_some() => {
                let end = raw_string_at(bytes, i).unwrap_or(bytes.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                let end = (j + 1).min(bytes.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'\'' => {
                // A character literal ('{', '\n', '\u{7b}'), not a lifetime ('a).
                let end = char_literal_end(bytes, i);
                if let Some(end) = end {
                    blank(&mut out, i, end);
                    i = end;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn memchr_from(bytes: &[u8], from: usize, byte: u8) -> usize {
    bytes[from..].iter().position(|&b| b == byte).map_or(bytes.len(), |at| from + at)
}

/// The end of a raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`, if one does; also a
/// byte string `b"…"`.
fn raw_string_at(bytes: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if bytes[j] == b'b' {
        j += 1;
        if bytes.get(j) == Some(&b'"') {
            let mut k = j + 1;
            while k < bytes.len() && bytes[k] != b'"' {
                k += if bytes[k] == b'\\' { 2 } else { 1 };
            }
            return Some((k + 1).min(bytes.len()));
        }
    }
    if bytes.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = bytes[j..].iter().take_while(|&&b| b == b'#').count();
    j += hashes;
    if bytes.get(j) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    let body = j + 1;
    let end = bytes[body..].windows(close.len()).position(|w| w == close.as_slice())?;
    Some(body + end + close.len())
}

/// The end of the character literal at `i`, or `None` for a lifetime or label.
fn char_literal_end(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i + 1)? {
        b'\\' => {
            let close = bytes[i + 2..].iter().take(12).position(|&b| b == b'\'')?;
            Some(i + 2 + close + 1)
        }
        _ => {
            // One character (of up to four bytes), then the closing quote.
            let rest = std::str::from_utf8(&bytes[i + 1..(i + 6).min(bytes.len())]).ok().or_else(
                || {
                    (2..6).rev().find_map(|n| {
                        std::str::from_utf8(&bytes[i + 1..(i + n).min(bytes.len())]).ok()
                    })
                },
            )?;
            let c = rest.chars().next()?;
            let after = i + 1 + c.len_utf8();
            (bytes.get(after) == Some(&b'\'')).then_some(after + 1)
        }
    }
}

/// The part of a blanked text before its in-module tests.
fn before_tests(blank: &str) -> &str {
    let mut offset = 0;
    let mut lines = blank.split_inclusive('\n');
    while let Some(line) = lines.next() {
        // Other attributes of the module (`#[allow(…)]`) may stand between the two.
        if line.trim() == "#[cfg(test)]"
            && lines
                .clone()
                .find(|next| !next.trim_start().starts_with("#["))
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            return &blank[..offset];
        }
        offset += line.len();
    }
    blank
}

/// Lines of code before the in-module tests: neither blank nor only a comment (comments are
/// blanked in `blank`).
fn code_lines(blank: &str) -> usize {
    before_tests(blank).lines().filter(|line| !line.trim().is_empty()).count()
}

/// The functions longer than [`MAX_FN_LINES`]: their line, name and length.
fn long_functions(blank: &str) -> Vec<(usize, String, usize)> {
    let bytes = blank.as_bytes();
    let line_of = |at: usize| 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(pos) = blank[at..].find("fn ") {
        let start = at + pos;
        at = start + 3;
        let word_start =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        if !word_start {
            continue;
        }
        let name: String =
            blank[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` at depth 0 of brackets and parentheses, unless a `;` ends
        // the declaration first.
        let mut depth = 0i32;
        let mut open = None;
        for (k, &b) in bytes.iter().enumerate().skip(at) {
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    open = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0i32;
        let mut close = None;
        for (k, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => braces += 1,
                b'}' => {
                    braces -= 1;
                    if braces == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let (first, last) = (line_of(start), line_of(close));
        let lines = last - first + 1;
        if lines > MAX_FN_LINES {
            found.push((first, name, lines));
        }
    }
    found
}

/// The modules of a crate that refer to each other, directly or through others.
fn circles(modules: &BTreeMap<String, (String, String)>, problems: &mut Vec<String>) {
    let names: BTreeSet<&str> = modules.keys().map(String::as_str).collect();
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (module, (_, code)) in modules {
        let mut targets = BTreeSet::new();
        if !module.is_empty() {
            for path in paths_in(code, module) {
                if let Some(target) = longest_module(&path, &names)
                    && target != module
                    && !target.starts_with(&format!("{module}::"))
                {
                    targets.insert(target);
                }
            }
        }
        edges.insert(module.as_str(), targets);
    }
    for component in strongly_connected(&edges) {
        let files: Vec<&str> = component.iter().map(|module| modules[*module].0.as_str()).collect();
        problems.push(format!(
            "{}: these files refer to each other in a circle: put what they share in a leaf \
             module, or give each helper to the room that owns it",
            files.join(", ")
        ));
    }
}

/// The module paths named in `code`, a file of `module`: `crate::a::b…` as `a::b…`, and
/// `super::b…` from `module`'s parent; `use crate::{a, b::c}` groups too.
fn paths_in(code: &str, module: &str) -> Vec<Vec<String>> {
    let parent: Vec<String> = match module.rsplit_once("::") {
        Some((parent, _)) => parent.split("::").map(str::to_owned).collect(),
        None => Vec::new(),
    };
    let mut paths = Vec::new();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent)] {
        let mut at = 0;
        while let Some(pos) = code[at..].find(prefix) {
            let start = at + pos;
            at = start + prefix.len();
            if start > 0 && is_ident(code.as_bytes()[start - 1]) {
                continue;
            }
            if code[at..].starts_with('{') {
                let end = code[at..].find('}').map_or(code.len(), |e| at + e);
                for item in code[at + 1..end].split(',') {
                    let mut path = base.clone();
                    path.extend(item.split("::").map(|p| p.trim().to_owned()));
                    paths.push(path);
                }
                continue;
            }
            let rest: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut path = base.clone();
            path.extend(rest.split("::").filter(|p| !p.is_empty()).map(str::to_owned));
            paths.push(path);
        }
    }
    paths
}

fn is_ident(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The longest prefix of `path` that names a module of the crate.
fn longest_module<'a>(path: &[String], names: &BTreeSet<&'a str>) -> Option<&'a str> {
    (1..=path.len()).rev().find_map(|n| names.get(path[..n].join("::").as_str()).copied())
}

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn strongly_connected<'a>(edges: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(node: &'a str, edges: &BTreeMap<&'a str, BTreeSet<&'a str>>, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        for &next in edges.get(node).into_iter().flatten() {
            if !s.index.contains_key(next) {
                visit(next, edges, s);
                let low = s.low[node].min(s.low[next]);
                s.low.insert(node, low);
            } else if s.on_stack.contains(next) {
                let low = s.low[node].min(s.index[next]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = Vec::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                component.push(top);
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for &node in edges.keys() {
        if !state.index.contains_key(node) {
            visit(node, edges, &mut state);
        }
    }
    state.found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_strings_and_chars_are_blanked() {
        let text = "fn a() { let s = \"}\"; let c = '{'; // }\n /* { */ let r = r#\"}\"#; }\nfn b<'a>(x: &'a str) {}\n";
        let blank = blank_out(text);
        assert_eq!(blank.matches('{').count(), 2, "{blank}");
        assert_eq!(blank.matches('}').count(), 2, "{blank}");
        assert!(blank.contains("'a"), "lifetimes stay: {blank}");
        assert_eq!(blank.lines().count(), text.lines().count());
    }

    #[test]
    fn long_functions_and_code_lines() {
        let body: String = (0..130).map(|i| format!("    let x{i} = {i};\n")).collect();
        let text =
            format!("fn short() {{}}\n\nfn long() {{\n{body}}}\ntrait T {{ fn f(&self); }}\n");
        let blank = blank_out(&text);
        let long = long_functions(&blank);
        assert_eq!(long, [(3, "long".to_owned(), 132)]);
        let tests = format!("{text}#[cfg(test)]\nmod tests {{\n    fn t() {{}}\n}}\n");
        assert_eq!(code_lines(&blank_out(&tests)), code_lines(&blank));
    }

    #[test]
    fn circles_are_found_and_children_are_not_circles() {
        let module = |code: &str| ("x.rs".to_owned(), code.to_owned());
        let mut modules = BTreeMap::new();
        modules.insert("a".to_owned(), module("use crate::b::Thing; fn f() { crate::c::g() }"));
        modules.insert("b".to_owned(), module("use crate::{a::A, d};"));
        modules.insert("c".to_owned(), module("use super::d;"));
        modules.insert("d".to_owned(), module(""));
        modules.insert("e".to_owned(), module("use crate::e::f::G;"));
        modules.insert("e::f".to_owned(), module("use super::H;"));
        let mut problems = Vec::new();
        circles(&modules, &mut problems);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("x.rs, x.rs: "), "{problems:?}");
    }

    /// The in-module tests are not counted, with or without other attributes between
    /// `#[cfg(test)]` and their `mod` line; a `#[cfg(test)]` item that is not a module is.
    #[test]
    fn the_tests_are_found_past_other_attributes() {
        let plain = "fn a() {}\n\n#[cfg(test)]\nmod tests {\n    fn b() {}\n}\n";
        let allowed =
            "fn a() {}\n#[cfg(test)]\n#[allow(dead_code)]\nmod tests {\n    fn b() {}\n}\n";
        let item = "fn a() {}\n#[cfg(test)]\n#[inline]\nfn b() {}\nfn c() {}\n";
        assert_eq!(code_lines(plain), 1);
        assert_eq!(code_lines(allowed), 1);
        assert_eq!(code_lines(item), 5);
    }
}
