//! The recursive walk of assembly.md: one pass in document order, one macro context flowing
//! through the recursion, files of inactive branches never opened.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use ctx_fs::{Content, FileKind, Location, RootId, Sandbox};
use ctx_preprocess::{Event, Macros, Preprocessor, Request, RequestKind};
use ctx_syntax::{Code, LineIndex, Reference as SyntaxRef, Severity, TargetKind, ToolCall};
use serde_json::{Map, Value};

use crate::front_matter::{self, ParamsMerger};
use crate::options::{Format, Mode, Options};
use crate::output::{self, Entry, Escaped, Failure, Sink, WriteSink};
use crate::render::{
    At, DiagnosticRecord, ErrorRecord, Kind, Lines, Output, ReferenceRecord, Stats, Syntax,
    error_marker,
};
use crate::sanitize::sanitize;
use crate::select::{self, LineRange};
use crate::tokens;
use crate::tools::{ToolContext, Tools};

/// What the source index (or any other resolver an embedder plugs in) says about a path
/// that did not resolve from the including file's directory or the workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The path names this location.
    Found(Location),
    /// The name matches several files; the candidates, shown relative to their roots.
    Ambiguous(Vec<String>),
    /// Nothing known by that name.
    NotFound,
}

/// The last step of path resolution (assembly.md §2, step 4): the out-of-source build's
/// source index plugs in here.
pub trait Resolver: Send + Sync {
    /// Resolves a path that no earlier rule resolved.
    fn resolve(&self, written: &str, sandbox: &Sandbox) -> Resolution;
}

/// The result of an assembly: what `--format json` prints (the schema is
/// [`Output`](crate::render::Output)'s).
pub type Assembly = Output;

impl Assembly {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    /// The JSON output, pretty-printed, with a final line break.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        json.push('\n');
        json
    }
}

/// Why the top-level input could not be assembled at all.
#[derive(Debug)]
pub enum AssembleError {
    /// The document could not be resolved or read.
    Input(ctx_fs::Error),
    /// The document is binary.
    Binary(String),
    /// Writing the output failed.
    Io(io::Error),
}

impl std::fmt::Display for AssembleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssembleError::Input(err) => write!(f, "{}: {err}", err.code()),
            AssembleError::Binary(path) => write!(f, "{}: binary file: {path}", Code::Binary),
            AssembleError::Io(err) => write!(f, "cannot write the output: {err}"),
        }
    }
}

impl std::error::Error for AssembleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AssembleError::Input(err) => Some(err),
            AssembleError::Io(err) => Some(err),
            AssembleError::Binary(_) => None,
        }
    }
}

/// Assembles documents and prompts through one sandbox.
///
/// An assembler is cheap to share (`&self` everywhere): the sandbox's cache makes a second
/// assembly of the same files pay only for the ones that changed.
#[derive(Clone)]
pub struct Assembler {
    sandbox: Arc<Sandbox>,
    options: Options,
    tools: Tools,
    resolver: Option<Arc<dyn Resolver>>,
    /// Parsed front matter by file content, shared by the clones of an assembler: a content
    /// cache hit hands back the same `Arc<str>`, so an unchanged file is not parsed again.
    front_matter: Arc<Mutex<FrontMatterMemo>>,
}

/// Front matter parsed once per file content (keyed by the content's address, checked
/// through a weak reference so a reused address never matches stale content).
#[derive(Default)]
struct FrontMatterMemo {
    entries: HashMap<usize, (Weak<str>, Arc<ParsedFrontMatter>)>,
}

/// The owned result of `front_matter::parse`.
struct ParsedFrontMatter {
    body_offset: usize,
    body_line: u32,
    front_matter: Option<front_matter::FrontMatter>,
    diagnostics: Vec<ctx_syntax::Diagnostic>,
}

impl ParsedFrontMatter {
    fn of(text: &str) -> ParsedFrontMatter {
        let parsed = front_matter::parse(text);
        ParsedFrontMatter {
            body_offset: parsed.body_offset,
            body_line: parsed.body_line,
            front_matter: parsed.front_matter,
            diagnostics: parsed.diagnostics,
        }
    }
}

/// How many parsed front matters an assembler keeps.
const FRONT_MATTER_MEMO: usize = 4096;

