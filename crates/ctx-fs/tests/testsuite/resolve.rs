//! Resolution: relative, `..`, absolute, drive and allowed roots, hygiene.

use ctx_fs::{Code, ErrorKind, RootId, Severity};

use crate::util::{Fixture, code, message, read};

#[test]
fn relative_and_dot_dot_inside() {
    let fx = Fixture::new();
    fx.write("a/b.md", "b").write("c.md", "c").write("a..b", "dots");
    let sb = fx.sandbox();
    assert_eq!(read(&sb, "a/b.md").unwrap(), "b");
    assert_eq!(read(&sb, "a/../c.md").unwrap(), "c");
    assert_eq!(read(&sb, "./a/./b.md").unwrap(), "b");
    assert_eq!(read(&sb, "a..b").unwrap(), "dots");
    assert_eq!(read(&sb, "a\\b.md").unwrap(), "b");
    // `..` is lexical: `x` need not exist.
    let loc = sb.resolve("a/x/../b.md", None).unwrap();
    assert_eq!(loc.path(), "a/b.md");
    assert_eq!(loc.root(), RootId::WORKSPACE);
}

#[test]
fn relative_to_base() {
    let fx = Fixture::new();
    fx.write("docs/guide/intro.md", "intro").write("docs/shared.md", "shared");
    let sb = fx.sandbox();
    let file = sb.resolve("docs/guide/intro.md", None).unwrap();
    let dir = file.parent().unwrap();
    assert_eq!(dir.path(), "docs/guide");
    assert_eq!(sb.resolve("../shared.md", Some(&dir)).unwrap().path(), "docs/shared.md");
    assert_eq!(sb.resolve("intro.md", Some(&dir)).unwrap().path(), "docs/guide/intro.md");
    assert_eq!(code(sb.resolve("../../../x", Some(&dir))), Some(Code::Outside));
    assert_eq!(sb.resolve_in_workspace("docs/shared.md").unwrap().path(), "docs/shared.md");
    assert_eq!(sb.resolve(".", None).unwrap(), sb.workspace());
}

