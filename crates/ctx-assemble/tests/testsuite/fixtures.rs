//! Data-driven cases: `tests/fixtures/<case>/` holds a workspace (`ws/`), the command
//! (`case.toml`: the document or prompt and the options), and the expected output: the
//! rendered content (`expected.out`) and the JSON object (`expected.json`, with
//! `elapsed_ms` zeroed). Carriage returns in `expected.out` are written `<CR>`.
//!
//! `case.toml` keys: `document` (a path in `ws/`) or `prompt` (a text, assembled as a
//! document named `-` in the root); `mode`, `format`; `defines = ["X=1"]`; `strict`,
//! `tokens`, `line_numbers`, `on_error`; `max_depth`, `max_lines`, `max_files`,
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

/// A case's `case.toml`; a key it does not know is an error, so that a typo cannot make a
/// case test nothing.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    document: Option<String>,
    prompt: Option<String>,
    mode: Option<String>,
    format: Option<String>,
    #[serde(default)]
    defines: Vec<String>,
    #[serde(default)]
    strict: bool,
    #[serde(default)]
    tokens: bool,
    #[serde(default)]
    line_numbers: bool,
    on_error: Option<String>,
    max_depth: Option<usize>,
    max_lines: Option<usize>,
    max_files: Option<usize>,
    max_tokens: Option<usize>,
    max_includes: Option<usize>,
    max_output_bytes: Option<u64>,
    max_file_bytes: Option<u64>,
}

fn read_case(dir: &Path) -> Case {
    let text = std::fs::read_to_string(dir.join("case.toml")).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}/case.toml: {e}", dir.display()))
}

fn options(case: &Case) -> Options {
    let mut options =
        if case.prompt.is_some() { Options::for_prompt() } else { Options::default() };
    if let Some(mode) = &case.mode {
        options.mode = mode.parse::<Mode>().unwrap();
    }
    if let Some(format) = &case.format {
        options.format = format.parse::<Format>().unwrap();
    }
    for define in &case.defines {
        let (name, value) = define.split_once('=').unwrap_or((define, ""));
        options.defines.push((name.to_owned(), value.to_owned()));
    }
    options.strict = case.strict;
    options.count_tokens = case.tokens;
    options.line_numbers = case.line_numbers;
    if let Some(on_error) = &case.on_error {
        options.on_error = on_error.parse().unwrap();
    }
    let limits = &mut options.limits;
    limits.max_depth = case.max_depth.unwrap_or(limits.max_depth);
    limits.max_lines = case.max_lines.unwrap_or(limits.max_lines);
    limits.max_files = case.max_files.unwrap_or(limits.max_files);
    limits.max_tokens = case.max_tokens.unwrap_or(limits.max_tokens);
    limits.max_includes = case.max_includes.unwrap_or(limits.max_includes);
    limits.max_output_bytes = case.max_output_bytes.unwrap_or(limits.max_output_bytes);
    options
}

fn sandbox(dir: &Path, case: &Case) -> Sandbox {
    let root = dir.join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let mut fs_limits = ctx_fs::Limits::default();
    if let Some(n) = case.max_file_bytes {
        fs_limits.max_file_bytes = n;
    }
    Sandbox::builder(root.to_str().unwrap())
        .limits(fs_limits)
        .open(cap_std::ambient_authority())
        .unwrap()
}

/// Assembles one case; returns the content and the JSON object with the time zeroed.
pub(crate) fn run_case(dir: &Path, prefetch: bool) -> (String, String) {
    let case = read_case(dir);
    let mut options = options(&case);
    options.prefetch = prefetch;
    let json_format = options.format == Format::Json;
    let assembler = Assembler::new(Arc::new(sandbox(dir, &case)), options);
    let mut assembly = match (&case.document, &case.prompt) {
        (Some(doc), _) => assembler.assemble_file(doc).unwrap(),
        (None, Some(prompt)) => assembler.assemble_str(prompt, "-"),
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

/// The JSON text with the run's own time zeroed, byte for byte otherwise.
fn zero_elapsed(json: &str) -> String {
    let at = json.find("\"elapsed_ms\": ").expect("stats.elapsed_ms") + "\"elapsed_ms\": ".len();
    let end = json[at..].find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap() + at;
    format!("{}0.0{}", &json[..at], &json[end..])
}

#[test]
fn streaming_gives_the_same_bytes() {
    for dir in cases() {
        let case = read_case(&dir);
        let assembler = Assembler::new(Arc::new(sandbox(&dir, &case)), options(&case));
        let mut streamed = Vec::new();
        let (whole, assembly) = match (&case.document, &case.prompt) {
            (Some(doc), _) => (
                assembler.assemble_file(doc).unwrap(),
                assembler.assemble_file_to(doc, &mut streamed).unwrap(),
            ),
            (None, Some(prompt)) => (
                assembler.assemble_str(prompt, "-"),
                assembler.assemble_str_to(prompt, "-", &mut streamed).unwrap(),
            ),
            _ => unreachable!("checked by the fixtures test"),
        };
        let streamed = String::from_utf8(streamed).unwrap();
        if assembler.options().format == Format::Json {
            // The same bytes, but for the run's own time.
            let whole = zero_elapsed(&whole.to_json());
            assert_eq!(zero_elapsed(&streamed), whole, "{}", dir.display());
        } else {
            assert_eq!(streamed, whole.content, "{}", dir.display());
        }
        assert_eq!(assembly.diagnostics, whole.diagnostics, "{}", dir.display());
    }
}

#[test]
fn unknown_case_keys_are_refused() {
    let err = toml::from_str::<Case>("document = \"a.md\"\nmax_line = 3\n").unwrap_err();
    assert!(err.to_string().contains("max_line"), "{err}");
}
