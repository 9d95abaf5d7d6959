//! The diagnostics of an open document: those the assembly reports in the document itself,
//! with the codes and messages of `ctx check`, and on each of its references whose included
//! files have problems, a summary of them; for a coding agent's rule file, the problems the
//! agents that read it find (`ctx check`'s `E_RULES_*` / `W_RULES_*`).
//!
//! Bounded: at most [`MAX_DIAGNOSTICS`] are published for a document, then one `W_LIMIT`
//! diagnostic says how many were left out; a summary lists [`SUMMARY_LINES`] problems and
//! attaches at most [`MAX_RELATED`] as related information. Positions go through a
//! [`LineIndex`] built once per text, so a thousand problems on one long line cost a
//! thousand binary searches, not a thousand scans of the line.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io;

use ctx::Dependencies;
use ctx::assemble::record::{DiagnosticRecord, Kind, ReferenceRecord};
use ctx::fs::Location;
use ctx::syntax::{ItemKind, Severity};
use lsp_types as lsp;
use lsp_types::Url;

use crate::documents::{Document, Unchecked};
use crate::text::LineIndex;
use crate::workspace::{Workspace, display_name, visible};

/// Most diagnostics published for one document (besides the one that says how many more
/// there were).
pub(crate) const MAX_DIAGNOSTICS: usize = 1000;
/// Most problems of included files a summary lists.
const SUMMARY_LINES: usize = 10;
/// Most problems of included files a summary attaches as related information.
const MAX_RELATED: usize = 100;

/// What the check of a document found.
pub(crate) struct Checked {
    pub(crate) diagnostics: Vec<lsp::Diagnostic>,
    /// What its assembly depended on; `None` when it was not assembled.
    pub(crate) deps: Option<Dependencies>,
}

/// A reference of the document and what lies below it.
struct Group<'a> {
    record: &'a ReferenceRecord,
    files: Vec<Location>,
    dir: Option<Location>,
    problems: Vec<(&'a DiagnosticRecord, Option<Location>)>,
}

/// The diagnostics of a document, up to [`MAX_DIAGNOSTICS`], and what was left out.
#[derive(Default)]
struct Capped {
    kept: Vec<lsp::Diagnostic>,
    left_out: usize,
    errors_left_out: usize,
    /// The line and column of the first left out.
    first_left_out: Option<(u32, u32)>,
}

impl Capped {
    /// Keeps the diagnostic `make` makes, at `at`, if there is room; else counts it.
    fn push(&mut self, at: (u32, u32), severity: Severity, make: impl FnOnce() -> lsp::Diagnostic) {
        if self.kept.len() < MAX_DIAGNOSTICS {
            self.kept.push(make());
            return;
        }
        self.left_out += 1;
        self.errors_left_out += usize::from(severity == Severity::Error);
        self.first_left_out.get_or_insert(at);
    }

    /// What was kept, then a `W_LIMIT` at the first left out that says how many were.
    fn finish(mut self, index: &LineIndex<'_>) -> Vec<lsp::Diagnostic> {
        if let Some((line, column)) = self.first_left_out {
            let start = index.offset_of_line_column(line, column);
            let mut message = format!("{} more diagnostics not shown", self.left_out);
            match self.errors_left_out {
                0 => {}
                1 => message.push_str(" (1 error)"),
                n => message.push_str(&format!(" ({n} errors)")),
            }
            let range = index.range(start, start);
            self.kept.push(diagnostic(
                range,
                Severity::Warning,
                ctx::Code::Limit.as_str(),
                message,
            ));
        }
        self.kept
    }
}

