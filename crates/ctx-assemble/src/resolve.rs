//! Resolving a written path (assembly.md §2): free functions over the sandbox and the
//! pluggable [`Resolver`]. Nothing here writes output or records diagnostics.

use ctx_fs::{Content, FileKind, Location, RootId, RootKind, Sandbox, WalkOptions};
use ctx_syntax::{Code, Reference, TargetKind};

use crate::record::Kind;

/// What the source index (or any other resolver an embedder plugs in) says about a path
/// that did not resolve from the including file's directory or the workspace root.
#[derive(Debug)]
pub enum Resolution {
    /// The path names this location.
    Found(Location),
    /// The name matches several files; the candidates, shown relative to their roots.
    Ambiguous(Vec<String>),
    /// Nothing known by that name.
    NotFound,
    /// A file is known by that name, and the sandbox refuses it (a denied name, a link out of
    /// its root…).
    Refused(ctx_fs::Error),
}

/// The last step of path resolution (assembly.md §2, step 5): the out-of-source build's
/// source index plugs in here.
pub trait Resolver: Send + Sync {
    /// Resolves a path that no earlier rule resolved.
    fn resolve(&self, written: &str, sandbox: &Sandbox) -> Resolution;

    /// The closest path the resolver knows for one that resolved nowhere, for a "did you
    /// mean"; none by default.
    fn closest(&self, _written: &str, _sandbox: &Sandbox) -> Option<String> {
        None
    }
}

/// Most missing paths one run remembers in [`Remembered`].
const MISSES_KEPT: usize = 10_000;

/// The resolver of one run, which remembers the paths it did not know: a document that names
/// one missing path many times asks the resolver once.
pub(crate) struct Remembered<'r> {
    pub(crate) inner: &'r dyn Resolver,
    pub(crate) misses: &'r std::sync::Mutex<std::collections::HashSet<String>>,
}

impl Resolver for Remembered<'_> {
    fn resolve(&self, written: &str, sandbox: &Sandbox) -> Resolution {
        let known = |misses: &std::collections::HashSet<String>| misses.contains(written);
        if self.misses.lock().is_ok_and(|misses| known(&misses)) {
            return Resolution::NotFound;
        }
        let resolution = self.inner.resolve(written, sandbox);
        if matches!(resolution, Resolution::NotFound)
            && written.len() <= HINT_PATH_MAX
            && let Ok(mut misses) = self.misses.lock()
            && misses.len() < MISSES_KEPT
        {
            misses.insert(written.to_owned());
        }
        resolution
    }

    fn closest(&self, written: &str, sandbox: &Sandbox) -> Option<String> {
        self.inner.closest(written, sandbox)
    }
}

/// A reference resolved to a location, before it is read or rendered.
pub(crate) struct Resolved {
    pub(crate) kind: Kind,
    pub(crate) location: Location,
    /// The path shown to the user.
    pub(crate) path: String,
    /// The file's content, when resolving it read it in the same pass.
    pub(crate) content: Option<Content>,
    /// For a glob whose folder the resolver found (a folder under a source root): the rest of
    /// the pattern, matched under `location`.
    pub(crate) pattern: Option<String>,
}

/// Why a reference did not resolve.
pub(crate) enum Failure {
    /// The sandbox refused or missed it.
    Fs(ctx_fs::Error),
    /// Anything else, with its code and message.
    Other(Code, String),
}

impl Failure {
    pub(crate) fn code(&self) -> Code {
        match self {
            Failure::Fs(err) => err.code(),
            Failure::Other(code, _) => *code,
        }
    }

    pub(crate) fn message(&self) -> String {
        match self {
            Failure::Fs(err) => err.to_string(),
            Failure::Other(_, message) => message.clone(),
        }
    }
}

/// The path of a location as shown to the user: relative to the workspace root (`.` for
/// the root itself), or joined to its root's path for the extra roots.
pub(crate) fn display_path(sandbox: &Sandbox, location: &Location) -> String {
    display_in(sandbox, location.root(), location.path().as_str())
}

