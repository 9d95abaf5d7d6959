//! The command line and the configuration files merged into one set of settings, and the
//! [`ctx::Context`] built from them.
//!
//! [`Settings::new`] goes in steps: the configuration's layers ([`Layers`]), then the roots,
//! the source index, the assembly options, the output and the style, each from the command
//! line over the files.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::bail;
use ctx::{Format, Limits, Mode, OnError, Options};

use crate::cli::{ColorChoice, DialectArg, GlobalArgs, ModeArg, OnErrorArg, OutputFormat};
use crate::config::{self, AutoContext, Config, ConversationConfig, Loaded, Origin, UserLayer};

/// The content cache of one `ctx` process.
const CLI_CACHE_BYTES: u64 = 8 << 20;

/// How diagnostics are shown on standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    /// The source line and a caret under the span; otherwise one line each.
    pub(crate) rich: bool,
    /// ANSI colours.
    pub(crate) color: bool,
    /// Standard error is a real terminal (progress may be drawn there).
    pub(crate) stderr_tty: bool,
}

/// Everything a command needs to know besides its own arguments.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) root: PathBuf,
    /// Whether the command shows token counts in other formats than JSON (`ctx refs`).
    pub(crate) counts_shown: bool,
    /// Whether the command resolves paths, and so reads the solution of an out-of-source
    /// build (`ctx init`, `ctx index` … do not).
    pub(crate) sources_wanted: bool,
    /// Which include syntaxes are read besides ctx's own.
    pub(crate) dialect: DialectArg,
    allow: Vec<PathBuf>,
    deny: Vec<String>,
    /// The format given on the command line.
    pub(crate) format: Option<OutputFormat>,
    /// The format of the configuration file, for `assemble` and `expand`.
    config_format: Option<Format>,
    /// The mode given on the command line, else in the configuration file.
    pub(crate) mode: Option<Mode>,
    /// Assembly options: syntax, limits, switches and macros; mode and format are set per
    /// command.
    pub(crate) options: Options,
    max_file_bytes: Option<u64>,
    /// No warnings, no progress.
    pub(crate) quiet: bool,
    /// How diagnostics look.
    pub(crate) style: Style,
    /// The same for diagnostics that are a command's result, written to standard output
    /// (`ctx check`): rich only when standard output is a terminal.
    pub(crate) stdout_style: Style,
    /// What `ctx expand` appends from suggestions.
    pub(crate) autocontext: AutoContext,
    /// Where the suggestion index takes its symbols from (configuration, or the `--symbols`
    /// of `ctx index` and `ctx suggest`).
    pub(crate) suggest_symbols: ctx::SymbolSource,
    /// Whether the suggestion index takes in data files (configuration, or the `--data-files`
    /// of `ctx index` and `ctx suggest`).
    pub(crate) suggest_data_files: bool,
    /// The global `--max-tokens`, as given (`ctx suggest` takes it as its budget).
    pub(crate) max_tokens_arg: Option<usize>,
    /// Whether a tokenizer was chosen (`--tokenizer`, or `tokenizer` in the configuration).
    pub(crate) tokenizer_chosen: bool,
    /// Where the source index of an out-of-source build comes from.
    pub(crate) sources: Sources,
    sources_max_files: Option<usize>,
    /// The conversation keys of the configuration file.
    pub(crate) conversation: ConversationConfig,
    /// The folder of the user's own settings (the trust file, `config.toml`):
    /// `CTX_CONFIG_DIR`, else the user's configuration folder followed by `ctx`.
    pub(crate) config_dir: Option<PathBuf>,
    /// The folder of what ctx keeps between runs (the suggestion index, source indexes,
    /// pasted images): `CTX_CACHE_DIR`, else the user's cache folder followed by `ctx`.
    pub(crate) cache_dir: Option<PathBuf>,
    /// Why there is no cache folder, when the user's lies in the workspace.
    cache_refused: Option<String>,
    /// Roots a configuration found in the workspace asks for.
    project_allow: Vec<PathBuf>,
    /// That configuration, as its roots' asker is named.
    asked_by: Option<String>,
    /// Settings of that configuration that are ignored (`W_CONFIG`).
    ignored: Vec<config::Ignored>,
    /// `-q` on the command line: a workspace's own `quiet` does not hide what the workspace
    /// was refused.
    cli_quiet: bool,
}

