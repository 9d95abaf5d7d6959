//! Directories and globs (assembly.md §3, §7): the walk, a tree of what was taken, then each
//! text file, read ahead on worker threads in bounded batches and placed in walk order.

use std::borrow::Cow;

use ctx_fs::{Content, Sandbox, WalkEntry};
use ctx_syntax::Code;

use crate::fit::{Counted, Fitted};
use crate::out::Place;
use crate::printer::{DirectoryHead, Entry};
use crate::record::Kind;

use crate::resolve::{Resolved, display_in};
use crate::select;

use crate::run::{Doc, Item, Run, WalkKey};

impl Run<'_> {
    /// Expands a directory or a glob: the walk, then each text file in sorted order.
    pub(crate) fn expand_many(
        &mut self,
        doc: &Doc,
        resolved: &Resolved,
        written: &str,
        item: &mut Item<'_>,
    ) {
        let key = match (resolved.kind, &resolved.pattern) {
            (Kind::Glob, Some(rest)) => (Some(rest.clone()), resolved.location.clone()),
            (Kind::Glob, None) => (Some(written.to_owned()), doc.dir.clone()),
            _ => (None, resolved.location.clone()),
        };
        let Some(walk) = self.walk_for(key, written, item) else { return };
        let files: Vec<&WalkEntry> = walk.files().collect();
        let max = self.opts().limits.max_files;
        let taken = if max > 0 { files.len().min(max) } else { files.len() };
        let omitted = files.len() - taken;
        let files = &files[..taken];
        let base = resolved.location.path().as_str();
        let rows: Vec<String> = files
            .iter()
            .map(|entry| {
                let walked = entry.path.as_str();
                walked.strip_prefix(base).map_or(walked, |r| r.trim_start_matches('/')).to_owned()
            })
            .collect();
        let path = if resolved.kind == Kind::Glob {
            written.to_owned()
        } else {
            format!("{}/", resolved.path)
        };
        let notes = self.expansion_notes(&walk, omitted, &path, item);
        let head = DirectoryHead { path, tree: tree_of(&rows) };
        if !self.directory_fits(&head, notes.as_deref(), files.len(), item) {
            return;
        }
        // The directory's opening, then its files batch by batch, so an expansion of a large
        // tree holds a few batches in memory, not the tree.
        if let Err(message) = self.out.directory_open(&head, notes.clone()) {
            return self.budget_spent_at(message, Some(item));
        }
        self.dir_drop = None;
        if !self.write_batches(files, item) {
            return;
        }
        let mut notes = notes;
        if let Some((from, left_out)) = self.dir_drop.take() {
            let budget = &self.out.budget;
            let named = budget.named();
            item.record.truncated = true;
            item.record.dropped = left_out as u64;
            let note = crate::cut::files_note(named, left_out, files.len(), &from);
            // The note has room kept for it; a budget too small for it lists the expansion
            // in the note that ends the output, or leaves it to W_BUDGET.
            let room = self.out.budget.room(ctx_tokens::count(&self.out.closing()));
            if ctx_tokens::count_at_most(&note, room.saturating_sub(2)).is_some() {
                notes = Some(match notes {
                    Some(rest) => format!("{note}\n{rest}"),
                    None => note,
                });
            } else {
                self.out.left_out.push(&head.path);
            }
        }
        if let Err(message) = self.out.directory_close(notes.as_deref()) {
            self.budget_spent_at(message, Some(item));
        }
    }

    /// Whether the token budget has room for the expansion's frame (its tree, its opening, and
    /// its closing with its `notes`); when it has not, the expansion is left out, said in the
    /// note that ends the output and by `W_BUDGET`.
    fn directory_fits(
        &mut self,
        head: &DirectoryHead,
        notes: Option<&str>,
        files: usize,
        item: &mut Item<'_>,
    ) -> bool {
        if !self.out.budget.limited() {
            return true;
        }
        let overhead = self.out.directory_overhead(head, notes);
        if self.out.budget.fits_bytes(overhead.len() + self.out.budget.note_bytes()) {
            return true;
        }
        let reserve = self.out.closing_reserve();
        let free = self.out.budget.left(0);
        if ctx_tokens::count_at_most(&overhead, free.saturating_sub(reserve)).is_some() {
            return true;
        }
        self.out.budget.add_cut();
        item.record.truncated = true;
        item.record.dropped = files as u64;
        self.out.left_out.push(&head.path);
        let message =
            format!("{} spent: {} left out ({files} files)", self.out.budget.named(), head.path);
        self.diagnose_item(item, Code::TokenBudget, message);
        false
    }

    /// The walk of `key`: the last one again (a line of the same glob is not walked anew), or
    /// a new one within the run's budget of walks; `None` after reporting why there is none.
    fn walk_for(
        &mut self,
        key: WalkKey,
        written: &str,
        item: &mut Item<'_>,
    ) -> Option<std::sync::Arc<ctx_fs::Walk>> {
        if let Some((_, walk)) = self.last_walk.take().filter(|(last, _)| *last == key) {
            self.last_walk = Some((key, std::sync::Arc::clone(&walk)));
            return Some(walk);
        }
        // Each walk looks at a bounded number of entries; a line of distinct globs must not
        // multiply it without end: the run's walks share a budget too.
        // Tool calls' walks count too ([`crate::tool_budget::RUN_WALKS`]).
        if let Err(why) = self.tools.walk_room(self.sandbox()) {
            let message = format!("{why}; {written} is not walked (--max-files 0 lifts it)");
            self.fail(item, Code::Budget, message);
            return None;
        }
        let walk = match &key {
            (Some(pattern), at) => self.sandbox().glob(pattern, Some(at)),
            (None, at) => self.sandbox().walk(at),
        };
        match walk {
            Ok(walk) => {
                self.tools.charge_walk(&walk);
                let walk = std::sync::Arc::new(walk);
                self.last_walk = Some((key, std::sync::Arc::clone(&walk)));
                Some(walk)
            }
            Err(err) => {
                self.fs_fail(item, &err, written);
                None
            }
        }
    }

    /// What an expansion leaves out, said in its closing note and, where a walk stopped
    /// early, in a `W_LIMIT`: the files past `max_files` (`omitted`), past the walk's own
    /// limit, and the entries the sandbox refused.
    fn expansion_notes(
        &mut self,
        walk: &ctx_fs::Walk,
        omitted: usize,
        path: &str,
        item: &mut Item<'_>,
    ) -> Option<String> {
        let mut notes = Vec::new();
        let limit = self.sandbox().limits().max_walk_entries;
        if walk.truncated && walk.entries.len() < limit {
            // A glob that kept little stopped after looking at as many entries as it may.
            item.record.truncated = true;
            let message = format!(
                "{path}: the walk stopped after looking at {} entries, so later matches may be \
                 missing (--max-files 0 lifts it)",
                walk.looked
            );
            self.diagnose_item(item, Code::Limit, message);
            notes.push(format!(
                "[... the walk stopped after {} entries; later matches may be missing ...]",
                walk.looked
            ));
        } else if walk.truncated {
            // The walk itself stopped at the sandbox's entry limit; it counted what came after
            // up to the limit again.
            item.record.truncated = true;
            let n = omitted + walk.omitted_files;
            let exact = walk.omitted_exact(limit);
            let more = if exact { format!("{n}") } else { format!("at least {n}") };
            let by_walk = if exact {
                format!("{}", walk.omitted_files)
            } else {
                format!("at least {}", walk.omitted_files)
            };
            let message = format!(
                "{path} has more than {limit} entries; the walk stopped there, leaving out \
                 {by_walk} later files (--max-files 0 lifts it)"
            );
            self.diagnose_item(item, Code::Limit, message);
            notes.push(format!("[... {more} more files omitted ...]"));
        } else if omitted > 0 {
            item.record.truncated = true;
            notes.push(format!("[... {omitted} more files omitted ...]"));
        }
        if let Some(note) = crate::render::skipped_note(&walk.skipped) {
            item.record.skipped =
                walk.skipped.iter().filter(|s| crate::render::is_refusal(s.reason)).count() as u64;
            notes.push(note);
        }
        (!notes.is_empty()).then(|| notes.join("\n"))
    }

    /// Writes the files of an expansion batch by batch; whether the expansion went to its end
    /// (a spent budget stops it).
    fn write_batches(&mut self, files: &[&WalkEntry], item: &mut Item<'_>) -> bool {
        let sandbox = self.sandbox();
        let prefetch = self.opts().prefetch && files.len() > 1;
        // When the records count every file, the reading thread counts what it read, beside
        // the writing of the batch before.
        let count_ahead = self.out.budget.counting();
        let known = self.out.budget.known.clone();
        let known = known.as_deref();
        // A file written part by part is alone in its batch and not read ahead.
        let stream_from = self.stream_in_directory_from();
        let streamed = |batch: &[&WalkEntry]| {
            stream_from.is_some_and(|from| batch.len() == 1 && batch[0].len >= from)
        };
        std::thread::scope(|scope| {
            // With prefetching, a thread reads the next batch (on worker threads of its own)
            // while this one writes the last: reading and writing files both cost the
            // kernel's copies, and they overlap on two cores. The channel holds one batch, so
            // at most three are in memory; when this side stops (a spent budget), the reader
            // finds the channel closed and stops after the batch it is reading.
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            if prefetch {
                scope.spawn(move || {
                    for batch in batches(files) {
                        let contents =
                            if streamed(batch) { Vec::new() } else { read_many(sandbox, batch) };
                        let ahead =
                            if count_ahead { count_read(&contents, known) } else { Vec::new() };
                        if tx.send((batch, contents, ahead)).is_err() {
                            break;
                        }
                    }
                });
            } else {
                drop(tx);
            }
            let mut read = rx.into_iter();
            let mut plain = batches(files);
            let mut done = 0;
            loop {
                let (batch, contents, ahead) = if prefetch {
                    match read.next() {
                        Some(next) => next,
                        None => return true,
                    }
                } else {
                    match plain.next() {
                        Some(batch) if streamed(batch) => (batch, Vec::new(), Vec::new()),
                        Some(batch) => {
                            let contents =
                                batch.iter().map(|e| sandbox.read_text(&e.location)).collect();
                            (batch, contents, Vec::new())
                        }
                        None => return true,
                    }
                };
                if self.out.budget.stopped() {
                    return false;
                }
                if streamed(batch) {
                    if !self.stream_directory_file(batch[0], item) {
                        return false;
                    }
                    continue;
                }
                if !self.take_batch(batch, &contents, &ahead, item) {
                    return false;
                }
                done += batch.len();
                if let Some((_, left_out)) = &mut self.dir_drop {
                    // The files of the later batches are left out too.
                    *left_out += files.len() - done;
                    return true;
                }
            }
        })
    }

    /// Writes one file of a directory expansion read whole, as a batch of its own would be;
    /// whether the expansion goes on.
    pub(crate) fn directory_file_whole(&mut self, entry: &WalkEntry, item: &mut Item<'_>) -> bool {
        let contents = [self.sandbox().read_text(&entry.location)];
        self.take_batch(&[entry], &contents, &[], item)
    }

    /// Writes the contents of one batch of an expansion, read in walk order: sanitised, then
    /// their token counts in parallel, then the budget and the output in walk order again;
    /// whether the expansion goes on. Content nothing changed is written from the text as
    /// read, without a copy, and takes the count taken as it was read (`ahead`, one for each
    /// of `contents` when the reading thread counted them).
    fn take_batch(
        &mut self,
        batch: &[&WalkEntry],
        contents: &[Result<Content, ctx_fs::Error>],
        ahead: &[Option<usize>],
        item: &mut Item<'_>,
    ) -> bool {
        let mut texts: Vec<(String, Option<&'static str>, Cow<'_, str>)> = Vec::new();
        let mut counted: Vec<Option<usize>> = Vec::new();
        for (i, (entry, content)) in batch.iter().zip(contents).enumerate() {
            // A file reached through a link is shown under the link's own path.
            let shown = display_in(self.sandbox(), entry.location.root(), entry.path.as_str());
            match content {
                Ok(Content::Text { text, encoding }) => {
                    self.assembly.stats.files += 1;
                    let encoding = self.decoded_from(item, &shown, *encoding);
                    let mut content = self.cut_lines(text.as_str(), item);
                    if self.opts().line_numbers {
                        content = Cow::Owned(select::number_lines(&content, 1));
                    }
                    let clean = match content {
                        Cow::Borrowed(text) => self.clean_content(text, &shown, 1),
                        Cow::Owned(text) => match self.clean_content(&text, &shown, 1) {
                            Cow::Owned(changed) => Cow::Owned(changed),
                            Cow::Borrowed(_) => Cow::Owned(text),
                        },
                    };
                    // The count taken as it was read holds for the same bytes only.
                    let unchanged = matches!(&clean, Cow::Borrowed(c)
                        if c.as_ptr() == text.as_ptr() && c.len() == text.len());
                    counted.push(ahead.get(i).copied().flatten().filter(|_| unchanged));
                    texts.push((shown, encoding, clean));
                }
                Ok(_) => {
                    let message = format!("binary file left out: {shown}");
                    self.diagnose_item(item, Code::Binary, message);
                }
                Err(err) => self.diagnose_item(item, err.code(), err.to_string()),
            }
        }
        // Counted in parallel when the records show tokens, or when the budget may not hold
        // the batch without counting it.
        let bytes: usize = texts.iter().map(|(_, _, c)| c.len()).sum();
        let budget = &self.out.budget;
        let count = budget.counting() || (budget.limited() && !budget.fits_bytes(bytes));
        let counts: Vec<Option<usize>> = if count {
            // What the reading thread did not count, counted here in parallel.
            let refs: Vec<&str> = texts
                .iter()
                .zip(&counted)
                .filter(|(_, n)| n.is_none())
                .map(|((_, _, c), _)| c.as_ref())
                .collect();
            let mut rest = budget.count_contents(&refs).into_iter();
            counted.iter().map(|n| n.or_else(|| rest.next())).collect()
        } else {
            vec![None; texts.len()]
        };
        let total = texts.len();
        for (i, ((shown, encoding, clean), count)) in texts.into_iter().zip(counts).enumerate() {
            let mut entry = Entry::File {
                written: None,
                path: shown.clone(),
                lines: None,
                encoding,
                content: Cow::Borrowed(""),
            };
            let counted = Counted { text: clean, tokens: count, whole: None };
            let probe = (&entry, Place::InDirectory, false);
            match self.spend(counted, &shown, item, probe) {
                Fitted::Place(content) => {
                    item.record.bytes += content.len() as u64;
                    if let Entry::File { content: c, .. } = &mut entry {
                        *c = content;
                    }
                    if let Err(message) = self.out.directory_file(&entry) {
                        self.out.budget.forget_last();
                        self.budget_spent_at(message, Some(item));
                        return false;
                    }
                }
                Fitted::Dropped(_) => {
                    // The expansion stops here; its closing note says what it left out.
                    self.dir_drop = Some((shown, total - i));
                    break;
                }
            }
        }
        // A count taken for content not written must not stand for later text.
        self.out.budget.forget_last();
        true
    }
}