impl std::fmt::Debug for Assembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembler")
            .field("options", &self.options)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl Assembler {
    /// An assembler with the built-in tools.
    pub fn new(sandbox: Arc<Sandbox>, options: Options) -> Assembler {
        Assembler {
            sandbox,
            options,
            tools: Tools::builtin(),
            resolver: None,
            front_matter: Arc::default(),
        }
    }

    /// Replaces the tools.
    pub fn with_tools(mut self, tools: Tools) -> Assembler {
        self.tools = tools;
        self
    }

    /// Plugs in a resolver for paths that resolve nowhere else.
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolver>) -> Assembler {
        self.resolver = Some(resolver);
        self
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The options, to change.
    pub fn options_mut(&mut self) -> &mut Options {
        &mut self.options
    }

    /// The tools, to register or switch off.
    pub fn tools_mut(&mut self) -> &mut Tools {
        &mut self.tools
    }

    /// The sandbox.
    pub fn sandbox(&self) -> &Arc<Sandbox> {
        &self.sandbox
    }

    /// Assembles the file at `path` (relative to the workspace root, or absolute inside a
    /// root).
    ///
    /// # Errors
    ///
    /// When the file itself cannot be resolved or read; problems inside it are diagnostics.
    pub fn assemble_file(&self, path: &str) -> Result<Assembly, AssembleError> {
        let mut content = String::new();
        let mut assembly = self.file_into(path, &mut content)?;
        assembly.content = content;
        Ok(assembly)
    }

    /// Assembles the file at `path`, writing the rendering to `writer` as the walk proceeds
    /// (format `json` is written whole at the end). The returned assembly has no content.
    ///
    /// # Errors
    ///
    /// As [`Assembler::assemble_file`], and when writing fails.
    pub fn assemble_file_to(
        &self,
        path: &str,
        writer: &mut dyn io::Write,
    ) -> Result<Assembly, AssembleError> {
        if self.options.format == Format::Json {
            let assembly = self.assemble_file(path)?;
            writer.write_all(assembly.to_json().as_bytes()).map_err(AssembleError::Io)?;
            return Ok(assembly);
        }
        self.file_into(path, &mut WriteSink(writer))
    }

    /// Assembles a text that is not a file (a prompt, or standard input), as if it were a
    /// document named `name` in the workspace root.
    pub fn assemble_str(&self, text: &str, name: &str) -> Assembly {
        let mut content = String::new();
        let mut assembly =
            self.str_into(text, name, &mut content).unwrap_or_else(|never| match never {});
        assembly.content = content;
        assembly
    }

    /// Assembles a text that is not a file, writing to `writer` as the walk proceeds.
    ///
    /// # Errors
    ///
    /// When writing fails.
    pub fn assemble_str_to(
        &self,
        text: &str,
        name: &str,
        writer: &mut dyn io::Write,
    ) -> Result<Assembly, AssembleError> {
        if self.options.format == Format::Json {
            let assembly = self.assemble_str(text, name);
            writer.write_all(assembly.to_json().as_bytes()).map_err(AssembleError::Io)?;
            return Ok(assembly);
        }
        let mut sink = WriteSink(writer);
        let mut run = Run::new(self);
        let doc = Doc { location: None, dir: self.sandbox.workspace(), name: name.to_owned() };
        run.top(&doc, text, None, &mut sink);
        run.finish(&mut sink)
    }

    fn file_into(&self, path: &str, sink: &mut dyn Sink) -> Result<Assembly, AssembleError> {
        let location = self.sandbox.resolve_in_workspace(path).map_err(AssembleError::Input)?;
        let content = self.sandbox.read_text(&location).map_err(AssembleError::Input)?;
        let Content::Text { text, .. } = content else {
            return Err(AssembleError::Binary(path.to_owned()));
        };
        let mut run = Run::new(self);
        run.files += 1;
        let doc = Doc {
            dir: location.parent().unwrap_or_else(|| self.sandbox.workspace()),
            name: display_path(&self.sandbox, &location),
            location: Some(location),
        };
        run.top(&doc, &text, Some(&text), sink);
        run.finish(sink)
    }

    fn str_into(
        &self,
        text: &str,
        name: &str,
        sink: &mut String,
    ) -> Result<Assembly, std::convert::Infallible> {
        let mut run = Run::new(self);
        let doc = Doc { location: None, dir: self.sandbox.workspace(), name: name.to_owned() };
        run.top(&doc, text, None, sink);
        Ok(run.finish(sink).unwrap_or_else(|_| unreachable!("a string sink does not fail")))
    }
}

/// The path of a location as shown to the user: relative to the workspace root, or joined
/// to its root's path for the extra roots.
pub(crate) fn display_path(sandbox: &Sandbox, location: &Location) -> String {
    if location.root() == RootId::WORKSPACE {
        location.path().as_str().to_owned()
    } else {
        let root = sandbox.root_path(location.root()).as_str().trim_end_matches('/');
        if location.path().as_str().is_empty() {
            root.to_owned()
        } else {
            format!("{root}/{}", location.path())
        }
    }
}

/// Whether a path is absolute on any platform: `/x`, `\x`, `C:\x`, `C:/x`, `\\server`.
fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    matches!(b.first(), Some(b'/' | b'\\'))
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && matches!(b[2], b'/' | b'\\'))
}

/// Whether a path is a URL or names another scheme (`http:`, `file:`…). A drive letter is not
/// a scheme.
fn scheme(path: &str) -> Option<&str> {
    let (scheme, rest) = path.split_once(':')?;
    let valid = scheme.len() >= 2
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    const KNOWN: [&str; 10] =
        ["http", "https", "file", "ftp", "ftps", "data", "mailto", "ssh", "git", "javascript"];
    (valid && (rest.starts_with("//") || KNOWN.iter().any(|k| k.eq_ignore_ascii_case(scheme))))
        .then_some(scheme)
}

/// Resolves a relative or absolute path as assembly.md §2 says, without the source index:
/// absolute paths as they are; relative ones from `base`, then from the workspace root.
pub(crate) fn resolve_relative(
    sandbox: &Sandbox,
    written: &str,
    base: &Location,
) -> Result<Location, ctx_fs::Error> {
    if is_absolute(written) {
        return sandbox.resolve(written, None);
    }
    match sandbox.resolve(written, Some(base)) {
        Ok(location) => Ok(location),
        Err(first) => {
            let at_root = base.root() == RootId::WORKSPACE && base.path().as_str().is_empty();
            if at_root {
                return Err(first);
            }
            match sandbox.resolve(written, None) {
                Ok(location) => Ok(location),
                Err(second) => Err(pick_error(first, second)),
            }
        }
    }
}

/// Which failure to report when a path failed from the including file's directory (`first`)
/// and from the workspace root (`second`): the first, unless it is a miss and the second
/// found something there that was refused (a denied or irregular file). A `..` that leaves
/// the root only from the root (`E_OUTSIDE`) says nothing about the file, so the miss stands.
fn pick_error(first: ctx_fs::Error, second: ctx_fs::Error) -> ctx_fs::Error {
    let informative = !matches!(second.code(), Code::NotFound | Code::Outside);
    if first.code() == Code::NotFound && informative { second } else { first }
}

/// Resolves like [`resolve_relative`] and reads the file in the same pass.
fn read_relative(
    sandbox: &Sandbox,
    written: &str,
    base: &Location,
) -> Result<(Location, Content), ctx_fs::Error> {
    if is_absolute(written) {
        return sandbox.read_path(written, None);
    }
    match sandbox.read_path(written, Some(base)) {
        Ok(found) => Ok(found),
        Err(first) => {
            // A directory (or another irregular entry) is a hit: the caller looks at it.
            if *base == sandbox.workspace() || first.code() == Code::NotRegular {
                return Err(first);
            }
            match sandbox.read_path(written, None) {
                Ok(found) => Ok(found),
                Err(second) => Err(pick_error(first, second)),
            }
        }
    }
}

/// A document being assembled.
struct Doc {
    /// The file, unless the document came from a string.
    location: Option<Location>,
    /// The directory relative paths resolve from.
    dir: Location,
    /// The name diagnostics and records use.
    name: String,
}

/// What the walk does when it must stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The output or include budget is spent.
    Budget,
    /// `--strict` and an error.
    Strict,
    /// Writing failed.
    Io,
}

/// The result of one resolved reference, before rendering.
struct Resolved {
    kind: Kind,
    location: Location,
    path: String,
    /// The file's content, when resolving it read it in the same pass.
    content: Option<Content>,
}