/// Where the source index of an out-of-source build comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sources {
    /// The one solution or database of the root or `build/`, if there is exactly one.
    Auto,
    /// This file (`--sln`, `--compile-commands`, or the configuration), and whether the user
    /// named it (its source folders need no trust then).
    Named(PathBuf, bool),
    /// None (`--no-sources`).
    Off,
}

/// The configuration as read: the workspace's (or the one named with `--config`) over the
/// user's own, and what of the user's stays the user's.
struct Layers {
    loaded: Loaded,
    user: UserLayer,
}

/// The roots and deny globs of a run.
struct Roots {
    allow: Vec<PathBuf>,
    project_allow: Vec<PathBuf>,
    deny: Vec<String>,
}

/// How output is shaped: format and mode of the configuration, and the dialect.
struct Output {
    config_format: Option<Format>,
    mode: Option<Mode>,
    dialect: DialectArg,
}

/// `0` means no limit on the command line; the file-size cap has no "0" of its own. (Not
/// `u64::MAX`: ctx-fs reads `cap + 1` bytes.)
fn no_limit_u64(n: u64) -> u64 {
    if n == 0 { u64::MAX - 1 } else { n }
}

/// An error about a key of the configuration file.
fn bad_key(loaded: &Loaded, key: &str, err: String) -> anyhow::Error {
    let path = loaded.path.clone().unwrap_or_default();
    anyhow::anyhow!("bad configuration {path}: key `{key}`: {err}")
}

impl Settings {
    /// Merges the command line over the configuration files.
    pub(crate) fn new(args: &GlobalArgs) -> anyhow::Result<Settings> {
        let root = args.root.clone().unwrap_or_else(|| PathBuf::from("."));
        let config_dir = config_dir();
        let Layers { loaded, user } = layers(&root, args, config_dir.as_deref())?;
        let file = &loaded.config;
        let Roots { allow, project_allow, deny } = roots(args, &loaded, &user);
        let sources = sources(args, &loaded, &user)?;
        let Output { config_format, mode, dialect } = output(args, &loaded)?;
        let options = options(args, &loaded)?;
        let (style, stdout_style) = styles(args.color.or(file.color).unwrap_or(ColorChoice::Auto));
        let asked_by = loaded.path.as_deref().map(|p| relative_to(p, &root));
        let mut ignored = loaded.ignored;
        let mut cache_refused = None;
        // The user's cache folder, unless it lies in the workspace (a repository that is the
        // home folder); a folder named with `CTX_CACHE_DIR` is the user's word.
        let cache_dir = cache_dir().filter(|dir| {
            let inside = !cache_dir_named() && in_workspace(dir, &root);
            if inside {
                let why = format!(
                    "the cache folder {} lies in the workspace, where ctx never writes; set \
                     CTX_CACHE_DIR to a folder outside it",
                    dir.display()
                );
                let message = format!("{why} (indexes are kept in memory only)");
                ignored.push(config::Ignored { at: "ctx".to_owned(), message });
                cache_refused = Some(why);
            }
            !inside
        });
        Ok(Settings {
            counts_shown: false,
            sources_wanted: true,
            dialect,
            allow,
            deny,
            format: args.format,
            config_format,
            mode,
            options,
            max_file_bytes: args.max_file_bytes.or(file.max_file_bytes).map(no_limit_u64),
            quiet: args.quiet || file.quiet.unwrap_or(false),
            style,
            stdout_style,
            autocontext: AutoContext::from_config(file),
            suggest_symbols: file.suggest_symbols.map_or_else(Default::default, Into::into),
            suggest_data_files: file.suggest_data_files.unwrap_or(false),
            max_tokens_arg: args.max_tokens,
            tokenizer_chosen: args.tokenizer.is_some() || file.tokenizer.is_some(),
            sources,
            sources_max_files: file.sources_max_files,
            conversation: ConversationConfig::from_config(file),
            config_dir,
            cache_dir,
            cache_refused,
            project_allow,
            asked_by,
            ignored,
            cli_quiet: args.quiet,
            root,
        })
    }

