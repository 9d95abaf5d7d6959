//! Go: functions, methods with their receiver, types and grouped types, calls.

use super::lexer::Kind;
use super::scanner::{Scanner, Scope};

impl Scanner<'_, '_> {
    /// A Go identifier at `i`; returns the next token to look at.
    pub(super) fn go(&mut self, i: usize) -> usize {
        let line = self.toks[i].line;
        let word = self.text(i);
        let after_dot = self.is_punct(i.wrapping_sub(1), b'.');
        if !after_dot {
            match word {
                "func" if self.is_ident(i + 1) => {
                    self.define(i + 1, "function", line, Scope::Code);
                    return i + 2;
                }
                "func" if self.is_punct(i + 1, b'(') => {
                    // A method: `func (r *Recv) Name(`.
                    let recv_end = self.close[i + 1] as usize;
                    if self.is_ident(recv_end + 1) && self.is_punct(recv_end + 2, b'(') {
                        self.define(recv_end + 1, "method", line, Scope::Code);
                        return recv_end + 2;
                    }
                }
                "type" if self.is_ident(i + 1) => {
                    let kind = match self.text(i + 2) {
                        "struct" => "struct",
                        "interface" => "interface",
                        _ => "type",
                    };
                    self.define(i + 1, kind, line, Scope::Other);
                    return i + 2;
                }
                "type" if self.is_punct(i + 1, b'(') => {
                    // A group: each line's first name is a type. A group inside another
                    // (never in code that compiles) was read with it: reading it again would
                    // define each name once per group around it.
                    if i < self.group_end {
                        return i + 1;
                    }
                    let end = self.close[i + 1] as usize;
                    self.group_end = end;
                    let mut k = i + 2;
                    while k < end {
                        let t = self.toks[k];
                        if t.bol && t.kind == Kind::Ident {
                            let def = self.def(self.text(k), "type", t.line);
                            let last = self.toks[k..end]
                                .iter()
                                .take_while(|u| u.line == t.line || !u.bol)
                                .last()
                                .map_or(t.line, |u| u.end_line);
                            self.end_def(Some(def), last);
                        }
                        k += 1;
                    }
                    return i + 1;
                }
                _ => {}
            }
        }
        if self.is_call(i) && !matches!(self.text(i.wrapping_sub(1)), "func") {
            self.reference(i);
        }
        i + 1
    }
}
