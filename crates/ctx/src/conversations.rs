//! Conversations in the facade: the system prompt of the rules folder, and a whole request
//! (system prompt, history, the user's turn with its images) built in one call.

use ctx_assemble::{Assembler, Assembly, Format, Mode};
use ctx_conversation::history::{self, Selection};
use ctx_conversation::image::{self, ImageRef};
use ctx_conversation::rules::{self, Rule};
use ctx_conversation::{Conversation, ImagePart, Warning};
use ctx_diagnostics::{Code, Severity};
use ctx_fs::RootKind;

use crate::context::{Context, Error, ErrorKind};

/// One rule of a system prompt, assembled.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AssembledRule {
    /// The file name (`default.md`).
    pub key: String,
    /// Its path relative to the workspace root.
    pub path: String,
    /// Its assembly: content, description, params, metadata, diagnostics.
    pub assembly: Assembly,
}

/// The system prompt of a rules folder.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct SystemPrompt {
    /// The rules folder used, if one was found.
    pub rules_dir: Option<String>,
    /// The active rules, assembled, in order.
    pub rules: Vec<AssembledRule>,
    /// The `### Runtime Context` section.
    pub runtime: String,
}

impl SystemPrompt {
    /// The whole text: each rule's content, then the runtime section.
    pub fn text(&self) -> String {
        let mut parts: Vec<&str> = self
            .rules
            .iter()
            .map(|r| r.assembly.content.trim_end())
            .filter(|c| !c.is_empty())
            .collect();
        parts.push(self.runtime.trim_end());
        let mut text = parts.join("\n\n");
        text.push('\n');
        text
    }

    /// Whether a rule has an error diagnostic.
    pub fn has_errors(&self) -> bool {
        self.rules
            .iter()
            .any(|r| r.assembly.diagnostics.iter().any(|d| d.code.severity() == Severity::Error))
    }
}

/// Where a conversation's pieces come from; built by [`Context::conversation`].
#[derive(Clone, Debug)]
#[must_use]
pub struct ConversationBuilder {
    ctx: Context,
    rules_dir: Option<String>,
    rules: Vec<String>,
    mai: Option<Selection>,
    history_tokens: usize,
    transcript: Option<String>,
    max_image_bytes: u64,
    max_tokens: Option<usize>,
    agent: Option<ctx_agents::Rules>,
    auto: Option<crate::SuggestOptions>,
}

/// A built conversation, with what went into it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BuiltConversation {
    /// The pieces, ready for [`Conversation::body`].
    pub conversation: Conversation,
    /// The system prompt and its rules.
    pub system: SystemPrompt,
    /// The expansion of the user's prompt.
    pub prompt: Assembly,
    /// What was skipped or cut on the way: transcript lines, images, history.
    pub warnings: Vec<Warning>,
    /// The coding agent's rules the conversation was built from, in place of the rules
    /// folder ([`ConversationBuilder::agent_rules`]).
    pub agent: Option<ctx_agents::Rules>,
}

impl Context {
    /// The system prompt of the rules folder (`rules_dir`, else the first of `.ctx/rules` and
    /// `.mutsumi/rules` that exists): each active rule (`names`, else every `.md` file by
    /// name) assembled inline with its own front matter, then a `### Runtime Context` section
    /// naming the roots.
    ///
    /// # Errors
    ///
    /// When a named rule does not exist or the folder cannot be listed.
    pub fn system_prompt(
        &self,
        rules_dir: Option<&str>,
        names: &[String],
    ) -> Result<SystemPrompt, Error> {
        let sandbox = self.sandbox();
        let dir = rules::rules_dir(sandbox, rules_dir);
        let active: Vec<Rule> = match &dir {
            Some(dir) => {
                rules::active_rules(sandbox, dir, names).map_err(ErrorKind::Conversation)?
            }
            None if names.is_empty() => Vec::new(),
            None => {
                let why = "no rules folder (.ctx/rules or .mutsumi/rules); `ctx init` creates one";
                return Err(
                    ErrorKind::Conversation(ctx_conversation::Error::from_message(why)).into()
                );
            }
        };
        let mut assembler = Assembler::clone(self.assembler());
        let options = assembler.options_mut();
        options.mode = Mode::Inline;
        options.format = Format::Inline;
        let mut rules = Vec::new();
        for rule in active {
            let assembly = assembler.assemble_file(&rule.path)?;
            rules.push(AssembledRule { key: rule.key, path: rule.path, assembly });
        }
        Ok(SystemPrompt { rules_dir: dir, rules, runtime: self.runtime_context() })
    }

