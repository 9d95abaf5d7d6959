//! The outline view through the facade: `Context::outline` and the `outline` tool, and what
//! they must never do (leak a path outside the roots, follow a link out, hang, grow without
//! bound).

#![allow(clippy::disallowed_methods)] // Tests build their workspaces on disk.

use std::time::{Duration, Instant};

use ctx::{Code, Context, OutlineOptions};

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("src/net")).unwrap();
    std::fs::write(
        ws.join("src/retry.rs"),
        "/// Retries.\npub fn retry_with_timeout() -> u32 {\n    1\n}\n\nstruct Backoff;\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/net/pool.py"),
        "class Pool:\n    def get(self):\n        return 1\n",
    )
    .unwrap();
    std::fs::write(ws.join("src/data.json"), "{}\n").unwrap();
    std::fs::write(ws.join("README.md"), "# Title\n\n## Usage\n").unwrap();
    dir
}

#[test]
fn a_folder_is_outlined_in_walk_order_with_lines() {
    let dir = workspace();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let outline = ctx.outline(&["src"], &OutlineOptions::default());
    expect_test::expect![[r#"
        src/net/pool.py (3 lines)
          L1-3 class Pool:
            L2-3 def get(self):
        src/retry.rs (6 lines)
          L2-4 pub fn retry_with_timeout() -> u32 {
          L6 struct Backoff;
        [... 1 file of kinds without definitions not outlined ...]
    "#]]
    .assert_eq(&outline.text);
    // The same inputs, the same bytes.
    assert_eq!(ctx.outline(&["src"], &OutlineOptions::default()).text, outline.text);
}

#[test]
fn the_tool_sits_beside_tree() {
    let dir = workspace();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let assembly = ctx.assemble_str("Map:\n@[outline{\"uri\":\"src/retry.rs\"}]\n");
    assert!(!assembly.has_errors(), "{:?}", assembly.diagnostics);
    assert!(assembly.content.contains("L2-4 pub fn retry_with_timeout() -> u32 {"));
    let bad = ctx.assemble_str("@[outline{\"uri\":\"src\",\"depth\":2}]\n");
    assert!(bad.diagnostics.iter().any(|d| d.code == Code::ToolArgs), "{:?}", bad.diagnostics);
}

#[test]
fn a_budget_is_kept_and_the_cut_said_in_band() {
    let dir = workspace();
    let many: String = (0..400).map(|i| format!("pub fn item_{i}() {{}}\n")).collect();
    std::fs::write(dir.path().join("src/many.rs"), many).unwrap();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let options = OutlineOptions::default().max_tokens(Some(300)).prompt(Some("retry".into()));
    let outline = ctx.outline(&["src"], &options);
    assert!(ctx::tokens::count(&outline.text) <= 300, "{}", outline.text);
    assert!(outline.text.contains("retry_with_timeout"), "ranked first: {}", outline.text);
    assert!(outline.text.contains("left out to fit"), "{}", outline.text);
    assert!(outline.warnings.iter().any(|(code, _)| *code == Code::TokenBudget));
    // The tool's budget too.
    let tool = ctx.assemble_str("@[outline{\"uri\":\"src\",\"max_tokens\":120}]");
    assert!(tool.content.contains("left out to fit"), "{}", tool.content);
}

#[test]
fn attack_a_path_outside_the_roots_leaks_nothing() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.rs"), "fn secret_name() {}\n").unwrap();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let far = outside.path().join("secret.rs");
    for path in ["../secret.rs", far.to_str().unwrap(), "/etc"] {
        let outline = ctx.outline(&[path], &OutlineOptions::default());
        assert!(!outline.text.contains("secret_name"), "{}", outline.text);
        assert!(!outline.warnings.is_empty());
        let tool = ctx.assemble_str(&format!("@[outline{{\"uri\":{path:?}}}]"));
        assert!(tool.has_errors(), "{path}");
        assert!(!tool.content.contains("secret_name"));
    }
}

#[cfg(unix)]
#[test]
fn attack_a_link_out_of_the_root_is_not_followed() {
    let dir = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.rs"), "fn secret_name() {}\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("src/out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.rs"), dir.path().join("src/s.rs"))
        .unwrap();
    let ctx = Context::builder().root(dir.path()).build().unwrap();
    let outline = ctx.outline(&["src"], &OutlineOptions::default());
    assert!(!outline.text.contains("secret_name"), "{}", outline.text);
    assert!(!outline.text.contains(outside.path().to_str().unwrap()));
    let direct = ctx.outline(&["src/s.rs"], &OutlineOptions::default());
    assert!(!direct.text.contains("secret_name"), "{}", direct.text);
}

#[test]
fn attack_hostile_files_end_bounded() {
    let dir = workspace();
    // One line of 50 MB (over the file cap unless lifted), a file of 100 000 definitions,
    // nesting 10 000 deep, hidden characters in a signature.
    let line = format!("fn f() {{ \"{}\" }}\n", "x".repeat(50 << 20));
    std::fs::write(dir.path().join("src/long.rs"), line).unwrap();
    let many: String = (0..100_000).map(|i| format!("fn f{i}() {{}}\n")).collect();
    std::fs::write(dir.path().join("src/many.rs"), many).unwrap();
    let deep = "mod m {\n".repeat(10_000) + &"}\n".repeat(10_000);
    std::fs::write(dir.path().join("src/deep.rs"), deep).unwrap();
    std::fs::write(dir.path().join("src/hidden.rs"), "fn admin\u{202E}gnp.exe() {}\n").unwrap();
    let started = Instant::now();
    let ctx = Context::builder().root(dir.path()).max_file_bytes(64 << 20).build().unwrap();
    let outline = ctx.outline(&["src"], &OutlineOptions::default().max_tokens(Some(8000)));
    assert!(started.elapsed() < Duration::from_secs(120), "a hang guard");
    assert!(ctx::tokens::count(&outline.text) <= 8000);
    assert!(!outline.text.contains('\u{202E}'), "made visible");
    assert!(outline.text.contains("left out to fit 8000 tokens"), "{}", outline.text);
    assert!(!outline.text.contains("too large"), "{}", outline.text);
    let kept: usize = outline.fitted.files.iter().map(|f| f.entries.len()).sum();
    assert!(kept < 8000, "{kept}");
    // Under the lifted cap the long file is outlined: no second cap refuses it.
    let long = ctx.outline(&["src/long.rs"], &OutlineOptions::default());
    assert!(long.text.starts_with("src/long.rs (1 line)\n  L1 fn f() {"), "{}", long.text);
    assert!(!long.text.contains("too large"), "{}", long.text);
    assert!(long.text.len() < 1000, "the signature is cut: {}", long.text.len());
    // Under the default file cap the long file is said, not read.
    let capped = Context::builder().root(dir.path()).build().unwrap();
    let outline = capped.outline(&["src/long.rs"], &OutlineOptions::default());
    assert!(outline.text.contains("not outlined: too large"), "{}", outline.text);
}
