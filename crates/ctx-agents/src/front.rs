//! Front matter as the agents read it, on top of ctx's own reader
//! (`ctx_assemble::front_matter`), whose limits hold against YAML bombs: 64 KiB, 64 levels of
//! nesting, 100 000 values with aliases expanded.
//!
//! The agents differ in what they do with front matter they cannot parse: Claude Code quotes
//! top-level scalars that YAML would misread and tries again, then treats the file as having
//! none (the rule applies always); Cline drops the file; Cursor's parser is lenient. Each
//! dialect says which, with the position of the problem for its diagnostic.

use ctx_assemble::front_matter::{self, Limits};
use serde_json::{Map, Value};

/// How a value's type is named in messages (as the front matter of documents names it).
pub(crate) use ctx_assemble::front_matter::type_name;

/// A rule file's front matter, as far as it parses.
#[derive(Clone, Debug)]
pub(crate) struct Front<'a> {
    /// Whether the text starts with a front-matter block.
    pub(crate) present: bool,
    /// The mapping, when the block parses to one (an empty block is an empty mapping).
    pub(crate) map: Option<Map<String, Value>>,
    /// What is wrong when it does not: message, line and column in the file.
    pub(crate) error: Option<(String, u32, u32)>,
    /// The YAML between the delimiter lines.
    pub(crate) yaml: &'a str,
    /// The 1-based line of the file on which the YAML starts.
    pub(crate) yaml_line: u32,
    /// The text after the block (the whole text without one).
    pub(crate) body: &'a str,
    /// The 1-based line on which the body starts.
    pub(crate) body_line: u32,
}

/// Splits and parses the front matter of `text` strictly, as YAML.
pub(crate) fn read(text: &str) -> Front<'_> {
    let parsed = front_matter::parse_with(text, &Limits::default());
    let split = front_matter::split(text);
    let (yaml, yaml_line) = match &split {
        Some(s) => (s.yaml, 1 + text[..s.yaml_offset].matches('\n').count() as u32),
        None => ("", 1),
    };
    let map = parsed.front_matter.as_ref().and_then(|fm| fm.value.as_object().cloned());
    let error = match (&split, &map) {
        (Some(_), None) => Some(
            parsed
                .diagnostics
                .iter()
                .find(|d| d.code == ctx_diagnostics::Code::FrontMatter)
                .map(|d| (d.message.clone(), d.pos.line, d.pos.column))
                .unwrap_or_else(|| ("front matter is not a mapping".to_owned(), yaml_line, 1)),
        ),
        _ => None,
    };
    Front {
        present: split.is_some(),
        map,
        error,
        yaml,
        yaml_line,
        body: parsed.body,
        body_line: parsed.body_line,
    }
}

/// Claude Code's reading (`parseFrontmatter`): on a YAML error, the top-level `key: value`
/// lines whose value holds a character YAML would misread (`{}[]*&#!|>%@` and a backquote,
/// or `: `) are quoted and the YAML parsed again; if it still fails, the front matter counts
/// as empty and the body as the text after the block.
pub(crate) fn read_claude(text: &str) -> (Front<'_>, bool) {
    let front = read(text);
    if front.error.is_none() || !front.present {
        return (front, false);
    }
    let quoted = quote_scalars(front.yaml);
    let retried = format!("---\n{quoted}---\n");
    let again = read(&retried);
    let map = again.map.or_else(|| Some(Map::new()));
    let failed = again.error.is_some();
    (Front { map, error: if failed { front.error.clone() } else { None }, ..front }, failed)
}

