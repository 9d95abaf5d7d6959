//! Paths as project files write them: separators, MSBuild properties, lexical normalisation.
//!
//! Every path is kept as a string with `/` separators. An absolute path is either POSIX
//! (`/src/a.c`) or a Windows drive path (`D:/src/a.c`, kept as such: on Linux it names no
//! file, but it is indexed and matched by name).

/// The folders a project's paths are relative to, for the MSBuild properties ctx expands.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dirs<'a> {
    /// The solution's folder (absolute, no trailing slash).
    pub(crate) solution: &'a str,
    /// The project's folder.
    pub(crate) project: &'a str,
    /// The folder of the file being read (a `.vcxitems` has its own).
    pub(crate) this_file: &'a str,
    /// The language of the project, which says what an SDK-style project compiles without
    /// naming it.
    pub(crate) language: Language,
}

/// The language of a project, by its file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Language {
    /// `.csproj`: an SDK project compiles `**/*.cs`.
    CSharp,
    /// `.vbproj`: an SDK project compiles `**/*.vb`.
    VisualBasic,
    /// Any other (`.vcxproj`, `.fsproj`, whose compile order is written out, a shared
    /// items file...): nothing is compiled unnamed.
    Other,
}

impl Language {
    /// The language of the project file at `path`.
    pub(crate) fn of(path: &str) -> Language {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".csproj") {
            Language::CSharp
        } else if lower.ends_with(".vbproj") {
            Language::VisualBasic
        } else {
            Language::Other
        }
    }

    /// The extension of the files an SDK project of this language compiles unnamed.
    pub(crate) fn implicit_sources(self) -> Option<&'static str> {
        match self {
            Language::CSharp => Some("cs"),
            Language::VisualBasic => Some("vb"),
            Language::Other => None,
        }
    }
}

/// Why an item's path could not be used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unexpanded {
    /// A property, item metadata or item list ctx does not know: `$(Name)`, `%(Name)`, `@(Name)`.
    Property(String),
}

/// Expands the MSBuild properties ctx knows (`$(SolutionDir)`, `$(ProjectDir)`,
/// `$(MSBuildThisFileDirectory)` with a trailing separator, `$(MSBuildProjectDirectory)`
/// without), names are case-insensitive as in MSBuild; any other `$(…)`, `%(…)` or `@(…)` is
/// refused.
pub(crate) fn expand<'r>(
    raw: &'r str,
    dirs: &Dirs<'_>,
) -> Result<std::borrow::Cow<'r, str>, Unexpanded> {
    // Searched as bytes: each sigil is ASCII, so never part of another character.
    if memchr::memchr3(b'$', b'%', b'@', raw.as_bytes()).is_none() {
        return Ok(std::borrow::Cow::Borrowed(raw));
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = rest.find(['$', '%', '@']) {
        let sigil = rest.as_bytes()[at];
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let Some(body) = after.strip_prefix('(') else {
            out.push(char::from(sigil));
            rest = after;
            continue;
        };
        let end = body.find(')').ok_or_else(|| Unexpanded::Property(rest[at..].to_owned()))?;
        let name = &body[..end];
        let value = match (sigil, name.to_ascii_lowercase().as_str()) {
            (b'$', "solutiondir") => format!("{}/", dirs.solution),
            (b'$', "projectdir") => format!("{}/", dirs.project),
            (b'$', "msbuildthisfiledirectory") => format!("{}/", dirs.this_file),
            (b'$', "msbuildprojectdirectory") => dirs.project.to_owned(),
            _ => return Err(Unexpanded::Property(format!("{}({name})", char::from(sigil)))),
        };
        out.push_str(&value);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    Ok(std::borrow::Cow::Owned(out))
}

/// Whether `path` is absolute: POSIX (`/x`) or a Windows drive path (`C:/x`, `C:\x`).
pub(crate) fn is_absolute(path: &str) -> bool {
    path.starts_with('/') || drive(path).is_some()
}

/// The drive letter of `C:/x` or `C:\x`.
pub(crate) fn drive(path: &str) -> Option<u8> {
    let b = path.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'/' | b'\\'))
        .then(|| b[0].to_ascii_uppercase())
}

/// Joins `path` (any separators) to the absolute folder `base` unless it is absolute, then
/// normalises it lexically: `\` → `/`, empty and `.` components dropped, `..` applied (never
/// above the root). `None` for an empty path.
pub(crate) fn absolute(base: &str, path: &str) -> Option<String> {
    let path = path.trim();
    if path.is_empty() {
        return None;
    }
    let mut joined = String::with_capacity(base.len() + 1 + path.len());
    if !(is_absolute(path) || path.starts_with('\\')) {
        joined.push_str(base);
        joined.push('/');
    }
    for (i, piece) in pieces(path, b'\\').enumerate() {
        if i > 0 {
            joined.push('/');
        }
        joined.push_str(piece);
    }
    // Most paths are normal as written (a CMake project's are absolute): kept as they are.
    // (a drive letter is upper-cased by `normalize`).
    if is_normal(&joined) && !joined.starts_with(|c: char| c.is_ascii_lowercase()) {
        Some(joined)
    } else {
        Some(normalize(&joined))
    }
}