    /// The `### Runtime Context` section: the workspace root, the other allowed roots and the
    /// source roots of an out-of-source build, all read-only.
    pub fn runtime_context(&self) -> String {
        let sandbox = self.sandbox();
        let mut text = String::from("### Runtime Context\n\n");
        let roots = |kinds: &[RootKind]| -> Vec<String> {
            sandbox
                .roots()
                .filter(|&r| kinds.contains(&sandbox.root_kind(r)))
                // A source root's path comes from a project file.
                .map(|r| {
                    ctx_assemble::sanitize::sanitize(sandbox.root_path(r).as_str())
                        .text
                        .into_owned()
                })
                .collect()
        };
        text.push_str(&format!("- Workspace root: {}\n", roots(&[RootKind::Workspace]).join(", ")));
        let allowed = roots(&[RootKind::Allowed, RootKind::Home]);
        if !allowed.is_empty() {
            text.push_str(&format!("- Other allowed roots (read-only): {}\n", allowed.join(", ")));
        }
        let sources = roots(&[RootKind::Source]);
        if !sources.is_empty() {
            text.push_str(&format!(
                "- Source roots of the out-of-source build (read-only; paths relative to them resolve): {}\n",
                sources.join(", ")
            ));
        }
        text
    }

    /// `ctx init`: creates `.ctx/rules/default.md` and a commented `ctx.toml` in the workspace
    /// root where they are missing; an existing file is never overwritten.
    ///
    /// # Errors
    ///
    /// When the root cannot be written to.
    #[allow(clippy::disallowed_methods)] // The one write into the workspace, asked for by the user.
    pub fn init_rules(&self) -> Result<ctx_conversation::rules::InitReport, Error> {
        let sandbox = self.sandbox();
        let root = sandbox.root_path(sandbox.workspace().root());
        let store =
            ctx_fs::Store::open(root, cap_std::ambient_authority()).map_err(ErrorKind::Fs)?;
        Ok(rules::init(&store).map_err(ErrorKind::Conversation)?)
    }

    /// Appends one turn (an OpenAI-style message, `{"role", "content"}`) to the workspace's
    /// transcript `.ctx/history.jsonl`, as one line in one write under the file's lock.
    ///
    /// # Errors
    ///
    /// When the message has no role or the file cannot be written.
    #[allow(clippy::disallowed_methods)] // Writing the transcript is asked for by the caller.
    pub fn append_turn(&self, message: &serde_json::Value) -> Result<(), Error> {
        let sandbox = self.sandbox();
        let root = sandbox.root_path(sandbox.workspace().root()).join(".ctx");
        let store =
            ctx_fs::Store::open(root, cap_std::ambient_authority()).map_err(ErrorKind::Fs)?;
        Ok(history::append_turn(&store, "history.jsonl", message)
            .map_err(ErrorKind::Conversation)?)
    }