/// The top-level scalar lines of `yaml` quoted where YAML would misread them.
fn quote_scalars(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let quoted = content.split_once(": ").and_then(|(key, value)| {
            let simple_key = !key.is_empty()
                && !key.starts_with([' ', '\t', '-', '#'])
                && key.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
            let value = value.trim();
            let risky = value
                .contains(['{', '}', '[', ']', '*', '&', '#', '!', '|', '>', '%', '@', '`'])
                || value.contains(": ");
            let already = value.starts_with(['"', '\'']);
            (simple_key && risky && !already && !value.is_empty()).then(|| {
                let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
                format!("{key}: \"{escaped}\"")
            })
        });
        match quoted {
            Some(q) => {
                out.push_str(&q);
                out.push('\n');
            }
            None => out.push_str(line),
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

impl Front<'_> {
    /// The value of `key`, when the mapping has it.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.map.as_ref().and_then(|m| m.get(key))
    }

    /// The 1-based line and column of `key:` in the file (the YAML's first line when the
    /// key is not written at the start of a line).
    pub(crate) fn key_at(&self, key: &str) -> (u32, u32) {
        for (i, line) in self.yaml.lines().enumerate() {
            if line.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with(':')) {
                return (self.yaml_line + i as u32, 1);
            }
        }
        (self.yaml_line, 1)
    }

    /// The 1-based line and column of the value of `key` (after `key:` and its spaces).
    pub(crate) fn value_at(&self, key: &str) -> (u32, u32) {
        for (i, line) in self.yaml.lines().enumerate() {
            if let Some(rest) = line.strip_prefix(key)
                && let Some(value) = rest.trim_start().strip_prefix(':')
            {
                let column = line.len() - value.trim_start().len() + 1;
                return (self.yaml_line + i as u32, column as u32);
            }
        }
        (self.yaml_line, 1)
    }

    /// The line of `key:` when its value is written unquoted and starts with `*`, which YAML
    /// reads as an alias (`globs: *.ts`), or a list item `- *…` under it.
    pub(crate) fn unquoted_star(&self, key: &str) -> Option<(u32, u32)> {
        let mut under = false;
        for (i, line) in self.yaml.lines().enumerate() {
            let line_no = self.yaml_line + i as u32;
            if let Some(rest) = line.strip_prefix(key)
                && let Some(value) = rest.trim_start().strip_prefix(':')
            {
                under = true;
                let v = value.trim_start();
                if v.starts_with('*') {
                    return Some((line_no, (line.len() - v.len() + 1) as u32));
                }
                continue;
            }
            if under {
                let t = line.trim_start();
                if let Some(item) = t.strip_prefix("- ") {
                    if item.trim_start().starts_with('*') {
                        let col = line.len() - item.trim_start().len() + 1;
                        return Some((line_no, col as u32));
                    }
                } else if !t.is_empty() && !line.starts_with([' ', '\t']) {
                    under = false;
                }
            }
        }
        None
    }
}

/// The strings of a value that is a string (split on commas when `comma`) or a list of
/// strings; `Err` with the value's type name otherwise.
pub(crate) fn strings(value: &Value, comma: bool) -> Result<Vec<String>, &'static str> {
    match value {
        Value::String(s) if comma => Ok(split_commas(s)),
        Value::String(s) => {
            Ok(vec![s.trim().to_owned()].into_iter().filter(|s| !s.is_empty()).collect())
        }
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(|s| s.trim().to_owned()).ok_or_else(|| type_name(v)))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| v.into_iter().filter(|s| !s.is_empty()).collect()),
        other => Err(type_name(other)),
    }
}

/// A comma-separated list of globs, commas inside braces kept (`{a,b}`).
pub(crate) fn split_commas(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_and_claude_readings() {
        let text = "---\npaths: **/*.ts\n---\nbody\n";
        let strict = read(text);
        assert!(strict.present && strict.map.is_none() && strict.error.is_some());
        assert_eq!(strict.unquoted_star("paths"), Some((2, 8)));
        let (claude, failed) = read_claude(text);
        assert!(!failed);
        assert_eq!(claude.get("paths"), Some(&Value::String("**/*.ts".into())));
        // A list item is not a top-level scalar: Claude's retry fails and the file has no
        // front matter, so the rule applies always.
        let (claude, failed) = read_claude("---\npaths:\n  - **/*.ts\n---\nbody\n");
        assert!(failed);
        assert_eq!(claude.map, Some(Map::new()));
        assert_eq!(claude.body, "body\n");
    }

    #[test]
    fn a_yaml_bomb_is_refused_by_the_shared_reader() {
        let mut yaml = String::from("a: &a [x,x,x,x,x,x,x,x,x,x]\n");
        for i in 1..12 {
            yaml.push_str(&format!(
                "{}: &{} [*{},*{},*{},*{},*{},*{},*{},*{},*{},*{}]\n",
                (b'a' + i) as char,
                (b'a' + i) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char,
                (b'a' + i - 1) as char
            ));
        }
        let text = format!("---\n{yaml}---\nbody\n");
        let front = read(&text);
        assert!(front.map.is_none());
        assert!(front.error.unwrap().0.contains("values"), "refused for its size");
        // Claude Code's retry quotes each top-level value: the aliases become plain strings,
        // nothing is expanded.
        let (claude, failed) = read_claude(&text);
        assert!(!failed);
        let map = claude.map.unwrap();
        assert_eq!(map.get("b"), Some(&Value::String("&b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]".into())));
    }

    #[test]
    fn lists_and_commas() {
        assert_eq!(split_commas("src/**, {a,b}.ts ,"), vec!["src/**", "{a,b}.ts"]);
        assert_eq!(strings(&Value::Bool(true), true), Err("a boolean"));
    }
}
