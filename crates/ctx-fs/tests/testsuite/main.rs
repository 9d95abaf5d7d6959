//! Integration tests of the sandbox on real temporary directories.
//!
//! Each module covers one group of rules of assembly.md §3; `util` builds
//! the fixtures: a temporary directory with a workspace root `ws/` and an
//! `outside/` directory holding a secret that must never be read.
#![cfg(unix)]
#![allow(clippy::disallowed_methods)]

mod cache;
mod deny;
mod prop;
mod race;
mod read;
mod resolve;
mod roots;
mod store;
mod stream;
mod symlinks;
mod util;
mod walk;
mod walk_par;
