//! Walks: ignore files, negation, hidden entries, links, limits, globs.

use ctx_fs::{Code, FileKind, Limits, SkipReason, Walk, WalkOptions};

use crate::util::{Fixture, code};

fn list(walk: &Walk) -> Vec<String> {
    walk.entries
        .iter()
        .map(|e| if e.kind == FileKind::Dir { format!("{}/", e.path) } else { e.path.to_string() })
        .collect()
}

fn skipped(walk: &Walk) -> Vec<(String, SkipReason)> {
    walk.skipped.iter().map(|s| (s.path.to_string(), s.reason)).collect()
}

fn tree() -> Fixture {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\nbuild-out/\n!keep.log\n")
        .write(".ignore", "by_ignore.md\n")
        .write(".ctxignore", "by_ctx.md\n# a comment\n\n")
        .write("a.md", "a")
        .write("b.log", "b")
        .write("keep.log", "keep")
        .write("by_ignore.md", "i")
        .write("by_ctx.md", "c")
        .write(".hidden.md", "h")
        .write(".hiddendir/x.md", "x")
        .write("node_modules/pkg/index.js", "js")
        .write("target/debug/x", "t")
        .write("dist/x.js", "d")
        .write("build/x.o", "b")
        .write(".venv/bin/python", "p")
        .write("__pycache__/x.pyc", "p")
        .write("build-out/x.md", "o")
        .write("src/main.rs", "fn main() {}")
        .write("src/.gitignore", "gen/\n!important.log\n")
        .write("src/gen/g.rs", "g")
        .write("src/important.log", "imp")
        .write("id_rsa", "key")
        .write(".env", "SECRET=1");
    fx.link("link_ok.md", "a.md")
        .link("link_named.log", "a.md")
        .link("link_to_ignored.md", "b.log")
        .link("link_to_hidden.md", ".hidden.md")
        .link("link_to_skipped_dir", "node_modules/pkg")
        .link("broken.md", "nowhere.md")
        .link("out.md", "../outside/secret.txt")
        .link("linkdir", "src")
        .link("src/up", "..");
    fx
}

#[test]
fn walk_honours_every_rule() {
    let fx = tree();
    let sb = fx.sandbox();
    let walk = sb.walk(&sb.workspace()).unwrap();
    assert_eq!(
        list(&walk),
        [
            "a.md",
            "keep.log",
            "link_ok.md",
            "linkdir/",
            "linkdir/important.log",
            "linkdir/main.rs",
            "src/",
            "src/important.log",
            "src/main.rs",
        ]
    );
    assert_eq!(
        skipped(&walk),
        [
            ("id_rsa".to_owned(), SkipReason::Denied),
            ("linkdir/up".to_owned(), SkipReason::Cycle),
            ("out.md".to_owned(), SkipReason::Outside),
            ("src/up".to_owned(), SkipReason::Cycle),
        ]
    );
    assert!(!walk.truncated);
    let entry = walk.entries.iter().find(|e| e.path == "linkdir/main.rs").unwrap();
    assert_eq!(entry.location.path(), "src/main.rs");
    assert!(entry.via_symlink);
    assert_eq!(entry.depth, 2);
    assert_eq!(walk.files().count(), 7);
    // Everything listed reads, without error.
    for file in walk.files() {
        sb.read_text(&file.location).unwrap();
    }
    // A file named directly is still readable, even when walks ignore it.
    assert_eq!(code(sb.read_path("b.log", None)), None);
    assert_eq!(code(sb.read_path("node_modules/pkg/index.js", None)), None);
}

#[test]
fn walk_of_a_subdirectory_applies_outer_ignore_files() {
    let fx = tree();
    fx.write("src/debug.log", "d");
    let sb = fx.sandbox();
    let src = sb.resolve("src", None).unwrap();
    let walk = sb.walk(&src).unwrap();
    assert_eq!(list(&walk), ["src/important.log", "src/main.rs"]);
}

