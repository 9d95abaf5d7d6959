//! Builds without the optional features: the commands that need them say plainly that this
//! build lacks them, with exit status 2, and do nothing else (`cargo test -p ctx-cli
//! --no-default-features`); tree-sitter's symbols, off by default, are refused on the command
//! line and a warning in the configuration. With `--features tree-sitter`, the index takes
//! its symbols from the grammars.

use std::path::Path;

use assert_cmd::Command;
use tempfile::TempDir;

/// Runs `args` in an empty folder; the code and standard error.
#[cfg(not(all(feature = "lsp", feature = "mcp", feature = "picker")))]
fn missing(args: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::TempDir::new().unwrap();
    run_in(dir.path(), &dir.path().join("cache"), args)
}

/// Runs `args` in `dir` with its cache in `cache`; the code, standard output and standard
/// error.
fn run_in(dir: &Path, cache: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("ctx")
        .unwrap()
        .current_dir(dir)
        .env("CTX_CONFIG_DIR", "/nonexistent/ctx-config")
        .env("CTX_CACHE_DIR", cache)
        .args(args)
        .write_stdin("")
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code(), text(out.stdout), text(out.stderr))
}

#[cfg(not(feature = "lsp"))]
#[test]
fn without_lsp_the_language_server_is_refused() {
    let (code, stdout, stderr) = missing(&["lsp"]);
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "ctx: error: this ctx was built without the language server (cargo feature `lsp`)\n"
    );
}

#[cfg(not(feature = "mcp"))]
#[test]
fn without_mcp_the_agent_server_is_refused() {
    let (code, stdout, stderr) = missing(&["mcp"]);
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert!(stderr.contains("built without the Model Context Protocol server"), "{stderr}");
}

/// Refused before anything is ranked: no index is built or stored.
#[cfg(not(feature = "picker"))]
#[test]
fn without_picker_interactive_is_refused_before_ranking() {
    let (code, stdout, stderr) = missing(&["suggest", "--interactive", "retry"]);
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert!(stderr.contains("built without the picker (cargo feature `picker`)"), "{stderr}");
}

/// A workspace of two Rust files, the second calling the first.
fn rust_workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/retry.rs"), "pub fn retry() {}\n").unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {\n    retry();\n}\n").unwrap();
    dir
}

/// Asked for on the command line, tree-sitter is refused before anything is indexed: no index
/// is stored.
#[cfg(not(feature = "tree-sitter"))]
#[test]
fn without_tree_sitter_its_symbols_are_refused() {
    let (dir, cache) = (rust_workspace(), TempDir::new().unwrap());
    for args in [
        &["index", "--symbols", "tree-sitter"][..],
        &["suggest", "--symbols", "tree-sitter", "retry"],
    ] {
        let (code, stdout, stderr) = run_in(dir.path(), cache.path(), args);
        assert_eq!(code, Some(2), "{args:?}");
        assert_eq!(stdout, "");
        assert_eq!(
            stderr,
            "ctx: error: --symbols tree-sitter: this ctx was built without tree-sitter (cargo \
             feature `tree-sitter`); the default, --symbols scan, needs no grammar\n"
        );
    }
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}

/// A configuration may be shared by builds with and without tree-sitter: there it is a
/// warning with its place, and the index takes its symbols from the scanner.
#[cfg(not(feature = "tree-sitter"))]
#[test]
fn without_tree_sitter_a_configured_tree_sitter_is_a_warning() {
    let (dir, cache) = (rust_workspace(), TempDir::new().unwrap());
    std::fs::write(
        dir.path().join("ctx.toml"),
        "max_tokens = 100\nsuggest_symbols = \"tree-sitter\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run_in(dir.path(), cache.path(), &["index", "--format", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("ctx.toml:2:1: warning[W_CONFIG]: `suggest_symbols = \"tree-sitter\"` ignored: this ctx was built without tree-sitter"), "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["symbol_source"], "scan");
    assert_eq!(json["definitions"], 2);
}

/// With the feature, both sources work and an index of the other source is rebuilt.
#[cfg(feature = "tree-sitter")]
#[test]
fn with_tree_sitter_the_index_takes_its_symbols_from_the_grammars() {
    let (dir, cache) = (rust_workspace(), TempDir::new().unwrap());
    let run = |args: &[&str]| run_in(dir.path(), cache.path(), args);
    let (code, stdout, stderr) = run(&["index", "--symbols", "tree-sitter", "--format", "json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (&json["symbol_source"], &json["definitions"], &json["indexed"]),
        (&"tree-sitter".into(), &2.into(), &2.into())
    );
    let (code, stdout, stderr) =
        run(&["suggest", "--symbols", "tree-sitter", "--format", "json", "retry"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("src/retry.rs"), "{stdout}");
    let (_, stdout, _) = run(&["index", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((&json["symbol_source"], &json["indexed"]), (&"scan".into(), &2.into()));
}
