//! A frame's body to a message, bounded: the JSON is built by a visitor of our own rather
//! than `serde_json::Value`'s, so that
//! - a string longer than the document cap is never copied, not even unescaped: before the
//!   parse it is overwritten in the body by a marker saying how long it was
//!   ([`crate::protocol::too_large_marker`], padded with spaces), which the document store
//!   turns into a document too large to check;
//! - what a message decodes to is bounded (values times their size plus the strings kept):
//!   `[0,0,0,…]` would otherwise cost forty times its bytes;
//! - a body that is not JSON (or holds a lone surrogate, `"\ud83d"`, which `serde_json`
//!   refuses) is answered with a parse error carrying the request's id when a tolerant second
//!   look finds it.
//!
//! The envelope is read by hand, not through `lsp_server::Message`'s untagged `Deserialize`,
//! which buffers the whole message and copies its strings once per variant it tries.

use std::cell::Cell;
use std::fmt;

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response, ResponseError};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::protocol::too_large_marker;

/// Most bytes of an id echoed in an answer.
const MAX_ID_BYTES: usize = 1024;
/// Most bytes of a method name read by the tolerant look.
const MAX_METHOD_BYTES: usize = 256;
/// Most bytes of a document URI read by the tolerant look.
const MAX_URI_BYTES: usize = 8192;
/// What one value of a decoded message costs besides its strings (the size of a
/// `serde_json::Value`, rounded up); an object's entry costs it twice (its slot and index).
const VALUE_COST: usize = 96;

/// The bounds of decoding.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Longest string kept; a longer one becomes a marker.
    pub(crate) max_string: u64,
    /// Most bytes a decoded message may cost.
    pub(crate) max_decoded: usize,
}

/// What a body decodes to.
#[derive(Debug)]
pub(crate) enum Decoded {
    /// A message for the server.
    Message(Message),
    /// A message the transport answers itself with an error (a request or something
    /// unreadable); `id` is the request's id as the client wrote it, if known.
    Refused { id: Option<Value>, code: i32, message: String },
    /// Something that gets no answer (a response with a bad id); said on standard error.
    Ignored(String),
}

/// Decodes one body (in which strings longer than the cap are overwritten first).
pub(crate) fn decode(body: &mut [u8], limits: Limits) -> Decoded {
    elide_long_strings(body, limits.max_string);
    let body = &*body;
    let spent = Cell::new(0);
    let seed = Seed { limits, spent: &spent };
    let mut de = serde_json::Deserializer::from_slice(body);
    match seed.deserialize(&mut de).and_then(|value| de.end().map(|()| value)) {
        Ok(value) => envelope(value),
        Err(_) if spent.get() > limits.max_decoded => too_much(body, limits),
        Err(err) => {
            let found = probe(body);
            Decoded::Refused {
                id: found.id,
                code: ErrorCode::ParseError as i32,
                message: format!("parse error: {err}"),
            }
        }
    }
}

/// Overwrites every string literal of `body` whose text is longer than `max_string` bytes
/// with a [`too_large_marker`] of that length, padded with spaces, so that `serde_json`,
/// which unescapes a string into a buffer of its own before a visitor sees it, never copies
/// it. One pass, nothing allocated but the markers; a body no longer than `max_string` holds
/// no such string and is left alone.
fn elide_long_strings(body: &mut [u8], max_string: u64) {
    if body.len() as u64 <= max_string {
        return;
    }
    let mut at = 0;
    while let Some(quote) = memchr::memchr(b'"', &body[at..]) {
        let start = at + quote;
        // The closing quote: the next one not escaped.
        let mut end = start + 1;
        loop {
            match memchr::memchr2(b'"', b'\\', &body[end..]) {
                Some(n) if body[end + n] == b'\\' => end += n + 2,
                Some(n) => {
                    end += n;
                    break;
                }
                None => return,
            }
            if end >= body.len() {
                return;
            }
        }
        let literal = &body[start + 1..end];
        if literal.len() as u64 > max_string {
            let bytes = unescaped_len(literal);
            let marker = too_large_marker(bytes).to_string();
            if bytes > max_string && marker.len() <= end + 1 - start {
                body[start..start + marker.len()].copy_from_slice(marker.as_bytes());
                body[start + marker.len()..=end].fill(b' ');
            }
        }
        at = end + 1;
    }
}

