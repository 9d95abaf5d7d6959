//! The state of the pass over the tokens and the helpers every language shares: the
//! brackets matched ahead, the open braces and what each opened, the definition waiting for
//! its body, and the small questions asked of the tokens around one (is it a call, where do
//! its generic arguments end, what stands between a signature and its body).

use super::keywords::is_keyword;
use super::lexer::{ARROW, FAT_ARROW, Kind, PATH, Tok};
use crate::symbols::found::{Def, Found};
use crate::symbols::lang::Lang;

/// What a brace opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scope {
    /// Declarations: the file, a namespace or module, an `extern` block.
    Decl,
    /// Members: a class, struct, trait, interface or `impl` body, whose functions are methods.
    Members,
    /// Statements: a function's body or a block in one.
    Code,
    /// Anything else: fields, initialisers, object literals.
    Other,
}

/// A definition (or an `impl`, which has none) waiting for its body's brace.
#[derive(Clone, Copy)]
pub(super) struct Pending {
    pub(super) def: Option<usize>,
    pub(super) scope: Scope,
    pub(super) braces: usize,
    pub(super) parens: usize,
    /// The brace that opens its body, when known (any at its depth otherwise).
    pub(super) body: Option<usize>,
}

/// The pass over a file's tokens: what is open, what waits for its body, and what was found.
pub(super) struct Scanner<'s, 't> {
    pub(super) lang: Lang,
    pub(super) src: &'s str,
    pub(super) toks: &'t [Tok],
    /// For each `(`, `[` and `{` token, the index of its closing token (or the end).
    pub(super) close: Vec<u32>,
    /// For each `)`, `]` and `}` token, the index of its opening token (or `u32::MAX`).
    pub(super) open: Vec<u32>,
    /// For each token, the column of the first token on its line.
    line_cols: Vec<u32>,
    /// The open braces: what each opened, and the definition it ends.
    pub(super) braces: Vec<(Scope, Option<usize>)>,
    pub(super) parens: usize,
    pub(super) pending: Option<Pending>,
    /// Python: open definitions and their columns.
    pub(super) blocks: Vec<(u32, usize)>,
    /// C and C++ `typedef`: the brace depth and first token of the one open.
    pub(super) typedef: Option<(usize, usize)>,
    /// The end of the last group read whole (an import's braces, a Go `type (…)` group): a
    /// group inside it was read with it.
    pub(super) group_end: usize,
    /// TypeScript and JavaScript: for each token, the last statement that went on through it
    /// (its index in `statement_ends` plus one; 0 for none), and for each statement the column
    /// it was read with and its last line (see `statement_end`).
    pub(super) passed: Vec<u32>,
    pub(super) statement_ends: Vec<(u32, u32)>,
    pub(super) out: Found<'s>,
}

/// For each `(`, `[` and `{` token, the index of its closing token (or the end), and for each
/// `)`, `]` and `}` token, the index of its opening token (or `u32::MAX`). An unbalanced closer
/// closes what it matches and everything inside; one that matches nothing is passed over.
///
/// The open brackets of each kind are kept apart, so that the opener a closer matches is found
/// at once: looking for it down the one stack of all the open brackets took a file of `(`s
/// then `]`s quadratic time.
fn match_brackets(toks: &[Tok]) -> (Vec<u32>, Vec<u32>) {
    let mut close = vec![toks.len() as u32; toks.len()];
    let mut open = vec![u32::MAX; toks.len()];
    // The open brackets, and for each kind the places in `stack` of its own.
    let mut stack: Vec<usize> = Vec::new();
    let mut kinds: [Vec<usize>; 3] = Default::default();
    let kind = |p: u8| match p {
        b'(' | b')' => 0,
        b'[' | b']' => 1,
        _ => 2,
    };
    for (i, t) in toks.iter().enumerate() {
        if t.kind != Kind::Punct {
            continue;
        }
        match t.p {
            b'(' | b'[' | b'{' => {
                kinds[kind(t.p)].push(stack.len());
                stack.push(i);
            }
            b')' | b']' | b'}' => {
                let Some(&k) = kinds[kind(t.p)].last() else { continue };
                for &o in &stack[k..] {
                    close[o] = i as u32;
                }
                open[i] = stack[k] as u32;
                stack.truncate(k);
                for own in &mut kinds {
                    while own.last().is_some_and(|&at| at >= k) {
                        own.pop();
                    }
                }
            }
            _ => {}
        }
    }
    (close, open)
}

