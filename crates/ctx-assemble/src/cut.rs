//! What the token budget says in the output (assembly.md §7, "Limits on content"): a marker
//! ending what it kept of a piece of content, a note in place of what it left out, the note
//! that ends the output, the marker of a file reduced to its outline. Each names the budget and its tokenizer, what was kept of what, and
//! how to get the rest.

use ctx_tokens::Tokenizer;

/// What the budget kept of one piece of content.
#[derive(Clone, Copy)]
pub(crate) struct Kept<'a> {
    /// The file (a tool's name for a tool's result).
    pub(crate) path: &'a str,
    /// Whether it is a tool's result, which has no lines to ask for again.
    pub(crate) tool: bool,
    /// The line of the file the content starts on.
    pub(crate) first: u64,
    /// The lines of the file left out of the content after `first` (nested anchors'
    /// markers), in order.
    pub(crate) skipped: &'a [u32],
    pub(crate) kept_lines: u64,
    pub(crate) total_lines: u64,
    pub(crate) kept_tokens: u64,
    pub(crate) total_tokens: u64,
}

impl Kept<'_> {
    /// The line of the file that the `k`-th line of the content (1-based) is.
    pub(crate) fn line(&self, k: u64) -> u64 {
        let first = u32::try_from(self.first).unwrap_or(u32::MAX);
        let k = u32::try_from(k.max(1)).unwrap_or(u32::MAX);
        u64::from(crate::selection::Selection::line_of(first, self.skipped, k))
    }
}

/// The budget as the output names it: its size, its tokenizer, and the setting a reader raises
/// for a larger one.
#[derive(Clone, Copy)]
pub(crate) struct Named {
    /// The budget, in the tokenizer's tokens.
    pub(crate) max: usize,
    pub(crate) tokenizer: Tokenizer,
    /// The setting that gives a larger budget (`--max-tokens`, or a server's `max_tokens`).
    pub(crate) setting: &'static str,
}

/// `token budget of 500 (o200k)`.
impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "token budget of {} ({})", self.max, self.tokenizer)
    }
}

impl Named {
    /// `raise --max-tokens`.
    fn raise(&self) -> String {
        format!("raise {}", self.setting)
    }
}

/// The last line of content the budget cut.
pub(crate) fn cut_marker(named: Named, kept: &Kept<'_>) -> String {
    let last = kept.line(kept.kept_lines);
    let end = kept.line(kept.total_lines);
    let rest = if kept.tool {
        format!("the rest: {}", named.raise())
    } else {
        let next = kept.line(kept.kept_lines + 1);
        format!("the rest: @{}#L{next}-{end}, or {}", kept.path, named.raise())
    };
    format!(
        "[... {} reached: kept lines {}-{last} of {}-{end} ({} of {} tokens); {rest} ...]",
        named, kept.first, kept.first, kept.kept_tokens, kept.total_tokens,
    )
}

/// Ranges of lines as a marker writes them: `200-240, 500-520`.
pub(crate) fn ranges_text(ranges: &[crate::record::Lines]) -> String {
    let shown: Vec<String> = ranges.iter().map(|r| format!("{}-{}", r.start, r.end)).collect();
    shown.join(", ")
}

/// The last line of a file the budget reduced to its outline and `ranges`, `shown` of its
/// `definitions` in the outline.
pub(crate) fn reduced_marker(
    named: Named,
    kept: &Kept<'_>,
    ranges: &[crate::record::Lines],
    (shown, definitions): (usize, usize),
) -> String {
    let lines = if ranges.is_empty() {
        String::new()
    } else {
        format!(" and lines {}", ranges_text(ranges))
    };
    format!(
        "[... {} reached: kept the outline ({shown} of {definitions} definitions){lines} of \
         1-{} ({} of {} tokens); the rest: @{}#La-b for lines a-b, or {} ...]",
        named,
        kept.total_lines,
        kept.kept_tokens,
        kept.total_tokens,
        kept.path,
        named.raise(),
    )
}

/// The note in place of content the budget left out.
pub(crate) fn dropped_note(named: Named, kept: &Kept<'_>) -> String {
    let how = if kept.tool {
        named.raise()
    } else {
        format!("mention @{} alone, or {}", kept.path, named.raise())
    };
    let lines = if kept.total_lines == 1 { "line" } else { "lines" };
    let tokens = if kept.total_tokens == 1 { "token" } else { "tokens" };
    format!(
        "[... {} spent: {} left out ({} {lines}, {} {tokens}); {how} ...]",
        named, kept.path, kept.total_lines, kept.total_tokens,
    )
}

