//! Python, by indentation: `def` and `class` open a block that the next line at or left of
//! its column ends; module-level assignments are constants.

use super::keywords::is_keyword;
use super::lexer::{Kind, Tok};
use super::scanner::Scanner;
use crate::symbols::lang::Lang;

impl Scanner<'_, '_> {
    /// Python, line by line: a line that starts at or left of an open definition's
    /// column ends it; `def` and `class` open one.
    pub(super) fn python(&mut self, i: usize, t: Tok) -> usize {
        if t.bol && self.parens == 0 && !self.continued(i) {
            while let Some(&(col, def)) = self.blocks.last() {
                if t.col > col {
                    break;
                }
                self.blocks.pop();
                let last = self.toks[..i].last().map_or(t.line, |p| p.end_line);
                self.end_def(Some(def), last);
            }
        }
        if t.kind == Kind::Punct {
            match t.p {
                b'(' | b'[' | b'{' => self.parens += 1,
                b')' | b']' | b'}' => self.parens = self.parens.saturating_sub(1),
                _ => {}
            }
        }
        if t.kind != Kind::Ident {
            return i + 1;
        }
        let word = self.text(i);
        // A module-level assignment, `NAME = …` or `NAME: Type = …`, defines a constant; it
        // ends where the next statement starts.
        if t.bol
            && t.col == 0
            && self.parens == 0
            && self.blocks.is_empty()
            && !is_keyword(Lang::Python, word)
            && ((self.is_punct(i + 1, b'=') && !self.is_punct(i + 2, b'='))
                || (self.is_punct(i + 1, b':')
                    && self.toks.get(i + 2).is_some_and(|n| n.line == t.line && !n.bol)))
        {
            let def = self.def(word, "constant", t.line);
            self.blocks.push((0, def));
            return i + 1;
        }
        match word {
            "def" | "class" if self.is_ident(i + 1) && !self.is_punct(i.wrapping_sub(1), b'.') => {
                let in_class = self
                    .blocks
                    .last()
                    .is_some_and(|&(_, d)| self.out.defs.get(d).is_some_and(|d| d.kind == "class"));
                let kind = match word {
                    "class" => "class",
                    _ if in_class => "method",
                    _ => "function",
                };
                // The block's column is the line's first token (`async`, a decorator's `@` is
                // on its own line).
                let first = self.line_col(i);
                let def = self.def(self.text(i + 1), kind, t.line);
                self.blocks.push((first, def));
                i + 2
            }
            _ => {
                if self.is_call(i) {
                    self.reference(i);
                }
                i + 1
            }
        }
    }

    /// Python: whether the line of token `i` continues the last one (a trailing `\`).
    fn continued(&self, i: usize) -> bool {
        let Some(prev) = i.checked_sub(1).map(|p| self.toks[p]) else { return false };
        let between = self.src.get(prev.end as usize..self.toks[i].start as usize).unwrap_or("");
        between.trim_start_matches([' ', '\t']).starts_with('\\')
    }
}
