//! The tools' descriptions and input schemas, written by hand as JSON Schema objects (the
//! arguments are read from the JSON, so there are no argument types to derive them from).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

/// Every tool, in the order `tools/list` gives them.
pub(crate) fn list() -> Vec<Tool> {
    let defines = json!({
        "type": "object",
        "description": "macros to define, name to value (as -D NAME=VALUE)",
        "additionalProperties": { "type": "string" },
    });
    let format = json!({
        "type": "string",
        "enum": ["inline", "xml", "markdown", "json"],
        "description": "output format",
    });
    let document =
        json!({ "type": "string", "description": "the document, relative to the workspace root" });
    let prompt = json!({ "type": "string", "description": "the prompt text" });
    let max_tokens = json!({
        "type": "integer",
        "minimum": 0,
        "description": "a token budget for what the call adds, in the server's tokenizer (o200k unless started with --tokenizer): files that do not fit are cut or left out, each said in the text; never more than the budget the server was started with (0: the server's)",
    });
    vec![
        tool(
            "assemble",
            "Assemble a rule document",
            "Assemble a document: every @[include], @mention and @{directive} replaced by what it names. Returns the text and the diagnostics (with ctx codes).",
            json!({
                "type": "object",
                "properties": { "path": document, "defines": defines, "format": format, "max_tokens": max_tokens },
                "required": ["path"],
            }),
        ),
        tool(
            "expand",
            "Expand a prompt",
            "Expand a prompt's @mentions: the prompt as written, then the content of each file it names (format xml by default).",
            json!({
                "type": "object",
                "properties": { "prompt": prompt, "defines": defines, "format": format, "max_tokens": max_tokens },
                "required": ["prompt"],
            }),
        ),
        tool(
            "check",
            "Check rule documents",
            "Lint documents without returning their content: the diagnostics (code, message, file, line, column) and counts, and the documents that could not be checked at all.",
            json!({
                "type": "object",
                "properties": {
                    "paths": { "type": "array", "items": { "type": "string" }, "description": "the documents, relative to the workspace root" },
                    "defines": defines,
                },
                "required": ["paths"],
            }),
        ),
        tool(
            "resolve",
            "Resolve paths",
            "How each path or file name resolves: through the workspace, the source index of an out-of-source build, a source root, or a unique file name; ambiguous names list their candidates.",
            json!({
                "type": "object",
                "properties": {
                    "queries": { "type": "array", "items": { "type": "string" }, "description": "paths or file names" },
                },
                "required": ["queries"],
            }),
        ),
        tool(
            "sources",
            "Source index of the build folder",
            "The out-of-source build's index: projects, file counts, missing and case-corrected entries, source roots, and the system-prompt section that explains them.",
            json!({ "type": "object", "properties": {} }),
        ),
        tool(
            "suggest",
            "Suggest files for a prompt",
            "The files and line ranges most relevant to a prompt, ranked locally, each with a one-line summary.",
            json!({
                "type": "object",
                "properties": {
                    "prompt": prompt,
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100, "description": "how many files (default 10)" },
                },
                "required": ["prompt"],
            }),
        ),
        tool(
            "rules",
            "A coding agent's rules",
            "What a coding agent (claude, codex, gemini, cursor, copilot, windsurf, cline, skills, ctx, or all) loads from the workspace's rule files for a working folder and a file: each piece in order with its file, line, why it applies, placement, bytes, tokens and cut; what it leaves out and why; the problems (E_RULES/W_RULES codes); the parts of the request as the agent sends them. The user's own agent folders are not read.",
            json!({
                "type": "object",
                "properties": {
                    "agent": { "type": "string", "description": "the agent's name, or `all` (default): one view per agent whose files the workspace holds" },
                    "for": { "type": "string", "description": "the file being worked on, relative to the workspace root" },
                    "cwd": { "type": "string", "description": "the agent's working folder, relative to the workspace root (default the root)" },
                },
            }),
        ),
        tool(
            "refs",
            "Reference tree of a document",
            "What a document includes, recursively: each reference with its kind, path, line range, size, depth and error.",
            json!({
                "type": "object",
                "properties": { "path": document, "defines": defines },
                "required": ["path"],
            }),
        ),
    ]
}

fn tool(name: &'static str, title: &str, description: &'static str, schema: Value) -> Tool {
    let schema: JsonObject = match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    };
    Tool::new(name, description, Arc::new(schema)).with_title(title)
}
