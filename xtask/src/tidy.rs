//! `cargo xtask tidy`, also a `#[test]` so that `cargo test` enforces it: the conventions of the
//! repository that neither rustc nor clippy checks.
//!
//! - every `.rs` file under crates/, xtask/ and fuzz/fuzz_targets/ starts with a `//!` comment;
//! - no `.rs`, `.md` or `.toml` file has trailing whitespace;
//! - no test is marked should-panic or ignored;
//! - the crates depend on each other only downwards, as in [`LAYERS`] (dev-dependencies aside);
//! - path dependencies are declared only in the root `[workspace.dependencies]`, with a version;
//! - docs/architecture.md, once it exists, names every crate under crates/;
//! - the rooms of every crate are of a readable size and free of circles (`rooms.rs`).
//!
//! Directories named `target` or `test_data`, `fixtures` directories, and fuzz/'s corpus and
//! artifacts hold data or build output and are not checked.

use std::fs;
use std::path::{Path, PathBuf};

/// Which of our crates each crate may depend on (dev-dependencies excepted). ctx-cli uses the
/// facade and the servers built on it only; no crate may use ctx-cli, and a crate missing
/// from this table is reported.
const LAYERS: &[(&str, &[&str])] = &[
    ("ctx-diagnostics", &[]),
    ("ctx-tokens", &[]),
    ("ctx-syntax", &["ctx-diagnostics"]),
    ("ctx-fs", &["ctx-diagnostics"]),
    ("ctx-preprocess", &["ctx-diagnostics", "ctx-syntax"]),
    ("ctx-assemble", &["ctx-diagnostics", "ctx-tokens", "ctx-syntax", "ctx-fs", "ctx-preprocess"]),
    ("ctx-sources", &["ctx-diagnostics", "ctx-fs"]),
    ("ctx-conversation", &["ctx-diagnostics", "ctx-tokens", "ctx-syntax", "ctx-fs"]),
    ("ctx-suggest", &["ctx-diagnostics", "ctx-tokens", "ctx-fs"]),
    ("ctx-trust", &["ctx-diagnostics", "ctx-fs"]),
    ("ctx-agents", &["ctx-diagnostics", "ctx-tokens", "ctx-fs", "ctx-assemble"]),
    (
        "ctx",
        &[
            "ctx-diagnostics",
            "ctx-tokens",
            "ctx-syntax",
            "ctx-fs",
            "ctx-preprocess",
            "ctx-assemble",
            "ctx-conversation",
            "ctx-sources",
            "ctx-suggest",
            "ctx-trust",
            "ctx-agents",
        ],
    ),
    ("ctx-lsp", &["ctx"]),
    ("ctx-mcp", &["ctx"]),
    ("ctx-cli", &["ctx", "ctx-lsp", "ctx-mcp"]),
];

/// Directory names that hold data or build output rather than source.
const SKIPPED_DIRS: &[&str] = &[".git", "target", "test_data", "fixtures"];

/// Directories under fuzz/ that cargo-fuzz fills with data.
const SKIPPED_FUZZ_DIRS: &[&str] = &["corpus", "artifacts", "coverage"];

/// Checks the repository at `root`; returns one message per problem, `path:line: message`.
pub(crate) fn check(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let mut files = Vec::new();
    if let Err(err) = walk(root, root, &mut files) {
        problems.push(format!("{}: cannot list files: {err}", root.display()));
    }
    for path in &files {
        check_file(root, path, &mut problems);
    }
    check_manifests(root, &mut problems);
    check_architecture(root, &mut problems);
    crate::rooms::check(root, &mut problems);
    problems
}

/// Collects the files under `dir`, skipping data and build output.
fn walk(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let fuzz_data = dir == root.join("fuzz") && SKIPPED_FUZZ_DIRS.contains(&&*name);
            if !SKIPPED_DIRS.contains(&&*name) && !fuzz_data {
                walk(root, &path, files)?;
            }
        } else if file_type.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

fn check_file(root: &Path, path: &Path, problems: &mut Vec<String>) {
    let extension = path.extension().and_then(|ext| ext.to_str()).unwrap_or("");
    if !matches!(extension, "rs" | "md" | "toml") {
        return;
    }
    let name = relative(root, path);
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            problems.push(format!("{name}: cannot read: {err}"));
            return;
        }
    };
    for (n, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.ends_with([' ', '\t']) {
            problems.push(format!("{name}:{}: trailing whitespace", n + 1));
        }
    }
    if extension != "rs" {
        return;
    }
    let needs_header = ["crates/", "xtask/", "fuzz/fuzz_targets/"]
        .iter()
        .any(|dir| name.replace('\\', "/").starts_with(dir));
    if needs_header && !text.starts_with("//!") {
        problems.push(format!("{name}:1: does not start with a `//!` comment saying what it is"));
    }
    // Spelled in pieces so that this file does not trip its own check.
    let banned = [concat!("#[should", "_panic"), concat!("#[", "ignore")];
    for (n, line) in text.lines().enumerate() {
        for attribute in banned {
            if line.contains(attribute) {
                problems.push(format!(
                    "{name}:{}: `{attribute}]`: test the error with a Result instead, or fix the test",
                    n + 1
                ));
            }
        }
    }
}

