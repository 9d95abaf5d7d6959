//! The mdBook dialect reads its links again in every file a link includes, a code file too
//! (docs/dialects.md): attacks on that reading, then what must not happen (no reach past the
//! roots, no ctx syntax woken in code, no hang, bounded output).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ctx_assemble::{Assembler, Assembly, Options};
use ctx_fs::Sandbox;
use ctx_syntax::Code;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn book(dir: &Path) -> Assembler {
    let sandbox =
        Sandbox::builder(dir.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
    let mut options = Options::default();
    options.syntax.mdbook = true;
    Assembler::new(Arc::new(sandbox), options)
}

/// Assembles `main.md` of `dir` with the dialect on, within a hang guard (generous for a
/// debug build on a loaded machine).
fn assemble(dir: &Path, chapter: &str) -> Assembly {
    write(&dir.join("main.md"), chapter);
    let started = Instant::now();
    let assembly = book(dir).assemble_file("main.md").unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assembly
}

fn codes(assembly: &Assembly) -> Vec<Code> {
    assembly.diagnostics.iter().map(|d| d.code).collect()
}

/// Code files that each include the next one twice, eighteen levels deep (2^18 leaves): the
/// include budget stops the run.
#[test]
fn a_bomb_of_code_files_ends_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    for level in 0..18 {
        let next = format!("l{}.rs", level + 1);
        let text = format!("{{{{#include {next}}}}}{{{{#include {next}}}}}\n");
        write(&dir.path().join(format!("l{level}.rs")), &text);
    }
    write(&dir.path().join("l18.rs"), "boom\n");
    let assembly = assemble(dir.path(), "```rust\n{{#include l0.rs}}\n```\n");
    assert!(codes(&assembly).contains(&Code::Budget), "{:?}", codes(&assembly));
    assert!(assembly.references.len() <= 10_001);
    assert!(assembly.content.len() < 1 << 20);
}

/// A code file that includes itself, directly or through a playground or a rustdoc part, is
/// a cycle at its first repeat, and ctx's depth limit holds for a chain of code files.
#[test]
fn code_files_keep_the_cycle_check_and_the_depth_limit() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.rs"), "a {{#include b.rs}}\n");
    write(&dir.path().join("b.rs"), "b {{#playground a.rs}}\n# {{#rustdoc_include b.rs:1}}\n");
    let assembly = assemble(dir.path(), "{{#include a.rs}}\n");
    assert_eq!(codes(&assembly), [Code::Cycle, Code::Cycle]);
    assert_eq!(assembly.content.matches("a ").count(), 1, "{}", assembly.content);

    for n in 0..30 {
        write(&dir.path().join(format!("d{n}.rs")), &format!("{n} {{{{#include d{}.rs}}}}", n + 1));
    }
    let assembly = assemble(dir.path(), "{{#include d0.rs}}\n");
    assert_eq!(codes(&assembly), [Code::Depth]);
    assert!(assembly.content.starts_with("0 1 2 ") && !assembly.content.contains(" 20 "));
}

/// Links in an included code file resolve from its own folder through the same sandbox: a
/// way out by `..`, an absolute path or a symbolic link reads nothing outside the root, and
/// no error shows what lies there.
#[test]
fn links_in_a_code_file_stay_inside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, outside) = (dir.path().join("ws"), dir.path().join("outside"));
    write(&outside.join("secret.txt"), "SECRET-CONTENT\n");
    let secret = outside.join("secret.txt");
    let code = format!(
        "{{{{#include ../../outside/secret.txt}}}}\n{{{{#include {}}}}}\n{{{{#include link.txt}}}}\n",
        secret.display()
    );
    write(&ws.join("code/a.rs"), &code);
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, ws.join("code/link.txt")).unwrap();
    let assembly = assemble(&ws, "```rust\n{{#include code/a.rs}}\n```\n");
    assert!(!assembly.content.contains("SECRET"), "{}", assembly.content);
    let errors = codes(&assembly);
    assert!(
        errors.len() == 3 && errors.iter().all(|c| c.severity() == ctx_syntax::Severity::Error)
    );
    for d in &assembly.diagnostics {
        assert!(!d.message.contains("SECRET"), "{}", d.message);
    }
}

/// Only mdBook's links are read in a code file: ctx's own syntax there stays as written
/// (an include, a directive, a mention, an escape), so a code file opens nothing more than
/// mdBook would. A Markdown file a link includes stays a ctx document.
#[test]
fn ctx_syntax_in_a_code_file_stays_text() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("notes.md"), "NOTES\n");
    let code = "// @[notes.md] @notes.md @{define X=1} @{X} \\@[x] \\{{#include notes.md}}\n";
    write(&dir.path().join("a.rs"), code);
    let assembly = assemble(dir.path(), "{{#include a.rs}}\n");
    let expected = "// @[notes.md] @notes.md @{define X=1} @{X} \\@[x] {{#include notes.md}}\n";
    assert_eq!(assembly.content, expected);
    assert!(assembly.diagnostics.is_empty(), "{:?}", assembly.diagnostics);
    assert_eq!(assembly.references.len(), 1);

    write(&dir.path().join("part.md"), "@[notes.md]\n");
    let assembly = assemble(dir.path(), "{{#include part.md}} end\n");
    assert_eq!(assembly.content, "NOTES\n end\n");
}

/// The byte order mark of a file a link includes is kept where mdBook keeps it, written
/// visibly as every U+FEFF past the start of the output is; the chapter's own mark and that
/// of a file ctx's own syntax includes are taken off, as before.
#[test]
fn a_byte_order_mark_is_kept_visible() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("bom.rs"), "\u{feff}fn a() {}\nfn b() {}\n");
    let assembly = assemble(dir.path(), "\u{feff}[{{#include bom.rs}}] [{{#include bom.rs:2}}]\n");
    assert_eq!(assembly.content, "[\\u{FEFF}fn a() {}\nfn b() {}] [fn b() {}]\n");
    assert!(!assembly.content.contains('\u{feff}'));
    assert_eq!(codes(&assembly), [Code::HiddenText]);
    let d = &assembly.diagnostics[0];
    assert_eq!((d.file.as_str(), d.line, d.column), ("bom.rs", 1, 1));

    let assembly = assemble(dir.path(), "@[bom.rs]\n");
    assert_eq!(assembly.content, "fn a() {}\nfn b() {}\n");
    assert!(assembly.diagnostics.is_empty());
}
