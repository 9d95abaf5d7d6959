//! The command line, declared with clap: the commands, their arguments and the common options
//! of cli.md. Every argument struct of the binary is here; the commands' modules only read
//! them.

use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

/// Assemble the context an LLM sees: expand file references in prompts and rule documents.
#[derive(Debug, Parser)]
#[command(name = "ctx", version, about, long_about = None, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Assemble a document: every reference replaced by what it names (default mode inline).
    Assemble(AssembleArgs),
    /// Expand a prompt's mentions (default mode append, format xml).
    Expand(ExpandArgs),
    /// Lint documents without printing content: only diagnostics and a summary.
    Check(CheckArgs),
    /// The reference tree of a document: what includes what, with line ranges and sizes.
    Refs(RefsArgs),
    /// Print the scanned items of one text with spans, for debugging and tests.
    Parse(ParseArgs),
    /// Ranked completions for a partly typed mention (`src/ag`, `@"my f`).
    Complete(CompleteArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// The out-of-source index of the build folder: projects, files, source roots.
    Sources(SourcesArgs),
    /// How each query resolves: through the workspace, the source index, a source root or a
    /// unique file name.
    Resolve(ResolveArgs),
    /// Show the folders outside the workspace that its files ask to open, and trust them.
    Trust(TrustArgs),
    /// Create `.ctx/rules/default.md` and a commented `ctx.toml` where missing.
    Init(InitArgs),
    /// The active rules of the rules folder assembled into one system prompt.
    SystemPrompt(SystemPromptArgs),
    /// A chat request body: system prompt, history, the expanded prompt and its images.
    Messages(MessagesArgs),
    /// What a coding agent loads from its rule files (CLAUDE.md, AGENTS.md, .cursor/rules …)
    /// for a working folder and a file, in order, wrapped as it sends them; and what it
    /// leaves out, and why. `ctx rules lint` checks the rule files as the agents read them.
    Rules(RulesArgs),
    /// Store image bytes under the cache directory and print the Markdown link.
    PasteImage(PasteImageArgs),
    /// Serve the Language Server Protocol on standard input and output (for editors; cargo
    /// feature `lsp`).
    Lsp(LspArgs),
    /// Serve the Model Context Protocol on standard input and output (for agents; cargo
    /// feature `mcp`).
    Mcp,
    /// Build or update the suggestion index of the root and print what it holds.
    Index(IndexArgs),
    /// The files and line ranges most relevant to a prompt, ranked, with one-line summaries.
    Suggest(SuggestArgs),
    /// The definitions of files and folders with their lines, nested by scope, ranked for a
    /// prompt and fitted to `--max-tokens`.
    Outline(OutlineArgs),
}

/// Output formats; each command accepts the ones that make sense for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// Plain text with results in place (assemble, expand).
    Inline,
    /// `<file>` elements (assemble, expand).
    Xml,
    /// `#### Source:` entries with fenced blocks (assemble, expand).
    Markdown,
    /// One JSON document (every command but completions, init, paste-image, lsp and mcp).
    Json,
    /// Human-readable text (check, refs, parse, complete).
    Text,
}

impl OutputFormat {
    /// The name as written on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            OutputFormat::Inline => "inline",
            OutputFormat::Xml => "xml",
            OutputFormat::Markdown => "markdown",
            OutputFormat::Json => "json",
            OutputFormat::Text => "text",
        }
    }
}

/// Output modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ModeArg {
    /// Every item replaced in place; documents recurse.
    Inline,
    /// The text kept as written, the results after it; nothing recurses.
    Append,
}

/// What a failed item leaves in inline output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OnErrorArg {
    /// A `<!-- ctx: CODE: message -->` marker.
    Marker,
    /// The item's text as written.
    Keep,
    /// Nothing.
    Drop,
}

/// Which include syntaxes are read besides ctx's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DialectArg {
    /// ctx's syntax only.
    Ctx,
    /// mdBook's `{{#include}}` family too.
    Mdbook,
    /// mdBook's too for a document under a folder with a `book.toml`, at or below the
    /// workspace root.
    Auto,
}

