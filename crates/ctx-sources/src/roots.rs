//! The source roots of an index: the folders its files outside the workspace share.
//!
//! The rule (docs/sources.md): the files outside the workspace are grouped under their
//! longest common folder. That folder is a root unless it is a file-system or drive root, the
//! home folder or one of its ancestors, a folder the sandbox denies (`.ssh`, `.git`…) or one
//! in it, a hidden folder of the home folder (`~/.config`) or one in it, or a system folder (`/usr`, `/etc`, `C:/Windows`,
//! `C:/Program Files`… and everything in them; `/tmp`, `/opt`, `/home`… themselves). When it
//! is refused, the files are split by the next folder below it and each group gets the same
//! treatment; files lying directly in a refused folder get no root: they stay in the index,
//! listed, but unreadable.

use crate::paths;

/// Folders that are never a root, and nothing in them either.
const SYSTEM_TREES: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/run",
    "/sbin",
    "/sys",
    "/usr",
    "/var",
    "/System",
    "/Library",
    "/Applications",
    "/private",
    "C:/Windows",
    "C:/Program Files",
    "C:/Program Files (x86)",
    "C:/ProgramData",
];

/// Folders that are never a root themselves (a folder in them may be).
const SHARED_FOLDERS: &[&str] =
    &["/home", "/Users", "/root", "/opt", "/tmp", "/mnt", "/media", "/srv", "/Volumes", "/nix"];

/// Whether `dir` may be a source root (see the module documentation).
pub(crate) fn allowed(dir: &str, home: Option<&str>) -> bool {
    let dir = dir.trim_end_matches('/');
    let root = dir.is_empty() || (paths::drive(&format!("{dir}/")).is_some() && dir.len() == 2);
    let home_or_above = home.is_some_and(|h| paths::within(h, dir));
    let system = SYSTEM_TREES.iter().any(|s| paths::within(dir, s) || same(dir, s));
    let shared = SHARED_FOLDERS.iter().any(|s| same(dir, s));
    // A root in a denied folder (`~/.ssh`, a `.git` folder) would open the rest of it, and a
    // hidden folder of the home folder (`~/.config`, `~/.local`) holds tools' settings and
    // tokens, not sources.
    let comps: Vec<&str> = dir.split('/').filter(|c| !c.is_empty()).collect();
    let denied = ctx_fs::builtin_denial(&comps).is_some();
    let hidden = home.is_some_and(|h| {
        paths::within(dir, h) && paths::relative_to(dir, h).split('/').any(|c| c.starts_with('.'))
    });
    !(root || home_or_above || system || shared || denied || hidden)
}

fn same(a: &str, b: &str) -> bool {
    if paths::drive(a).is_some() { a.eq_ignore_ascii_case(b) } else { a == b }
}

/// The source roots for `files` (absolute, normalised), sorted; `workspace` files are left
/// out, and paths of the other platform's kind (drive paths on Unix, POSIX ones on Windows)
/// name nothing on this disk and get no root.
pub(crate) fn source_roots(files: &[&str], workspace: &str, home: Option<&str>) -> Vec<String> {
    let dirs: Vec<&str> = files
        .iter()
        .filter(|f| !paths::within(f, workspace) && native(f))
        .map(|f| paths::parent(f))
        .collect();
    let mut roots = Vec::new();
    cluster(&dirs, home, &mut roots);
    roots.sort();
    roots.dedup();
    roots
}

fn native(path: &str) -> bool {
    paths::drive(path).is_some() == cfg!(windows)
}

fn cluster(dirs: &[&str], home: Option<&str>, roots: &mut Vec<String>) {
    let Some(common) = common_ancestor(dirs) else { return };
    if allowed(&common, home) {
        roots.push(common);
        return;
    }
    let mut groups: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for dir in dirs {
        let rest = paths::relative_to(dir, &common);
        if let Some(next) = rest.split('/').next().filter(|n| !n.is_empty()) {
            groups.entry(next).or_default().push(dir);
        }
    }
    for group in groups.values() {
        cluster(group, home, roots);
    }
}

/// The longest folder that holds every one of `dirs`.
fn common_ancestor(dirs: &[&str]) -> Option<String> {
    let first = dirs.first()?;
    let mut common: &str = first;
    for dir in &dirs[1..] {
        while !paths::within(dir, common) {
            let up = paths::parent(common);
            if up == common {
                break;
            }
            common = up;
        }
    }
    Some(common.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_folder_is_the_root() {
        let files = ["/src/FreeCAD/src/App/a.cpp", "/src/FreeCAD/src/Gui/b.h", "/build/x.h"];
        assert_eq!(source_roots(&files, "/build", None), ["/src/FreeCAD/src"]);
    }

    #[test]
    fn refused_folders_are_split_and_system_files_get_no_root() {
        let files = [
            "/home/u/src/a/x.c",
            "/home/u/src/b/y.c",
            "/opt/proj/z.c",
            "/usr/include/stdio.h",
            "/etc/passwd",
        ];
        assert_eq!(
            source_roots(&files, "/home/u/build", Some("/home/u")),
            ["/home/u/src", "/opt/proj"]
        );
    }

    #[test]
    fn home_and_its_ancestors_are_never_roots() {
        let files = ["/home/u/.ssh/id_rsa", "/home/u/notes.txt", "/home/u/w/a.c"];
        let roots = source_roots(&files, "/home/u/w/build", Some("/home/u"));
        assert_eq!(roots, ["/home/u/w"], "home, ~/.ssh and their ancestors are never roots");
        assert!(!allowed("/", None));
        assert!(!allowed("/home", None));
        assert!(!allowed("/home/u", Some("/home/u")));
        assert!(!allowed("/usr/local/src", None));
        assert!(!allowed("C:/Program Files/Windows Kits", None));
        assert!(
            !allowed("c:/program files (x86)/windows kits/10/include", None),
            "drive paths compare without case"
        );
        assert!(!allowed("D:", None));
        assert!(allowed("/tmp/x", None));
        assert!(!allowed("/home/u/.config/gh", Some("/home/u")), "a hidden folder holds tokens");
        assert!(!allowed("/home/u/.local/share/x", Some("/home/u")));
        assert!(allowed("/home/u/src/app", Some("/home/u")));
    }
}
