//! The servers, driven in-process: the language server's warm re-check of a 200-file rule set
//! after a one-character edit and a completion on a large generated tree, next to `ctx check`
//! of the same rule set from a cold process; the MCP server's warm `assemble` tool call on the
//! examples.
//!
//! `CTX_BENCH_TREE_FILES` sets the size of the completion tree (default 20 000 files; the
//! issue's figure is 100 000).

#![allow(clippy::disallowed_methods)] // The bench writes its fixtures on disk.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use divan::Bencher;
use lsp_server::{Request, RequestId};
use lsp_types::Url;
use serde_json::json;

fn main() {
    divan::main();
}

/// A workspace with `rules/main.md` including 200 rule files of 40 lines each.
fn rules() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let rules = dir.path().join("rules/parts");
        std::fs::create_dir_all(&rules).unwrap();
        let mut main = String::from("# Rules\n\n");
        for n in 0..200 {
            let body: String =
                (0..40).map(|l| format!("Rule {n}, line {l}: keep functions short.\n")).collect();
            std::fs::write(rules.join(format!("r{n:03}.md")), body).unwrap();
            main.push_str(&format!("@[parts/r{n:03}.md]\n"));
        }
        std::fs::write(dir.path().join("rules/main.md"), main).unwrap();
        dir
    })
    .path()
}

/// A tree of `CTX_BENCH_TREE_FILES` files in directories of 100.
fn tree() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let files: usize = std::env::var("CTX_BENCH_TREE_FILES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(20_000);
        let dir = tempfile::tempdir().unwrap();
        for n in 0..files {
            let sub = dir.path().join(format!("src/m{:04}", n / 100));
            if n % 100 == 0 {
                std::fs::create_dir_all(&sub).unwrap();
            }
            std::fs::write(sub.join(format!("handler_{n}.rs")), "").unwrap();
        }
        std::fs::write(dir.path().join("main.md"), "@[src/m0042/hand").unwrap();
        dir
    })
    .path()
}

fn server(root: &Path) -> ctx_lsp::Server {
    let overlay = ctx::fs::Overlay::new();
    let ctx = ctx::Context::builder().root(root).overlay(overlay.clone()).build().unwrap();
    ctx_lsp::Server::new(ctx, overlay)
}

fn uri(path: PathBuf) -> Url {
    Url::from_file_path(path.canonicalize().unwrap()).unwrap()
}

/// Diagnostics of `rules/main.md` after a one-character edit of its unsaved text.
#[divan::bench]
fn lsp_recheck_200_files_warm(bencher: Bencher<'_, '_>) {
    let root = rules();
    let mut server = server(root);
    let uri = uri(root.join("rules/main.md"));
    let text = std::fs::read_to_string(root.join("rules/main.md")).unwrap();
    server.open(uri.clone(), text.clone(), 0);
    assert!(server.diagnostics(&uri).is_empty());
    let mut version = 0;
    bencher.bench_local(|| {
        version += 1;
        let edited =
            if version % 2 == 0 { text.replacen("Rules", "Rulez", 1) } else { text.clone() };
        server.open(uri.clone(), edited, version);
        server.diagnostics(&uri)
    });
}

/// `ctx check rules/main.md` of the same rule set, from a new process each time.
#[divan::bench(sample_count = 10)]
fn ctx_check_200_files_cold_process() {
    let out = Command::new(env!("CARGO_BIN_EXE_ctx"))
        .args(["check", "rules/main.md"])
        .current_dir(rules())
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// A completion after `@[src/m0042/hand` on the generated tree: the directory's entries and
/// the ranked matches over the whole tree.
#[divan::bench(sample_count = 10)]
fn lsp_completion_large_tree(bencher: Bencher<'_, '_>) {
    let root = tree();
    let mut server = server(root);
    let uri = uri(root.join("main.md"));
    server.open(uri.clone(), "@[src/m0042/hand".to_owned(), 0);
    let params =
        json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 16 } });
    bencher.bench_local(|| {
        let request =
            Request::new(RequestId::from(1), "textDocument/completion".to_owned(), params.clone());
        let response = server.request(request);
        assert!(response.error.is_none());
        response
    });
}

/// An MCP `tools/call` of `assemble` on `examples/rules/main.md`, warm.
#[divan::bench]
fn mcp_assemble_examples_warm(bencher: Bencher<'_, '_>) {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let ctx = ctx::Context::builder().root(examples).build().unwrap();
    let server = ctx_mcp::Server::new(ctx);
    let mut args = serde_json::Map::new();
    args.insert("path".to_owned(), json!("rules/main.md"));
    assert_eq!(server.call("assemble", &args).unwrap().is_error, Some(false));
    // The call and its result as JSON, as the session sends it (without the framing).
    bencher.bench_local(|| serde_json::to_value(server.call("assemble", &args).unwrap()));
}