impl Workspace<'_> {
    /// Checks an open document; `None` when it is not open or could not be assembled.
    pub(crate) fn check(&self, uri: &Url) -> Option<Checked> {
        let doc = self.docs.get(uri)?;
        if let Some(why) = doc.unchecked {
            return Some(Checked { diagnostics: vec![unchecked(why)], deps: None });
        }
        let assembly = self.assemble(uri, &mut io::sink())?;
        let name = display_name(uri);
        let index = LineIndex::new(&doc.text);
        let scan = ctx::syntax::scan_with(&doc.text, &self.ctx.assembler().options().syntax);
        let mut same: HashMap<&str, bool> = HashMap::new();
        let mut out = Capped::default();
        let mut inside = Vec::new();
        for d in &assembly.diagnostics {
            let mine = *same.entry(d.file.as_str()).or_insert_with(|| match &doc.location {
                Some(location) => self
                    .ctx
                    .sandbox()
                    .resolve_in_workspace(&d.file)
                    .is_ok_and(|found| &found == location),
                None => d.file == name,
            });
            if !mine {
                inside.push(d);
                continue;
            }
            out.push((d.line, d.column), d.severity, || {
                let start = index.offset_of_line_column(d.line, d.column);
                let range = index.range(start, item_end(&doc.text, &scan, start));
                diagnostic(range, d.severity, d.code.as_str(), visible(&d.message))
            });
        }
        if let Some(location) = &doc.location {
            for d in self.rule_diagnostics(location) {
                out.push((d.line, d.column), d.severity, || {
                    let start = index.offset_of_line_column(d.line, d.column);
                    let range = index.range(start, item_end(&doc.text, &scan, start));
                    diagnostic(range, d.severity, d.code.as_str(), rule_message(&d))
                });
            }
        }
        for (at, summary) in self.included(doc, &index, &scan, &assembly.references, &inside) {
            let severity = match summary.severity {
                Some(lsp::DiagnosticSeverity::ERROR) => Severity::Error,
                _ => Severity::Warning,
            };
            out.push(at, severity, || summary);
        }
        let path = doc.location.as_ref().map(|location| self.absolute(location));
        let deps = self.ctx.dependencies(path.as_deref(), &assembly.references);
        Some(Checked { diagnostics: out.finish(&index), deps: Some(deps) })
    }

    /// The problems of a coding agent's rule file (`CLAUDE.md`, `AGENTS.md`, `*.mdc` …) as the
    /// agents that read it read it, from the open buffer (the views read through the same
    /// sandbox, whose overlay holds it); none for another document. The user's own agent
    /// folders are not opened: what they change is left to `ctx rules lint`.
    fn rule_diagnostics(&self, location: &Location) -> Vec<ctx::agents::Diagnostic> {
        let path = location.path().as_str();
        if location.root() != ctx::fs::RootId::WORKSPACE || !ctx::agents::is_rule_file(path) {
            return Vec::new();
        }
        let home = ctx::agents::Home::none();
        self.ctx.rule_file_diagnostics(path, &home).unwrap_or_default()
    }

    /// One diagnostic per reference of the document whose included files have problems: on
    /// the reference, a summary; the problems themselves, in their files, as related
    /// information. Each comes with the line and column of its reference.
    fn included<'a>(
        &self,
        doc: &Document,
        index: &LineIndex<'_>,
        scan: &ctx::syntax::Scan<'_>,
        references: &'a [ReferenceRecord],
        problems: &[&'a DiagnosticRecord],
    ) -> Vec<((u32, u32), lsp::Diagnostic)> {
        if problems.is_empty() {
            return Vec::new();
        }
        let groups = self.groups(references, problems);
        let texts = self.related_texts(&groups);
        let indexes: HashMap<&Location, LineIndex<'_>> =
            texts.iter().map(|(location, text)| (location, LineIndex::new(text))).collect();
        groups
            .iter()
            .filter(|group| !group.problems.is_empty())
            .map(|group| {
                let at = &group.record.at;
                let start = index.offset_of_line_column(at.line, at.column);
                let first = group
                    .problems
                    .iter()
                    .find(|(p, _)| p.severity == Severity::Error)
                    .unwrap_or(&group.problems[0])
                    .0;
                let range = index.range(start, item_end(&doc.text, scan, start));
                let mut summary = diagnostic(
                    range,
                    first.severity,
                    first.code.as_str(),
                    summary(&group.problems),
                );
                let related =
                    group.problems.iter().take(MAX_RELATED).filter_map(|(p, location)| {
                        let location = location.as_ref()?;
                        self.related(p, location, texts.get(location)?, indexes.get(location)?)
                    });
                summary.related_information = Some(related.collect());
                ((at.line, at.column), summary)
            })
            .collect()
    }

    /// Sorts the problems of included files under the document's own references.
    ///
    /// The records are depth first: each of the document's own references (depth 0) comes
    /// before the records of what it includes. A failed reference below is the problem of
    /// the group it lies in, so that a file included under two references counts under each.
    fn groups<'a>(
        &self,
        references: &'a [ReferenceRecord],
        problems: &[&'a DiagnosticRecord],
    ) -> Vec<Group<'a>> {
        let sandbox = self.ctx.sandbox();
        let mut known: HashMap<String, Option<Location>> = HashMap::new();
        let mut locate = |path: &str| -> Option<Location> {
            known
                .entry(path.to_owned())
                .or_insert_with(|| sandbox.resolve_in_workspace(path).ok())
                .clone()
        };
        let mut groups: Vec<Group<'_>> = Vec::new();
        // The failed references below, by place and code, each with its group, in order.
        let mut failed: HashMap<(&str, u32, u32, &str), VecDeque<usize>> = HashMap::new();
        for record in references {
            if record.depth > 0
                && let Some(error) = &record.error
                && !groups.is_empty()
            {
                let key = (
                    record.at.file.as_str(),
                    record.at.line,
                    record.at.column,
                    error.code.as_str(),
                );
                failed.entry(key).or_default().push_back(groups.len() - 1);
            }
            if record.depth == 0 {
                let found = if record.error.is_none() { locate(&record.path) } else { None };
                let (files, dir) = match (found, record.kind) {
                    (Some(location), Kind::File) => (vec![location], None),
                    (Some(location), Kind::Directory) => (Vec::new(), Some(location)),
                    _ => (Vec::new(), None),
                };
                groups.push(Group { record, files, dir, problems: Vec::new() });
            } else if let Some(group) = groups.last_mut()
                && let Some(location) = locate(&record.at.file)
            {
                group.files.push(location);
            }
        }
        // The first group that holds each file, and the groups of directories, in order.
        let mut holder: HashMap<&Location, usize> = HashMap::new();
        for (n, group) in groups.iter().enumerate() {
            for file in &group.files {
                holder.entry(file).or_insert(n);
            }
        }
        let holder: HashMap<Location, usize> =
            holder.into_iter().map(|(location, n)| (location.clone(), n)).collect();
        let dirs: Vec<(usize, Location)> =
            groups.iter().enumerate().filter_map(|(n, g)| Some((n, g.dir.clone()?))).collect();
        let first_other = groups.iter().position(|g| g.record.kind != Kind::File);
        let mut seen = BTreeSet::new();
        for &problem in problems {
            let location = locate(&problem.file);
            let key = (problem.file.as_str(), problem.line, problem.column, problem.code.as_str());
            let reference = failed.get_mut(&key).and_then(VecDeque::pop_front);
            // Else the first reference whose files hold it; a problem in a file met through a
            // glob or a tool has no record of its own: it goes to the first glob, directory or
            // tool of the document.
            let group = reference.or_else(|| {
                let location = location.as_ref()?;
                let by_file = holder.get(location).copied();
                let by_dir = dirs.iter().find_map(|(n, dir)| {
                    (dir.root() == location.root() && location.path().starts_with(dir.path()))
                        .then_some(*n)
                });
                by_file.into_iter().chain(by_dir).min()
            });
            let group = group.or(first_other);
            // A file included twice under one reference reports its problems twice.
            if let Some(n) = group
                && seen.insert((n, &problem.file, problem.line, problem.column, &problem.message))
            {
                groups[n].problems.push((problem, location));
            }
        }
        groups
    }

    /// The texts of the files whose problems are attached as related information.
    fn related_texts(&self, groups: &[Group<'_>]) -> HashMap<Location, ctx::fs::Text> {
        let mut texts = HashMap::new();
        for group in groups {
            for (_, location) in group.problems.iter().take(MAX_RELATED) {
                let Some(location) = location else { continue };
                if !texts.contains_key(location)
                    && let Some(text) = self.read(location)
                {
                    texts.insert(location.clone(), text);
                }
            }
        }
        texts
    }

    /// A problem of an included file as related information: where it is in that file.
    fn related(
        &self,
        problem: &DiagnosticRecord,
        location: &Location,
        text: &str,
        index: &LineIndex<'_>,
    ) -> Option<lsp::DiagnosticRelatedInformation> {
        let start = index.offset_of_line_column(problem.line, problem.column);
        let end = match &problem.source {
            Some(source) if !source.span.is_empty() => start + source.span.len(),
            _ => text[start..].chars().next().map_or(start, |c| start + c.len_utf8()),
        };
        Some(lsp::DiagnosticRelatedInformation {
            location: lsp::Location::new(self.uri(location)?, index.range(start, end)),
            message: visible(&format!("{} {}", problem.code.as_str(), problem.message)),
        })
    }
}

