//! C, C++, C# and Java: types and namespaces by keyword, functions and methods by shape (a
//! name, a balanced parameter list, then a body or `;` where declarations stand), C
//! `typedef`s, constructions, base classes, and C# properties.

use super::keywords::is_keyword;
use super::lexer::{ARROW, Kind, PATH};
use super::scanner::{Scanner, Scope};
use crate::symbols::lang::Lang;

impl Scanner<'_, '_> {
    /// A C-family function where declarations stand: `type name(…) … {` or `;`.
    /// Returns its kind and the token where its declaration begins.
    fn c_function(&self, i: usize) -> Option<(&'static str, usize)> {
        if !self.is_punct(i + 1, b'(') || is_keyword(self.lang, self.text(i)) {
            return None;
        }
        let scope = self.scope();
        if !matches!(scope, Scope::Decl | Scope::Members) {
            return None;
        }
        // A body or a `;` follows the parameters.
        self.body_after(self.close[i + 1] as usize, false)?;
        let prev = i.wrapping_sub(1);
        let qualified = self.is_punct(prev, PATH);
        let typed = self.is_ident(prev)
            || [b'*', b'&', b'>', b']', b'?', b'~', PATH].iter().any(|&p| self.is_punct(prev, p));
        // A constructor needs no type before it: it is named after its class.
        let ctor = scope == Scope::Members
            && self
                .braces
                .last()
                .and_then(|b| b.1)
                .and_then(|d| self.out.defs.get(d))
                .is_some_and(|d| d.name == self.text(i));
        if !(typed || ctor) {
            return None;
        }
        if self.is_ident(prev)
            && matches!(
                self.text(prev),
                "return" | "new" | "else" | "throw" | "case" | "goto" | "await"
            )
        {
            return None;
        }
        let kind = if scope == Scope::Members
            || qualified
            || self.lang == Lang::Java
            || self.lang == Lang::CSharp
        {
            "method"
        } else {
            "function"
        };
        Some((kind, self.decl_start(i, scope == Scope::Members)))
    }

    /// Where the declaration whose name is at `i` begins: at its type, qualifiers, modifiers
    /// and annotations (`@Name(…)`); `commas` lets it go back over `,` (template arguments in
    /// a class body, where no declarator list stands before a function).
    fn decl_start(&self, i: usize, commas: bool) -> usize {
        let mut start = i;
        while start > 0 && start + 24 > i {
            let p = self.toks[start - 1];
            if p.kind == Kind::Punct && p.p == b')' {
                let open = self.open[start - 1] as usize;
                if open != u32::MAX as usize
                    && open >= 2
                    && self.is_ident(open - 1)
                    && self.is_punct(open - 2, b'@')
                {
                    start = open - 2;
                    continue;
                }
            }
            let part = p.kind == Kind::Ident
                || (p.kind == Kind::Punct
                    && matches!(
                        p.p,
                        b'*' | b'&' | b'<' | b'>' | b'~' | b'@' | b'?' | b'[' | b']' | PATH
                    ))
                || (commas && p.kind == Kind::Punct && p.p == b',');
            if !part {
                break;
            }
            start -= 1;
        }
        start
    }

    /// A C or C++ identifier at `i`; returns the next token to look at.
    pub(super) fn c(&mut self, i: usize) -> usize {
        let line = self.toks[i].line;
        let word = self.text(i);
        let prev_member =
            self.is_punct(i.wrapping_sub(1), b'.') || self.is_punct(i.wrapping_sub(1), ARROW);
        if !prev_member {
            match word {
                "struct" | "class" | "union" | "enum" => {
                    let mut name = i + 1;
                    if word == "enum" && matches!(self.text(name), "class" | "struct") {
                        name += 1;
                    }
                    // Attributes and export macros between the keyword and the name.
                    while self.is_ident(name + 1) && !matches!(self.text(name + 1), "final") {
                        name += 1;
                    }
                    let mut after = name + 1;
                    if self.text(after) == "final" {
                        after += 1;
                    }
                    let has_body = self.is_punct(after, b'{')
                        || (self.is_punct(after, b':') && self.lang == Lang::Cpp);
                    if self.is_ident(name) && has_body {
                        let kind = match word {
                            "enum" => "enum",
                            "union" => "union",
                            "struct" if self.lang == Lang::C => "struct",
                            _ => "class",
                        };
                        // A header may be C++: a struct's body may hold methods.
                        let scope = if word == "enum" { Scope::Other } else { Scope::Members };
                        self.define(name, kind, line, scope);
                        if self.is_punct(after, b':') {
                            self.heritage_c(after);
                        }
                        return after;
                    }
                    if self.is_punct(i + 1, b'{') {
                        // Anonymous: its braces hold fields.
                        self.wait(None, Scope::Other);
                    }
                    return i + 1;
                }
                "namespace" => {
                    if self.is_ident(i + 1) {
                        let mut k = i + 1;
                        while self.is_punct(k + 1, PATH) && self.is_ident(k + 2) {
                            k += 2;
                        }
                        self.define(k, "module", line, Scope::Decl);
                        return k + 1;
                    }
                    self.wait(None, Scope::Decl);
                    return i + 1;
                }
                "extern"
                    if self.toks.get(i + 1).is_some_and(|t| t.kind == Kind::Str)
                        && self.is_punct(i + 2, b'{') =>
                {
                    self.wait(None, Scope::Decl);
                    return i + 2;
                }
                "typedef" if self.typedef.is_none() => {
                    self.typedef = Some((self.braces.len(), i + 1));
                    return i + 1;
                }
                "new" if self.is_ident(i + 1) => {
                    self.reference(i + 1);
                    return i + 2;
                }
                "operator" => return i + 1,
                _ => {}
            }
            if self.typedef.is_none()
                && let Some((kind, start)) = self.c_function(i)
            {
                let start_line = self.toks[start].line;
                self.define(i, kind, start_line, Scope::Code);
                return i + 1;
            }
        }
        if self.is_call(i) {
            self.reference(i);
        }
        i + 1
    }