/// A path inside `root` as shown to the user (see [`display_path`]); a walk shows an entry
/// reached through a link under the link's own path.
pub(crate) fn display_in(sandbox: &Sandbox, root: RootId, path: &str) -> String {
    if root == RootId::WORKSPACE {
        if path.is_empty() { ".".to_owned() } else { path.to_owned() }
    } else {
        let root = sandbox.root_name(root);
        if path.is_empty() { root } else { format!("{root}/{path}") }
    }
}

/// Whether a path is absolute on any platform: `/x`, `\x`, `C:\x`, `C:/x`, `\\server`, and
/// the home paths `~`, `~/x` (assembly.md §2).
pub(crate) fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    let home = path == "~" || path.starts_with("~/") || path.starts_with("~\\");
    home || matches!(b.first(), Some(b'/' | b'\\'))
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && matches!(b[2], b'/' | b'\\'))
}

/// Whether a path is a URL or names another scheme (`http:`, `file:`…). A drive letter is not
/// a scheme.
/// `E_SCHEME` for a URL or another scheme written where a path is wanted.
pub(crate) fn not_a_path(written: &str) -> Option<Failure> {
    let scheme = scheme(written)?;
    let message = format!("{scheme}: is not a path; ctx reads files only: {written}");
    Some(Failure::Other(Code::Scheme, message))
}

fn scheme(path: &str) -> Option<&str> {
    let (scheme, rest) = path.split_once(':')?;
    let valid = scheme.len() >= 2
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    const KNOWN: [&str; 10] =
        ["http", "https", "file", "ftp", "ftps", "data", "mailto", "ssh", "git", "javascript"];
    (valid && (rest.starts_with("//") || KNOWN.iter().any(|k| k.eq_ignore_ascii_case(scheme))))
        .then_some(scheme)
}

/// Resolves a relative or absolute path as assembly.md §2 says, without the source index:
/// absolute paths as they are; relative ones from `base`, then from the workspace root, then
/// from each extra root given with `--allow`.
pub(crate) fn resolve_relative(
    sandbox: &Sandbox,
    written: &str,
    base: &Location,
) -> Result<Location, Failure> {
    relative(sandbox, written, base, |written, base| sandbox.resolve(written, base))
}

/// Resolves like [`resolve_relative`] and reads the file in the same pass; with the path
/// shown for it (see [`shown`]).
fn read_relative(
    sandbox: &Sandbox,
    written: &str,
    base: &Location,
    whole_up_to: u64,
) -> Result<(Location, Option<Content>, String), Failure> {
    relative(sandbox, written, base, |written, base| {
        let (location, content) = sandbox.read_path_up_to(written, base, whole_up_to)?;
        let shown = shown(sandbox, written, base, &location);
        Ok((location, content, shown))
    })
}

/// Resolves like [`resolve_relative`], with the path shown for it (see [`shown`]).
fn resolve_shown(
    sandbox: &Sandbox,
    written: &str,
    base: &Location,
) -> Result<(Location, String), Failure> {
    relative(sandbox, written, base, |written, base| {
        let location = sandbox.resolve(written, base)?;
        let shown = shown(sandbox, written, base, &location);
        Ok((location, shown))
    })
}

/// The path shown for `written`, resolved from `base` to `found`: as written, normalised,
/// so a symbolic link inside the root keeps its own name; the target's path when the link
/// leads into another root.
fn shown(sandbox: &Sandbox, written: &str, base: Option<&Location>, found: &Location) -> String {
    match sandbox.written_location(written, base) {
        Ok(lexical) if lexical.root() == found.root() => display_path(sandbox, &lexical),
        _ => display_path(sandbox, found),
    }
}

