//! TypeScript, TSX and JavaScript, which may leave out semicolons: functions, classes,
//! interfaces, types, namespaces, `const` bindings whose value is a function (or that are
//! exported), methods and method signatures, imported names, calls and type annotations.

use super::keywords::is_keyword;
use super::lexer::{FAT_ARROW, Kind};
use super::scanner::{Scanner, Scope};
use crate::symbols::lang::Lang;

impl Scanner<'_, '_> {
    /// A TypeScript, TSX or JavaScript identifier at `i`; returns the next token to look at.
    pub(super) fn js(&mut self, i: usize) -> usize {
        let word = self.text(i);
        let prev_dot = self.is_punct(i.wrapping_sub(1), b'.');
        if prev_dot {
            if self.is_call(i) {
                self.reference(i);
            }
            return i + 1;
        }
        if let Some(next) = self.js_declaration(i, word) {
            return next;
        }
        // A type annotation, `x: Type` (TypeScript): types are capitalised, the values of
        // object literals seldom are.
        if self.lang != Lang::JavaScript
            && self.is_punct(i.wrapping_sub(1), b':')
            && word.starts_with(|c: char| c.is_ascii_uppercase())
        {
            self.reference(i);
        }
        if self.is_punct(i + 1, b'(') && !is_keyword(self.lang, word) {
            self.method_or_call(i, word);
        }
        i + 1
    }

    /// What the keyword at `i` declares (a function, class, interface, enum, type, namespace
    /// or binding), imports or constructs; returns the next token to look at, or `None` when
    /// `word` is no such keyword.
    fn js_declaration(&mut self, i: usize, word: &str) -> Option<usize> {
        let line = self.toks[i].line;
        let next = match word {
            "function" => {
                let name = if self.is_punct(i + 1, b'*') { i + 2 } else { i + 1 };
                if self.is_ident(name) {
                    self.define(name, "function", line, Scope::Code);
                    return Some(name + 1);
                }
                // An anonymous function: its body is a block of code, or the body of the
                // definition it is the value of (`const f = function () {`).
                if self.pending.is_none() {
                    self.wait(None, Scope::Code);
                }
                i + 1
            }
            "class" if self.is_ident(i + 1) && self.text(i + 1) != "extends" => {
                self.define(i + 1, "class", line, Scope::Members);
                self.heritage(i + 2);
                i + 2
            }
            "class" => {
                self.wait(None, Scope::Members);
                i + 1
            }
            "interface" if self.is_ident(i + 1) => {
                self.define(i + 1, "interface", line, Scope::Other);
                i + 2
            }
            "enum" if self.is_ident(i + 1) => {
                self.define(i + 1, "enum", line, Scope::Other);
                i + 2
            }
            "type"
                if self.is_ident(i + 1)
                    && (self.is_punct(i + 2, b'=') || self.is_punct(i + 2, b'<')) =>
            {
                let def = self.def(self.text(i + 1), "type", line);
                let end = self.statement_end(i + 2, self.line_col(i));
                self.end_def(Some(def), end);
                i + 2
            }
            "namespace" | "module" if self.is_ident_then(i + 1, b"{.") => {
                self.define(i + 1, "module", line, Scope::Decl);
                i + 2
            }
            "const" | "let" | "var" if self.is_ident(i + 1) => {
                self.binding(i);
                i + 2
            }
            "import" => {
                self.import_refs(i);
                i + 1
            }
            "new" if self.is_ident(i + 1) => {
                self.reference(i + 1);
                i + 2
            }
            _ => return None,
        };
        Some(next)
    }