/// One assembly run.
struct Run<'a> {
    asm: &'a Assembler,
    opts: &'a Options,
    macros: Macros,
    /// The include chain: each document's location (none for a string) and name.
    chain: Vec<(Option<Location>, String)>,
    references: Vec<ReferenceRecord>,
    diagnostics: Vec<DiagnosticRecord>,
    params: ParamsMerger,
    description: String,
    metadata: Map<String, Value>,
    requests: usize,
    files: u64,
    written: u64,
    tokens_total: u64,
    tokens_spent: usize,
    budget_warned: bool,
    /// How many times the token budget cut a document's text, so that the reference of the
    /// document being expanded can say it was truncated.
    budget_cuts: usize,
    stop: Option<Stop>,
    io_error: Option<io::Error>,
    entries: Vec<Entry>,
    failures: Vec<Failure>,
    escaped: Escaped,
    started: Instant,
}

impl<'a> Run<'a> {
    fn new(asm: &'a Assembler) -> Run<'a> {
        let mut macros = Macros::new();
        for (name, value) in &asm.options.defines {
            // Names were checked where the defines came from; a bad one is skipped here.
            let _ = macros.define(name, value.as_str());
        }
        Run {
            asm,
            opts: &asm.options,
            macros,
            chain: Vec::new(),
            references: Vec::new(),
            diagnostics: Vec::new(),
            params: ParamsMerger::new(),
            description: String::new(),
            metadata: Map::new(),
            requests: 0,
            files: 0,
            written: 0,
            tokens_total: 0,
            tokens_spent: 0,
            budget_warned: false,
            budget_cuts: 0,
            stop: None,
            io_error: None,
            entries: Vec::new(),
            failures: Vec::new(),
            escaped: Escaped::default(),
            started: Instant::now(),
        }
    }

    fn sandbox(&self) -> &'a Sandbox {
        &self.asm.sandbox
    }

    fn inline(&self) -> bool {
        self.opts.mode == Mode::Inline
    }

    /// The format that lays out content: JSON carries the rendering of its mode's default.
    fn layout(&self) -> Format {
        match self.opts.format {
            Format::Json if self.inline() => Format::Inline,
            Format::Json => Format::Xml,
            other => other,
        }
    }

    fn top(&mut self, doc: &Doc, text: &str, whole: Option<&Arc<str>>, sink: &mut dyn Sink) {
        self.chain.push((doc.location.clone(), doc.name.clone()));
        let markdown = doc.location.is_none() || crate::is_markdown(&doc.name);
        let (body, line_offset) = if markdown {
            let parsed = self.parse_front_matter(text, whole);
            self.front_matter_diagnostics(&parsed.diagnostics, doc, 0);
            if let Some(fm) = &parsed.front_matter {
                self.description = fm.description.clone();
                self.metadata = fm.metadata.clone();
                self.params.extend(fm.params.iter());
            }
            (&text[parsed.body_offset..], parsed.body_line - 1)
        } else {
            (text, 0)
        };
        self.expand(doc, body, line_offset, sink);
    }

    /// Splits and parses front matter, once per file content when the whole file is at hand.
    fn parse_front_matter(&self, text: &str, whole: Option<&Arc<str>>) -> Arc<ParsedFrontMatter> {
        let Some(whole) =
            whole.filter(|w| std::ptr::eq(w.as_ptr(), text.as_ptr()) && w.len() == text.len())
        else {
            return Arc::new(ParsedFrontMatter::of(text));
        };
        let key = whole.as_ptr() as usize;
        let memo = &self.asm.front_matter;
        if let Some((weak, parsed)) =
            memo.lock().unwrap_or_else(|e| e.into_inner()).entries.get(&key)
            && weak.upgrade().is_some_and(|alive| Arc::ptr_eq(&alive, whole))
        {
            return parsed.clone();
        }
        let parsed = Arc::new(ParsedFrontMatter::of(text));
        let mut memo = memo.lock().unwrap_or_else(|e| e.into_inner());
        if memo.entries.len() >= FRONT_MATTER_MEMO {
            memo.entries.retain(|_, (weak, _)| weak.strong_count() > 0);
            if memo.entries.len() >= FRONT_MATTER_MEMO {
                memo.entries.clear();
            }
        }
        memo.entries.insert(key, (Arc::downgrade(whole), parsed.clone()));
        parsed
    }

    fn finish(mut self, sink: &mut dyn Sink) -> Result<Assembly, AssembleError> {
        if !self.inline() && self.stop != Some(Stop::Io) {
            let tail = match self.layout() {
                Format::Xml => output::append_xml(&self.entries, &self.failures, &mut self.escaped),
                Format::Markdown => output::append_markdown(&self.entries),
                _ => output::append_plain(&self.entries),
            };
            self.write_unbudgeted(sink, &tail);
        }
        if self.escaped.count > 0 {
            let paths = std::mem::take(&mut self.escaped.paths).join(", ");
            let message = format!(
                "{} tag{} shaped like the wrapper's escaped as &lt; in {paths}",
                self.escaped.count,
                if self.escaped.count == 1 { "" } else { "s" }
            );
            let file = self.chain.first().map(|c| c.1.clone()).unwrap_or_default();
            self.diagnostics.push(DiagnosticRecord::new(Code::Escaped, message, file, 1, 1));
        }
        if let Some(err) = self.io_error {
            return Err(AssembleError::Io(err));
        }
        let counting = self.opts.counts_tokens();
        Ok(Assembly {
            content: String::new(),
            description: self.description,
            params: self.params.into_params(),
            metadata: self.metadata,
            references: self.references,
            diagnostics: self.diagnostics,
            stats: Stats {
                files: self.files,
                bytes: self.written,
                tokens: counting.then_some(self.tokens_total),
                elapsed_ms: self.started.elapsed().as_secs_f64() * 1000.0,
            },
        })
    }

    // ----- output -----------------------------------------------------------------------

    /// Writes text, within the output budget.
    fn write(&mut self, sink: &mut dyn Sink, text: &str) {
        if self.stop.is_some() || text.is_empty() {
            return;
        }
        let max = self.opts.limits.max_output_bytes;
        if max > 0 && self.written + text.len() as u64 > max {
            let message = format!("output budget of {max} bytes spent; the rest is not read");
            let file = self.chain.last().map(|c| c.1.clone()).unwrap_or_default();
            self.diagnostics.push(DiagnosticRecord::new(Code::Budget, message.clone(), file, 1, 1));
            let marker = error_marker(Code::Budget, &message);
            self.write_unbudgeted(sink, &marker);
            self.stop = Some(Stop::Budget);
            return;
        }
        self.written += text.len() as u64;
        if let Err(err) = sink.write(text) {
            self.io_error = Some(err);
            self.stop = Some(Stop::Io);
        }
    }