/// The order of §2 for any operation on a path: absolute as it is; relative from `base`, then
/// from the workspace root, then from each `--allow` root in order (found under several of
/// them: `E_AMBIGUOUS`). A directory (or another irregular entry) found on the way is a hit
/// for the caller to look at.
fn relative<T>(
    sandbox: &Sandbox,
    written: &str,
    base: &Location,
    op: impl Fn(&str, Option<&Location>) -> Result<T, ctx_fs::Error>,
) -> Result<T, Failure> {
    if is_absolute(written) {
        return op(written, None).map_err(Failure::Fs);
    }
    let first = match op(written, Some(base)) {
        Ok(found) => return Ok(found),
        Err(first) if first.code() == Code::NotRegular => return Err(Failure::Fs(first)),
        Err(first) => first,
    };
    let err = if *base == sandbox.workspace() {
        first
    } else {
        match op(written, None) {
            Ok(found) => return Ok(found),
            Err(second) => pick_error(first, second),
        }
    };
    if err.code() != Code::NotFound {
        return Err(Failure::Fs(err));
    }
    let mut hits = Vec::new();
    let mut irregular = None;
    for root in sandbox.roots().filter(|&r| sandbox.root_kind(r) == RootKind::Allowed) {
        match op(written, Some(&Location::root_of(root))) {
            Ok(found) => hits.push((root, found)),
            Err(e) if e.code() == Code::NotRegular => irregular = irregular.or(Some(e)),
            Err(_) => {}
        }
    }
    if hits.len() > 1 {
        let candidates: Vec<String> = hits
            .iter()
            .map(|(root, _)| {
                let root = sandbox.root_path(*root).as_str().trim_end_matches('/');
                format!("{root}/{}", written.replace('\\', "/"))
            })
            .collect();
        return Err(Failure::Other(
            Code::Ambiguous,
            format!("{written} is found under several roots: {}", candidates.join(", ")),
        ));
    }
    match (hits.pop(), irregular) {
        (Some((_, found)), _) => Ok(found),
        (None, Some(irregular)) => Err(Failure::Fs(irregular)),
        (None, None) => Err(Failure::Fs(err)),
    }
}

/// Which failure to report when a path failed from the including file's directory (`first`)
/// and from the workspace root (`second`): the first, unless it is a miss and the second
/// found something there that was refused (a denied or irregular file). A `..` that leaves
/// the root only from the root (`E_OUTSIDE`) says nothing about the file, so the miss stands.
fn pick_error(first: ctx_fs::Error, second: ctx_fs::Error) -> ctx_fs::Error {
    let informative = !matches!(second.code(), Code::NotFound | Code::Outside);
    if first.code() == Code::NotFound && informative { second } else { first }
}

/// Resolves a reference written in a document whose directory is `dir` to a location and
/// what it is: scheme and emptiness checks, then files (read in the same pass when at most
/// `whole_up_to` bytes long), directories and globs, then the resolver.
pub(crate) fn resolve(
    sandbox: &Sandbox,
    resolver: Option<&dyn Resolver>,
    dir: &Location,
    reference: &Reference<'_>,
    written: &str,
    whole_up_to: u64,
) -> Result<Resolved, Failure> {
    if let Some(failure) = not_a_path(written) {
        return Err(failure);
    }
    if written.is_empty() {
        return Err(Failure::Other(Code::BadPath, "empty path".into()));
    }
    if reference.target == TargetKind::Glob {
        // A file whose name holds glob characters is that file.
        if let Ok((location, path)) = resolve_shown(sandbox, written, dir) {
            return Ok(Resolved { kind: Kind::File, path, location, content: None, pattern: None });
        }
        let path = written.replace('\\', "/");
        if let Some(found) = resolver.and_then(|r| glob_through(sandbox, r, dir, &path)) {
            return Ok(found);
        }
        return Ok(Resolved {
            kind: Kind::Glob,
            location: dir.clone(),
            path,
            content: None,
            pattern: None,
        });
    }
    if reference.target == TargetKind::File {
        // Most references name files: resolve and read in one pass through the sandbox.
        match read_relative(sandbox, written, dir, whole_up_to) {
            Ok((location, content, path)) => {
                return Ok(Resolved { kind: Kind::File, location, path, content, pattern: None });
            }
            // A directory named without its trailing slash, or something that is not a
            // regular file: the general path below tells which.
            Err(Failure::Fs(err)) if err.code() == Code::NotRegular => {}
            Err(Failure::Fs(err)) if err.code() == Code::NotFound && resolver.is_some() => {}
            Err(failure) => return Err(failure),
        }
    }
    let (location, path) = match resolve_shown(sandbox, written, dir) {
        Ok(found) => found,
        Err(Failure::Fs(err)) if err.code() == Code::NotFound && resolver.is_some() => {
            match resolver.map(|r| r.resolve(written, sandbox)) {
                Some(Resolution::Found(location)) => {
                    let path = display_path(sandbox, &location);
                    (location, path)
                }
                Some(Resolution::Ambiguous(candidates)) => {
                    return Err(Failure::Other(
                        Code::Ambiguous,
                        format!("{written} matches several files: {}", candidates.join(", ")),
                    ));
                }
                Some(Resolution::Refused(refused)) => return Err(Failure::Fs(refused)),
                _ => return Err(Failure::Fs(err)),
            }
        }
        Err(failure) => return Err(failure),
    };
    let stat = sandbox.stat(&location).map_err(Failure::Fs)?;
    let kind = if stat.kind == FileKind::Dir { Kind::Directory } else { Kind::File };
    if kind == Kind::File && reference.target == TargetKind::Directory {
        // A trailing `/` names a directory (syntax.md §2); the system finds no `b.txt/` either.
        let message = format!("not a directory: {written} (the trailing / names a directory)");
        return Err(Failure::Other(Code::NotFound, message));
    }
    Ok(Resolved { kind, path, location, content: None, pattern: None })
}

