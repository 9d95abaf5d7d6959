//! A mentioned file that does not fit the token budget whole, reduced by the run's
//! [`Reducer`](crate::Reducer) to its outline and the ranges that matter (assembly.md §7,
//! "Limits on content"), with a marker saying what was kept and how to get the rest. The
//! reducer's text is made visible again and counted here; whatever it gives, the file keeps
//! within the room the budget left it, or it is cut at its head as before.

use ctx_syntax::Code;

use crate::cut::{Kept, reduced_marker};
use crate::record::{CutRecord, Lines};
use crate::reducer::{Reduce, Reduced};
use crate::run::{Item, Run};
use crate::sanitize::sanitize;

/// Tries at most this many rooms, each smaller by what the last one was over, before the
/// file is cut at its head instead.
const ATTEMPTS: usize = 3;

impl Run<'_> {
    /// The reduced form of `whole`, the text of the file `kept` describes, within `avail`
    /// o200k tokens, its marker included; `None` when there is no reducer, the reducer has
    /// nothing for the file, or what it gives does not fit.
    pub(crate) fn reduce(
        &mut self,
        whole: &str,
        kept: &Kept<'_>,
        avail: usize,
        item: &mut Item<'_>,
    ) -> Option<String> {
        let reducer = self.setup.reducer?;
        if kept.tool {
            return None;
        }
        let named = self.out.budget.named();
        // The marker without ranges, as many definitions as lines, for a first room; a
        // reduction whose marker turns out longer is asked for again in less room.
        let lines = usize::try_from(kept.total_lines).unwrap_or(usize::MAX);
        let widest = reduced_marker(named, kept, &[], (lines, lines));
        let mut room = avail.checked_sub(ctx_tokens::count(&widest) + 1)?;
        for _ in 0..ATTEMPTS {
            let file = Reduce {
                path: kept.path,
                text: whole,
                prompt: self.prompt,
                room,
                line_numbers: self.opts().line_numbers,
                ranges: &self.item_ranges,
            };
            let Reduced { text, ranges, shown, definitions } = reducer.reduce(&file)?;
            // The reducer is trusted with nothing: its text is made visible again and counted.
            let text = sanitize(&text).text.into_owned();
            let mut body = text;
            if !body.is_empty() && !body.ends_with('\n') {
                body.push('\n');
            }
            let body_tokens = ctx_tokens::count(&body);
            let mut kept = *kept;
            kept.kept_tokens = named.tokenizer.scale(body_tokens) as u64;
            let marker = reduced_marker(named, &kept, &ranges, (shown, definitions));
            let total = body_tokens + ctx_tokens::count(&marker) + 1;
            if total > avail {
                // Asked again for less than it gave by what it was over.
                room = body_tokens.min(room).checked_sub(total - avail + 1)?;
                continue;
            }
            self.record_reduced(&kept, &ranges, body_tokens, item);
            body.push_str(&marker);
            body.push('\n');
            return Some(body);
        }
        None
    }

    /// Says what the reduction kept: on the record, in the run's total and as `W_BUDGET`.
    fn record_reduced(
        &mut self,
        kept: &Kept<'_>,
        ranges: &[Lines],
        body_tokens: usize,
        item: &mut Item<'_>,
    ) {
        let named = self.out.budget.named();
        self.out.budget.add_cut();
        item.record.truncated = true;
        self.count_placed(Some(body_tokens), item);
        let path = kept.path;
        let lines = crate::cut::ranges_text(ranges);
        let and_lines =
            if lines.is_empty() { String::new() } else { format!(" and lines {lines}") };
        let message = format!(
            "{named} reached: {path} reduced to its outline{and_lines} \
             of {} lines ({} of {} tokens){}",
            kept.total_lines,
            kept.kept_tokens,
            kept.total_tokens,
            self.out.budget.hint(),
        );
        item.record.cut = Some(CutRecord {
            path: path.to_owned(),
            kept: ranges.first().copied().unwrap_or(Lines { start: 1, end: 0 }),
            total_lines: kept.total_lines,
            kept_tokens: kept.kept_tokens,
            total_tokens: kept.total_tokens,
            view: Some("outline".to_owned()),
            ranges: ranges.to_vec(),
        });
        self.diagnose_item(item, Code::TokenBudget, message);
    }
}
