//! [`Context`]: a sandbox, options and tools, built once and used for many assemblies.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ctx_assemble::tools::{Tool, Tools};
use ctx_assemble::{
    Assembler, Assembly, Attachment, Attachments, Format, Limits, Mode, Options, Resolver,
};
use ctx_fs::{AmbientAuthority, IgnoreSettings, Overlay, Sandbox};
use ctx_syntax::Code;

pub use crate::error::{Error, ErrorKind};

/// Configures a [`Context`]: roots, deny and ignore rules, macros, limits and tools.
#[derive(Clone)]
pub struct ContextBuilder {
    root: PathBuf,
    allow: Vec<PathBuf>,
    /// Roots that files of the workspace ask for, with what asks.
    project_allow: Vec<(PathBuf, String)>,
    trust: crate::roots::Trust,
    /// The solution was named by the caller: its source folders need no trust.
    sources_trusted: bool,
    deny: Vec<String>,
    ignore: IgnoreSettings,
    fs_limits: ctx_fs::Limits,
    cache_ttl: Option<Duration>,
    cache_capacity: Option<u64>,
    options: Options,
    tools: Tools,
    resolver: Option<Arc<dyn Resolver>>,
    overlay: Option<Overlay>,
    cache_dir: Option<PathBuf>,
    suggest_symbols: ctx_suggest::SymbolSource,
    suggest_data_files: bool,
    sources: Option<crate::source_index::Planned>,
    sources_cache: Option<PathBuf>,
    images_dir: Option<PathBuf>,
    counts_dir: Option<PathBuf>,
}

impl fmt::Debug for ContextBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextBuilder")
            .field("root", &self.root)
            .field("allow", &self.allow)
            .field("deny", &self.deny)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Default for ContextBuilder {
    fn default() -> ContextBuilder {
        ContextBuilder {
            root: PathBuf::from("."),
            allow: Vec::new(),
            project_allow: Vec::new(),
            trust: crate::roots::Trust::default(),
            sources_trusted: false,
            deny: Vec::new(),
            ignore: IgnoreSettings::default(),
            fs_limits: ctx_fs::Limits::default(),
            cache_ttl: None,
            cache_capacity: None,
            options: Options::default(),
            tools: crate::outline_tool::tools(),
            resolver: None,
            overlay: None,
            cache_dir: None,
            suggest_symbols: ctx_suggest::SymbolSource::default(),
            suggest_data_files: false,
            sources: None,
            sources_cache: None,
            images_dir: None,
            counts_dir: None,
        }
    }
}

impl ContextBuilder {
    /// The workspace root (default: the current directory).
    pub fn root(mut self, dir: impl AsRef<Path>) -> ContextBuilder {
        self.root = dir.as_ref().to_path_buf();
        self
    }