    /// The assembly format of `assemble` and `expand`: the command line's, else the
    /// configuration file's, else `default`.
    pub(crate) fn assembly_format(&self, command: &str, default: Format) -> anyhow::Result<Format> {
        match self.format {
            Some(OutputFormat::Inline) => Ok(Format::Inline),
            Some(OutputFormat::Xml) => Ok(Format::Xml),
            Some(OutputFormat::Markdown) => Ok(Format::Markdown),
            Some(OutputFormat::Json) => Ok(Format::Json),
            Some(other) => bail!(
                "format `{}` is not one of ctx {command}'s (expected one of: inline, xml, markdown, json)",
                other.name()
            ),
            None => Ok(self.config_format.unwrap_or(default)),
        }
    }

    /// The format of the commands that print text or JSON (`check`, `refs`, `parse`,
    /// `complete`); `true` for JSON.
    pub(crate) fn json_or_text(&self, command: &str, default_json: bool) -> anyhow::Result<bool> {
        match self.format {
            None => Ok(default_json),
            Some(OutputFormat::Json) => Ok(true),
            Some(OutputFormat::Text) => Ok(false),
            Some(other) => {
                bail!(
                    "format `{}` is not one of ctx {command}'s (expected one of: text, json)",
                    other.name()
                )
            }
        }
    }

    /// The size cap of the top-level input (a document on standard input, a prompt, a file
    /// to parse): the file size cap, 1 MiB unless set; 0 for none.
    pub(crate) fn input_cap(&self) -> u64 {
        match self.max_file_bytes {
            Some(bytes) if bytes >= u64::MAX - 1 => 0,
            Some(bytes) => bytes,
            None => 1 << 20,
        }
    }

    /// Everything of the settings that decides what the suggestion index holds and how it
    /// ranks, as text: a service that keeps the index answers a command only when the two
    /// agree (the command's own output settings are left out).
    pub(crate) fn index_settings_text(&self) -> String {
        let options = Options { mode: Mode::Append, format: Format::Xml, ..self.options.clone() };
        format!(
            "{:?}",
            (
                env!("CARGO_PKG_VERSION"),
                &self.root,
                &self.allow,
                &self.deny,
                options,
                self.max_file_bytes,
                self.suggest_symbols,
                self.suggest_data_files,
                &self.project_allow,
                &self.config_dir,
            )
        )
    }

    /// The cache folder, or why there is none.
    pub(crate) fn cache_dir(&self) -> anyhow::Result<&Path> {
        match &self.cache_dir {
            Some(dir) => Ok(dir),
            None => match &self.cache_refused {
                Some(why) => bail!("{why}"),
                None => bail!("no cache directory for the suggestion index (set CTX_CACHE_DIR)"),
            },
        }
    }

    /// Builds the context for one command, with its mode and format.
    pub(crate) fn context(&self, mode: Mode, format: Format) -> anyhow::Result<ctx::Context> {
        self.context_for(mode, format, None)
    }

    /// [`Settings::context`] counting in `tokenizer` unless a tokenizer was chosen
    /// (`--tokenizer`, or `tokenizer` in the configuration): `ctx messages --provider
    /// anthropic` counts in Anthropic's estimate.
    pub(crate) fn context_counting(
        &self,
        mode: Mode,
        format: Format,
        tokenizer: ctx::tokens::Tokenizer,
    ) -> anyhow::Result<ctx::Context> {
        let mut builder = self.builder_for(mode, format, None);
        if !self.tokenizer_chosen {
            builder = builder.tokenizer(tokenizer);
        }
        self.build(builder)
    }

    /// Builds the context for one document named on the command line: `--dialect auto`
    /// reads mdBook's syntax too when it lies in an mdBook.
    pub(crate) fn context_for(
        &self,
        mode: Mode,
        format: Format,
        document: Option<&Path>,
    ) -> anyhow::Result<ctx::Context> {
        self.build(self.builder_for(mode, format, document))
    }

    /// The context of the suggestion commands (`ctx suggest`, `ctx index`, `ctx expand
    /// --auto`), without its index store (see [`ctx::Context::with_index_store`]). No content
    /// cache: an index build reads every file once, and the cache would only hold on to them
    /// (its byte cap is enforced lazily, so a bulk read overshoots it by far). The index
    /// covers the whole workspace: the walk has no entry limit.
    pub(crate) fn ranking_context(
        &self,
        mode: Mode,
        format: Format,
    ) -> anyhow::Result<ctx::Context> {
        let options = Options { mode, format, ..self.options.clone() };
        self.build(self.builder(options).cache_capacity(0).max_walk_entries(usize::MAX))
    }

