//! [`Server`]: rmcp's [`ServerHandler`] over a [`Context`]: the handshake's answer, the
//! tools and the rule files as resources.

use std::borrow::Cow;
use std::io;

use ctx::fs::{FileKind, Location};
use ctx::{Assembly, Context, Deferred, Format};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourcesCapability,
    ServerCapabilities, ServerConfig, ToolsCapability,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::{PROTOCOL_VERSION, RULE_DIRS, tools};

/// What the server tells a client about itself in the handshake.
const INSTRUCTIONS: &str = "ctx assembles the context an LLM sees: `assemble` expands a rule document's includes, `expand` a prompt's @mentions; paths are relative to the workspace root.";

/// Resources are named `ctx:///` and their path in the workspace root, which reveals nothing
/// about where the root is.
const URI_SCHEME: &str = "ctx:///";

/// The MCP server: a context, shared by every call so its file cache and suggestion index
/// stay warm. Serve it with [`crate::serve`], or with rmcp's `ServiceExt::serve` on any
/// transport.
#[derive(Debug, Clone)]
pub struct Server {
    ctx: Deferred,
}

impl Server {
    /// A server over `ctx`.
    pub fn new(ctx: Context) -> Server {
        Server { ctx: Deferred::from(ctx) }
    }

    /// A server over a context whose source index may still be read in the background: each
    /// call uses the context as it is when the call starts.
    pub fn deferred(ctx: Deferred) -> Server {
        Server { ctx }
    }

    /// The context for one call, with the source index once it is read: every call runs on
    /// the blocking pool, so waiting for it there keeps the protocol (the handshake, the
    /// lists) answering at once while calls that resolve paths see the whole index.
    fn ctx(&self) -> Context {
        self.ctx.settled()
    }

