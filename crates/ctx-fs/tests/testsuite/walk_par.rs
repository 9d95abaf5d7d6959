//! The walk on every core answers as the serial walk does, entry for entry and note for note:
//! ignore files at every level, denied and hidden entries, links to files, to folders already
//! walked or not yet, back to an ancestor and out of the root, every limit.

use ctx_fs::{Limits, Sandbox};

use crate::util::Fixture;

/// Both walks of `dir` (the workspace when `None`) are the same.
fn same(sb: &Sandbox, dir: Option<&str>) {
    let at = match dir {
        Some(dir) => sb.resolve(dir, None).unwrap(),
        None => sb.workspace(),
    };
    let serial = sb.walk(&at);
    let parallel = sb.walk_parallel(&at);
    match (serial, parallel) {
        (Ok(serial), Ok(parallel)) => assert_eq!(parallel, serial, "{dir:?}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("{a:?} against {b:?}"),
    }
}

/// Folders beside one another, each with its own rules, links and refusals.
fn forest() -> Fixture {
    let fx = Fixture::new();
    fx.write(".gitignore", "*.log\nbuild-out/\n!keep.log\n")
        .write("id_rsa", "key")
        .write(".env", "SECRET=1")
        .write("z.md", "z")
        .write("server.pem", "pem")
        .write("keep.log", "k");
    for d in 0..12 {
        fx.write(&format!("d{d:02}/a.md"), "a")
            .write(&format!("d{d:02}/b.log"), "b")
            .write(&format!("d{d:02}/sub/c.rs"), "c")
            .write(&format!("d{d:02}/sub/.gitignore"), "gen/\n!important.log\n")
            .write(&format!("d{d:02}/sub/gen/g.rs"), "g")
            .write(&format!("d{d:02}/sub/important.log"), "i")
            .write(&format!("d{d:02}/sub/deep/er/est/e.rs"), "e")
            .write(&format!("d{d:02}/node_modules/x.js"), "x")
            .write(&format!("d{d:02}/.secret/s.rs"), "s")
            .write(&format!("d{d:02}/sub/.env.local"), "S=1")
            .write(&format!("d{d:02}/sub/cert.key"), "k");
        fx.link(&format!("d{d:02}/up"), "..")
            .link(&format!("d{d:02}/sub/to_a.md"), "../a.md")
            .link(&format!("d{d:02}/out.md"), "../../outside/secret.txt")
            .link(&format!("d{d:02}/broken.md"), "nowhere.md");
    }
    fx
}

#[test]
fn the_parallel_walk_is_the_serial_walk() {
    let fx = forest();
    let sb = fx.sandbox();
    same(&sb, None);
    same(&sb, Some("d03"));
    same(&sb, Some("d03/sub"));
    same(&sb, Some("d03/sub/deep/er/est"));
    let walk = sb.walk_parallel(&sb.workspace()).unwrap();
    assert!(walk.entries.iter().any(|e| e.path == "d11/sub/deep/er/est/e.rs" && e.depth == 6));
    assert!(!walk.entries.iter().any(|e| e.path.as_str().contains("secret")));
}

/// The attack: links from one folder into another, walked on another thread, where the
/// serial walk calls one of them a cycle; and a link at the top to a folder.
#[test]
fn links_across_folders_answer_as_the_serial_walk() {
    let fx = forest();
    fx.link("d01/sub/to_d07", "../../d07/sub").link("d07/sub/to_d01", "../../d01");
    same(&fx.sandbox(), None);
    let fx = forest();
    fx.link("aa_link", "d05");
    same(&fx.sandbox(), None);
    let fx = forest();
    fx.link("d09/loop", "../d09");
    same(&fx.sandbox(), None);
}

#[test]
fn every_limit_answers_as_the_serial_walk() {
    let fx = forest();
    for entries in [1, 3, 12, 13, 40, 100, 1000] {
        let mut limits = Limits::default();
        limits.max_walk_entries = entries;
        same(&fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap(), None);
    }
    for depth in [0, 1, 2, 3, 4, 6] {
        let mut limits = Limits::default();
        limits.max_walk_depth = depth;
        same(&fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap(), None);
    }
}

#[cfg(unix)]
#[test]
fn a_folder_that_cannot_be_listed_answers_as_the_serial_walk() {
    use std::os::unix::fs::PermissionsExt;
    let fx = forest();
    let locked = fx.path("d04");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    same(&fx.sandbox(), None);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The attack: many folders, each under the entry limit, together far over it. What must not
/// happen: every folder walked and held before the limit is seen; the answer is the serial
/// walk's, truncated.
#[test]
fn folders_over_the_limit_together_answer_as_the_serial_walk() {
    let fx = Fixture::new();
    for d in 0..6 {
        for f in 0..15 {
            fx.write(&format!("d{d:02}/f{f}.md"), "x");
        }
    }
    let mut limits = Limits::default();
    limits.max_walk_entries = 20;
    let sb = fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap();
    same(&sb, None);
    assert!(sb.walk_parallel(&sb.workspace()).unwrap().truncated);
}