/// The pieces of `text` between the bytes `sep` (an ASCII separator, so never part of
/// another character), as `str::split` gives them, found with `memchr`.
fn pieces(text: &str, sep: u8) -> impl Iterator<Item = &str> {
    debug_assert!(sep.is_ascii());
    let ends = memchr::memchr_iter(sep, text.as_bytes()).chain([text.len()]);
    let mut start = 0;
    ends.map(move |end| {
        let piece = &text[start..end];
        start = end + 1;
        piece
    })
}

/// Lexical normalisation of an absolute path with `/` separators (see [`absolute`]).
pub(crate) fn normalize(path: &str) -> String {
    let (prefix, rest) = match drive(path) {
        Some(letter) => (format!("{}:", char::from(letter)), &path[2..]),
        None => (String::new(), path),
    };
    let mut out = prefix;
    out.reserve(rest.len() + 1);
    let base = out.len();
    for part in pieces(rest, b'/') {
        match part {
            "" | "." => {}
            ".." => {
                let cut = memchr::memrchr(b'/', &out.as_bytes()[base..]).map_or(base, |i| base + i);
                out.truncate(cut);
            }
            _ => {
                out.push('/');
                out.push_str(part);
            }
        }
    }
    if out.len() == base {
        out.push('/');
    }
    out
}

/// Whether `path` is absolute and already as [`normalize`] leaves it (no empty, `.` or `..`
/// component), without building the normalised path: one pass over its bytes.
pub(crate) fn is_normal(path: &str) -> bool {
    let rest = if drive(path).is_some() { &path.as_bytes()[2..] } else { path.as_bytes() };
    if rest.first() != Some(&b'/') {
        return false;
    }
    if rest.len() == 1 {
        return true;
    }
    // The length of the component so far, and whether it is all dots.
    let (mut len, mut dots) = (0usize, true);
    for &b in &rest[1..] {
        if b == b'/' {
            if len == 0 || (dots && len <= 2) {
                return false;
            }
            (len, dots) = (0, true);
        } else {
            len += 1;
            dots &= b == b'.';
        }
    }
    len > 0 && !(dots && len <= 2)
}

/// The folder of an absolute path (`/` for a file at the root).
pub(crate) fn parent(path: &str) -> &str {
    match memchr::memrchr(b'/', path.as_bytes()) {
        Some(0) => "/",
        Some(i) if i == 2 && drive(path).is_some() => &path[..3],
        Some(i) => &path[..i],
        None => path,
    }
}

/// The last component of a path.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether `path` lies in `dir` (both normalised absolute paths; a folder contains itself).
/// Drive letters compare without case, as on Windows.
pub(crate) fn within(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    // Drive paths name a Windows disk, where names compare without case.
    let same_drive = |a: &str, b: &str| match (drive(a), drive(b)) {
        (Some(x), Some(y)) => {
            x == y
                && a.len() >= b.len()
                && a.as_bytes()[1..b.len()].eq_ignore_ascii_case(&b.as_bytes()[1..])
        }
        _ => a.starts_with(b),
    };
    if dir.is_empty() {
        return path.starts_with('/');
    }
    same_drive(path, dir) && matches!(path.as_bytes().get(dir.len()), None | Some(b'/'))
}

/// The path of `path` relative to the folder `dir` that holds it.
pub(crate) fn relative_to<'a>(path: &'a str, dir: &str) -> &'a str {
    let dir = dir.trim_end_matches('/');
    path.get(dir.len()..).unwrap_or("").trim_start_matches('/')
}

/// The entry of a folder listed as `names` that the component `comp` names: `comp` itself
/// when it is there (`exact`, which the caller knows the cheapest way), else the one name
/// equal to it without ASCII case, with `true` (spelled otherwise); `None` for none or several.
pub(crate) fn disk_name<'n>(
    names: &'n [String],
    comp: &'n str,
    exact: bool,
) -> Option<(&'n str, bool)> {
    if exact {
        return Some((comp, false));
    }
    let mut found = names.iter().filter(|n| n.eq_ignore_ascii_case(comp));
    match (found.next(), found.next()) {
        (Some(name), None) => Some((name.as_str(), true)),
        _ => None,
    }
}