    /// `class A : public B, C {`: the base names are references.
    fn heritage_c(&mut self, colon: usize) {
        let mut k = colon + 1;
        while k < self.toks.len() && k < colon + 48 && !self.is_punct(k, b'{') {
            if self.is_ident(k)
                && !matches!(self.text(k), "public" | "private" | "protected" | "virtual")
                && !self.is_punct(k + 1, PATH)
            {
                self.reference(k);
            }
            if self.is_punct(k, b'<') {
                // Template arguments are not bases.
                k = self.after_angles(k).unwrap_or(k + 1);
                continue;
            }
            k += 1;
        }
    }

    /// The name a C `typedef` declares: the `(*name)` of a function pointer, else the last
    /// identifier outside brackets.
    pub(super) fn typedef_name(&mut self, first: usize, semi: usize) {
        let line = self.toks[first].line;
        let mut depth = 0usize;
        let mut name = None;
        for k in first..semi {
            let t = self.toks[k];
            if t.kind == Kind::Punct {
                match t.p {
                    b'(' | b'[' | b'{' => {
                        if t.p == b'(' && self.is_punct(k + 1, b'*') && self.is_ident(k + 2) {
                            name = Some(k + 2);
                            break;
                        }
                        depth += 1;
                    }
                    b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            } else if t.kind == Kind::Ident && depth == 0 {
                name = Some(k);
            }
        }
        if let Some(n) = name {
            let text = self.text(n);
            let def = self.def(text, "type", line);
            self.end_def(Some(def), self.toks[semi].line);
        }
    }

    /// A Java or C# identifier at `i`; returns the next token to look at.
    pub(super) fn java(&mut self, i: usize) -> usize {
        let line = self.toks[i].line;
        let word = self.text(i);
        let prev_dot = self.is_punct(i.wrapping_sub(1), b'.');
        if !prev_dot {
            let type_kind = match word {
                "class" | "record" => Some("class"),
                "struct" if self.lang == Lang::CSharp => Some("struct"),
                "interface" => Some("interface"),
                "enum" => Some("enum"),
                _ => None,
            };
            if let Some(kind) = type_kind
                && self.is_ident(i + 1)
            {
                let kind = if self.is_punct(i.wrapping_sub(1), b'@') { "interface" } else { kind };
                let start = self.toks[self.decl_start(i, false)].line;
                self.define(i + 1, kind, start, Scope::Members);
                self.heritage(i + 2);
                return i + 2;
            }
            match word {
                "namespace" | "package" if self.is_ident(i + 1) => {
                    let mut k = i + 1;
                    while self.is_punct(k + 1, b'.') && self.is_ident(k + 2) {
                        k += 2;
                    }
                    if word == "namespace" {
                        self.define(k, "module", line, Scope::Decl);
                    }
                    return k + 1;
                }
                "new" if self.is_ident(i + 1) => {
                    self.reference(i + 1);
                    // An anonymous class: `new Base(…) {` holds members.
                    let mut k = i + 2;
                    while self.is_punct(k, b'.') && self.is_ident(k + 1) {
                        k += 2;
                    }
                    if self.is_punct(k, b'<') {
                        k = self.after_angles(k).unwrap_or(k);
                    }
                    if self.is_punct(k, b'(') {
                        let body = self.close[k] as usize + 1;
                        if self.is_punct(body, b'{') {
                            self.wait_for(None, Scope::Members, Some(body));
                        }
                    }
                    return i + 2;
                }
                "import" | "using" => {
                    // Imported names are not calls; skip to the end of the statement.
                    let mut k = i + 1;
                    while k < self.toks.len()
                        && !self.is_punct(k, b';')
                        && !self.is_punct(k, b'{')
                        && !self.is_punct(k, b'(')
                    {
                        k += 1;
                    }
                    return k;
                }
                _ => {}
            }
            if let Some((kind, start)) = self.c_function(i) {
                let start_line = self.toks[start].line;
                self.define(i, kind, start_line, Scope::Code);
                return i + 1;
            }
            // An enum constant with a body: `NAME(…) {` holds members.
            if self.scope() == Scope::Members
                && (self.is_punct(i.wrapping_sub(1), b'{')
                    || self.is_punct(i.wrapping_sub(1), b','))
                && self.is_punct(i + 1, b'(')
                && self.is_punct(self.close[i + 1] as usize + 1, b'{')
            {
                self.wait_for(None, Scope::Members, Some(self.close[i + 1] as usize + 1));
                return i + 1;
            }
            // A C# property: `Type Name { get; set; }`.
            if self.lang == Lang::CSharp
                && self.scope() == Scope::Members
                && self.is_punct(i + 1, b'{')
                && (self.is_ident(i.wrapping_sub(1))
                    || self.is_punct(i.wrapping_sub(1), b'>')
                    || self.is_punct(i.wrapping_sub(1), b'?'))
                && matches!(
                    self.text(i + 2),
                    "get" | "set" | "init" | "private" | "public" | "protected" | "internal"
                )
            {
                self.define(i, "property", line, Scope::Other);
                return i + 1;
            }
        }
        if self.is_call(i) {
            self.reference(i);
        }
        i + 1
    }
}
