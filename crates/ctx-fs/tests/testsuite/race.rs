//! A file flipped between a regular file and a link to an outside secret.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::util::{Fixture, SECRET, read};

#[test]
fn flipping_link_never_leaks() {
    for fast in [true, false] {
        // An absolute link to the outside secret.
        flipping(fast, |fx| fx.outside.join("secret.txt").into());
        // A relative one, `..` climbing out of the root.
        flipping(fast, |_| std::path::PathBuf::from("../outside/secret.txt"));
    }
}

/// One thread renames a regular file and a link to the outside secret over `flip.md` in
/// turn, while this one reads it through the sandbox 1000 times: every read is the harmless
/// file or a refusal, and no refusal mentions the secret.
fn flipping(fast: bool, link_target: impl Fn(&Fixture) -> std::path::PathBuf + Sync) {
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
                let next = fx.path(&format!("next{}", i % 2));
                let _ = std::fs::remove_file(&next);
                if i.is_multiple_of(2) {
                    std::os::unix::fs::symlink(link_target(&fx), &next).unwrap();
                } else {
                    std::fs::write(&next, "harmless").unwrap();
                }
                std::fs::rename(&next, &target).unwrap();
                i += 1;
            }
        });
        for _ in 0..1000 {
            match read(&sb, "flip.md") {
                Ok(text) => assert_eq!(text, "harmless"),
                Err(e) => assert!(!e.to_string().contains(SECRET)),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// With a warm cache: a directory on the way flips between the real one, whose file
/// is cached and served after a bare stat, and a link to an outside directory whose
/// file of the same name is the secret.
#[test]
fn flipping_directory_with_warm_cache_never_leaks() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    fx.write("d/flip.md", "harmless");
    std::fs::create_dir(fx.outside.join("d")).unwrap();
    std::fs::write(fx.outside.join("d/flip.md"), SECRET).unwrap();
    // Old enough for the warm path.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(read(&sb, "d/flip.md").unwrap(), "harmless");
    let location = sb.resolve("d/flip.md", None).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let (dir, real, link) = (fx.path("d"), fx.path("d.real"), fx.path("d.link"));
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(&dir, &real).unwrap();
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink("../outside/d", &link).unwrap();
                std::fs::rename(&link, &dir).unwrap();
                std::fs::remove_file(&dir).unwrap();
                std::fs::rename(&real, &dir).unwrap();
            }
        });
        for i in 0..2000 {
            let result = if i % 2 == 0 {
                read(&sb, "d/flip.md")
            } else {
                sb.read_text(&location).map(|c| c.text().map(|t| t.to_string()).unwrap_or_default())
            };
            match result {
                Ok(text) => assert_eq!(text, "harmless"),
                Err(e) => assert!(!e.to_string().contains(SECRET)),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}