impl<'s, 't> Scanner<'s, 't> {
    pub(super) fn new(lang: Lang, src: &'s str, toks: &'t [Tok]) -> Scanner<'s, 't> {
        let (close, open) = match_brackets(toks);
        let mut col = 0;
        let line_cols = toks
            .iter()
            .map(|t| {
                if t.bol {
                    col = t.col;
                }
                col
            })
            .collect();
        Scanner {
            lang,
            src,
            toks,
            close,
            open,
            line_cols,
            braces: Vec::new(),
            parens: 0,
            pending: None,
            blocks: Vec::new(),
            typedef: None,
            group_end: 0,
            passed: Vec::new(),
            statement_ends: Vec::new(),
            out: Found::default(),
        }
    }

    pub(super) fn text(&self, i: usize) -> &'s str {
        self.toks
            .get(i)
            .map_or("", |t| self.src.get(t.start as usize..t.end as usize).unwrap_or(""))
    }

    pub(super) fn is_ident(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == Kind::Ident)
    }

    pub(super) fn is_punct(&self, i: usize, p: u8) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == Kind::Punct && t.p == p)
    }

    /// The innermost brace's scope; the file's is `Decl`.
    pub(super) fn scope(&self) -> Scope {
        self.braces.last().map_or(Scope::Decl, |b| b.0)
    }

    pub(super) fn def(&mut self, name: &str, kind: &str, line: u32) -> usize {
        self.out.defs.push(Def {
            name: name.to_owned(),
            kind: kind.to_owned(),
            start: line,
            end: line,
            doc: None,
        });
        self.out.defs.len() - 1
    }

    pub(super) fn reference(&mut self, i: usize) {
        let name = self.text(i);
        if !name.is_empty() && !is_keyword(self.lang, name) {
            self.out.refs.push(name);
        }
    }

    /// Defines the identifier at `name` and waits for its body.
    pub(super) fn define(
        &mut self,
        name: usize,
        kind: &str,
        start_line: u32,
        scope: Scope,
    ) -> usize {
        let text = self.text(name);
        let def = self.def(text, kind, start_line);
        self.wait(Some(def), scope);
        def
    }

    pub(super) fn wait(&mut self, def: Option<usize>, scope: Scope) {
        self.wait_for(def, scope, None);
    }

    /// [`Scanner::wait`] for the brace at `body` (any brace at this depth when `None`).
    pub(super) fn wait_for(&mut self, def: Option<usize>, scope: Scope, body: Option<usize>) {
        let (braces, parens) = (self.braces.len(), self.parens);
        self.pending = Some(Pending { def, scope, braces, parens, body });
    }

    pub(super) fn end_def(&mut self, def: Option<usize>, line: u32) {
        if let Some(d) = def.and_then(|d| self.out.defs.get_mut(d)) {
            d.end = d.end.max(line);
        }
    }

    /// A call: the identifier is followed by `(` (or Rust's `::<…>(`, or its macro `!`).
    pub(super) fn is_call(&self, i: usize) -> bool {
        if self.is_punct(i + 1, b'(') {
            return true;
        }
        self.lang == Lang::Rust
            && self.is_punct(i + 1, PATH)
            && self.is_punct(i + 2, b'<')
            && self.after_angles(i + 2).is_some_and(|k| self.is_punct(k, b'('))
    }

    /// Whether the identifier at `i` is followed by one of `next`.
    pub(super) fn is_ident_then(&self, i: usize, next: &[u8]) -> bool {
        self.is_ident(i) && next.iter().any(|&p| self.is_punct(i + 1, p))
    }

    /// The token after the `>` that closes the `<` at `open` (generic or template arguments),
    /// within 64 tokens and before a `;` or a closing brace; bracketed groups inside (a
    /// TypeScript default `= {}`) are skipped whole.
    pub(super) fn after_angles(&self, open: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut k = open;
        while k < (open + 64).min(self.toks.len()) {
            let t = self.toks[k];
            if t.kind == Kind::Punct {
                match t.p {
                    b'<' => depth += 1,
                    b'>' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(k + 1);
                        }
                    }
                    b'(' | b'[' | b'{' => k = self.close[k] as usize,
                    b';' | b')' | b']' | b'}' => return None,
                    _ => {}
                }
            }
            k += 1;
        }
        None
    }

    /// The column of the first token on the line of token `i` (of the last token past them),
    /// found when the scanner was made: looking back for it each time took a line of many
    /// definitions quadratic time.
    pub(super) fn line_col(&self, i: usize) -> u32 {
        self.line_cols.get(i).or(self.line_cols.last()).copied().unwrap_or(0)
    }

    /// After the `)` at `close`, skips what may stand between a signature and its body
    /// (return types, qualifiers, `throws`, a C++ initialiser list) and returns the token
    /// that ends it: `{`, `;` or (with `arrow`) `=>`; `None` when something else comes.
    pub(super) fn body_after(&self, close: usize, arrow: bool) -> Option<usize> {
        let mut k = close + 1;
        while k < self.toks.len() && k < close + 64 {
            let t = self.toks[k];
            match t.kind {
                Kind::Str => return None,
                Kind::Ident => {}
                Kind::Punct => match t.p {
                    b'{' | b';' => return Some(k),
                    FAT_ARROW if arrow || self.lang == Lang::CSharp => return Some(k),
                    b'(' | b'[' => k = self.close[k] as usize,
                    b':' | b',' | b'<' | b'>' | b'&' | b'*' | b'.' | b'|' | b'?' | PATH | ARROW => {
                    }
                    // C++ `= default;`, `= delete;`, and a pure virtual `= 0;`.
                    b'=' if self.lang == Lang::Cpp
                        && (self.is_punct(k + 1, b';') || self.is_ident(k + 1)) => {}
                    _ => return None,
                },
            }
            k += 1;
        }
        None
    }

    /// The names a class extends or implements are references: `class A extends B implements
    /// C` (Java, JavaScript, TypeScript), `class A : B, IC` (C#). Generic arguments are not.
    pub(super) fn heritage(&mut self, from: usize) {
        let mut k = from;
        let mut collecting = false;
        while k < self.toks.len() && k < from + 64 {
            let t = self.toks[k];
            if t.kind == Kind::Punct {
                match t.p {
                    b'{' | b';' => break,
                    b'<' => {
                        k = self.after_angles(k).unwrap_or(k + 1);
                        continue;
                    }
                    b':' => collecting = true,
                    b'(' => k = self.close[k] as usize,
                    _ => {}
                }
            } else if t.kind == Kind::Ident {
                match self.text(k) {
                    "extends" | "implements" => collecting = true,
                    "where" | "permits" => collecting = false,
                    _ if collecting && !self.is_punct(k + 1, b'.') => self.reference(k),
                    _ => {}
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

    /// The matching as it was first written: each closer looks down the one stack of open
    /// brackets for its opener.
    fn match_brackets_by_search(toks: &[Tok]) -> (Vec<u32>, Vec<u32>) {
        let mut close = vec![toks.len() as u32; toks.len()];
        let mut open = vec![u32::MAX; toks.len()];
        let mut stack: Vec<usize> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            if t.kind != Kind::Punct {
                continue;
            }
            let want = match t.p {
                b'(' | b'[' | b'{' => {
                    stack.push(i);
                    continue;
                }
                b')' => b'(',
                b']' => b'[',
                b'}' => b'{',
                _ => continue,
            };
            if let Some(k) = stack.iter().rposition(|&o| toks[o].p == want) {
                for &o in &stack[k..] {
                    close[o] = i as u32;
                }
                open[i] = stack[k] as u32;
                stack.truncate(k);
            }
        }
        (close, open)
    }

    proptest! {
        /// Brackets balanced or not, the kinds kept apart match as the search did.
        #[test]
        fn brackets_match_as_by_search(text in "[(){}\\[\\] a;]{0,300}") {
            let (toks, _) = lex(Lang::Rust, &text);
            prop_assert_eq!(match_brackets(&toks), match_brackets_by_search(&toks));
        }
    }
}
