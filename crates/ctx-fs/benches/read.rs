//! Reading every file of a generated tree of 3000 files through the sandbox,
//! beside `std::fs::read` of the same files in the same run, and cache hits
//! beside fresh reads.
#![allow(clippy::disallowed_methods)]

use std::sync::LazyLock;
use std::time::{Duration, SystemTime};

use camino::Utf8PathBuf;
use ctx_fs::{Location, Sandbox};
use divan::Bencher;

const DIRS: usize = 30;
const FILES: usize = 100;

struct Tree {
    _tmp: tempfile::TempDir,
    root: Utf8PathBuf,
    rel: Vec<String>,
}

static TREE: LazyLock<Tree> = LazyLock::new(|| {
    let tmp = tempfile::tempdir().unwrap();
    let root = Utf8PathBuf::try_from(tmp.path().to_path_buf()).unwrap();
    let old = SystemTime::now() - Duration::from_secs(3600);
    let mut rel = Vec::new();
    for d in 0..DIRS {
        for f in 0..FILES {
            let path = format!("src/mod{d:02}/file{f:03}.md");
            let full = root.join(&path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            let line = format!("line of file {d}/{f}: some ordinary prose and `code`\n");
            std::fs::write(&full, line.repeat(20 + (d * f) % 60)).unwrap();
            // Old enough to be cached.
            std::fs::File::options().write(true).open(&full).unwrap().set_modified(old).unwrap();
            rel.push(path);
        }
    }
    // Files whose status-change time is this recent are not served by the warm path.
    std::thread::sleep(Duration::from_millis(2100));
    Tree { _tmp: tmp, root, rel }
});

fn sandbox(cache: bool) -> Sandbox {
    let builder = Sandbox::builder(TREE.root.clone());
    let builder = if cache { builder } else { builder.cache_capacity(0) };
    builder.open(cap_std::ambient_authority()).unwrap()
}

fn main() {
    divan::main();
}

/// Plain `std::fs::read` of every file, the baseline.
#[divan::bench(sample_count = 20)]
fn std_read(bencher: Bencher) {
    let paths: Vec<Utf8PathBuf> = TREE.rel.iter().map(|p| TREE.root.join(p)).collect();
    bencher.bench(|| {
        let mut total = 0;
        for path in &paths {
            total += std::fs::read(path).unwrap().len();
        }
        total
    });
}

/// Resolve and read every file as text, no cache: the real cost of a fresh read.
#[divan::bench(sample_count = 20)]
fn sandbox_fresh(bencher: Bencher) {
    let sb = sandbox(false);
    bencher.bench(|| {
        let mut total = 0;
        for path in &TREE.rel {
            total += sb.read_path(path, None).unwrap().1.text().unwrap().len();
        }
        total
    });
}

/// The same without the Linux `openat2` fast path: the portable
/// component-by-component resolution every platform has.
#[divan::bench(sample_count = 20)]
fn sandbox_fresh_portable(bencher: Bencher) {
    let sb = Sandbox::builder(TREE.root.clone())
        .cache_capacity(0)
        .fast_path(false)
        .open(cap_std::ambient_authority())
        .unwrap();
    bencher.bench(|| {
        let mut total = 0;
        for path in &TREE.rel {
            total += sb.read_path(path, None).unwrap().1.text().unwrap().len();
        }
        total
    });
}

/// Reads every location as text; the total length keeps the reads from being optimised away.
fn read_all(sb: &Sandbox, locations: &[Location]) -> usize {
    locations.iter().map(|l| sb.read_text(l).unwrap().text().unwrap().len()).sum()
}

/// Read resolved locations as text, no cache.
#[divan::bench(sample_count = 20)]
fn sandbox_fresh_located(bencher: Bencher) {
    let sb = sandbox(false);
    let locations: Vec<Location> = TREE.rel.iter().map(|p| sb.resolve(p, None).unwrap()).collect();
    bencher.bench(|| read_all(&sb, &locations));
}

/// Read resolved locations as text, every read a validated cache hit (the warm path:
/// the tree is older than the racy window).
#[divan::bench(sample_count = 20)]
fn sandbox_cached_located(bencher: Bencher) {
    let sb = sandbox(true);
    let locations: Vec<Location> = TREE.rel.iter().map(|p| sb.resolve(p, None).unwrap()).collect();
    read_all(&sb, &locations);
    bencher.bench(|| read_all(&sb, &locations));
}

/// Resolve and read path strings as text, every read a cache hit: the warm path of
/// `read_path`.
#[divan::bench(sample_count = 20)]
fn sandbox_cached(bencher: Bencher) {
    let sb = sandbox(true);
    for path in &TREE.rel {
        sb.read_path(path, None).unwrap();
    }
    bencher.bench(|| {
        let mut total = 0;
        for path in &TREE.rel {
            total += sb.read_path(path, None).unwrap().1.text().unwrap().len();
        }
        total
    });
}

/// Walk the whole tree.
#[divan::bench(sample_count = 20)]
fn sandbox_walk(bencher: Bencher) {
    let sb = sandbox(false);
    bencher.bench(|| sb.walk(&sb.workspace()).unwrap().entries.len());
}
