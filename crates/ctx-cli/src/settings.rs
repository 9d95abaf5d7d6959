//! The command line and the configuration file merged into one set of settings, and the
//! [`ctx::Context`] built from them.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::bail;
use ctx::{Format, Limits, Mode, OnError, Options};

use crate::cli::{ColorChoice, DialectArg, GlobalArgs, ModeArg, OnErrorArg, OutputFormat};
use crate::config;

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
    pub(crate) autocontext: crate::suggest::AutoContext,
    /// Where the suggestion index takes its symbols from (configuration, or the `--symbols`
    /// of `ctx index` and `ctx suggest`).
    pub(crate) suggest_symbols: ctx::SymbolSource,
    /// The global `--max-tokens`, as given (`ctx suggest` takes it as its budget).
    pub(crate) max_tokens_arg: Option<usize>,
    /// Where the source index of an out-of-source build comes from.
    pub(crate) sources: Sources,
    sources_max_files: Option<usize>,
    /// The conversation keys of the configuration file.
    pub(crate) conversation: crate::conversation::ConversationConfig,
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

/// `0` means no limit on the command line; the file-size cap has no "0" of its own. (Not
/// `u64::MAX`: ctx-fs reads `cap + 1` bytes.)
fn no_limit_u64(n: u64) -> u64 {
    if n == 0 { u64::MAX - 1 } else { n }
}