/// A glob whose literal folder is not in the workspace (`src/App/*.h` from a build folder),
/// matched under the folder the resolver finds for it (assembly.md §2 rule 5).
fn glob_through(
    sandbox: &Sandbox,
    resolver: &dyn Resolver,
    dir: &Location,
    pattern: &str,
) -> Option<Resolved> {
    let (prefix, rest) = ctx_fs::split_glob(pattern);
    if prefix.is_empty() || is_absolute(&prefix) {
        return None;
    }
    match resolve_relative(sandbox, &prefix, dir) {
        Err(Failure::Fs(err)) if err.code() == Code::NotFound => {}
        _ => return None,
    }
    let Resolution::Found(location) = resolver.resolve(&prefix, sandbox) else { return None };
    if sandbox.stat(&location).ok()?.kind != FileKind::Dir {
        return None;
    }
    let path = pattern.to_owned();
    Some(Resolved { kind: Kind::Glob, location, path, content: None, pattern: Some(rest) })
}

/// Most missing paths of one run that get a "did you mean": past them a miss costs no listing
/// and no comparison, and its message has no hint (docs/assembly.md, "Diagnostics").
pub(crate) const HINTS_MAX: usize = 32;

/// Most folder listings [`Hints`] keeps; a folder past them is listed again when asked.
const LISTINGS_KEPT: usize = 8;

/// Longest written path that gets a hint: no file is named by a longer one, and the memo of
/// answers stays small.
const HINT_PATH_MAX: usize = 1024;

/// The "did you mean" of one run: a missing path is answered once, a folder listed once (up
/// to [`LISTINGS_KEPT`] of them), and at most [`HINTS_MAX`] different paths are answered, so
/// a document of many misses costs what a few do.
#[derive(Default)]
pub(crate) struct Hints {
    /// The answer for each missing path, by the folder it was looked up from and the document
    /// that names it.
    answers: std::collections::HashMap<(Location, Option<Location>, String), Option<String>>,
    /// The names in the folders listed so far (none for one that could not be listed).
    listings: Vec<(Location, Option<Vec<String>>)>,
}

impl Hints {
    /// A "did you mean" for a missing file: the closest name in the directory it was looked
    /// for in, from `base`, then from the workspace root (only those directories' own
    /// entries are listed); else the resolver's closest path. Never the document that names
    /// the missing file (`including`): including it from itself would be a cycle.
    pub(crate) fn hint(
        &mut self,
        sandbox: &Sandbox,
        resolver: Option<&dyn Resolver>,
        written: &str,
        base: &Location,
        including: Option<&Location>,
    ) -> Option<String> {
        if written.len() > HINT_PATH_MAX {
            return None;
        }
        let key = (base.clone(), including.cloned(), written.to_owned());
        if let Some(answer) = self.answers.get(&key) {
            return answer.clone();
        }
        if self.answers.len() >= HINTS_MAX {
            return None;
        }
        let answer = self
            .did_you_mean(sandbox, written, base, including)
            .or_else(|| resolver.and_then(|r| r.closest(written, sandbox)));
        self.answers.insert(key, answer.clone());
        answer
    }

