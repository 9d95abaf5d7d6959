//! [`Assembler`]: the entry points of assembly, for files and for strings, into a string or
//! streamed to a writer.

use std::io;
use std::sync::Arc;

use ctx_fs::{Content, Sandbox};
use ctx_syntax::Code;

use crate::attach::Attachments;
use crate::budget::{JsonStringSink, Sink, WriteSink};
use crate::document::Selected;
use crate::memo::FrontMatterMemo;
use crate::options::Options;
use crate::out::Out;
use crate::printer;
use crate::record::Assembly;
use crate::reducer::Reducer;
use crate::resolve::{Resolver, display_path};
use crate::run::{Doc, Run};
use crate::setup::Setup;
use crate::tools::Tools;

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

impl AssembleError {
    /// The diagnostic code of the error, where it has one.
    pub fn code(&self) -> Option<Code> {
        match self {
            AssembleError::Input(err) => Some(err.code()),
            AssembleError::Binary(_) => Some(Code::Binary),
            AssembleError::Io(_) => None,
        }
    }
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

/// The wrapped error's message is part of this one's, so it is not its source too.
impl std::error::Error for AssembleError {}

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
    reducer: Option<Arc<dyn Reducer>>,
    front_matter: Arc<FrontMatterMemo>,
    /// Token counts remembered by content, across runs when the caller stores them.
    known_counts: Option<Arc<ctx_tokens::KnownCounts>>,
}

impl std::fmt::Debug for Assembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembler")
            .field("options", &self.options)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// The top-level text of a run: a file read through the sandbox, or a string.