/// Splits the files of an expansion into batches of at most 256 files or about 8 MiB, so
/// that one batch at a time is held in memory.
fn batches<'w, 'e>(files: &'w [&'e WalkEntry]) -> impl Iterator<Item = &'w [&'e WalkEntry]> {
    const MAX_FILES: usize = 256;
    const MAX_BYTES: u64 = 8 << 20;
    let mut rest = files;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let mut n = 0;
        while n < rest.len() && n < MAX_FILES && (n == 0 || bytes + rest[n].len <= MAX_BYTES) {
            bytes += rest[n].len;
            n += 1;
        }
        let (batch, tail) = rest.split_at(n);
        rest = tail;
        Some(batch)
    })
}

/// The token counts of the texts read, one for each of `contents` (`None` for a file that is
/// not text), counted in parallel.
fn count_read(
    contents: &[Result<Content, ctx_fs::Error>],
    known: Option<&ctx_tokens::KnownCounts>,
) -> Vec<Option<usize>> {
    let texts: Vec<&str> = contents
        .iter()
        .filter_map(|c| match c {
            Ok(Content::Text { text, .. }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let mut counts = crate::budget::count_through(known, &texts).into_iter();
    contents
        .iter()
        .map(|c| match c {
            Ok(Content::Text { .. }) => counts.next(),
            _ => None,
        })
        .collect()
}

/// Reads the files of a walk on worker threads; results come back in the walk's order.
fn read_many(sandbox: &Sandbox, files: &[&WalkEntry]) -> Vec<Result<Content, ctx_fs::Error>> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
    let chunk = files.len().div_ceil(workers);
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk.max(1))
            .map(|part| {
                scope.spawn(move || {
                    part.iter().map(|e| sandbox.read_text(&e.location)).collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// The tree drawing of the files taken from a directory.
fn tree_of(paths: &[String]) -> String {
    let mut rows: Vec<(String, usize, bool)> = Vec::new();
    let mut seen: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut sorted: Vec<&String> = paths.iter().collect();
    sorted.sort();
    for path in sorted {
        let parts: Vec<&str> = path.split('/').collect();
        for level in 1..=parts.len() {
            let prefix = parts[..level].join("/");
            if seen.insert(prefix) {
                rows.push((parts[level - 1].to_owned(), level, level < parts.len()));
            }
        }
    }
    crate::tools::render_tree(".", &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees() {
        let rows = ["b/c.rs".to_owned(), "a.md".to_owned()];
        assert_eq!(tree_of(&rows), ".\n├── a.md\n└── b/\n    └── c.rs\n");
    }
}
