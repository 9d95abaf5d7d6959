//! A Model Context Protocol server for ctx: JSON-RPC 2.0 over a byte stream (newline-delimited
//! messages, the MCP stdio transport), protocol revision [`PROTOCOL_VERSION`].
//!
//! Tools: `assemble` (a rule document, with macros and a format), `expand` (a prompt),
//! `check` (diagnostics of documents) and `refs` (the reference tree of a document).
//! Resources: the rule files of `.ctx/rules` and `.mutsumi/rules` in the workspace root.
//!
//! Properties:
//! - every path argument goes through the [`ctx::Context`]'s sandbox, so nothing outside the
//!   roots is read or named;
//! - a document that cannot be assembled at all is an MCP tool error (`isError: true`) whose
//!   text starts with the ctx code (`E_NOT_FOUND: …`); problems inside a document are
//!   diagnostics in the result, with their codes, as `ctx --format json` prints them;
//! - one bad message never ends the session: it gets a JSON-RPC error and the loop goes on.
//!
//! # Example
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # std::fs::write(dir.path().join("a.md"), "hello\n")?;
//! let ctx = ctx::Context::builder().root(dir.path()).build()?;
//! let input = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#, "\n",
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"assemble","arguments":{"path":"a.md"}}}"#, "\n",
//! );
//! let mut output = Vec::new();
//! ctx_mcp::run(&ctx, input.as_bytes(), &mut output)?;
//! assert!(String::from_utf8(output)?.contains("hello"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, BufRead, Write};

use ctx::fs::{FileKind, Location};
use ctx::{Assembly, Context, Format};
use serde_json::{Map, Value, json};

/// The protocol revision this server speaks.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// The revisions a client may ask for; the server answers with the one asked when it is one
/// of these, else with [`PROTOCOL_VERSION`].
pub const SUPPORTED_VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

/// The folders whose files are offered as resources.
pub const RULE_DIRS: &[&str] = &[".ctx/rules", ".mutsumi/rules"];

/// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
/// MCP's "resource not found".
const RESOURCE_NOT_FOUND: i64 = -32002;

/// Serves MCP requests read from `input`, one JSON message per line, writing responses to
/// `output`, until `input` ends.
///
/// # Errors
///
/// Only when reading or writing the streams fails.
pub fn run(ctx: &Context, input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let server = Server::new(ctx.clone());
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(response) = server.handle_line(&line) {
            serde_json::to_writer(&mut output, &response)?;
            output.write_all(b"\n")?;
            output.flush()?;
        }
    }
    Ok(())
}

/// The server's state: a context, shared by every call so its file cache stays warm.
#[derive(Debug, Clone)]
pub struct Server {
    ctx: Context,
}

/// A JSON-RPC error: code and message.
struct RpcError(i64, String);

impl Server {
    /// A server over `ctx`.
    pub fn new(ctx: Context) -> Server {
        Server { ctx }
    }

