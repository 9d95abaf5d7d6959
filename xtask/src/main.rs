//! Project automation for the ctx workspace: `cargo xtask ci`, `cargo xtask bench`,
//! `cargo xtask fuzz-parser`.

fn main() {}