/// The chat API a request body of `ctx messages` is shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProviderArg {
    /// OpenAI Chat Completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

impl From<ProviderArg> for ctx::conversation::Provider {
    fn from(provider: ProviderArg) -> ctx::conversation::Provider {
        match provider {
            ProviderArg::Openai => ctx::conversation::Provider::OpenAi,
            ProviderArg::Anthropic => ctx::conversation::Provider::Anthropic,
        }
    }
}

/// The tokenizer of `--tokenizer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TokenizerArg {
    /// OpenAI's o200k encoding, exact.
    O200k,
    /// A conservative estimate of Claude's count: twice o200k's.
    AnthropicEstimate,
}

impl From<TokenizerArg> for ctx::tokens::Tokenizer {
    fn from(arg: TokenizerArg) -> ctx::tokens::Tokenizer {
        match arg {
            TokenizerArg::O200k => ctx::tokens::Tokenizer::O200k,
            TokenizerArg::AnthropicEstimate => ctx::tokens::Tokenizer::AnthropicEstimate,
        }
    }
}

/// Where the suggestion index takes its files' symbols from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Symbols {
    /// A lexical scanner: every language, fast (the default).
    Scan,
    /// tree-sitter's tags queries: exact, about four times slower to build (cargo feature
    /// `tree-sitter`).
    TreeSitter,
}

impl From<Symbols> for ctx::SymbolSource {
    fn from(symbols: Symbols) -> ctx::SymbolSource {
        match symbols {
            Symbols::Scan => ctx::SymbolSource::Scan,
            Symbols::TreeSitter => ctx::SymbolSource::TreeSitter,
        }
    }
}

/// When to use colour and the rich rendering of diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ColorChoice {
    /// When standard error is a terminal and `NO_COLOR` is not set.
    Auto,
    /// Always, even when `NO_COLOR` is set.
    Always,
    /// Never: one plain line per diagnostic.
    Never,
}

