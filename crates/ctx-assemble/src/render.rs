//! Rendering helpers (assembly.md §7): XML attribute escaping, neutralising content that
//! looks like the wrapper's tags, failure markers, Markdown fences and language tags.

use std::borrow::Cow;
use std::collections::BTreeMap;

use ctx_fs::SkipReason;
use ctx_syntax::Code;

/// Escapes an XML attribute value: `&`, `<`, `>` and `"` as entities, and line feeds,
/// carriage returns and tabs as character references (`&#10;`, `&#13;`, `&#9;`) so that
/// attribute-value normalisation does not turn them into spaces.
pub fn escape_attr(value: &str) -> Cow<'_, str> {
    let needs = |b: u8| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\n' | b'\r' | b'\t');
    let Some(first) = value.bytes().position(needs) else {
        return Cow::Borrowed(value);
    };
    let mut out = String::with_capacity(value.len() + 16);
    out.push_str(&value[..first]);
    for c in value[first..].chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The tag names of the XML wrapper that content must not open or close.
pub const WRAPPER_TAGS: [&str; 3] = ["system-reminder", "directory", "file"];

/// Content with wrapper-shaped tags neutralised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neutralized<'a> {
    /// The content; borrowed when nothing changed.
    pub text: Cow<'a, str>,
    /// How many `<` were written as `&lt;` (each one is worth counting in `W_ESCAPED`).
    pub escaped: usize,
}

impl Neutralized<'_> {
    /// The `W_ESCAPED` warning, if anything was escaped.
    pub fn warning(&self) -> Option<(Code, String)> {
        (self.escaped > 0).then(|| {
            let s = if self.escaped == 1 { "" } else { "s" };
            (
                Code::Escaped,
                format!(
                    "{} tag{s} shaped like the wrapper's (file, directory, system-reminder) escaped as &lt;",
                    self.escaped
                ),
            )
        })
    }
}

/// Whether the `<` at the start of `s` opens or closes a wrapper tag: `<`, an optional `/`,
/// one of [`WRAPPER_TAGS`] in any letter case, then whitespace, `/` or `>`.
fn opens_wrapper_tag(s: &[u8]) -> bool {
    let mut rest = &s[1..];
    if let [b'/', tail @ ..] = rest {
        rest = tail;
    }
    // A name at the very end of the content counts: the wrapper writes a line ending after
    // it, so `</system-reminder` there would close the frame.
    WRAPPER_TAGS.iter().any(|tag| {
        rest.len() >= tag.len()
            && rest[..tag.len()].eq_ignore_ascii_case(tag.as_bytes())
            && rest
                .get(tag.len())
                .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'))
    })
}

/// Writes every `<` that opens or closes something shaped like a wrapper tag (`<file`,
/// `</FILE >`, `</file\n>`, `<system-reminder/>` …) as `&lt;`; the rest of the content is
/// left as it is.
pub fn neutralize_tags(content: &str) -> Neutralized<'_> {
    let bytes = content.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut escaped = 0;
    let mut from = 0;
    while let Some(p) = memchr::memchr(b'<', &bytes[from..]) {
        let at = from + p;
        if opens_wrapper_tag(&bytes[at..]) {
            let buf = out.get_or_insert_with(|| String::with_capacity(content.len() + 16));
            buf.push_str(&content[copied..at]);
            buf.push_str("&lt;");
            copied = at + 1;
            escaped += 1;
        }
        from = at + 1;
    }
    let text = match out {
        None => Cow::Borrowed(content),
        Some(mut buf) => {
            buf.push_str(&content[copied..]);
            Cow::Owned(buf)
        }
    };
    Neutralized { text, escaped }
}

/// The one-line marker a failed item leaves in inline output: `<!-- ctx: CODE: message -->`.
///
/// A `--` in the message (a path such as `a--b.md`, or a `-->` that would end the comment
/// early) is written `- -`, and line breaks as spaces, so the marker stays one comment on one
/// line.
pub fn error_marker(code: Code, message: &str) -> String {
    let mut clean = message.replace(['\n', '\r'], " ");
    while clean.contains("--") {
        clean = clean.replace("--", "- -");
    }
    format!("<!-- ctx: {code}: {clean} -->")
}

/// The fence for a Markdown code block holding `content`: backticks, one more than the
/// longest run of backticks in the content, at least three.
pub fn fence(content: &str) -> String {
    let mut runs = BacktickRuns::default();
    runs.add(content);
    runs.fence()
}

/// The longest run of backticks in a text given in parts, for its Markdown fence.
#[derive(Debug, Default, Clone, Copy)]
pub struct BacktickRuns {
    longest: usize,
    /// The run the last part ended with, which the next part may continue.
    open: usize,
}

