//! Relative paths through the extra roots (assembly.md §2, rule 4): after the including
//! file's directory and the workspace root, each `--allow` root in order; found under several
//! of them is `E_AMBIGUOUS`, naming the candidates.

use std::path::Path;
use std::sync::Arc;

use ctx_assemble::{Assembler, Options};
use ctx_fs::Sandbox;
use ctx_syntax::Code;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn assembler(ws: &Path, allow: &[&Path]) -> Assembler {
    let mut builder = Sandbox::builder(ws.to_str().unwrap());
    for dir in allow {
        builder = builder.allow(dir.to_str().unwrap());
    }
    Assembler::new(
        Arc::new(builder.open(cap_std::ambient_authority()).unwrap()),
        Options::default(),
    )
}

#[test]
fn extra_roots_are_searched_in_order_after_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let (ws, one, two) = (dir.path().join("ws"), dir.path().join("one"), dir.path().join("two"));
    write(&ws.join("main.md"), "x\n");
    write(&one.join("only-one.md"), "from one\n");
    write(&two.join("docs/only-two.md"), "from two\n");
    write(&one.join("both.md"), "one\n");
    write(&two.join("both.md"), "two\n");
    write(&ws.join("mine.md"), "workspace\n");
    write(&two.join("mine.md"), "not this\n");
    let asm = assembler(&ws, &[&one, &two]);

    let found = asm.assemble_str("@[only-one.md]\n@[docs/only-two.md]\n@[mine.md]\n", "-");
    assert_eq!(found.content, "from one\nfrom two\nworkspace\n");
    assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);

    let ambiguous = asm.assemble_str("@[both.md]\n", "-");
    let error = ambiguous.references[0].error.as_ref().expect("ambiguous");
    assert_eq!(error.code, Code::Ambiguous);
    assert!(error.message.contains("one/both.md") && error.message.contains("two/both.md"));

    // A mention that is found nowhere stays a warning; one found under two roots is an error.
    let prompt = asm.assemble_str("see @nowhere.md and @both.md", "-");
    let codes: Vec<Code> = prompt.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::Unresolved, Code::Ambiguous]);
}

/// A link inside an expanded directory is shown under its own path, not its target's (so the
/// same file does not appear twice under one name).
#[cfg(unix)]
#[test]
fn links_in_expansions_keep_their_own_paths() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(&ws.join("d/real/a.md"), "x\n");
    write(&ws.join("d/b.md"), "y\n");
    std::os::unix::fs::symlink("real", ws.join("d/link")).unwrap();
    std::os::unix::fs::symlink("b.md", ws.join("d/c.md")).unwrap();
    let options = Options::for_prompt();
    let sandbox =
        Sandbox::builder(ws.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
    let assembly = Assembler::new(Arc::new(sandbox), options).assemble_str("@d/", "-");
    let shown: Vec<&str> = assembly
        .content
        .lines()
        .filter_map(|l| l.strip_prefix("<file path=\"")?.strip_suffix("\">"))
        .collect();
    assert_eq!(shown, ["d/b.md", "d/c.md", "d/link/a.md", "d/real/a.md"]);
}

/// A link named directly, or listed by `glob` and `grep`, keeps its own name too; the same
/// file under two names is two entries, never one name twice.
#[cfg(unix)]
#[test]
fn links_named_or_listed_by_tools_keep_their_own_paths() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(&ws.join("src/real.txt"), "hello\n");
    std::os::unix::fs::symlink("real.txt", ws.join("src/link.txt")).unwrap();
    std::os::unix::fs::symlink("src", ws.join("alias")).unwrap();
    let sandbox =
        Sandbox::builder(ws.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
    let asm = Assembler::new(Arc::new(sandbox), Options::for_prompt());
    let named = asm.assemble_str("@src/link.txt @alias/real.txt @src/real.txt", "-");
    let paths: Vec<&str> = named.references.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["src/link.txt", "alias/real.txt", "src/real.txt"]);
    let tools = asm.assemble_str(
        "@[glob{\"pattern\":\"src/*.txt\"}] @[grep{\"pattern\":\"hello\",\"uri\":\"src\"}]",
        "-",
    );
    assert!(tools.content.contains("src/link.txt\nsrc/real.txt\n"), "{}", tools.content);
    assert!(
        tools.content.contains("src/link.txt:1: hello\nsrc/real.txt:1: hello\n"),
        "{}",
        tools.content
    );
}
