//! [`Context::outline`]: the outline view of files and folders for the context's sandbox.

use ctx_assemble::tools::{ToolBudget, ToolContext};

use crate::context::Context;
use crate::outline_tool::{Outline, OutlineOptions, outline_of};

impl Context {
    /// The outline of `paths` (files or folders, resolved as the assembler resolves a
    /// mention): every definition the scanner finds, or every Markdown heading, with its
    /// lines, nested by scope; ranked for `options.prompt` and fitted to `options.max_tokens`.
    /// Bounded as the `tree` tool is: the sandbox's walk limits, the scan budget of a run.
    pub fn outline(&self, paths: &[&str], options: &OutlineOptions) -> Outline {
        let budget = ToolBudget::default();
        let base = self.sandbox().workspace();
        let cx = ToolContext { sandbox: self.sandbox(), base: &base, budget: &budget };
        // The budget is in the tokens of the context's tokenizer.
        let tokenizer = self.assembler().options().tokenizer;
        let budget = options.max_tokens.map(|n| (n, tokenizer));
        outline_of(&cx, paths, options.prompt.as_deref(), budget)
    }
}