/// An ignore file saved with a byte order mark (as some Windows editors save it) rules from
/// its first line, as git reads it; a lone `!` negates nothing and brings back no hidden
/// entry.
#[test]
fn a_byte_order_mark_and_a_lone_negation_change_nothing() {
    let fx = Fixture::new();
    fx.write(".gitignore", "\u{feff}secret.txt\n!\n")
        .write("sub/.ignore", "\u{feff}*.log\n")
        .write("secret.txt", "s")
        .write("notes.md", "n")
        .write("sub/a.log", "l")
        .write("sub/b.md", "b")
        .write(".hidden.md", "h");
    let sb = fx.sandbox();
    let walk = sb.walk(&sb.workspace()).unwrap();
    assert_eq!(list(&walk), ["notes.md", "sub/", "sub/b.md"]);
}

#[test]
fn settings_can_change() {
    let fx = tree();
    let mut ignore = ctx_fs::IgnoreSettings::default();
    ignore.skip_hidden = false;
    ignore.skip_dirs.clear();
    ignore.extra_rules.push("*.md".into());
    ignore.extra_rules.push("*.js".into());
    let sb = fx.builder().ignore(ignore).open(cap_std::ambient_authority()).unwrap();
    let walk = sb.walk(&sb.resolve("node_modules", None).unwrap()).unwrap();
    assert_eq!(list(&walk), ["node_modules/pkg/"]);
    let all = list(&sb.walk(&sb.workspace()).unwrap());
    assert!(all.contains(&".hiddendir/".to_owned()), "{all:?}");
    assert!(!all.iter().any(|p| p.ends_with(".md")), "{all:?}");
    assert!(!all.iter().any(|p| p.starts_with(".git/") || p == ".env"), "denied stay out");
}

#[test]
fn negation_and_precedence() {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.md\n")
        .write(".ignore", "!keep.md\n")
        .write(".ctxignore", "keep_not.md\n")
        .write("keep.md", "k")
        .write("keep_not.md", "n")
        .write("drop.md", "d")
        .write("docs/.gitignore", "!*.md\nsecret/\n")
        .write("docs/a.md", "a")
        .write("docs/secret/b.md", "b");
    let sb = fx.sandbox();
    let walk = sb.walk(&sb.workspace()).unwrap();
    assert_eq!(list(&walk), ["docs/", "docs/a.md", "keep.md"]);
}

#[test]
fn limits() {
    let fx = Fixture::new();
    for i in 0..5 {
        fx.write(&format!("f{i}.md"), "x");
    }
    fx.write("d1/d2/d3/deep.md", "deep");
    let mut limits = Limits::default();
    limits.max_walk_entries = 3;
    let sb = fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap();
    let walk = sb.walk(&sb.workspace()).unwrap();
    assert_eq!(list(&walk), ["d1/", "d1/d2/", "d1/d2/d3/"]);
    assert!(walk.truncated);
    let mut limits = Limits::default();
    limits.max_walk_depth = 2;
    let sb = fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap();
    let walk = sb.walk(&sb.workspace()).unwrap();
    assert_eq!(list(&walk)[..2], ["d1/", "d1/d2/"]);
    assert_eq!(walk.entries.len(), 7);
    assert_eq!(skipped(&walk), [("d1/d2".to_owned(), SkipReason::TooDeep)]);
}

/// The attack: a glob that matches nothing over a large tree (`**/nomatch*`), which keeps no
/// entry and so never reaches the entry limit. What must not happen: it walks the whole tree;
/// it stops after looking at ten times the limit, truncated.
#[test]
fn a_glob_that_keeps_nothing_stops_after_looking_at_enough() {
    let fx = Fixture::new();
    for d in 0..20 {
        for f in 0..20 {
            fx.write(&format!("d{d}/f{f}.md"), "x");
        }
    }
    let mut limits = Limits::default();
    limits.max_walk_entries = 5;
    let sb = fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap();
    let walk = sb.glob("**/nomatch*", None).unwrap();
    assert!(walk.entries.is_empty());
    assert!(walk.truncated, "a walk that looked at enough says it stopped");
    assert_eq!(walk.looked, 5 * ctx_fs::COUNT_PAST_LIMIT);
    let all = fx.sandbox().glob("**/nomatch*", None).unwrap();
    assert!(!all.truncated && all.looked == 420, "{}", all.looked);
}

