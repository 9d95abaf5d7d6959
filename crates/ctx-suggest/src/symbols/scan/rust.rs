//! Rust: items (`fn`, `struct`, `trait`, `mod`, `const`, `macro_rules!`, …), `impl` blocks
//! with the trait and type they name, calls and macro calls.

use super::lexer::{Kind, PATH};
use super::scanner::{Scanner, Scope};

impl Scanner<'_, '_> {
    /// A Rust identifier at `i`; returns the next token to look at.
    pub(super) fn rust(&mut self, i: usize) -> usize {
        let line = self.toks[i].line;
        let word = self.text(i);
        let after_path =
            self.is_punct(i.wrapping_sub(1), b'.') || self.is_punct(i.wrapping_sub(1), PATH);
        if !after_path {
            let next_ident = self.is_ident(i + 1);
            let kind = match word {
                "fn" if next_ident => {
                    Some(if self.scope() == Scope::Members { "method" } else { "function" })
                }
                "struct" | "enum" | "trait" | "type" | "mod" if next_ident => Some(word),
                "union" if next_ident && self.is_ident_then(i + 1, b"{<(") => Some("union"),
                "const" | "static" if next_ident => {
                    let name = self.text(i + 1);
                    (!matches!(name, "fn" | "unsafe" | "async" | "extern" | "_")).then_some(word)
                }
                "macro_rules" if self.is_punct(i + 1, b'!') && self.is_ident(i + 2) => {
                    self.define(i + 2, "macro", line, Scope::Other);
                    return i + 3;
                }
                "impl" => {
                    self.impl_refs(i);
                    self.wait(None, Scope::Members);
                    return i + 1;
                }
                "extern" if self.toks.get(i + 1).is_some_and(|t| t.kind == Kind::Str) => {
                    if self.is_punct(i + 2, b'{') {
                        self.wait(None, Scope::Decl);
                    }
                    return i + 2;
                }
                _ => None,
            };
            if let Some(kind) = kind {
                let name =
                    if kind == "static" && self.text(i + 1) == "mut" { i + 2 } else { i + 1 };
                if !self.is_ident(name) {
                    return name;
                }
                let (kind, scope) = match kind {
                    "function" | "method" => (kind, Scope::Code),
                    "trait" => (kind, Scope::Members),
                    "mod" => ("module", Scope::Decl),
                    "const" | "static" => ("constant", Scope::Other),
                    _ => (kind, Scope::Other),
                };
                self.define(name, kind, line, scope);
                return name + 1;
            }
        }
        if self.is_call(i)
            || (self.is_punct(i + 1, b'!')
                && self
                    .toks
                    .get(i + 2)
                    .is_some_and(|t| t.kind == Kind::Punct && matches!(t.p, b'(' | b'[' | b'{')))
        {
            self.reference(i);
        }
        i + 1
    }

    /// `impl<T> Trait<T> for Type<T> where … {`: the trait and the type are references.
    fn impl_refs(&mut self, at: usize) {
        let mut last = None;
        let mut k = at + 1;
        while k < self.toks.len() && k < at + 64 {
            let t = self.toks[k];
            match t.kind {
                Kind::Punct => match t.p {
                    b'<' => {
                        k = self.after_angles(k).unwrap_or(k + 1);
                        continue;
                    }
                    b'{' | b';' => break,
                    _ => {}
                },
                Kind::Ident => match self.text(k) {
                    "for" => {
                        if let Some(l) = last.take() {
                            self.reference(l);
                        }
                    }
                    "where" => break,
                    "dyn" | "impl" | "mut" | "const" | "unsafe" => {}
                    _ => last = Some(k),
                },
                _ => {}
            }
            k += 1;
        }
        if let Some(l) = last {
            self.reference(l);
        }
    }
}
