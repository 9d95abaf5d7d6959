//! Scanner throughput (filled in below).
fn main() {}