    /// Stores image bytes in the folder of pasted images ([`ContextBuilder::images_dir`])
    /// under the hash of their content, and returns the path to put into a prompt.
    ///
    /// [`ContextBuilder::images_dir`]: crate::ContextBuilder::images_dir
    ///
    /// # Errors
    ///
    /// Without a folder of pasted images, or when the bytes are not an image within `max`.
    pub fn paste_image(&self, bytes: &[u8], max: u64) -> Result<String, Error> {
        let Some(store) = self.pasted() else {
            let why = "no folder for pasted images (ContextBuilder::images_dir)";
            return Err(ErrorKind::Conversation(ctx_conversation::Error::from_message(why)).into());
        };
        image::paste(store, bytes, max).map_err(|err| {
            let message = format!("{}: {}", err.code, err.message);
            ErrorKind::Conversation(ctx_conversation::Error::from_message(&message)).into()
        })
    }

    /// Starts building a conversation: the system prompt of the rules, history, and the user's
    /// turn with its images.
    pub fn conversation(&self) -> ConversationBuilder {
        ConversationBuilder {
            ctx: self.clone(),
            rules_dir: None,
            rules: Vec::new(),
            mai: None,
            history_tokens: history::DEFAULT_HISTORY_TOKENS,
            transcript: None,
            max_image_bytes: image::DEFAULT_MAX_IMAGE_BYTES,
            max_tokens: None,
            agent: None,
            auto: None,
        }
    }
}

impl ConversationBuilder {
    /// The rules folder (default: the first of `.ctx/rules`, `.mutsumi/rules` that exists).
    pub fn rules_dir(mut self, dir: impl Into<String>) -> ConversationBuilder {
        self.rules_dir = Some(dir.into());
        self
    }

    /// The active rules, by file name with or without `.md` (default: every rule).
    pub fn rules(mut self, names: Vec<String>) -> ConversationBuilder {
        self.rules = names;
        self
    }

    /// Takes entries of mai's history (`.mai/history.json` of the project, else `~/.mai/`
    /// when the home folder is an allowed root).
    pub fn mai_history(mut self, selection: Selection) -> ConversationBuilder {
        self.mai = Some(selection);
        self
    }

    /// The token budget of the history block (default 2000).
    pub fn history_tokens(mut self, tokens: usize) -> ConversationBuilder {
        self.history_tokens = tokens;
        self
    }

    /// Earlier turns from a transcript of OpenAI-style messages (JSON or JSON Lines).
    pub fn transcript(mut self, path: impl Into<String>) -> ConversationBuilder {
        self.transcript = Some(path.into());
        self
    }

    /// The largest image attached (default 20 MiB).
    pub fn max_image_bytes(mut self, bytes: u64) -> ConversationBuilder {
        self.max_image_bytes = bytes;
        self
    }

    /// A token budget for the whole request: the oldest turns go first, then the prompt's
    /// attachments are cut to what is left.
    pub fn max_tokens(mut self, tokens: Option<usize>) -> ConversationBuilder {
        self.max_tokens = tokens.filter(|t| *t > 0);
        self
    }

    /// Attaches the ranked files the prompt does not mention to the user's turn, as
    /// `ctx expand --auto` does ([`Context::fit_prompt`]): with a request budget
    /// ([`ConversationBuilder::max_tokens`]) they fill what the system prompt, the history
    /// and the prompt's own mentions leave of it; without one, `opts.max_tokens` (2 000 when
    /// unset). `opts.limit` files are looked at, at most [`crate::FIT_CANDIDATES`].
    pub fn auto(mut self, opts: Option<crate::SuggestOptions>) -> ConversationBuilder {
        self.auto = opts;
        self
    }

    /// Builds the rules part of the conversation from a coding agent's rules
    /// ([`Context::rules_with`]) instead of the rules folder, as that agent sends them
    /// ([`crate::AgentPrompt`]): what it puts in the system prompt is the system prompt, what
    /// it sends in the first user message or when a file is read goes, in that order, before
    /// the user's turn. Hidden and control characters of the rule text are made visible, as
    /// in assembled content.
    pub fn agent_rules(mut self, rules: ctx_agents::Rules) -> ConversationBuilder {
        self.agent = Some(rules);
        self
    }

