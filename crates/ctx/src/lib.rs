//! ctx assembles the context an LLM sees: it expands file references in prompts
//! (`explain @src/agent.rs#L100-150`) and in rule documents (`@[common/style.md]`,
//! `@{ifdef DEBUG}`) into the referenced content, reading every byte through a capability
//! sandbox.
//!
//! This crate is the facade: it re-exports the layers and offers [`Context`], the API an
//! embedder wants.
//!
//! - [`diagnostics`]: the one set of stable codes and severities;
//! - [`syntax`]: the grammar (no I/O);
//! - [`fs`]: the sandbox every read goes through, and what file content is (text, binary, an
//!   image kind) and how it may be shown;
//! - [`tokens`]: exact o200k token counting, the unit of every token budget;
//! - [`preprocess`]: directives and macros (no I/O);
//! - [`assemble`]: the recursive walk, front matter, tools and rendering;
//! - [`sources`]: the real sources of an out-of-source build (solutions, compile databases);
//! - [`suggest`]: the files and line ranges that matter for a prompt;
//! - [`conversation`]: rules folders, history, images and chat request bodies;
//! - [`trust`]: the user's trust in the folders outside a workspace that its files ask for.
//!
//! [`Context`] puts them together: assembly and prompt expansion, completion, suggestions,
//! source resolution, system prompts and conversations, each synchronous and async.
//!
//! # Example
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # std::fs::write(dir.path().join("style.md"), "Use four spaces.\n")?;
//! let ctx = ctx::Context::builder().root(dir.path()).define("LANG", "rust").build()?;
//! let assembly = ctx.assemble_str("Style: @[style.md]Language: @{LANG}\n");
//! assert_eq!(assembly.content, "Style: Use four spaces.\nLanguage: rust\n");
//! assert!(!assembly.has_errors());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use ctx_agents as agents;
pub use ctx_assemble as assemble;
pub use ctx_conversation as conversation;
pub use ctx_diagnostics as diagnostics;
pub use ctx_fs as fs;
pub use ctx_preprocess as preprocess;
pub use ctx_sources as sources;
pub use ctx_suggest as suggest;
pub use ctx_syntax as syntax;
pub use ctx_tokens as tokens;
pub use ctx_trust as trust;

mod agents_view;
#[cfg(feature = "async")]
mod asynchronous;
mod complete;
mod config_file;
mod context;
mod conversations;
mod counts;
mod deferred;
mod depends;
mod error;
mod fit;
mod outline;
mod outline_tool;
mod reduce;
mod resolve;
mod roots;
mod source_index;
mod suggest_state;
mod suggestions;

pub use agents_view::{AgentPrompt, home_of};
pub use complete::Completion;
pub use config_file::{
    ConfigText, MAX_CONFIG_BYTES, lies_in, read_user_config, read_workspace_config,
};
pub use context::{Context, ContextBuilder, Error, ErrorKind};
pub use conversations::{AssembledRule, BuiltConversation, ConversationBuilder, SystemPrompt};
pub use ctx_assemble::tools::{Tool, ToolContext, ToolError, Tools};
pub use ctx_assemble::{
    Assembly, Attachment, AttachmentReason, Attachments, DEFAULT_MAX_TOKENS, Format, Limits, Mode,
    OnError, Options, Resolution, Resolver,
};
pub use ctx_diagnostics::{Code, Severity};
pub use ctx_suggest::{Index, IndexSettings, Suggestion, SymbolSource, UpdateStats};
pub use deferred::Deferred;
pub use depends::Dependencies;
pub use fit::{FIT_CANDIDATES, FitPlan};
pub use outline_tool::{Outline, OutlineOptions, TOOL_MAX_TOKENS};
pub use resolve::{ResolveReport, ResolveStatus};
pub use roots::{Notice, Trust};
pub use suggestions::SuggestOptions;
#[cfg(unix)]
pub use suggestions::socket_dir;

#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