    /// [`Settings::ranking_context`] counting in `tokenizer` unless a tokenizer was chosen, as
    /// [`Settings::context_counting`]: `ctx messages --auto`.
    pub(crate) fn ranking_context_counting(
        &self,
        mode: Mode,
        format: Format,
        tokenizer: ctx::tokens::Tokenizer,
    ) -> anyhow::Result<ctx::Context> {
        let options = Options { mode, format, ..self.options.clone() };
        let mut builder = self.builder(options).cache_capacity(0).max_walk_entries(usize::MAX);
        if !self.tokenizer_chosen {
            builder = builder.tokenizer(tokenizer);
        }
        self.build(builder)
    }

    /// Stores the token counts a command took that the cache folder did not hold yet; a
    /// cache that cannot be written costs the next run its counting, not this one its result.
    pub(crate) fn keep_counts(&self, context: &ctx::Context) {
        if let Err(err) = context.keep_counts() {
            tracing::debug!(%err, "token counts not stored");
        }
    }

    /// Builds a context, its notices reported.
    fn build(&self, builder: ctx::ContextBuilder) -> anyhow::Result<ctx::Context> {
        let context = builder.build().map_err(|err| match err.kind() {
            ctx::ErrorKind::Fs(_) => anyhow::Error::new(err).context("cannot open a root"),
            _ => anyhow::Error::new(err),
        })?;
        self.report_notices(&context);
        let options = context.assembler().options();
        tracing::debug!(
            root = %self.root.display(), mode = %options.mode, format = %options.format,
            "context built"
        );
        Ok(context)
    }

    /// The context builder of [`Settings::context_for`], for commands that add to it (the
    /// language server's overlay).
    pub(crate) fn builder_for(
        &self,
        mode: Mode,
        format: Format,
        document: Option<&Path>,
    ) -> ctx::ContextBuilder {
        let mut options = Options { mode, format, ..self.options.clone() };
        // Tokens are counted only where they are shown (the JSON records) or where a token
        // budget needs them (`counts_tokens` also looks at `max_tokens`).
        options.count_tokens &= format == Format::Json || self.counts_shown;
        options.syntax.mdbook = match self.dialect {
            DialectArg::Ctx => false,
            DialectArg::Mdbook => true,
            DialectArg::Auto => {
                document.is_some_and(|file| crate::input::in_book(&self.root, file))
            }
        };
        // One process assembles once: a small content cache serves the files read twice
        // (diamonds) without holding a large tree in memory.
        self.builder(options).cache_capacity(CLI_CACHE_BYTES)
    }

    /// The context builder of the settings, before it is built.
    fn builder(&self, options: Options) -> ctx::ContextBuilder {
        let mut builder = ctx::Context::builder()
            .root(&self.root)
            .options(options)
            .suggest_symbols(self.suggest_symbols)
            .suggest_data_files(self.suggest_data_files);
        for dir in &self.allow {
            builder = builder.allow(dir);
        }
        let asked_by = format!("{} (allow)", self.asked_by.as_deref().unwrap_or("ctx.toml"));
        for dir in &self.project_allow {
            builder = builder.project_allow(dir, asked_by.clone());
        }
        if let Some(dir) = &self.config_dir {
            builder = builder.trust(ctx::Trust::user_store(dir));
        }
        for glob in &self.deny {
            builder = builder.deny(glob.clone());
        }
        if let Some(bytes) = self.max_file_bytes {
            builder = builder.max_file_bytes(bytes);
        }
        if let Some(dir) = &self.cache_dir {
            builder = builder.images_dir(dir.join("images")).counts_dir(dir);
        }
        builder = match &self.sources {
            _ if !self.sources_wanted => return builder,
            Sources::Off => return builder,
            Sources::Auto => builder.detect_solution(),
            Sources::Named(path, true) => builder.solution(path.to_string_lossy()),
            Sources::Named(path, false) => builder.workspace_solution(path.to_string_lossy()),
        };
        if let Some(max) = self.sources_max_files {
            builder = builder.sources_max_files(max);
        }
        match &self.cache_dir {
            Some(dir) => builder.sources_cache_dir(dir),
            None => builder,
        }
    }