/// The length in UTF-8 of a JSON string literal's text, its escapes unescaped (a lone
/// surrogate counted as the three bytes of a replacement character).
fn unescaped_len(literal: &[u8]) -> u64 {
    let hex = |at: usize| {
        literal
            .get(at..at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let (mut bytes, mut at) = (0u64, 0);
    while at < literal.len() {
        let Some(n) = memchr::memchr(b'\\', &literal[at..]) else {
            bytes += (literal.len() - at) as u64;
            break;
        };
        bytes += n as u64;
        at += n + 1;
        match (literal.get(at), hex(at + 1)) {
            (Some(b'u'), Some(unit)) => {
                let pair = (0xD800..0xDC00).contains(&unit)
                    && literal.get(at + 5..at + 7) == Some(b"\\u")
                    && hex(at + 7).is_some_and(|low| (0xDC00..0xE000).contains(&low));
                bytes += match unit {
                    _ if pair => 4,
                    0..0x80 => 1,
                    0x80..0x800 => 2,
                    _ => 3,
                };
                at += if pair { 11 } else { 5 };
            }
            _ => {
                bytes += 1;
                at += 1;
            }
        }
    }
    bytes
}

/// A message that decodes to more than [`Limits::max_decoded`]: a request is refused; a
/// document's text becomes a marker (the document is too large); other notifications come
/// without their parameters (a `workspace/didChangeWatchedFiles` without them makes the
/// server check everything again).
fn too_much(body: &[u8], limits: Limits) -> Decoded {
    let found = probe(body);
    let why = format!(
        "the message is too large once decoded (a message of {} bytes decodes to more than {} \
         bytes)",
        body.len(),
        limits.max_decoded
    );
    let Some(method) = found.method else {
        return Decoded::Refused {
            id: found.id,
            code: ErrorCode::InvalidRequest as i32,
            message: why,
        };
    };
    if found.id.is_some() {
        return Decoded::Refused {
            id: found.id,
            code: ErrorCode::InvalidRequest as i32,
            message: why,
        };
    }
    let marker = too_large_marker(body.len() as u64);
    let params = match (method.as_str(), found.uri) {
        ("textDocument/didOpen", Some(uri)) => serde_json::json!({
            "textDocument": { "uri": uri, "languageId": "", "version": found.version.unwrap_or(0), "text": marker },
        }),
        ("textDocument/didChange", Some(uri)) => serde_json::json!({
            "textDocument": { "uri": uri, "version": found.version.unwrap_or(0) },
            "contentChanges": [{ "text": marker }],
        }),
        _ => Value::Null,
    };
    Decoded::Message(Message::Notification(Notification { method, params }))
}

/// Reads the envelope of a decoded message.
fn envelope(value: Value) -> Decoded {
    let refuse = |id: Option<Value>, message: &str| Decoded::Refused {
        id: id.filter(echoable),
        code: ErrorCode::InvalidRequest as i32,
        message: message.to_owned(),
    };
    let Value::Object(mut map) = value else {
        return refuse(None, "a message must be a JSON object (batches are not part of LSP)");
    };
    let id = map.remove("id");
    match (map.remove("method"), id) {
        (Some(Value::String(method)), None) => {
            let params = map.remove("params").unwrap_or(Value::Null);
            Decoded::Message(Message::Notification(Notification { method, params }))
        }
        (Some(Value::String(method)), Some(id)) => match request_id(&id) {
            Some(id) => {
                let params = map.remove("params").unwrap_or(Value::Null);
                Decoded::Message(Message::Request(Request { id, method, params }))
            }
            None => refuse(Some(id), "a request's id must be a 32-bit integer or a string"),
        },
        (Some(_), id) => refuse(id, "a message's method must be a string"),
        (None, Some(id)) => match request_id(&id) {
            Some(id) => {
                let result = map.remove("result");
                let error = map.remove("error").map(response_error);
                Decoded::Message(Message::Response(Response { id, result, error }))
            }
            None => Decoded::Ignored(format!(
                "a response whose id is neither a 32-bit integer nor a string: {}",
                clip(&id.to_string())
            )),
        },
        (None, None) => refuse(None, "a message needs a method or an id"),
    }
}

/// The id of a request, as `lsp_server` keeps them (a 32-bit integer or a string).
fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::Number(n) => n.as_i64().and_then(|n| i32::try_from(n).ok()).map(RequestId::from),
        Value::String(s) => Some(RequestId::from(s.clone())),
        _ => None,
    }
}

