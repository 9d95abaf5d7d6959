//! Path hygiene and lexical parsing of paths as the user wrote them.
//!
//! Nothing here touches the file system: a written path is checked against
//! the `E_BAD_PATH` rules of assembly.md §3 and split into components, with
//! `\` a separator on every platform.

/// The longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest path component accepted, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// Where a written path starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// Relative to a base directory.
    Relative,
    /// Starts with `/` (or `\`).
    Absolute,
    /// Starts with a drive letter and a separator, such as `C:\`.
    Drive(char),
    /// `~`, or starts with `~/` (or `~\`): the user's home directory.
    Home,
}

/// One component of a written path, `.` and empty ones dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Comp {
    /// `..`.
    Parent,
    /// A plain name, already checked by [`check_name`].
    Name(String),
}

/// A written path, checked and split.
#[derive(Clone, Debug)]
pub(crate) struct Parsed {
    pub(crate) anchor: Anchor,
    pub(crate) comps: Vec<Comp>,
}

/// Checks and splits a written path; the error is the reason it is bad.
pub(crate) fn parse(written: &str) -> Result<Parsed, &'static str> {
    if written.is_empty() {
        return Err("empty path");
    }
    if written.len() > MAX_PATH_BYTES {
        return Err("path longer than 4096 bytes");
    }
    check_chars(written)?;
    let s = if written.contains('\\') {
        std::borrow::Cow::Owned(written.replace('\\', "/"))
    } else {
        std::borrow::Cow::Borrowed(written)
    };
    let bytes = s.as_bytes();
    let (anchor, rest) = if s.starts_with("//") || s.starts_with("/??/") {
        return Err("unc or device path");
    } else if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        if bytes.len() == 2 || bytes[2] != b'/' {
            return Err("drive-relative path");
        }
        (Anchor::Drive(char::from(bytes[0]).to_ascii_uppercase()), &s[3..])
    } else if let Some(rest) = s.strip_prefix('/') {
        (Anchor::Absolute, rest)
    } else if &*s == "~" || s.starts_with("~/") {
        (Anchor::Home, &s[1..])
    } else {
        (Anchor::Relative, &s[..])
    };
    let mut comps = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => comps.push(Comp::Parent),
            name => {
                check_name(name)?;
                comps.push(Comp::Name(name.to_owned()));
            }
        }
    }
    Ok(Parsed { anchor, comps })
}

/// Checks one file name (not `.` or `..`) against the name rules; used both
/// for written paths and for names met in walks.
pub(crate) fn check_name(name: &str) -> Result<(), &'static str> {
    if name.len() > MAX_NAME_BYTES {
        return Err("name longer than 255 bytes");
    }
    check_chars(name)?;
    if name.contains('/') || name.contains('\\') {
        return Err("separator in name");
    }
    // On Windows a stream's type after a colon (`a::$DATA`, `a:$INDEX_ALLOCATION`) names the
    // file's own data, and a letter and a colon (`C:x`) a drive: refused on every platform, so
    // that one policy holds everywhere (assembly.md §3). Any other colon is part of the name
    // (`notes:v2.md`, which the syntax's quotes are for).
    if name.contains(':') {
        let bytes = name.as_bytes();
        if name.contains(":$") || name.ends_with(':') {
            return Err("an ntfs stream suffix in a name");
        }
        if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            return Err("drive-relative path");
        }
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Err("name ends with a dot or space");
    }
    if is_reserved(name) {
        return Err("reserved device name");
    }
    Ok(())
}

fn check_chars(s: &str) -> Result<(), &'static str> {
    // Printable ASCII has no control or invisible character: the common case needs no decoding.
    if s.bytes().all(|b| matches!(b, b' '..=b'~')) {
        return Ok(());
    }
    for c in s.chars() {
        if c == '\0' {
            return Err("nul in path");
        }
        if is_control(c) {
            return Err("control character in path");
        }
        if is_default_ignorable(c) {
            return Err("invisible character in path");
        }
    }
    Ok(())
}

/// Windows device names, also with an extension (`nul.txt`).
fn is_reserved(name: &str) -> bool {
    // Every device name starts with one of these letters: most names are told apart by their
    // first byte, with no split.
    let first = name.as_bytes().first().map(u8::to_ascii_lowercase);
    if !matches!(first, Some(b'a' | b'c' | b'l' | b'n' | b'p')) {
        return false;
    }
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let is = |device: &str| stem.eq_ignore_ascii_case(device);
    if ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"].into_iter().any(is) {
        return true;
    }
    let (Some(head), Some(rest)) = (stem.get(..3), stem.get(3..)) else { return false };
    (head.eq_ignore_ascii_case("COM") || head.eq_ignore_ascii_case("LPT"))
        && matches!(rest, "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³")
}