    /// Handles one line of input; `None` for notifications (and responses from the client),
    /// which get no answer. A batch (an array) gets an array of answers.
    pub fn handle_line(&self, line: &str) -> Option<Value> {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Array(batch)) => {
                let out: Vec<Value> = batch.iter().filter_map(|m| self.handle(m)).collect();
                (!out.is_empty()).then_some(Value::Array(out))
            }
            Ok(message) => self.handle(&message),
            Err(err) => Some(error_response(
                &Value::Null,
                RpcError(PARSE_ERROR, format!("parse error: {err}")),
            )),
        }
    }

    /// Handles one JSON-RPC message; `None` for notifications.
    pub fn handle(&self, message: &Value) -> Option<Value> {
        let Some(object) = message.as_object() else {
            return Some(error_response(
                &Value::Null,
                RpcError(INVALID_REQUEST, "a message must be an object".into()),
            ));
        };
        let id = object.get("id").cloned();
        let Some(method) = object.get("method").and_then(Value::as_str) else {
            // A response from the client (we send no requests), or garbage with an id.
            return id
                .map(|id| error_response(&id, RpcError(INVALID_REQUEST, "missing method".into())));
        };
        let id = id?;
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        Some(match self.call(method, &params) {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(err) => error_response(&id, err),
        })
    }

    fn call(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => Ok(initialize(params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": tool_list() })),
            "tools/call" => self.tools_call(params),
            "resources/list" => Ok(json!({ "resources": self.resources() })),
            "resources/read" => self.resource_read(params),
            "resources/templates/list" => Ok(json!({ "resourceTemplates": [] })),
            "prompts/list" => Ok(json!({ "prompts": [] })),
            _ => Err(RpcError(METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    fn tools_call(&self, params: &Value) -> Result<Value, RpcError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError(INVALID_PARAMS, "missing tool name".into()))?;
        let empty = Map::new();
        let args = params.get("arguments").and_then(Value::as_object).unwrap_or(&empty);
        let result = match name {
            "assemble" => self.assemble(args),
            "expand" => self.expand(args),
            "check" => self.check(args),
            "refs" => self.refs(args),
            "resolve" => self.resolve(args),
            "sources" => self.sources(),
            "suggest" => self.suggest(args),
            _ => return Err(RpcError(INVALID_PARAMS, format!("unknown tool: {name}"))),
        };
        Ok(result.unwrap_or_else(|err| tool_error(&err)))
    }

    /// An assembler with the call's macros and format.
    fn assembler(
        &self,
        args: &Map<String, Value>,
        default: Option<Format>,
    ) -> Result<ctx::assemble::Assembler, ToolError> {
        let mut assembler = self.ctx.assembler().clone();
        let options = assembler.options_mut();
        if let Some(defines) = args.get("defines") {
            let Some(defines) = defines.as_object() else {
                return Err(ToolError::usage("`defines` must be an object of strings"));
            };
            for (name, value) in defines {
                if !ctx::preprocess::is_macro_name(name) {
                    return Err(ToolError::usage(&format!("not a macro name: {name:?}")));
                }
                let value = match value {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                options.defines.retain(|(n, _)| n != name);
                options.defines.push((name.clone(), value));
            }
        }
        match args.get("format") {
            Some(Value::String(name)) => {
                options.format = name.parse::<Format>().map_err(|e| ToolError::usage(&e))?;
            }
            Some(_) => return Err(ToolError::usage("`format` must be a string")),
            None => {
                if let Some(format) = default {
                    options.format = format;
                }
            }
        }
        Ok(assembler)
    }

    fn assemble(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let path = string_arg(args, "path")?;
        let assembler = self.assembler(args, None)?;
        let assembly = assembler.assemble_file(path).map_err(ToolError::assemble)?;
        Ok(assembly_result(&assembly))
    }

    fn expand(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let prompt = string_arg(args, "prompt")?;
        let mut assembler = self.assembler(args, Some(Format::Xml))?;
        assembler.options_mut().mode = ctx::Mode::Append;
        Ok(assembly_result(&assembler.assemble_str(prompt, "-")))
    }

    fn check(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let paths: Vec<&str> = match args.get("paths").or_else(|| args.get("path")) {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => return Err(ToolError::usage("missing argument `paths` (a list of documents)")),
        };
        let assembler = self.assembler(args, None)?;
        let mut diagnostics = Vec::new();
        for path in &paths {
            let assembly =
                assembler.assemble_file_to(path, &mut io::sink()).map_err(ToolError::assemble)?;
            diagnostics.extend(assembly.diagnostics);
        }
        let errors = diagnostics.iter().filter(|d| d.severity == ctx::syntax::Severity::Error);
        let errors = errors.count();
        let value = json!({
            "diagnostics": diagnostics,
            "errors": errors,
            "warnings": diagnostics.len() - errors,
            "files": paths.len(),
        });
        Ok(structured(value))
    }

    fn refs(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let path = string_arg(args, "path")?;
        let assembler = self.assembler(args, None)?;
        let assembly =
            assembler.assemble_file_to(path, &mut io::sink()).map_err(ToolError::assemble)?;
        let value = json!({
            "file": path,
            "references": assembly.references,
            "diagnostics": assembly.diagnostics,
        });
        Ok(structured(value))
    }

    fn resolve(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let queries: Vec<&str> = match args.get("queries").or_else(|| args.get("query")) {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => return Err(ToolError::usage("missing argument `queries` (a list of paths)")),
        };
        let reports: Vec<_> = queries.iter().map(|q| self.ctx.resolve(q)).collect();
        Ok(structured(json!({ "results": reports })))
    }

    fn sources(&self) -> Result<Value, ToolError> {
        let value = match self.ctx.source_index() {
            Some(index) => json!({
                "summary": index.summary(),
                "prompt": index.prompt_section(),
            }),
            None => {
                json!({ "summary": null, "note": "no solution or compile_commands.json is loaded" })
            }
        };
        Ok(structured(value))
    }

    fn suggest(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let prompt = string_arg(args, "prompt")?;
        let limit = match args.get("limit") {
            Some(Value::Number(n)) => n.as_u64().map_or(10, |n| n.clamp(1, 100) as usize),
            Some(_) => return Err(ToolError::usage("`limit` must be a number")),
            None => 10,
        };
        let options = ctx::SuggestOptions::default().limit(limit);
        let found = self.ctx.suggest(prompt, &options).map_err(|err| ToolError {
            code: err.code().map(|c| c.as_str().to_owned()),
            message: err.to_string(),
        })?;
        Ok(structured(json!({ "suggestions": found })))
    }

    /// The rule files, as resources.
    fn resources(&self) -> Vec<Value> {
        let sandbox = self.ctx.sandbox();
        let mut out = Vec::new();
        for dir in RULE_DIRS {
            let Ok(location) = sandbox.resolve_in_workspace(dir) else { continue };
            let Ok(walk) = sandbox.walk(&location) else { continue };
            for entry in walk.entries.iter().filter(|e| e.kind == FileKind::File) {
                let path = entry.location.path().as_str();
                out.push(json!({
                    "uri": resource_uri(&entry.location),
                    "name": path,
                    "mimeType": if ctx::assemble::is_markdown(path) { "text/markdown" } else { "text/plain" },
                    "size": entry.len,
                }));
            }
        }
        out
    }

    fn resource_read(&self, params: &Value) -> Result<Value, RpcError> {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError(INVALID_PARAMS, "missing uri".into()))?;
        let path = uri
            .strip_prefix(URI_SCHEME)
            .filter(|p| RULE_DIRS.iter().any(|dir| in_dir(p, dir)))
            .ok_or_else(|| RpcError(RESOURCE_NOT_FOUND, format!("resource not found: {uri}")))?;
        let sandbox = self.ctx.sandbox();
        let not_found = |err: ctx::fs::Error| RpcError(RESOURCE_NOT_FOUND, err.to_string());
        let (_, content) = sandbox.read_path(path, None).map_err(not_found)?;
        let text = content.text().ok_or_else(|| {
            RpcError(RESOURCE_NOT_FOUND, format!("W_BINARY: binary file: {path}"))
        })?;
        let mime = if ctx::assemble::is_markdown(path) { "text/markdown" } else { "text/plain" };
        Ok(json!({ "contents": [{ "uri": uri, "mimeType": mime, "text": &**text }] }))
    }
}

/// Resources are named `ctx:///` and their path in the workspace root, which reveals nothing
/// about where the root is.
const URI_SCHEME: &str = "ctx:///";

fn resource_uri(location: &Location) -> String {
    format!("{URI_SCHEME}{}", location.path())
}

/// Whether `path` is below `dir`, lexically (the sandbox then checks it for real).
fn in_dir(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
        && !path.split('/').any(|c| c == ".." || c == ".")
}

/// A tool call that failed as a whole: a ctx code (or none, for bad arguments) and a message.
struct ToolError {
    code: Option<String>,
    message: String,
}

impl ToolError {
    fn usage(message: &str) -> ToolError {
        ToolError { code: None, message: message.to_owned() }
    }

    fn assemble(err: ctx::assemble::AssembleError) -> ToolError {
        let err = ctx::Error::from(err);
        ToolError { code: err.code().map(|c| c.as_str().to_owned()), message: err.to_string() }
    }
}

fn tool_error(err: &ToolError) -> Value {
    let text = match &err.code {
        // The message of a ctx error starts with its code already.
        Some(code) if !err.message.starts_with(code.as_str()) => {
            format!("{code}: {}", err.message)
        }
        _ => err.message.clone(),
    };
    let mut result = json!({ "content": [{ "type": "text", "text": text }], "isError": true });
    if let Some(code) = &err.code {
        result["structuredContent"] = json!({ "code": code, "message": err.message });
    }
    result
}

fn string_arg<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::usage(&format!("missing string argument `{name}`")))
}

