//! Differential property test: random directive programs, well-formed and ill-formed, run
//! through scan + preprocess and through a small reference interpreter that works on the
//! program's structure instead of its text. Both must give the same output text and the same
//! diagnostics, codes and positions.

use ctx_preprocess::{Macros, preprocess};
use ctx_syntax::Options;
use proptest::prelude::*;

const NAMES: [&str; 3] = ["A", "B", "C"];
/// Literal operands and values: as written between the quotes, and as meant.
const LITS: [(&str, &str); 12] = [
    ("", ""),
    ("x", "x"),
    ("ab", "ab"),
    ("a\\nb", "a\nb"),
    ("\\u0041b", "Ab"),
    ("q\\\"", "q\""),
    ("x}y", "x}y"),
    ("^a", "^a"),
    ("b$", "b$"),
    ("(", "("),
    ("a|x", "a|x"),
    ("\\\\w+", "\\w+"),
];
const OPS: [&str; 6] = ["IS", "ISNT", "CONTAINS", "DOESNT_CONTAIN", "MATCHES", "DOESNT_MATCH"];
const TEXTS: [&str; 8] = ["a", "b c", "", "x.y", " ", "\t", "é", "1 \t 2"];
const UNKNOWN: [&str; 5] = ["bogus thing", "if A", "1x", "define", "else x"];
const BLANKS: [&str; 4] = ["", " ", "\t", "  \t"];

#[derive(Debug, Clone, Copy)]
enum Operand {
    Lit(usize),
    Macro(usize),
}

#[derive(Debug, Clone, Copy)]
struct Cond {
    name: usize,
    op: usize,
    operand: Operand,
}

#[derive(Debug, Clone, Copy)]
enum Dir {
    Define(usize, Option<usize>),
    Undef(usize),
    Ifdef(usize),
    Ifndef(usize),
    If(Cond),
    Elif(Cond),
    Else,
    Endif,
    Subst(usize),
    Include,
    Unknown(usize),
}

impl Dir {
    fn render(self) -> String {
        let cond = |c: Cond| {
            let operand = match c.operand {
                Operand::Lit(i) => format!("\"{}\"", LITS[i].0),
                Operand::Macro(i) => NAMES[i].to_owned(),
            };
            format!("{} {} {operand}", NAMES[c.name], OPS[c.op])
        };
        match self {
            Dir::Define(n, None) => format!("@{{define {}}}", NAMES[n]),
            Dir::Define(n, Some(v)) => format!("@{{define {}, \"{}\"}}", NAMES[n], LITS[v].0),
            Dir::Undef(n) => format!("@{{undef {}}}", NAMES[n]),
            Dir::Ifdef(n) => format!("@{{ifdef {}}}", NAMES[n]),
            Dir::Ifndef(n) => format!("@{{ ifndef {} }}", NAMES[n]),
            Dir::If(c) => format!("@{{if {}}}", cond(c)),
            Dir::Elif(c) => format!("@{{elif {}}}", cond(c)),
            Dir::Else => "@{else}".to_owned(),
            Dir::Endif => "@{endif}".to_owned(),
            Dir::Subst(n) => format!("@{{{}}}", NAMES[n]),
            Dir::Include => "@{include \"p.md\"}".to_owned(),
            Dir::Unknown(i) => format!("@{{{}}}", UNKNOWN[i]),
        }
    }

    fn is_control(self) -> bool {
        !matches!(self, Dir::Subst(_) | Dir::Include | Dir::Unknown(_))
    }
}