/// The note closing a directory or glob expansion the budget stopped.
pub(crate) fn files_note(named: Named, left_out: usize, total: usize, from: &str) -> String {
    format!(
        "[... {} spent: {left_out} of {total} files left out, from {from} on; mention them, or \
         {} ...]",
        named,
        named.raise(),
    )
}

/// The marker after an included document's text that the budget cut.
pub(crate) fn text_marker(named: Named, doc: &str) -> String {
    format!(
        "[... {} reached in {doc}: included content after this point is left out; {} ...]\n",
        named,
        named.raise(),
    )
}

/// The `W_BUDGET` message of a cut in an included document's text (its marker is
/// [`text_marker`]).
pub(crate) fn text_cut_message(named: Named, doc: &str) -> String {
    format!("{} reached in {doc}; included content after this point is left out", named)
}

/// Paths of files left out listed in the closing note, at most this many bytes of them in
/// all; the rest are counted.
pub(crate) const LISTED_BYTES: usize = 40;

/// The files the budget left out where no note of their own fitted, for the note that ends
/// the output (there is always room for it: every decision of the budget keeps it).
#[derive(Debug, Default)]
pub(crate) struct LeftOut {
    listed: Vec<String>,
    bytes: usize,
    more: usize,
    /// Whether text was cut where its marker did not fit.
    cut: bool,
}

impl LeftOut {
    pub(crate) fn push(&mut self, path: &str) {
        if self.listed.iter().any(|p| p == path) {
            return;
        }
        if self.more == 0 && self.bytes + path.len() <= LISTED_BYTES {
            self.bytes += path.len();
            self.listed.push(path.to_owned());
        } else {
            self.more += 1;
        }
    }

    /// Text was cut where the budget had no room for its marker: the closing note says so.
    pub(crate) fn cut_unmarked(&mut self) {
        self.cut = true;
    }

    /// Whether nothing was left out so far.
    pub(crate) fn is_empty(&self) -> bool {
        self.listed.is_empty() && self.more == 0 && !self.cut
    }

    /// The note, when something was left out, then its shorter forms, longest first, for a
    /// budget too small for it (every decision keeps room for the longest form, but a budget
    /// may be smaller than that room): the budget and what it left out, what it left out
    /// alone, then that the budget is spent. The shorter forms name no file (`W_BUDGET` names
    /// each) and also say when text was cut where its own marker did not fit, which happens
    /// only under such a budget.
    pub(crate) fn notes(&self, named: Named) -> Vec<String> {
        let cut = if self.cut { ", text cut" } else { "" };
        let what = match self.listed.len() + self.more {
            0 if self.cut => "text cut".to_owned(),
            0 => return Vec::new(),
            1 => format!("1 file left out{cut}"),
            n => format!("{n} files left out{cut}"),
        };
        let mut notes = Vec::with_capacity(4);
        if !self.cut {
            notes.push(left_out_note(named, &self.listed, self.more));
        }
        notes.push(counted_note(named, &what));
        notes.push(format!("[... {what} ...]\n"));
        notes.push("[... budget spent ...]\n".to_owned());
        notes
    }
}

/// The short form of the closing note at its longest but for the count: its bytes are the
/// room a cut of document text keeps for it (`Run::short_note_room`).
pub(crate) const SHORT_NOTE: &str = "\n[... 999 files left out, text cut ...]\n";

/// The note ending the output that lists files left out with no note of their own.
fn left_out_note(named: Named, listed: &[String], more: usize) -> String {
    let files = match (listed.len(), more) {
        (0, n) => format!("{n} files"),
        (_, 0) => listed.join(", "),
        (_, n) => format!("{} and {n} more", listed.join(", ")),
    };
    let them = if listed.len().saturating_add(more) == 1 { "it" } else { "them" };
    format!(
        "[... {} spent: left out {files}; mention {them} alone, or {} ...]\n",
        named,
        named.raise(),
    )
}

/// The closing note's shorter form that names the budget and counts what it left out.
fn counted_note(named: Named, what: &str) -> String {
    format!("[... {} spent: {what}; {} ...]\n", named, named.raise())
}