/// The options every command takes, before or after the command name. In a command's help
/// they come under their own heading, after the command's own options.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalArgs {
    /// Workspace root [default: the current directory].
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) root: Option<PathBuf>,
    /// An extra read-only root (repeatable).
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) allow: Vec<PathBuf>,
    /// Configuration file [default: ctx.toml, else .ctx/config.toml, in the root].
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) config: Option<PathBuf>,
    /// Predefine a macro, `NAME=VALUE` or `NAME` (defined empty); repeatable.
    #[arg(short = 'D', long = "define", value_name = "NAME=VALUE", global = true)]
    pub(crate) defines: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, global = true)]
    pub(crate) format: Option<OutputFormat>,
    /// Output mode.
    #[arg(long, value_enum, global = true)]
    pub(crate) mode: Option<ModeArg>,
    /// Also read mdBook's `{{#include}}` family (auto: under a folder with `book.toml`, up to
    /// the root)
    /// [default: ctx].
    #[arg(long, value_enum, global = true)]
    pub(crate) dialect: Option<DialectArg>,
    /// What a failed item leaves in inline output [default: marker].
    #[arg(long, value_enum, value_name = "WHAT", global = true)]
    pub(crate) on_error: Option<OnErrorArg>,
    /// Solution (`.sln`, `.slnx`) or project of an out-of-source build whose sources paths
    /// also resolve to [default: the one `*.sln`/`*.slnx`/`compile_commands.json` of the root,
    /// else of `build/`].
    #[arg(long, value_name = "FILE", global = true, conflicts_with_all = ["compile_commands", "no_sources"])]
    pub(crate) sln: Option<PathBuf>,
    /// `compile_commands.json` of an out-of-source build whose sources paths also resolve to.
    #[arg(long, value_name = "FILE", global = true, conflicts_with = "no_sources")]
    pub(crate) compile_commands: Option<PathBuf>,
    /// Do not look for a solution or compilation database.
    #[arg(long, global = true)]
    pub(crate) no_sources: bool,
    /// Stop at the first error.
    #[arg(long, global = true)]
    pub(crate) strict: bool,
    /// Token budget of everything the model receives but the prompt's own text (default
    /// 200000; 0: no limit); given, it turns token counting on.
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_tokens: Option<usize>,
    /// The tokenizer counts and budgets are in: o200k (OpenAI's, exact; the default) or
    /// anthropic-estimate (twice o200k, for Claude; the default of `messages --provider
    /// anthropic`).
    #[arg(long, value_enum, value_name = "NAME", global = true)]
    pub(crate) tokenizer: Option<TokenizerArg>,
    /// Largest file read, in bytes (default 1 MiB; 0: no limit).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_file_bytes: Option<u64>,
    /// Lines of a file taken without an explicit range (default 2000; 0: no limit).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_lines: Option<usize>,
    /// Files a directory or glob expands to (default 200; 0: no limit).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_files: Option<usize>,
    /// Deepest include nesting (default 20; 0: no limit).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_depth: Option<usize>,
    /// Bytes of output of the whole run (default 16 MiB; 0: no limit).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_output_bytes: Option<u64>,
    /// Includes, mentions and tool calls of the whole run (default 10000; 0: no limit).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_includes: Option<usize>,
    /// Bytes the tools of a run may read and search (default 256 MiB; 0: no limit).
    #[arg(long, value_name = "N", global = true)]
    pub(crate) max_scan_bytes: Option<u64>,
    /// Count tokens per reference and in total (in the tokenizer of --tokenizer).
    #[arg(long, global = true)]
    pub(crate) tokens: bool,
    /// Prefix included lines with `N: `.
    #[arg(long, global = true)]
    pub(crate) line_numbers: bool,
    /// Recognise references inside code blocks and code spans too.
    #[arg(long, global = true)]
    pub(crate) no_code_skip: bool,
    /// Do not recognise `@path` mentions.
    #[arg(long, global = true)]
    pub(crate) no_mentions: bool,
    /// Do not recognise `@[...]` includes.
    #[arg(long, global = true)]
    pub(crate) no_includes: bool,
    /// Do not recognise `@{...}` directives.
    #[arg(long, global = true)]
    pub(crate) no_directives: bool,
    /// Quieter: no warnings, no progress.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// More logging (`-v` info, `-vv` debug, `-vvv` trace); `RUST_LOG` also works.
    #[arg(short, long, action = ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    /// When to use colour and rich diagnostics; honours `NO_COLOR`.
    #[arg(long, value_enum, value_name = "WHEN", global = true)]
    pub(crate) color: Option<ColorChoice>,
}

