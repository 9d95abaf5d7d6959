//! Request bodies in the shapes of the providers' chat APIs, without model or key.
//!
//! - OpenAI Chat Completions (`POST /v1/chat/completions`): `messages`, each with `role` and
//!   `content`, a string or an array of parts `{"type": "text", "text"}` and
//!   `{"type": "image_url", "image_url": {"url", "detail"}}`.
//! - Anthropic Messages (`POST /v1/messages`): a top-level `system` string and `messages` of
//!   `user` and `assistant` turns whose `content` is a string or an array of blocks
//!   `{"type": "text", "text"}` and `{"type": "image", "source": {"type": "base64",
//!   "media_type", "data"}}` (or `{"type": "url", "url"}`).

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
        messages.extend(self.history.iter().cloned());
        let mut parts = vec![json!({ "type": "text", "text": self.user })];
        for image in &self.images {
            let url = match image {
                ImagePart::Inline(image) => image.data_url(),
                ImagePart::Url(url) => url.clone(),
            };
            parts.push(
                json!({ "type": "image_url", "image_url": { "url": url, "detail": "auto" } }),
            );
        }
        messages.push(json!({ "role": "user", "content": parts }));
        json!({ "messages": messages })
    }

    fn anthropic(&self) -> Value {
        let mut system = self.system.clone();
        let mut messages = Vec::new();
        for message in &self.history {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
            let content = message.get("content").cloned().unwrap_or(Value::Null);
            match role {
                // Anthropic has no system turns: their text joins the system prompt.
                "system" | "developer" => {
                    if let Some(text) = text_of(&content) {
                        if !system.is_empty() {
                            system.push_str("\n\n");
                        }
                        system.push_str(&text);
                    }
                }
                "assistant" => {
                    messages.push(json!({ "role": "assistant", "content": blocks(&content) }))
                }
                _ => messages.push(json!({ "role": "user", "content": blocks(&content) })),
            }
        }
        let mut content = vec![json!({ "type": "text", "text": self.user })];
        for image in &self.images {
            content.push(match image {
                ImagePart::Inline(image) => json!({
                    "type": "image",
                    "source": { "type": "base64", "media_type": image.media_type, "data": image.base64() },
                }),
                ImagePart::Url(url) => json!({ "type": "image", "source": { "type": "url", "url": url } }),
            });
        }
        messages.push(json!({ "role": "user", "content": content }));
        let mut body = json!({ "messages": messages });
        if !system.is_empty() {
            body["system"] = Value::String(system);
        }
        body
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

/// An OpenAI message content as Anthropic content blocks: text stays text, an `image_url`
/// part becomes an image block (base64 for a `data:` URL, else a URL source).
fn blocks(content: &Value) -> Value {
    let Value::Array(parts) = content else {
        return Value::String(text_of(content).unwrap_or_default());
    };
    let converted: Vec<Value> = parts
        .iter()
        .filter_map(|part| match part.get("type").and_then(Value::as_str) {
            Some("text") => Some(
                json!({ "type": "text", "text": part.get("text").cloned().unwrap_or_default() }),
            ),
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
            Some("image") => Some(part.clone()),
            _ => None,
        })
        .collect();
    Value::Array(converted)
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