    /// Adds an extra read-only root, the caller's own choice (`--allow DIR`): it is opened
    /// as given (`~` and `~/sub` name the home folder and a folder of it), and a context
    /// whose root cannot be opened is not built. A root inside the workspace is opened
    /// through the workspace, so a link cannot lead it out.
    pub fn allow(mut self, dir: impl AsRef<Path>) -> ContextBuilder {
        self.allow.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds a root that a file of the workspace asks for (`allow` in a `ctx.toml` found
    /// there), `asked_by` naming the file for the warnings (`ctx.toml (allow)`). It is opened
    /// only when the root rule allows it, by its path and where it really is, and, when it
    /// lies outside the workspace, only when the [`Trust`](crate::Trust) says the user trusts
    /// it; otherwise it stays closed and [`Context::notices`] says why.
    pub fn project_allow(
        mut self,
        dir: impl AsRef<Path>,
        asked_by: impl Into<String>,
    ) -> ContextBuilder {
        self.project_allow.push((dir.as_ref().to_path_buf(), asked_by.into()));
        self
    }

    /// Whose word opens the folders outside the workspace that its files ask for (a
    /// `ctx.toml`'s `allow`, a solution's source folders): nobody's by default
    /// ([`Trust::Nothing`](crate::Trust::Nothing)).
    pub fn trust(mut self, trust: crate::roots::Trust) -> ContextBuilder {
        self.trust = trust;
        self
    }

    /// Denies paths matching a glob, on top of the built-in deny list.
    pub fn deny(mut self, glob: impl Into<String>) -> ContextBuilder {
        self.deny.push(glob.into());
        self
    }

    /// What walks skip besides the ignore files.
    pub fn ignore(mut self, ignore: IgnoreSettings) -> ContextBuilder {
        self.ignore = ignore;
        self
    }

    /// Predefines a macro, as `-D NAME=VALUE` does.
    pub fn define(mut self, name: impl Into<String>, value: impl Into<String>) -> ContextBuilder {
        self.options.defines.push((name.into(), value.into()));
        self
    }

    /// The assembly limits.
    pub fn limits(mut self, limits: Limits) -> ContextBuilder {
        self.options.limits = limits;
        self
    }

    /// The most entries one directory or glob walk visits (default 10 000; lifted when the
    /// assembly's `max_files` is 0).
    pub fn max_walk_entries(mut self, entries: usize) -> ContextBuilder {
        self.fs_limits.max_walk_entries = entries;
        self
    }

    /// The largest file read, in bytes (default 1 MiB).
    pub fn max_file_bytes(mut self, bytes: u64) -> ContextBuilder {
        self.fs_limits.max_file_bytes = bytes;
        self
    }

    /// How long cached file contents live (default 60 s); every hit is validated anyway.
    pub fn cache_ttl(mut self, ttl: Duration) -> ContextBuilder {
        self.cache_ttl = Some(ttl);
        self
    }

    /// How many bytes of file contents the cache holds (default 64 MiB; 0 turns the cache
    /// off, which suits a process that assembles once and exits).
    pub fn cache_capacity(mut self, bytes: u64) -> ContextBuilder {
        self.cache_capacity = Some(bytes);
        self
    }

    /// All assembly options at once (mode, format, syntax switches, limits…). Macros defined
    /// with [`ContextBuilder::define`] before this call are kept.
    pub fn options(mut self, options: Options) -> ContextBuilder {
        let defines = std::mem::take(&mut self.options.defines);
        self.options = options;
        self.options.defines.splice(0..0, defines);
        self
    }

    /// The tokenizer counts and the token budget are in (default o200k).
    pub fn tokenizer(mut self, tokenizer: ctx_tokens::Tokenizer) -> ContextBuilder {
        self.options.tokenizer = tokenizer;
        self
    }

    /// The output mode.
    pub fn mode(mut self, mode: Mode) -> ContextBuilder {
        self.options.mode = mode;
        self
    }

    /// The output format.
    pub fn format(mut self, format: Format) -> ContextBuilder {
        self.options.format = format;
        self
    }

    /// Registers a tool, replacing a built-in one of the same name.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> ContextBuilder {
        self.tools.register(tool);
        self
    }

    /// Switches a tool off.
    pub fn without_tool(mut self, name: &str) -> ContextBuilder {
        self.tools.remove(name);
        self
    }

    /// Plugs in a resolver for paths that resolve nowhere else (the source index).
    pub fn resolver(mut self, resolver: Arc<dyn Resolver>) -> ContextBuilder {
        self.resolver = Some(resolver);
        self
    }

    /// Serves an editor's unsaved texts in place of the files on disk (see
    /// [`ctx_fs::Overlay`]); the sandbox's checks still apply to every path.
    pub fn overlay(mut self, overlay: Overlay) -> ContextBuilder {
        self.overlay = Some(overlay);
        self
    }

    /// Resolves paths through this source index too (assembly.md §2, rule 5), and opens its
    /// source roots as read-only roots of the sandbox. An index already verified against the
    /// disk is used as it is; one fresh from [`ctx_sources::SourceIndex::load`] is verified
    /// when the context is built.
    /// The caller built the index, so its source folders need no [`Trust`](crate::Trust);
    /// each must still pass the root rule where it really is.
    pub fn sources(mut self, index: ctx_sources::SourceIndex) -> ContextBuilder {
        self.sources = Some(crate::source_index::Planned::Index(Box::new(index)));
        self.sources_trusted = true;
        self
    }

    /// Reads the solution (`.sln`, `.slnx`), project or `compile_commands.json` at `path`
    /// (relative to the root) when the context is built, and resolves through its index as
    /// [`ContextBuilder::sources`] does; with [`ContextBuilder::cache_dir`], the index is
    /// kept there between runs and rebuilt when a project file changes.
    ///
    /// The caller named the solution (as `--sln` does), so its source folders outside the
    /// workspace need no [`Trust`](crate::Trust); each must still pass the root rule where it
    /// really is, and one that does not stays closed ([`Context::notices`]).
    pub fn solution(mut self, path: impl Into<String>) -> ContextBuilder {
        let options = ctx_sources::Options::default();
        self.sources = Some(crate::source_index::Planned::Solution(path.into(), options));
        self.sources_trusted = true;
        self
    }

    /// Like [`ContextBuilder::solution`], for a solution that a file of the workspace names
    /// (`sln` in a `ctx.toml` found there): its source folders outside the workspace are
    /// opened only when the [`Trust`](crate::Trust) says the user trusts them.
    pub fn workspace_solution(mut self, path: impl Into<String>) -> ContextBuilder {
        self = self.solution(path);
        self.sources_trusted = false;
        self
    }

    /// Like [`ContextBuilder::solution`], with the one `*.sln`, `*.slnx` or
    /// `compile_commands.json` of the root, else of its `build/` folder; nothing when there is
    /// none or several ([`ctx_sources::detect`]). A solution found by looking is the
    /// workspace's own: its source folders outside the workspace are opened only when the
    /// [`Trust`](crate::Trust) says the user trusts them.
    pub fn detect_solution(mut self) -> ContextBuilder {
        let options = ctx_sources::Options::default();
        self.sources = Some(crate::source_index::Planned::Detect(options));
        self.sources_trusted = false;
        self
    }

    /// The most files a source index read by [`ContextBuilder::solution`] or
    /// [`ContextBuilder::detect_solution`] holds (default
    /// [`ctx_sources::DEFAULT_MAX_FILES`]).
    pub fn sources_max_files(mut self, max: usize) -> ContextBuilder {
        use crate::source_index::Planned;
        if let Some(Planned::Solution(_, options) | Planned::Detect(options)) = &mut self.sources {
            options.max_files = max;
        }
        self
    }

    /// Where a source index read from a solution is kept between runs (for example
    /// `~/.cache/ctx`); a folder that cannot be opened only means no caching.
    pub fn sources_cache_dir(mut self, dir: impl AsRef<Path>) -> ContextBuilder {
        self.sources_cache = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The folder of pasted images (`ctx paste-image`; for example `~/.cache/ctx/images`):
    /// images named there by their full path are read from it, and nothing else is; a folder
    /// that cannot be opened only means no pasted images.
    pub fn images_dir(mut self, dir: impl AsRef<Path>) -> ContextBuilder {
        self.images_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Where the suggestion index is stored between runs (for example
    /// `~/.cache/ctx`); without it, [`Context::suggest`] keeps its index in
    /// memory only.
    pub fn cache_dir(mut self, dir: impl AsRef<Path>) -> ContextBuilder {
        self.cache_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Keeps token counts between runs in `dir` (a file `token-counts` there): a text counted
    /// once, of at least 1 KiB, is not counted again while its bytes are the same
    /// (`ctx_tokens::KnownCounts`); [`Context::keep_counts`] stores what a run added. The
    /// folder is read when the context is built and written only by `keep_counts`.
    pub fn counts_dir(mut self, dir: impl AsRef<Path>) -> ContextBuilder {
        self.counts_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Where the suggestion index takes its files' symbols from: the lexical scanner (the
    /// default, [`SymbolSource::Scan`](ctx_suggest::SymbolSource::Scan)) or tree-sitter's
    /// tags queries ([`SymbolSource::TreeSitter`](ctx_suggest::SymbolSource::TreeSitter),
    /// exact and about four times slower to build). A stored index of the other source is
    /// rebuilt.
    pub fn suggest_symbols(mut self, source: ctx_suggest::SymbolSource) -> ContextBuilder {
        self.suggest_symbols = source;
        self
    }

    /// Whether the suggestion index reads and searches data files, lock files, minified and
    /// generated code like the others (off by default: they are listed, never suggested; see
    /// [`IndexSettings::data_files`](ctx_suggest::IndexSettings::data_files)). A stored index
    /// built with the other setting is rebuilt.
    pub fn suggest_data_files(mut self, data_files: bool) -> ContextBuilder {
        self.suggest_data_files = data_files;
        self
    }

    /// Opens the roots and builds the context.
    ///
    /// # Ambient Authority
    ///
    /// This opens the root directories by path, using the process's ambient authority once;
    /// everything after goes through the handles. Use [`ContextBuilder::build_with`] to pass
    /// the authority explicitly.
    ///
    /// # Errors
    ///
    /// When a root cannot be opened or a macro name is invalid.
    #[allow(clippy::disallowed_methods)] // The one place the facade opens its roots.
    pub fn build(self) -> Result<Context, Error> {
        self.build_with(cap_std::ambient_authority())
    }

    /// Builds the context with an explicit ambient authority.
    ///
    /// # Errors
    ///
    /// As [`ContextBuilder::build`].
    pub fn build_with(mut self, authority: AmbientAuthority) -> Result<Context, Error> {
        for (name, _) in &self.options.defines {
            if !ctx_preprocess::is_macro_name(name) {
                return Err(ErrorKind::BadDefine(name.clone()).into());
            }
        }
        let utf8 = |p: &Path| {
            camino_path(p).ok_or_else(|| Error::from(ErrorKind::NotUtf8(p.to_path_buf())))
        };
        let mut fs_limits = self.fs_limits.clone();
        if self.options.limits.max_files == 0 {
            // No limit on the files of an expansion: the walks may not stop early either.
            fs_limits.max_walk_entries = usize::MAX;
        }
        let store = match &self.cache_dir {
            Some(dir) => {
                Some(Arc::new(ctx_fs::Store::open(utf8(dir)?, authority).map_err(ErrorKind::Fs)?))
            }
            None => None,
        };
        // The sources' own cache folder is opened only when a solution or database is found.
        let sources_cache =
            LazyStore::new(self.sources_cache.as_deref().and_then(camino_path), authority);
        let sources_store = || match &self.sources_cache {
            Some(_) => sources_cache.get().cloned(),
            None => store.clone(),
        };
        let overlay = self.overlay.take();
        let planned = self.sources.take();
        let workspace = || -> Result<Sandbox, Error> {
            let mut builder = self.sandbox_builder(fs_limits.clone())?;
            if let Some(overlay) = &overlay {
                builder = builder.overlay(overlay.clone());
            }
            Ok(builder.open(authority).map_err(ErrorKind::Fs)?)
        };
        // The sandbox that looked for a solution is the context's own when none was found
        // (the common case), so that it is opened once.
        let (index, looked) = match planned {
            Some(planned) => planned.load(workspace, &sources_store)?,
            None => (None, None),
        };
        let asked = self.asked_roots(index.as_ref())?;
        let mut decided = match asked.is_empty() {
            true => crate::roots::Decided::default(),
            false => {
                let given = crate::roots::absolute_root(&self.root, ctx_fs::RootKind::Workspace)
                    .map(|(path, _)| path)
                    .ok_or_else(|| Error::from(ErrorKind::NotUtf8(self.root.clone())))?;
                let real = ctx_fs::real_path_of(&given, authority).unwrap_or_else(|| given.clone());
                crate::roots::decide(&given, &real, &asked, &self.trust, authority)
            }
        };
        let sandbox = match (looked, asked.is_empty()) {
            (Some(sandbox), true) => sandbox,
            _ => {
                let builder = self.sandbox_builder(fs_limits.clone())?;
                let mut builder = decided.add_to(&asked, builder);
                if let Some(overlay) = overlay {
                    builder = builder.overlay(overlay);
                }
                builder.open(authority).map_err(ErrorKind::Fs)?
            }
        };
        decided.refused(&asked, &sandbox);
        if let Some(notice) = index.as_ref().and_then(|index| self.merged_notice(index)) {
            decided.notices.push(notice);
        }
        let index = index.map(|index| {
            crate::source_index::verified(index, &sandbox, sources_store().as_deref())
        });
        let mut assembler = Assembler::new(Arc::new(sandbox), self.options)
            .with_tools(self.tools)
            .with_reducer(Arc::new(crate::reduce::OutlineReducer));
        let counts = self.counts_dir.as_deref().and_then(camino_path).map(|dir| {
            Arc::new(crate::counts::KeptCounts::open(camino::Utf8Path::new(&dir), authority))
        });
        if let Some(counts) = &counts {
            assembler = assembler.with_known_counts(counts.known.clone());
        }
        match (self.resolver, &index) {
            (Some(resolver), _) => assembler = assembler.with_resolver(resolver),
            (None, Some(index)) => {
                assembler = assembler.with_resolver(crate::source_index::resolver(index.clone()));
            }
            (None, None) => {}
        }
        let pasted =
            Arc::new(LazyStore::new(self.images_dir.as_deref().and_then(camino_path), authority));
        Ok(Context {
            assembler: Arc::new(assembler),
            notices: decided.notices.into(),
            trust_request: Arc::new(decided.request),
            paths: Arc::default(),
            suggest: crate::suggest_state::State::new(
                store,
                ctx_suggest::IndexSettings::from(self.suggest_symbols)
                    .data_files(self.suggest_data_files),
            ),
            sources: index,
            pasted,
            counts,
        })
    }
}

impl ContextBuilder {
    /// Whether building reads a solution or database.
    pub(crate) fn reads_sources(&self) -> bool {
        matches!(
            self.sources,
            Some(
                crate::source_index::Planned::Solution(..)
                    | crate::source_index::Planned::Detect(_)
            )
        )
    }

    /// The same builder without a solution to read.
    pub(crate) fn no_sources(mut self) -> ContextBuilder {
        self.sources = None;
        self
    }

    /// The roots that files of the workspace ask for: the configuration's, then the source
    /// folders of the index.
    fn asked_roots(
        &self,
        index: Option<&ctx_sources::SourceIndex>,
    ) -> Result<Vec<crate::roots::AskedRoot>, Error> {
        let mut asked = Vec::new();
        for (dir, asked_by) in &self.project_allow {
            let (path, kind) = crate::roots::absolute_root(dir, ctx_fs::RootKind::Allowed)
                .ok_or_else(|| Error::from(ErrorKind::NotUtf8(dir.clone())))?;
            asked.push(crate::roots::AskedRoot {
                path,
                kind,
                asked_by: asked_by.clone(),
                files: None,
                code: Code::ConfigIgnored,
                trusted: false,
            });
        }
        let Some(index) = index else { return Ok(asked) };
        let by = self.read_by(index);
        for root in index.source_roots() {
            asked.push(crate::roots::AskedRoot {
                path: camino::Utf8PathBuf::from(root.as_str()),
                kind: ctx_fs::RootKind::Source,
                asked_by: format!("{by} (source folder)"),
                files: Some(index.files_in(root)),
                code: Code::Sources,
                trusted: self.sources_trusted,
            });
        }
        Ok(asked)
    }

    /// The files an index was read from, relative to the root where they lie in it: `FILE`, or
    /// `FILE and DATABASE` for a solution read with the database beside it.
    fn read_by(&self, index: &ctx_sources::SourceIndex) -> String {
        let root = std::path::absolute(&self.root).unwrap_or_default();
        let shown = |file: &str| {
            let file = Path::new(file);
            file.strip_prefix(&root).unwrap_or(file).display().to_string()
        };
        let mut by = shown(index.solution());
        for other in index.also_read() {
            by = format!("{by} and {}", shown(other));
        }
        by
    }

    /// The notice, said once, that a solution and the database beside it were both read.
    fn merged_notice(&self, index: &ctx_sources::SourceIndex) -> Option<crate::roots::Notice> {
        if index.also_read().is_empty() {
            return None;
        }
        Some(crate::roots::Notice::new(
            Code::Sources,
            format!(
                "found {}: both read into one source index (`--sln` or `--compile-commands` \
                 reads one alone)",
                self.read_by(index)
            ),
        ))
    }

    /// The sandbox's builder: root, extra roots, deny and ignore rules, limits, cache.
    fn sandbox_builder(&self, limits: ctx_fs::Limits) -> Result<ctx_fs::SandboxBuilder, Error> {
        let utf8 = |p: &Path| {
            camino_path(p).ok_or_else(|| Error::from(ErrorKind::NotUtf8(p.to_path_buf())))
        };
        let mut builder =
            Sandbox::builder(utf8(&self.root)?).ignore(self.ignore.clone()).limits(limits);
        for dir in &self.allow {
            builder = builder.allow(utf8(dir)?);
        }
        for glob in &self.deny {
            builder = builder.deny(glob.clone());
        }
        if let Some(ttl) = self.cache_ttl {
            builder = builder.cache_ttl(ttl);
        }
        if let Some(bytes) = self.cache_capacity {
            builder = builder.cache_capacity(bytes);
        }
        Ok(builder)
    }
}

fn camino_path(path: &Path) -> Option<String> {
    path.to_str().map(str::to_owned)
}

/// A sandbox, options and tools: assemble documents and expand prompts with it, as often as
/// you like. Cloning is cheap, and the file cache is shared, so an agent that re-assembles
/// its rules every turn pays only for the files that changed.
#[derive(Clone, Debug)]
pub struct Context {
    assembler: Arc<Assembler>,
    /// What could not be honoured while the context was built.
    notices: Arc<[crate::roots::Notice]>,
    /// The folders outside the workspace that its files ask for.
    trust_request: Arc<ctx_trust::Request>,
    /// The paths walked for completions, shared by the clones.
    paths: Arc<crate::complete::PathCache>,
    pub(crate) suggest: crate::suggest_state::State,
    /// The source index of an out-of-source build, when one is loaded.
    pub(crate) sources: Option<Arc<ctx_sources::SourceIndex>>,
    /// The folder of pasted images, opened when first used.
    pasted: Arc<LazyStore>,
    /// The token counts kept between runs, when a folder for them was given.
    counts: Option<Arc<crate::counts::KeptCounts>>,
}

/// A store in a folder that is opened (and created) the first time it is asked for, so that
/// a run that needs no cache touches none.
pub(crate) struct LazyStore {
    dir: Option<String>,
    authority: AmbientAuthority,
    opened: std::sync::OnceLock<Option<Arc<ctx_fs::Store>>>,
}

impl std::fmt::Debug for LazyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyStore").field("dir", &self.dir).field("opened", &self.opened).finish()
    }
}

impl LazyStore {
    pub(crate) fn new(dir: Option<String>, authority: AmbientAuthority) -> LazyStore {
        LazyStore { dir, authority, opened: std::sync::OnceLock::new() }
    }

    /// The store, when the folder is set and can be opened.
    pub(crate) fn get(&self) -> Option<&Arc<ctx_fs::Store>> {
        self.opened
            .get_or_init(|| {
                let dir = self.dir.as_ref()?;
                ctx_fs::Store::open(dir.clone(), self.authority).ok().map(Arc::new)
            })
            .as_ref()
    }
}

impl Context {
    /// Starts configuring a context.
    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }

    /// The folder of pasted images, when one is set and can be opened.
    pub(crate) fn pasted(&self) -> Option<&ctx_fs::Store> {
        self.pasted.get().map(|store| &**store)
    }

    pub(crate) fn paths(&self) -> &crate::complete::PathCache {
        &self.paths
    }

    /// What could not be honoured while the context was built, each a warning with its code:
    /// folders outside the workspace that the user has not trusted (`W_UNTRUSTED`), roots the
    /// root rule refused or that could not be opened (`W_CONFIG` for a configuration's,
    /// `W_SOURCES` for a solution's). The context works without them.
    pub fn notices(&self) -> &[crate::roots::Notice] {
        &self.notices
    }

    /// The folders outside the workspace that its files ask for (a configuration's `allow`,
    /// a solution's source folders), trusted or not: what `ctx trust` shows and grants.
    pub fn trust_request(&self) -> &ctx_trust::Request {
        &self.trust_request
    }

    /// The assembler underneath.
    pub fn assembler(&self) -> &Assembler {
        &self.assembler
    }

    /// The sandbox every read goes through.
    pub fn sandbox(&self) -> &Sandbox {
        self.assembler.sandbox()
    }

    /// Stores the token counts this context took that its folder did not hold yet
    /// ([`ContextBuilder::counts_dir`]); nothing without such a folder or new counts.
    ///
    /// # Errors
    ///
    /// When the folder cannot be created or written.
    pub fn keep_counts(&self) -> Result<(), Error> {
        match &self.counts {
            Some(counts) => Ok(counts.keep().map_err(ErrorKind::Fs)?),
            None => Ok(()),
        }
    }

    /// Assembles a document file (relative to the root, or absolute inside a root).
    ///
    /// # Errors
    ///
    /// When the document itself cannot be resolved or read; problems inside it are
    /// diagnostics of the [`Assembly`].
    pub fn assemble_file(&self, path: &str) -> Result<Assembly, Error> {
        Ok(self.assembler.assemble_file(path)?)
    }

    /// Assembles a document file, writing the output to `writer` as it is produced.
    ///
    /// # Errors
    ///
    /// As [`Context::assemble_file`], and when writing fails.
    pub fn assemble_to(&self, path: &str, writer: &mut dyn io::Write) -> Result<Assembly, Error> {
        Ok(self.assembler.assemble_file_to(path, writer)?)
    }

    /// Assembles a text as a document in the workspace root.
    pub fn assemble_str(&self, text: &str) -> Assembly {
        self.assembler.assemble_str(text, "-")
    }

    /// Expands a prompt: its mentions are attached after it (append mode, XML format),
    /// whatever mode the context was built with.
    pub fn expand_prompt(&self, prompt: &str) -> Assembly {
        let assembler = self.prompt_assembler();
        assembler.assemble_str(prompt, "-")
    }

    /// Expands a prompt as [`Context::expand_prompt`] does, then attaches files it does not
    /// mention: after its own attachments, in a block headed for why they are there (files
    /// `ctx suggest` ranked: "The following files were suggested for this prompt by ctx
    /// suggest:"), their records marked (`"suggested": true`), within the same budgets and
    /// totals. See docs/assembly.md, "Attachments".
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # std::fs::write(dir.path().join("retry.rs"), "fn retry() {}\nfn other() {}\n")?;
    /// use ctx::{Attachment, assemble::record::Lines};
    /// let ctx = ctx::Context::builder().root(dir.path()).build()?;
    /// let lines = Some(Lines { start: 1, end: 1 });
    /// let assembly = ctx.expand_prompt_with("fix retry", &[Attachment::suggested("retry.rs", lines)]);
    /// assert!(assembly.content.contains("suggested for this prompt"));
    /// assert!(assembly.content.contains("<file path=\"retry.rs\" lines=\"1-1\">\nfn retry() {}\n</file>"));
    /// assert!(assembly.references[0].suggested);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn expand_prompt_with(&self, prompt: &str, attachments: &[Attachment]) -> Assembly {
        let assembler = self.prompt_assembler();
        assembler.assemble_str_with(prompt, "-", attachments.into())
    }

    /// [`Context::expand_prompt_with`], writing the output to `writer` as it is produced. The
    /// attachments may be chosen once the prompt's own references are known
    /// ([`Attachments::Chosen`]), to leave out the files it mentions.
    ///
    /// # Errors
    ///
    /// When writing fails.
    pub fn expand_prompt_with_to(
        &self,
        prompt: &str,
        attachments: Attachments<'_>,
        writer: &mut dyn io::Write,
    ) -> Result<Assembly, Error> {
        let assembler = self.prompt_assembler();
        Ok(assembler.assemble_str_with_to(prompt, "-", attachments, writer)?)
    }

    pub(crate) fn prompt_assembler(&self) -> Assembler {
        let mut assembler = Assembler::clone(&self.assembler);
        let options = assembler.options_mut();
        if options.mode == Mode::Inline {
            options.mode = Mode::Append;
            if options.format == Format::Inline {
                options.format = Format::Xml;
            }
        }
        assembler
    }
}