/// The assembled text, then the diagnostics (if any) as a second text block; the whole
/// record as structured content.
fn assembly_result(assembly: &Assembly) -> Value {
    let mut content = vec![json!({ "type": "text", "text": assembly.content })];
    if !assembly.diagnostics.is_empty() {
        let lines: Vec<String> = assembly
            .diagnostics
            .iter()
            .map(|d| {
                format!(
                    "{}:{}:{}: {}[{}]: {}",
                    d.file,
                    d.line,
                    d.column,
                    d.severity.name(),
                    d.code.as_str(),
                    d.message
                )
            })
            .collect();
        content.push(json!({ "type": "text", "text": lines.join("\n") }));
    }
    let mut record = serde_json::to_value(assembly).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut record {
        map.remove("content");
    }
    json!({ "content": content, "structuredContent": record, "isError": false })
}

/// A JSON result as pretty text (for clients without structured content) and as structured
/// content.
fn structured(value: Value) -> Value {
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    json!({ "content": [{ "type": "text", "text": text }], "structuredContent": value, "isError": false })
}

fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked.filter(|v| SUPPORTED_VERSIONS.contains(v)).unwrap_or(PROTOCOL_VERSION);
    json!({
        "protocolVersion": version,
        "capabilities": { "tools": { "listChanged": false }, "resources": { "listChanged": false } },
        "serverInfo": { "name": "ctx", "version": env!("CARGO_PKG_VERSION") },
        "instructions": "ctx assembles the context an LLM sees: `assemble` expands a rule document's includes, `expand` a prompt's @mentions; paths are relative to the workspace root.",
    })
}

