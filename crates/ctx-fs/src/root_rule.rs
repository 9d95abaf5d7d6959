//! The root rule: which folders may never be a root that a project file asks for
//! (docs/security.md, "The root rule").
//!
//! A folder is refused when it is a file-system or drive root, the home folder or one of its
//! ancestors, a system folder or anything in one (`/etc`, `/usr`, `C:/Windows`…), a shared
//! folder itself (`/tmp`, `/home`, `/opt`…; a folder below one is fine), a folder the
//! built-in deny list covers (`~/.ssh`, a `.git`) or anything in one, or a hidden folder of the
//! home folder (`~/.config`, `~/.aws`: tools' settings and tokens) or anything in one.
//!
//! The rule is a function of a path only. It is applied to the path as written before
//! anything is opened (so that refusing looks at nothing on disk) and again to the real path
//! of the opened handle ([`crate::SandboxBuilder::project_root`]), so a link cannot carry a
//! root where its written path would not be allowed.

use std::fmt;

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
const SHARED_FOLDERS: &[&str] = &[
    "/home",
    "/Users",
    "/root",
    "/opt",
    "/tmp",
    "/mnt",
    "/media",
    "/srv",
    "/Volumes",
    "/nix",
    "C:/Users",
    "/private/tmp",
    "/var/folders",
    "/private/var/folders",
];

/// Shared folders inside system trees: macOS keeps `/tmp` in `/private` and each user's
/// temporary folders in `/var/folders`, so a folder below these is no system folder.
const SHARED_IN_SYSTEM: &[&str] = &["/private/tmp", "/var/folders", "/private/var/folders"];

/// Why a folder may not be a root asked for by a project file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RootRefusal {
    /// `/`, `C:/`: the whole disk.
    FileSystemRoot,
    /// A system folder or a folder in one (`/etc`, `/usr/local`, `C:/Windows`).
    System,
    /// A folder shared by every project or user (`/tmp`, `/home`, `/opt`), itself.
    Shared,
    /// The home folder, or a folder that holds it.
    HomeOrAbove,
    /// A folder the built-in deny list covers (`.ssh`, `.aws`, a `.git`), or one in it.
    Denied,
    /// A hidden folder of the home folder (`~/.config`, `~/.local`), or one in it.
    HiddenHome,
}

impl RootRefusal {
    /// The reason in words, lower-case: "a system folder".
    pub fn reason(self) -> &'static str {
        match self {
            RootRefusal::FileSystemRoot => "a file system root",
            RootRefusal::System => "a system folder",
            RootRefusal::Shared => "a folder shared by every project",
            RootRefusal::HomeOrAbove => "the home folder or a folder holding it",
            RootRefusal::Denied => "a folder the deny list covers",
            RootRefusal::HiddenHome => "a hidden folder of the home folder",
        }
    }
}

impl fmt::Display for RootRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// Why `dir`, an absolute path (POSIX, or a Windows drive path; `\` or `/` separators, no `.`
/// or `..` left), may not be a root that a project file asks for, if it may not. `home` is the
/// home folder, absolute, when one is known.
pub fn root_refusal(dir: &str, home: Option<&str>) -> Option<RootRefusal> {
    let dir = normal(dir);
    let home = home.map(normal);
    let dir = dir.as_str();
    let comps: Vec<&str> = dir.split('/').filter(|c| !c.is_empty()).collect();
    let drive = drive(dir);
    if comps.is_empty() || (drive && comps.len() == 1) {
        return Some(RootRefusal::FileSystemRoot);
    }
    if SHARED_FOLDERS.iter().any(|s| same(dir, s)) {
        return Some(RootRefusal::Shared);
    }
    let shared_in_system = SHARED_IN_SYSTEM.iter().any(|s| within(dir, s) && !same(dir, s));
    if !shared_in_system && SYSTEM_TREES.iter().any(|s| within(dir, s)) {
        return Some(RootRefusal::System);
    }
    if let Some(home) = home.as_deref()
        && within(home, dir)
    {
        return Some(RootRefusal::HomeOrAbove);
    }
    if crate::deny::builtin_denial(&comps).is_some() {
        return Some(RootRefusal::Denied);
    }
    if let Some(home) = home.as_deref()
        && within(dir, home)
        && dir[home.trim_end_matches('/').len()..].split('/').any(|c| c.starts_with('.'))
    {
        return Some(RootRefusal::HiddenHome);
    }
    None
}

