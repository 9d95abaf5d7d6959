//! Property test: random paths over a random tree with inward and outward
//! links never yield a byte from outside, and agree with a lexical model.

use std::os::unix::fs::symlink;

use camino::Utf8PathBuf;
use ctx_fs::Content;
use proptest::prelude::*;

use crate::util::{Fixture, SECRET};

const DIRS: [&str; 4] = ["", "d0", "d0/d1", "e"];
const NAMES: [&str; 14] =
    ["f0", "f1", "d0", "d1", "e", "l0", "l1", "l2", "l3", "outside", "secret.txt", "ws", ".", ".."];
const TARGETS: [&str; 16] = [
    "f0",
    "../f0",
    "d0",
    "d0/d1",
    "d1/f1",
    "..",
    "../..",
    "../outside",
    "../../outside/secret.txt",
    "../../../outside",
    "l0",
    "l1",
    "ABS_OUT",
    "ABS_IN",
    "missing",
    "./f1",
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

fn build(links: &[(usize, usize, usize)]) -> Fixture {
    let fx = Fixture::new();
    for dir in DIRS {
        for file in ["f0", "f1"] {
            let rel = if dir.is_empty() { file.to_owned() } else { format!("{dir}/{file}") };
            fx.write(&rel, format!("IN:{rel}"));
        }
    }
    std::fs::write(fx.outside.join("f0"), SECRET).unwrap();
    for (i, &(dir, target, _)) in links.iter().enumerate() {
        let dir = DIRS[dir];
        let rel = if dir.is_empty() { format!("l{i}") } else { format!("{dir}/l{i}") };
        let target = match TARGETS[target] {
            "ABS_OUT" => fx.outside.join("secret.txt").to_string(),
            "ABS_IN" => fx.path("f0").to_string(),
            t => t.to_owned(),
        };
        symlink(target, fx.path(&rel)).unwrap();
    }
    fx
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn never_outside(
        links in prop::collection::vec((0..DIRS.len(), 0..TARGETS.len(), 0..1usize), 0..5),
        paths in prop::collection::vec(
            (anchor(), prop::collection::vec(prop::sample::select(NAMES.to_vec()), 0..6), any::<bool>()),
            1..12,
        ),
        fast in any::<bool>(),
    ) {
        let fx = build(&links);
        let sb = fx.builder().fast_path(fast).open(cap_std::ambient_authority()).unwrap();
        for (anchor, comps, backslash) in &paths {
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
                        prop_assert_eq!(err.code(), "E_OUTSIDE", "{}", written);
                    } else {
                        prop_assert!(
                            matches!(err.code(), "E_OUTSIDE" | "E_NOT_FOUND" | "E_NOT_REGULAR"),
                            "{}: {}", written, err
                        );
                    }
                }
            }
        }
    }
}