fn error_response(id: &Value, RpcError(code, message): RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

fn tool_list() -> Value {
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
    json!([
        {
            "name": "assemble",
            "title": "Assemble a rule document",
            "description": "Assemble a document: every @[include], @mention and @{directive} replaced by what it names. Returns the text and the diagnostics (with ctx codes).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "the document, relative to the workspace root" },
                    "defines": defines,
                    "format": format,
                },
                "required": ["path"],
            },
        },
        {
            "name": "expand",
            "title": "Expand a prompt",
            "description": "Expand a prompt's @mentions: the prompt as written, then the content of each file it names (format xml by default).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "prompt": { "type": "string", "description": "the prompt text" },
                    "defines": defines,
                    "format": format,
                },
                "required": ["prompt"],
            },
        },
        {
            "name": "check",
            "title": "Check rule documents",
            "description": "Lint documents without returning their content: the diagnostics (code, message, file, line, column) and counts.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "paths": { "type": "array", "items": { "type": "string" }, "description": "the documents, relative to the workspace root" },
                    "defines": defines,
                },
                "required": ["paths"],
            },
        },
        {
            "name": "resolve",
            "title": "Resolve paths",
            "description": "How each path or file name resolves: through the workspace, the source index of an out-of-source build, a source root, or a unique file name; ambiguous names list their candidates.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "queries": { "type": "array", "items": { "type": "string" }, "description": "paths or file names" },
                },
                "required": ["queries"],
            },
        },
        {
            "name": "sources",
            "title": "Source index of the build folder",
            "description": "The out-of-source build's index: projects, file counts, missing and case-corrected entries, source roots, and the system-prompt section that explains them.",
            "inputSchema": { "type": "object", "properties": {} },
        },
        {
            "name": "suggest",
            "title": "Suggest files for a prompt",
            "description": "The files and line ranges most relevant to a prompt, ranked locally, each with a one-line summary.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "prompt": { "type": "string", "description": "the prompt text" },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100, "description": "how many files (default 10)" },
                },
                "required": ["prompt"],
            },
        },
        {
            "name": "refs",
            "title": "Reference tree of a document",
            "description": "What a document includes, recursively: each reference with its kind, path, line range, size, depth and error.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "the document, relative to the workspace root" },
                    "defines": defines,
                },
                "required": ["path"],
            },
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_paths_stay_in_rule_dirs() {
        assert!(in_dir(".ctx/rules/a.md", ".ctx/rules"));
        assert!(!in_dir(".ctx/rulesx/a.md", ".ctx/rules"));
        assert!(!in_dir(".ctx/rules/../../etc/passwd", ".ctx/rules"));
        assert!(!in_dir(".ctx/rules", ".ctx/rules"));
    }

    #[test]
    fn version_negotiation() {
        let v = initialize(&json!({ "protocolVersion": "2024-11-05" }));
        assert_eq!(v["protocolVersion"], "2024-11-05");
        let v = initialize(&json!({ "protocolVersion": "1999-01-01" }));
        assert_eq!(v["protocolVersion"], PROTOCOL_VERSION);
    }
}