/// `/`-separated, without a trailing `/` (but `/` itself), without a Windows verbatim prefix.
fn normal(path: &str) -> String {
    let path = path.strip_prefix(r"\\?\").unwrap_or(path);
    let path = path.replace('\\', "/");
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() { "/".to_owned() } else { trimmed.to_owned() }
}

fn drive(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Whether `path` is `dir` or lies inside it, by whole components (drive paths compare
/// without case, as Windows does).
fn within(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    if dir.is_empty() {
        return path.starts_with('/');
    }
    let fold = drive(dir) || drive(path);
    let head = path.get(..dir.len());
    let same_head = match head {
        Some(head) if fold => head.eq_ignore_ascii_case(dir),
        Some(head) => head == dir,
        None => false,
    };
    same_head && matches!(path.as_bytes().get(dir.len()), None | Some(b'/'))
}

fn same(a: &str, b: &str) -> bool {
    if drive(a) || drive(b) { a.eq_ignore_ascii_case(b) } else { a == b }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disk_the_system_and_the_home_folder_are_refused() {
        let home = Some("/home/u");
        let refused = [
            ("/", RootRefusal::FileSystemRoot),
            ("C:/", RootRefusal::FileSystemRoot),
            ("D:", RootRefusal::FileSystemRoot),
            ("/etc", RootRefusal::System),
            ("/etc/ssh", RootRefusal::System),
            ("/usr/local/src", RootRefusal::System),
            ("/proc/self", RootRefusal::System),
            ("c:/program files (x86)/windows kits/10", RootRefusal::System),
            (r"C:\Windows\System32", RootRefusal::System),
            ("/tmp", RootRefusal::Shared),
            ("/home", RootRefusal::Shared),
            ("/opt/", RootRefusal::Shared),
            ("/home/u", RootRefusal::HomeOrAbove),
            ("/home/u/.ssh", RootRefusal::Denied),
            ("/home/u/work/.git", RootRefusal::Denied),
            ("/home/u/work/.git/hooks", RootRefusal::Denied),
            ("/home/u/.aws", RootRefusal::Denied),
            ("/home/u/.config", RootRefusal::HiddenHome),
            ("/home/u/.config/gh", RootRefusal::HiddenHome),
            ("/home/u/.local/share/x", RootRefusal::HiddenHome),
        ];
        for (dir, why) in refused {
            assert_eq!(root_refusal(dir, home), Some(why), "{dir}");
        }
        assert_eq!(root_refusal("/private/var/folders", home), Some(RootRefusal::Shared));
        assert_eq!(root_refusal("/private/var/db", home), Some(RootRefusal::System));
        for fine in [
            "/home/u/src/app",
            "/tmp/x",
            "/opt/proj",
            "/srv/www/site",
            "D:/src/app",
            "/private/var/folders/xy/T/proj",
            "/private/tmp/proj",
        ] {
            assert_eq!(root_refusal(fine, home), None, "{fine}");
        }
        // Without a known home folder, only the home-relative rules drop out.
        assert_eq!(root_refusal("/home/u", None), None);
        assert_eq!(root_refusal("/home/u/.config", None), None);
        assert_eq!(root_refusal("/home/u/.ssh", None), Some(RootRefusal::Denied));
    }

    #[test]
    fn components_are_whole() {
        assert_eq!(root_refusal("/etcetera/x", None), None);
        assert_eq!(root_refusal("/usrx", None), None);
        assert_eq!(root_refusal("/home/user2", Some("/home/u")), None);
        assert_eq!(root_refusal("/home/u2/.config", Some("/home/u")), None);
    }
}
