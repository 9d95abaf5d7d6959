//! Request bodies in the shapes of the providers' chat APIs, without model or key.
//!
//! - OpenAI Chat Completions (`POST /v1/chat/completions`): `messages`, each with `role` and
//!   `content`, a string or an array of parts `{"type": "text", "text"}` and
//!   `{"type": "image_url", "image_url": {"url", "detail"}}`.
//! - Anthropic Messages (`POST /v1/messages`): a top-level `system` string and `messages` of
//!   `user` and `assistant` turns whose `content` is a string or an array of blocks
//!   `{"type": "text", "text"}` and `{"type": "image", "source": {"type": "base64",
//!   "media_type", "data"}}` (or `{"type": "url", "url"}`).
//!
//! Transcript turns are converted between the two: OpenAI's assistant `tool_calls` and `tool`
//! turns are Anthropic's `tool_use` blocks and user turns of `tool_result` blocks, and back;
//! image parts change shape; Anthropic's consecutive turns of one role are merged and empty
//! turns left out, as its API refuses empty content.
//!
//! Neither body ever holds a text part or block that is empty or only white space: Anthropic
//! refuses them ("text content blocks must be non-empty", "… must contain non-whitespace
//! text"), and an empty part says nothing to either model. A user's turn without text or
//! images is left out, as an empty transcript turn is.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::image::Image;

/// The chat API a body is shaped for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI Chat Completions.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl std::str::FromStr for Provider {
    type Err = String;

    fn from_str(s: &str) -> Result<Provider, String> {
        match s {
            "openai" => Ok(Provider::OpenAi),
            "anthropic" => Ok(Provider::Anthropic),
            other => {
                Err(format!("unknown provider `{other}` (expected one of: openai, anthropic)"))
            }
        }
    }
}

/// An image of the user's turn: read and checked, or a URL passed on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImagePart {
    /// Bytes, sent as base64.
    Inline(Image),
    /// An `http(s)` URL.
    Url(String),
}

/// The pieces of one request: the system prompt, earlier turns (OpenAI-shaped messages, as
/// transcripts hold them), and the user's turn with its images.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conversation {
    /// The system prompt.
    pub system: String,
    /// Earlier turns, oldest first.
    pub history: Vec<Value>,
    /// The user's turn: the prompt expanded, attachments included.
    pub user: String,
    /// The images of the user's turn.
    pub images: Vec<ImagePart>,
}

impl Conversation {
    /// The request body for `provider`.
    pub fn body(&self, provider: Provider) -> Value {
        match provider {
            Provider::OpenAi => self.openai(),
            Provider::Anthropic => self.anthropic(),
        }
    }

    fn openai(&self) -> Value {
        let mut messages = Vec::new();
        if !self.system.is_empty() {
            messages.push(json!({ "role": "system", "content": self.system }));
        }
        for turn in &self.history {
            openai_turns(turn, &mut messages);
        }
        let mut messages = openai_answered(messages);
        let mut parts = Vec::new();
        if !blank(&self.user) {
            parts.push(json!({ "type": "text", "text": self.user }));
        }
        for image in &self.images {
            let url = match image {
                ImagePart::Inline(image) => image.data_url(),
                ImagePart::Url(url) => url.clone(),
            };
            parts.push(
                json!({ "type": "image_url", "image_url": { "url": url, "detail": "auto" } }),
            );
        }
        if !parts.is_empty() {
            messages.push(json!({ "role": "user", "content": parts }));
        }
        json!({ "messages": messages })
    }

