//! The language of a file, from its extension.

use serde::{Deserialize, Serialize};

/// The language of a file, from its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Lang {
    /// Rust (`.rs`).
    Rust,
    /// Python (`.py`, `.pyi`).
    Python,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// JavaScript (`.js`, `.jsx`, `.mjs`, `.cjs`).
    JavaScript,
    /// Go (`.go`).
    Go,
    /// C (`.c`, `.h`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`).
    Cpp,
    /// C# (`.cs`).
    CSharp,
    /// Java (`.java`).
    Java,
    /// Any other text: indexed as plain text.
    Other,
}

impl Lang {
    /// The language of a path, from its extension.
    pub fn of(path: &str) -> Lang {
        let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
        match ext {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            "go" => Lang::Go,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Lang::Cpp,
            "cs" => Lang::CSharp,
            "java" => Lang::Java,
            _ => Lang::Other,
        }
    }

    /// Whether files of this language are program source.
    pub fn is_code(self) -> bool {
        self != Lang::Other
    }

    /// The markers that start a line comment.
    pub(super) fn line_comments(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &["#"],
            Lang::Other => &["#", "//", "--", ";"],
            _ => &["//"],
        }
    }
}
