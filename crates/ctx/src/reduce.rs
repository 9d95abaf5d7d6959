//! The assembler's [`Reducer`]: a mentioned file that does not fit the token budget whole is
//! shown as its outline and the ranges that matter for the prompt (`ctx_suggest::reduce`),
//! its lines made visible and numbered as the assembler shows a file's.

use ctx_assemble::record::Lines;
use ctx_assemble::select::number_lines;
use ctx_assemble::{Reduce, Reduced, Reducer};
use ctx_suggest::LineRange;

/// Reduces files with `ctx_suggest::reduce`.
#[derive(Debug, Default)]
pub(crate) struct OutlineReducer;

impl Reducer for OutlineReducer {
    fn reduce(&self, file: &Reduce<'_>) -> Option<Reduced> {
        let numbered = file.line_numbers;
        let show = |lines: &str, first: u32| {
            let clean = ctx_assemble::sanitize::sanitize(lines).text;
            if numbered { number_lines(&clean, first) } else { clean.into_owned() }
        };
        let preferred: Vec<LineRange> =
            file.ranges.iter().map(|r| LineRange { start: r.start, end: r.end }).collect();
        let reduced = ctx_suggest::reduce::reduce(
            file.path,
            file.text,
            (file.prompt, &preferred),
            file.room,
            &show,
        )?;
        let ranges = reduced.ranges.iter().map(|r| Lines { start: r.start, end: r.end }).collect();
        Some(Reduced::new(reduced.text, ranges, reduced.shown, reduced.definitions))
    }
}
