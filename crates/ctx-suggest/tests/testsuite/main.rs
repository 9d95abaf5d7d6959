//! Integration tests of ctx-suggest: ranking fixtures, the stored index (incremental,
//! concurrent and corrupt, in segments), data files left out, all on real files in temporary
//! directories.
#![allow(clippy::disallowed_methods)]

mod data;
mod lists;
mod partial;
mod ranking;
mod segments;
mod store;

use std::path::Path;

use ctx_fs::Sandbox;

/// Opens a sandbox on `dir`.
pub(crate) fn sandbox(dir: &Path) -> Sandbox {
    Sandbox::builder(dir.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap()
}

/// Writes `files` (path, content) under `dir`.
pub(crate) fn write_tree(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}