    /// `const name = …` (or `let`, `var`, with or without a type) at `i`: a function when its
    /// value is one, a constant when it is exported.
    fn binding(&mut self, i: usize) {
        if !(self.is_punct(i + 2, b'=') || self.is_punct(i + 2, b':')) {
            return;
        }
        let line = self.toks[i].line;
        let exported = self.text(i.wrapping_sub(1)) == "export";
        let eq = if self.is_punct(i + 2, b'=') { Some(i + 2) } else { self.find_eq(i + 2) };
        let Some(eq) = eq else { return };
        let col = self.line_col(i);
        if let Some(body) = self.function_value(eq + 1) {
            let def = self.def(self.text(i + 1), "function", line);
            if self.is_punct(body, b'{') {
                self.wait_for(Some(def), Scope::Code, Some(body));
            } else {
                // An arrow function's expression body.
                let end = self.statement_end(body, col);
                self.end_def(Some(def), end);
            }
        } else if exported {
            let def = self.def(self.text(i + 1), "constant", line);
            let end = self.statement_end(eq + 1, col);
            self.end_def(Some(def), end);
        }
    }

    /// `word(` at `i`, not after a `.`: a method with its body, a method signature, or else a
    /// call.
    fn method_or_call(&mut self, i: usize, word: &str) {
        let line = self.toks[i].line;
        // A method: `name(…) {` or `name(…): Type {`, the brace on the line of the `)`
        // (without semicolons, `f(x)` may be followed by `if (y) {` on the next line).
        let close = self.close[i + 1] as usize;
        let signature = self.is_punct(close + 1, b'{') || self.is_punct(close + 1, b':');
        if let Some(body) = self.body_after(close, false).filter(|_| signature)
            && self.is_punct(body, b'{')
            && self.toks[body].line == self.toks[close].end_line
            && !self.is_punct(i.wrapping_sub(1), b'=')
        {
            let def = self.def(word, "method", line);
            self.wait_for(Some(def), Scope::Code, Some(body));
            return;
        }
        // A method signature (an interface's, a type literal's, an abstract method's):
        // `name(…): Type` first on its line, outside code.
        let modifier = matches!(
            self.text(i.wrapping_sub(1)),
            "abstract" | "public" | "private" | "protected" | "readonly" | "static"
        );
        if (self.toks[i].bol || modifier)
            && self.scope() != Scope::Code
            && (self.is_punct(close + 1, b':') || self.is_punct(close + 1, b';'))
        {
            let def = self.def(word, "method", line);
            let end = self.statement_end(close + 1, self.line_col(i));
            self.end_def(Some(def), end);
            return;
        }
        self.reference(i);
    }

    /// The last line of the statement that goes on at token `from`, in code that may leave
    /// out semicolons: it ends at a `;`, at the end of the block around it, or before the next
    /// line that starts at or left of `col` (the column of the line it began on). Brackets
    /// are skipped whole.
    ///
    /// A statement that goes on through token `from`, read with the same `col`, ends where it
    /// does: its answer is kept, so that the statements of a line of many definitions are not
    /// read to their end once each (which took quadratic time).
    fn statement_end(&mut self, from: usize, col: u32) -> u32 {
        let seen = self.passed.get(from).map_or(0, |&s| s as usize);
        if let Some(&(read_with, end)) =
            seen.checked_sub(1).and_then(|s| self.statement_ends.get(s))
            && read_with == col
        {
            return end;
        }
        if self.passed.is_empty() {
            self.passed = vec![0; self.toks.len()];
        }
        let id = u32::try_from(self.statement_ends.len() + 1).unwrap_or(u32::MAX);
        let end = self.read_statement(from, col, id);
        self.statement_ends.push((col, end));
        end
    }

    /// [`Scanner::statement_end`] read token by token, marking the tokens it goes on through
    /// with `id`.
    fn read_statement(&mut self, from: usize, col: u32, id: u32) -> u32 {
        let mut last = self.toks.get(from.wrapping_sub(1)).map_or(1, |t| t.end_line);
        let mut k = from;
        while let Some(&t) = self.toks.get(k) {
            if k > from && t.bol && t.col <= col {
                break;
            }
            if t.kind == Kind::Punct {
                match t.p {
                    b'(' | b'[' | b'{' => {
                        self.passed[k] = id;
                        let close = (self.close[k] as usize).min(self.toks.len() - 1);
                        last = self.toks[close].end_line;
                        k = close + 1;
                        continue;
                    }
                    b';' => return t.line,
                    b')' | b']' | b'}' => break,
                    _ => {}
                }
            }
            self.passed[k] = id;
            last = t.end_line;
            k += 1;
        }
        last
    }

