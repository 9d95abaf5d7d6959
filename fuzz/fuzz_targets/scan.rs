//! Fuzzes the ctx-syntax scanner: on any UTF-8 input, `ctx_syntax::check` must not panic, and the
//! scan must be lossless, with ordered, non-overlapping spans on char boundaries.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The scanner takes `&str`; invalid UTF-8 cannot reach it, so it is not interesting here.
    if let Ok(text) = std::str::from_utf8(data) {
        ctx_syntax::check(text);
    }
});
