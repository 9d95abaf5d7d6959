//! Property test: random paths over a random tree with inward and outward
//! links never yield a byte from outside, and agree with a lexical model.

use std::os::unix::fs::symlink;

use camino::Utf8PathBuf;
use ctx_fs::{Code, Content};
use proptest::prelude::*;

use crate::util::{Fixture, SECRET};

const DIRS: [&str; 6] = ["", "d0", "d0/d1", "e", "d1", "e/d0"];
/// Path components, weighted towards names that exist.
fn component() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        3 => prop::sample::select(vec!["f0", "f1"]),
        3 => prop::sample::select(vec!["d0", "d1", "e"]),
        4 => prop::sample::select(vec!["l0", "l1", "l2", "l3"]),
        2 => Just(".."),
        1 => prop::sample::select(vec![".", "outside", "secret.txt", "ws"]),
    ]
}

/// Link targets: inward files and directories, chains, outward, absolute and dangling.
const TARGETS: [&str; 20] = [
    "f0",
    "../f0",
    "d0/f1",
    "../d0/d1/f0",
    "./f1",
    "l0",
    "l1",
    "d1/f1",
    "d0",
    "..",
    "../e",
    "../outside",
    "../../outside/secret.txt",
    "../../../outside",
    "../../..",
    "ABS_OUT",
    "ABS_IN",
    "missing",
    "../d0/../../outside/f0",
    "e/../f0",
];

#[derive(Clone, Debug)]
enum Anchor {
    Relative,
    Workspace,
    Base,
    Root,
}

fn anchor() -> impl Strategy<Value = Anchor> {
    prop_oneof![
        4 => Just(Anchor::Relative),
        1 => Just(Anchor::Workspace),
        1 => Just(Anchor::Base),
        1 => Just(Anchor::Root),
    ]
}

/// Lexical containment: the in-root components, or `None` when outside.
fn model(fx: &Fixture, anchor: &Anchor, comps: &[&str]) -> Option<Vec<String>> {
    let ws: Vec<String> =
        fx.ws.as_str().split('/').filter(|c| !c.is_empty()).map(String::from).collect();
    let start: Vec<String> = match anchor {
        Anchor::Relative => Vec::new(),
        Anchor::Workspace => ws.clone(),
        Anchor::Base => ws[..ws.len() - 1].to_vec(),
        Anchor::Root => Vec::new(),
    };
    let mut out = start;
    for comp in comps {
        match *comp {
            "." => {}
            ".." => {
                if out.pop().is_none() && matches!(anchor, Anchor::Relative) {
                    return None;
                }
            }
            name => out.push(name.to_owned()),
        }
    }
    if matches!(anchor, Anchor::Relative) {
        return Some(out);
    }
    out.starts_with(&ws).then(|| out[ws.len()..].to_vec())
}

/// Files `f0` and `f1` in every directory, and links `l0` to `l3` in every
/// directory with the targets `links` picks.
fn build(links: &[usize]) -> Fixture {
    let fx = Fixture::new();
    for dir in DIRS {
        for file in ["f0", "f1"] {
            let rel = if dir.is_empty() { file.to_owned() } else { format!("{dir}/{file}") };
            fx.write(&rel, format!("IN:{rel}"));
        }
    }
    std::fs::write(fx.outside.join("f0"), SECRET).unwrap();
    for (i, &target) in links.iter().enumerate() {
        let dir = DIRS[i / LINKS_PER_DIR];
        let name = format!("l{}", i % LINKS_PER_DIR);
        let rel = if dir.is_empty() { name } else { format!("{dir}/{name}") };
        let target = match TARGETS[target] {
            "ABS_OUT" => fx.outside.join("secret.txt").to_string(),
            "ABS_IN" => fx.path("f0").to_string(),
            t => t.to_owned(),
        };
        symlink(target, fx.path(&rel)).unwrap();
    }
    fx
}

const LINKS_PER_DIR: usize = 4;

