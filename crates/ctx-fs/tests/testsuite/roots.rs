//! Roots are judged where they really are: a root that a project file asks for passes the
//! root rule on the real path of its opened handle, and a root inside the workspace is opened
//! through the workspace, so a link cannot carry either somewhere its written path would not
//! be allowed.

use std::os::unix::fs::symlink;

use ctx_fs::{Code, RootKind};

use crate::util::{Fixture, SECRET, code};

/// A home folder beside the workspace, with a credential folder and a project in it.
fn with_home(fx: &Fixture) -> camino::Utf8PathBuf {
    let home = fx.base.join("home");
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(home.join(".aws/credentials"), SECRET).unwrap();
    std::fs::create_dir_all(home.join(".config/gh")).unwrap();
    std::fs::write(home.join(".config/gh/hosts.yml"), SECRET).unwrap();
    std::fs::create_dir_all(home.join("proj")).unwrap();
    std::fs::write(home.join("proj/a.c"), "int a;\n").unwrap();
    home
}

#[test]
fn a_project_root_through_a_link_is_judged_where_the_link_leads() {
    let fx = Fixture::new();
    let home = with_home(&fx);
    let src = fx.base.join("src");
    std::fs::create_dir_all(&src).unwrap();
    symlink("/etc", src.join("evil")).unwrap();
    symlink("/", src.join("disk")).unwrap();
    symlink(&home, src.join("home")).unwrap();
    symlink(home.join(".aws"), src.join("aws")).unwrap();
    symlink(home.join(".config"), src.join("config")).unwrap();
    symlink(home.join("proj"), src.join("proj")).unwrap();
    let mut builder = fx.builder().home(Some(home.clone()));
    let attacks = ["evil", "disk", "home", "aws", "config"];
    for name in attacks.iter().chain(["proj"].iter()) {
        builder = builder.project_root(src.join(name), RootKind::Source);
    }
    let sb = builder.open(cap_std::ambient_authority()).unwrap();
    let refused: Vec<String> =
        sb.refused_roots().iter().map(|r| r.written.file_name().unwrap().to_owned()).collect();
    assert_eq!(refused, attacks, "every link to a refused folder is refused");
    for root in sb.refused_roots() {
        assert_eq!(root.error.code(), Code::Config);
        assert!(root.error.to_string().contains("not opened: it leads to"), "{}", root.error);
    }
    // What was opened is the real project folder, under its real path.
    let roots: Vec<_> = sb.roots().skip(1).collect();
    assert_eq!(roots.len(), 1);
    assert_eq!(sb.root_path(roots[0]), home.join("proj"));
    for path in ["/etc/hostname", "/etc/passwd"] {
        assert!(code(sb.read_path(path, None)).is_some(), "{path} is read");
    }
    let aws = home.join(".aws/credentials");
    assert!(sb.read_path(aws.as_str(), None).is_err());
    let (_, content) = sb.read_path(home.join("proj/a.c").as_str(), None).unwrap();
    assert!(matches!(content, ctx_fs::Content::Text { .. }));
}

#[test]
fn the_same_roots_named_by_the_user_are_the_users_choice() {
    let fx = Fixture::new();
    let sb = fx
        .builder()
        .allow(fx.outside.clone())
        .open(cap_std::ambient_authority())
        .expect("a user's root outside the workspace opens");
    let (_, content) = sb.read_path(fx.outside.join("secret.txt").as_str(), None).unwrap();
    assert!(matches!(content, ctx_fs::Content::Text { .. }));
    // A project's root that cannot be opened is listed, never an error of the whole sandbox;
    // a user's is an error.
    let missing = fx.base.join("missing");
    let sb = fx
        .builder()
        .project_root(missing.clone(), RootKind::Allowed)
        .open(cap_std::ambient_authority())
        .unwrap();
    assert_eq!(sb.refused_roots().len(), 1);
    assert_eq!(sb.roots().count(), 1);
    let err = fx.builder().allow(missing).open(cap_std::ambient_authority()).unwrap_err();
    assert_eq!(err.code(), Code::Config);
}

#[test]
fn a_root_inside_the_workspace_never_leads_out_of_it() {
    let fx = Fixture::new();
    fx.write("vendor/lib.md", "vendored\n");
    fx.link("out", "../outside");
    fx.mkdir("deep");
    fx.link("deep/up", "../../outside");
    fx.mkdir(".git");
    // Named by the user or by a project, a root whose path lies in the workspace is opened
    // through the workspace's handle: the link out is refused like any link out.
    for (rel, expected) in
        [("out", Code::Outside), ("deep/up", Code::Outside), (".git", Code::Denied)]
    {
        let err =
            fx.builder().allow(fx.path(rel)).open(cap_std::ambient_authority()).expect_err(rel);
        assert_eq!(err.code(), expected, "{rel}: {err}");
        assert!(!err.to_string().contains(SECRET));
        let sb = fx
            .builder()
            .project_root(fx.path(rel), RootKind::Allowed)
            .open(cap_std::ambient_authority())
            .unwrap();
        assert_eq!(sb.refused_roots()[0].error.code(), expected, "{rel}");
        assert_eq!(sb.roots().count(), 1, "{rel}");
    }
    let sb = fx.builder().allow(fx.path("vendor")).open(cap_std::ambient_authority()).unwrap();
    let vendor = sb.roots().nth(1).unwrap();
    assert_eq!(sb.root_path(vendor), fx.ws.join("vendor"));
    let location = sb.resolve("lib.md", Some(&ctx_fs::Location::root_of(vendor))).unwrap();
    assert!(matches!(sb.read_text(&location).unwrap(), ctx_fs::Content::Text { .. }));
}

/// Paths asked together, folder by folder, where one names a root nested in the workspace
/// (`vendor`, allowed on its own): `resolve_many` must find that root as `resolve` does, not
/// take the path for an entry of the folder before it. The paths in one folder are written
/// one after another, as a project lists them, so that the folder's lexical work is shared.
#[test]
fn paths_asked_together_find_a_nested_root_as_each_does() {
    let fx = Fixture::new();
    fx.write("vendor/lib.md", "vendored\n");
    fx.write("a.md", "a\n");
    fx.write("b.md", "b\n");
    let sb = fx.builder().allow(fx.path("vendor")).open(cap_std::ambient_authority()).unwrap();
    let ws = fx.ws.as_str();
    let written: Vec<String> = [
        format!("{ws}/a.md"),
        format!("{ws}/b.md"),
        format!("{ws}/vendor"),
        format!("{ws}/vendor/lib.md"),
        format!("{ws}/missing.md"),
        "a.md".to_owned(),
        "vendor".to_owned(),
        "b.md".to_owned(),
        format!("{ws}/a.md"),
        format!("{ws}/.git"),
        format!("{ws}/a.md/"),
        format!("{ws}/.."),
    ]
    .into();
    let refs: Vec<&str> = written.iter().map(String::as_str).collect();
    for (w, (many, stat)) in
        refs.iter().zip(sb.resolve_many(&refs).into_iter().zip(sb.stat_many(&refs)))
    {
        let each = sb.resolve(w, None);
        match (&many, &each) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{w}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{w}"),
            _ => panic!("{w}: many {many:?}, each {each:?}"),
        }
        assert_eq!(stat.map(|(l, _)| l).ok(), each.ok(), "{w}");
    }
    let vendor = sb.resolve(&format!("{ws}/vendor"), None).unwrap();
    assert_ne!(vendor.root(), sb.workspace().root(), "the nested root is its own");
}