    /// Runs `f` on the blocking pool: every ctx call reads files.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Server) -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        let server = self.clone();
        tokio::task::spawn_blocking(move || f(&server))
            .await
            .map_err(|err| ErrorData::internal_error(format!("the call failed: {err}"), None))
    }

    /// Calls the tool `name` on this thread, as `tools/call` does but without the protocol
    /// (for a caller without a runtime, or a benchmark of the tools alone).
    ///
    /// # Errors
    ///
    /// An `InvalidParams` error for an unknown tool; a tool that fails is an `Ok` result
    /// with `is_error` set, as the protocol has it.
    pub fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<CallToolResult, ErrorData> {
        let result = match name {
            "assemble" => self.assemble(arguments),
            "expand" => self.expand(arguments),
            "check" => self.check(arguments),
            "refs" => self.refs(arguments),
            "resolve" => self.resolve(arguments),
            "sources" => self.sources(),
            "suggest" => self.suggest(arguments),
            "rules" => crate::agents::rules_tool(&self.ctx(), arguments)
                .map(structured)
                .map_err(|message| ToolError::usage(&message)),
            _ => return Err(ErrorData::invalid_params(format!("unknown tool: {name}"), None)),
        };
        Ok(result.unwrap_or_else(|err| tool_error(&err)))
    }

    /// An assembler with the call's macros and format.
    fn assembler(
        &self,
        args: &Map<String, Value>,
        default: Option<Format>,
    ) -> Result<ctx::assemble::Assembler, ToolError> {
        let mut assembler = self.ctx().assembler().clone();
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
        // The markers and warnings name the call's `max_tokens`, which the agent can raise,
        // unless the budget that holds is the one the server was started with.
        if options.default_budget {
            options.budget_setting = ctx::assemble::BudgetSetting::CALL;
        }
        if let Some(max) = args.get("max_tokens") {
            let Some(max) = max.as_u64().and_then(|n| usize::try_from(n).ok()) else {
                return Err(ToolError::usage("`max_tokens` must be a whole number"));
            };
            // Within the budget the server was started with (`ctx mcp --max-tokens`): a call
            // may ask for less, never for more; under the default guard, for any; 0 keeps the
            // server's.
            let server = options.limits.max_tokens;
            if max > 0 {
                let chosen = server == 0 || options.default_budget;
                options.limits.max_tokens = if chosen { max } else { max.min(server) };
                options.default_budget = false;
                if chosen || max <= server {
                    options.budget_setting = ctx::assemble::BudgetSetting::CALL;
                }
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

    fn assemble(&self, args: &Map<String, Value>) -> Result<CallToolResult, ToolError> {
        let path = string_arg(args, "path")?;
        let assembler = self.assembler(args, None)?;
        let assembly = assembler.assemble_file(path).map_err(ToolError::assemble)?;
        self.keep_counts();
        Ok(assembly_result(&assembly))
    }

    /// Stores the token counts a call took that the cache folder did not hold yet, so that a
    /// later call, run or server counts them no more; a folder that cannot be written costs
    /// them their counting, never this call its answer.
    fn keep_counts(&self) {
        let _ = self.ctx().keep_counts();
    }

    /// The `prompt` argument, within the size cap of the server's files: a prompt is the
    /// top-level input, capped as `ctx expand` caps one (docs/security.md, "Limits").
    fn prompt<'a>(&self, args: &'a Map<String, Value>) -> Result<&'a str, ToolError> {
        let prompt = string_arg(args, "prompt")?;
        let cap = self.ctx().sandbox().limits().max_file_bytes;
        if cap > 0 && prompt.len() as u64 > cap {
            return Err(ToolError {
                code: Some(ctx::fs::Code::TooLarge.as_str().to_owned()),
                message: format!(
                    "the prompt is larger than the size cap of {cap} bytes (the server's \
                     --max-file-bytes)"
                ),
            });
        }
        Ok(prompt)
    }

    fn expand(&self, args: &Map<String, Value>) -> Result<CallToolResult, ToolError> {
        let prompt = self.prompt(args)?;
        let mut assembler = self.assembler(args, Some(Format::Xml))?;
        assembler.options_mut().mode = ctx::Mode::Append;
        let assembly = assembler.assemble_str(prompt, "-");
        self.keep_counts();
        Ok(assembly_result(&assembly))
    }

    /// Each document is checked on its own: one that cannot be read at all is listed under
    /// `failed` and the others are still checked. Only when none could be checked is the
    /// call a tool error.
    fn check(&self, args: &Map<String, Value>) -> Result<CallToolResult, ToolError> {
        let paths = string_list(args, "paths", "path", "a list of documents")?;
        let assembler = self.assembler(args, None)?;
        let mut diagnostics = Vec::new();
        let mut failed = Vec::new();
        for path in &paths {
            match assembler.assemble_file_to(path, &mut io::sink()) {
                Ok(assembly) => diagnostics.extend(assembly.diagnostics),
                Err(err) => failed.push((*path, ToolError::assemble(err))),
            }
        }
        let failures: Vec<Value> = failed
            .iter()
            .map(|(path, err)| json!({ "file": path, "code": err.code, "message": err.message }))
            .collect();
        if let Some((_, first)) = failed.first().filter(|_| failed.len() == paths.len()) {
            let mut result = tool_error(first);
            let rest = failed.iter().skip(1).map(|(_, err)| error_text(err));
            let text: Vec<String> = std::iter::once(error_text(first)).chain(rest).collect();
            result.content = vec![ContentBlock::text(text.join("\n"))];
            result.structured_content = Some(json!({
                "code": first.code,
                "message": first.message,
                "failed": failures,
            }));
            return Ok(result);
        }
        let errors = diagnostics.iter().filter(|d| d.severity == ctx::syntax::Severity::Error);
        let errors = errors.count();
        Ok(structured(json!({
            "diagnostics": diagnostics,
            "errors": errors,
            "warnings": diagnostics.len() - errors,
            "files": paths.len(),
            "failed": failures,
        })))
    }

    fn refs(&self, args: &Map<String, Value>) -> Result<CallToolResult, ToolError> {
        let path = string_arg(args, "path")?;
        let assembler = self.assembler(args, None)?;
        let assembly =
            assembler.assemble_file_to(path, &mut io::sink()).map_err(ToolError::assemble)?;
        Ok(structured(json!({
            "file": path,
            "references": assembly.references,
            "diagnostics": assembly.diagnostics,
        })))
    }

    fn resolve(&self, args: &Map<String, Value>) -> Result<CallToolResult, ToolError> {
        let queries = string_list(args, "queries", "query", "a list of paths")?;
        let reports: Vec<_> = queries.iter().map(|q| self.ctx().resolve(q)).collect();
        Ok(structured(json!({ "results": reports })))
    }

    fn sources(&self) -> Result<CallToolResult, ToolError> {
        let value = match self.ctx().source_index() {
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

    fn suggest(&self, args: &Map<String, Value>) -> Result<CallToolResult, ToolError> {
        let prompt = self.prompt(args)?;
        // As the tool's schema says: a whole number from 1 to 100.
        let limit = match args.get("limit") {
            None => 10,
            Some(n) => match n.as_u64().filter(|n| (1..=100).contains(n)) {
                Some(n) => n as usize,
                None => {
                    return Err(ToolError::usage("`limit` must be a whole number from 1 to 100"));
                }
            },
        };
        let options = ctx::SuggestOptions::default().limit(limit);
        let found = self.ctx().suggest(prompt, &options).map_err(|err| ToolError {
            code: err.code().map(|c| c.as_str().to_owned()),
            message: visible(&err.to_string()),
        })?;
        Ok(structured(json!({ "suggestions": found })))
    }

    /// The rule files, as resources: ctx's rules folders, then each agent's rule files
    /// (described by the agents that read them).
    fn resources(&self) -> Vec<Resource> {
        let own = self.rule_files();
        let mut out: Vec<Resource> = own
            .iter()
            .map(|(location, len)| {
                let path = location.path().as_str();
                Resource::new(resource_uri(location), path)
                    .with_mime_type(mime_type(path))
                    .with_size(*len)
            })
            .collect();
        for file in crate::agents::rule_files(&self.ctx()) {
            if own.iter().any(|(location, _)| *location == file.location) {
                continue;
            }
            let path = file.location.path().as_str();
            let agents: Vec<&str> = file.agents.iter().map(|a| a.name()).collect();
            let resource = Resource::new(resource_uri(&file.location), visible(path))
                .with_mime_type(mime_type(path))
                .with_size(file.len)
                .with_description(format!("rule file of {}", agents.join(", ")));
            out.push(resource);
        }
        out
    }

    /// The files of the rule folders and their lengths: what a walk of each lists (ignored and
    /// denied entries left out, links out of the roots refused), and of that only the files
    /// that really lie in the folder, so that a link in it to another file of the workspace is
    /// not served as a rule.
    fn rule_files(&self) -> Vec<(Location, u64)> {
        let ctx = self.ctx();
        let sandbox = ctx.sandbox();
        let mut out = Vec::new();
        for dir in RULE_DIRS {
            let Ok(location) = sandbox.resolve_in_workspace(dir) else { continue };
            let Ok(walk) = sandbox.walk(&location) else { continue };
            let files = walk.entries.into_iter().filter(|e| {
                e.kind == FileKind::File
                    && e.location.root() == location.root()
                    && in_dir(e.location.path().as_str(), location.path().as_str())
            });
            out.extend(files.map(|e| (e.location, e.len)));
        }
        out
    }

    /// A rule file's text, if `uri` names one that [`Server::resources`] lists (the list is
    /// made again for each read, so a file is served only while an agent reads it). The path is
    /// split on `/` and `\` alike; a `..`, `.` or empty component, or a path that is not one
    /// of the listed files however it is spelled (absolute, percent-encoded), is the same
    /// "not found" as a file that is not there, so that nothing is learnt of what exists
    /// outside the rule folders. The text is made visible as assembled content is
    /// (`ctx_assemble::sanitize`): a rule file is a repository file.
    fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let not_found = || {
            let shown = ctx::assemble::sanitize::sanitize(uri).text;
            ErrorData::resource_not_found(format!("resource not found: {shown}"), None)
        };
        let path = uri.strip_prefix(URI_SCHEME).and_then(listed_form).ok_or_else(not_found)?;
        let listed = |location: &Location| location.path().as_str() == path;
        let location = match self.rule_files().into_iter().find(|(l, _)| listed(l)) {
            Some((location, _)) => location,
            None => crate::agents::rule_files(&self.ctx())
                .into_iter()
                .map(|f| f.location)
                .find(listed)
                .ok_or_else(not_found)?,
        };
        let content = self.ctx().sandbox().read_text(&location).map_err(|_| not_found())?;
        let text = content.text().ok_or_else(|| {
            ErrorData::resource_not_found(format!("W_BINARY: binary file: {path}"), None)
        })?;
        let shown = ctx::assemble::sanitize::sanitize(text).text;
        let contents = ResourceContents::text(shown, uri).with_mime_type(mime_type(&path));
        Ok(ReadResourceResult::new(vec![contents]))
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(false);
        let mut resources = ResourcesCapability::default();
        resources.list_changed = Some(false);
        let capabilities = ServerCapabilities::builder()
            .enable_resources_with(resources)
            .enable_tools_with(tools)
            .build();
        ServerConfig::new(capabilities)
            .with_protocol_version(PROTOCOL_VERSION)
            .with_server_info(Implementation::new("ctx", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// The revisions with an `initialize` handshake, up to [`PROTOCOL_VERSION`].
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&PROTOCOL_VERSION))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.into_owned();
        let args = request.arguments.unwrap_or_default();
        Ok(self.blocking(move |server| server.call(&name, &args)).await??.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.blocking(Server::resources).await?))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        Ok(self.blocking(move |server| server.read(&uri)).await??.into())
    }

    /// A method rmcp could not read: one of the protocol's whose parameters do not hold
    /// together (`tools/call` without a name) is `InvalidParams`, so that a client does not
    /// take the server for one without tools; any other is unknown, and the error names it.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if PROTOCOL_METHODS.contains(&request.method.as_str()) {
            let message = format!("invalid params for {}", request.method);
            return Err(ErrorData::new(ErrorCode::INVALID_PARAMS, message, None));
        }
        let message = format!("method not found: {}", request.method);
        Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None))
    }

    /// No prompts, but an empty list rather than an error for clients that ask anyway.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::default())
    }
}