    fn did_you_mean(
        &mut self,
        sandbox: &Sandbox,
        written: &str,
        base: &Location,
        including: Option<&Location>,
    ) -> Option<String> {
        let normal = written.replace('\\', "/");
        let (dir, name) = match normal.rsplit_once('/') {
            Some((dir, name)) => (dir, name),
            None => ("", normal.as_str()),
        };
        if name.is_empty() || is_absolute(written) {
            return None;
        }
        let mut bases = vec![base.clone()];
        if *base != sandbox.workspace() {
            bases.push(sandbox.workspace());
        }
        bases.into_iter().find_map(|base| {
            let location =
                if dir.is_empty() { base } else { sandbox.resolve(dir, Some(&base)).ok()? };
            // The including document is no candidate in its own folder.
            let own = including
                .filter(|doc| doc.parent().as_ref() == Some(&location))
                .and_then(|doc| doc.path().file_name());
            let names = self.names(sandbox, &location)?;
            let candidate = closest_name(name, names.iter().filter(|n| Some(n.as_str()) != own))?;
            Some(if dir.is_empty() { candidate } else { format!("{dir}/{candidate}") })
        })
    }

    /// The names of a folder's own entries, listed once while it is among the kept ones.
    fn names(
        &mut self,
        sandbox: &Sandbox,
        location: &Location,
    ) -> Option<std::borrow::Cow<'_, [String]>> {
        if let Some(i) = self.listings.iter().position(|(l, _)| l == location) {
            return self.listings[i].1.as_deref().map(std::borrow::Cow::Borrowed);
        }
        let options = WalkOptions::of(sandbox).max_depth(1).names_only();
        let walk = sandbox.walk_with(location, options).ok();
        let names: Option<Vec<String>> = walk.map(|walk| {
            let entries = walk.entries.iter().filter(|e| e.depth == 1);
            entries.filter_map(|e| Some(e.path.file_name()?.to_owned())).collect()
        });
        if self.listings.len() >= LISTINGS_KEPT {
            return names.map(std::borrow::Cow::Owned);
        }
        self.listings.push((location.clone(), names));
        self.listings.last().and_then(|(_, names)| names.as_deref()).map(std::borrow::Cow::Borrowed)
    }
}

/// The candidate closest to `name` within an edit distance of a quarter of its length (at
/// least 2), the smallest on a tie; names whose lengths alone differ by more are not compared.
fn closest_name<'n>(name: &str, candidates: impl Iterator<Item = &'n String>) -> Option<String> {
    let len = name.chars().count();
    let most = 2.max(name.len() / 4);
    let (_, candidate) = candidates
        .filter(|candidate| len.abs_diff(candidate.chars().count()) <= most)
        .filter_map(|candidate| {
            let d = edit_distance(name, candidate);
            (d > 0 && d <= most).then_some((d, candidate))
        })
        .min()?;
    Some(candidate.clone())
}

/// Levenshtein distance over characters, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert_eq!(scheme("https://x.com/a"), Some("https"));
        assert_eq!(scheme("file:/etc/passwd"), Some("file"));
        assert_eq!(scheme("C:/x"), None);
        assert_eq!(scheme("notes:v2.md"), None);
        assert_eq!(scheme("a.md"), None);
    }

    #[test]
    fn absolute_paths() {
        assert!(is_absolute("/etc/passwd"));
        assert!(is_absolute(r"C:\x"));
        assert!(is_absolute(r"\\server\share"));
        assert!(!is_absolute("a/b"));
        assert!(!is_absolute("C:x"));
        assert!(is_absolute("~") && is_absolute("~/notes.md") && is_absolute("~\\x"));
        assert!(!is_absolute("~user/x") && !is_absolute("a~/b"));
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("agnt.rs", "agent.rs"), 1);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