/// One dependency read from a manifest.
#[derive(Debug, PartialEq, Eq)]
struct Dependency {
    /// The package name (the `package` key when the dependency is renamed).
    name: String,
    /// Declared under a `dev-dependencies` section.
    dev: bool,
    /// Has a `path` key.
    path: bool,
    /// Has a `version` key.
    version: bool,
    /// 1-based line of the declaration.
    line: usize,
}

/// Reads the dependencies of a manifest textually: `[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`, their `[target.'cfg(..)'.…]` forms, their `[….NAME]` table forms,
/// and `[workspace.dependencies]`.
fn dependencies(manifest: &str) -> Vec<Dependency> {
    let mut deps: Vec<Dependency> = Vec::new();
    // Inside a dependency section: whether it is dev-only, and the index in `deps` where the
    // section starts.
    let mut section: Option<(bool, usize)> = None;
    // Inside the `[dependencies.NAME]` table of one dependency: its index in `deps`.
    let mut table: Option<usize> = None;
    for (n, line) in manifest.lines().enumerate() {
        let line = strip_comment(line).trim();
        if line.starts_with('[') {
            section = None;
            table = None;
            match dependency_section(line) {
                Some((dev, None)) => section = Some((dev, deps.len())),
                Some((dev, Some(name))) => {
                    table = Some(deps.len());
                    deps.push(Dependency { name, dev, path: false, version: false, line: n + 1 });
                }
                None => {}
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let (key, value) = (key.trim(), value.trim());
        if let Some(index) = table {
            set_field(&mut deps[index], key, value);
            continue;
        }
        let Some((dev, start)) = section else { continue };
        match key.split_once('.') {
            // `name.field = value`: one field of a dependency that may span several lines.
            Some((name, field)) => {
                let name = unquote(name);
                let index = match deps[start..].iter().position(|dep| dep.name == name) {
                    Some(index) => start + index,
                    None => {
                        deps.push(Dependency {
                            name,
                            dev,
                            path: false,
                            version: false,
                            line: n + 1,
                        });
                        deps.len() - 1
                    }
                };
                set_field(&mut deps[index], field.trim(), value);
            }
            None => {
                let mut dep =
                    Dependency { name: unquote(key), dev, path: false, version: true, line: n + 1 };
                if value.starts_with('{') {
                    dep.version = false;
                    for field in ["path", "version", "package"] {
                        if let Some(value) = key_value(value, field) {
                            set_field(&mut dep, field, &value);
                        }
                    }
                }
                deps.push(dep);
            }
        }
    }
    deps
}

/// Records one field of a dependency's table.
fn set_field(dep: &mut Dependency, field: &str, value: &str) {
    match field {
        "path" => dep.path = true,
        "version" => dep.version = true,
        "package" => dep.name = unquote(value),
        _ => {}
    }
}

/// For a section header, whether it lists dependencies: `Some((dev, None))` for a list,
/// `Some((dev, Some(name)))` for the table of one dependency.
fn dependency_section(header: &str) -> Option<(bool, Option<String>)> {
    if header.starts_with("[[") {
        return None;
    }
    let inner = header.trim_start_matches('[').trim_end_matches(']').trim();
    let at = inner.rfind("dependencies")?;
    let before = &inner[..at];
    let after = &inner[at + "dependencies".len()..];
    let dev = before.ends_with("dev-");
    let before =
        before.strip_suffix("dev-").or_else(|| before.strip_suffix("build-")).unwrap_or(before);
    if !(before.is_empty() || before.ends_with('.')) {
        return None;
    }
    match after.strip_prefix('.') {
        None if after.is_empty() => Some((dev, None)),
        Some(name) if !name.is_empty() => Some((dev, Some(unquote(name)))),
        _ => None,
    }
}

/// `line` without a `#` comment (a `#` inside a string is kept).
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    for (at, c) in line.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..at],
            _ => {}
        }
    }
    line
}

fn unquote(text: &str) -> String {
    text.trim().trim_matches(|c| c == '"' || c == '\'').to_string()
}

