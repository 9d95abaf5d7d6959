//! The trees of `cargo xtask bench scale`: real source text of several languages, copied and
//! varied into nested folders, with a `.gitignore` and the files it ignores, a symbolic link
//! that loops and one that leaves the tree.
//!
//! The text comes from a pool of files: the `HEAD` of every git repository under
//! `$CTX_BENCH_MIRRORS` (a folder of git directories, each as `NAME/` or `NAME/repo/`), then the
//! cargo registry's sources, each file of a known source extension, UTF-8, at most
//! [`MAX_POOL_FILE`] bytes. File `i` of a tree is pool file `i * 7919 mod n` under its own name
//! with `_i` added, its first line a comment naming `i`, so no two files are equal.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;

use crate::Result;

/// Extensions taken into the pool, a mix of languages and of the prose beside them.
const EXTENSIONS: [&str; 24] = [
    "rs", "c", "h", "cc", "cpp", "hpp", "cs", "go", "java", "kt", "py", "js", "jsx", "ts", "tsx",
    "mjs", "rb", "php", "sh", "md", "toml", "yml", "yaml", "json",
];

/// Largest file taken into the pool, in bytes.
pub(super) const MAX_POOL_FILE: u64 = 24 * 1024;

/// Most files taken from one repository or from the registry, so that no language dominates.
const PER_SOURCE: usize = 800;

/// Files of a tree to one folder.
const PER_FOLDER: usize = 32;

/// A word that only the file outside the tree holds: a query for it must find nothing.
pub(super) const SECRET: &str = "zanzibarquokkasecret";

/// One file of the pool.
pub(super) struct PoolFile {
    stem: String,
    ext: String,
    text: Vec<u8>,
}

/// The pool and a word on where it came from.
pub(super) struct Pool {
    pub(super) files: Vec<PoolFile>,
    pub(super) origin: String,
}

/// Reads the pool from the mirrors (when given) and the registry.
pub(super) fn pool(mirrors: Option<&Path>, registry: Option<&Path>) -> Result<Pool> {
    let mut files = Vec::new();
    let mut origins = Vec::new();
    if let Some(mirrors) = mirrors {
        let mut dirs: Vec<PathBuf> = fs::read_dir(mirrors)?
            .filter_map(std::result::Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        let mut repos = 0;
        for dir in dirs {
            let git = if dir.join("repo").is_dir() { dir.join("repo") } else { dir };
            let before = files.len();
            from_git(&git, &mut files)?;
            repos += usize::from(files.len() > before);
        }
        origins.push(format!("{repos} git repositories"));
    }
    if let Some(registry) = registry {
        let before = files.len();
        let mut taken = 0;
        from_folder(registry, &mut |path, text| {
            files.push(pool_file(path, text));
            taken += 1;
            Ok(taken < PER_SOURCE)
        })?;
        if files.len() > before {
            origins.push("the cargo registry".to_owned());
        }
    }
    if files.is_empty() {
        return Err("no source text for the scale trees: set CTX_BENCH_MIRRORS or fill the \
                    cargo registry"
            .into());
    }
    Ok(Pool { origin: format!("{} files of {}", files.len(), origins.join(" and ")), files })
}

fn pool_file(path: &str, text: Vec<u8>) -> PoolFile {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, "txt"));
    let clean = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
    };
    PoolFile { stem: clean(stem), ext: clean(ext), text }
}

fn wanted(path: &str, size: u64) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    (1..=MAX_POOL_FILE).contains(&size) && EXTENSIONS.contains(&ext)
}

/// The blobs of `HEAD` of the git directory `git` that the pool takes.
fn from_git(git: &Path, files: &mut Vec<PoolFile>) -> Result {
    let listing = Command::new("git")
        .arg("--git-dir")
        .arg(git)
        .args(["ls-tree", "-r", "-l", "HEAD"])
        .output();
    let Some(listing) = listing.ok().filter(|o| o.status.success()) else { return Ok(()) };
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    let mut wanted_blobs: Vec<(String, String)> = Vec::new();
    for line in listing.lines() {
        let Some((meta, path)) = line.split_once('\t') else { continue };
        let meta: Vec<&str> = meta.split_whitespace().collect();
        if let [_, "blob", hash, size] = meta[..]
            && size.parse().is_ok_and(|size| wanted(path, size))
        {
            wanted_blobs.push((hash.to_owned(), path.to_owned()));
        }
    }
    wanted_blobs.truncate(PER_SOURCE);
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(git)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let hashes: String = wanted_blobs.iter().map(|(h, _)| format!("{h}\n")).collect();
    let writer = thread::spawn(move || stdin.write_all(hashes.as_bytes()));
    let mut out = Vec::new();
    child.stdout.take().ok_or("no stdout")?.read_to_end(&mut out)?;
    writer.join().map_err(|_| "writer thread")??;
    child.wait()?;
    // Each blob: `HASH blob SIZE\n`, SIZE bytes, `\n`.
    let mut at = 0;
    for (_, path) in &wanted_blobs {
        let Some(end) = out[at..].iter().position(|b| *b == b'\n') else { break };
        let header = String::from_utf8_lossy(&out[at..at + end]).into_owned();
        at += end + 1;
        let Some(size) = header.rsplit(' ').next().and_then(|s| s.parse::<usize>().ok()) else {
            break;
        };
        let Some(text) = out.get(at..at + size) else { break };
        at += size + 1;
        if std::str::from_utf8(text).is_ok() {
            files.push(pool_file(path, text.to_vec()));
        }
    }
    Ok(())
}