    fn anthropic(&self) -> Value {
        let mut system = self.system.clone();
        let mut messages = Vec::new();
        for message in &self.history {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
            let content = message.get("content").unwrap_or(&Value::Null);
            match role {
                // Anthropic has no system turns: their text joins the system prompt.
                "system" | "developer" => {
                    if let Some(text) = text_of(content).filter(|t| !blank(t)) {
                        if !system.is_empty() {
                            system.push_str("\n\n");
                        }
                        system.push_str(&text);
                    }
                }
                "assistant" => {
                    let calls = tool_uses(message);
                    match content {
                        Value::String(text) if calls.is_empty() && !blank(text) => {
                            push_anthropic(&mut messages, "assistant", Value::String(text.clone()))
                        }
                        _ => {
                            let mut blocks = anthropic_blocks(content);
                            blocks.extend(calls);
                            push_anthropic(&mut messages, "assistant", Value::Array(blocks));
                        }
                    }
                }
                "tool" => {
                    let id = message.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                    let mut block = json!({ "type": "tool_result", "tool_use_id": id });
                    if let Some(text) = text_of(content).filter(|t| !blank(t)) {
                        block["content"] = Value::String(text);
                    }
                    push_anthropic(&mut messages, "user", json!([block]));
                }
                _ => match content {
                    Value::String(text) if !blank(text) => {
                        push_anthropic(&mut messages, "user", Value::String(text.clone()))
                    }
                    _ => push_anthropic(
                        &mut messages,
                        "user",
                        Value::Array(anthropic_blocks(content)),
                    ),
                },
            }
        }
        let mut messages = anthropic_answered(messages);
        let mut content = Vec::new();
        if !blank(&self.user) {
            content.push(json!({ "type": "text", "text": self.user }));
        }
        for image in &self.images {
            content.push(match image {
                ImagePart::Inline(image) => json!({
                    "type": "image",
                    "source": { "type": "base64", "media_type": image.media_type, "data": image.base64() },
                }),
                ImagePart::Url(url) => json!({ "type": "image", "source": { "type": "url", "url": url } }),
            });
        }
        push_anthropic(&mut messages, "user", Value::Array(content));
        let mut body = json!({ "messages": messages });
        if !system.is_empty() {
            body["system"] = Value::String(system);
        }
        body
    }
}

/// Adds a turn to Anthropic's `messages`: an empty one is left out, and one of the same role
/// as the turn before joins it (tool results after their calls, as the API wants them).
fn push_anthropic(messages: &mut Vec<Value>, role: &str, content: Value) {
    let as_blocks = |content: Value| match content {
        Value::String(text) => vec![json!({ "type": "text", "text": text })],
        Value::Array(blocks) => blocks,
        _ => Vec::new(),
    };
    let empty = match &content {
        Value::String(text) => blank(text),
        Value::Array(blocks) => blocks.is_empty(),
        _ => true,
    };
    if empty {
        return;
    }
    if let Some(last) = messages.last_mut()
        && last["role"] == role
    {
        let mut blocks = as_blocks(last["content"].take());
        blocks.extend(as_blocks(content));
        last["content"] = Value::Array(blocks);
        return;
    }
    messages.push(json!({ "role": role, "content": content }));
}

/// Whether a text says nothing: empty or only white space. No body holds such a text part.
fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// An OpenAI-shaped transcript turn as it goes into OpenAI's body: its blank text parts left
/// out; `None` when nothing is left of a turn that needs content (a user, system or developer
/// turn, or an assistant turn without tool calls). A `tool` turn always stays: it answers a
/// call, and its content is a string or parts that may say nothing.
fn openai_clean(turn: &Value) -> Option<Value> {
    let mut turn = turn.clone();
    let role = turn.get("role").and_then(Value::as_str).unwrap_or("user").to_owned();
    if role == "tool" {
        return Some(turn);
    }
    if let Some(parts) = turn.get_mut("content").and_then(Value::as_array_mut) {
        parts.retain(|p| {
            p.get("type").and_then(Value::as_str) != Some("text")
                || p.get("text").and_then(Value::as_str).is_some_and(|t| !blank(t))
        });
    }
    let said = match turn.get("content") {
        Some(Value::String(text)) => !blank(text),
        Some(Value::Array(parts)) => !parts.is_empty(),
        _ => false,
    };
    if said {
        return Some(turn);
    }
    let calls = turn.get("tool_calls").and_then(Value::as_array).is_some_and(|c| !c.is_empty());
    if role == "assistant" && calls {
        // Its content may be null when it calls tools.
        turn["content"] = Value::Null;
        return Some(turn);
    }
    None
}

/// An OpenAI assistant turn's `tool_calls` as Anthropic `tool_use` blocks; arguments that are
/// not a JSON object are kept as `{"arguments": …}`, as `input` must be an object.
fn tool_uses(message: &Value) -> Vec<Value> {
    let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else {
        return Vec::new();
    };
    calls
        .iter()
        .map(|call| {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or("");
            let raw = call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("{}");
            let input = match serde_json::from_str::<Value>(raw) {
                Ok(object @ Value::Object(_)) => object,
                _ if raw.trim().is_empty() => json!({}),
                _ => json!({ "arguments": raw }),
            };
            json!({ "type": "tool_use", "id": id, "name": name, "input": input })
        })
        .collect()
}