/// The value of `key` in an inline table, unquoted.
fn key_value(table: &str, key: &str) -> Option<String> {
    let inner = table.trim().strip_prefix('{')?.trim_end().strip_suffix('}')?;
    let mut depth = 0;
    let mut in_string = false;
    let mut start = 0;
    let mut parts = Vec::new();
    for (at, c) in inner.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '[' | '{' if !in_string => depth += 1,
            ']' | '}' if !in_string => depth -= 1,
            ',' if !in_string && depth == 0 => {
                parts.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().find_map(|part| {
        let (k, v) = part.split_once('=')?;
        (k.trim() == key).then(|| unquote(v))
    })
}

fn is_ours(name: &str) -> bool {
    name == "ctx" || name.starts_with("ctx-")
}

/// The crate directories under crates/ that have a manifest, with the manifest's text.
fn crate_manifests(root: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = fs::read_dir(root.join("crates")) else { return Vec::new() };
    let mut manifests: Vec<(PathBuf, String)> = entries
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.path())
        .filter_map(|dir| {
            // A crate still being created has no manifest yet: skip it.
            let text = fs::read_to_string(dir.join("Cargo.toml")).ok()?;
            Some((dir, text))
        })
        .collect();
    manifests.sort();
    manifests
}

/// The `name` of a manifest's `[package]` section, read textually.
pub(crate) fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(|line| strip_comment(line).trim()) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if let Some((key, value)) = line.split_once('=')
            && in_package
            && key.trim() == "name"
        {
            return Some(unquote(value));
        }
    }
    None
}

fn check_manifests(root: &Path, problems: &mut Vec<String>) {
    let mut members = crate_manifests(root);
    if let Ok(text) = fs::read_to_string(root.join("xtask/Cargo.toml")) {
        members.push((root.join("xtask"), text));
    }
    for (dir, manifest) in &members {
        let file = relative(root, &dir.join("Cargo.toml"));
        let deps = dependencies(manifest);
        for dep in deps.iter().filter(|dep| dep.path) {
            problems.push(format!(
                "{file}:{}: path dependency `{}`: declare it in the root [workspace.dependencies] \
                 and use `{}.workspace = true`",
                dep.line, dep.name, dep.name
            ));
        }
        if dir.ends_with("xtask") {
            continue;
        }
        let Some(package) = package_name(manifest) else {
            problems.push(format!("{file}: no [package] name"));
            continue;
        };
        let Some((_, allowed)) = LAYERS.iter().find(|(name, _)| *name == package) else {
            problems.push(format!(
                "{file}: crate `{package}` is not in the layering table of xtask/src/tidy.rs"
            ));
            continue;
        };
        for dep in deps.iter().filter(|dep| !dep.dev && is_ours(&dep.name)) {
            if !allowed.contains(&dep.name.as_str()) {
                problems.push(format!(
                    "{file}:{}: `{package}` must not depend on `{}` (allowed: {})",
                    dep.line,
                    dep.name,
                    if allowed.is_empty() {
                        "none of ours".to_string()
                    } else {
                        allowed.join(", ")
                    }
                ));
            }
        }
    }
    if let Ok(manifest) = fs::read_to_string(root.join("Cargo.toml")) {
        for dep in dependencies(&manifest).iter().filter(|dep| dep.path && !dep.version) {
            problems.push(format!(
                "Cargo.toml:{}: path dependency `{}` needs a version too",
                dep.line, dep.name
            ));
        }
    }
}

fn check_architecture(root: &Path, problems: &mut Vec<String>) {
    let found = ["docs/architecture.md", "docs/ARCHITECTURE.md"]
        .into_iter()
        .find_map(|name| Some((name, fs::read_to_string(root.join(name)).ok()?)));
    // The document is written after the first crates; until then there is nothing to check.
    let Some((doc_name, doc)) = found else { return };
    for (dir, _) in crate_manifests(root) {
        let Some(name) = dir.file_name().map(|name| name.to_string_lossy().into_owned()) else {
            continue;
        };
        if !names_crate(&doc, &name) {
            problems.push(format!("{doc_name}: does not describe `crates/{name}`"));
        }
    }
}