#[derive(Debug, Args)]
pub(crate) struct AssembleArgs {
    /// The document to assemble; `-` reads standard input.
    pub(crate) file: PathBuf,
    /// Run again whenever the document or anything it read changes.
    #[arg(long)]
    pub(crate) watch: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ExpandArgs {
    /// The prompt; without it, standard input is read (an empty input is an empty prompt).
    pub(crate) text: Option<String>,
    /// Append the top suggested files (`ctx suggest`) after the prompt's own mentions.
    #[arg(long)]
    pub(crate) auto: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The documents to check; `-` reads standard input.
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// Run again whenever a document or anything it read changes.
    #[arg(long)]
    pub(crate) watch: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RefsArgs {
    /// The document whose references are listed; `-` reads standard input.
    pub(crate) file: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct ParseArgs {
    /// The file to scan; `-` reads standard input.
    pub(crate) file: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct CompleteArgs {
    /// The partly typed mention, with or without its `@` (`src/ag`, `@"my f`).
    #[arg(allow_hyphen_values = true)]
    pub(crate) prefix: String,
    /// Most completions printed.
    #[arg(long, default_value_t = 20)]
    pub(crate) limit: usize,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct SourcesArgs {
    /// Print the "Source roots" section for a system prompt instead.
    #[arg(long)]
    pub(crate) prompt: bool,
}

#[derive(Debug, Args)]
pub(crate) struct OutlineArgs {
    /// The files or folders to outline.
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<String>,
    /// Rank the definitions for this prompt: those that share its words are kept first
    /// under `--max-tokens`.
    #[arg(long, value_name = "TEXT")]
    pub(crate) prompt: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ResolveArgs {
    /// The paths or file names to resolve.
    #[arg(required = true, value_name = "QUERY")]
    pub(crate) queries: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// Trust what the workspace asks for now, without asking (for scripts).
    #[arg(long, conflicts_with = "revoke")]
    pub(crate) yes: bool,
    /// Forget the trust given to this workspace.
    #[arg(long)]
    pub(crate) revoke: bool,
}

#[derive(Debug, Args)]
pub(crate) struct InitArgs {}

/// `--agent NAME [--for PATH] [--cwd DIR]` of `ctx system-prompt` and `ctx messages`.
#[derive(Debug, Args)]
pub(crate) struct AgentRulesArgs {
    /// Build the rules part from a coding agent's rules, as that agent sends them (claude,
    /// codex, gemini, cursor, copilot, windsurf, cline, skills, ctx), instead of the rules
    /// folder.
    #[arg(long, value_name = "NAME", conflicts_with = "rules")]
    pub(crate) agent: Option<String>,
    /// With `--agent`: the file being worked on (relative to the root).
    #[arg(long = "for", value_name = "PATH", requires = "agent")]
    pub(crate) for_path: Option<String>,
    /// With `--agent`: the agent's working folder, relative to the root [default: the root].
    #[arg(long, value_name = "DIR", requires = "agent")]
    pub(crate) cwd: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct SystemPromptArgs {
    /// An active rule, by file name with or without `.md` (repeatable) [default: every rule].
    #[arg(long = "rule", value_name = "NAME")]
    pub(crate) rules: Vec<String>,
    #[command(flatten)]
    pub(crate) agent: AgentRulesArgs,
}

#[derive(Debug, Args)]
pub(crate) struct MessagesArgs {
    /// The prompt; standard input without it.
    pub(crate) prompt: Option<String>,
    /// The chat API the body is shaped for.
    #[arg(long, value_enum, value_name = "NAME", default_value_t = ProviderArg::Openai)]
    pub(crate) provider: ProviderArg,
    /// An active rule (repeatable) [default: every rule].
    #[arg(long = "rule", value_name = "NAME")]
    pub(crate) rules: Vec<String>,
    /// A transcript of earlier turns (OpenAI-style messages, JSON or JSON Lines), or `~N` for
    /// the Nth newest entry of mai's history.
    #[arg(long, value_name = "FILE")]
    pub(crate) history: Option<String>,
    /// The newest N entries of mai's history (`.mai/history.json`).
    #[arg(long, value_name = "N", conflicts_with = "history_id")]
    pub(crate) include_history: Option<usize>,
    /// One entry of mai's history: its id, its name, or `~N` (1-based, newest first).
    #[arg(long, value_name = "X")]
    pub(crate) history_id: Option<String>,
    /// Token budget of the history block [default: 2000].
    #[arg(long, value_name = "N")]
    pub(crate) history_tokens: Option<usize>,
    /// Largest image attached, in bytes [default: 20 MiB].
    #[arg(long, value_name = "N")]
    pub(crate) max_image_bytes: Option<u64>,
    /// Attach the ranked files the prompt does not mention, as `ctx expand --auto` does:
    /// with --max-tokens, fitted to what the request leaves.
    #[arg(long)]
    pub(crate) auto: bool,
    #[command(flatten)]
    pub(crate) agent: AgentRulesArgs,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct RulesArgs {
    #[command(subcommand)]
    pub(crate) action: Option<RulesAction>,
    #[command(flatten)]
    pub(crate) view: RulesViewArgs,
    /// Print only what the model receives, as the agent sends it.
    #[arg(long)]
    pub(crate) text: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum RulesAction {
    /// Check the rule files as the agents read them: front matter, globs, imports, caps,
    /// skills, hidden text; exit 1 on errors.
    Lint(RulesViewArgs),
}

#[derive(Debug, Args)]
pub(crate) struct RulesViewArgs {
    /// The agent: claude, codex, gemini, cursor, copilot, windsurf, cline, skills, ctx, or
    /// `all` (each agent whose files the workspace holds).
    #[arg(long, value_name = "NAME", default_value = "all")]
    pub(crate) agent: String,
    /// The file being worked on (relative to the root): rules scoped to it, and rule files
    /// of the folders down to it that load when it is read.
    #[arg(long = "for", value_name = "PATH")]
    pub(crate) for_path: Option<String>,
    /// The agent's working folder, relative to the root [default: the root].
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct PasteImageArgs {
    /// The image file (through the sandbox: inside a root), or `-` for standard input; without
    /// it, the clipboard (with the `clipboard` feature), else standard input.
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<String>,
}

/// The largest message `ctx lsp` takes by default.
#[cfg(feature = "lsp")]
const LSP_MAX_MESSAGE_BYTES: u64 = ctx_lsp::DEFAULT_MAX_MESSAGE_BYTES;
/// Without the language server, the option is only parsed.
#[cfg(not(feature = "lsp"))]
const LSP_MAX_MESSAGE_BYTES: u64 = 0;

#[derive(Debug, Args)]
pub(crate) struct LspArgs {
    /// The largest message the client may send, in bytes (0 for no limit); a longer
    /// `Content-Length` is answered with an error and ends the server.
    #[arg(long, value_name = "BYTES", default_value_t = LSP_MAX_MESSAGE_BYTES)]
    pub(crate) max_message_bytes: u64,
}

#[derive(Debug, Args)]
pub(crate) struct IndexArgs {
    /// Where the files' symbols come from: a lexical scanner (`scan`, the default) or
    /// tree-sitter's tags queries (`tree-sitter`: exact, about four times slower; cargo
    /// feature `tree-sitter`); an index built from the other source is rebuilt.
    /// Configuration: `suggest_symbols`.
    #[arg(long, value_enum, value_name = "SOURCE")]
    pub(crate) symbols: Option<Symbols>,
    /// Read and search data files (JSON, JSON Lines, CSV, TSV), lock files, minified and
    /// generated code too; left out by default. An index built with the other setting is
    /// rebuilt. Configuration: `suggest_data_files`.
    #[arg(long)]
    pub(crate) data_files: bool,
    /// Keep running: hold the index in memory, keep it current with a file watch and answer
    /// `ctx suggest`, `ctx expand --auto` and `ctx index` of this workspace on a socket in
    /// the cache folder (Unix only; docs/suggest.md, "The index service").
    #[arg(long)]
    pub(crate) watch: bool,
    /// With --watch: end after this many seconds without a question.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600, requires = "watch")]
    pub(crate) idle: u64,
}

#[derive(Debug, Args)]
pub(crate) struct SuggestArgs {
    /// The prompt; without it, standard input is read.
    pub(crate) prompt: Option<String>,
    /// Most files suggested (0: no limit).
    #[arg(long, default_value_t = 10)]
    pub(crate) limit: usize,
    /// Longest line range proposed for one file.
    #[arg(long, value_name = "N", default_value_t = 80)]
    pub(crate) range_lines: u32,
    /// Say which terms, identifiers, paths and links made each score.
    #[arg(long)]
    pub(crate) explain: bool,
    /// Confirm, drop or edit the suggestions in a terminal picker, then print the prompt
    /// expanded with them (as `ctx expand`; cargo feature `picker`).
    #[arg(long, visible_alias = "pick")]
    pub(crate) interactive: bool,
    /// Where the index takes the files' symbols from (`scan` or `tree-sitter`), as in
    /// `ctx index`.
    #[arg(long, value_enum, value_name = "SOURCE")]
    pub(crate) symbols: Option<Symbols>,
    /// Take data files, lock files, minified and generated code into the index too, as in
    /// `ctx index`.
    #[arg(long)]
    pub(crate) data_files: bool,
}