/// Whether an id may be echoed in an answer: a number or a short string.
fn echoable(id: &Value) -> bool {
    match id {
        Value::Number(_) => true,
        Value::String(s) => s.len() <= MAX_ID_BYTES,
        _ => false,
    }
}

/// The error of a client's response; a malformed one is kept as an internal error.
fn response_error(error: Value) -> ResponseError {
    serde_json::from_value(error).unwrap_or_else(|err| ResponseError {
        code: ErrorCode::InternalError as i32,
        message: format!("a malformed error: {err}"),
        data: None,
    })
}

/// A client's text in a message: at most 80 characters.
fn clip(text: &str) -> String {
    let clipped: String = text.chars().take(80).collect();
    if clipped.len() < text.len() { format!("{clipped}…") } else { clipped }
}

/// Builds a `Value`, counting what it costs.
#[derive(Clone, Copy)]
struct Seed<'a> {
    limits: Limits,
    spent: &'a Cell<usize>,
}

impl Seed<'_> {
    /// Counts `bytes` more; an error once past the budget.
    fn spend<E: de::Error>(self, bytes: usize) -> Result<(), E> {
        let spent = self.spent.get().saturating_add(bytes);
        self.spent.set(spent);
        if spent > self.limits.max_decoded {
            return Err(E::custom("the message is too large once decoded"));
        }
        Ok(())
    }

    fn string<E: de::Error>(self, s: &str) -> Result<Value, E> {
        if s.len() as u64 > self.limits.max_string {
            self.spend(VALUE_COST * 3)?;
            return Ok(too_large_marker(s.len() as u64));
        }
        self.spend(VALUE_COST + s.len())?;
        Ok(Value::String(s.to_owned()))
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.spend(VALUE_COST)?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.spend(VALUE_COST)?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.spend(VALUE_COST)?;
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.spend(VALUE_COST)?;
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.string(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.spend(VALUE_COST)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.spend(VALUE_COST)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.spend(VALUE_COST)?;
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed(self))? {
            let value = map.next_value_seed(self)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// The key of an object, counted before it is copied.
struct KeySeed<'a>(Seed<'a>);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        self.0.spend(VALUE_COST + v.len())?;
        Ok(v.to_owned())
    }
}

/// What the tolerant look finds in a body.
#[derive(Debug, Default)]
struct Found {
    id: Option<Value>,
    method: Option<String>,
    uri: Option<String>,
    version: Option<i32>,
}

/// Where the tolerant look is in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Top,
    Id,
    Method,
    Params,
    TextDocument,
    Uri,
    Version,
}

