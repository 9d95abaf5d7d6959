//! Symbolic links: outward refused, inward followed, dangling, loops.

use ctx_fs::{Code, FileKind, Stat};

use crate::util::{Fixture, SECRET, code, message, read};

#[test]
fn outward_file_and_dir() {
    let fx = Fixture::new();
    fx.link("leak.txt", "../outside/secret.txt")
        .link("missing.txt", "../outside/missing.txt")
        .link("out", "../outside")
        .link("sub/deep/up", "../../../outside/secret.txt");
    let sb = fx.sandbox();
    assert_eq!(code(sb.resolve("leak.txt", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("out/secret.txt", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("out", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("sub/deep/up", None)), Some(Code::Outside));
    // The refusal reads the link, never its target: same answer if the target is missing.
    let a = message(&sb, "leak.txt");
    let b = message(&sb, "missing.txt");
    assert_eq!(a.replace("leak", "missing"), b);
}

#[test]
fn chained_and_absolute() {
    let fx = Fixture::new();
    fx.write("inside.md", "in");
    fx.link("a", "b").link("b", "c").link("c", "../outside/secret.txt");
    fx.link("abs_out", fx.outside.join("secret.txt").as_str());
    fx.link("abs_in", fx.path("inside.md").as_str());
    fx.link("dir/rel_in", "../inside.md");
    let sb = fx.sandbox();
    assert_eq!(code(sb.resolve("a", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("abs_out", None)), Some(Code::Outside));
    // Absolute targets are refused even when they point inside (as cap-std does).
    assert_eq!(code(sb.resolve("abs_in", None)), Some(Code::Outside));
    assert_eq!(read(&sb, "dir/rel_in").unwrap(), "in");
}

#[test]
fn inward_links_are_followed() {
    let fx = Fixture::new();
    fx.write("real/docs/a.md", "a").write("top.md", "top");
    fx.link("docs", "real/docs").link("real/docs/up.md", "../../top.md").link("l1", "l2");
    fx.link("l2", "real/./docs/../docs/a.md");
    let sb = fx.sandbox();
    let loc = sb.resolve("docs/a.md", None).unwrap();
    assert_eq!(loc.path(), "real/docs/a.md", "locations name the final target");
    assert_eq!(read(&sb, "docs/a.md").unwrap(), "a");
    assert_eq!(read(&sb, "docs/up.md").unwrap(), "top");
    assert_eq!(read(&sb, "l1").unwrap(), "a");
    let dir = sb.resolve("docs", None).unwrap();
    assert_eq!(dir.path(), "real/docs");
    let Stat { kind, .. } = sb.stat(&dir).unwrap();
    assert_eq!(kind, FileKind::Dir);
    // `..` in a path is lexical, before links: docs/.. is the workspace, not real/.
    assert_eq!(sb.resolve("docs/../top.md", None).unwrap().path(), "top.md");
}

#[test]
fn dangling_and_loops() {
    let fx = Fixture::new();
    fx.link("dangling", "nowhere.md").link("x", "y").link("y", "x").link("self", "self");
    fx.link("dir_loop", "dir_loop/sub");
    let sb = fx.sandbox();
    let err = sb.resolve("dangling", None).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    for looped in ["x", "y", "self", "dir_loop", "x/more"] {
        let err = sb.resolve(looped, None).unwrap_err();
        assert_eq!(err.code(), Code::NotFound, "{looped}");
        assert!(err.to_string().contains("too many levels of symbolic links"), "{err}");
    }
}

#[test]
fn links_never_read_outside() {
    let fx = Fixture::new();
    fx.link("a", "../outside").link("b", "a/secret.txt").link("c", "./../ws/../outside/secret.txt");
    fx.link("d/e", "../../outside/secret.txt");
    let sb = fx.sandbox();
    for name in ["a/secret.txt", "b", "c", "d/e", "d/../b"] {
        let result = read(&sb, name);
        assert!(!result.as_deref().unwrap_or("").contains(SECRET));
        assert_eq!(code(result), Some(Code::Outside), "{name}");
    }
}

#[test]
fn dot_dot_in_link_targets_is_physical() {
    let fx = Fixture::new();
    fx.write("f0", "top").write("deep/f0", "deep").write("deep/dir/f0", "deeper");
    fx.link("sub", "deep/dir").link("via", "sub/../f0").link("ghost", "missing/../f0");
    let sb = fx.sandbox();
    // As the OS takes it: `sub/..` is the parent of deep/dir, not the workspace.
    assert_eq!(read(&sb, "via").unwrap(), "deep");
    assert_eq!(std::fs::read_to_string(fx.path("via")).unwrap(), "deep");
    assert_eq!(sb.resolve("via", None).unwrap().path(), "deep/f0");
    assert_eq!(code(sb.resolve("ghost", None)), Some(Code::NotFound));
    assert!(std::fs::read_to_string(fx.path("ghost")).is_err());
    // A `..` written by the user stays lexical (assembly.md §3).
    assert_eq!(read(&sb, "sub/../f0").unwrap(), "top");
}