/// A transcript turn as OpenAI messages: OpenAI-shaped turns as they are; a turn holding
/// Anthropic blocks (images, tool uses, tool results) split into `tool` turns (its `tool_result` blocks, first, as they answer
/// the calls before them) and the turn itself, its `tool_use` blocks as `tool_calls` and its
/// image blocks as `image_url` parts.
fn openai_turns(turn: &Value, out: &mut Vec<Value>) {
    let role = turn.get("role").and_then(Value::as_str).unwrap_or("user");
    let anthropic_only = |b: &Value| {
        matches!(b.get("type").and_then(Value::as_str), Some("image" | "tool_use" | "tool_result"))
    };
    let Some(blocks) = turn
        .get("content")
        .and_then(Value::as_array)
        .filter(|blocks| blocks.iter().any(anthropic_only))
    else {
        // Already OpenAI's shape (a string or OpenAI parts, tool turns and calls included).
        out.extend(openai_clean(turn));
        return;
    };
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                if !blank(text) {
                    parts.push(json!({ "type": "text", "text": text }));
                }
            }
            Some("image_url") => parts.push(block.clone()),
            Some("image") => {
                let url = match block.pointer("/source/type").and_then(Value::as_str) {
                    Some("base64") => {
                        let media = block.pointer("/source/media_type").and_then(Value::as_str);
                        let data = block.pointer("/source/data").and_then(Value::as_str);
                        media.zip(data).map(|(m, d)| format!("data:{m};base64,{d}"))
                    }
                    _ => block.pointer("/source/url").and_then(Value::as_str).map(str::to_owned),
                };
                if let Some(url) = url {
                    parts.push(json!({ "type": "image_url", "image_url": { "url": url } }));
                }
            }
            Some("tool_use") => calls.push(json!({
                "id": block.get("id").cloned().unwrap_or_default(),
                "type": "function",
                "function": {
                    "name": block.get("name").cloned().unwrap_or_default(),
                    "arguments": block.get("input").map_or_else(|| "{}".to_owned(), Value::to_string),
                },
            })),
            Some("tool_result") => {
                let content = block.get("content").unwrap_or(&Value::Null);
                out.push(json!({
                    "role": "tool",
                    "tool_call_id": block.get("tool_use_id").cloned().unwrap_or_default(),
                    "content": text_of(content).unwrap_or_default(),
                }));
            }
            _ => {}
        }
    }
    if role == "assistant" {
        let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
        if text.is_empty() && calls.is_empty() {
            return;
        }
        let mut message = json!({ "role": "assistant", "content": Value::Null });
        if !text.is_empty() {
            message["content"] = Value::String(text.join("\n"));
        }
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        out.push(message);
    } else if !parts.is_empty() {
        let role = if matches!(role, "system" | "developer") { role } else { "user" };
        if role == "user" {
            out.push(json!({ "role": role, "content": parts }));
        } else {
            let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
            out.push(json!({ "role": role, "content": text.join("\n") }));
        }
    }
}

/// The text of a message's content: the string, or its text parts joined.
fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// The ids of `items` that `id` gives, as owned strings.
fn ids<'a>(items: impl Iterator<Item = &'a Value>, id: &str) -> HashSet<String> {
    items.filter_map(|item| item.get(id).and_then(Value::as_str).map(str::to_owned)).collect()
}