impl BacktickRuns {
    /// Adds the next part of the text.
    pub fn add(&mut self, part: &str) {
        let bytes = part.as_bytes();
        let carried = std::mem::take(&mut self.open);
        let mut from = 0;
        while let Some(at) = memchr::memchr(b'`', &bytes[from..]) {
            let start = from + at;
            let len = bytes[start..].iter().take_while(|&&b| b == b'`').count();
            let run = if start == 0 { carried + len } else { len };
            self.longest = self.longest.max(run);
            from = start + len;
            if from == bytes.len() {
                self.open = run;
            }
        }
    }

    /// The fence: backticks, one more than the longest run, at least three.
    pub fn fence(&self) -> String {
        "`".repeat((self.longest + 1).max(3))
    }
}

/// The language tag of a Markdown code block for a file, from its name or extension (any
/// letter case); the empty string when unknown.
pub fn language(path: &str) -> &'static str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let by_name = match name.to_ascii_lowercase().as_str() {
        "makefile" | "gnumakefile" => Some("makefile"),
        "dockerfile" | "containerfile" => Some("dockerfile"),
        "cmakelists.txt" => Some("cmake"),
        "cargo.lock" => Some("toml"),
        "justfile" => Some("just"),
        ".bashrc" | ".bash_profile" | ".profile" | ".zshrc" => Some("bash"),
        ".gitignore" | ".ignore" | ".ctxignore" | ".dockerignore" => Some("gitignore"),
        _ => None,
    };
    if let Some(lang) = by_name {
        return lang;
    }
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return "";
    };
    if stem.is_empty() {
        return "";
    }
    match ext.to_ascii_lowercase().as_str() {
        "rs" => "rust",
        "py" | "pyi" | "pyw" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "md" | "markdown" | "mdc" => "markdown",
        "json" | "jsonc" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "sh" | "bash" => "bash",
        "zsh" => "zsh",
        "fish" => "fish",
        "ps1" | "psm1" => "powershell",
        "bat" | "cmd" => "batch",
        "c" => "c",
        "h" | "cpp" | "cc" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "ipp" | "inl" => "cpp",
        "cs" => "csharp",
        "fs" | "fsx" => "fsharp",
        "vb" => "vbnet",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "scala" => "scala",
        "swift" => "swift",
        "m" => "objectivec",
        "mm" => "objectivecpp",
        "rb" => "ruby",
        "php" => "php",
        "pl" | "pm" => "perl",
        "lua" => "lua",
        "r" => "r",
        "jl" => "julia",
        "dart" => "dart",
        "ex" | "exs" => "elixir",
        "erl" | "hrl" => "erlang",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "clj" | "cljs" | "edn" => "clojure",
        "zig" => "zig",
        "nim" => "nim",
        "sql" => "sql",
        "html" | "htm" => "html",
        "xml" | "xsd" | "xsl" | "svg" | "plist" | "csproj" | "vcxproj" | "props" | "targets" => {
            "xml"
        }
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "vue" => "vue",
        "svelte" => "svelte",
        "graphql" | "gql" => "graphql",
        "proto" => "protobuf",
        "tf" | "hcl" => "hcl",
        "nix" => "nix",
        "cmake" => "cmake",
        "mk" => "makefile",
        "dockerfile" => "dockerfile",
        "ini" | "cfg" | "conf" => "ini",
        "diff" | "patch" => "diff",
        "tex" => "latex",
        "rst" => "rst",
        "csv" => "csv",
        "txt" => "text",
        _ => "",
    }
}

/// Whether a walk left an entry out because the sandbox refuses it (as opposed to a depth
/// limit or a link cycle).
pub(crate) fn is_refusal(reason: SkipReason) -> bool {
    reason.code().is_some()
}