    /// The system prompt, its text, and the rule text sent before the user's turn.
    fn rules_part(&self) -> Result<(SystemPrompt, String, String), Error> {
        match &self.agent {
            Some(rules) => {
                // Made visible as assembled content is: hidden characters of a rule file
                // reach the body as `\u{202E}`, not raw (the view warns of them).
                let prompt = crate::AgentPrompt::of(rules);
                let visible = |t: &str| ctx_fs::sanitize::sanitize(t).text.into_owned();
                Ok((SystemPrompt::default(), visible(&prompt.system), visible(&prompt.user)))
            }
            None => {
                let system = self.ctx.system_prompt(self.rules_dir.as_deref(), &self.rules)?;
                let text = system.text();
                Ok((system, text, String::new()))
            }
        }
    }

    /// Builds the conversation for `prompt`.
    ///
    /// # Errors
    ///
    /// When a named rule, the history or a transcript cannot be read, or a history selection
    /// is out of range; images and transcript lines that cannot be used are warnings.
    pub fn build(self, prompt: &str) -> Result<BuiltConversation, Error> {
        let ctx = &self.ctx;
        let mut warnings = Vec::new();
        let mut assembler = ctx.prompt_assembler();
        // Every count of the conversation is in the tokenizer of the assembly.
        let tokenizer = assembler.options().tokenizer;
        let (system, mut system_text, before_user) = self.rules_part()?;
        if let Some(selection) = &self.mai {
            let entries = self.read_mai()?;
            let chosen = history::select(&entries, selection).map_err(ErrorKind::Conversation)?;
            // Within the request's budget too: the rules come first, the summary gets what
            // they leave (a token kept for the line break between them).
            let left_room = self.max_tokens.map(|max| {
                let rules = tokenizer.count(&system_text) + tokenizer.count(&before_user) + 1;
                max.saturating_sub(rules)
            });
            let block = match left_room {
                Some(left) if left < self.history_tokens => {
                    let max = self.max_tokens.unwrap_or_default();
                    let named = format!(
                        "the token budget of {max} ({tokenizer}) leaves {left} for the history"
                    );
                    history::block_within(&chosen, left, &named, tokenizer)
                }
                _ => history::block(&chosen, self.history_tokens, tokenizer),
            };
            if block.left_out > 0 {
                let left = block.left_out;
                let by = match left_room {
                    Some(room) if room < self.history_tokens => "the token budget",
                    _ => "the history budget",
                };
                let message = format!("{left} history entries left out by {by}");
                warnings.push(Warning::new(Code::TokenBudget, message));
            }
            warnings.extend(block.warnings);
            system_text.push('\n');
            system_text.push_str(&block.text);
        }
        let mut turns = Vec::new();
        if let Some(path) = &self.transcript {
            let sandbox = ctx.sandbox();
            let (location, content) = sandbox.read_path(path, None).map_err(ErrorKind::Fs)?;
            let shown = location.path().to_string();
            let parsed = match &content {
                // JSON is Unicode text: bytes that are not (which a whole read may take for a
                // legacy encoding) are read again below.
                ctx_fs::Content::Text { text, encoding }
                    if !matches!(encoding, ctx_fs::Encoding::Legacy(_)) =>
                {
                    history::parse_transcript(text, &shown)
                }
                // Not text as a whole (a line that is not UTF-8): read again as bytes, so
                // that only the lines that are not text are skipped.
                _ => {
                    let max = sandbox.limits().max_file_bytes;
                    let (_, bytes) = sandbox.read_bytes(path, None, max).map_err(ErrorKind::Fs)?;
                    history::parse_transcript_bytes(&bytes, &shown)
                }
            };
            let (messages, skipped) = parsed.map_err(ErrorKind::Conversation)?;
            turns = messages;
            warnings.extend(skipped);
        }
        if let Some(max) = self.max_tokens {
            // A turn costs its text and a few tokens of framing (role and separators), as the
            // providers' chat formats count it.
            let count =
                |turn: &serde_json::Value| tokenizer.scale(turn_tokens(turn)) + TURN_FRAMING_TOKENS;
            let fixed = tokenizer.count(&system_text) + tokenizer.count(&before_user);
            let mut base = fixed + turns.iter().map(count).sum::<usize>();
            let mut dropped = 0;
            while base > max && !turns.is_empty() {
                base -= count(&turns.remove(0));
                dropped += 1;
                // A cut history starts with a user's turn, as the providers expect: the
                // answers to turns that were left out go with them.
                while turns.first().is_some_and(|t| !is_user_turn(t)) {
                    base -= count(&turns.remove(0));
                    dropped += 1;
                }
            }
            if dropped > 0 {
                let message = format!(
                    "{dropped} oldest turns left out to stay within {max} tokens ({tokenizer})"
                );
                warnings.push(Warning::new(Code::TokenBudget, message));
            }
            if fixed > max {
                let message = format!(
                    "the rules alone take {fixed} tokens ({tokenizer}), more than the budget \
                     of {max}; they are sent whole"
                );
                warnings.push(Warning::new(Code::TokenBudget, message));
            }
            let options = assembler.options_mut();
            options.limits.max_tokens = max.saturating_sub(base).max(1);
            // Its markers and warnings name the budget the user set, not what is left of it.
            options.named_budget = Some(max);
            options.count_tokens = true;
        }
        let expanded = self.expand(&assembler, prompt)?;
        let images = self.images(prompt, &mut warnings);
        let user = if before_user.is_empty() {
            expanded.content.clone()
        } else {
            format!("{}\n\n{}", before_user.trim_end(), expanded.content)
        };
        let conversation = Conversation { system: system_text, history: turns, user, images };
        let agent = self.agent;
        Ok(BuiltConversation { conversation, system, prompt: expanded, warnings, agent })
    }

