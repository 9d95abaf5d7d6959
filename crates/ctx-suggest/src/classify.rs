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
    /// A data file, a lock file, minified or generated code ([`is_data_path`],
    /// [`is_generated`]) in an index that leaves them out: listed with its stamp, not read
    /// for its terms, never suggested.
    LeftOut,
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
            FileClass::LeftOut => "left-out",
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

/// Data formats, one record a line or a row (`turns.jsonl`, `results.csv`).
const DATA_EXTS: &[&str] = &["jsonl", "ndjson", "csv", "tsv", "geojson"];

/// JSON files that are manifests or configuration, not data: a prompt may well be about them.
fn is_config_json(stem: &str) -> bool {
    matches!(stem, "package" | "composer" | "deno" | "jsr" | "manifest")
        || ["tsconfig", "jsconfig", "appsettings"].iter().any(|p| stem.starts_with(p))
}

/// Whether `path` (relative, `/`-separated) names what the index leaves out unless told to
/// take data files in, by its name alone: data formats (JSON but for manifests and
/// configuration, JSON Lines, CSV, TSV), lock files (`Cargo.lock`, `package-lock.json`,
/// `yarn.lock`, `*.lock`, …; not `requirements.txt`, which people write), minified code and
/// source maps (`*.min.js`, `*.min.css`, `*.map`) and generated code by its name (`*.pb.go`,
/// `*_pb2.py`, `*.generated.*`, …). Files that say in their first lines that they were
/// generated are left out too ([`is_generated`]).
pub fn is_data_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or("");
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    DATA_EXTS.contains(&ext)
        || (ext == "json" && !is_config_json(stem))
        || LOCK_NAMES.contains(&name)
        || ext == "lock"
        || [".min.js", ".min.mjs", ".min.css", ".map"].iter().any(|x| name.ends_with(x))
        || [".pb.go", ".pb.cc", ".pb.h", "_pb2.py", "_pb2_grpc.py", ".pb.dart"]
            .iter()
            .any(|x| name.ends_with(x))
        || name.contains(".generated.")
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

/// Whether the first lines of a file say it was generated (`@generated`, `DO NOT EDIT`,
/// `auto-generated`, …).
pub fn is_generated(head: &str) -> bool {
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

    #[test]
    fn data_files_by_name() {
        for data in [
            "turns.jsonl",
            "data/results.CSV",
            "fixtures/rows.tsv",
            "events.ndjson",
            "src/locales/en.json",
            "Cargo.lock",
            "package-lock.json",
            "yarn.lock",
            "pnpm-lock.yaml",
            "poetry.lock",
            "ios/Podfile.lock",
            "static/app.min.js",
            "static/site.min.css",
            "static/app.js.map",
            "api/v1/service.pb.go",
            "proto/service_pb2.py",
            "src/schema.generated.ts",
        ] {
            assert!(is_data_path(data), "{data}");
        }
        for kept in [
            "src/main.rs",
            "package.json",
            "web/tsconfig.build.json",
            "deno.json",
            "requirements.txt",
            "Cargo.toml",
            "config.yaml",
            "src/jsonl.rs",
            "src/csv/reader.py",
            "app.js",
        ] {
            assert!(!is_data_path(kept), "{kept}");
        }
        assert!(is_generated("// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n"));
        assert!(is_generated("#!/bin/sh\n# @generated by make-tables\n"));
        assert!(!is_generated("//! Retries.\nfn main() {}\n"));
    }
}