/// Feeds `sink` the wanted files under `dir` in sorted order until it returns false.
fn from_folder(dir: &Path, sink: &mut dyn FnMut(&str, Vec<u8>) -> Result<bool>) -> Result<bool> {
    let Ok(entries) = fs::read_dir(dir) else { return Ok(true) };
    let mut entries: Vec<fs::DirEntry> = entries.filter_map(std::result::Result::ok).collect();
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        let name = path.to_string_lossy().into_owned();
        if kind.is_dir() {
            if !from_folder(&path, sink)? {
                return Ok(false);
            }
        } else if kind.is_file()
            && entry.metadata().is_ok_and(|meta| wanted(&name, meta.len()))
            && let Ok(text) = fs::read(&path)
            && std::str::from_utf8(&text).is_ok()
            && !sink(&name, text)?
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The comment that starts file `i`, in the syntax of its extension.
fn first_line(ext: &str, i: usize) -> String {
    match ext {
        "py" | "sh" | "rb" | "toml" | "yml" | "yaml" => format!("# copy {i} of the scale tree\n"),
        "md" => format!("Copy {i} of the scale tree.\n\n"),
        "json" => String::new(),
        _ => format!("// copy {i} of the scale tree\n"),
    }
}

/// Where file `i` of a tree lies, relative to it.
pub(super) fn file_path(pool: &Pool, i: usize) -> String {
    let f = &pool.files[i * 7919 % pool.files.len()];
    let leaf = i / PER_FOLDER;
    format!("pkg{:03}/mod{}/part{}/{}_{i}.{}", leaf / 64, (leaf / 8) % 8, leaf % 8, f.stem, f.ext)
}

/// Writes a tree of `files` files (and the ignored ones, the links) at `tree`; returns the bytes
/// of the files that are not ignored.
pub(super) fn tree(tree: &Path, files: usize, pool: &Pool) -> Result<u64> {
    fs::create_dir_all(tree)?;
    fs::write(tree.join(".gitignore"), "target/\nnode_modules/\n*.log\n")?;
    let workers = thread::available_parallelism().map_or(2, usize::from).min(8);
    let results: Vec<std::io::Result<u64>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                scope.spawn(move || -> std::io::Result<u64> {
                    let mut bytes = 0;
                    let leaves = files.div_ceil(PER_FOLDER);
                    for leaf in (worker..leaves).step_by(workers) {
                        let first = leaf * PER_FOLDER;
                        for i in first..files.min(first + PER_FOLDER) {
                            let path = tree.join(file_path(pool, i));
                            if i == first {
                                fs::create_dir_all(path.parent().unwrap_or(tree))?;
                            }
                            let f = &pool.files[i * 7919 % pool.files.len()];
                            let mut text = first_line(&f.ext, i).into_bytes();
                            text.extend_from_slice(&f.text);
                            fs::write(&path, &text)?;
                            bytes += text.len() as u64;
                        }
                    }
                    Ok(bytes)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("generator thread")).collect()
    });
    let mut bytes = 0;
    for result in results {
        bytes += result?;
    }
    ignored_and_links(tree, files, pool)?;
    Ok(bytes)
}

/// A hundredth as many files again under ignored folders and names, a link back to the tree's
/// root (a cycle), and a link to a folder beside the tree holding [`SECRET`].
fn ignored_and_links(tree: &Path, files: usize, pool: &Pool) -> Result {
    let extra = (files / 100).max(1);
    for (k, dir) in ["target/debug/deps", "node_modules/pkg/lib"].into_iter().enumerate() {
        fs::create_dir_all(tree.join(dir))?;
        for i in (k..extra).step_by(2) {
            let f = &pool.files[i % pool.files.len()];
            fs::write(tree.join(dir).join(format!("{}_{i}.{}", f.stem, f.ext)), &f.text)?;
        }
    }
    fs::write(tree.join("pkg000").join("build.log"), "an ignored log\n")?;
    let outside = tree.with_extension("outside");
    fs::create_dir_all(&outside)?;
    fs::write(outside.join("secret.rs"), format!("// {SECRET}\nfn {SECRET}() {{}}\n"))?;
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("..", tree.join("pkg000").join("loop"))?;
        std::os::unix::fs::symlink(&outside, tree.join("pkg000").join("outside"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_tree() {
        let dir = std::env::temp_dir().join(format!("xtask-scale-test-{}", std::process::id()));
        let registry = dir.join("registry");
        fs::create_dir_all(registry.join("a/src")).unwrap();
        fs::write(registry.join("a/src/lib.rs"), "pub fn a() {}\n").unwrap();
        fs::write(registry.join("a/src/app.py"), "def a():\n    pass\n").unwrap();
        fs::write(registry.join("a/src/bad.rs"), b"\xff\xfe").unwrap();
        fs::write(registry.join("a/src/image.png"), "not text").unwrap();
        let pool = pool(None, Some(&registry)).unwrap();
        assert_eq!(pool.files.len(), 2, "{}", pool.origin);
        let at = dir.join("tree");
        let bytes = tree(&at, 70, &pool).unwrap();
        assert!(bytes > 70 * 14);
        let first = fs::read_to_string(at.join(file_path(&pool, 0))).unwrap();
        assert!(first.starts_with("# copy 0 ") || first.starts_with("// copy 0 "), "{first}");
        assert!(at.join(file_path(&pool, 69)).is_file());
        assert!(file_path(&pool, 69).starts_with("pkg000/mod0/part2/"));
        assert!(at.join(".gitignore").is_file());
        assert!(fs::read_link(at.join("pkg000/loop")).is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }
}