#[test]
fn special_files_and_bad_names() {
    let fx = Fixture::new();
    fx.write("a.md", "a")
        .write("bad\u{200b}name.md", "x")
        .write("tab\there.md", "x")
        .write("x:y.md", "x");
    std::process::Command::new("mkfifo").arg(fx.path("pipe")).status().unwrap();
    let sb = fx.sandbox();
    let walk = sb.walk(&sb.workspace()).unwrap();
    assert_eq!(list(&walk), ["a.md"]);
    let reasons: Vec<SkipReason> = walk.skipped.iter().map(|s| s.reason).collect();
    assert_eq!(
        reasons,
        [SkipReason::BadName, SkipReason::NotRegular, SkipReason::BadName, SkipReason::BadName]
    );
    assert_eq!(SkipReason::NotRegular.code(), Some(Code::NotRegular));
}

#[test]
fn walk_errors() {
    let fx = tree();
    let sb = fx.sandbox();
    let file = sb.resolve("a.md", None).unwrap();
    assert_eq!(code(sb.walk(&file)), Some(Code::NotFound));
}

#[test]
fn globs() {
    let fx = tree();
    fx.write("docs/guide/intro.md", "i").write("docs/x.txt", "t");
    let sb = fx.sandbox();
    let paths = |pattern: &str| {
        let walk = sb.glob(pattern, None).unwrap();
        walk.files().map(|e| e.path.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(paths("*.md"), ["a.md", "link_ok.md"]);
    assert_eq!(paths("**/*.md"), ["a.md", "docs/guide/intro.md", "link_ok.md"]);
    assert_eq!(paths("docs/**/*.md"), ["docs/guide/intro.md"]);
    assert_eq!(paths("docs\\*"), ["docs/x.txt"]);
    assert_eq!(paths("src/*.{rs,log}"), ["src/important.log", "src/main.rs"]);
    assert_eq!(paths(&format!("{}/docs/*.txt", fx.ws)), ["docs/x.txt"]);
    let docs = sb.resolve("docs", None).unwrap();
    let walk = sb.glob("guide/*.md", Some(&docs)).unwrap();
    assert_eq!(walk.files().map(|e| e.path.as_str()).collect::<Vec<_>>(), ["docs/guide/intro.md"]);
    assert_eq!(code(sb.glob("../outside/*", None)), Some(Code::Outside));
    assert_eq!(code(sb.glob("/etc/*", None)), Some(Code::Outside));
    assert_eq!(code(sb.glob("*/../*", None)), Some(Code::BadPath));
    assert_eq!(code(sb.glob("a[", None)), Some(Code::BadPath));
    assert_eq!(code(sb.glob(".git/*", None)), Some(Code::Denied));
    assert_eq!(code(sb.glob("docs/\u{200b}*.md", None)), Some(Code::BadPath));
    assert_eq!(code(sb.glob("", None)), Some(Code::BadPath));
    fx.write(".github/ci.yml", "ci");
    assert_eq!(paths(".github/*.yml"), [".github/ci.yml"]);
    assert!(paths("**/*.yml").is_empty(), "hidden entries are skipped unless named");
}

#[test]
fn anchored_patterns_and_ignored_targets_deeper_down() {
    let fx = Fixture::new();
    fx.write(".gitignore", "/top.md\ndocs/*.tmp\n")
        .write("top.md", "t")
        .write("sub/top.md", "s")
        .write("docs/a.tmp", "a")
        .write("docs/b.md", "b")
        .write("src/.gitignore", "gen/\n")
        .write("src/gen/g.rs", "g")
        .write("src/lib.rs", "l");
    fx.link("to_gen.rs", "src/gen/g.rs")
        .link("to_tmp", "docs/a.tmp")
        .link("to_lib.rs", "src/lib.rs");
    let sb = fx.sandbox();
    let walk = sb.walk(&sb.workspace()).unwrap();
    assert_eq!(
        list(&walk),
        ["docs/", "docs/b.md", "src/", "src/lib.rs", "sub/", "sub/top.md", "to_lib.rs"]
    );
    assert!(walk.skipped.is_empty(), "{:?}", walk.skipped);
}

#[test]
fn walk_options_bound_one_walk() {
    let fx = Fixture::new();
    fx.write("a/b/c.md", "c").write("a/d.md", "d").write("e.md", "e").write("f.md", "f");
    let sb = fx.sandbox();
    let root = sb.workspace();
    // One level: the directory's own entries, nothing below them.
    let one = sb.walk_with(&root, WalkOptions::of(&sb).max_depth(1)).unwrap();
    assert_eq!(list(&one), ["a/", "e.md", "f.md"]);
    assert!(!one.truncated);
    // Two entries, then a truncated walk.
    let two = sb.walk_with(&root, WalkOptions::of(&sb).max_entries(2)).unwrap();
    assert_eq!(list(&two), ["a/", "a/b/"]);
    assert!(two.truncated);
    // The sandbox's own limits are untouched.
    assert_eq!(
        list(&sb.walk(&root).unwrap()),
        ["a/", "a/b/", "a/b/c.md", "a/d.md", "e.md", "f.md"]
    );
}

/// A walk of names alone (no `stat` of the entries the listing names) lists, skips, counts and
/// stops exactly as a full walk does, through ignore files, hidden entries, links (in and out
/// of the root, broken, in cycles), denied names, a FIFO and every limit; only the lengths,
/// times and inodes are left empty.
#[test]
fn a_walk_of_names_alone_is_the_full_walk_without_stats() {
    let fx = tree();
    fx.write(".github/ci.yaml", "on: push").write(".ignore", "by_ignore.md\n!/.github/\n");
    #[cfg(unix)]
    {
        let status = std::process::Command::new("mkfifo").arg(fx.path("pipe")).status().unwrap();
        assert!(status.success());
    }
    let sb = fx.sandbox();
    let root = sb.workspace();
    let src = sb.resolve("src", None).unwrap();
    let limits = [(usize::MAX, usize::MAX), (1, usize::MAX), (2, 3), (usize::MAX, 5)];
    for dir in [&root, &src] {
        for (depth, entries) in limits {
            let full = WalkOptions::of(&sb).max_depth(depth).max_entries(entries);
            let full = sb.walk_with(dir, full).unwrap();
            let names = WalkOptions::of(&sb).max_depth(depth).max_entries(entries).names_only();
            let names = sb.walk_with(dir, names).unwrap();
            let facts = |w: &Walk| {
                let entries = w.entries.iter();
                entries
                    .map(|e| (e.path.clone(), e.location.clone(), e.kind, e.depth, e.via_symlink))
                    .collect::<Vec<_>>()
            };
            assert_eq!(facts(&names), facts(&full), "{dir:?}, {depth}, {entries}");
            assert_eq!(skipped(&names), skipped(&full));
            let counts = |w: &Walk| (w.truncated, w.omitted, w.omitted_files, w.looked);
            assert_eq!(counts(&names), counts(&full));
            // Links are looked at (their targets' facts stand); nothing else is.
            for entry in names.entries.iter().filter(|e| !e.via_symlink) {
                assert_eq!((entry.len, entry.modified, entry.inode), (0, None, 0), "{entry:?}");
            }
        }
    }
    let all = sb.walk_with(&root, WalkOptions::of(&sb).names_only()).unwrap();
    assert!(list(&all).contains(&".github/ci.yaml".to_owned()), "{:?}", list(&all));
    #[cfg(unix)]
    assert!(skipped(&all).contains(&("pipe".to_owned(), SkipReason::NotRegular)));
}

/// ruff's `.ignore` brings back a hidden folder with `!/.github/`; the `ignore` crate (and
/// ripgrep) then walk it, and so does ctx. Other hidden entries stay out.
#[test]
fn a_negation_brings_back_a_hidden_folder() {
    let fx = Fixture::new();
    fx.write(".ignore", "!/.github/\n")
        .write(".github/workflows/ci.yaml", "on: push")
        .write(".hidden/x.md", "x")
        .write("src/a.rs", "a");
    let walk = fx.sandbox().walk(&fx.sandbox().workspace()).unwrap();
    assert_eq!(
        list(&walk),
        [".github/", ".github/workflows/", ".github/workflows/ci.yaml", "src/", "src/a.rs"]
    );
}