#[test]
fn dot_dot_outside() {
    let fx = Fixture::new();
    fx.write("x.md", "x");
    let sb = fx.sandbox();
    assert_eq!(code(sb.resolve("../outside/secret.txt", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("..", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("a/../../x", None)), Some(Code::Outside));
    // Re-entering the same root through its parent is still climbing out.
    assert_eq!(code(sb.resolve("../ws/x.md", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("..\\outside\\secret.txt", None)), Some(Code::Outside));
}

#[test]
fn outside_refusals_reveal_nothing() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    let existing = message(&sb, "../outside/secret.txt");
    let missing = message(&sb, "../outside/missing.txt");
    assert_eq!(existing.replace("secret", "missing"), missing);
    let abs_existing = fx.outside.join("secret.txt");
    let abs_missing = fx.outside.join("missing.txt");
    let a = message(&sb, abs_existing.as_str());
    let b = message(&sb, abs_missing.as_str());
    assert_eq!(a.replace("secret", "missing"), b);
    assert!(!sb.exists(abs_existing.as_str(), None));
    assert!(!sb.exists(abs_missing.as_str(), None));
    assert!(!sb.exists("../outside/secret.txt", None));
    assert!(existing.starts_with("path is outside the allowed roots: ../outside/secret.txt"));
}

#[test]
fn absolute_paths() {
    let fx = Fixture::new();
    fx.write("a/b.md", "b");
    let sb = fx.sandbox();
    let abs = fx.path("a/b.md");
    assert_eq!(read(&sb, abs.as_str()).unwrap(), "b");
    assert_eq!(sb.resolve(abs.as_str(), None).unwrap().path(), "a/b.md");
    let dotted = format!("{}/../ws/a/b.md", fx.ws);
    assert_eq!(read(&sb, &dotted).unwrap(), "b", "absolute paths normalise lexically");
    assert_eq!(code(sb.resolve("/etc/passwd", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve(fx.base.as_str(), None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve(fx.outside.join("secret.txt").as_str(), None)), Some(Code::Outside));
    // A workspace given by a non-canonical path still matches absolute paths through it.
    let odd = format!("{}/../ws", fx.ws);
    let sb2 = ctx_fs::Sandbox::builder(odd.as_str()).open(cap_std::ambient_authority()).unwrap();
    assert_eq!(read(&sb2, abs.as_str()).unwrap(), "b");
}

#[test]
fn drive_and_unc_paths() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    assert_eq!(code(sb.resolve("C:\\Windows\\win.ini", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("c:/x", None)), Some(Code::Outside));
    for bad in ["C:x", "\\\\server\\share\\x", "\\\\?\\C:\\x", "\\??\\C:\\x", "//server/x"] {
        assert_eq!(code(sb.resolve(bad, None)), Some(Code::BadPath), "{bad}");
    }
}

#[test]
fn allowed_roots() {
    let fx = Fixture::new();
    fx.write("w.md", "w");
    let shared = fx.base.join("shared");
    std::fs::create_dir_all(shared.join("sub")).unwrap();
    std::fs::write(shared.join("sub/s.md"), "s").unwrap();
    let sb = fx.builder().allow(shared.clone()).open(cap_std::ambient_authority()).unwrap();
    let loc = sb.resolve(shared.join("sub/s.md").as_str(), None).unwrap();
    assert_eq!(loc.root().index(), 1);
    assert_eq!(loc.path(), "sub/s.md");
    assert_eq!(sb.root_path(loc.root()), shared);
    // `..` out of the workspace into another root is fine, out of every root is not.
    assert_eq!(sb.resolve("../shared/sub/s.md", None).unwrap(), loc);
    let dir = loc.parent().unwrap();
    assert_eq!(sb.resolve("../../ws/w.md", Some(&dir)).unwrap().root(), RootId::WORKSPACE);
    assert_eq!(code(sb.resolve("../outside/secret.txt", None)), Some(Code::Outside));
    assert_eq!(code(sb.resolve("../../outside/secret.txt", Some(&dir))), Some(Code::Outside));
    assert_eq!(sb.roots().count(), 2);
}

#[test]
fn hygiene() {
    let fx = Fixture::new();
    fx.write("ok.md", "ok");
    let sb = fx.sandbox();
    for bad in [
        "a\0b",
        "a\nb.md",
        "ok.md\r",
        "\u{1b}[31m",
        "a\u{85}",
        ".g\u{200c}it/config",
        "o\u{200b}k.md",
        "\u{feff}ok.md",
        "CON",
        "docs/nul.txt",
        "com1.md",
        "LPT3",
        "conin$",
        "ok.md.",
        "ok.md ",
        ".env.",
        "ok.md::$DATA",
        "dir:$INDEX_ALLOCATION",
        "",
    ] {
        let err = sb.resolve(bad, None).expect_err(bad);
        assert_eq!(err.kind(), ErrorKind::BadPath, "{bad:?}");
        assert!(!err.to_string().chars().any(|c| c.is_control()), "{err}");
    }
    let long_name = "a".repeat(256);
    assert_eq!(code(sb.resolve(&long_name, None)), Some(Code::BadPath));
    assert_eq!(code(sb.resolve(&"a".repeat(255), None)), Some(Code::NotFound));
    let long_path = vec!["abcdefghij"; 400].join("/");
    assert!(long_path.len() > 4096);
    assert_eq!(code(sb.resolve(&long_path, None)), Some(Code::BadPath));
    let err = sb.resolve("a\u{7}b", None).unwrap_err();
    assert_eq!(err.to_string(), "invalid path: a\\u{7}b (control character in path)");
    assert_eq!(err.path(), "a\\u{7}b");
}

#[test]
fn missing() {
    let fx = Fixture::new();
    fx.write("file.md", "x");
    let sb = fx.sandbox();
    let err = sb.resolve("nope.md", None).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(err.to_string(), "no such file or directory: nope.md");
    assert_eq!(code(sb.resolve("file.md/x", None)), Some(Code::NotFound));
    assert_eq!(code(sb.resolve("no/such/dir/x", None)), Some(Code::NotFound));
    assert!(sb.exists("file.md", None));
    assert!(!sb.exists("nope.md", None));
}

#[test]
fn bad_configuration() {
    let fx = Fixture::new();
    let err = fx.builder().deny("a[").open(cap_std::ambient_authority()).unwrap_err();
    assert_eq!(err.code(), Code::Config);
    let err = ctx_fs::Sandbox::builder(fx.path("missing")).open(cap_std::ambient_authority());
    assert_eq!(code(err), Some(Code::Config));
}

#[test]
fn api_shapes() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<ctx_fs::Sandbox>();
    send_sync::<ctx_fs::Error>();
    let fx = Fixture::new();
    fx.write("a/b/c.md", "c").write(".env", "X=1");
    let sb = fx.sandbox();
    let loc = sb.resolve("a/b/c.md", None).unwrap();
    assert_eq!(loc.parent().unwrap().path(), "a/b");
    assert_eq!(loc.parent().unwrap().parent().unwrap().parent().unwrap(), sb.workspace());
    assert_eq!(sb.workspace().parent(), None);
    assert!(!sb.exists(".env", None), "denied entries do not exist for ctx");
    assert_eq!(sb.limits().max_file_bytes, 1024 * 1024);
    // Every kind has its own code, an error code, and displays as it.
    let mut codes: Vec<Code> = ErrorKind::ALL.iter().map(|kind| kind.code()).collect();
    for kind in ErrorKind::ALL {
        assert_eq!(kind.code().severity(), Severity::Error, "{kind:?}");
        assert_eq!(kind.to_string(), kind.code().as_str());
    }
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), ErrorKind::ALL.len(), "two kinds share a code");
    assert_eq!(ErrorKind::Permission.code(), Code::Permission);
    assert_eq!(ErrorKind::Io.code(), Code::Io);
    assert_eq!(ErrorKind::Config.code(), Code::Config);
    let err = sb.read_text(&sb.workspace()).unwrap_err();
    assert_eq!(err.to_string(), "not a regular file: .");
}

#[test]
fn home_paths_resolve_only_inside_a_home_root() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.base.join("home/notes")).unwrap();
    std::fs::write(fx.base.join("home/notes/n.md"), "n").unwrap();
    std::fs::write(fx.base.join("home/.env"), "X=1").unwrap();
    let home = Some(fx.base.join("home"));
    let open = |builder: ctx_fs::SandboxBuilder| builder.open(cap_std::ambient_authority());

    let sb = open(fx.builder().home(home.clone())).unwrap();
    let err = sb.resolve("~/notes/n.md", None).unwrap_err();
    assert_eq!(err.code(), Code::Outside);
    assert!(err.to_string().contains("--allow '~'"), "{err}");

    let sb = open(fx.builder().home(home.clone()).allow("~")).unwrap();
    let found = sb.resolve("~/notes/n.md", None).unwrap();
    assert_eq!(sb.root_kind(found.root()), ctx_fs::RootKind::Home);
    assert_eq!(found.path(), "notes/n.md");
    assert_eq!(code(sb.resolve("~\\notes\\n.md", None)), None);
    assert_eq!(code(sb.resolve("~/.env", None)), Some(Code::Denied));
    assert_eq!(code(sb.resolve("~/../ws", None)), None, "the workspace is a root too");
    // `~user` is a name like any other.
    assert_eq!(code(sb.resolve("~user/x", None)), Some(Code::NotFound));

    let sb = open(fx.builder().home(home.clone()).allow("~/notes")).unwrap();
    assert_eq!(code(sb.resolve("~/notes/n.md", None)), None);
    assert_eq!(code(sb.resolve("~/.env", None)), Some(Code::Outside));

    let err = open(fx.builder().home(None).allow("~")).unwrap_err();
    assert_eq!(err.code(), Code::Config);
}