    /// The user's prompt expanded with `assembler`, within what its budget leaves; with
    /// [`ConversationBuilder::auto`], the ranked files fitted after its own mentions.
    fn expand(&self, assembler: &Assembler, prompt: &str) -> Result<Assembly, Error> {
        let Some(opts) = &self.auto else { return Ok(assembler.assemble_str(prompt, "-")) };
        let options = assembler.options();
        let left = match self.max_tokens {
            Some(_) => options.limits.max_tokens,
            None => opts.max_tokens.unwrap_or(2000),
        };
        // The plan is in o200k tokens, measured on what the context's assembler writes, which
        // lays out as this one (its budget only is the request's).
        let plan = self.ctx.fit_prompt(prompt, options.tokenizer.o200k_within(left), opts)?;
        Ok(assembler.assemble_str_with(prompt, "-", plan.attachments.as_slice().into()))
    }

    /// mai's history: the project's `.mai/history.json`, else the home folder's, through the
    /// sandbox (so the home folder must be an allowed root to be read).
    fn read_mai(&self) -> Result<Vec<history::Entry>, Error> {
        let sandbox = self.ctx.sandbox();
        let home = format!("~/{}", history::MAI_HISTORY);
        let mut why = Vec::new();
        for path in [history::MAI_HISTORY, home.as_str()] {
            match sandbox.read_path(path, None) {
                Ok((_, content)) => {
                    let text = content.text().map(|t| t.to_string()).unwrap_or_default();
                    return history::parse_mai(&text)
                        .map_err(|e| ErrorKind::Conversation(e).into());
                }
                Err(err) if err.code() == Code::NotFound => why.push(format!("{path} is missing")),
                Err(err) => why.push(format!("{path}: {err}")),
            }
        }
        let message = format!("no mai history: {}", why.join("; "));
        Err(ErrorKind::Conversation(ctx_conversation::Error::with_code(Code::NotFound, &message))
            .into())
    }