/// The note for entries the sandbox refused in a walk: how many and why, never their
/// contents (`[... 2 entries skipped: 1 denied (E_DENIED), 1 outside the roots (E_OUTSIDE) ...]`).
pub(crate) fn skipped_note(skipped: &[ctx_fs::Skipped]) -> Option<String> {
    let mut by_code: BTreeMap<Code, usize> = BTreeMap::new();
    for s in skipped {
        if let Some(code) = s.reason.code() {
            *by_code.entry(code).or_default() += 1;
        }
    }
    let total: usize = by_code.values().sum();
    if total == 0 {
        return None;
    }
    let why: Vec<String> = by_code
        .iter()
        .map(|(code, n)| {
            let what = match code {
                Code::Denied => "denied",
                Code::Outside => "outside the roots",
                Code::BadPath => "invalid names",
                Code::NotRegular => "not regular files",
                Code::Permission => "permission denied",
                _ => "unreadable",
            };
            format!("{n} {what} ({code})")
        })
        .collect();
    let s = if total == 1 { "y" } else { "ies" };
    Some(format!("[... {total} entr{s} skipped: {} ...]", why.join(", ")))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn notes_for_refused_entries() {
        let skipped = |reason| ctx_fs::Skipped::new("x".into(), reason);
        assert_eq!(skipped_note(&[]), None);
        assert_eq!(skipped_note(&[skipped(SkipReason::Cycle)]), None);
        assert_eq!(
            skipped_note(&[
                skipped(SkipReason::Denied),
                skipped(SkipReason::Outside),
                skipped(SkipReason::Denied)
            ])
            .unwrap(),
            "[... 3 entries skipped: 1 outside the roots (E_OUTSIDE), 2 denied (E_DENIED) ...]"
        );
        assert_eq!(
            skipped_note(&[skipped(SkipReason::Denied)]).unwrap(),
            "[... 1 entry skipped: 1 denied (E_DENIED) ...]"
        );
    }

    #[test]
    fn attributes() {
        assert!(matches!(escape_attr("src/a.rs"), Cow::Borrowed("src/a.rs")));
        assert_eq!(
            escape_attr("a&b<c>\"d\"\ne\r\tf'"),
            "a&amp;b&lt;c&gt;&quot;d&quot;&#10;e&#13;&#9;f'"
        );
    }

    #[test]
    fn neutralizing() {
        let cases = [
            ("no tags <b>here</b> a<filed", "no tags <b>here</b> a<filed", 0),
            // At the very end: the wrapper's line ending would complete the tag.
            ("a</system-reminder", "a&lt;/system-reminder", 1),
            ("</file>", "&lt;/file>", 1),
            ("</FILE >", "&lt;/FILE >", 1),
            ("</file\n>", "&lt;/file\n>", 1),
            ("<File path=\"x\">", "&lt;File path=\"x\">", 1),
            ("<system-reminder/><Directory>", "&lt;system-reminder/>&lt;Directory>", 2),
            ("<files> <filex> <file-a> </dir>", "<files> <filex> <file-a> </dir>", 0),
            ("a < b <<file>", "a < b <&lt;file>", 1),
            ("</system-REMINDER\t>", "&lt;/system-REMINDER\t>", 1),
        ];
        for (input, expect, n) in cases {
            let got = neutralize_tags(input);
            assert_eq!(got.text, expect, "{input:?}");
            assert_eq!(got.escaped, n, "{input:?}");
            assert_eq!(matches!(got.text, Cow::Borrowed(_)), n == 0);
        }
        assert_eq!(neutralize_tags("<file>").warning().unwrap().0, Code::Escaped);
        assert_eq!(neutralize_tags("x").warning(), None);
    }

    #[test]
    fn markers() {
        assert_eq!(
            error_marker(Code::NotFound, "no such file: a.md"),
            "<!-- ctx: E_NOT_FOUND: no such file: a.md -->"
        );
        assert_eq!(
            error_marker(Code::NotFound, "no such file: a---b-->\nx"),
            "<!-- ctx: E_NOT_FOUND: no such file: a- - -b- -> x -->"
        );
    }

    #[test]
    fn fences() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a `b` c"), "```");
        assert_eq!(fence("```rust\n```"), "````");
        assert_eq!(fence("x ````` y ``"), "``````");
    }

    #[test]
    fn languages() {
        let cases = [
            ("src/a.rs", "rust"),
            ("x.py", "python"),
            ("x.ts", "typescript"),
            ("README.MD", "markdown"),
            ("a.json", "json"),
            ("Cargo.toml", "toml"),
            ("ci.yml", "yaml"),
            ("run.sh", "bash"),
            ("a.c", "c"),
            ("a.h", "cpp"),
            ("a.cc", "cpp"),
            ("a.hpp", "cpp"),
            ("a.cs", "csharp"),
            ("main.go", "go"),
            ("A.java", "java"),
            ("a.js", "javascript"),
            ("dir\\Makefile", "makefile"),
            ("Dockerfile", "dockerfile"),
            ("unknown.zzz", ""),
            ("noext", ""),
            (".hidden", ""),
        ];
        for (path, lang) in cases {
            assert_eq!(language(path), lang, "{path}");
        }
    }

    proptest! {
        /// Neutralised content has no wrapper-shaped tag left, and un-escaping gives it back.
        #[test]
        fn neutralize_roundtrip(text in "([<>/ a-zA-Z\n-]|file|FILE|directory|system-reminder){0,30}") {
            let n = neutralize_tags(&text);
            let bytes = n.text.as_bytes();
            for (i, &b) in bytes.iter().enumerate() {
                if b == b'<' {
                    prop_assert!(!opens_wrapper_tag(&bytes[i..]));
                }
            }
            prop_assert_eq!(n.text.replace("&lt;", "<"), text.replace("&lt;", "<"));
        }

        /// The fence is longer than any backtick run in the content.
        #[test]
        fn fence_is_longer(text in "[`a]{0,20}") {
            let f = fence(&text);
            prop_assert!(f.len() >= 3);
            prop_assert!(!text.contains(&f));
        }
    }
}