/// Whether a path holds wildcard characters (`*`, `?`).
/// An item's path with MSBuild's escapes taken back (`%25` is `%`, `%3B` `;`, `%2A` a `*`
/// that is no wildcard): `%` then two hexadecimal digits, as Visual Studio writes a name that
/// holds one of `%;$@'*?`. Done after the wildcard test, on a path that has none.
pub(crate) fn unescape(path: String) -> String {
    if !path.contains('%') {
        return path;
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push(u8::try_from(high * 16 + low).unwrap_or(b'%'));
                i += 3;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    // An escape of a byte that is no character of its own (`%C3` alone) leaves the path as
    // written.
    String::from_utf8(out).unwrap_or(path)
}

pub(crate) fn has_wildcard(path: &str) -> bool {
    // Searched as bytes: `*` and `?` are ASCII, so never part of another character.
    memchr::memchr2(b'*', b'?', path.as_bytes()).is_some()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The pieces found with `memchr` are the ones `str::split` gives, on any text.
        #[test]
        fn pieces_are_splits(text in "[a/\\\\é.日]{0,24}") {
            for sep in ['/', '\\'] {
                let want: Vec<&str> = text.split(sep).collect();
                let got: Vec<&str> = pieces(&text, sep as u8).collect();
                prop_assert_eq!(got, want);
            }
        }
    }

    const DIRS: Dirs<'static> = Dirs {
        solution: "/b",
        project: "/b/app",
        this_file: "/b/shared",
        language: Language::CSharp,
    };

    #[test]
    fn known_properties_expand_and_others_are_named() {
        assert_eq!(expand(r"$(SolutionDir)..\src\a.c", &DIRS).unwrap(), r"/b/..\src\a.c");
        assert_eq!(expand("$(projectdir)x.h", &DIRS).unwrap(), "/b/app/x.h");
        assert_eq!(expand("$(MSBuildThisFileDirectory)s.h", &DIRS).unwrap(), "/b/shared/s.h");
        assert_eq!(expand("$(MSBuildProjectDirectory)/y.h", &DIRS).unwrap(), "/b/app/y.h");
        assert_eq!(
            expand("$(Configuration)/gen.c", &DIRS),
            Err(Unexpanded::Property("$(Configuration)".into()))
        );
        assert_eq!(expand("%(Filename).c", &DIRS), Err(Unexpanded::Property("%(Filename)".into())));
        assert_eq!(expand("@(Items)", &DIRS), Err(Unexpanded::Property("@(Items)".into())));
        assert_eq!(expand("a$b@c%d.c", &DIRS).unwrap(), "a$b@c%d.c");
    }

    #[test]
    fn paths_are_joined_and_normalised() {
        assert_eq!(absolute("/b/app", r"..\..\src\\App\.\a.cpp").unwrap(), "/src/App/a.cpp");
        assert_eq!(absolute("/b", "/x//y/../z.c").unwrap(), "/x/z.c");
        assert_eq!(absolute("/b", r"D:\src\FreeCAD\..\a.c").unwrap(), "D:/src/a.c");
        assert_eq!(absolute("/b", "../../../../x.c").unwrap(), "/x.c");
        assert_eq!(absolute("/b", "  "), None);
        for path in
            ["/", "/a/b", "C:/", "C:/a", "/a/b/", "/a//b", "/a/./b", "/a/../b", "a/b", "C:a"]
        {
            assert_eq!(is_normal(path), normalize(path) == path && is_absolute(path), "{path}");
        }
        assert_eq!(parent("/a/b.c"), "/a");
        assert_eq!(parent("/b.c"), "/");
        assert_eq!(parent("D:/b.c"), "D:/");
        assert_eq!(file_name("/a/b.c"), "b.c");
    }

    #[test]
    fn containment_is_by_whole_components() {
        assert!(within("/src/a/b.c", "/src/a"));
        assert!(within("/src/a", "/src/a"));
        assert!(!within("/src/ab/c.c", "/src/a"));
        assert!(within("d:/src/a.c", "D:/src"));
        assert!(within("c:/program files (x86)/windows kits/10", "C:/Program Files (x86)"));
        assert!(!within("c:/program files (x86)x/a", "C:/Program Files (x86)"));
        assert!(within("/x/y", "/"));
        assert_eq!(relative_to("/src/a/b.c", "/src"), "a/b.c");
        assert_eq!(relative_to("/x/y", "/"), "x/y");
    }

    /// Joining and normalising as they were written first: a copy of the path with `\` as
    /// `/`, joined, then its components gathered and joined again.
    fn absolute_as_first_written(base: &str, path: &str) -> Option<String> {
        let path = path.trim().replace('\\', "/");
        if path.is_empty() {
            return None;
        }
        let joined = if is_absolute(&path) { path } else { format!("{base}/{path}") };
        let (prefix, rest) = match drive(&joined) {
            Some(letter) => (format!("{}:", char::from(letter)), &joined[2..]),
            None => (String::new(), joined.as_str()),
        };
        let mut parts: Vec<&str> = Vec::new();
        for part in rest.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                _ => parts.push(part),
            }
        }
        Some(format!("{prefix}/{}", parts.join("/")))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4096, ..Default::default() })]
        /// The join and normalisation done in one buffer give what the first version gave,
        /// and a normal path.
        #[test]
        fn absolute_paths_are_joined_and_normalised_as_first_written(
            base in proptest::sample::select(vec!["/b/app", "C:/b", "/", "d:/"]),
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "/", "\\", "..", ".", "a", "b.c", "C:", "c:\\", " ", "é", "//", "$", "x y",
            ]), 0..12),
        ) {
            let path = parts.concat();
            let now = absolute(base, &path);
            proptest::prop_assert_eq!(&now, &absolute_as_first_written(base, &path));
            if let Some(now) = now {
                proptest::prop_assert!(is_normal(&now), "{}", now);
            }
        }
    }
}
