//! The ctx-cli test suite: the real `ctx` binary run in temporary directories, a module per
//! surface. Data lives beside the suite: `tests/snapshots/` (expect-test files of the
//! examples), `tests/fixtures/` (a small mdBook), `tests/schemas/` (the providers' request
//! shapes).
//!
//! `UPDATE_EXPECT=1 cargo test -p ctx-cli` rewrites the snapshots. The examples of README.md
//! and docs/*.md are run too (`docs`).
//!
//! The servers' and the picker's tests need their cargo features (`lsp`, `mcp`, `picker`, on
//! by default); without them, the tests of what the commands say instead run.

#![allow(clippy::disallowed_methods)] // Tests build their fixtures on disk.

mod budget;
mod cli;
mod compat;
mod conversation;
mod docs;
mod encodings;
mod features;
mod fit;
mod images;
mod outline;
mod outputs;
#[cfg(unix)]
mod permission;
mod pointing;
mod reduce;
mod rules;
mod servers;
#[cfg(unix)]
mod service;
mod sources;
mod suggest;
#[cfg(unix)]
mod trust;
mod util;
mod watch;
