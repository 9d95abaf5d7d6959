//! JSON string escapes, as used by directive values.

use std::borrow::Cow;

/// Resolves the escapes of a JSON string body (the text between the quotes).
///
/// Returns `None` for an invalid escape, a lone surrogate, or a raw control character.
pub(crate) fn unescape(raw: &str) -> Option<Cow<'_, str>> {
    if !raw.bytes().any(|b| b == b'\\' || b < 0x20) {
        return Some(Cow::Borrowed(raw));
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if (c as u32) < 0x20 {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let unescaped = match chars.next()? {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let high = hex4(&mut chars)?;
                match high {
                    0xD800..=0xDBFF => {
                        if chars.next()? != '\\' || chars.next()? != 'u' {
                            return None;
                        }
                        let low = hex4(&mut chars)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => char::from_u32(high)?,
                }
            }
            _ => return None,
        };
        out.push(unescaped);
    }
    Some(Cow::Owned(out))
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut v = 0;
    for _ in 0..4 {
        v = v * 16 + chars.next()?.to_digit(16)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn escapes() {
        assert_eq!(unescape("plain").as_deref(), Some("plain"));
        assert_eq!(unescape(r#"a\"b\\c\/d"#).as_deref(), Some("a\"b\\c/d"));
        assert_eq!(unescape(r"\n\t\r\b\f").as_deref(), Some("\n\t\r\u{8}\u{c}"));
        assert_eq!(unescape(r"\u00e9\ud83d\ude00").as_deref(), Some("é😀"));
        assert_eq!(unescape(r"\x"), None);
        assert_eq!(unescape(r"\u12"), None);
        assert_eq!(unescape(r"\ud83d"), None);
        assert_eq!(unescape(r"\ude00"), None);
        assert_eq!(unescape("a\u{1}b"), None);
        assert_eq!(unescape("trailing\\"), None);
    }
}
