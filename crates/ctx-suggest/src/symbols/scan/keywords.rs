//! The words of each language that look like calls or names but are not.

use crate::symbols::lang::Lang;

/// Words that look like calls or names but are not (`if (…)`, `return (…)`, `sizeof(…)`).
pub(super) fn is_keyword(lang: Lang, word: &str) -> bool {
    const COMMON: &[&str] = &[
        "if", "else", "for", "while", "switch", "return", "case", "catch", "do", "try", "throw",
        "in", "as", "await", "yield", "super", "this", "self", "with", "import", "static", "const",
        "void", "default", "function", "class", "struct", "enum", "union",
    ];
    const RUST: &[&str] = &[
        "match", "loop", "let", "fn", "impl", "mut", "ref", "move", "dyn", "unsafe", "async",
        "where", "Self",
    ];
    const PYTHON: &[&str] = &[
        "not", "and", "or", "is", "lambda", "assert", "elif", "except", "from", "pass", "raise",
        "del", "global", "nonlocal", "def", "print", "finally",
    ];
    const JS: &[&str] = &[
        "typeof",
        "instanceof",
        "of",
        "let",
        "var",
        "async",
        "satisfies",
        "keyof",
        "new",
        "delete",
    ];
    const GO: &[&str] = &["go", "defer", "select", "func", "chan", "range", "map", "type"];
    const C: &[&str] = &[
        "sizeof",
        "alignof",
        "alignas",
        "decltype",
        "static_assert",
        "noexcept",
        "defined",
        "template",
        "typename",
        "operator",
        "goto",
        "typeid",
        "namespace",
        "using",
        "new",
        "delete",
    ];
    const CSHARP: &[&str] = &[
        "sizeof",
        "typeof",
        "nameof",
        "lock",
        "fixed",
        "checked",
        "unchecked",
        "using",
        "foreach",
        "when",
        "base",
        "is",
        "namespace",
        "stackalloc",
        "new",
    ];
    const JAVA: &[&str] = &["synchronized", "instanceof", "assert", "new"];
    let own = match lang {
        Lang::Rust => RUST,
        Lang::Python => PYTHON,
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => JS,
        Lang::Go => GO,
        Lang::C | Lang::Cpp => C,
        Lang::CSharp => CSHARP,
        Lang::Java => JAVA,
        Lang::Other => &[],
    };
    COMMON.contains(&word) || own.contains(&word)
}
