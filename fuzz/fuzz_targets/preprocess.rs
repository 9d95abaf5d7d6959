//! Fuzzes the ctx preprocessor: on any UTF-8 input, scan + preprocess must not panic, and
//! `ctx_preprocess::check` must hold (events in order, inside the text, borrowed slices equal
//! to their spans, lossless without directives, deterministic).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The scanner takes `&str`; invalid UTF-8 cannot reach it, so it is not interesting here.
    if let Ok(text) = std::str::from_utf8(data) {
        ctx_preprocess::check(text);
    }
});
