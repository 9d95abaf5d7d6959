//! One reader per agent, each in its own file.

pub mod claude;
pub(crate) mod claude_load;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod ctx;
pub mod cursor;
pub mod gemini;
pub(crate) mod modes;
pub mod skills;
pub mod windsurf;
