//! The source roots of an index: the folders its files outside the workspace share.
//!
//! The rule (docs/sources.md): the files outside the workspace are grouped under their
//! longest common folder. That folder is a root unless the sandbox's root rule refuses it
//! (`ctx_fs::root_refusal`: a file-system or drive root, the home folder or one of its
//! ancestors, a shared folder such as `/tmp` itself, a system folder, a denied folder or a
//! hidden folder of the home folder, the last three with everything in them). When it is
//! refused but a folder below it may be a root, the files are split by the next folder below
//! it and each group gets the same treatment; files lying directly in a refused folder, or
//! anywhere in a folder refused with everything in it, get no root: they stay in the index,
//! listed, but unreadable. The sandbox judges each root again where it really leads when it
//! opens it.

use crate::paths;

/// Most source roots of an index; past it the roots holding the fewest files are left out
/// (their files stay listed, unreadable) with a warning.
pub const MAX_SOURCE_ROOTS: usize = 64;

/// What the rule says of a folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// It may be a root.
    Root,
    /// It may not, but a folder in it may (`/`, the home folder and above, `/opt`…).
    Below,
    /// Neither it nor anything in it (a system tree, a denied or hidden-home folder).
    Never,
}

/// Whether `dir` may be a source root (see the module documentation).
#[cfg(test)]
fn allowed(dir: &str, home: Option<&str>) -> bool {
    verdict(dir, home) == Verdict::Root
}

/// The root rule of the sandbox (`ctx_fs::root_refusal`, one rule for every root a project
/// file asks for), read as what it leaves of the folders below a refused one.
fn verdict(dir: &str, home: Option<&str>) -> Verdict {
    use ctx_fs::RootRefusal;
    let dir = if dir.is_empty() { "/" } else { dir };
    match ctx_fs::root_refusal(dir, home) {
        None => Verdict::Root,
        Some(RootRefusal::FileSystemRoot | RootRefusal::Shared | RootRefusal::HomeOrAbove) => {
            Verdict::Below
        }
        Some(_) => Verdict::Never,
    }
}

/// The source roots for `files` (each as its folder and name) and the wildcard `folders`
/// (absolute, normalised), sorted,
/// at most [`MAX_SOURCE_ROOTS`], and how many more the rule found; `workspace` files are
/// left out, and paths of the other platform's kind (drive paths on Unix, POSIX ones on
/// Windows) name nothing on this disk and get no root.
pub(crate) fn source_roots<'a>(
    files: impl Iterator<Item = (&'a str, &'a str)>,
    folders: impl Iterator<Item = &'a str>,
    workspace: &str,
    home: Option<&str>,
) -> (Vec<String>, usize) {
    let outside = |p: &&str| !paths::within(p, workspace) && native(p);
    // Each folder with how many of the files and folders it stands for, a run of neighbours
    // (the files of one folder sit together) counted once, so that the rule looks at
    // folders rather than files.
    let mut weighed: Vec<(&str, usize)> = Vec::new();
    // A file in the same folder as the one before is inside or outside as that one is,
    // unless the workspace lies below that folder (then it depends on the name).
    let mut previous: Option<(&str, bool)> = None;
    for (dir, name) in files {
        let counted = match previous {
            Some((last, counted)) if last == dir => counted,
            _ => {
                let counted = outside(&crate::files::join(dir, name).as_str());
                let by_folder =
                    !paths::within(workspace, dir) || workspace.trim_end_matches('/') == dir;
                previous = by_folder.then_some((dir, counted));
                counted
            }
        };
        if !counted {
            continue;
        }
        match weighed.last_mut() {
            Some((last, count)) if *last == dir => *count += 1,
            _ => weighed.push((dir, 1)),
        }
    }
    for dir in folders.filter(outside) {
        match weighed.last_mut() {
            Some((last, count)) if *last == dir => *count += 1,
            _ => weighed.push((dir, 1)),
        }
    }
    let dirs: Vec<&str> = weighed.iter().map(|(dir, _)| *dir).collect();
    let mut roots = Vec::new();
    cluster(&dirs, home, &mut roots);
    roots.sort();
    roots.dedup();
    let more = roots.len().saturating_sub(MAX_SOURCE_ROOTS);
    if more > 0 {
        // The roots that hold the most of the files and folders stay.
        let held = |root: &String| {
            weighed.iter().filter(|(d, _)| paths::within(d, root)).map(|(_, n)| n).sum::<usize>()
        };
        let mut counted: Vec<(usize, String)> = roots.into_iter().map(|r| (held(&r), r)).collect();
        counted.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        roots = counted.into_iter().take(MAX_SOURCE_ROOTS).map(|(_, r)| r).collect();
        roots.sort();
    }
    (roots, more)
}

