//! Fuzzes front matter: on any UTF-8 input, splitting and parsing must not panic, must stay
//! within its limits, and the body must be the text's own bytes after the front matter.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parsed = ctx_assemble::front_matter::parse(text);
    assert!(parsed.body_offset <= text.len());
    assert_eq!(parsed.body, &text[parsed.body_offset..]);
    let lines_before = text[..parsed.body_offset].matches('\n').count() as u32;
    assert_eq!(parsed.body_line, lines_before + 1, "body line of {text:?}");
    if parsed.front_matter.is_none() && parsed.diagnostics.is_empty() {
        assert_eq!(parsed.body_offset, 0, "no front matter, but text was taken off: {text:?}");
    }
    for d in &parsed.diagnostics {
        assert!(d.span.end <= text.len());
    }
});
