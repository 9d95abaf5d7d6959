//! Data-driven cases: `tests/fixtures/<case>/` holds a workspace (`ws/`), the command
//! (`case.toml`: the document or prompt and the options), and the expected output: the
//! rendered content (`expected.out`) and the JSON object (`expected.json`, with
//! `elapsed_ms` zeroed). Carriage returns in `expected.out` are written `<CR>`.
//!
//! `case.toml` keys: `document` (a path in `ws/`) or `prompt` (a text, assembled as a
//! document named `-` in the root); `mode`, `format`; `defines = ["X=1"]`; `strict`,
//! `tokens`, `line_numbers`, `failure_markers`; `max_depth`, `max_lines`, `max_files`,
//! `max_tokens`, `max_includes`, `max_output_bytes`, `max_file_bytes`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctx_assemble::{Assembler, Format, Mode, Options};
use ctx_fs::Sandbox;
use expect_test::expect_file;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.toml").is_file())
        .collect();
    cases.sort();
    assert!(cases.len() > 10, "fixtures missing in {}", dir.display());
    cases
}

fn options(case: &toml::Table) -> Options {
    let mut options = Options::default();
    if case.contains_key("prompt") {
        options = Options::for_prompt();
    }
    let get_bool = |key: &str| case.get(key).and_then(toml::Value::as_bool);
    let get_num = |key: &str| case.get(key).and_then(toml::Value::as_integer).map(|n| n as u64);
    if let Some(mode) = case.get("mode").and_then(toml::Value::as_str) {
        options.mode = mode.parse::<Mode>().unwrap();
    }
    if let Some(format) = case.get("format").and_then(toml::Value::as_str) {
        options.format = format.parse::<Format>().unwrap();
    }
    if let Some(defines) = case.get("defines").and_then(toml::Value::as_array) {
        for define in defines {
            let define = define.as_str().unwrap();
            let (name, value) = define.split_once('=').unwrap_or((define, ""));
            options.defines.push((name.to_owned(), value.to_owned()));
        }
    }
    options.strict = get_bool("strict").unwrap_or(false);
    options.count_tokens = get_bool("tokens").unwrap_or(false);
    options.line_numbers = get_bool("line_numbers").unwrap_or(false);
    options.failure_markers = get_bool("failure_markers").unwrap_or(true);
    let limits = &mut options.limits;
    limits.max_depth = get_num("max_depth").map_or(limits.max_depth, |n| n as usize);
    limits.max_lines = get_num("max_lines").map_or(limits.max_lines, |n| n as usize);
    limits.max_files = get_num("max_files").map_or(limits.max_files, |n| n as usize);
    limits.max_tokens = get_num("max_tokens").map_or(limits.max_tokens, |n| n as usize);
    limits.max_includes = get_num("max_includes").map_or(limits.max_includes, |n| n as usize);
    limits.max_output_bytes = get_num("max_output_bytes").unwrap_or(limits.max_output_bytes);
    options
}

/// Assembles one case; returns the content and the JSON object with the time zeroed.
pub(crate) fn run_case(dir: &Path, prefetch: bool) -> (String, String) {
    let case: toml::Table =
        std::fs::read_to_string(dir.join("case.toml")).unwrap().parse().unwrap();
    let mut options = options(&case);
    options.prefetch = prefetch;
    let json_format = options.format == Format::Json;
    let root = dir.join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let mut fs_limits = ctx_fs::Limits::default();
    if let Some(n) = case.get("max_file_bytes").and_then(toml::Value::as_integer) {
        fs_limits.max_file_bytes = n as u64;
    }
    let sandbox = Sandbox::builder(root.to_str().unwrap())
        .limits(fs_limits)
        .open(cap_std::ambient_authority())
        .unwrap();
    let assembler = Assembler::new(Arc::new(sandbox), options);
    let mut assembly = match (case.get("document"), case.get("prompt")) {
        (Some(doc), _) => assembler.assemble_file(doc.as_str().unwrap()).unwrap(),
        (None, Some(prompt)) => assembler.assemble_str(prompt.as_str().unwrap(), "-"),
        _ => panic!("{}: case.toml needs `document` or `prompt`", dir.display()),
    };
    assembly.stats.elapsed_ms = 0.0;
    let json = assembly.to_json();
    let content = if json_format { json.clone() } else { assembly.content.clone() };
    (content, json)
}

#[test]
fn fixtures() {
    for dir in cases() {
        let (content, json) = run_case(&dir, true);
        // expect-test folds CRLF in expected files; keep carriage returns visible instead.
        let content = content.replace('\r', "<CR>");
        expect_file![dir.join("expected.out")].assert_eq(&content);
        expect_file![dir.join("expected.json")].assert_eq(&json);
    }
}

#[test]
fn streaming_gives_the_same_bytes() {
    for dir in cases() {
        let case: toml::Table =
            std::fs::read_to_string(dir.join("case.toml")).unwrap().parse().unwrap();
        let Some(doc) = case.get("document").and_then(toml::Value::as_str) else { continue };
        let sandbox = Sandbox::builder(dir.join("ws").to_str().unwrap())
            .open(cap_std::ambient_authority())
            .unwrap();
        let assembler = Assembler::new(Arc::new(sandbox), options(&case));
        let whole = assembler.assemble_file(doc).unwrap();
        let mut streamed = Vec::new();
        let assembly = assembler.assemble_file_to(doc, &mut streamed).unwrap();
        let streamed = String::from_utf8(streamed).unwrap();
        if assembler.options().format == Format::Json {
            assert!(streamed.starts_with('{'), "{}", dir.display());
        } else {
            assert_eq!(streamed, whole.content, "{}", dir.display());
        }
        assert_eq!(assembly.diagnostics, whole.diagnostics, "{}", dir.display());
    }
}
