//! YAML front matter of Markdown files (assembly.md §5).
//!
//! A Markdown file whose first line (after an optional UTF-8 BOM) is `---` starts with front
//! matter, closed by the next line that is `---` or `...` (trailing spaces, tabs and a
//! carriage return allowed on the delimiter lines; gray_matter allows any trailing
//! whitespace).
//! Without a closing line there is no front matter and the whole file is body.
//!
//! The split is done on the input bytes, so the body is exactly the bytes after the closing
//! line: CRLF line endings, leading blank lines and trailing whitespace all survive.
//! gray_matter, which the spec names as the reference splitter, normalises line endings, trims
//! the matter (changing the indentation of its first line) and trims leading blank lines off
//! the body, so its output is used as an oracle in the tests rather than as the source of the
//! bytes.
//!
//! The YAML is parsed with serde_yaml_ng into [`serde_json::Value`] through a visitor that
//! counts every value it builds, so an alias bomb ("billion laughs") fails after
//! [`Limits::max_values`] values instead of expanding; nesting and size are capped as well.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use ctx_syntax::{Code, Diagnostic, Position, Span};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Limits on the front matter of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest front matter, in bytes between the delimiter lines.
    pub max_bytes: usize,
    /// Deepest nesting of sequences and mappings.
    pub max_depth: usize,
    /// Most values (scalars, sequences and mappings, aliases counted at every use) the YAML
    /// may expand to.
    pub max_values: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_bytes: 64 * 1024, max_depth: 64, max_values: 100_000 }
    }
}

/// Where the front matter of a text is, found on the input bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the delimiter lines, exactly as in the file.
    pub yaml: &'a str,
    /// Byte offset of [`Split::yaml`] in the text.
    pub yaml_offset: usize,
    /// Everything after the closing line, byte for byte.
    pub body: &'a str,
    /// Byte offset of [`Split::body`] in the text.
    pub body_offset: usize,
    /// 1-based line of the text on which the body starts.
    pub body_line: u32,
}

/// Finds the front matter of a Markdown text, or `None` when the text has none.
///
/// This only splits; it does not look at the YAML or at the limits.
pub fn split(text: &str) -> Option<Split<'_>> {
    let start = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let mut lines = Lines { text, pos: start };
    let (first, _) = lines.next()?;
    if delimiter(first) != Some(Delimiter::Dashes) {
        return None;
    }
    let yaml_offset = lines.pos;
    if yaml_offset == text.len() && !text.ends_with('\n') {
        // A file that is just `---` has no line after the opening one.
        return None;
    }
    let mut line_no = 1u32;
    while let Some((line, line_start)) = lines.next() {
        line_no = line_no.saturating_add(1);
        if delimiter(line).is_some() {
            // The body starts on the next line, unless the closing line ends the text.
            let next_line = text[..lines.pos].ends_with('\n');
            return Some(Split {
                yaml: &text[yaml_offset..line_start],
                yaml_offset,
                body: &text[lines.pos..],
                body_offset: lines.pos,
                body_line: line_no.saturating_add(u32::from(next_line)),
            });
        }
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delimiter {
    Dashes,
    Dots,
}

fn delimiter(line: &str) -> Option<Delimiter> {
    match line.trim_end_matches([' ', '\t', '\r']) {
        "---" => Some(Delimiter::Dashes),
        "..." => Some(Delimiter::Dots),
        _ => None,
    }
}

/// Lines without their `\n`, with the byte offset of each; `pos` is the start of the next.
struct Lines<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (&'a str, usize);

    fn next(&mut self) -> Option<(&'a str, usize)> {
        let start = self.pos;
        if start >= self.text.len() {
            return None;
        }
        let rest = &self.text[start..];
        match rest.find('\n') {
            Some(i) => {
                self.pos = start + i + 1;
                Some((&rest[..i], start))
            }
            None => {
                self.pos = self.text.len();
                Some((rest, start))
            }
        }
    }
}

/// The front matter of one file, parsed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrontMatter {
    /// The whole front matter as parsed: what a reference record shows. An empty front
    /// matter is an empty object.
    pub value: Value,
    /// `description` (or `Description`); empty when missing or not a string.
    pub description: String,
    /// `params` (or `Params`): its strings, in order; a single string counts as one.
    pub params: Vec<String>,
    /// Every other key of the mapping.
    pub metadata: Map<String, Value>,
}