    /// Reports on standard error the settings that could not be honoured: those of the
    /// configuration file and the context's own (roots not opened, untrusted folders), each
    /// `where: warning[CODE]: message`, each once per process however many contexts a command
    /// builds. Only `-q` on the command line hides them: a workspace's own configuration
    /// cannot silence what it was refused.
    pub(crate) fn report_notices(&self, context: &ctx::Context) {
        if self.cli_quiet {
            return;
        }
        let ignored = self.ignored.iter().map(|i| (i.at.as_str(), "W_CONFIG", i.message.as_str()));
        let notices =
            context.notices().iter().map(|n| ("ctx", n.code.as_str(), n.message.as_str()));
        report_once(ignored.chain(notices));
    }
}

/// The configuration files: the workspace's, or the one named with `--config`, over the
/// user's own (`config.toml` in `config_dir`), whose roots and solution are the user's word.
fn layers(root: &Path, args: &GlobalArgs, config_dir: Option<&Path>) -> anyhow::Result<Layers> {
    let mut loaded = config::load(root, args.config.as_deref())?;
    let mut user = UserLayer::default();
    if let Some(mine) = config::load_user(root, config_dir)? {
        user = UserLayer::of(&mine);
        loaded.config = config::under(std::mem::take(&mut loaded.config), &mine.config);
        loaded.ignored.extend(mine.ignored);
    }
    Ok(Layers { loaded, user })
}

/// The roots and deny globs: the user's, the configuration's, then the command line's. A
/// configured root is relative to the configuration's folder, but `~` and `~/sub` name the
/// home directory wherever they are written. The user's own roots are opened as they are;
/// those of a configuration found in the workspace are asked for, and opened after the root
/// rule and the user's trust (docs/security.md).
fn roots(args: &GlobalArgs, loaded: &Loaded, user: &UserLayer) -> Roots {
    let file = &loaded.config;
    let home = |dir: &PathBuf| dir.to_str().is_some_and(|d| d == "~" || d.starts_with("~/"));
    let configured: Vec<PathBuf> = file
        .allow
        .iter()
        .flatten()
        .map(|dir| if home(dir) { dir.clone() } else { loaded.dir.join(dir) })
        .collect();
    let (mut allow, project_allow) = match loaded.origin {
        Origin::User => (configured, Vec::new()),
        Origin::Workspace => (Vec::new(), configured),
    };
    allow.splice(0..0, user.allow.iter().cloned());
    allow.extend(args.allow.iter().cloned());
    let mut deny = user.deny.clone();
    deny.extend(file.deny.clone().unwrap_or_default());
    Roots { allow, project_allow, deny }
}

/// Where the source index comes from. The command line wins over the file: a solution named
/// there overrides the file's `no_sources`, and `--no-sources` the file's solution. A
/// solution the user names is trusted with its source folders; one a workspace's
/// configuration names is not.
fn sources(args: &GlobalArgs, loaded: &Loaded, user: &UserLayer) -> anyhow::Result<Sources> {
    let file = &loaded.config;
    Ok(if args.no_sources {
        Sources::Off
    } else if let Some(named) = args.sln.as_ref().or(args.compile_commands.as_ref()) {
        Sources::Named(std::path::absolute(named)?, true)
    } else if file.no_sources.unwrap_or(false) {
        Sources::Off
    } else if let Some(named) = file.sln.as_ref().or(file.compile_commands.as_ref()) {
        match &user.solution {
            // Named by the user's own configuration, and by no other.
            Some(mine) if mine == named => Sources::Named(std::path::absolute(mine)?, true),
            _ => {
                let trusted = loaded.origin == Origin::User;
                Sources::Named(std::path::absolute(loaded.dir.join(named))?, trusted)
            }
        }
    } else {
        Sources::Auto
    })
}