/// A rule diagnostic's message as `ctx check` words it: the agent, the message, the hint;
/// made visible.
fn rule_message(d: &ctx::agents::Diagnostic) -> String {
    let mut message = format!("{}: {}", d.agent, d.message);
    if let Some(hint) = &d.hint {
        message.push_str(&format!(" (hint: {hint})"));
    }
    visible(&message)
}

/// The one diagnostic of a document whose text is not kept.
fn unchecked(why: Unchecked) -> lsp::Diagnostic {
    let message = match why {
        Unchecked::Large { bytes, max } => format!(
            "the document is too large to check: {bytes} bytes, more than {max} \
             (--max-file-bytes raises the limit)"
        ),
        Unchecked::Edits { edits } => format!(
            "the document is not checked: a change of {edits} edits at once is more than the \
             server applies; close and reopen it to check it again"
        ),
        Unchecked::Held { max } => format!(
            "the document is not checked: the open documents would hold more than {max} bytes \
             together; close some, then reopen it to check it"
        ),
    };
    let start = lsp::Position::new(0, 0);
    diagnostic(
        lsp::Range::new(start, start),
        Severity::Error,
        ctx::Code::TooLarge.as_str(),
        message,
    )
}

/// A diagnostic of ctx.
fn diagnostic(
    range: lsp::Range,
    severity: Severity,
    code: &str,
    message: String,
) -> lsp::Diagnostic {
    let severity = match severity {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        _ => lsp::DiagnosticSeverity::WARNING,
    };
    lsp::Diagnostic {
        range,
        severity: Some(severity),
        code: Some(lsp::NumberOrString::String(code.to_owned())),
        source: Some("ctx".to_owned()),
        message,
        ..lsp::Diagnostic::default()
    }
}

