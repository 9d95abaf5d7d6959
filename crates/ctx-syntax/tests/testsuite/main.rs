//! The ctx-syntax test suite: the examples of the specification, the fixture files under
//! `test_data/`, and property tests.
//!
//! `UPDATE_EXPECT=1 cargo test -p ctx-syntax` rewrites the expected dumps.

mod examples;
mod fixtures;
mod props;