#[derive(Debug, Clone)]
enum Seg {
    Text(&'static str),
    Dir(Dir),
}

#[derive(Debug, Clone)]
struct Line {
    indent: &'static str,
    segs: Vec<Seg>,
    trail: &'static str,
    crlf: bool,
}

#[derive(Debug, Clone)]
struct Program {
    predefs: Vec<(usize, usize)>,
    lines: Vec<Line>,
    final_newline: bool,
}

fn cond() -> impl Strategy<Value = Cond> {
    let operand =
        prop_oneof![(0..LITS.len()).prop_map(Operand::Lit), (0..3usize).prop_map(Operand::Macro)];
    (0..3usize, 0..OPS.len(), operand).prop_map(|(name, op, operand)| Cond { name, op, operand })
}

fn dir() -> impl Strategy<Value = Dir> {
    prop_oneof![
        2 => (0..3usize, proptest::option::of(0..LITS.len())).prop_map(|(n, v)| Dir::Define(n, v)),
        1 => (0..3usize).prop_map(Dir::Undef),
        2 => (0..3usize).prop_map(Dir::Ifdef),
        1 => (0..3usize).prop_map(Dir::Ifndef),
        3 => cond().prop_map(Dir::If),
        2 => cond().prop_map(Dir::Elif),
        2 => Just(Dir::Else),
        4 => Just(Dir::Endif),
        2 => (0..3usize).prop_map(Dir::Subst),
        1 => Just(Dir::Include),
        1 => (0..UNKNOWN.len()).prop_map(Dir::Unknown),
    ]
}

fn seg() -> impl Strategy<Value = Seg> {
    prop_oneof![(0..TEXTS.len()).prop_map(|i| Seg::Text(TEXTS[i])), dir().prop_map(Seg::Dir)]
}

fn line() -> impl Strategy<Value = Line> {
    let segs = prop_oneof![
        // Mostly one directive alone on its line, as people write them.
        3 => dir().prop_map(|d| vec![Seg::Dir(d)]),
        2 => proptest::collection::vec(seg(), 0..4),
    ];
    (0..BLANKS.len(), segs, 0..BLANKS.len(), any::<bool>()).prop_map(|(i, segs, t, crlf)| Line {
        indent: BLANKS[i],
        segs,
        trail: BLANKS[t],
        crlf,
    })
}

fn program() -> impl Strategy<Value = Program> {
    (
        proptest::collection::vec((0..3usize, 0..LITS.len()), 0..3),
        proptest::collection::vec(line(), 0..24),
        any::<bool>(),
    )
        .prop_map(|(predefs, lines, final_newline)| Program { predefs, lines, final_newline })
}

/// The program with its structure repaired: misplaced `elif`/`else`/`endif` dropped and
/// every open block closed on a line of its own at the end.
fn well_formed(mut program: Program) -> Program {
    let mut stack: Vec<bool> = Vec::new();
    for line in &mut program.lines {
        line.segs.retain(|seg| match seg {
            Seg::Dir(Dir::Ifdef(_) | Dir::Ifndef(_) | Dir::If(_)) => {
                stack.push(false);
                true
            }
            Seg::Dir(Dir::Elif(_)) => stack.last().is_some_and(|in_else| !in_else),
            Seg::Dir(Dir::Else) => match stack.last_mut() {
                Some(in_else) if !*in_else => {
                    *in_else = true;
                    true
                }
                _ => false,
            },
            Seg::Dir(Dir::Endif) => stack.pop().is_some(),
            _ => true,
        });
    }
    for _ in stack {
        program.lines.push(Line {
            indent: "",
            segs: vec![Seg::Dir(Dir::Endif)],
            trail: "",
            crlf: false,
        });
    }
    program
}

/// The program's text, and the 1-based line and column of every directive in order.
fn render(program: &Program) -> (String, Vec<(u32, u32)>) {
    let mut text = String::new();
    let mut positions = Vec::new();
    let n = program.lines.len();
    for (i, line) in program.lines.iter().enumerate() {
        let line_no = u32::try_from(i + 1).unwrap();
        text.push_str(line.indent);
        let mut column = line.indent.chars().count();
        for seg in &line.segs {
            match seg {
                Seg::Text(t) => {
                    text.push_str(t);
                    column += t.chars().count();
                }
                Seg::Dir(d) => {
                    positions.push((line_no, u32::try_from(column + 1).unwrap()));
                    let r = d.render();
                    column += r.chars().count();
                    text.push_str(&r);
                }
            }
        }
        text.push_str(line.trail);
        if i + 1 < n || program.final_newline {
            text.push_str(if line.crlf { "\r\n" } else { "\n" });
        }
    }
    (text, positions)
}

/// One open block of the reference interpreter.
struct Frame {
    /// Whether the current branch of this block is the one taken.
    on: bool,
    /// Whether some branch was taken already.
    done: bool,
    in_else: bool,
    at: (u32, u32),
}

/// The reference interpreter: works on the program, not on its text.
fn reference(program: &Program) -> (String, Vec<String>) {
    let mut macros: Vec<Option<String>> = vec![None; 3];
    for &(n, v) in &program.predefs {
        macros[n] = Some(LITS[v].1.to_owned());
    }
    let (_, positions) = render(program);
    let mut positions = positions.into_iter();
    let mut out = String::new();
    let mut diags = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let n = program.lines.len();
    // Active when every enclosing block is on its taken branch.
    let active = |stack: &Vec<Frame>| stack.iter().all(|f| f.on);
    for (i, line) in program.lines.iter().enumerate() {
        let ending = if i + 1 < n || program.final_newline {
            if line.crlf { "\r\n" } else { "\n" }
        } else {
            ""
        };
        let dirs: Vec<Dir> = line
            .segs
            .iter()
            .filter_map(|s| if let Seg::Dir(d) = s { Some(*d) } else { None })
            .collect();
        let blank_texts = line.segs.iter().all(|s| match s {
            Seg::Text(t) => t.chars().all(|c| c == ' ' || c == '\t'),
            Seg::Dir(_) => true,
        });
        let removed = dirs.len() == 1 && blank_texts && dirs[0].is_control();
        let emit = |out: &mut String, stack: &Vec<Frame>, s: &str| {
            if !removed && active(stack) {
                out.push_str(s);
            }
        };
        emit(&mut out, &stack, line.indent);
        for seg in &line.segs {
            let d = match seg {
                Seg::Text(t) => {
                    emit(&mut out, &stack, t);
                    continue;
                }
                Seg::Dir(d) => *d,
            };
            let at = positions.next().unwrap();
            let mut diag = |code: &str| diags.push(format!("{code}@{}:{}", at.0, at.1));
            let on = active(&stack);
            let test = |c: Cond, diag: &mut dyn FnMut(&str)| -> bool {
                let left = macros[c.name].clone().unwrap_or_else(|| {
                    diag("W_UNDEFINED_MACRO");
                    String::new()
                });
                let right = match c.operand {
                    Operand::Lit(i) => LITS[i].1.to_owned(),
                    Operand::Macro(m) => macros[m].clone().unwrap_or_else(|| {
                        diag("W_UNDEFINED_MACRO");
                        String::new()
                    }),
                };
                match OPS[c.op] {
                    "IS" => left == right,
                    "ISNT" => left != right,
                    "CONTAINS" => left.contains(&right),
                    "DOESNT_CONTAIN" => !left.contains(&right),
                    op => match regex::Regex::new(&right) {
                        Ok(re) => re.is_match(&left) == (op == "MATCHES"),
                        Err(_) => {
                            diag("E_REGEX");
                            false
                        }
                    },
                }
            };
            match d {
                Dir::Define(m, v) if on => macros[m] = Some(v.map_or("", |v| LITS[v].1).to_owned()),
                Dir::Undef(m) if on => macros[m] = None,
                Dir::Ifdef(m) | Dir::Ifndef(m) => {
                    let yes = on && (macros[m].is_some() == matches!(d, Dir::Ifdef(_)));
                    stack.push(Frame { on: yes, done: yes, in_else: false, at });
                }
                Dir::If(c) => {
                    let yes = on && test(c, &mut diag);
                    stack.push(Frame { on: yes, done: yes, in_else: false, at });
                }
                Dir::Elif(c) => {
                    let parent_on = stack.iter().rev().skip(1).all(|f| f.on);
                    match stack.last() {
                        None => diag("E_DIRECTIVE"),
                        Some(f) if f.in_else => diag("E_DIRECTIVE"),
                        Some(f) => {
                            let yes = parent_on && !f.done && test(c, &mut diag);
                            let f = stack.last_mut().unwrap();
                            f.on = yes;
                            f.done |= yes;
                        }
                    }
                }
                Dir::Else => match stack.last_mut() {
                    Some(f) if !f.in_else => {
                        f.in_else = true;
                        f.on = !f.done;
                        f.done = true;
                    }
                    _ => diag("E_DIRECTIVE"),
                },
                Dir::Endif => {
                    let closed = stack.pop();
                    if closed.is_none() {
                        diag("E_DIRECTIVE");
                    }
                }
                Dir::Subst(m) if on => match &macros[m] {
                    Some(v) => emit(&mut out, &stack, v),
                    None => {
                        diag("W_UNDEFINED_MACRO");
                        emit(&mut out, &stack, &d.render());
                    }
                },
                Dir::Include => emit(&mut out, &stack, &d.render()),
                Dir::Unknown(_) => {
                    // Reported by the scanner whether active or not.
                    diag("E_DIRECTIVE");
                    emit(&mut out, &stack, &d.render());
                }
                _ => {}
            }
        }
        emit(&mut out, &stack, line.trail);
        emit(&mut out, &stack, ending);
    }
    for f in stack {
        diags.push(format!("E_DIRECTIVE@{}:{}", f.at.0, f.at.1));
    }
    (out, diags)
}

fn engine(program: &Program) -> (String, Vec<String>) {
    let (text, _) = render(program);
    let mut macros = Macros::new();
    for &(n, v) in &program.predefs {
        macros.define(NAMES[n], LITS[v].1);
    }
    let out = preprocess(&text, &Options::default(), &mut macros);
    let diags = out.diagnostics.iter().map(|d| format!("{}@{}", d.code, d.pos)).collect();
    (out.text, diags)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn ill_formed_programs_agree(program in program()) {
        let (text, _) = render(&program);
        let expected = reference(&program);
        let got = engine(&program);
        prop_assert_eq!(got, expected, "program text {:?}", text);
    }

    #[test]
    fn well_formed_programs_agree(program in program().prop_map(well_formed)) {
        let (text, _) = render(&program);
        let expected = reference(&program);
        // The only errors left are the scanner's, for unknown bodies.
        let unknown = program.lines.iter().flat_map(|l| &l.segs)
            .filter(|s| matches!(s, Seg::Dir(Dir::Unknown(_)))).count();
        let structural = expected.1.iter().filter(|d| d.starts_with("E_DIRECTIVE")).count();
        prop_assert_eq!(structural, unknown);
        let got = engine(&program);
        prop_assert_eq!(got, expected, "program text {:?}", text);
    }
}

/// Pieces that make up arbitrary, mostly malformed, text rich in syntax.
fn noise() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("@{"),
        Just("}"),
        Just("@["),
        Just("]"),
        Just("@"),
        Just("\\"),
        Just("\""),
        Just("`"),
        Just("```\n"),
        Just("\n"),
        Just("\r\n"),
        Just("\r"),
        Just(" "),
        Just("\t"),
        Just("ifdef "),
        Just("ifndef "),
        Just("if "),
        Just("elif "),
        Just("else"),
        Just("endif"),
        Just("define "),
        Just("undef "),
        Just("include "),
        Just(", "),
        Just("A"),
        Just("X"),
        Just(" IS "),
        Just(" MATCHES "),
        Just(" DOESNT_MATCH "),
        Just(" CONTAINS "),
        Just("\"(\""),
        Just("\"^a\""),
        Just("\"\\u00e9\""),
        Just("a.md"),
        Just("é"),
        Just("\u{1f600}"),
    ];
    proptest::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn noise_keeps_the_invariants(text in noise()) {
        ctx_preprocess::check(&text);
    }

    #[test]
    fn any_text_keeps_the_invariants(text in "\\PC{0,64}") {
        ctx_preprocess::check(&text);
    }
}