/// The requests of the protocol's revisions a client may send a server: one that reaches
/// [`Server::on_custom_request`] had parameters rmcp could not read.
const PROTOCOL_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

fn resource_uri(location: &Location) -> String {
    format!("{URI_SCHEME}{}", location.path())
}

fn mime_type(path: &str) -> &'static str {
    if ctx::assemble::is_markdown(path) { "text/markdown" } else { "text/plain" }
}

/// Whether `path` is below `dir`, lexically; both are sandbox paths (`/`-separated, no `..`).
/// Nothing is below the root's empty path: a rules folder that is a link to the root lists
/// nothing.
fn in_dir(path: &str, dir: &str) -> bool {
    !dir.is_empty() && path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// A resource path as the list spells it: split on `/` and `\` alike, joined with `/`; `None`
/// when a component is empty (an absolute path, `a//b`), `.` or `..`.
fn listed_form(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split(['/', '\\']).collect();
    let bad = |c: &&str| c.is_empty() || *c == "." || *c == "..";
    if parts.iter().any(bad) {
        return None;
    }
    Some(parts.join("/"))
}

/// A tool call that failed as a whole: a ctx code (or none, for bad arguments) and a message.
struct ToolError {
    code: Option<String>,
    message: String,
}

impl ToolError {
    fn usage(message: &str) -> ToolError {
        ToolError { code: None, message: visible(message) }
    }

    fn assemble(err: ctx::assemble::AssembleError) -> ToolError {
        let err = ctx::Error::from(err);
        let message = visible(&err.to_string());
        ToolError { code: err.code().map(|c| c.as_str().to_owned()), message }
    }
}

/// A message that may quote a file or a path, made visible.
fn visible(message: &str) -> String {
    ctx::assemble::sanitize::sanitize(message).text.into_owned()
}

/// The message, starting with the code.
fn error_text(err: &ToolError) -> String {
    match &err.code {
        // The message of a ctx error starts with its code already.
        Some(code) if !err.message.starts_with(code.as_str()) => {
            format!("{code}: {}", err.message)
        }
        _ => err.message.clone(),
    }
}

/// `isError: true`, the message as text, and `{code, message}` as structured content when
/// there is a code.
fn tool_error(err: &ToolError) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(error_text(err))]);
    if let Some(code) = &err.code {
        result.structured_content = Some(json!({ "code": code, "message": err.message }));
    }
    result
}