/// Where the item of a document that starts at `start` ends: the whole item, else the next
/// character.
fn item_end(text: &str, scan: &ctx::syntax::Scan<'_>, start: usize) -> usize {
    // The items are in the order of the text.
    let first = scan.items.partition_point(|item| item.span.start < start);
    scan.items[first..]
        .iter()
        .take_while(|item| item.span.start == start)
        .find(|item| !matches!(item.kind, ItemKind::Text))
        .map_or_else(
            || text[start..].chars().next().map_or(start, |c| start + c.len_utf8()),
            |item| item.span.end,
        )
}

/// The message of a summary of problems in included files: `common/bad.md: 1 error:
/// E_NOT_FOUND …` for one problem; the files and the counts, then a line per problem, for
/// several.
fn summary(problems: &[(&DiagnosticRecord, Option<Location>)]) -> String {
    let errors = problems.iter().filter(|(p, _)| p.severity == Severity::Error).count();
    let warnings = problems.len() - errors;
    let mut counts = Vec::new();
    for (n, what) in [(errors, "error"), (warnings, "warning")] {
        match n {
            0 => {}
            1 => counts.push(format!("1 {what}")),
            n => counts.push(format!("{n} {what}s")),
        }
    }
    let mut files: Vec<&str> = Vec::new();
    let mut listed = BTreeSet::new();
    for (p, _) in problems {
        if listed.insert(p.file.as_str()) {
            files.push(&p.file);
        }
    }
    let files = if files.len() > 3 {
        format!("{} and {} more files", files[..3].join(", "), files.len() - 3)
    } else {
        files.join(", ")
    };
    if let [(p, _)] = problems {
        return visible(&format!(
            "{files}: {}: {} {}",
            counts.join(", "),
            p.code.as_str(),
            p.message
        ));
    }
    let mut message = format!("{files}: {}", counts.join(", "));
    for (p, _) in problems.iter().take(SUMMARY_LINES) {
        message.push_str(&format!(
            "\n{}:{}:{}: {} {}",
            p.file,
            p.line,
            p.column,
            p.code.as_str(),
            p.message
        ));
    }
    if problems.len() > SUMMARY_LINES {
        message.push_str(&format!("\n… and {} more", problems.len() - SUMMARY_LINES));
    }
    visible(&message)
}