enum Input<'t, 'a> {
    File(&'t str),
    Str { text: &'t str, name: &'t str, attachments: Attachments<'a> },
}

/// The top-level document, read, and what is attached to it.
struct Loaded<'t, 'a> {
    doc: Doc,
    text: LoadedText<'t>,
    attachments: Attachments<'a>,
}

enum LoadedText<'t> {
    /// A file's text, and the encoding it was decoded from when it was not UTF-8.
    Read(ctx_fs::Text, Option<&'static str>),
    Given(&'t str),
}

impl Assembler {
    /// An assembler with the built-in tools.
    pub fn new(sandbox: Arc<Sandbox>, options: Options) -> Assembler {
        Assembler {
            sandbox,
            options,
            tools: Tools::builtin(),
            resolver: None,
            reducer: None,
            front_matter: Arc::default(),
            known_counts: None,
        }
    }

    /// Counts content through `known`: a text whose count it remembers is not counted again
    /// (the caller keeps the table between runs: `KnownCounts::to_bytes`).
    pub fn with_known_counts(mut self, known: Arc<ctx_tokens::KnownCounts>) -> Assembler {
        self.known_counts = Some(known);
        self
    }

    /// The token counts remembered by content, when there are.
    pub fn known_counts(&self) -> Option<&Arc<ctx_tokens::KnownCounts>> {
        self.known_counts.as_ref()
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

    /// Plugs in a reducer: under a token budget, a mentioned file that does not fit whole is
    /// shown as what it gives (its outline and ranges) rather than cut at its head.
    pub fn with_reducer(mut self, reducer: Arc<dyn Reducer>) -> Assembler {
        self.reducer = Some(reducer);
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

    /// The tools.
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// The tools, to register or switch off.
    pub fn tools_mut(&mut self) -> &mut Tools {
        &mut self.tools
    }

    /// The sandbox.
    pub fn sandbox(&self) -> &Arc<Sandbox> {
        &self.sandbox
    }

    /// What a run of this assembler reads with and by.
    pub(crate) fn setup(&self) -> Setup<'_> {
        Setup {
            sandbox: &self.sandbox,
            options: &self.options,
            tools: &self.tools,
            resolver: self.resolver.as_deref(),
            reducer: self.reducer.as_deref(),
            front_matter: &self.front_matter,
        }
    }

    /// Assembles the file at `path` (relative to the workspace root, or absolute inside a
    /// root). The assembly's `content` is the rendering of the options' mode and format
    /// (for `json`, its mode's default layout).
    ///
    /// # Errors
    ///
    /// When the file itself cannot be resolved or read; problems inside it are diagnostics.
    pub fn assemble_file(&self, path: &str) -> Result<Assembly, AssembleError> {
        self.collect(Input::File(path))
    }

    /// Assembles the file at `path`, writing the rendering to `writer` as the run proceeds
    /// (format `json` is written whole at the end). The returned assembly has no content.
    ///
    /// # Errors
    ///
    /// As [`Assembler::assemble_file`], and when writing fails; a writer closed by its reader
    /// (a broken pipe) only stops the run, and the assembly holds what was found until then.
    pub fn assemble_file_to(
        &self,
        path: &str,
        writer: &mut dyn io::Write,
    ) -> Result<Assembly, AssembleError> {
        self.stream(Input::File(path), writer)
    }

    /// Assembles a text that is not a file (a prompt, or standard input), as if it were a
    /// document named `name` in the workspace root.
    pub fn assemble_str(&self, text: &str, name: &str) -> Assembly {
        self.assemble_str_with(text, name, Attachments::default())
    }

    /// Assembles a text that is not a file, then places its attachments after its own
    /// references, in a block of their own (assembly.md, "Attachments").
    pub fn assemble_str_with(
        &self,
        text: &str,
        name: &str,
        attachments: Attachments<'_>,
    ) -> Assembly {
        match self.collect(Input::Str { text, name, attachments }) {
            Ok(assembly) => assembly,
            Err(_) => unreachable!("a string is always read, and a string sink does not fail"),
        }
    }

    /// Assembles a text that is not a file, writing to `writer` as the run proceeds.
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
        self.assemble_str_with_to(text, name, Attachments::default(), writer)
    }

    /// [`Assembler::assemble_str_with`], writing to `writer` as the walk proceeds.
    ///
    /// # Errors
    ///
    /// When writing fails.
    pub fn assemble_str_with_to(
        &self,
        text: &str,
        name: &str,
        attachments: Attachments<'_>,
        writer: &mut dyn io::Write,
    ) -> Result<Assembly, AssembleError> {
        self.stream(Input::Str { text, name, attachments }, writer)
    }

    /// Runs into a string, which becomes the assembly's content.
    fn collect(&self, input: Input<'_, '_>) -> Result<Assembly, AssembleError> {
        let loaded = self.load(input)?;
        let mut content = String::new();
        let mut assembly = self.run(loaded, &mut content)?;
        assembly.content = content;
        Ok(assembly)
    }

    /// Runs into a writer: streamed, or collected and written whole when the printer's shape
    /// needs the whole content first.
    fn stream(
        &self,
        input: Input<'_, '_>,
        writer: &mut dyn io::Write,
    ) -> Result<Assembly, AssembleError> {
        let loaded = self.load(input)?;
        let printer = printer::printer(&self.options);
        printer.open(writer).map_err(AssembleError::Io)?;
        if printer.buffers() {
            // The content is a JSON string: streamed escaped, the records after it.
            let assembly = self.run(loaded, &mut JsonStringSink::new(writer))?;
            printer.close(&assembly, writer).map_err(AssembleError::Io)?;
            return Ok(assembly);
        }
        let assembly = self.run(loaded, &mut WriteSink(writer))?;
        printer.close(&assembly, writer).map_err(AssembleError::Io)?;
        Ok(assembly)
    }

    /// The text of the document `path`, resolved and read through the sandbox as a top-level
    /// document is (`ctx parse`): outside the roots, denied, a special file, binary or too
    /// large is an error with its code.
    ///
    /// # Errors
    ///
    /// As [`Assembler::assemble_file`] for the document itself.
    pub fn read_document(&self, path: &str) -> Result<String, AssembleError> {
        let location = self.sandbox.resolve_in_workspace(path).map_err(AssembleError::Input)?;
        match self.sandbox.read_text(&location).map_err(AssembleError::Input)? {
            Content::Text { text, .. } => Ok(text.as_str().to_owned()),
            _ => Err(AssembleError::Binary(path.to_owned())),
        }
    }

    /// Resolves and reads the top-level document, before anything is written: a document
    /// that cannot be read leaves the output empty, in every format.
    fn load<'t, 'a>(&self, input: Input<'t, 'a>) -> Result<Loaded<'t, 'a>, AssembleError> {
        match input {
            Input::File(path) => {
                let location =
                    self.sandbox.resolve_in_workspace(path).map_err(AssembleError::Input)?;
                let content = self.sandbox.read_text(&location).map_err(AssembleError::Input)?;
                let Content::Text { text, encoding } = content else {
                    return Err(AssembleError::Binary(path.to_owned()));
                };
                let doc = Doc {
                    dir: location.parent().unwrap_or_else(|| self.sandbox.workspace()),
                    name: display_path(&self.sandbox, &location),
                    location: Some(location),
                    links_only: false,
                };
                let attachments = Attachments::default();
                let text = LoadedText::Read(text, encoding.note());
                Ok(Loaded { doc, text, attachments })
            }
            Input::Str { text, name, attachments } => {
                let dir = self.sandbox.workspace();
                let doc = Doc { location: None, dir, name: name.to_owned(), links_only: false };
                Ok(Loaded { doc, text: LoadedText::Given(text), attachments })
            }
        }
    }

    fn run(&self, loaded: Loaded<'_, '_>, sink: &mut dyn Sink) -> Result<Assembly, AssembleError> {
        let selected = match &loaded.text {
            LoadedText::Read(text, encoding) => Selected {
                text,
                whole: Some(text),
                first_line: 1,
                skipped: &[],
                lead: "",
                encoding: *encoding,
            },
            LoadedText::Given(text) => Selected {
                text,
                whole: None,
                first_line: 1,
                skipped: &[],
                lead: "",
                encoding: None,
            },
        };
        let mut run =
            Run::new(self.setup(), Out::new(&self.options, self.known_counts.clone(), sink));
        if let LoadedText::Given(text) = &loaded.text {
            // A text that is not a file is a prompt: a file it mentions is reduced for it.
            run.prompt = Some(text);
        }
        if loaded.doc.location.is_some() {
            run.assembly.stats.files += 1;
        }
        run.top(&loaded.doc, selected);
        run.attach(&loaded.doc, loaded.attachments);
        run.finish().map_err(AssembleError::Io)
    }
}