/// OpenAI's messages with every tool call answered and every answer called for: a call
/// without a `tool` turn for its id (a transcript that ends on it, an answer lost in a torn
/// line or a cut) is left out, and so is an answer whose call is gone; an assistant turn left
/// with neither calls nor text is left out. The API refuses either kind of orphan.
fn openai_answered(messages: Vec<Value>) -> Vec<Value> {
    let is_tool = |m: &&Value| m.get("role").and_then(Value::as_str) == Some("tool");
    let answered = ids(messages.iter().filter(is_tool), "tool_call_id");
    let calls = messages.iter().filter_map(|m| m.get("tool_calls").and_then(Value::as_array));
    let called = ids(calls.flatten(), "id");
    messages
        .into_iter()
        .filter_map(|mut m| {
            if is_tool(&&m) {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                return called.contains(id).then_some(m);
            }
            let Some(calls) = m.get_mut("tool_calls").and_then(Value::as_array_mut) else {
                return Some(m);
            };
            calls.retain(|c| {
                c.get("id").and_then(Value::as_str).is_some_and(|id| answered.contains(id))
            });
            if calls.is_empty() {
                m.as_object_mut()?.remove("tool_calls");
                let text = m.get("content").and_then(Value::as_str);
                let parts = m.get("content").and_then(Value::as_array);
                if text.is_none_or(str::is_empty) && parts.is_none_or(Vec::is_empty) {
                    return None;
                }
            }
            Some(m)
        })
        .collect()
}

/// Anthropic's messages with every `tool_use` block answered by a `tool_result` block and
/// every result called for, the others left out as [`openai_answered`] does; turns left
/// empty are dropped and the turns of one role that then meet are joined.
fn anthropic_answered(messages: Vec<Value>) -> Vec<Value> {
    let blocks =
        || messages.iter().filter_map(|m| m.get("content").and_then(Value::as_array)).flatten();
    let of_type =
        |kind: &'static str| move |b: &&Value| b.get("type").and_then(Value::as_str) == Some(kind);
    let called = ids(blocks().filter(of_type("tool_use")), "id");
    let answered = ids(blocks().filter(of_type("tool_result")), "tool_use_id");
    let mut out = Vec::new();
    for mut m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user").to_owned();
        if let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) {
            blocks.retain(|b| match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    b.get("id").and_then(Value::as_str).is_some_and(|id| answered.contains(id))
                }
                Some("tool_result") => b
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| called.contains(id)),
                _ => true,
            });
        }
        push_anthropic(&mut out, &role, m["content"].take());
    }
    out
}

/// A message content as Anthropic content blocks: a string is one text block (none when
/// empty), OpenAI text and `image_url` parts become text and image blocks (base64 for a
/// `data:` URL, else a URL source), Anthropic's own blocks stay as they are, anything else is
/// left out.
fn anthropic_blocks(content: &Value) -> Vec<Value> {
    let Value::Array(parts) = content else {
        return text_of(content)
            .filter(|t| !blank(t))
            .map(|text| json!({ "type": "text", "text": text }))
            .into_iter()
            .collect();
    };
    parts
        .iter()
        .filter_map(|part| match part.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                (!blank(text)).then(|| json!({ "type": "text", "text": text }))
            }
            Some("image_url") => {
                let url = part.pointer("/image_url/url").and_then(Value::as_str)?;
                Some(match parse_data_url(url) {
                    Some((media_type, data)) => json!({
                        "type": "image",
                        "source": { "type": "base64", "media_type": media_type, "data": data },
                    }),
                    None => json!({ "type": "image", "source": { "type": "url", "url": url } }),
                })
            }
            Some("image" | "tool_use" | "tool_result") => Some(part.clone()),
            _ => None,
        })
        .collect()
}