/// The components of the tree's directory `dir` followed by `tail`.
fn under<'a>(dir: usize, tail: &[&'a str]) -> Vec<&'a str> {
    let mut comps: Vec<&str> = DIRS[dir].split('/').filter(|c| !c.is_empty()).collect();
    comps.extend(tail.iter().copied());
    comps
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn never_outside(
        links in prop::collection::vec(0..TARGETS.len(), DIRS.len() * LINKS_PER_DIR),
        paths in prop::collection::vec(
            (anchor(), 0..DIRS.len(), prop::collection::vec(component(), 0..4), any::<bool>()),
            1..16,
        ),
        fast in any::<bool>(),
    ) {
        let fx = build(&links);
        let sb = fx.builder().fast_path(fast).open(cap_std::ambient_authority()).unwrap();
        for (anchor, dir, tail, backslash) in &paths {
            // A directory of the tree, then random components, so that many paths hit.
            let comps = under(*dir, tail);
            let comps = &comps;
            let sep = if *backslash { "\\" } else { "/" };
            let body = comps.join(sep);
            let written = match anchor {
                Anchor::Relative if body.is_empty() => ".".to_owned(),
                Anchor::Relative => body.clone(),
                Anchor::Workspace => format!("{}{sep}{body}", fx.ws),
                Anchor::Base => format!("{}{sep}{body}", fx.base),
                Anchor::Root => format!("/{body}"),
            };
            let expected = model(&fx, anchor, comps);
            match sb.read_path(&written, None) {
                Ok((location, content)) => {
                    let inside = expected.clone();
                    prop_assert!(inside.is_some(), "{written}: read although lexically outside");
                    let text = match content {
                        Content::Text { text, .. } => text.to_string(),
                        other => panic!("{written}: {other:?}"),
                    };
                    prop_assert!(!text.contains(SECRET), "{written}: leaked");
                    prop_assert!(text.starts_with("IN:"), "{written}: {text}");
                    // The OS agrees on where the lexical path leads.
                    let lexical = fx.ws.join(inside.unwrap().join("/"));
                    let real = Utf8PathBuf::try_from(std::fs::canonicalize(&lexical).unwrap()).unwrap();
                    prop_assert_eq!(&real, &fx.ws.join(location.path()), "{}", written);
                    prop_assert_eq!(text, format!("IN:{}", location.path()));
                }
                Err(err) => {
                    prop_assert!(!err.to_string().contains(SECRET));
                    if expected.is_none() {
                        prop_assert_eq!(err.code(), Code::Outside, "{}", written);
                    } else if err.code() == Code::NotFound {
                        // The OS finds no file there either.
                        let lexical = fx.ws.join(expected.clone().unwrap().join("/"));
                        prop_assert!(!lexical.is_file(), "{}: {}", written, err);
                    } else {
                        prop_assert!(
                            matches!(err.code(), Code::Outside | Code::NotFound | Code::NotRegular),
                            "{}: {}", written, err
                        );
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// `resolve_many` gives what `resolve` gives for each path: the same location or the same
    /// error, with whole folders asked at once (so that they are listed), denied names and
    /// links among them.
    #[test]
    fn many_resolve_and_stat_as_each(
        links in prop::collection::vec(0..TARGETS.len(), DIRS.len() * LINKS_PER_DIR),
        folders in prop::collection::vec(
            (0..DIRS.len(), prop::collection::vec(component(), 0..3)),
            1..5,
        ),
        paths in prop::collection::vec(
            (0..DIRS.len(), prop::collection::vec(component(), 0..4)),
            0..12,
        ),
        fast in any::<bool>(),
    ) {
        // The root's `l0` always leads to `d0`, so that `l0/d1` is a folder reached by a link.
        let mut links = links;
        links[0] = TARGETS.iter().position(|t| *t == "d0").unwrap();
        let fx = build(&links);
        for dir in DIRS {
            let rel = if dir.is_empty() { ".env".to_owned() } else { format!("{dir}/.env") };
            fx.write(&rel, "KEY=1");
        }
        // A configured glob that only a canonical path matches when a link leads into `d0/d1`.
        let sb = fx
            .builder()
            .fast_path(fast)
            .deny("d0/d1/f1")
            .open(cap_std::ambient_authority())
            .unwrap();
        let mut written: Vec<String> = Vec::new();
        // Whole folders, reached through links too, so that they are listed.
        let through_link = (0, vec!["l0", "d1"]);
        for (dir, tail) in folders.iter().chain([&through_link]) {
            let comps = under(*dir, tail);
            for name in ["f0", "f1", "l0", "l1", "l2", "l3", ".env", "d0", "d1", "e", "missing"] {
                let mut path = comps.clone();
                path.push(name);
                written.push(path.join("/"));
            }
        }
        for (dir, tail) in &paths {
            let comps = under(*dir, tail);
            written.push(if comps.is_empty() { ".".to_owned() } else { comps.join("/") });
        }
        written.push(format!("{}/d0/f0", fx.ws));
        written.push(format!("{}/d0/f1", fx.ws));
        let refs: Vec<&str> = written.iter().map(String::as_str).collect();
        let many = sb.resolve_many(&refs);
        prop_assert_eq!(many.len(), written.len());
        for (w, got) in written.iter().zip(many) {
            let each = sb.resolve(w, None);
            match (got, each) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", w),
                (Err(a), Err(b)) => {
                    prop_assert_eq!(a.code(), b.code(), "{}", w);
                    prop_assert_eq!(a.to_string(), b.to_string(), "{}", w);
                }
                (a, b) => prop_assert!(false, "{w}: many {a:?}, each {b:?}"),
            }
        }
        // `stat_many` gives what `resolve_stat` gives for each path, and `resolve_stat` the
        // location `resolve` gives with the entry's `stat`.
        for (w, got) in written.iter().zip(sb.stat_many(&refs)) {
            let each = sb.resolve_stat(w, None);
            match (&each, sb.resolve(w, None)) {
                (Ok((a, stat)), Ok(b)) => {
                    prop_assert_eq!(a, &b, "{}", w);
                    prop_assert_eq!(stat, &sb.stat(&b).unwrap(), "{}", w);
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string(), "{}", w),
                (a, b) => prop_assert!(false, "{w}: resolve_stat {a:?}, resolve {b:?}"),
            }
            match (got, each) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", w),
                (Err(a), Err(b)) => {
                    prop_assert_eq!(a.code(), b.code(), "{}", w);
                    prop_assert_eq!(a.to_string(), b.to_string(), "{}", w);
                }
                (a, b) => prop_assert!(false, "{w}: stat_many {a:?}, each {b:?}"),
            }
        }
    }
}
