//! Preprocessor throughput (filled in below).
fn main() {}