    /// The `=` of `const name: Type = …`, on the same statement.
    fn find_eq(&self, from: usize) -> Option<usize> {
        let mut k = from;
        while k < self.toks.len() && k < from + 48 {
            let t = self.toks[k];
            if t.kind == Kind::Punct {
                match t.p {
                    b'=' => return Some(k),
                    b';' | b'{' | b'}' => return None,
                    b'(' | b'[' => k = self.close[k] as usize,
                    _ => {}
                }
            }
            k += 1;
        }
        None
    }

    /// Whether the value at `k` is a function (`function`, `async (…) =>`, `(…) =>`, `x =>`):
    /// the token its body starts with (for `function`, a `{` still to come).
    fn function_value(&self, mut k: usize) -> Option<usize> {
        if self.text(k) == "async" {
            k += 1;
        }
        if self.text(k) == "function" {
            let mut open = k + 1;
            while open < self.toks.len() && open < k + 4 && !self.is_punct(open, b'(') {
                open += 1;
            }
            let close = self.close.get(open).map_or(open, |&c| c as usize);
            return self.body_after(close, false).filter(|&b| self.is_punct(b, b'{'));
        }
        if self.is_punct(k, b'<') {
            // Generic arrow function: `<T>(…) =>`.
            k = self.after_angles(k)?;
        }
        let arrow = if self.is_punct(k, b'(') {
            self.body_after(self.close[k] as usize, true).filter(|&b| self.is_punct(b, FAT_ARROW))
        } else {
            (self.is_ident(k) && self.is_punct(k + 1, FAT_ARROW)).then_some(k + 1)
        };
        arrow.map(|a| a + 1)
    }

    /// `import { a, b as c } from '…'`: `a` and `b` are references.
    fn import_refs(&mut self, at: usize) {
        // Braces inside the braces of another import (never in code that compiles) were read
        // with them: reading them again would give each name once per group around it.
        if at < self.group_end {
            return;
        }
        // `import {`, `import type {` or `import name, {`.
        let at = if self.text(at + 1) == "type" { at + 1 } else { at };
        let open = if self.is_punct(at + 1, b'{') {
            at + 1
        } else if self.is_ident(at + 1)
            && self.is_punct(at + 2, b',')
            && self.is_punct(at + 3, b'{')
        {
            at + 3
        } else {
            return;
        };
        let end = self.close[open] as usize;
        self.group_end = end;
        let mut k = open + 1;
        while k < end {
            if self.is_ident(k) && self.text(k) != "type" {
                self.reference(k);
                if self.text(k + 1) == "as" {
                    k += 2;
                }
            }
            k += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::symbols::scan::lexer::lex;

    proptest! {
        /// Whatever the statements asked for and in whatever order, the kept answers are those
        /// of a scanner that reads each statement to its end (a new one, which has kept none).
        #[test]
        fn kept_statement_ends_are_read_ones(
            text in "([a-c ;=(){}\\[\\]]|\n {0,3}){0,200}",
            asks in prop::collection::vec((0usize..120, 0u32..4), 0..60),
            sorted in any::<bool>(),
        ) {
            let (toks, _) = lex(Lang::TypeScript, &text);
            let mut scanner = Scanner::new(Lang::TypeScript, &text, &toks);
            let mut asks = asks;
            if sorted {
                asks.sort_unstable();
            }
            for (from, col) in asks {
                let want = Scanner::new(Lang::TypeScript, &text, &toks).statement_end(from, col);
                prop_assert_eq!(scanner.statement_end(from, col), want, "{} {}", from, col);
            }
        }
    }
}