/// The media type and base64 data of a `data:TYPE;base64,DATA` URL.
pub fn parse_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    let media_type = head.strip_suffix(";base64")?;
    Some((media_type, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The role of each message of `body`, in order.
    fn roles(body: &Value) -> Vec<&str> {
        body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect()
    }
    use crate::image::samples;

    fn conversation() -> Conversation {
        let png =
            Image { path: "a.png".into(), media_type: "image/png", bytes: samples::PNG.to_vec() };
        Conversation {
            system: "Be brief.".into(),
            history: vec![
                json!({ "role": "system", "content": "Earlier system note." }),
                json!({ "role": "user", "content": [
                    { "type": "text", "text": "look" },
                    { "type": "image_url", "image_url": { "url": "data:image/gif;base64,R0lG" } },
                ] }),
                json!({ "role": "assistant", "content": "seen" }),
            ],
            user: "now this".into(),
            images: vec![ImagePart::Inline(png), ImagePart::Url("https://x.test/l.png".into())],
        }
    }

    #[test]
    fn openai_shape() {
        let body = conversation().body(Provider::OpenAi);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 5);
        assert_eq!(messages[0], json!({ "role": "system", "content": "Be brief." }));
        let user = &messages[4];
        assert_eq!(user["role"], "user");
        assert_eq!(user["content"][0], json!({ "type": "text", "text": "now this" }));
        assert_eq!(user["content"][1]["image_url"]["detail"], "auto");
        assert!(
            user["content"][1]["image_url"]["url"]
                .as_str()
                .unwrap()
                .starts_with("data:image/png;base64,iVBOR")
        );
        assert_eq!(user["content"][2]["image_url"]["url"], "https://x.test/l.png");
    }

    fn tool_transcript() -> Vec<Value> {
        vec![
            json!({ "role": "user", "content": "what is in src?" }),
            json!({ "role": "assistant", "content": null, "tool_calls": [
                { "id": "c1", "type": "function", "function": { "name": "ls", "arguments": "{\"path\":\"src\"}" } },
            ] }),
            json!({ "role": "tool", "tool_call_id": "c1", "content": "main.rs" }),
            json!({ "role": "assistant", "content": "" }),
            json!({ "role": "assistant", "content": "One file: main.rs." }),
        ]
    }

    #[test]
    fn tool_turns_become_anthropic_blocks_and_come_back() {
        let conversation = Conversation {
            history: tool_transcript(),
            user: "thanks".into(),
            ..Conversation::default()
        };
        let body = conversation.body(Provider::Anthropic);
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"], "{body:#}");
        assert_eq!(
            messages[1]["content"],
            json!([{ "type": "tool_use", "id": "c1", "name": "ls", "input": { "path": "src" } }])
        );
        assert_eq!(
            messages[2]["content"],
            json!([{ "type": "tool_result", "tool_use_id": "c1", "content": "main.rs" }])
        );
        assert_eq!(messages[3]["content"], "One file: main.rs.", "the empty turn is left out");
        // The Anthropic-shaped turns, as a transcript, give OpenAI's shape back.
        let back = Conversation {
            history: messages[..4].to_vec(),
            user: "thanks".into(),
            ..Conversation::default()
        }
        .body(Provider::OpenAi);
        let back = back["messages"].as_array().unwrap();
        assert_eq!(back[1]["tool_calls"][0]["function"]["name"], "ls");
        assert_eq!(back[1]["tool_calls"][0]["function"]["arguments"], "{\"path\":\"src\"}");
        assert_eq!(back[2], json!({ "role": "tool", "tool_call_id": "c1", "content": "main.rs" }));
    }

    #[test]
    fn unanswered_calls_and_orphan_answers_are_left_out() {
        let history = vec![
            json!({ "role": "tool", "tool_call_id": "gone", "content": "an answer whose call was cut" }),
            json!({ "role": "user", "content": "list src" }),
            json!({ "role": "assistant", "content": null, "tool_calls": [
                { "id": "c1", "type": "function", "function": { "name": "ls", "arguments": "" } },
            ] }),
        ];
        let conversation =
            Conversation { history, user: "go on".into(), ..Conversation::default() };
        let openai = conversation.body(Provider::OpenAi);
        let roles = roles(&openai);
        assert_eq!(roles, ["user", "user"], "{openai:#}");
        let anthropic = conversation.body(Provider::Anthropic);
        let messages = anthropic["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1, "the two user turns joined: {anthropic:#}");
        assert_eq!(messages[0]["content"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn openai_turns_with_parts_pass_as_they_are() {
        let tool = json!({ "role": "tool", "tool_call_id": "c1", "content": [{ "type": "text", "text": "x" }] });
        let call = json!({ "role": "assistant", "content": [{ "type": "text", "text": "looking" }], "tool_calls": [
            { "id": "c1", "type": "function", "function": { "name": "ls", "arguments": "{}" } },
        ] });
        let conversation = Conversation {
            history: vec![json!({ "role": "user", "content": "hi" }), call.clone(), tool.clone()],
            user: "and?".into(),
            ..Conversation::default()
        };
        let body = conversation.body(Provider::OpenAi);
        assert_eq!(body["messages"][1], call);
        assert_eq!(body["messages"][2], tool);
    }

    #[test]
    fn anthropic_image_blocks_become_openai_parts() {
        let conversation = Conversation {
            history: vec![json!({ "role": "user", "content": [
                { "type": "text", "text": "look" },
                { "type": "image", "source": { "type": "base64", "media_type": "image/gif", "data": "R0lG" } },
            ] })],
            user: "and?".into(),
            ..Conversation::default()
        };
        let body = conversation.body(Provider::OpenAi);
        assert_eq!(
            body["messages"][0]["content"][1],
            json!({ "type": "image_url", "image_url": { "url": "data:image/gif;base64,R0lG" } })
        );
    }

    /// Every text part or block of a body, with where it is.
    fn texts(body: &Value) -> Vec<(String, String)> {
        let mut found = Vec::new();
        for (i, message) in body["messages"].as_array().unwrap().iter().enumerate() {
            for (j, part) in message["content"].as_array().into_iter().flatten().enumerate() {
                if part["type"] == "text" {
                    found.push((format!("{i}.{j}"), part["text"].as_str().unwrap().to_owned()));
                }
            }
        }
        found
    }

    #[test]
    fn no_body_holds_an_empty_text_part() {
        let blank_history = vec![
            json!({ "role": "user", "content": [{ "type": "text", "text": "" }, { "type": "text", "text": "hi" }] }),
            json!({ "role": "assistant", "content": [{ "type": "text", "text": "  " }] }),
            json!({ "role": "user", "content": "\n" }),
            json!({ "role": "system", "content": [{ "type": "text", "text": " " }] }),
            json!({ "role": "assistant", "content": "", "tool_calls": [
                { "id": "c1", "type": "function", "function": { "name": "ls", "arguments": "{}" } },
            ] }),
            json!({ "role": "tool", "tool_call_id": "c1", "content": "" }),
        ];
        for (user, history) in [("", vec![]), (" \n\t", vec![]), ("", blank_history.clone())] {
            let conversation = Conversation { history, user: user.into(), ..Default::default() };
            for provider in [Provider::OpenAi, Provider::Anthropic] {
                let body = conversation.body(provider);
                for (at, text) in texts(&body) {
                    assert!(!blank(&text), "{provider:?}: blank text at {at}: {body:#}");
                }
                // A `tool` turn answers its call whatever it says.
                for message in
                    body["messages"].as_array().unwrap().iter().filter(|m| m["role"] != "tool")
                {
                    let content = &message["content"];
                    let empty = content.as_str().is_some_and(blank)
                        || content.as_array().is_some_and(Vec::is_empty);
                    assert!(!empty, "{provider:?}: an empty turn: {body:#}");
                }
            }
        }
        // Nothing to say, nothing said: an empty prompt alone makes no turn.
        let nothing = Conversation { user: "  ".into(), ..Default::default() };
        assert_eq!(nothing.body(Provider::OpenAi), json!({ "messages": [] }));
        assert_eq!(nothing.body(Provider::Anthropic), json!({ "messages": [] }));
        // An image alone is a turn, without a text part.
        let image = Conversation {
            images: vec![ImagePart::Url("https://x.test/a.png".into())],
            ..Default::default()
        };
        for provider in [Provider::OpenAi, Provider::Anthropic] {
            let body = image.body(provider);
            assert_eq!(body["messages"][0]["content"].as_array().unwrap().len(), 1, "{body:#}");
            assert!(texts(&body).is_empty());
        }
        // The blank turns of a transcript are left out; its words and calls stay.
        let conversation =
            Conversation { history: blank_history, user: "go".into(), ..Default::default() };
        let openai = conversation.body(Provider::OpenAi);
        let roles = roles(&openai);
        assert_eq!(roles, ["user", "assistant", "tool", "user"], "{openai:#}");
        assert_eq!(openai["messages"][0]["content"], json!([{ "type": "text", "text": "hi" }]));
        assert_eq!(openai["messages"][1]["content"], Value::Null);
    }

    #[test]
    fn anthropic_shape() {
        let body = conversation().body(Provider::Anthropic);
        assert_eq!(body["system"], "Be brief.\n\nEarlier system note.");
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "the system turn joined the system prompt");
        assert_eq!(
            messages[0]["content"][1]["source"],
            json!({ "type": "base64", "media_type": "image/gif", "data": "R0lG" })
        );
        assert_eq!(messages[1], json!({ "role": "assistant", "content": "seen" }));
        let user = &messages[2]["content"];
        assert_eq!(user[1]["source"]["media_type"], "image/png");
        assert_eq!(user[2]["source"], json!({ "type": "url", "url": "https://x.test/l.png" }));
    }
}