/// A text with its front matter taken off and parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<'a> {
    /// The text after the front matter, byte for byte; the whole text when it has none.
    pub body: &'a str,
    /// Byte offset of the body in the text.
    pub body_offset: usize,
    /// 1-based line of the text on which the body starts.
    pub body_line: u32,
    /// The parsed front matter; `None` when the text has none or it is invalid.
    pub front_matter: Option<FrontMatter>,
    /// `E_FRONT_MATTER` for invalid YAML or a limit exceeded, `W_FRONT_MATTER` for values of
    /// the wrong type; spans and positions are in the whole text.
    pub diagnostics: Vec<Diagnostic>,
}

/// The deepest nesting of flow sequences and mappings (`[` and `{`) in YAML text. A cheap
/// upper bound for the parser's depth check, read line by line: a bracket opens a collection
/// only where a value starts (after `key:`, `- `, `? `, at the start of a line, or inside
/// another flow collection), so brackets inside plain scalars, quoted scalars, comments and
/// the lines of a block scalar (`|`, `>`) are content. It never undercounts a well-formed
/// document.
fn flow_depth(yaml: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    // The indentation of the line whose value is a block scalar, while its lines go on.
    let mut block: Option<usize> = None;
    for line in yaml.split('\n') {
        let bytes = line.as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        if let Some(parent) = block {
            if line.trim().is_empty() || indent > parent {
                continue;
            }
            block = None;
        }
        let mut value_start = true;
        let mut i = indent;
        while i < bytes.len() {
            let b = bytes[i];
            let spaced = |j: usize| j >= bytes.len() || matches!(bytes[j], b' ' | b'\t' | b'\r');
            match b {
                b' ' | b'\t' | b'\r' => {}
                b'[' | b'{' if value_start || depth > 0 => {
                    depth += 1;
                    deepest = deepest.max(depth);
                    value_start = true;
                }
                b']' | b'}' if depth > 0 => {
                    depth -= 1;
                    value_start = false;
                }
                b',' if depth > 0 => value_start = true,
                b':' if spaced(i + 1) || depth > 0 => value_start = true,
                b'-' | b'?' if value_start && spaced(i + 1) => {}
                b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => break,
                b'"' if value_start => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    value_start = false;
                }
                b'\'' if value_start => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'\'' {
                        i += 1;
                    }
                    value_start = false;
                }
                b'|' | b'>' if value_start && depth == 0 => {
                    block = Some(indent);
                    break;
                }
                _ => value_start = false,
            }
            i += 1;
        }
    }
    deepest
}

fn capitalized(key: &str) -> String {
    let mut chars = key.chars();
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// Splits and parses the front matter of a Markdown text with the default [`Limits`].
///
/// The caller decides whether the file is Markdown ([`crate::is_markdown`]); this function
/// looks only at the text.
pub fn parse(text: &str) -> Parsed<'_> {
    parse_with(text, &Limits::default())
}

/// Splits and parses the front matter of a Markdown text with the given limits.
pub fn parse_with<'a>(text: &'a str, limits: &Limits) -> Parsed<'a> {
    let Some(split) = split(text) else {
        return Parsed {
            body: text,
            body_offset: 0,
            body_line: 1,
            front_matter: None,
            diagnostics: Vec::new(),
        };
    };
    let mut parsed = Parsed {
        body: split.body,
        body_offset: split.body_offset,
        body_line: split.body_line,
        front_matter: None,
        diagnostics: Vec::new(),
    };
    let at_start = |message: String| Diagnostic {
        code: Code::FrontMatter,
        message,
        span: Span::new(0, split.body_offset),
        pos: Position { line: 1, column: 1 },
    };
    if split.yaml.len() > limits.max_bytes {
        parsed.diagnostics.push(at_start(format!(
            "front matter is {} bytes, over the limit of {} bytes",
            split.yaml.len(),
            limits.max_bytes
        )));
        return parsed;
    }
    // The YAML parser's time grows faster than linearly with flow nesting (`[[[[…`), so the
    // nesting is measured first, on the bytes, and deep front matter is refused unparsed.
    let depth = flow_depth(split.yaml);
    if depth > limits.max_depth {
        parsed.diagnostics.push(at_start(format!(
            "front matter nests {depth} levels deep, over the limit of {}",
            limits.max_depth
        )));
        return parsed;
    }
    match parse_yaml(split.yaml, limits) {
        Ok(value) => {
            let (front_matter, notes) = extract(value);
            // A note is about `params` or `description`: point at that key's line.
            let first_line = 1 + text[..split.yaml_offset].matches('\n').count() as u32;
            let key_line = |message: &str| {
                let key = if message.contains("description") { "description" } else { "params" };
                // Both spellings given: the one ignored is the capitalized one.
                let both = message.starts_with("both ");
                split
                    .yaml
                    .lines()
                    .position(|line| {
                        let lower = if both { None } else { line.strip_prefix(key) };
                        lower
                            .or_else(|| line.strip_prefix(&capitalized(key)))
                            .is_some_and(|rest| rest.trim_start().starts_with(':'))
                    })
                    .map_or(1, |i| first_line + i as u32)
            };
            parsed.diagnostics.extend(notes.into_iter().map(|message| Diagnostic {
                code: Code::FrontMatterValue,
                pos: Position { line: key_line(&message), column: 1 },
                message,
                span: Span::new(0, split.body_offset),
            }));
            parsed.front_matter = Some(front_matter);
        }
        Err(err) => {
            parsed.diagnostics.push(yaml_error(text, &split, &err).unwrap_or_else(|| {
                at_start(format!("invalid front matter: {}", yaml_message(&err)))
            }));
        }
    }
    parsed
}

