//! Fuzzes line ranges, anchors and heading sections: for any text and any selector, selecting
//! must not panic, and what it selects must be lines of the text within the range it reports.

#![no_main]

use ctx_syntax::{LineEnd, Selector};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 6 {
        return;
    }
    let Ok(text) = std::str::from_utf8(&data[6..]) else { return };
    let start = u32::from(u16::from_le_bytes([data[0], data[1]]));
    let end = u32::from(u16::from_le_bytes([data[2], data[3]]));
    let markdown = data[4] & 1 == 1;
    // A name taken from the text itself, so that anchors and headings are sometimes found.
    let name = text.split_whitespace().nth(usize::from(data[5] >> 2)).unwrap_or("x");
    let selector = match data[5] & 3 {
        0 => Selector::Lines { start, end: LineEnd::Line(end) },
        1 => Selector::Lines { start, end: LineEnd::Eof },
        2 => Selector::Anchor(name),
        _ => Selector::Fragment(name),
    };
    let lines = ctx_assemble::select::count_lines(text);
    if let Ok(selection) = ctx_assemble::select::select(text, &selector, markdown) {
        if let Some(range) = selection.lines {
            assert!(range.start >= 1 && range.start <= range.end, "{range:?}");
            assert!(range.end <= lines.max(1), "{range:?} past {lines} lines");
        }
        if let Selector::Lines { .. } = selector {
            assert!(text.contains(&*selection.text), "not a part of the text");
        }
    }
});