/// The configuration's format, the mode and the dialect.
fn output(args: &GlobalArgs, loaded: &Loaded) -> anyhow::Result<Output> {
    let file = &loaded.config;
    let config_format = match &file.format {
        Some(name) => Some(name.parse::<Format>().map_err(|e| bad_key(loaded, "format", e))?),
        None => None,
    };
    let mode = match (args.mode, &file.mode) {
        (Some(ModeArg::Inline), _) => Some(Mode::Inline),
        (Some(ModeArg::Append), _) => Some(Mode::Append),
        (None, Some(name)) => Some(name.parse::<Mode>().map_err(|e| bad_key(loaded, "mode", e))?),
        (None, None) => None,
    };
    let dialect = match (args.dialect, file.dialect.as_deref()) {
        (Some(dialect), _) => dialect,
        (None, None | Some("ctx")) => DialectArg::Ctx,
        (None, Some("mdbook")) => DialectArg::Mdbook,
        (None, Some("auto")) => DialectArg::Auto,
        (None, Some(other)) => {
            let why = format!("unknown dialect `{other}` (expected one of: ctx, mdbook, auto)");
            return Err(bad_key(loaded, "dialect", why));
        }
    };
    Ok(Output { config_format, mode, dialect })
}

/// The assembly options: syntax switches, limits, macros and what a failed item leaves.
fn options(args: &GlobalArgs, loaded: &Loaded) -> anyhow::Result<Options> {
    let file = &loaded.config;
    let on_error = match (args.on_error, &file.on_error) {
        (Some(OnErrorArg::Marker), _) => OnError::Marker,
        (Some(OnErrorArg::Keep), _) => OnError::Keep,
        (Some(OnErrorArg::Drop), _) => OnError::Drop,
        (None, Some(name)) => {
            name.parse::<OnError>().map_err(|e| bad_key(loaded, "on_error", e))?
        }
        (None, None) => OnError::Marker,
    };
    let flag = |cli: bool, file: Option<bool>| cli || file.unwrap_or(false);
    let mut options = Options {
        syntax: ctx::syntax::Options {
            mentions: !flag(args.no_mentions, file.no_mentions),
            includes: !flag(args.no_includes, file.no_includes),
            directives: !flag(args.no_directives, file.no_directives),
            code_skip: !flag(args.no_code_skip, file.no_code_skip),
            ..ctx::syntax::Options::default()
        },
        limits: limits(args, file),
        // A budget asked for turns counting on; the default guard does not.
        count_tokens: flag(args.tokens, file.tokens),
        default_budget: args.max_tokens.is_none() && file.max_tokens.is_none(),
        tokenizer: tokenizer(args, loaded)?,
        line_numbers: flag(args.line_numbers, file.line_numbers),
        strict: flag(args.strict, file.strict),
        on_error,
        defines: defines(args, file),
        ..Options::default()
    };
    if let Some(extensions) = &file.recursive_extensions {
        options.recursive_extensions =
            extensions.iter().map(|e| e.trim_start_matches('.').to_owned()).collect();
    }
    Ok(options)
}

/// The limits: the command line's, else the file's, else the defaults.
fn limits(args: &GlobalArgs, file: &Config) -> Limits {
    let defaults = Limits::default();
    Limits {
        max_depth: args.max_depth.or(file.max_depth).unwrap_or(defaults.max_depth),
        max_output_bytes: args
            .max_output_bytes
            .or(file.max_output_bytes)
            .unwrap_or(defaults.max_output_bytes),
        max_includes: args.max_includes.or(file.max_includes).unwrap_or(defaults.max_includes),
        max_scan_bytes: args
            .max_scan_bytes
            .or(file.max_scan_bytes)
            .unwrap_or(defaults.max_scan_bytes),
        max_lines: args.max_lines.or(file.max_lines).unwrap_or(defaults.max_lines),
        max_files: args.max_files.or(file.max_files).unwrap_or(defaults.max_files),
        // With no budget set, the default guard: an expansion larger than any context
        // window stops with the budget's marker (`0` lifts it).
        max_tokens: args.max_tokens.or(file.max_tokens).unwrap_or(ctx::DEFAULT_MAX_TOKENS),
    }
}