    fn write_unbudgeted(&mut self, sink: &mut dyn Sink, text: &str) {
        if self.stop == Some(Stop::Io) || text.is_empty() {
            return;
        }
        self.written += text.len() as u64;
        if let Err(err) = sink.write(text) {
            self.io_error = Some(err);
            self.stop = Some(Stop::Io);
        }
    }

    /// Writes document text, sanitised, reporting hidden characters at `line`; text of an
    /// included document counts against the token budget.
    fn write_text(&mut self, sink: &mut dyn Sink, text: &str, doc: &Doc, line: u32) {
        let text = self.budget_piece(text, &doc.name, line);
        let clean = sanitize(&text);
        for (code, at, message) in clean.warnings() {
            self.diagnose(code, message, &doc.name, line + at.saturating_sub(1), 1);
        }
        let clean = clean.text;
        self.write(sink, &clean);
    }

    /// Counts the tokens of a piece of document text (when counting is on) and cuts an
    /// included document's text to what is left of the token budget.
    fn budget_piece<'t>(&mut self, piece: &'t str, path: &str, line: u32) -> Cow<'t, str> {
        if !self.opts.counts_tokens() || piece.is_empty() {
            return Cow::Borrowed(piece);
        }
        let count = tokens::count(piece);
        let max = self.opts.limits.max_tokens;
        if max == 0 || self.chain.len() <= 1 {
            self.tokens_total += count as u64;
            return Cow::Borrowed(piece);
        }
        if self.tokens_spent + count <= max {
            self.tokens_spent += count;
            self.tokens_total += count as u64;
            return Cow::Borrowed(piece);
        }
        let cut = tokens::truncate_to_budget(piece, max.saturating_sub(self.tokens_spent));
        self.tokens_spent = max;
        self.tokens_total += cut.tokens as u64;
        self.budget_cuts += 1;
        if !self.budget_warned {
            self.budget_warned = true;
            let message = format!(
                "token budget of {max} reached in {path}; included content after this point is left out"
            );
            self.diagnose(Code::TokenBudget, message, path, line, 1);
        }
        Cow::Owned(cut.text.to_owned())
    }

    // ----- diagnostics ------------------------------------------------------------------

    fn diagnose(&mut self, code: Code, message: String, file: &str, line: u32, column: u32) {
        self.diagnostics.push(DiagnosticRecord::new(code, message, file.to_owned(), line, column));
        if self.opts.strict && code.severity() == Severity::Error && self.stop.is_none() {
            self.stop = Some(Stop::Strict);
        }
    }

    fn front_matter_diagnostics(
        &mut self,
        diagnostics: &[ctx_syntax::Diagnostic],
        doc: &Doc,
        offset: u32,
    ) {
        for d in diagnostics {
            self.diagnose(d.code, d.message.clone(), &doc.name, offset + d.pos.line, d.pos.column);
        }
    }

    // ----- the walk ---------------------------------------------------------------------

    /// Scans and preprocesses `text` (a document body whose first line is line
    /// `line_offset + 1` of its file) and writes it with every active item replaced.
    fn expand(&mut self, doc: &Doc, text: &str, line_offset: u32, sink: &mut dyn Sink) {
        let scan = ctx_syntax::scan_with(text, &self.opts.syntax);
        let mut index: Option<LineIndex<'_>> = None;
        let mut pre = Preprocessor::new(&scan);
        while let Some(event) = pre.next_event(&mut self.macros) {
            if self.stop.is_some() {
                break;
            }
            match event {
                Event::Text { text: piece, span } => {
                    if self.inline() {
                        // The line is needed only for a warning: hidden or control characters,
                        // or a token budget that may cut here.
                        let clean = piece.is_ascii()
                            && !piece
                                .bytes()
                                .any(|b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c));
                        let line = if clean && self.opts.limits.max_tokens == 0 {
                            1
                        } else {
                            index
                                .get_or_insert_with(|| LineIndex::new(text))
                                .position(span.start)
                                .line
                        };
                        self.write_text(sink, piece, doc, line_offset + line);
                    } else {
                        let piece = self.budget_piece(piece, &doc.name, 0);
                        self.write(sink, &piece);
                    }
                }
                Event::Escape { raw, unescaped, .. } => {
                    let piece = if self.inline() { unescaped } else { raw };
                    self.write(sink, piece);
                }
                Event::Substitution { value, pos, .. } => {
                    self.write_text(sink, &value.clone(), doc, line_offset + pos.line);
                }
                Event::Request(request) => self.request(doc, text, line_offset, &request, sink),
                Event::Diagnostic(d) => {
                    self.diagnose(
                        d.code,
                        d.message,
                        &doc.name,
                        line_offset + d.pos.line,
                        d.pos.column,
                    );
                }
            }
        }
    }

    fn request(
        &mut self,
        doc: &Doc,
        text: &str,
        line_offset: u32,
        request: &Request<'_>,
        sink: &mut dyn Sink,
    ) {
        let raw = request.span.of(text);
        let at = At {
            file: doc.name.clone(),
            line: line_offset + request.pos.line,
            column: request.pos.column,
        };
        let syntax = match request.kind {
            RequestKind::Mention(_) => Syntax::Mention,
            _ if raw.starts_with("@{") => Syntax::Directive,
            _ => Syntax::Include,
        };
        let mut record = ReferenceRecord {
            raw: raw.to_owned(),
            syntax,
            kind: Kind::File,
            path: String::new(),
            lines: None,
            bytes: 0,
            tokens: None,
            truncated: false,
            front_matter: None,
            at,
            error: None,
            depth: self.chain.len().saturating_sub(1),
        };
        self.requests += 1;
        let max = self.opts.limits.max_includes;
        if max > 0 && self.requests > max {
            let message = format!("include budget of {max} spent; the rest is not read");
            self.fail(sink, &mut record, Code::Budget, message, raw);
            self.references.push(record);
            self.stop = Some(Stop::Budget);
            return;
        }
        // The record's place is taken now, so that records come parent first (depth-first
        // pre-order) even though a document's record is complete only after its expansion.
        let slot = self.references.len();
        self.references.push(record.clone());
        match request.kind {
            RequestKind::Tool(call) => self.tool(doc, &call, &mut record, raw, sink),
            RequestKind::Include(reference) => {
                self.reference(doc, &reference, false, &mut record, raw, sink)
            }
            RequestKind::Mention(reference) => {
                self.reference(doc, &reference, true, &mut record, raw, sink)
            }
        }
        if self.opts.counts_tokens() && record.tokens.is_none() && record.error.is_none() {
            record.tokens = Some(0);
        }
        self.references[slot] = record;
    }

    /// Records a failed item: a diagnostic, the record's error, and the marker (inline) or
    /// the failure list (append).
    fn fail(
        &mut self,
        sink: &mut dyn Sink,
        record: &mut ReferenceRecord,
        code: Code,
        message: String,
        raw: &str,
    ) {
        self.diagnose(
            code,
            message.clone(),
            &record.at.file.clone(),
            record.at.line,
            record.at.column,
        );
        record.error = Some(ErrorRecord { code, message: message.clone() });
        if self.inline() {
            if self.opts.failure_markers {
                self.write_unbudgeted(sink, &error_marker(code, &message));
            } else {
                self.write(sink, raw);
            }
        } else {
            self.write(sink, raw);
            if code.severity() == Severity::Error {
                self.failures.push(Failure {
                    reference: reference_text(raw),
                    code: code.as_str(),
                    message,
                });
            }
        }
    }

    fn fs_fail(
        &mut self,
        sink: &mut dyn Sink,
        record: &mut ReferenceRecord,
        err: &ctx_fs::Error,
        written: &str,
        raw: &str,
    ) {
        let code = err.code();
        let mut message = err.to_string();
        if code == Code::NotFound {
            let base = match self.chain.last() {
                Some((Some(location), _)) => location.parent(),
                _ => None,
            };
            let base = base.unwrap_or_else(|| self.sandbox().workspace());
            if let Some(hint) = self.did_you_mean(written, &base) {
                message.push_str(&format!(" (did you mean {hint}?)"));
            }
        } else if code == Code::BadPath
            && let Some((path, line)) = written.rsplit_once(':')
            && !line.is_empty()
            && line.bytes().all(|b| b.is_ascii_digit() || b == b'-')
        {
            message.push_str(&format!(" (for lines, write {path}#L{line})"));
        }
        self.fail(sink, record, code, message, raw);
    }

    fn tool(
        &mut self,
        doc: &Doc,
        call: &ToolCall<'_>,
        record: &mut ReferenceRecord,
        raw: &str,
        sink: &mut dyn Sink,
    ) {
        record.kind = Kind::Tool;
        record.path = call.name.to_owned();
        let Some(tool) = self.asm.tools.get(call.name).cloned() else {
            let known: Vec<&str> = self.asm.tools.names().collect();
            let message = format!("unknown tool: {} (known: {})", call.name, known.join(", "));
            self.fail(sink, record, Code::ToolUnknown, message, raw);
            return;
        };
        let args = match serde_json::from_str::<Value>(call.args) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                self.fail(
                    sink,
                    record,
                    Code::ToolArgs,
                    "tool arguments must be a JSON object".into(),
                    raw,
                );
                return;
            }
            Err(err) => {
                self.fail(
                    sink,
                    record,
                    Code::ToolArgs,
                    format!("tool arguments are not valid JSON: {err}"),
                    raw,
                );
                return;
            }
        };
        let cx = ToolContext { sandbox: self.sandbox(), base: &doc.dir };
        match tool.call(&args, &cx) {
            Ok(result) => {
                let clean = self.clean_content(&result, &record.at.file.clone(), record.at.line);
                let clean = self.budget_tokens(clean, None, call.name, record);
                record.bytes = clean.len() as u64;
                let entry = Entry::Tool {
                    name: call.name.to_owned(),
                    args: call.args.to_owned(),
                    content: clean,
                };
                self.place(sink, entry, raw);
            }
            Err(err) => self.fail(sink, record, err.code, err.message, raw),
        }
    }

    /// Resolves a reference to a location and what it is.
    fn resolve(
        &mut self,
        doc: &Doc,
        reference: &SyntaxRef<'_>,
        written: &str,
    ) -> Result<Resolved, ResolveFailure> {
        if let Some(scheme) = scheme(written) {
            return Err(ResolveFailure::Other(
                Code::Scheme,
                format!("{scheme}: is not a path; ctx reads files only: {written}"),
            ));
        }
        if written.is_empty() {
            return Err(ResolveFailure::Other(Code::BadPath, "empty path".into()));
        }
        if reference.target == TargetKind::Glob {
            let literal = resolve_relative(self.sandbox(), written, &doc.dir);
            if let Ok(location) = literal {
                return Ok(Resolved {
                    kind: Kind::File,
                    path: display_path(self.sandbox(), &location),
                    location,
                    content: None,
                });
            }
            return Ok(Resolved {
                kind: Kind::Glob,
                location: doc.dir.clone(),
                path: written.replace('\\', "/"),
                content: None,
            });
        }
        if reference.target == TargetKind::File {
            // Most references name files: resolve and read in one pass through the sandbox.
            match read_relative(self.sandbox(), written, &doc.dir) {
                Ok((location, content)) => {
                    let path = display_path(self.sandbox(), &location);
                    return Ok(Resolved {
                        kind: Kind::File,
                        location,
                        path,
                        content: Some(content),
                    });
                }
                // A directory named without its trailing slash, or something that is not a
                // regular file: the general path below tells which.
                Err(err) if err.code() == Code::NotRegular => {}
                Err(err) if err.code() == Code::NotFound && self.asm.resolver.is_some() => {}
                Err(err) => return Err(ResolveFailure::Fs(err)),
            }
        }
        let location = match resolve_relative(self.sandbox(), written, &doc.dir) {
            Ok(location) => location,
            Err(err) if err.code() == Code::NotFound => match &self.asm.resolver {
                Some(resolver) => match resolver.resolve(written, self.sandbox()) {
                    Resolution::Found(location) => location,
                    Resolution::Ambiguous(candidates) => {
                        return Err(ResolveFailure::Other(
                            Code::Ambiguous,
                            format!("{written} matches several files: {}", candidates.join(", ")),
                        ));
                    }
                    Resolution::NotFound => return Err(ResolveFailure::Fs(err)),
                },
                None => return Err(ResolveFailure::Fs(err)),
            },
            Err(err) => return Err(ResolveFailure::Fs(err)),
        };
        let stat = self.sandbox().stat(&location).map_err(ResolveFailure::Fs)?;
        let kind = match stat.kind {
            FileKind::Dir => Kind::Directory,
            _ => Kind::File,
        };
        Ok(Resolved {
            kind,
            path: display_path(self.sandbox(), &location),
            location,
            content: None,
        })
    }

    fn reference(
        &mut self,
        doc: &Doc,
        reference: &SyntaxRef<'_>,
        mention: bool,
        record: &mut ReferenceRecord,
        raw: &str,
        sink: &mut dyn Sink,
    ) {
        let written = reference.path.unescaped();
        record.path = written.trim_end_matches(['/', '\\']).replace('\\', "/");
        record.kind = match reference.target {
            TargetKind::Directory => Kind::Directory,
            TargetKind::Glob => Kind::Glob,
            TargetKind::File => Kind::File,
        };
        let resolved = match self.resolve(doc, reference, &written) {
            Ok(resolved) => resolved,
            Err(ResolveFailure::Fs(err)) if mention && err.code() == Code::NotFound => {
                // `@param` in prose is not a mistake: the text stays as written.
                let message = err.to_string();
                self.diagnose(
                    Code::Unresolved,
                    message.clone(),
                    &record.at.file.clone(),
                    record.at.line,
                    record.at.column,
                );
                record.error = Some(ErrorRecord { code: Code::Unresolved, message });
                self.write(sink, raw);
                return;
            }
            Err(ResolveFailure::Fs(err)) => {
                self.fs_fail(sink, record, &err, &written, raw);
                return;
            }
            Err(ResolveFailure::Other(code, message)) => {
                self.fail(sink, record, code, message, raw);
                return;
            }
        };
        record.kind = resolved.kind;
        record.path = resolved.path.clone();
        match resolved.kind {
            Kind::Directory | Kind::Glob => {
                self.expand_many(doc, &resolved, &written, record, raw, sink)
            }
            _ => self.file(reference, &resolved, record, raw, sink),
        }
    }

    fn file(
        &mut self,
        reference: &SyntaxRef<'_>,
        resolved: &Resolved,
        record: &mut ReferenceRecord,
        raw: &str,
        sink: &mut dyn Sink,
    ) {
        let content = match &resolved.content {
            Some(content) => Ok(content.clone()),
            None => self.sandbox().read_text(&resolved.location),
        };
        let text = match content {
            Ok(Content::Text { text, .. }) => text,
            Ok(_) => {
                let message = format!("binary file left out: {}", resolved.path);
                self.fail(sink, record, Code::Binary, message, raw);
                return;
            }
            Err(err) => {
                self.fs_fail(sink, record, &err, &reference.path.unescaped(), raw);
                return;
            }
        };
        self.files += 1;
        let path = resolved.path.as_str();
        let markdown = crate::is_markdown(path);
        let (selected, lines): (Cow<'_, str>, Option<LineRange>) = match &reference.selector {
            Some(selector) => match select::select(&text, selector, markdown) {
                Ok(selection) => (selection.text, selection.lines),
                Err(err) => {
                    self.fail(sink, record, err.code(), format!("{}: {err}", resolved.path), raw);
                    return;
                }
            },
            None => (Cow::Borrowed(&text[..]), None),
        };
        record.lines = lines
            .filter(|_| reference.selector.is_some())
            .map(|l| Lines { start: l.start, end: l.end });
        let first_line = lines.map_or(1, |l| l.start);
        let recursive = self.inline() && self.opts.is_recursive(path);
        if recursive {
            self.recurse(resolved, &selected, Some(&text), first_line, record, raw, sink);
            return;
        }
        // Verbatim content: cut, numbered, sanitised, budgeted.
        let content = if reference.selector.is_none() {
            self.cut_lines(&selected, record)
        } else {
            Cow::Borrowed(&selected[..])
        };
        let content = if self.opts.line_numbers {
            Cow::Owned(select::number_lines(&content, first_line))
        } else {
            content
        };
        let clean = self.clean_content(&content, path, first_line);
        let clean = self.budget_tokens(clean, None, path, record);
        record.bytes = clean.len() as u64;
        let entry = Entry::File {
            path: resolved.path.clone(),
            reference: reference_text(raw),
            lines: record.lines.map(|l| (l.start, l.end)),
            content: clean,
        };
        self.place(sink, entry, raw);
    }

    #[allow(clippy::too_many_arguments)]
    fn recurse(
        &mut self,
        resolved: &Resolved,
        selected: &str,
        whole: Option<&Arc<str>>,
        first_line: u32,
        record: &mut ReferenceRecord,
        raw: &str,
        sink: &mut dyn Sink,
    ) {
        if let Some(pos) = self.chain.iter().position(|c| c.0.as_ref() == Some(&resolved.location))
        {
            let mut names: Vec<&str> = self.chain[pos..].iter().map(|c| c.1.as_str()).collect();
            names.push(&resolved.path);
            let message = format!("include cycle: {}", names.join(" -> "));
            self.fail(sink, record, Code::Cycle, message, raw);
            return;
        }
        let max_depth = self.opts.limits.max_depth;
        if max_depth > 0 && self.chain.len() > max_depth {
            let message = format!("includes nested deeper than {max_depth}: {}", resolved.path);
            self.fail(sink, record, Code::Depth, message, raw);
            return;
        }
        let path = resolved.path.as_str();
        let child = Doc {
            dir: resolved.location.parent().unwrap_or_else(|| self.sandbox().workspace()),
            name: resolved.path.clone(),
            location: Some(resolved.location.clone()),
        };
        let (body, mut line_offset): (&str, u32) = (selected, first_line - 1);
        let mut body = body;
        if crate::is_markdown(path) && first_line == 1 {
            let parsed = self.parse_front_matter(selected, whole);
            self.front_matter_diagnostics(&parsed.diagnostics, &child, 0);
            if let Some(fm) = &parsed.front_matter {
                self.params.extend(fm.params.iter());
                record.front_matter = Some(fm.value.clone());
            }
            body = &selected[parsed.body_offset..];
            line_offset = parsed.body_line - 1;
        }
        let cut;
        if record.lines.is_none() {
            let c = select::cut(body, self.opts.limits.max_lines);
            if c.cut > 0 {
                record.truncated = true;
            }
            cut = c;
            body = cut.text;
        }
        let before = self.written;
        let tokens_before = self.tokens_total;
        let cuts_before = self.budget_cuts;
        self.chain.push((Some(resolved.location.clone()), resolved.path.clone()));
        self.expand(&child, body, line_offset, sink);
        self.chain.pop();
        if record.truncated {
            let marker = format!(
                "{}{}\n",
                if body.ends_with('\n') { "" } else { "\n" },
                select::truncation_marker(
                    select::count_lines(selected) as usize - select::count_lines(body) as usize
                )
            );
            self.write(sink, &marker);
        }
        record.bytes = self.written - before;
        if self.budget_cuts > cuts_before {
            record.truncated = true;
        }
        if self.opts.counts_tokens() {
            record.tokens = Some(self.tokens_total - tokens_before);
        }
    }

    /// Expands a directory or a glob: the walk, then each text file in sorted order.
    fn expand_many(
        &mut self,
        doc: &Doc,
        resolved: &Resolved,
        written: &str,
        record: &mut ReferenceRecord,
        raw: &str,
        sink: &mut dyn Sink,
    ) {
        let walk = if resolved.kind == Kind::Glob {
            self.sandbox().glob(written, Some(&doc.dir))
        } else {
            self.sandbox().walk(&resolved.location)
        };
        let walk = match walk {
            Ok(walk) => walk,
            Err(err) => {
                self.fs_fail(sink, record, &err, written, raw);
                return;
            }
        };
        let files: Vec<&ctx_fs::WalkEntry> = walk.files().collect();
        let max = self.opts.limits.max_files;
        let taken = if max > 0 { files.len().min(max) } else { files.len() };
        let omitted = files.len() - taken;
        let files = &files[..taken];
        let base = resolved.location.path().as_str();
        let relative = |entry: &ctx_fs::WalkEntry| -> String {
            let walked = entry.path.as_str();
            walked.strip_prefix(base).map_or(walked, |r| r.trim_start_matches('/')).to_owned()
        };
        let rows: Vec<String> = files.iter().map(|e| relative(e)).collect();
        let tree = tree_of(&rows);
        let path = if resolved.kind == Kind::Glob {
            written.to_owned()
        } else {
            format!("{}/", resolved.path)
        };
        let omitted = if walk.truncated {
            // The walk itself stopped at the sandbox's entry limit: how many more there are is
            // not known.
            record.truncated = true;
            let limit = self.sandbox().limits().max_walk_entries;
            let message = format!(
                "{path} has more than {limit} entries; the walk stopped there and later files are left out"
            );
            let (file, line, column) = (record.at.file.clone(), record.at.line, record.at.column);
            self.diagnose(Code::TokenBudget, message, &file, line, column);
            Some(format!("[... more files omitted: the walk stopped at {limit} entries ...]"))
        } else {
            (omitted > 0).then(|| {
                record.truncated = true;
                format!("[... {omitted} more files omitted ...]")
            })
        };
        let reference = reference_text(raw);
        // Inline mode streams: the directory's opening, then its files batch by batch, so an
        // expansion of a large tree holds one batch in memory, not the tree. Append mode keeps
        // the files for after the text.
        let layout = self.layout();
        // In plain inline output a directory's files still need their names: they are
        // written as Markdown entries.
        let file_layout = if layout == Format::Inline { Format::Markdown } else { layout };
        let streaming = self.inline();
        if streaming {
            let mut head = String::new();
            output::directory_open(&mut head, layout, &path, &reference, &tree, &mut self.escaped);
            self.write(sink, &head);
        } else {
            self.write(sink, raw);
        }
        let mut kept = Vec::new();
        for batch in batches(files) {
            if self.stop.is_some() {
                break;
            }
            let contents: Vec<Result<Content, ctx_fs::Error>> =
                if self.opts.prefetch && batch.len() > 1 {
                    prefetch(self.sandbox(), batch)
                } else {
                    batch.iter().map(|e| self.sandbox().read_text(&e.location)).collect()
                };
            // The content of each file in walk order, then the token counts in parallel, then
            // the budget in walk order again.
            let mut texts: Vec<(String, String)> = Vec::new();
            let (file, line, column) = (record.at.file.clone(), record.at.line, record.at.column);
            for (entry, content) in batch.iter().zip(contents) {
                let shown = display_path(self.sandbox(), &entry.location);
                match content {
                    Ok(Content::Text { text, .. }) => {
                        self.files += 1;
                        let mut content = self.cut_lines(&text, record);
                        if self.opts.line_numbers {
                            content = Cow::Owned(select::number_lines(&content, 1));
                        }
                        let clean = self.clean_content(&content, &shown, 1);
                        texts.push((shown, clean));
                    }
                    Ok(_) => {
                        let message = format!("binary file left out: {shown}");
                        self.diagnose(Code::Binary, message, &file, line, column);
                    }
                    Err(err) => {
                        let code = err.code();
                        self.diagnose(code, err.to_string(), &file, line, column);
                    }
                }
            }
            let counts: Vec<Option<usize>> = if self.opts.counts_tokens() {
                let refs: Vec<&str> = texts.iter().map(|(_, c)| c.as_str()).collect();
                tokens::count_many(&refs).into_iter().map(Some).collect()
            } else {
                vec![None; texts.len()]
            };
            for ((shown, clean), count) in texts.into_iter().zip(counts) {
                let clean = self.budget_tokens(clean, count, &shown, record);
                record.bytes += clean.len() as u64;
                let entry = Entry::File {
                    path: shown.clone(),
                    reference: shown,
                    lines: None,
                    content: clean,
                };
                if streaming {
                    let mut out = String::new();
                    output::entry(&mut out, file_layout, &entry, &mut self.escaped);
                    self.write(sink, &out);
                } else {
                    kept.push(entry);
                }
            }
        }
        if streaming {
            let mut tail = String::new();
            output::directory_close(&mut tail, layout, omitted.as_deref());
            self.write(sink, &tail);
        } else {
            self.entries.push(Entry::Directory { path, reference, tree, files: kept, omitted });
        }
    }

    /// Cuts an unranged file at the line limit, with the marker.
    fn cut_lines<'t>(&self, text: &'t str, record: &mut ReferenceRecord) -> Cow<'t, str> {
        let cut = select::cut(text, self.opts.limits.max_lines);
        match cut.marker() {
            Some(marker) => {
                record.truncated = true;
                let mut kept = cut.text.to_owned();
                if !kept.is_empty() && !kept.ends_with('\n') {
                    kept.push('\n');
                }
                kept.push_str(&marker);
                kept.push('\n');
                Cow::Owned(kept)
            }
            None => Cow::Borrowed(text),
        }
    }

    /// Sanitises content, reporting what was made visible.
    fn clean_content(&mut self, content: &str, path: &str, first_line: u32) -> String {
        let clean = sanitize(content);
        let warnings = clean.warnings();
        let text = clean.text.into_owned();
        for (code, line, message) in warnings {
            self.diagnose(
                code,
                format!("{message} in {path}"),
                path,
                first_line + line.saturating_sub(1),
                1,
            );
        }
        text
    }

    /// Applies the token budget to one piece of content.
    ///
    /// `count` is the content's token count when the caller already has it.
    fn budget_tokens(
        &mut self,
        content: String,
        count: Option<usize>,
        path: &str,
        record: &mut ReferenceRecord,
    ) -> String {
        if !self.opts.counts_tokens() {
            return content;
        }
        let max = self.opts.limits.max_tokens;
        let count = count.unwrap_or_else(|| tokens::count(&content));
        if max == 0 || self.tokens_spent + count <= max {
            self.tokens_spent += count;
            self.tokens_total += count as u64;
            record.tokens = Some(record.tokens.unwrap_or(0) + count as u64);
            return content;
        }
        let left = max.saturating_sub(self.tokens_spent);
        let cut = tokens::truncate_to_budget(&content, left);
        self.tokens_spent += cut.tokens;
        self.tokens_total += cut.tokens as u64;
        record.tokens = Some(record.tokens.unwrap_or(0) + cut.tokens as u64);
        record.truncated = true;
        let message = if cut.text.is_empty() {
            format!("token budget of {max} spent: {path} left out ({count} tokens)")
        } else {
            format!("token budget of {max} reached: {path} cut to {} of {count} tokens", cut.tokens)
        };
        self.diagnose(
            Code::TokenBudget,
            message,
            &record.at.file.clone(),
            record.at.line,
            record.at.column,
        );
        cut.text.to_owned()
    }

    /// Writes an entry in place (inline mode) or keeps it for after the text (append mode).
    fn place(&mut self, sink: &mut dyn Sink, entry: Entry, raw: &str) {
        if !self.inline() {
            self.write(sink, raw);
            self.entries.push(entry);
            return;
        }
        let mut out = String::new();
        output::entry(&mut out, self.layout(), &entry, &mut self.escaped);
        self.write(sink, &out);
    }

    /// A "did you mean" for a missing file: the closest name in the directory it was looked
    /// for in, from the including file's directory, then from the workspace root.
    fn did_you_mean(&self, written: &str, base: &Location) -> Option<String> {
        let normal = written.replace('\\', "/");
        let (dir, name) = match normal.rsplit_once('/') {
            Some((dir, name)) => (dir, name),
            None => ("", normal.as_str()),
        };
        if name.is_empty() || is_absolute(written) {
            return None;
        }
        let sandbox = self.sandbox();
        let mut bases = vec![base.clone()];
        if *base != sandbox.workspace() {
            bases.push(sandbox.workspace());
        }
        bases.into_iter().find_map(|base| {
            let location =
                if dir.is_empty() { base } else { sandbox.resolve(dir, Some(&base)).ok()? };
            let walk = sandbox.walk(&location).ok()?;
            let (_, candidate) = walk
                .entries
                .iter()
                .filter(|e| e.depth == 1)
                .filter_map(|e| {
                    let candidate = e.path.file_name()?;
                    let d = edit_distance(name, candidate);
                    (d > 0 && d <= 2.max(name.len() / 4)).then(|| (d, candidate.to_owned()))
                })
                .min()?;
            Some(if dir.is_empty() { candidate } else { format!("{dir}/{candidate}") })
        })
    }
}