fn string_arg<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::usage(&format!("missing string argument `{name}`")))
}

/// A list of strings under `name`, or one string under `name` or `single`.
fn string_list<'a>(
    args: &'a Map<String, Value>,
    name: &str,
    single: &str,
    what: &str,
) -> Result<Vec<&'a str>, ToolError> {
    match args.get(name).or_else(|| args.get(single)) {
        Some(Value::String(one)) => Ok(vec![one.as_str()]),
        Some(Value::Array(many)) => {
            many.iter().map(Value::as_str).collect::<Option<Vec<_>>>().ok_or_else(|| {
                ToolError::usage(&format!("`{name}` must be a list of strings ({what})"))
            })
        }
        _ => Err(ToolError::usage(&format!("missing argument `{name}` ({what})"))),
    }
}

/// The assembled text, then the diagnostics (if any) as a second text block; the whole
/// record as structured content.
fn assembly_result(assembly: &Assembly) -> CallToolResult {
    let mut content = vec![ContentBlock::text(assembly.content.clone())];
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
        let lines = lines.join("\n");
        content.push(ContentBlock::text(ctx::assemble::sanitize::sanitize(&lines).text));
    }
    let mut record = serde_json::to_value(assembly).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut record {
        map.remove("content");
    }
    // The records quote the documents (reference text, paths as written, front matter).
    ctx::assemble::sanitize::sanitize_json(&mut record);
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(record);
    result
}

