//! `compile_commands.json` (the JSON compilation database of CMake, Ninja, Bear…): each
//! entry's `file`, joined to its `directory`, and the folders its `arguments` (or `command`)
//! search for headers (`-I`, `-isystem`, `-iquote`, `-idirafter`, `/I` of MSVC).

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

/// What a compilation database lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Database {
    /// The translation units, in order, each file once.
    pub(crate) units: Vec<Unit>,
    /// The folders searched for headers, absolute and normalised, each once, with the line of
    /// the first entry that names it; at most [`MAX_INCLUDE_DIRS`].
    pub(crate) includes: Vec<Unit>,
    /// Distinct header folders past [`MAX_INCLUDE_DIRS`].
    pub(crate) includes_left: usize,
}

/// Most distinct header folders taken from one database.
pub(crate) const MAX_INCLUDE_DIRS: usize = 256;

/// The translation units and header folders of a compilation database. `base` is the
/// database's own folder, which a relative `directory` is taken from.
pub(crate) fn parse(text: &str, base: &str) -> Result<Database, String> {
    let commands: Vec<serde_json::Value> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let lines = entry_lines(text);
    let mut seen = std::collections::HashSet::new();
    let mut dirs = std::collections::HashSet::new();
    let mut db = Database::default();
    for (i, value) in commands.into_iter().enumerate() {
        let line = lines.get(i).copied().unwrap_or(1);
        let args = arguments(&value);
        let command: Command = serde_json::from_value(value).map_err(|e| {
            format!("entry {}: {e} (each entry needs `directory` and `file`)", i + 1)
        })?;
        let Some(directory) = paths::absolute(base, &command.directory) else { continue };
        for dir in include_dirs(&args).into_iter().filter_map(|d| paths::absolute(&directory, d)) {
            if dirs.contains(&dir) {
                continue;
            }
            if db.includes.len() < MAX_INCLUDE_DIRS {
                dirs.insert(dir.clone());
                db.includes.push(Unit { path: dir, line });
            } else {
                dirs.insert(dir);
                db.includes_left += 1;
            }
        }
        let Some(path) = paths::absolute(&directory, &command.file) else { continue };
        if seen.insert(path.clone()) {
            db.units.push(Unit { path, line });
        }
    }
    Ok(db)
}

/// An entry's arguments: `arguments`, else `command` split as a shell splits it (quotes, and
/// a backslash before a blank, a quote or a backslash; other backslashes are kept, as in
/// Windows paths).
fn arguments(entry: &serde_json::Value) -> Vec<String> {
    if let Some(list) = entry.get("arguments").and_then(serde_json::Value::as_array) {
        return list.iter().filter_map(|a| a.as_str().map(str::to_owned)).collect();
    }
    let Some(command) = entry.get("command").and_then(serde_json::Value::as_str) else {
        return Vec::new();
    };
    let mut args = Vec::new();
    let (mut word, mut started, mut quote) = (String::new(), false, None::<char>);
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if started {
                    args.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, '\'' | '"') => (quote, started) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => word.push(c),
            (_, '\\')
                if chars
                    .peek()
                    .is_some_and(|n| n.is_whitespace() || matches!(n, '"' | '\'' | '\\')) =>
            {
                word.extend(chars.next());
                started = true;
            }
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        args.push(word);
    }
    args
}

/// The header folders that `args` name, as written (relative ones are the entry's
/// `directory`'s).
fn include_dirs(args: &[String]) -> Vec<&str> {
    // `/I` is MSVC's (cl, clang-cl); elsewhere `/I…` is an absolute path.
    let msvc = args.first().is_some_and(|cc| {
        let name = paths::file_name(&cc.replace('\\', "/")).to_ascii_lowercase();
        let stem = name.strip_suffix(".exe").unwrap_or(&name).to_owned();
        stem == "cl" || stem == "clang-cl"
    });
    let flags: &[&str] = if msvc {
        &["-isystem", "-iquote", "-idirafter", "-I", "/I", "-external:I", "/external:I"]
    } else {
        &["-isystem", "-iquote", "-idirafter", "-I", "--include-directory="]
    };
    let mut out = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        for flag in flags {
            if arg == *flag || (flag.ends_with('=') && arg == flag.trim_end_matches('=')) {
                if let Some(next) = args.get(i) {
                    out.push(next.as_str());
                    i += 1;
                }
                break;
            }
            if let Some(rest) = arg.strip_prefix(flag).filter(|r| !r.is_empty()) {
                out.push(rest);
                break;
            }
        }
    }
    out
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
        let units = parse(db, "/build").unwrap().units;
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
    fn header_folders_come_from_the_flags_of_arguments_or_command() {
        let db = r#"[
  {"directory": "/b", "arguments": ["c++", "-I../include", "-isystem", "/usr/include", "-iquote", "q", "-include", "pre.h", "-c", "/src/a.cpp"], "file": "/src/a.cpp"},
  {"directory": "/b", "command": "cc -I \"/p/my inc\" -I/p/x\\ y --include-directory=/p/z -c /src/b.c", "file": "/src/b.c"},
  {"directory": "/b", "command": "cl.exe /IC:\\lib\\inc /external:I ext /c a.c", "file": "/src/c.c"},
  {"directory": "/b", "command": "cc /Images/x.c -I../include", "file": "/Images/x.c"}
]"#;
        let dirs: Vec<String> =
            parse(db, "/b").unwrap().includes.into_iter().map(|u| u.path).collect();
        assert_eq!(
            dirs,
            [
                "/include",
                "/usr/include",
                "/b/q",
                "/p/my inc",
                "/p/x y",
                "/p/z",
                "C:/lib/inc",
                "/b/ext"
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
                let Ok(db) = parse(&text, "/b") else { continue };
                let units = db.units;
                prop_assert!(units.len() <= text.len() / 20 + 1);
                for unit in &units {
                    prop_assert!(unit.path.len() <= text.len() + 3);
                    prop_assert!(unit.line as usize <= text.lines().count().max(1));
                }
            }
        }
    }
}
