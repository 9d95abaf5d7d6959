//! A file flipped between a regular file and a link to an outside secret.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::util::{Fixture, SECRET, read};

#[test]
fn flipping_link_never_leaks() {
    flipping_link(true);
    flipping_link(false);
}

fn flipping_link(fast: bool) {
    let fx = Fixture::new();
    let sb =
        fx.builder().fast_path(fast).cache_capacity(0).open(cap_std::ambient_authority()).unwrap();
    let target = fx.path("flip.md");
    std::fs::write(&target, "harmless").unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let regular = fx.path("regular.next");
            let link = fx.path("link.next");
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if i.is_multiple_of(2) {
                    let _ = std::fs::remove_file(&link);
                    std::os::unix::fs::symlink(fx.outside.join("secret.txt"), &link).unwrap();
                    std::fs::rename(&link, &target).unwrap();
                } else {
                    std::fs::write(&regular, "harmless").unwrap();
                    std::fs::rename(&regular, &target).unwrap();
                }
                i += 1;
            }
        });
        let (mut ok, mut refused) = (0, 0);
        for _ in 0..1000 {
            match read(&sb, "flip.md") {
                Ok(text) => {
                    assert!(!text.contains(SECRET));
                    assert_eq!(text, "harmless");
                    ok += 1;
                }
                Err(e) => {
                    assert!(!e.to_string().contains(SECRET));
                    refused += 1;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        assert_eq!(ok + refused, 1000);
    });
}

#[test]
fn flipping_relative_link_never_leaks() {
    flipping_relative_link(true);
    flipping_relative_link(false);
}

fn flipping_relative_link(fast: bool) {
    let fx = Fixture::new();
    let sb =
        fx.builder().fast_path(fast).cache_capacity(0).open(cap_std::ambient_authority()).unwrap();
    let target = fx.path("flip.md");
    std::fs::write(&target, "harmless").unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let tmp = fx.path(&format!("next{}", i % 2));
                let _ = std::fs::remove_file(&tmp);
                if i.is_multiple_of(2) {
                    std::os::unix::fs::symlink("../outside/secret.txt", &tmp).unwrap();
                } else {
                    std::fs::write(&tmp, "harmless").unwrap();
                }
                std::fs::rename(&tmp, &target).unwrap();
                i += 1;
            }
        });
        for _ in 0..1000 {
            if let Ok(text) = read(&sb, "flip.md") {
                assert_eq!(text, "harmless");
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}