/// C0 and C1 control characters and DEL.
pub(crate) fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

/// The Unicode `Default_Ignorable_Code_Point` property: characters that
/// render as nothing and that some file systems drop from names.
pub(crate) fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// Applies `comps` to the directory `base` lexically; `None` when a `..`
/// climbs above the start.
pub(crate) fn normalise(base: Vec<String>, comps: &[Comp]) -> Option<Vec<String>> {
    let mut out = base;
    for comp in comps {
        match comp {
            Comp::Parent => {
                out.pop()?;
            }
            Comp::Name(name) => out.push(name.clone()),
        }
    }
    Some(out)
}

/// Applies `comps` to an absolute directory lexically, where `..` at the
/// top stays at the top.
pub(crate) fn normalise_absolute(base: &[String], comps: &[Comp]) -> Vec<String> {
    let mut out = base.to_vec();
    for comp in comps {
        match comp {
            Comp::Parent => {
                out.pop();
            }
            Comp::Name(name) => out.push(name.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn bad(path: &str) {
        assert!(parse(path).is_err(), "{path:?} should be bad");
    }

    #[track_caller]
    fn good(path: &str, anchor: Anchor, n: usize) {
        let parsed = parse(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert_eq!(parsed.anchor, anchor, "{path:?}");
        assert_eq!(parsed.comps.len(), n, "{path:?}");
    }

    #[test]
    fn windows_names() {
        for p in [
            "CON",
            "con.txt",
            "docs/Nul.md",
            "LPT9",
            "com1.tar.gz",
            "CONIN$",
            "aux .txt",
            ".env.",
            "a ",
            "a.txt::$DATA",
            "a:$INDEX_ALLOCATION",
            "a:b",
            "C:x",
            "c:",
            "\\\\server\\share",
            "\\\\?\\C:\\x",
            "\\??\\C:\\x",
            "//server/share",
            "docs/C:x",
            "a:",
            "a:b:$DATA",
        ] {
            bad(p);
        }
        // Any other colon is part of a name, as the syntax's `@["notes:v2.md":2]` says.
        good("notes:v2.md", Anchor::Relative, 1);
        good("ab:c.txt", Anchor::Relative, 1);
        good("docs/10:30 meeting.md", Anchor::Relative, 2);
        good("a.rs:10", Anchor::Relative, 1);
        good("C:\\x\\y", Anchor::Drive('C'), 2);
        good("d:/x", Anchor::Drive('D'), 1);
        good("console.md", Anchor::Relative, 1);
        good("com10", Anchor::Relative, 1);
    }

    #[test]
    fn separators_and_dots() {
        good("docs\\a.md", Anchor::Relative, 2);
        good("/a/./b//c", Anchor::Absolute, 3);
        good("a/../b", Anchor::Relative, 3);
        good("a..b", Anchor::Relative, 1);
        good("...x", Anchor::Relative, 1);
        good(".", Anchor::Relative, 0);
    }

    #[test]
    fn characters_and_lengths() {
        for p in ["a\0b", "a\nb", "a\u{7f}", "a\u{85}", ".g\u{200c}it", "\u{feff}a", "a\u{e0041}"] {
            bad(p);
        }
        bad("");
        bad(&"a".repeat(256));
        good(&"a".repeat(255), Anchor::Relative, 1);
        let long = vec!["abcdefg"; 513].join("/");
        assert!(long.len() > MAX_PATH_BYTES);
        bad(&long);
        good("ünïcødé/日本.md", Anchor::Relative, 2);
    }

    #[test]
    fn reserved_names() {
        for name in
            ["con", "PRN.md", "Aux.tar.gz", "nul ", "cOnIn$", "CONOUT$.x", "com1", "LPT9.txt"]
        {
            assert!(is_reserved(name), "{name}");
        }
        for name in ["COM¹", "lpt³.md"] {
            assert!(is_reserved(name), "{name}");
        }
        for name in ["co", "com", "com0", "com10", "coma", "lpt", "console", "nul1", "¹com1", ""] {
            assert!(!is_reserved(name), "{name}");
        }
    }

    #[test]
    fn lexical() {
        let p = parse("a/../../b").unwrap();
        assert_eq!(normalise(vec!["x".into()], &p.comps), Some(vec!["b".to_owned()]));
        assert_eq!(normalise(Vec::new(), &p.comps), None);
        assert_eq!(normalise_absolute(&[], &p.comps), vec!["b".to_owned()]);
    }
}