/// Looks for the id, the method and the document of a body that did not decode: every
/// other value is skipped without being decoded (`serde_json` skips a string without
/// checking its escapes, so a lone surrogate elsewhere does not hide the id), and what is
/// found before a syntax error is kept.
fn probe(body: &[u8]) -> Found {
    let found = std::cell::RefCell::new(Found::default());
    let mut de = serde_json::Deserializer::from_slice(body);
    let _ = Probe { at: At::Top, found: &found }.deserialize(&mut de);
    found.into_inner()
}

#[derive(Clone, Copy)]
struct Probe<'a> {
    at: At,
    found: &'a std::cell::RefCell<Found>,
}

impl Probe<'_> {
    /// A whole number met where the probe looks: the id, or the document's version.
    fn whole_number(&self, id: Value, version: Option<i32>) {
        let mut found = self.found.borrow_mut();
        match self.at {
            At::Id => found.id = Some(id),
            At::Version => found.version = version,
            _ => {}
        }
    }
}

impl<'de> DeserializeSeed<'de> for Probe<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Probe<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.whole_number(v.into(), i32::try_from(v).ok());
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.whole_number(v.into(), i32::try_from(v).ok());
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        if self.at == At::Id {
            self.found.borrow_mut().id = Number::from_f64(v).map(Value::Number);
        }
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        let mut found = self.found.borrow_mut();
        match self.at {
            At::Id if v.len() <= MAX_ID_BYTES => found.id = Some(v.into()),
            At::Method if v.len() <= MAX_METHOD_BYTES => found.method = Some(v.to_owned()),
            At::Uri if v.len() <= MAX_URI_BYTES => found.uri = Some(v.to_owned()),
            _ => {}
        }
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key_seed(Key)? {
            let at = match (self.at, key) {
                (At::Top, Some("id")) => At::Id,
                (At::Top, Some("method")) => At::Method,
                (At::Top, Some("params")) => At::Params,
                (At::Params, Some("textDocument")) => At::TextDocument,
                (At::TextDocument, Some("uri")) => At::Uri,
                (At::TextDocument, Some("version")) => At::Version,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            map.next_value_seed(Probe { at, ..self })?;
        }
        Ok(())
    }
}