enum ResolveFailure {
    Fs(ctx_fs::Error),
    Other(Code, String),
}

/// Splits the files of an expansion into batches of at most 256 files or about 8 MiB, so
/// that one batch at a time is held in memory.
fn batches<'w, 'e>(
    files: &'w [&'e ctx_fs::WalkEntry],
) -> impl Iterator<Item = &'w [&'e ctx_fs::WalkEntry]> {
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

/// Reads the files of a walk on worker threads; results come back in the walk's order.
fn prefetch(
    sandbox: &Sandbox,
    files: &[&ctx_fs::WalkEntry],
) -> Vec<Result<Content, ctx_fs::Error>> {
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

/// The reference as written, without `@`, brackets or quotes: what `#### Source:` and the
/// failure list show.
fn reference_text(raw: &str) -> String {
    let inner = if let Some(body) = raw.strip_prefix("@[").and_then(|r| r.strip_suffix(']')) {
        body.trim()
    } else if let Some(body) = raw.strip_prefix("@{").and_then(|r| r.strip_suffix('}')) {
        body.trim().trim_start_matches("include").trim_start_matches(':').trim()
    } else {
        raw.strip_prefix('@').unwrap_or(raw)
    };
    match inner.strip_prefix('"').and_then(|rest| rest.split_once('"')) {
        Some((quoted, after)) => format!("{quoted}{after}"),
        None => inner.to_owned(),
    }
}

/// Levenshtein distance over characters, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert_eq!(scheme("https://x.com/a"), Some("https"));
        assert_eq!(scheme("file:/etc/passwd"), Some("file"));
        assert_eq!(scheme("C:/x"), None);
        assert_eq!(scheme("notes:v2.md"), None);
        assert_eq!(scheme("a.md"), None);
    }

    #[test]
    fn absolute_paths() {
        assert!(is_absolute("/etc/passwd"));
        assert!(is_absolute(r"C:\x"));
        assert!(is_absolute(r"\\server\share"));
        assert!(!is_absolute("a/b"));
        assert!(!is_absolute("C:x"));
    }

    #[test]
    fn reference_texts() {
        assert_eq!(reference_text("@[a.md:2:4]"), "a.md:2:4");
        assert_eq!(reference_text("@src/a.rs#L1-2"), "src/a.rs#L1-2");
        assert_eq!(reference_text("@\"my file.md\"#L2"), "my file.md#L2");
        assert_eq!(reference_text("@[\"notes:v2.md\":2]"), "notes:v2.md:2");
        assert_eq!(reference_text("@{include \"a.md\"}"), "a.md");
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("agnt.rs", "agent.rs"), 1);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