/// The diagnostic of a YAML error, at the YAML engine's own position: where the construct it
/// was reading starts (the quote of an unterminated string, the bracket of an unclosed list)
/// when the engine names one on an earlier line than where it gave up, else where it gave up.
/// `None` when the engine gives no position.
fn yaml_error(text: &str, split: &Split<'_>, err: &serde_yaml_ng::Error) -> Option<Diagnostic> {
    let problem = err.location()?;
    let mut at = (problem.line(), problem.column());
    let mut message = format!("invalid front matter: {}", yaml_message(err));
    if let Some((context, line, column)) = yaml_context(err)
        && line < at.0
    {
        at = (line, column);
        message = format!("{message} {context} that starts here");
    }
    // A duplicate key is reported at the mapping that holds it: point at its second entry.
    if let Some(line) = duplicate_line(split.yaml, &message, at) {
        at = (line, at.1);
    }
    // The offset of that line and column (in characters) of the YAML, within the file.
    let line_start: usize = split.yaml.split_inclusive('\n').take(at.0 - 1).map(str::len).sum();
    let within = split.yaml[line_start.min(split.yaml.len())..]
        .char_indices()
        .nth(at.1.saturating_sub(1))
        .map_or(split.yaml.len() - line_start.min(split.yaml.len()), |(i, _)| i);
    let offset = (split.yaml_offset + line_start + within).min(split.body_offset);
    let offset = floor_char_boundary(text, offset);
    let first_line = 1 + text[..split.yaml_offset].matches('\n').count();
    let number = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Some(Diagnostic {
        code: Code::FrontMatter,
        message,
        span: Span::new(offset, offset),
        pos: Position { line: number(first_line + at.0 - 1), column: number(at.1) },
    })
}

/// The line of the second entry of the key that `message` names as duplicate (`duplicate
/// key "b"`), in the mapping at `at` (its line and column): an entry is a line
/// whose text at that column is the key, plain or quoted, then `:`.
fn duplicate_line(yaml: &str, message: &str, at: (usize, usize)) -> Option<usize> {
    let key = message.split_once("duplicate key \"")?.1.rsplit_once('"')?.0;
    let indent = at.1.checked_sub(1)?;
    let entries = yaml.lines().enumerate().skip(at.0.checked_sub(1)?).filter(|(_, line)| {
        let rest = line.get(indent..).unwrap_or("");
        let before = line.get(..indent).unwrap_or("");
        // Blanks, or the `- ` of a list item whose mapping starts on its line.
        before.chars().all(|c| c == ' ' || c == '-')
            && [key.to_owned(), format!("\"{key}\""), format!("'{key}'")].iter().any(|k| {
                rest.strip_prefix(k.as_str()).is_some_and(|r| r.trim_start().starts_with(':'))
            })
    });
    entries.map(|(i, _)| i + 1).nth(1)
}

