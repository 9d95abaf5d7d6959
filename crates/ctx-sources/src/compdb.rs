//! `compile_commands.json` (the JSON compilation database of CMake, Ninja, Bear…): each
//! entry's `file`, joined to its `directory`. Whether it gives `command` or `arguments` does
//! not matter for the file it compiles.

use serde::Deserialize;

use crate::paths;

#[derive(Deserialize)]
struct Command {
    directory: String,
    file: String,
}

/// One translation unit: its file, absolute and normalised, and the 1-based line of the
/// entry that names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    pub(crate) path: String,
    pub(crate) line: u32,
}

/// The translation units of a compilation database, in order, each file once. `base` is the
/// database's own folder, which a relative `directory` is taken from.
pub(crate) fn parse(text: &str, base: &str) -> Result<Vec<Unit>, String> {
    let commands: Vec<serde_json::Value> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let lines = entry_lines(text);
    let mut seen = std::collections::HashSet::new();
    let mut units = Vec::new();
    for (i, value) in commands.into_iter().enumerate() {
        let command: Command = serde_json::from_value(value).map_err(|e| {
            format!("entry {}: {e} (each entry needs `directory` and `file`)", i + 1)
        })?;
        let Some(directory) = paths::absolute(base, &command.directory) else { continue };
        let Some(path) = paths::absolute(&directory, &command.file) else { continue };
        if seen.insert(path.clone()) {
            let line = lines.get(i).copied().unwrap_or(1);
            units.push(Unit { path, line });
        }
    }
    Ok(units)
}

/// The line on which each top-level entry of the array opens (`{` at depth 1), for messages.
fn entry_lines(text: &str) -> Vec<u32> {
    let mut lines = Vec::new();
    let (mut depth, mut line, mut in_string, mut escaped) = (0u32, 1u32, false, false);
    for b in text.bytes() {
        if b == b'\n' {
            line += 1;
        }
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                if b == b'{' && depth == 1 {
                    lines.push(line);
                }
                depth += 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    lines
}

/// The extensions of the headers taken from the folders of the translation units.
pub(crate) const HEADER_EXTENSIONS: &[&str] =
    &["h", "hh", "hpp", "hxx", "h++", "inl", "ipp", "tpp"];

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn files_join_their_directory_with_command_or_arguments() {
        let db = r#"[
  {"directory": "/build/app", "command": "cc -c ../../src/a.c", "file": "../../src/a.c"},
  {"directory": "/build", "arguments": ["c++", "-c", "/src/b.cpp"], "file": "/src/b.cpp",
   "output": "b.o"},
  {"directory": "rel", "arguments": [], "file": "c.c"},
  {"directory": "/build/app", "command": "cc", "file": "../../src/a.c"}
]"#;
        let units = parse(db, "/build").unwrap();
        assert_eq!(
            units,
            [
                Unit { path: "/src/a.c".into(), line: 2 },
                Unit { path: "/src/b.cpp".into(), line: 3 },
                Unit { path: "/build/rel/c.c".into(), line: 5 },
            ]
        );
    }

    #[test]
    fn a_bad_database_says_what_is_wrong() {
        assert!(parse("{", "/b").is_err());
        let err = parse(r#"[{"file": "a.c"}]"#, "/b").unwrap_err();
        assert!(err.contains("entry 1") && err.contains("directory"), "{err}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Any text: no panic; each unit needs an entry of its own, and each path is its
        /// `directory` and `file` joined.
        #[test]
        fn any_database_text_parses_or_fails_within_bounds(
            parts in prop::collection::vec(prop::sample::select(vec![
                "[", "]", "{", "}", ",", ":", "\"directory\"", "\"file\"", "\"command\"",
                "\"../src\"", "\"a.c\"", "\"/abs\"", "\"C:\\\\x\"", "\"\\u001b]0;x\\u0007\"",
                "\"\\ud83d\"", "\"..\\\\..\"", "null", "1e999", "\n", " ", "\"\"",
            ]), 0..120),
            noise in any::<String>(),
        ) {
            for text in [parts.concat(), noise] {
                let Ok(units) = parse(&text, "/b") else { continue };
                prop_assert!(units.len() <= text.len() / 20 + 1);
                for unit in &units {
                    prop_assert!(unit.path.len() <= text.len() + 3);
                    prop_assert!(unit.line as usize <= text.lines().count().max(1));
                }
            }
        }
    }
}