    /// The images the prompt references, read and checked; the ones that cannot be used are
    /// warnings with their codes, at the line and column of their reference in the prompt.
    /// The images of the prompt: each file once however it is spelled, all of them within
    /// [`MAX_IMAGES_TOTAL`] times the cap of one image (a prompt cannot make a request of
    /// gigabytes by naming one picture forty ways).
    fn images(&self, prompt: &str, warnings: &mut Vec<Warning>) -> Vec<ImagePart> {
        let mut parts = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut total = 0u64;
        let budget = self.max_image_bytes.saturating_mul(MAX_IMAGES_TOTAL);
        for (offset, reference) in image::find_images(prompt) {
            match reference {
                ImageRef::Url(url) => parts.push(ImagePart::Url(url)),
                ImageRef::File { path, .. } => {
                    let at = position_of(prompt, offset);
                    // One file named several ways is one image.
                    if let Ok(location) = self.ctx.sandbox().resolve(&path, None)
                        && !seen.insert(location)
                    {
                        continue;
                    }
                    let pasted = self.ctx.pasted();
                    let left = budget.saturating_sub(total);
                    match image::load(
                        self.ctx.sandbox(),
                        pasted,
                        &path,
                        self.max_image_bytes.min(left),
                    ) {
                        Ok(image) => {
                            if !parts
                                .iter()
                                .any(|p| matches!(p, ImagePart::Inline(i) if i.path == image.path))
                            {
                                total += image.bytes.len() as u64;
                                parts.push(ImagePart::Inline(image));
                            }
                        }
                        Err(err) if err.code == Code::TooLarge && left < self.max_image_bytes => {
                            let message = format!(
                                "{path}: left out, the images of one request stay within {budget} bytes"
                            );
                            warnings.push(Warning::at(Code::Limit, message, at));
                        }
                        Err(err) => warnings.push(Warning::at(err.code, err.message, at)),
                    }
                }
            }
        }
        parts
    }
}

/// The 1-based line and column (in characters) of the byte `offset` of `text`.
fn position_of(text: &str, offset: usize) -> ctx_syntax::Position {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let number = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    ctx_syntax::Position {
        line: number(before.matches('\n').count() + 1),
        column: number(before[line_start..].chars().count() + 1),
    }
}

/// The images of one request together stay within this many times the cap of one.
const MAX_IMAGES_TOTAL: u64 = 4;

/// The tokens a chat format adds around each turn (OpenAI's cookbook counts 3 to 4).
const TURN_FRAMING_TOKENS: usize = 4;

/// The tokens of a turn's text: its string values (content, text parts, tool calls'
/// arguments), not its role or part types, and not the parts that carry images, whose bytes
/// are not text.
fn turn_tokens(turn: &serde_json::Value) -> usize {
    use serde_json::Value;
    match turn {
        Value::String(text) => ctx_tokens::count(text),
        Value::Array(items) => items.iter().map(turn_tokens).sum(),
        Value::Object(map) => {
            let kind = map.get("type").and_then(Value::as_str).unwrap_or_default();
            if matches!(kind, "image" | "image_url" | "input_image") {
                return 0;
            }
            map.iter()
                .filter(|(key, _)| !matches!(key.as_str(), "role" | "type" | "image_url"))
                .map(|(_, value)| turn_tokens(value))
                .sum()
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// Whether a transcript turn is the user's (or sets the scene: a system or developer turn),
/// so that a cut history may start with it: not a turn that only answers tool calls (an
/// Anthropic user turn of `tool_result` blocks), whose calls would be gone.
fn is_user_turn(turn: &serde_json::Value) -> bool {
    use serde_json::Value;
    let role = turn.get("role").and_then(Value::as_str);
    let answers_tools = turn.get("content").and_then(Value::as_array).is_some_and(|blocks| {
        blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
    });
    matches!(role, Some("user" | "system" | "developer") | None) && !answers_tools
}