/// The tokenizer: the command line's, else the file's (`tokenizer`), else o200k.
fn tokenizer(args: &GlobalArgs, loaded: &Loaded) -> anyhow::Result<ctx::tokens::Tokenizer> {
    if let Some(arg) = args.tokenizer {
        return Ok(arg.into());
    }
    match &loaded.config.tokenizer {
        None => Ok(ctx::tokens::Tokenizer::default()),
        Some(name) => ctx::tokens::Tokenizer::from_name(name).ok_or_else(|| {
            bad_key(
                loaded,
                "tokenizer",
                format!("unknown tokenizer `{name}` (known: o200k, anthropic-estimate)"),
            )
        }),
    }
}

/// The macros: the file's, each redefined by a `-D` of the same name.
fn defines(args: &GlobalArgs, file: &Config) -> Vec<(String, String)> {
    let mut defines: Vec<(String, String)> =
        file.defines.iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
    for define in &args.defines {
        let (name, value) = define.split_once('=').unwrap_or((define, ""));
        defines.retain(|(n, _)| n != name);
        defines.push((name.to_owned(), value.to_owned()));
    }
    defines
}

/// How diagnostics look on standard error, and on standard output (`ctx check`).
fn styles(color: ColorChoice) -> (Style, Style) {
    let stderr_tty = std::io::stderr().is_terminal();
    let forced = std::env::var_os("CTX_FORCE_TTY").is_some_and(|v| v == "1");
    let no_color = no_color(std::env::var_os("NO_COLOR").as_deref());
    let style_for = |tty: bool| match color {
        ColorChoice::Always => Style { rich: true, color: true, stderr_tty },
        ColorChoice::Never => Style { rich: false, color: false, stderr_tty },
        ColorChoice::Auto => {
            let tty = tty || forced;
            Style { rich: tty, color: tty && !no_color, stderr_tty }
        }
    };
    (style_for(stderr_tty), style_for(std::io::stdout().is_terminal()))
}

/// The folder of the user's own settings that ctx keeps, the trust file among them:
/// `CTX_CONFIG_DIR`, else the user's configuration folder followed by `ctx`
/// (`~/.config/ctx` on Linux).
fn config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CTX_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::config_dir().map(|d| d.join("ctx"))
}

/// The folder ctx keeps its indexes and pasted images in: `CTX_CACHE_DIR`, else the user's
/// cache folder followed by `ctx` (`~/.cache/ctx` on Linux).
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CTX_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::cache_dir().map(|d| d.join("ctx"))
}

/// Whether the cache folder is named with `CTX_CACHE_DIR`.
fn cache_dir_named() -> bool {
    std::env::var_os("CTX_CACHE_DIR").is_some_and(|d| !d.is_empty())
}

/// Whether the folder `dir`, which need not exist yet, lies in the workspace `root`: as
/// written, or where it really is when it exists (a link into the workspace).
fn in_workspace(dir: &Path, root: &Path) -> bool {
    let (Ok(dir_abs), Ok(root_abs)) = (std::path::absolute(dir), std::path::absolute(root)) else {
        return false;
    };
    dir_abs.starts_with(&root_abs) || ctx::lies_in(&dir.join(".probe"), root)
}

/// `path` relative to `root` when it lies in it (as shown in warnings).
fn relative_to(path: &str, root: &Path) -> String {
    Path::new(path).strip_prefix(root).map_or_else(|_| path.to_owned(), |p| p.display().to_string())
}

/// Writes each `(where, code, message)` warning not written before by this process.
fn report_once<'a>(warnings: impl Iterator<Item = (&'a str, &'a str, &'a str)>) {
    use std::io::Write as _;
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let mut err = std::io::stderr().lock();
    for (at, code, message) in warnings {
        let line = format!("{at}: warning[{code}]: {}", crate::term::visible(message));
        if !seen.contains(&line) {
            let _ = writeln!(err, "{line}");
            seen.push(line);
        }
    }
}

/// Whether `NO_COLOR` asks for no colour: set and not empty (no-color.org). The one rule for
/// every place that colours.
pub(crate) fn no_color(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    #[test]
    fn no_color_means_set_and_not_empty() {
        assert!(!no_color(None));
        assert!(!no_color(Some(OsStr::new(""))), "set but empty does not count");
        assert!(no_color(Some(OsStr::new("1"))));
        assert!(no_color(Some(OsStr::new("0"))), "any value counts");
    }
}