/// The construct libyaml was reading when it failed and where it starts (1-based line and
/// column of the YAML), from the end of its message: `…, while scanning a quoted scalar at
/// line 1 column 14`. serde_yaml_ng shows this mark only in the message.
fn yaml_context(err: &serde_yaml_ng::Error) -> Option<(String, usize, usize)> {
    let full = err.to_string();
    let (_, context) = full.rsplit_once(", while ")?;
    let (what, mark) = context.rsplit_once(" at line ")?;
    let (line, column) = mark.split_once(" column ")?;
    Some((format!("while {what}"), line.parse().ok()?, column.trim().parse().ok()?))
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// serde_yaml_ng's message without its own " at line L column C", which counts from the start
/// of the YAML rather than of the file.
fn yaml_message(err: &serde_yaml_ng::Error) -> String {
    let full = err.to_string();
    match full.find(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}

fn parse_yaml(yaml: &str, limits: &Limits) -> Result<Value, serde_yaml_ng::Error> {
    let budget = Budget { values: Cell::new(0), limits: *limits };
    let de = serde_yaml_ng::Deserializer::from_str(yaml);
    ValueSeed { budget: &budget, depth: 0 }.deserialize(de)
}

/// Takes `description`, `params` and `metadata` out of a parsed front matter; returns the
/// `W_FRONT_MATTER` messages.
fn extract(value: Value) -> (FrontMatter, Vec<String>) {
    let mut notes = Vec::new();
    let map = match value {
        Value::Null => Map::new(),
        Value::Object(map) => map,
        other => {
            notes.push(format!(
                "front matter is {}, not a mapping; description, params and metadata ignored",
                type_name(&other)
            ));
            return (FrontMatter { value: other, ..FrontMatter::default() }, notes);
        }
    };
    let mut fm = FrontMatter::default();
    let mut metadata = map.clone();
    let description = take_either(&mut metadata, "description", "Description", &mut notes);
    match description {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => fm.description = s,
        Some(other) => notes.push(format!(
            "description is {}, not a string; using the empty string",
            type_name(&other)
        )),
    }
    match take_either(&mut metadata, "params", "Params", &mut notes) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => fm.params.push(s),
        Some(Value::Array(items)) => {
            for (i, item) in items.into_iter().enumerate() {
                match item {
                    Value::String(s) => fm.params.push(s),
                    other => notes.push(format!(
                        "params item {} is {}, not a string; dropped",
                        i + 1,
                        type_name(&other)
                    )),
                }
            }
        }
        Some(other) => {
            notes.push(format!("params is {}, not a list of strings; dropped", type_name(&other)))
        }
    }
    fm.metadata = metadata;
    fm.value = Value::Object(map);
    (fm, notes)
}

/// Removes both spellings of a key; the lower-case one wins when both are there, and a note
/// says the other was ignored.
fn take_either(
    map: &mut Map<String, Value>,
    lower: &str,
    upper: &str,
    notes: &mut Vec<String>,
) -> Option<Value> {
    let upper_value = map.shift_remove(upper);
    let lower_value = map.shift_remove(lower);
    if lower_value.is_some() && upper_value.is_some() {
        notes.push(format!("both {lower} and {upper} are given; {upper} ignored"));
    }
    lower_value.or(upper_value)
}

/// How a value's type is named in messages: "a string", "a list", "null".
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Merges `params` across files: first-seen order, no duplicates.
#[derive(Debug, Clone, Default)]
pub struct ParamsMerger {
    seen: HashSet<String>,
    params: Vec<String>,
}

impl ParamsMerger {
    /// An empty merger.
    pub fn new() -> ParamsMerger {
        ParamsMerger::default()
    }

    /// Adds the params of one more file, in the order of the depth-first walk.
    pub fn extend<I, S>(&mut self, params: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for p in params {
            let p = p.as_ref();
            if !self.seen.contains(p) {
                self.seen.insert(p.to_string());
                self.params.push(p.to_string());
            }
        }
    }

    /// The params so far.
    pub fn params(&self) -> &[String] {
        &self.params
    }

    /// The merged params.
    pub fn into_params(self) -> Vec<String> {
        self.params
    }
}

struct Budget {
    values: Cell<usize>,
    limits: Limits,
}

impl Budget {
    fn count<E: de::Error>(&self) -> Result<(), E> {
        let n = self.values.get() + 1;
        self.values.set(n);
        if n > self.limits.max_values {
            return Err(E::custom(format_args!(
                "front matter expands to more than {} values (alias bomb?)",
                self.limits.max_values
            )));
        }
        Ok(())
    }
}

/// Builds a [`Value`] while counting values and depth.
#[derive(Clone, Copy)]
struct ValueSeed<'b> {
    budget: &'b Budget,
    depth: usize,
}