/// Whether `doc` mentions `crates/NAME` as a whole name (so `crates/ctx` is not `crates/ctx-fs`).
fn names_crate(doc: &str, name: &str) -> bool {
    let needle = format!("crates/{name}");
    doc.match_indices(&needle).any(|(at, _)| {
        let next = doc[at + needle.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::{Dependency, check, dependencies, dependency_section, names_crate};

    #[test]
    fn tidy() {
        let problems = check(&crate::project_root());
        assert!(
            problems.is_empty(),
            "tidy found {} problem(s):\n{}",
            problems.len(),
            problems.join("\n")
        );
    }

    #[test]
    fn finds_problems() {
        let root = std::env::temp_dir().join(format!("ctx-tidy-{}", std::process::id()));
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "crates/ctx-syntax/Cargo.toml",
            "[package]\nname = \"ctx-syntax\"\n[dependencies]\nctx-fs.workspace = true\n",
        );
        write("crates/ctx-syntax/src/lib.rs", "fn f() {} \n");
        write("crates/ctx-syntax/test_data/ok/a.rs", "data \n");
        write(
            "crates/ctx-fs/Cargo.toml",
            "[package]\nname = \"ctx-fs\"\n[dev-dependencies]\nctx-syntax = { path = \"../ctx-syntax\" }\n",
        );
        write("crates/ctx-fs/src/lib.rs", concat!("//! Fs.\n#[", "ignore]\nfn t() {}\n"));
        write("crates/ctx-new/Cargo.toml", "[package]\nname = \"ctx-new\"\n");
        write("Cargo.toml", "[workspace.dependencies]\nctx-fs = { path = \"crates/ctx-fs\" }\n");
        write("docs/architecture.md", "### crates/ctx-syntax\n");
        let mut problems = check(&root);
        std::fs::remove_dir_all(&root).unwrap();
        problems.sort();
        let expected = [
            "Cargo.toml:2: path dependency `ctx-fs` needs a version too",
            "crates/ctx-fs/Cargo.toml:4: path dependency `ctx-syntax`: declare it in the root [workspace.dependencies] and use `ctx-syntax.workspace = true`",
            concat!(
                "crates/ctx-fs/src/lib.rs:2: `#[",
                "ignore]`: test the error with a Result instead, or fix the test"
            ),
            "crates/ctx-new/Cargo.toml: crate `ctx-new` is not in the layering table of xtask/src/tidy.rs",
            "crates/ctx-syntax/Cargo.toml:4: `ctx-syntax` must not depend on `ctx-fs` (allowed: ctx-diagnostics)",
            "crates/ctx-syntax/src/lib.rs:1: does not start with a `//!` comment saying what it is",
            "crates/ctx-syntax/src/lib.rs:1: trailing whitespace",
            "docs/architecture.md: does not describe `crates/ctx-fs`",
            "docs/architecture.md: does not describe `crates/ctx-new`",
        ];
        assert_eq!(problems, expected);
    }

    fn dep(name: &str, dev: bool, path: bool, version: bool, line: usize) -> Dependency {
        Dependency { name: name.to_string(), dev, path, version, line }
    }

    #[test]
    fn sections() {
        assert_eq!(dependency_section("[dependencies]"), Some((false, None)));
        assert_eq!(dependency_section("[dev-dependencies]"), Some((true, None)));
        assert_eq!(dependency_section("[build-dependencies]"), Some((false, None)));
        assert_eq!(dependency_section("[workspace.dependencies]"), Some((false, None)));
        assert_eq!(dependency_section("[target.'cfg(unix)'.dependencies]"), Some((false, None)));
        assert_eq!(
            dependency_section("[dependencies.ctx-fs]"),
            Some((false, Some("ctx-fs".into())))
        );
        assert_eq!(dependency_section("[package]"), None);
        assert_eq!(dependency_section("[[bench]]"), None);
        assert_eq!(dependency_section("[lints]"), None);
    }

    #[test]
    fn manifest_dependencies() {
        let manifest = r#"
[package]
name = "ctx-x" # not a dependency

[dependencies]
ctx-syntax.workspace = true
nom = "8"
fs = { path = "../ctx-fs", package = "ctx-fs" }
local.path = "../local"

[dev-dependencies]
ctx-assemble = { workspace = true }

[[bench]]
name = "scan"
path = "benches/scan.rs"

[dependencies.ctx-preprocess]
path = "../ctx-preprocess"
version = "0.1"
"#;
        assert_eq!(
            dependencies(manifest),
            [
                dep("ctx-syntax", false, false, false, 6),
                dep("nom", false, false, true, 7),
                dep("ctx-fs", false, true, false, 8),
                dep("local", false, true, false, 9),
                dep("ctx-assemble", true, false, false, 12),
                dep("ctx-preprocess", false, true, true, 18),
            ]
        );
    }

    #[test]
    fn crate_names() {
        let doc = "### `crates/ctx-fs`\nand crates/ctx-syntax.";
        assert!(names_crate(doc, "ctx-fs"));
        assert!(names_crate(doc, "ctx-syntax"));
        assert!(!names_crate(doc, "ctx"));
        assert!(names_crate("see crates/ctx/src/lib.rs", "ctx"));
    }
}