impl Settings {
    /// Merges the command line over the configuration file.
    pub(crate) fn new(args: &GlobalArgs) -> anyhow::Result<Settings> {
        let root = args.root.clone().unwrap_or_else(|| PathBuf::from("."));
        let mut loaded = config::load(&root, args.config.as_deref())?;
        // The user's own configuration lies under the workspace's (or the one named with
        // --config): its roots and its solution are the user's word.
        let mut user = config::UserLayer::default();
        if let Some(mine) = config::load_user(&root, trust_dir().as_deref())? {
            user = config::UserLayer::of(&mine);
            loaded.config = config::under(std::mem::take(&mut loaded.config), &mine.config);
            loaded.ignored.extend(mine.ignored);
        }
        let file = &loaded.config;
        let bad = |key: &str, err: String| {
            let path = loaded.path.clone().unwrap_or_default();
            anyhow::anyhow!("bad configuration {path}: key `{key}`: {err}")
        };

        // A configured root is relative to the configuration's folder, but `~` and `~/sub`
        // name the home directory wherever they are written. The user's own roots are opened
        // as they are; those of a configuration found in the workspace are asked for, and
        // opened after the root rule and the user's trust (docs/security.md).
        let home = |dir: &PathBuf| dir.to_str().is_some_and(|d| d == "~" || d.starts_with("~/"));
        let configured: Vec<PathBuf> = file
            .allow
            .iter()
            .flatten()
            .map(|dir| if home(dir) { dir.clone() } else { loaded.dir.join(dir) })
            .collect();
        let (mut allow, project_allow) = match loaded.origin {
            config::Origin::User => (configured, Vec::new()),
            config::Origin::Workspace => (Vec::new(), configured),
        };
        allow.splice(0..0, user.allow);
        allow.extend(args.allow.iter().cloned());
        let mut deny = user.deny;
        deny.extend(file.deny.clone().unwrap_or_default());
        // The command line wins over the file: a solution named there overrides the file's
        // `no_sources`, and `--no-sources` the file's solution. A solution the user names is
        // trusted with its source folders; one a workspace's configuration names is not.
        let sources = if args.no_sources {
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
                    let trusted = loaded.origin == config::Origin::User;
                    Sources::Named(std::path::absolute(loaded.dir.join(named))?, trusted)
                }
            }
        } else {
            Sources::Auto
        };

        let mut defines: Vec<(String, String)> =
            file.defines.iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
        for define in &args.defines {
            let (name, value) = define.split_once('=').unwrap_or((define, ""));
            defines.retain(|(n, _)| n != name);
            defines.push((name.to_owned(), value.to_owned()));
        }

        let config_format = match &file.format {
            Some(name) => Some(name.parse::<Format>().map_err(|e| bad("format", e))?),
            None => None,
        };
        let mode = match (args.mode, &file.mode) {
            (Some(ModeArg::Inline), _) => Some(Mode::Inline),
            (Some(ModeArg::Append), _) => Some(Mode::Append),
            (None, Some(name)) => Some(name.parse::<Mode>().map_err(|e| bad("mode", e))?),
            (None, None) => None,
        };

        let dialect = match (args.dialect, file.dialect.as_deref()) {
            (Some(dialect), _) => dialect,
            (None, None | Some("ctx")) => DialectArg::Ctx,
            (None, Some("mdbook")) => DialectArg::Mdbook,
            (None, Some("auto")) => DialectArg::Auto,
            (None, Some(other)) => {
                let why = format!("unknown dialect `{other}` (expected one of: ctx, mdbook, auto)");
                return Err(bad("dialect", why));
            }
        };
        let on_error = match (args.on_error, &file.on_error) {
            (Some(OnErrorArg::Marker), _) => OnError::Marker,
            (Some(OnErrorArg::Keep), _) => OnError::Keep,
            (Some(OnErrorArg::Drop), _) => OnError::Drop,
            (None, Some(name)) => name.parse::<OnError>().map_err(|e| bad("on_error", e))?,
            (None, None) => OnError::Marker,
        };

        let flag = |cli: bool, file: Option<bool>| cli || file.unwrap_or(false);
        let defaults = Limits::default();
        let limits = Limits {
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
            max_tokens: args.max_tokens.or(file.max_tokens).unwrap_or(defaults.max_tokens),
        };
        let mut options = Options {
            syntax: ctx::syntax::Options {
                mentions: !flag(args.no_mentions, file.no_mentions),
                includes: !flag(args.no_includes, file.no_includes),
                directives: !flag(args.no_directives, file.no_directives),
                code_skip: !flag(args.no_code_skip, file.no_code_skip),
                ..ctx::syntax::Options::default()
            },
            limits,
            count_tokens: flag(args.tokens, file.tokens),
            line_numbers: flag(args.line_numbers, file.line_numbers),
            strict: flag(args.strict, file.strict),
            on_error,
            defines,
            ..Options::default()
        };
        if let Some(extensions) = &file.recursive_extensions {
            options.recursive_extensions =
                extensions.iter().map(|e| e.trim_start_matches('.').to_owned()).collect();
        }

        let color = args.color.or(file.color).unwrap_or(ColorChoice::Auto);
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
        let style = style_for(stderr_tty);
        let stdout_style = style_for(std::io::stdout().is_terminal());

        let self_root = root.clone();
        Ok(Settings {
            root,
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
            quiet: flag(args.quiet, file.quiet),
            style,
            stdout_style,
            autocontext: crate::suggest::AutoContext::from_config(file),
            suggest_symbols: file.suggest_symbols.map_or_else(Default::default, Into::into),
            max_tokens_arg: args.max_tokens,
            sources,
            sources_max_files: file.sources_max_files,
            conversation: crate::conversation::ConversationConfig::from_config(file),
            project_allow,
            asked_by: loaded.path.as_deref().map(|p| relative_to(p, &self_root)),
            ignored: loaded.ignored,
            cli_quiet: args.quiet,
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

    /// Builds the context for one command, with its mode and format.
    pub(crate) fn context(&self, mode: Mode, format: Format) -> anyhow::Result<ctx::Context> {
        self.context_for(mode, format, None)
    }

    /// Builds the context for one document named on the command line: `--dialect auto`
    /// reads mdBook's syntax too when it lies in an mdBook.
    pub(crate) fn context_for(
        &self,
        mode: Mode,
        format: Format,
        document: Option<&std::path::Path>,
    ) -> anyhow::Result<ctx::Context> {
        let context =
            self.builder_for(mode, format, document).build().map_err(|err| match err.kind() {
                ctx::ErrorKind::Fs(_) => anyhow::Error::new(err).context("cannot open a root"),
                _ => anyhow::Error::new(err),
            })?;
        self.report_notices(&context);
        tracing::debug!(root = %self.root.display(), mode = %mode, format = %format, "context built");
        Ok(context)
    }

    /// The context builder of [`Settings::context_for`], for commands that add to it (the
    /// language server's overlay).
    pub(crate) fn builder_for(
        &self,
        mode: Mode,
        format: Format,
        document: Option<&std::path::Path>,
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
        self.builder(options)
    }

    /// The context of the suggestion commands: [`Settings::context`] with the index stored
    /// under the cache directory (`CTX_CACHE_DIR`, else the user's cache directory + `ctx`).
    pub(crate) fn suggest_context(
        &self,
        mode: Mode,
        format: Format,
    ) -> anyhow::Result<ctx::Context> {
        crate::suggest::context_with_cache(self, mode, format)
    }

    /// The context builder of [`Settings::context`], before it is built.
    pub(crate) fn builder(&self, options: Options) -> ctx::ContextBuilder {
        let mut builder = ctx::Context::builder()
            .root(&self.root)
            .options(options)
            .cache_capacity(CLI_CACHE_BYTES)
            .suggest_symbols(self.suggest_symbols);
        for dir in &self.allow {
            builder = builder.allow(dir);
        }
        let asked_by = format!("{} (allow)", self.asked_by.as_deref().unwrap_or("ctx.toml"));
        for dir in &self.project_allow {
            builder = builder.project_allow(dir, asked_by.clone());
        }
        if let Some(dir) = trust_dir() {
            builder = builder.trust(ctx::Trust::user_store(dir));
        }
        for glob in &self.deny {
            builder = builder.deny(glob.clone());
        }
        if let Some(bytes) = self.max_file_bytes {
            builder = builder.max_file_bytes(bytes);
        }
        if let Ok(dir) = crate::suggest::cache_dir() {
            builder = builder.images_dir(dir.join("images"));
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
        match crate::suggest::cache_dir() {
            Ok(dir) => builder.sources_cache_dir(dir),
            Err(_) => builder,
        }
    }
}

/// The folder of the user's own settings that ctx keeps, the trust file among them:
/// `CTX_CONFIG_DIR`, else the user's configuration folder followed by `ctx`
/// (`~/.config/ctx` on Linux).
pub(crate) fn trust_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CTX_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    dirs::config_dir().map(|d| d.join("ctx"))
}

/// `path` relative to `root` when it lies in it (as shown in warnings).
fn relative_to(path: &str, root: &std::path::Path) -> String {
    std::path::Path::new(path)
        .strip_prefix(root)
        .map_or_else(|_| path.to_owned(), |p| p.display().to_string())
}

impl Settings {
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
