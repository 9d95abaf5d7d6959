//! The bodies of `@{...}` directives.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::satisfy;
use nom::combinator::{all_consuming, map, not, opt, recognize, value, verify};
use nom::sequence::{pair, preceded, terminated};
use nom::{IResult, Parser};

use crate::ast::{Condition, DirectiveKind, Op, Operand, StrLit};
use crate::reference::{parse_reference, quoted_prefix};

type PResult<'a, T> = IResult<&'a str, T>;

const KEYWORDS: [&str; 9] =
    ["define", "undef", "ifdef", "ifndef", "if", "elif", "else", "endif", "include"];

fn ws0(input: &str) -> PResult<'_, &str> {
    take_while(|c| c == ' ' || c == '\t').parse(input)
}

fn ws1(input: &str) -> PResult<'_, &str> {
    take_while1(|c| c == ' ' || c == '\t').parse(input)
}

/// `NAME = (ALPHA | "_") *( ALNUM | "_" )`, ASCII.
fn macro_name(input: &str) -> PResult<'_, &str> {
    recognize(pair(
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))
    .parse(input)
}

/// A JSON string literal whose escapes are all valid.
fn string_lit(input: &str) -> PResult<'_, StrLit<'_>> {
    let (rest, raw) = preceded(
        tag("\""),
        terminated(
            recognize(nom::multi::many0_count(alt((
                take_while1(|c| c != '"' && c != '\\'),
                recognize(pair(tag("\\"), nom::character::complete::anychar)),
            )))),
            tag("\""),
        ),
    )
    .parse(input)?;
    if crate::json::unescape(raw).is_none() {
        return Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Escaped)));
    }
    Ok((rest, StrLit { raw }))
}

fn op(input: &str) -> PResult<'_, Op> {
    let (rest, word) = take_while1(|c: char| c.is_ascii_uppercase() || c == '_').parse(input)?;
    match Op::ALL.into_iter().find(|op| op.keyword() == word) {
        Some(op) => Ok((rest, op)),
        None => Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Tag))),
    }
}

fn condition(input: &str) -> PResult<'_, Condition<'_>> {
    map(
        (
            macro_name,
            preceded(ws1, op),
            preceded(ws1, alt((map(string_lit, Operand::Str), map(macro_name, Operand::Macro)))),
        ),
        |(name, op, operand)| Condition { name, op, operand },
    )
    .parse(input)
}

fn keyword<'a>(
    word: &'static str,
) -> impl Parser<&'a str, Output = &'a str, Error = nom::error::Error<&'a str>> {
    terminated(tag(word), ws1)
}

/// Succeeds, consuming nothing, unless a name character follows.
fn not_ident(input: &str) -> PResult<'_, ()> {
    not(satisfy(|c: char| c.is_ascii_alphanumeric() || c == '_')).parse(input)
}

fn body(input: &str) -> PResult<'_, DirectiveKind<'_>> {
    alt((
        map(
            preceded(
                tag("define"),
                pair(
                    preceded(ws1, macro_name),
                    preceded(pair(opt(preceded(ws0, tag(","))), ws0), opt(string_lit)),
                ),
            ),
            |(name, value)| DirectiveKind::Define { name, value },
        ),
        map(preceded(keyword("undef"), macro_name), |name| DirectiveKind::Undef { name }),
        map(preceded(keyword("ifdef"), macro_name), |name| DirectiveKind::Ifdef { name }),
        map(preceded(keyword("ifndef"), macro_name), |name| DirectiveKind::Ifndef { name }),
        map(preceded(keyword("if"), condition), DirectiveKind::If),
        map(preceded(keyword("elif"), condition), DirectiveKind::Elif),
        value(DirectiveKind::Else, terminated(tag("else"), not_ident)),
        value(DirectiveKind::Endif, terminated(tag("endif"), not_ident)),
        include,
        map(verify(macro_name, |name: &str| !KEYWORDS.contains(&name)), |name| {
            DirectiveKind::Substitute { name }
        }),
    ))
    .parse(input)
}

