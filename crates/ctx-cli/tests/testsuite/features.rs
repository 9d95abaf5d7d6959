//! Builds without the optional features: the commands that need them say plainly that this
//! build lacks them, with exit status 2, and do nothing else (`cargo test -p ctx-cli
//! --no-default-features`).

#[cfg(not(all(feature = "lsp", feature = "mcp", feature = "picker")))]
use assert_cmd::Command;

/// Runs `args` in an empty folder; the code and standard error.
#[cfg(not(all(feature = "lsp", feature = "mcp", feature = "picker")))]
fn missing(args: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::TempDir::new().unwrap();
    let out = Command::cargo_bin("ctx")
        .unwrap()
        .current_dir(dir.path())
        .env("CTX_CONFIG_DIR", "/nonexistent/ctx-config")
        .env("CTX_CACHE_DIR", dir.path().join("cache"))
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
