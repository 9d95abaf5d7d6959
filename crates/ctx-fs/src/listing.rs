//! A folder's listing for a walk: its names in one string, with the type of each entry the
//! listing gives, read with `getdents64` on Linux (through cap-std elsewhere); and what a walk
//! records of an entry it looks at (its kind, length, time and inode).

use cap_std::fs::Metadata;
use cap_std::fs_utf8::Dir;

/// What a listing says an entry is, without following a link: a regular file, a folder, or
/// anything else (a link, a special file, or a type the file system does not give in its
/// listings, which only a look at the entry tells).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Other,
}

/// The names in a folder, but `.` and `..`, in one string, with their kinds; how many were
/// not UTF-8, and the error that ended the listing, if one did after it began.
#[derive(Default)]
pub(crate) struct Listing {
    text: String,
    names: Vec<(usize, usize, Kind)>,
    pub(crate) bad_names: usize,
    pub(crate) error: Option<std::io::Error>,
}

impl Listing {
    fn push(&mut self, name: &[u8], kind: Kind) {
        match std::str::from_utf8(name) {
            Ok(name) => {
                self.names.push((self.text.len(), name.len(), kind));
                self.text.push_str(name);
            }
            Err(_) => self.bad_names += 1,
        }
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries().map(|(name, _)| name)
    }

    /// Each name with the kind the listing gave it.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, Kind)> {
        self.names.iter().map(|&(start, len, kind)| (&self.text[start..start + len], kind))
    }
}

/// What an entry of a listing is, never following a link.
#[derive(Clone, Copy)]
pub(crate) enum Entry {
    File,
    Dir,
    Link,
    /// A FIFO, socket or device.
    Other,
}

impl Entry {
    pub(crate) fn of(md: &Metadata) -> Entry {
        if md.is_symlink() {
            Entry::Link
        } else if md.is_dir() {
            Entry::Dir
        } else if md.is_file() {
            Entry::File
        } else {
            Entry::Other
        }
    }
}

/// What a walk records of an entry besides its kind: its length, modification time and inode
/// (all zero in a walk of names alone, [`crate::WalkOptions::names_only`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct Facts {
    pub(crate) len: u64,
    pub(crate) modified: Option<std::time::SystemTime>,
    pub(crate) inode: u64,
}

impl Facts {
    pub(crate) fn of(md: &Metadata) -> Facts {
        Facts {
            len: md.len(),
            modified: md.modified().ok().map(|t| t.into_std()),
            inode: inode_of(md),
        }
    }
}

#[cfg(unix)]
fn inode_of(md: &cap_std::fs::Metadata) -> u64 {
    use cap_std::fs::MetadataExt;
    md.ino()
}

#[cfg(not(unix))]
fn inode_of(_: &cap_std::fs::Metadata) -> u64 {
    0
}

/// Lists the folder `dir` with `getdents64` into `buf` (kept from one folder to the next), its
/// names into one string (a listing through cap-std opens the folder twice more and allocates
/// a few times an entry): from the walk's own handle, or, when that handle cannot be read
/// (opened as a path only), from the folder opened again through it.
#[cfg(target_os = "linux")]
pub(crate) fn list_names(
    dir: &Dir,
    buf: &mut Vec<std::mem::MaybeUninit<u8>>,
) -> std::io::Result<Listing> {
    use rustix::fs::{Mode, OFlags, openat};
    buf.resize(32 * 1024, std::mem::MaybeUninit::uninit());
    match read_names(dir, buf) {
        Err(rustix::io::Errno::BADF) => {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = openat(dir, c".", flags, Mode::empty())?;
            Ok(read_names(&fd, buf)?)
        }
        listed => Ok(listed?),
    }
}

/// The names `fd` lists from its start (see [`list_names`]); an error before the first
/// entry is the listing's.
#[cfg(target_os = "linux")]
fn read_names(
    fd: impl std::os::fd::AsFd,
    buf: &mut [std::mem::MaybeUninit<u8>],
) -> rustix::io::Result<Listing> {
    let mut raw = rustix::fs::RawDir::new(fd, buf);
    let (mut listing, mut first) = (Listing::default(), true);
    while let Some(entry) = raw.next() {
        match entry {
            Ok(entry) => {
                first = false;
                let kind = match entry.file_type() {
                    rustix::fs::FileType::RegularFile => Kind::File,
                    rustix::fs::FileType::Directory => Kind::Dir,
                    _ => Kind::Other,
                };
                match entry.file_name().to_bytes() {
                    b"." | b".." => {}
                    name => listing.push(name, kind),
                }
            }
            // A folder removed while it is listed has no entries left (as cap-std lists it).
            Err(rustix::io::Errno::NOENT) => break,
            Err(e) if first => return Err(e),
            Err(e) => {
                listing.error = Some(e.into());
                break;
            }
        }
    }
    Ok(listing)
}

/// Lists the folder `dir` through cap-std.
#[cfg(not(target_os = "linux"))]
pub(crate) fn list_names(
    dir: &Dir,
    _: &mut Vec<std::mem::MaybeUninit<u8>>,
) -> std::io::Result<Listing> {
    let mut listing = Listing::default();
    for entry in dir.entries()? {
        let kind = |e: &cap_std::fs_utf8::DirEntry| match e.file_type() {
            Ok(t) if t.is_file() => Kind::File,
            Ok(t) if t.is_dir() => Kind::Dir,
            _ => Kind::Other,
        };
        match entry.map(|e| (e.file_name(), kind(&e))) {
            Ok((Ok(name), kind)) => listing.push(name.as_bytes(), kind),
            Ok((Err(_), _)) => listing.bad_names += 1,
            Err(e) => {
                listing.error = Some(e);
                break;
            }
        }
    }
    Ok(listing)
}