/// `include [":"] ws* quoted`, the string holding a reference body.
fn include(input: &str) -> PResult<'_, DirectiveKind<'_>> {
    let (rest, _) = (tag("include"), opt(tag(":")), ws0).parse(input)?;
    if !rest.starts_with('"') {
        return Err(nom::Err::Error(nom::error::Error::new(rest, nom::error::ErrorKind::Char)));
    }
    match quoted_prefix(rest) {
        // The string's content is the reference body (`"a.md:2:4"` is lines 2 to 4); a
        // backslash that escapes nothing stays, a separator as in every path.
        Some((raw, len)) if !raw.contains("\\\"") && !raw.contains("\\\\") => {
            Ok((&rest[len..], DirectiveKind::Include(parse_reference(raw))))
        }
        // With `\"` or `\\` escapes the string is a quoted path, unescaped as `@["…"]` is.
        Some((_, len)) => Ok((&rest[len..], DirectiveKind::Include(parse_reference(&rest[..len])))),
        None => Err(nom::Err::Error(nom::error::Error::new(rest, nom::error::ErrorKind::Escaped))),
    }
}

/// Parses a directive body (the text between `@{` and `}`); a body that fits no form is
/// [`DirectiveKind::Unknown`].
pub(crate) fn parse(input: &str) -> DirectiveKind<'_> {
    all_consuming(preceded(ws0, terminated(body, ws0)))
        .parse(input)
        .map_or(DirectiveKind::Unknown, |(_, kind)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{LineEnd, Selector};

    #[test]
    fn include_strings_with_backslashes() {
        // A backslash that escapes nothing is a separator; `\"` and `\\` are escapes.
        let DirectiveKind::Include(r) = parse(r#"include "sub\f.txt""#) else { panic!() };
        assert_eq!(r.path.unescaped(), "sub\\f.txt");
        let DirectiveKind::Include(r) = parse(r#"include "q\"x.txt""#) else { panic!() };
        assert_eq!(r.path.unescaped(), "q\"x.txt");
        let DirectiveKind::Include(r) = parse(r#"include "C:\\src\\a.rs""#) else { panic!() };
        assert_eq!(r.path.unescaped(), "C:\\src\\a.rs");
    }

    #[test]
    fn forms() {
        let s = |raw| StrLit { raw };
        assert_eq!(parse("define A"), DirectiveKind::Define { name: "A", value: None });
        assert_eq!(parse("define A,"), DirectiveKind::Define { name: "A", value: None });
        assert_eq!(
            parse(r#"define A, "x}y""#),
            DirectiveKind::Define { name: "A", value: Some(s("x}y")) }
        );
        assert_eq!(
            parse(r#" define  A "v" "#),
            DirectiveKind::Define { name: "A", value: Some(s("v")) }
        );
        assert_eq!(parse("undef A"), DirectiveKind::Undef { name: "A" });
        assert_eq!(parse("ifdef DEBUG"), DirectiveKind::Ifdef { name: "DEBUG" });
        assert_eq!(parse("ifndef _X1"), DirectiveKind::Ifndef { name: "_X1" });
        assert_eq!(
            parse(r#"if MODE IS "fast""#),
            DirectiveKind::If(Condition {
                name: "MODE",
                op: Op::Is,
                operand: Operand::Str(s("fast"))
            })
        );
        assert_eq!(
            parse("elif MODE DOESNT_MATCH OTHER"),
            DirectiveKind::Elif(Condition {
                name: "MODE",
                op: Op::DoesntMatch,
                operand: Operand::Macro("OTHER")
            })
        );
        assert_eq!(parse("else"), DirectiveKind::Else);
        assert_eq!(parse(" endif "), DirectiveKind::Endif);
        assert_eq!(parse("NAME"), DirectiveKind::Substitute { name: "NAME" });
        for name in ["elseX", "endif_2", "defineX", "ifdefX", "includeX", "if1"] {
            assert_eq!(parse(name), DirectiveKind::Substitute { name });
        }
        let DirectiveKind::Include(r) = parse(r#"include: "a.md:2:3""#) else { panic!() };
        assert_eq!(r.path.raw, "a.md");
        assert_eq!(r.selector, Some(Selector::Lines { start: 2, end: LineEnd::Line(3) }));
        assert!(matches!(parse(r#"include "b c.md""#), DirectiveKind::Include(_)));
    }

    #[test]
    fn unknown() {
        for body in [
            "",
            "define",
            "ifdef",
            "if A IS",
            "if A EQUALS \"x\"",
            "if A is \"x\"",
            "define A x",
            "define A, \"bad\\q\"",
            "Define A",
            "else x",
            "1abc",
            "include a.md",
            "\"json\": 1",
            "endif endif",
        ] {
            assert_eq!(parse(body), DirectiveKind::Unknown, "{body:?}");
        }
    }
}
