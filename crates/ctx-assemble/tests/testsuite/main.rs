//! The ctx-assemble test suite: fixture cases under `tests/fixtures/`, budgets, and property
//! tests.
//!
//! `UPDATE_EXPECT=1 cargo test -p ctx-assemble` rewrites the expected files.

#![allow(clippy::disallowed_methods)] // Tests build and read their fixtures on disk.

mod attachments;
mod book;
mod budget;
mod fixtures;
mod limits;
mod long_lines;
mod props;
mod roots;
mod streamed;
