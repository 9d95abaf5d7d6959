//! What kind of file a path names: program source, a test, documentation,
//! a lock file, generated or vendored code, or something else.

use serde::{Deserialize, Serialize};

use crate::symbols::Lang;

/// The class of a file, which decides how much a match in it counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum FileClass {
    /// Program source.
    Source,
    /// A test, fixture or benchmark.
    Test,
    /// Documentation: Markdown, reStructuredText, plain text, changelogs.
    Doc,
    /// A dependency lock file.
    Lock,
    /// Generated code (`DO NOT EDIT`, `@generated`, minified files).
    Generated,
    /// Vendored or built code (`vendor/`, `third_party/`, `node_modules/`,
    /// `dist/`, `build/`).
    Vendored,
    /// Configuration and everything else that is text.
    Other,
    /// Binary, too large or unreadable: listed, not searched.
    Unreadable,
}

impl FileClass {
    /// The name used in explanations and JSON.
    pub fn name(self) -> &'static str {
        match self {
            FileClass::Source => "source",
            FileClass::Test => "test",
            FileClass::Doc => "doc",
            FileClass::Lock => "lock",
            FileClass::Generated => "generated",
            FileClass::Vendored => "vendored",
            FileClass::Other => "other",
            FileClass::Unreadable => "unreadable",
        }
    }
}

const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "__tests__",
    "testing",
    "spec",
    "specs",
    "e2e",
    "fixtures",
    "fixture",
    "testdata",
    "test_data",
    "benches",
    "bench",
    "benchmarks",
    "fuzz",
    "__mocks__",
    "mocks",
];
const DOC_DIRS: &[&str] = &["doc", "docs", "documentation", "man", "examples", "example"];
const VENDOR_DIRS: &[&str] =
    &["vendor", "vendored", "third_party", "thirdparty", "node_modules", "dist", "build", "out"];
const DOC_EXTS: &[&str] = &["md", "markdown", "rst", "txt", "adoc", "asciidoc", "org", "1", "5"];
const DOC_STEMS: &[&str] = &[
    "readme",
    "changelog",
    "changes",
    "history",
    "news",
    "license",
    "licence",
    "copying",
    "authors",
    "contributors",
    "contributing",
    "code_of_conduct",
    "security",
    "faq",
    "todo",
];
const LOCK_NAMES: &[&str] = &[
    "cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "poetry.lock",
    "pipfile.lock",
    "pdm.lock",
    "uv.lock",
    "go.sum",
    "composer.lock",
    "gemfile.lock",
    "flake.lock",
    "deno.lock",
    "packages.lock.json",
];

/// Classifies `path` (relative, `/`-separated); `head` is the start of the
/// file's text, where generated files say so.
pub fn classify(path: &str, head: &str) -> FileClass {
    let lower = path.to_ascii_lowercase();
    let mut comps: Vec<&str> = lower.split('/').collect();
    let name = comps.pop().unwrap_or("");
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    if LOCK_NAMES.contains(&name) || (stem.starts_with("requirements") && ext == "txt") {
        return FileClass::Lock;
    }
    if comps.iter().any(|c| VENDOR_DIRS.contains(c)) {
        return FileClass::Vendored;
    }
    if is_test_name(name, stem, ext) || comps.iter().any(|c| TEST_DIRS.contains(c)) {
        return FileClass::Test;
    }
    if DOC_EXTS.contains(&ext) || DOC_STEMS.contains(&stem) || DOC_STEMS.contains(&name) {
        return FileClass::Doc;
    }
    if comps.iter().any(|c| DOC_DIRS.contains(c)) {
        return FileClass::Doc;
    }
    if name.ends_with(".min.js")
        || name.ends_with(".map")
        || name.contains(".generated.")
        || name.ends_with("_pb2.py")
        || name.ends_with(".pb.go")
        || is_generated(head)
    {
        return FileClass::Generated;
    }
    if Lang::of(name).is_code() || CODE_EXTS.contains(&ext) {
        FileClass::Source
    } else {
        FileClass::Other
    }
}

/// Source extensions without a grammar here.
const CODE_EXTS: &[&str] = &[
    "vue", "svelte", "rb", "php", "kt", "kts", "swift", "scala", "m", "mm", "lua", "sh", "bash",
    "zsh", "ps1", "pl", "pm", "r", "jl", "ex", "exs", "erl", "hs", "ml", "mli", "fs", "dart",
    "zig", "nim", "sql", "proto",
];

fn is_test_name(name: &str, stem: &str, ext: &str) -> bool {
    name == "conftest.py"
        || name == "tests.rs"
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || ((stem.ends_with(".test") || stem.ends_with(".spec")) && !ext.is_empty())
        || (ext == "java" && (stem.starts_with("test") || stem.ends_with("test")))
}

/// Whether the first lines of a file say it was generated.
fn is_generated(head: &str) -> bool {
    head.lines().take(5).any(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("@generated")
            || l.contains("do not edit")
            || l.contains("auto-generated")
            || l.contains("autogenerated")
            || l.contains("automatically generated")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(path: &str, class: FileClass) {
        assert_eq!(classify(path, ""), class, "{path}");
    }

    #[test]
    fn classes() {
        check("src/retry.rs", FileClass::Source);
        check("tests/retry.rs", FileClass::Test);
        check("httpx/_client.py", FileClass::Source);
        check("tests/test_client.py", FileClass::Test);
        check("src/hono.test.ts", FileClass::Test);
        check("src/utils/url_test.go", FileClass::Test);
        check("crates/core/tests.rs", FileClass::Test);
        check("CHANGELOG.md", FileClass::Doc);
        check("docs/api.py", FileClass::Doc);
        check("LICENSE", FileClass::Doc);
        check("Cargo.lock", FileClass::Lock);
        check("requirements-dev.txt", FileClass::Lock);
        check("vendor/lib.js", FileClass::Vendored);
        check("app.min.js", FileClass::Generated);
        check("Cargo.toml", FileClass::Other);
        check("deno_dist/hono.ts", FileClass::Source);
        assert_eq!(
            classify("gen.rs", "// Code generated by x. DO NOT EDIT.\n"),
            FileClass::Generated
        );
    }
}
