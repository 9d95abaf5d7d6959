//! What an assembly is asked to do: mode, format, limits and switches.

use std::fmt;
use std::str::FromStr;

/// Where results go (assembly.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Every item is replaced in place by its result; documents recurse.
    Inline,
    /// The text is kept as written and the results follow it; nothing recurses.
    Append,
}

/// How the output is written (assembly.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Plain text: results in place (inline mode) or after the text (append mode).
    Inline,
    /// Results as `<file>` and `<directory>` elements.
    Xml,
    /// Results as `#### Source:` entries with fenced blocks.
    Markdown,
    /// One JSON object with content, references, diagnostics and stats.
    Json,
}

/// What a failed item leaves in inline output (assembly.md §7, `--on-error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OnError {
    /// A one-line marker, `<!-- ctx: CODE: message -->`.
    Marker,
    /// The item's source text, as written.
    Keep,
    /// Nothing.
    Drop,
}

macro_rules! names {
    ($ty:ident { $($variant:ident = $name:literal),* $(,)? }) => {
        impl $ty {
            /// The name as written on the command line and in configuration.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)*
                }
            }
        }

        impl FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<$ty, String> {
                match s {
                    $($name => Ok($ty::$variant),)*
                    _ => Err(format!(
                        "unknown {} `{s}` (expected one of: {})",
                        stringify!($ty).to_lowercase(),
                        [$($name),*].join(", ")
                    )),
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

names!(Mode { Inline = "inline", Append = "append" });
names!(Format { Inline = "inline", Xml = "xml", Markdown = "markdown", Json = "json" });
names!(OnError { Marker = "marker", Keep = "keep", Drop = "drop" });

/// Limits of one assembly; `0` means no limit for every field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Deepest include nesting (default 20): deeper is `E_DEPTH`.
    pub max_depth: usize,
    /// Bytes of output for the whole run (default 16 MiB): then `E_BUDGET` and nothing more
    /// is read.
    pub max_output_bytes: u64,
    /// Includes, mentions and tool calls resolved in the whole run (default 10 000): then
    /// `E_BUDGET`.
    pub max_includes: usize,
    /// Lines of a file taken without an explicit range (default 2 000), then a marker.
    pub max_lines: usize,
    /// Files a directory or glob expands to (default 200), then a marker.
    pub max_files: usize,
    /// Tokens of everything the model receives but the prompt's own text (default 0, no
    /// budget; the command line's default is [`DEFAULT_MAX_TOKENS`]): content beyond it is cut
    /// or left out, with a marker or note in the output and `W_BUDGET`.
    pub max_tokens: usize,
    /// Bytes the tools of the run may read and search (default 256 MiB): then the tool
    /// stops, with a marker and `W_LIMIT`.
    pub max_scan_bytes: u64,
}

/// The token budget of a run that sets none (the command line's, the servers' and the
/// facade's default; 0 means no budget): a guard against an expansion larger than any
/// context window.
pub const DEFAULT_MAX_TOKENS: usize = 200_000;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 20,
            max_output_bytes: 16 * 1024 * 1024,
            max_includes: 10_000,
            max_lines: 2000,
            max_files: 200,
            max_tokens: 0,
            max_scan_bytes: 256 << 20,
        }
    }
}

/// The setting that sets the token budget, as the output names it to whoever reads it: the
/// command line's flag, or the argument of a server's call, which an agent can give itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetSetting {
    /// Its name: `--max-tokens`, `max_tokens`.
    pub name: &'static str,
    /// Whether 0 through it lifts the budget (the flag's 0 does; a server call's 0 keeps the
    /// server's budget).
    pub zero_lifts: bool,
}

impl BudgetSetting {
    /// The command line's `--max-tokens`.
    pub const FLAG: BudgetSetting = BudgetSetting { name: "--max-tokens", zero_lifts: true };
    /// The `max_tokens` argument of a server's tool call (`ctx mcp`).
    pub const CALL: BudgetSetting = BudgetSetting { name: "max_tokens", zero_lifts: false };
}

/// Everything an assembly is asked to do besides the sandbox it reads through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Which parts of the syntax are recognised.
    pub syntax: ctx_syntax::Options,
    /// Inline (documents) or append (prompts).
    pub mode: Mode,
    /// The output format.
    pub format: Format,
    /// Extensions of files that are assembled recursively (default `md`, `markdown`, `mdc`,
    /// `txt`), compared without case.
    pub recursive_extensions: Vec<String>,
    /// Limits and budgets.
    pub limits: Limits,
    /// Count tokens per reference and in total (on by itself when `max_tokens` is set and is
    /// not the default guard).
    pub count_tokens: bool,
    /// Whether `max_tokens` is the default guard ([`DEFAULT_MAX_TOKENS`]) rather than a
    /// budget asked for: it cuts and notes the same, but does not turn counting on for the
    /// records.
    pub default_budget: bool,
    /// The budget the markers, notes and warnings name, when `max_tokens` is what is left of
    /// a larger one that the user set (`ctx messages` gives the prompt what the system prompt
    /// and the history leave): they then say the budget the user knows and can raise.
    pub named_budget: Option<usize>,
    /// The setting the markers, notes and warnings tell the reader to raise for a larger
    /// budget (default the command line's `--max-tokens`).
    pub budget_setting: BudgetSetting,
    /// The tokenizer counts and the token budget are in (default o200k).
    pub tokenizer: ctx_tokens::Tokenizer,
    /// Prefix included lines with `N: `.
    pub line_numbers: bool,
    /// What a failed item leaves in inline output (default: a marker).
    pub on_error: OnError,
    /// Stop at the first error.
    pub strict: bool,
    /// Read the files of directory and glob expansions ahead, on worker threads. The output
    /// is the same either way.
    pub prefetch: bool,
    /// Macros defined before the top-level document, as `NAME` or `NAME=VALUE`.
    pub defines: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            syntax: ctx_syntax::Options::default(),
            mode: Mode::Inline,
            format: Format::Inline,
            recursive_extensions: ["md", "markdown", "mdc", "txt"].map(String::from).to_vec(),
            limits: Limits::default(),
            count_tokens: false,
            default_budget: false,
            named_budget: None,
            budget_setting: BudgetSetting::FLAG,
            tokenizer: ctx_tokens::Tokenizer::O200k,
            line_numbers: false,
            on_error: OnError::Marker,
            strict: false,
            prefetch: true,
            defines: Vec::new(),
        }
    }
}

impl Options {
    /// The defaults for a prompt: append mode, XML format.
    pub fn for_prompt() -> Options {
        Options { mode: Mode::Append, format: Format::Xml, ..Options::default() }
    }

    /// Whether files with this path are assembled recursively.
    pub fn is_recursive(&self, path: &str) -> bool {
        let Some((_, ext)) = path.rsplit_once('.') else { return false };
        if ext.contains('/') {
            return false;
        }
        self.recursive_extensions.iter().any(|e| e.eq_ignore_ascii_case(ext))
    }

    /// Whether tokens are counted for the records.
    pub fn counts_tokens(&self) -> bool {
        self.count_tokens || (self.limits.max_tokens > 0 && !self.default_budget)
    }
}