fn native(path: &str) -> bool {
    paths::drive(path).is_some() == cfg!(windows)
}

/// Roots for `dirs`: their common folder, or, when the rule refuses it but not what is in
/// it, the roots of each group of them by the next folder below it. The recursion goes down
/// only through folders of the [`Verdict::Below`] kind (`/`, `/home`, the home folder…), so it
/// is a few levels deep whatever the paths.
fn cluster(dirs: &[&str], home: Option<&str>, roots: &mut Vec<String>) {
    let Some(common) = common_ancestor(dirs) else { return };
    match verdict(&common, home) {
        Verdict::Root => return roots.push(common),
        Verdict::Never => return,
        Verdict::Below => {}
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
    use crate::files::split;

    fn roots_of(files: &[&str], workspace: &str, home: Option<&str>) -> Vec<String> {
        source_roots(files.iter().map(|f| split(f)), std::iter::empty(), workspace, home).0
    }

    #[test]
    fn files_of_one_folder_count_alike_unless_the_workspace_lies_in_it() {
        // Runs of one folder are looked at once; beside the workspace, each file by itself.
        let files =
            ["/w/b/build", "/w/b/x.c", "/w/b/y.c", "/src/a.c", "/src/b.c", "/w/b/build/z.c"];
        let mut reversed = files;
        reversed.reverse();
        assert_eq!(roots_of(&files, "/w/b/build", None), ["/src", "/w/b"]);
        assert_eq!(roots_of(&reversed, "/w/b/build", None), ["/src", "/w/b"]);
    }

    #[test]
    fn the_common_folder_is_the_root() {
        let files = ["/src/FreeCAD/src/App/a.cpp", "/src/FreeCAD/src/Gui/b.h", "/build/x.h"];
        assert_eq!(roots_of(&files, "/build", None), ["/src/FreeCAD/src"]);
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
            roots_of(&files, "/home/u/build", Some("/home/u")),
            ["/home/u/src", "/opt/proj"]
        );
    }

    #[test]
    fn home_and_its_ancestors_are_never_roots() {
        let files = ["/home/u/.ssh/id_rsa", "/home/u/notes.txt", "/home/u/w/a.c"];
        let roots = roots_of(&files, "/home/u/w/build", Some("/home/u"));
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

    #[test]
    fn deep_paths_in_refused_trees_cost_one_look() {
        // 2 000 folders deep under /usr: no root, decided at /usr without going down.
        let deep = format!("/usr/{}x.c", "a/".repeat(2000));
        let files: Vec<&str> = std::iter::repeat_n(deep.as_str(), 1000).collect();
        assert!(roots_of(&files, "/w", None).is_empty());
    }

    #[test]
    fn the_roots_are_capped_to_those_holding_most() {
        let files: Vec<String> = (0..MAX_SOURCE_ROOTS + 10)
            .flat_map(|i| {
                let copies = if i < 5 { 3 } else { 1 };
                (0..copies).map(move |c| format!("/tmp/r{i:03}/f{c}.c"))
            })
            .collect();
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let (roots, more) =
            source_roots(files.iter().map(|f| split(f)), std::iter::empty(), "/w", None);
        assert_eq!((roots.len(), more), (MAX_SOURCE_ROOTS, 10));
        for i in 0..5 {
            assert!(roots.contains(&format!("/tmp/r{i:03}")), "the fullest roots stay");
        }
    }
}