impl ValueSeed<'_> {
    fn enter<E: de::Error>(self) -> Result<Self, E> {
        if self.depth >= self.budget.limits.max_depth {
            return Err(E::custom(format_args!(
                "front matter is nested deeper than {} levels",
                self.budget.limits.max_depth
            )));
        }
        Ok(ValueSeed { budget: self.budget, depth: self.depth + 1 })
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a yaml value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.budget.count()?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.budget.count()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.budget.count()?;
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.budget.count()?;
        // JSON has no NaN or infinity: keep them as YAML writes them.
        Ok(Number::from_f64(v).map_or_else(
            || {
                let s = if v.is_nan() {
                    ".nan"
                } else if v > 0.0 {
                    ".inf"
                } else {
                    "-.inf"
                };
                Value::String(s.to_string())
            },
            Value::Number,
        ))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.budget.count()?;
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.budget.count()?;
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.budget.count()?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.budget.count()?;
        let inner = self.enter()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        self.budget.count()?;
        let inner = self.enter()?;
        let mut map = Map::new();
        while let Some(key) = access.next_key_seed(KeySeed { budget: self.budget })? {
            let value = access.next_value_seed(inner)?;
            if map.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

/// A mapping key: any scalar, written as a string.
struct KeySeed<'b> {
    budget: &'b Budget,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar key")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        self.budget.count()?;
        Ok(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        self.budget.count()?;
        Ok(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        self.budget.count()?;
        Ok(v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        self.budget.count()?;
        Ok(v.to_string())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        self.budget.count()?;
        Ok(v.to_string())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        self.budget.count()?;
        Ok(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        self.budget.count()?;
        Ok("null".to_string())
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::json;

    use super::*;

    fn fm(text: &str) -> FrontMatter {
        let parsed = parse(text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        parsed.front_matter.expect("front matter")
    }

    #[test]
    fn split_table() {
        // (input, yaml, body); `None` means no front matter.
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            ("---\na: 1\n---\nbody\n", Some(("a: 1\n", "body\n"))),
            ("---\r\na: 1\r\n---\r\n\r\nbody\r\n", Some(("a: 1\r\n", "\r\nbody\r\n"))),
            ("\u{feff}---\na: 1\n...\nbody", Some(("a: 1\n", "body"))),
            ("--- \t\na: 1\n---  \n  body  ", Some(("a: 1\n", "  body  "))),
            ("---\n---\n", Some(("", ""))),
            ("---\na: 1\n---", Some(("a: 1\n", ""))),
            ("---\n\n\n---\n\nx", Some(("\n\n", "\nx"))),
            ("---\na: 1\n", None),
            ("---", None),
            ("---x\na\n---\n", None),
            (" ---\na\n---\n", None),
            ("text\n---\na\n---\n", None),
            ("", None),
        ];
        for (input, expect) in cases {
            let got = split(input).map(|s| (s.yaml, s.body));
            assert_eq!(got, *expect, "{input:?}");
            if let Some(s) = split(input) {
                assert_eq!(&input[s.body_offset..], s.body);
                assert_eq!(&input[s.yaml_offset..s.yaml_offset + s.yaml.len()], s.yaml);
            }
        }
    }

    #[test]
    fn deep_flow_nesting_is_refused_before_parsing() {
        let deep = format!("---\nkey: {}\n---\nbody\n", "[".repeat(32_000));
        let parsed = parse(&deep);
        assert_eq!(parsed.body, "body\n");
        assert!(parsed.front_matter.is_none());
        assert_eq!(parsed.diagnostics.len(), 1);
        assert!(
            parsed.diagnostics[0].message.contains("32000 levels deep"),
            "{:?}",
            parsed.diagnostics
        );
        // Brackets in quotes and comments do not count; real nesting within the limit parses.
        let fine = "---\na: \"[[[[\"\nb: '{{{{' # [[[[\nc: [[1, 2], {d: [3]}]\n---\n";
        assert_eq!(flow_depth(fine.trim_matches('-')), 3);
        assert!(parse(fine).diagnostics.is_empty(), "{:?}", parse(fine).diagnostics);
        // Brackets in plain scalars and in the lines of block scalars are text.
        let brackets = "[".repeat(100);
        let text = format!(
            "---\nplain: a{brackets}\nfolded: >\n  {brackets}\n  more\nliteral: |-\n    {brackets}\nlist:\n  - x{brackets}\n  - [1, [2]]\n---\n"
        );
        assert_eq!(flow_depth(text.trim_matches('-')), 2);
        let parsed = parse(&text);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert!(parsed.front_matter.is_some());
        // A block scalar ends where the indentation comes back; nesting after it counts.
        assert_eq!(flow_depth("a: |\n  [[[\nb: [[[1]]]\n"), 3);
        assert_eq!(flow_depth("- [[x]]\n- {a: [b]}\n? [k]\n: v\n"), 2);
    }

    #[test]
    fn body_line() {
        let s = split("---\na: 1\nb: 2\n---\nbody").unwrap();
        assert_eq!(s.body_line, 5);
        assert_eq!(parse("no front matter").body_line, 1);
        // A closing line that ends the text: the (empty) body is on that line.
        assert_eq!(parse("---\na: 1\n---").body_line, 3);
    }

    #[test]
    fn extracts_fields() {
        let f = fm("---\nDescription: Rules\nparams: [a, b]\ntags: [x]\nauthor: me\n---\nbody");
        assert_eq!(f.description, "Rules");
        assert_eq!(f.params, ["a", "b"]);
        assert_eq!(json!(f.metadata), json!({"tags": ["x"], "author": "me"}));
        assert_eq!(f.value["Description"], "Rules");

        let f = fm("---\nParams: one\n---\n");
        assert_eq!(f.params, ["one"]);
        assert_eq!(f.description, "");
        assert!(f.metadata.is_empty());

        let f = fm("---\n---\nbody");
        assert_eq!(f.value, json!({}));
    }

    #[test]
    fn lower_case_key_wins() {
        let f = parse("---\ndescription: low\nDescription: up\n---\n").front_matter.unwrap();
        assert_eq!(f.description, "low");
        assert!(f.metadata.is_empty());
        // The spelling ignored is said, at its own line.
        let parsed = parse("---\nParams: [P]\ndescription: a\nparams: [p]\nDescription: b\n---\n");
        let said: Vec<(u32, &str)> =
            parsed.diagnostics.iter().map(|d| (d.pos.line, d.message.as_str())).collect();
        assert_eq!(
            said,
            [
                (5, "both description and Description are given; Description ignored"),
                (2, "both params and Params are given; Params ignored"),
            ]
        );
        assert_eq!(parsed.front_matter.unwrap().params, ["p"]);
    }

    #[test]
    fn wrong_types_warn() {
        let parsed = parse("---\ndescription: 3\nparams: [a, 1, {b: c}, d]\n---\nbody");
        let f = parsed.front_matter.unwrap();
        assert_eq!(f.description, "");
        assert_eq!(f.params, ["a", "d"]);
        let msgs: Vec<_> =
            parsed.diagnostics.iter().map(|d| (d.code, d.message.as_str())).collect();
        assert_eq!(
            msgs,
            [
                (
                    Code::FrontMatterValue,
                    "description is a number, not a string; using the empty string"
                ),
                (Code::FrontMatterValue, "params item 2 is a number, not a string; dropped"),
                (Code::FrontMatterValue, "params item 3 is a mapping, not a string; dropped"),
            ]
        );
        let parsed = parse("---\n- a\n- b\n---\n");
        assert_eq!(parsed.diagnostics[0].code, Code::FrontMatterValue);
        assert_eq!(parsed.front_matter.unwrap().value, json!(["a", "b"]));
    }

    #[test]
    fn scalar_kinds() {
        let f = fm(
            "---\nn: ~\nb: true\ni: -3\nu: 18446744073709551615\nf: 1.5\nnan: .nan\n1: int key\n---\n",
        );
        assert_eq!(
            json!(f.metadata),
            json!({"n": null, "b": true, "i": -3, "u": 18446744073709551615u64, "f": 1.5,
                   "nan": ".nan", "1": "int key"})
        );
    }

    #[test]
    fn invalid_yaml_has_file_line() {
        let text = "---\ntitle: ok\nbad: [unclosed\nmore: 1\n---\nbody\n";
        let parsed = parse(text);
        assert_eq!(parsed.body, "body\n");
        assert!(parsed.front_matter.is_none());
        let d = &parsed.diagnostics[0];
        assert_eq!(d.code, Code::FrontMatter);
        assert!(d.message.starts_with("invalid front matter: "), "{}", d.message);
        assert!(!d.message.contains(" at line "), "{}", d.message);
        // The error is reported where libyaml notices it, on a line of the front matter.
        assert!((3..=5).contains(&d.pos.line), "{d:?}");

        let parsed = parse("---\na: 1\n  b: 2\n---\n");
        assert_eq!(parsed.diagnostics[0].pos.line, 3, "{:?}", parsed.diagnostics);
    }

    #[test]
    fn an_unclosed_quote_or_bracket_is_reported_where_it_opens() {
        // The engine gives up at the end of the YAML (the closing `---`); the quote is the
        // mistake, and the engine's own mark of the scalar it was reading points at it.
        let text = "---\ndescription: \"unterminated\nparams: [a]\n---\nbody\n";
        let parsed = parse(text);
        let d = &parsed.diagnostics[0];
        assert_eq!((d.pos.line, d.pos.column), (2, 14), "{d:?}");
        assert_eq!(&text[d.span.start..], "\"unterminated\nparams: [a]\n---\nbody\n");
        assert_eq!(
            d.message,
            "invalid front matter: found unexpected end of stream while scanning a quoted scalar that starts here"
        );
        // An unclosed flow sequence, over a blank line: its bracket.
        let text = "---\na: [1, 2\n\nb: 3\n---\n";
        let d = &parse(text).diagnostics[0];
        assert_eq!((d.pos.line, d.pos.column, &text[d.span.start..d.span.start + 1]), (2, 4, "["));
        assert!(d.message.ends_with("while parsing a flow sequence that starts here"), "{d:?}");
        // A mistake on the line of its construct keeps the engine's point of failure: the bad
        // escape, not the quote; and a line with characters before it counts them as such.
        let text = "---\né: \"x\\q\"\n---\n";
        let d = &parse(text).diagnostics[0];
        assert_eq!((d.pos.line, d.pos.column), (2, 6), "{d:?}");
        assert_eq!(&text[d.span.start..d.span.start + 1], "\\");
        assert!(!d.message.contains("starts here"), "{d:?}");
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let parsed = parse("---\na: 1\na: 2\n---\n");
        assert_eq!(parsed.diagnostics[0].code, Code::FrontMatter);
        assert!(parsed.diagnostics[0].message.contains("duplicate key"));
        // At the second entry, at top level and nested.
        let line = |text: &str| parse(text).diagnostics[0].pos.line;
        assert_eq!(line("---\na: 1\nb: 2\nc: 3\nd: 4\nb: 5\n---\n"), 6);
        assert_eq!(line("---\nx:\n  b: 1\n  c: 2\n  'b': 3\nb: 4\n---\n"), 5);
        assert_eq!(line("---\nx:\n  - b: 1\n    b: 2\n    b: 3\n---\n"), 4);
    }

    #[test]
    fn billion_laughs_fails_fast() {
        let mut yaml = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["b", "c", "d", "e", "f", "g", "h", "i"];
        let mut prev = "a";
        for n in names {
            yaml.push_str(&format!("{n}: &{n} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
            prev = n;
        }
        let text = format!("---\n{yaml}---\nbody");
        let start = Instant::now();
        let parsed = parse(&text);
        // A guard against the expansion, not a speed test: expanded, it would take hours.
        assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
        assert_eq!(parsed.body, "body");
        assert!(parsed.front_matter.is_none());
        assert_eq!(parsed.diagnostics[0].code, Code::FrontMatter);
    }

    #[test]
    fn wide_alias_fan_out_is_bounded() {
        // One big anchor used many times: fewer jumps than serde_yaml_ng's own limit, but
        // millions of values.
        let items = vec!["x"; 2000].join(",");
        let mut yaml = format!("a: &a [{items}]\nb: [");
        yaml.push_str(&vec!["*a"; 2000].join(","));
        yaml.push_str("]\n");
        let text = format!("---\n{yaml}---\n");
        assert!(text.len() < 64 * 1024);
        let start = Instant::now();
        let parsed = parse(&text);
        // A guard against the expansion, not a speed test: expanded, it would take hours.
        assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
        assert!(parsed.diagnostics[0].message.contains("more than 100000 values"));
    }

    #[test]
    fn limits() {
        let deep = format!("---\na: {}1{}\n---\n", "[".repeat(100), "]".repeat(100));
        let parsed = parse(&deep);
        assert_eq!(parsed.diagnostics[0].code, Code::FrontMatter, "{:?}", parsed.diagnostics);

        let big = format!("---\na: \"{}\"\n---\nbody", "x".repeat(70_000));
        let parsed = parse(&big);
        assert_eq!(parsed.body, "body");
        assert!(parsed.diagnostics[0].message.contains("over the limit"));

        let small = Limits { max_depth: 2, ..Limits::default() };
        assert!(parse_with("---\na: [1]\n---\n", &small).diagnostics.is_empty());
        assert!(!parse_with("---\na: [[1]]\n---\n", &small).diagnostics.is_empty());
    }

    #[test]
    fn params_merger() {
        let mut m = ParamsMerger::new();
        m.extend(["b", "a"]);
        m.extend(vec!["a".to_string(), "c".to_string(), "b".to_string()]);
        m.extend(["c", "d"]);
        assert_eq!(m.params(), ["b", "a", "c", "d"]);
        assert_eq!(m.into_params(), ["b", "a", "c", "d"]);
    }

    /// Checks our split of `input` against gray_matter, the spec's reference splitter,
    /// allowing for what gray_matter changes: it normalises CRLF, trims the matter, trims
    /// leading blank lines off the body and drops the final line ending.
    fn check_against_gray_matter(input: &str) -> Result<(), String> {
        use gray_matter::engine::Engine;
        use gray_matter::{Matter, Pod};

        struct Raw;
        impl Engine for Raw {
            fn parse(_: &str) -> gray_matter::Result<Pod> {
                Ok(Pod::Null)
            }
        }
        let mut matter = Matter::<Raw>::new();
        matter.close_delimiter = Some("...".to_string());
        let theirs = matter.parse::<Pod>(input).map_err(|e| e.to_string())?;
        let Some(ours) = split(input) else {
            // gray_matter fills `matter` only when it saw a closing line.
            return if theirs.matter.is_empty() {
                Ok(())
            } else {
                Err(format!("gray_matter found {:?} in {input:?}", theirs.matter))
            };
        };
        let prefix = &input[..ours.yaml_offset];
        let closing = &input[ours.yaml_offset + ours.yaml.len()..ours.body_offset];
        if format!("{prefix}{}{closing}{}", ours.yaml, ours.body) != input {
            return Err(format!("pieces do not add up for {input:?}"));
        }
        if theirs.matter != ours.yaml.replace("\r\n", "\n").trim() {
            return Err(format!("matter {:?} vs {:?} in {input:?}", theirs.matter, ours.yaml));
        }
        let normalised = ours.body.replace("\r\n", "\n");
        let normalised = normalised.trim_start_matches('\n');
        let normalised = normalised.strip_suffix('\n').unwrap_or(normalised);
        if theirs.content != normalised {
            return Err(format!("body {:?} vs {:?} in {input:?}", theirs.content, ours.body));
        }
        Ok(())
    }

    #[test]
    fn agrees_with_gray_matter() {
        let inputs = [
            "---\na: 1\n---\nbody\n",
            "---\r\na: 1\r\nb: [x]\r\n---\r\n\r\nbody\r\nmore",
            "---\n  a: 1\n...\nbody",
            "--- \na: 1\n--- \nbody",
            "---\n\nkey: v\n\n---\n\n\ntext",
            "---\na: 1\nno close\n",
        ];
        for input in inputs {
            check_against_gray_matter(input).unwrap();
        }
    }

    proptest::proptest! {
        /// On generated documents our byte-exact split agrees with gray_matter.
        #[test]
        fn gray_matter_oracle(
            lines in proptest::collection::vec(
                proptest::sample::select(vec![
                    "---", "...", "--- ", "---\t", "a: 1", "b: [x]", "", "text", "  c: 2", "---x",
                    "# h",
                ]),
                1..10,
            ),
            crlf in proptest::bool::ANY,
            final_newline in proptest::bool::ANY,
        ) {
            let mut input = lines.join(if crlf { "\r\n" } else { "\n" });
            if final_newline {
                input.push_str(if crlf { "\r\n" } else { "\n" });
            }
            // gray_matter returns early on inputs no longer than the delimiter.
            proptest::prop_assume!(input.len() > 3);
            proptest::prop_assert_eq!(check_against_gray_matter(&input), Ok(()));
        }
    }
}