/// A JSON result as pretty text (for clients without structured content) and as structured
/// content, every string made visible (paths and names from project files, summaries,
/// messages).
fn structured(mut value: Value) -> CallToolResult {
    ctx::assemble::sanitize::sanitize_json(&mut value);
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_paths_stay_in_rule_dirs() {
        assert!(in_dir(".ctx/rules/a.md", ".ctx/rules"));
        assert!(!in_dir(".ctx/rulesx/a.md", ".ctx/rules"));
        assert!(!in_dir(".ctx/rules", ".ctx/rules"));
        assert!(!in_dir("secret.md", ""));
        assert_eq!(listed_form(".ctx/rules/a.md").as_deref(), Some(".ctx/rules/a.md"));
        assert_eq!(listed_form(".ctx\\rules\\a.md").as_deref(), Some(".ctx/rules/a.md"));
        for bad in [
            ".ctx/rules/../../etc/passwd",
            ".ctx/rules\\..\\..\\secret",
            "/etc/passwd",
            "\\\\server\\share",
            ".ctx/rules//a.md",
            ".ctx/./rules/a.md",
            "",
        ] {
            assert_eq!(listed_form(bad), None, "{bad}");
        }
    }

    fn server(dir: &tempfile::TempDir) -> Server {
        Server::new(Context::builder().root(dir.path()).build().unwrap())
    }

    #[test]
    fn every_listed_tool_can_be_called() {
        let dir = tempfile::tempdir().unwrap();
        let server = server(&dir);
        for tool in tools::list() {
            assert!(server.call(&tool.name, &Map::new()).is_ok(), "{}", tool.name);
        }
        assert!(server.call("nope", &Map::new()).is_err());
    }

    #[test]
    fn supported_versions_all_have_a_handshake() {
        let dir = tempfile::tempdir().unwrap();
        let server = server(&dir);
        let versions = ServerHandler::supported_protocol_versions(&server);
        assert_eq!(versions.first(), Some(&ProtocolVersion::V_2024_11_05));
        assert_eq!(versions.last(), Some(&PROTOCOL_VERSION));
        assert!(versions.iter().all(ProtocolVersion::has_initialize));
    }
}