/// The room, in o200k tokens and in bytes, that every decision of the budget keeps for the
/// closing note at its longest. That is the full note, each byte of a listed path standing
/// for a token, when it takes at most a tenth of the budget; under a smaller budget it is the
/// form that names the budget and counts the files (up to 999 of them), so that a small file
/// is not left out only to keep room for naming the files that may come after it.
fn reserved_note(named: Named, max: usize) -> (usize, usize) {
    let full = left_out_note(named, &[", ".to_owned()], usize::MAX);
    let full_tokens = ctx_tokens::count(&full) + LISTED_BYTES;
    if full_tokens.saturating_mul(10) <= max {
        return (full_tokens, full.len() + LISTED_BYTES);
    }
    let counted = counted_note(named, "999 files left out, text cut");
    (ctx_tokens::count(&counted), counted.len())
}

/// The line that ends a list of failures cut short by the token budget, counting the rest.
pub(crate) fn failures_more(more: usize, listed: usize) -> String {
    let more = if listed == 0 { format!("{more}") } else { format!("{more} more") };
    format!("{more} not listed (token budget spent; the diagnostics name each)")
}

/// The list of failures at its shortest: its heading and the line that counts them.
fn failures_shortest() -> String {
    format!("\n\nSome files could not be loaded:\n- W_BUDGET: {}\n", failures_more(usize::MAX, 1))
}

/// The o200k tokens the budget keeps for the closing note ([`reserved_note`]).
pub(crate) fn note_reserve(named: Named, max: usize) -> usize {
    reserved_note(named, max).0
}

/// The o200k tokens the budget keeps, once a reference has failed, for the list of failures
/// at its shortest.
pub(crate) fn failures_reserve() -> usize {
    static TOKENS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *TOKENS.get_or_init(|| ctx_tokens::count(&failures_shortest()))
}

/// A bound in bytes of what ends the output, the closing note and the list of failures at
/// its shortest (so of its tokens: an o200k token is at least one byte), for deciding without
/// counting.
pub(crate) fn note_bytes(named: Named, max: usize) -> usize {
    reserved_note(named, max).1 + failures_shortest().len()
}

/// The number of lines of a text (a last line without an ending counts).
pub(crate) fn lines(text: &str) -> u64 {
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    ends + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(tokenizer: Tokenizer, setting: &'static str) -> Named {
        Named { max: 500, tokenizer, setting }
    }

    #[test]
    fn markers() {
        let kept = Kept {
            skipped: &[],
            path: "src/a.rs",
            tool: false,
            first: 1,
            kept_lines: 50,
            total_lines: 300,
            kept_tokens: 480,
            total_tokens: 3000,
        };
        assert_eq!(
            cut_marker(named(Tokenizer::O200k, "--max-tokens"), &kept),
            "[... token budget of 500 (o200k) reached: kept lines 1-50 of 1-300 (480 of 3000 \
             tokens); the rest: @src/a.rs#L51-300, or raise --max-tokens ...]"
        );
        assert_eq!(
            dropped_note(named(Tokenizer::AnthropicEstimate, "--max-tokens"), &kept),
            "[... token budget of 500 (anthropic-estimate) spent: src/a.rs left out (300 lines, \
             3000 tokens); mention @src/a.rs alone, or raise --max-tokens ...]"
        );
        let ranged = Kept { first: 100, ..kept };
        let o200k = named(Tokenizer::O200k, "--max-tokens");
        assert!(cut_marker(o200k, &ranged).contains("lines 100-149 of 100-399"));
        assert!(cut_marker(o200k, &ranged).contains("@src/a.rs#L150-399"));
        let call = named(Tokenizer::O200k, "max_tokens");
        assert!(
            cut_marker(call, &ranged).ends_with("@src/a.rs#L150-399, or raise max_tokens ...]")
        );
        let tool = Kept { tool: true, ..kept };
        assert!(dropped_note(call, &tool).ends_with("; raise max_tokens ...]"));
        let notes = LeftOut { listed: vec!["b.txt".into()], ..LeftOut::default() }.notes(call);
        assert!(notes[0].ends_with("left out b.txt; mention it alone, or raise max_tokens ...]\n"));
        assert!(notes.iter().all(|n| !n.contains("--max-tokens")));
        assert_eq!(lines(""), 0);
        assert_eq!(lines("a\nb"), 2);
        assert_eq!(lines("a\nb\n"), 2);
    }
}