/// A key the tolerant look cares about, or `None`.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<&'static str>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for Key {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(["id", "method", "params", "textDocument", "uri", "version"]
            .into_iter()
            .find(|k| *k == v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits { max_string: 100, max_decoded: 4096 };

    fn dec(body: impl AsRef<[u8]>, limits: Limits) -> Decoded {
        decode(&mut body.as_ref().to_vec(), limits)
    }

    fn refused(body: impl AsRef<[u8]>) -> (Option<Value>, i32, String) {
        match dec(body, LIMITS) {
            Decoded::Refused { id, code, message } => (id, code, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn requests_notifications_and_responses() {
        let Decoded::Message(Message::Request(request)) = dec(
            br#"{"jsonrpc":"2.0","id":"a","method":"m","params":[1,"x",null,{"k":true}]}"#,
            LIMITS,
        ) else {
            panic!()
        };
        assert_eq!(
            (request.id, request.params),
            (RequestId::from("a".to_owned()), serde_json::json!([1, "x", null, { "k": true }]))
        );
        let Decoded::Message(Message::Notification(note)) = dec(br#"{"method":"exit"}"#, LIMITS)
        else {
            panic!()
        };
        assert_eq!((note.method.as_str(), note.params), ("exit", Value::Null));
        let Decoded::Message(Message::Response(response)) =
            dec(br#"{"id":3,"error":{"code":-1,"message":"no"}}"#, LIMITS)
        else {
            panic!()
        };
        assert_eq!(
            (response.id, response.error.unwrap().message),
            (RequestId::from(3), "no".to_owned())
        );
        assert!(matches!(dec(br#"{"id":null,"result":1}"#, LIMITS), Decoded::Ignored(_)));
    }

    #[test]
    fn invalid_json_and_lone_surrogates() {
        assert_eq!(refused("{").1, -32700);
        assert_eq!(refused("").1, -32700);
        assert_eq!(refused("\u{feff}{}").1, -32700);
        assert_eq!(refused("{} {}").1, -32700);
        assert_eq!(refused(r#"{"id":1,"method":"m"} x"#).0, Some(Value::from(1)));
        // The id is found before and after the lone surrogate.
        let (id, code, message) = refused(r#"{"id":7,"method":"m","params":{"x":"\ud83d"}}"#);
        assert_eq!((id, code), (Some(Value::from(7)), -32700));
        assert!(message.starts_with("parse error: unexpected end of hex escape"), "{message}");
        assert_eq!(
            refused(r#"{"params":{"x":"\ud83d"},"id":"s","method":"m"}"#).0,
            Some(Value::from("s"))
        );
        // Invalid UTF-8 in a string, a syntax error after the id.
        assert_eq!(refused(b"{\"id\":2,\"method\":\"\xff\"}").0, Some(Value::from(2)));
        assert_eq!(refused(r#"{"id":4,"method":"m","params":[1,,]}"#).0, Some(Value::from(4)));
        // A surrogate in the id itself: no id.
        assert_eq!(refused(r#"{"id":"\udc00","method":"m"}"#).0, None);
        // Deep nesting is refused by serde_json's own limit, not by a stack overflow.
        let deep =
            format!("{{\"id\":5,\"params\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let wide = Limits { max_decoded: usize::MAX, ..LIMITS };
        let Decoded::Refused { id, code, message } = dec(&deep, wide) else { panic!() };
        assert_eq!((id, code), (Some(Value::from(5)), -32700));
        assert!(message.contains("recursion limit"), "{message}");
    }

    #[test]
    fn invalid_requests() {
        assert_eq!(
            refused("[]").2,
            "a message must be a JSON object (batches are not part of LSP)"
        );
        assert_eq!(refused(r#"{"id":1.5,"method":"m"}"#).0, Some(Value::from(1.5)));
        let (id, code, _) = refused(r#"{"id":4294967296,"method":"m"}"#);
        assert_eq!((id, code), (Some(Value::from(4_294_967_296_u64)), -32600));
        assert_eq!(refused(r#"{"id":{"a":1},"method":"m"}"#).0, None);
        assert_eq!(refused(r#"{"id":1,"method":5}"#).2, "a message's method must be a string");
        assert_eq!(refused(r#"{"jsonrpc":"2.0"}"#).2, "a message needs a method or an id");
    }

    #[test]
    fn long_strings_become_markers() {
        let text = "x".repeat(101);
        let body = serde_json::json!({ "method": "textDocument/didOpen", "params": { "textDocument": { "uri": "file:///a", "text": text, "version": 1 } } });
        let Decoded::Message(Message::Notification(note)) = dec(body.to_string(), LIMITS) else {
            panic!()
        };
        assert_eq!(note.params["textDocument"]["text"], too_large_marker(101));
        assert_eq!(note.params["textDocument"]["uri"], "file:///a");
    }

    #[test]
    fn long_strings_are_overwritten_before_the_parse() {
        // Escapes count as what they stand for: 50 of `\n` are 50 bytes, 50 of `é` 100.
        let cases = [
            ("\\n".repeat(101), Some(101)),
            ("\\n".repeat(100), None),
            ("\\u00e9".repeat(51), Some(102)),
            ("\\u00e9".repeat(50), None),
            ("\\ud83d\\ude00".repeat(26), Some(104)),
            ("\\ud83d".repeat(34), Some(102)),
            ("\\\"".repeat(101), Some(101)),
            ("x\\\\".repeat(51), Some(102)),
        ];
        for (literal, marker) in cases {
            let body = format!("{{\"method\":\"m\",\"params\":[\"{literal}\",\"after\"]}}");
            let mut elided = body.clone().into_bytes();
            elide_long_strings(&mut elided, 100);
            let value: Value = serde_json::from_slice(&elided).unwrap();
            match marker {
                Some(bytes) => assert_eq!(value["params"][0], too_large_marker(bytes), "{literal}"),
                None => assert_eq!(elided, body.as_bytes(), "{literal}"),
            }
            assert_eq!(value["params"][1], "after");
        }
        // A key that long makes the body invalid; an unterminated string is left alone.
        let key = format!("{{\"id\":1,\"method\":\"m\",\"params\":{{\"{}\":1}}}}", "k".repeat(200));
        assert_eq!(refused(&key).1, -32700);
        let mut open = format!("[\"{}\\", "x".repeat(200)).into_bytes();
        elide_long_strings(&mut open, 100);
        assert!(open.ends_with(b"x\\"));
    }

    proptest::proptest! {
        /// Any text as a JSON string: past the cap, a marker of its exact length; else kept.
        #[test]
        fn markers_say_the_exact_length(text in "\\PC{0,60}", max in 0u64..80) {
            let body = serde_json::to_vec(&serde_json::json!({ "params": [text, 1] })).unwrap();
            let mut elided = body.clone();
            elide_long_strings(&mut elided, max);
            let value: Value = serde_json::from_slice(&elided).unwrap();
            let marker = too_large_marker(text.len() as u64);
            // A marker longer than the literal it would replace is not written.
            let fits = serde_json::to_string(&text).unwrap().len() >= marker.to_string().len();
            let expected = if text.len() as u64 > max && fits { marker } else { Value::String(text) };
            proptest::prop_assert_eq!(&value["params"][0], &expected);
        }

        /// Any bytes: no panic.
        #[test]
        fn never_panics(body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200), max in 0u64..50) {
            let mut body = body;
            elide_long_strings(&mut body, max);
            let _ = decode(&mut body, Limits { max_string: max, max_decoded: 10_000 });
        }
    }

    #[test]
    fn what_a_message_decodes_to_is_bounded() {
        let zeros = format!("{{\"id\":9,\"method\":\"m\",\"params\":[{}0]}}", "0,".repeat(10_000));
        let (id, code, message) = refused(&zeros);
        assert_eq!((id, code), (Some(Value::from(9)), -32600));
        assert!(message.contains("too large once decoded"), "{message}");
        // A document's notification: its text is too large.
        let change = format!(
            "{{\"method\":\"textDocument/didChange\",\"params\":{{\"textDocument\":{{\"uri\":\"file:///a\",\"version\":3}},\"contentChanges\":[{}]}}}}",
            "{\"text\":\"x\"},".repeat(1000) + "{\"text\":\"\"}"
        );
        let Decoded::Message(Message::Notification(note)) = dec(&change, LIMITS) else { panic!() };
        assert_eq!(
            note.params["textDocument"],
            serde_json::json!({ "uri": "file:///a", "version": 3 })
        );
        assert_eq!(note.params["contentChanges"][0]["text"], too_large_marker(change.len() as u64));
        // Another notification: no parameters.
        let watched = format!(
            "{{\"method\":\"workspace/didChangeWatchedFiles\",\"params\":{{\"changes\":[{}0]}}}}",
            "0,".repeat(10_000)
        );
        let Decoded::Message(Message::Notification(note)) = dec(&watched, LIMITS) else { panic!() };
        assert_eq!(note.params, Value::Null);
    }

    #[test]
    fn keys_count_against_the_budget() {
        let keys: Vec<String> = (0..30).map(|n| format!("\"{n:099}\":1")).collect();
        let body = format!("{{\"id\":1,\"method\":\"m\",\"params\":{{{}}}}}", keys.join(","));
        assert_eq!(refused(&body).1, -32600);
    }

    #[test]
    fn the_cost_of_a_value_is_counted_high_enough() {
        assert!(std::mem::size_of::<Value>() <= VALUE_COST, "{}", std::mem::size_of::<Value>());
    }
}
