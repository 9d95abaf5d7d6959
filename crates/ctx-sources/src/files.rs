//! The files of an index: [`SourceFile`] and [`FileState`], and [`Files`], a list of them
//! or, for an index read back from the store, the packed form it was stored in (each folder
//! once, each file as its folder's number and its name), turned into that list only when
//! something asks for a file's path.
//! A report such as `ctx sources` reads the files' states and counts and the roots' rule
//! reads their folders: neither needs a path per file, so a stored index served to it builds
//! none (15 000 strings, a fifth of a warm run, on the bench's build).

use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

use serde::de::{DeserializeSeed, Error, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::paths;
use ctx_diagnostics::Code;

/// What the disk says about an indexed file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum FileState {
    /// It is there.
    Exists,
    /// It is not there (a stale entry, or a folder on its way is missing or is a file) in a
    /// root that is open, or it names a drive of another platform.
    Missing,
    /// It is there under another case than written (`Test/x.c` for `test/x.c`); the
    /// index holds the disk's spelling.
    Corrected {
        /// The path as the project wrote it.
        written: String,
    },
    /// The sandbox refuses it (a denied name, a link out of its root, a file outside every
    /// root that is open: `E_OUTSIDE` whether or not it exists); it is listed, never read.
    Refused {
        /// The sandbox's code.
        #[serde(with = "code_name")]
        code: Code,
    },
}

/// One indexed file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// Absolute, normalised, `/`-separated.
    pub path: String,
    /// Index of the project that lists it first.
    pub project: usize,
    /// The line of that project file (or database) that names it.
    pub line: u32,
    /// What the disk says.
    pub state: FileState,
}

impl SourceFile {
    /// The path as the project wrote it (the disk may spell it otherwise).
    pub(crate) fn written(&self) -> &str {
        match &self.state {
            FileState::Corrected { written } => written,
            _ => &self.path,
        }
    }
}

/// A code stored by its name, so that a stored index survives a renumbering of the codes.
pub(crate) mod code_name {
    use ctx_diagnostics::Code;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(code: &Code, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(code.as_str())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Code, D::Error> {
        let name = String::deserialize(d)?;
        Code::from_name(&name).ok_or_else(|| serde::de::Error::custom("unknown code"))
    }
}

/// The files of an index (see the module documentation). Reads and writes go through the
/// list (`Deref`, `DerefMut`), which a packed index builds on first use; what a report and
/// the re-check of a stored index need is read from the packed form as it is.
#[derive(Clone, Default)]
pub(crate) struct Files {
    packed: Option<Packed>,
    list: OnceLock<Vec<SourceFile>>,
}

/// The files as stored, owned: the folders, every name in one buffer, a fixed-size entry per
/// file, and the files whose state is not [`FileState::Exists`] apart, with their paths.
#[derive(Clone, Debug, Default)]
struct Packed {
    folders: Vec<String>,
    names: String,
    entries: Vec<Entry>,
    /// By number, ascending: each file not on disk as listed, its state and its path.
    others: Vec<(u32, FileState, String)>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    folder: u32,
    /// Where the name ends in [`Packed::names`]; it starts where the one before ends.
    end: u32,
    project: u32,
    line: u32,
}

/// A file of an index for a report: where it is and what the disk says.
pub(crate) struct Brief<'a> {
    pub(crate) project: usize,
    pub(crate) line: u32,
    pub(crate) state: &'a FileState,
    /// Its path, for a file not on disk as listed (a report names them); `None` for a file
    /// that is there.
    pub(crate) path: Option<&'a str>,
}

const EXISTS: &FileState = &FileState::Exists;

impl Files {
    /// How many files.
    pub(crate) fn count(&self) -> usize {
        match (self.list.get(), &self.packed) {
            (None, Some(packed)) => packed.entries.len(),
            _ => self.len(),
        }
    }

    /// Each file's project, line and state, and the path of each not on disk as listed,
    /// without building a path for the others.
    pub(crate) fn listed(&self) -> Box<dyn Iterator<Item = Brief<'_>> + '_> {
        match (self.list.get(), &self.packed) {
            (None, Some(packed)) => Box::new(packed.each().map(|(_, e, other)| {
                let (state, path) = match other {
                    Some((state, path)) => (state, Some(path)),
                    None => (EXISTS, None),
                };
                Brief { project: e.project as usize, line: e.line, state, path }
            })),
            _ => Box::new(self.iter().map(|f| Brief {
                project: f.project,
                line: f.line,
                state: &f.state,
                path: (f.state != FileState::Exists).then_some(f.path.as_str()),
            })),
        }
    }

    /// Each file's path as the project wrote it, as its folder and its name (one plain
    /// component, or empty for a path that is a folder of its own, such as `/`).
    pub(crate) fn written(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        match (self.list.get(), &self.packed) {
            (None, Some(packed)) => Box::new(packed.each().map(|(i, e, other)| match other {
                Some((FileState::Corrected { written }, _)) => split(written),
                _ => (packed.folders[e.folder as usize].as_str(), packed.name(i)),
            })),
            _ => Box::new(self.iter().map(|f| split(f.written()))),
        }
    }

    /// How many files lie in the folder `root` (their path past `root` starts with `/`), each
    /// folder of a packed list looked at once unless `root` reaches into its files' names.
    pub(crate) fn count_within(&self, root: &str) -> usize {
        let within = |parts: [&str; 3]| {
            let mut bytes = parts.iter().flat_map(|p| p.bytes());
            root.bytes().all(|b| bytes.next() == Some(b)) && bytes.next() == Some(b'/')
        };
        let sep = |dir: &str| if dir.ends_with('/') { "" } else { "/" };
        let (None, Some(packed)) = (self.list.get(), &self.packed) else {
            return self.iter().filter(|f| within([f.path.as_str(), "", ""])).count();
        };
        let by_folder: Vec<Option<bool>> = packed
            .folders
            .iter()
            .map(|dir| {
                (root.len() < dir.len() + sep(dir).len()).then(|| within([dir, sep(dir), ""]))
            })
            .collect();
        (0..packed.entries.len())
            .filter(|&i| {
                let e = packed.entries[i];
                let dir = packed.folders[e.folder as usize].as_str();
                by_folder[e.folder as usize]
                    .unwrap_or_else(|| within([dir, sep(dir), packed.name(i)]))
            })
            .count()
    }

    /// Whether the files are still in their packed form (no path built for each).
    #[cfg(test)]
    pub(crate) fn is_packed(&self) -> bool {
        self.list.get().is_none() && self.packed.is_some()
    }
}

impl Packed {
    fn name(&self, i: usize) -> &str {
        let start = i.checked_sub(1).map_or(0, |b| self.entries[b].end as usize);
        &self.names[start..self.entries[i].end as usize]
    }

    fn path(&self, i: usize) -> String {
        join(&self.folders[self.entries[i].folder as usize], self.name(i))
    }

    /// Each file's number and entry, with its state and path when it is not on disk as
    /// listed.
    fn each(&self) -> impl Iterator<Item = (usize, Entry, Option<(&FileState, &str)>)> + '_ {
        let mut others = self.others.iter().peekable();
        self.entries.iter().enumerate().map(move |(i, &e)| {
            let other = others.next_if(|(at, ..)| *at as usize == i);
            (i, e, other.map(|(_, state, path)| (state, path.as_str())))
        })
    }

    fn unpacked(&self) -> Vec<SourceFile> {
        self.each()
            .map(|(i, e, other)| {
                let (project, line) = (e.project as usize, e.line);
                match other {
                    Some((state, path)) => {
                        SourceFile { path: path.to_owned(), project, line, state: state.clone() }
                    }
                    None => {
                        SourceFile { path: self.path(i), project, line, state: FileState::Exists }
                    }
                }
            })
            .collect()
    }
}

impl Deref for Files {
    type Target = Vec<SourceFile>;

    fn deref(&self) -> &Vec<SourceFile> {
        self.list.get_or_init(|| self.packed.as_ref().map(Packed::unpacked).unwrap_or_default())
    }
}

impl DerefMut for Files {
    fn deref_mut(&mut self) -> &mut Vec<SourceFile> {
        let _: &Vec<SourceFile> = Deref::deref(&*self);
        // The list now says everything; the packed form would go stale with a change.
        self.packed = None;
        self.list.get_mut().unwrap_or_else(|| unreachable!("the list was built above"))
    }
}

impl From<Vec<SourceFile>> for Files {
    fn from(list: Vec<SourceFile>) -> Files {
        Files { packed: None, list: OnceLock::from(list) }
    }
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files").field("count", &self.count()).finish_non_exhaustive()
    }
}

/// The files as they are stored: each folder once (absolute and normalised, checked when
/// read back), then each file as its folder's number and its name (one plain component),
/// so that a stored index is a quarter of the size and a file's path is checked by its name.
#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    #[serde(borrow)]
    folders: Vec<&'a str>,
    #[serde(borrow)]
    files: Vec<File<'a>>,
}

#[derive(Serialize, Deserialize)]
struct File<'a> {
    folder: u32,
    name: &'a str,
    project: usize,
    line: u32,
    state: FileState,
}

impl Serialize for Files {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let (None, Some(packed)) = (self.list.get(), &self.packed) {
            let folders = packed.folders.iter().map(String::as_str).collect();
            let mut others = packed.others.iter().peekable();
            let files = (0..packed.entries.len())
                .map(|i| {
                    let e = packed.entries[i];
                    let state = others.next_if(|(at, ..)| *at as usize == i);
                    let state = state.map_or(FileState::Exists, |(_, state, _)| state.clone());
                    let (folder, name) = (e.folder, packed.name(i));
                    File { folder, name, project: e.project as usize, line: e.line, state }
                })
                .collect();
            return Stored { folders, files }.serialize(s);
        }
        let mut folders: Vec<&str> = Vec::new();
        let mut numbers: std::collections::HashMap<&str, u32> = Default::default();
        let files = self
            .iter()
            .map(|f| {
                let (folder, name) = split(&f.path);
                let folder = *numbers.entry(folder).or_insert_with(|| {
                    folders.push(folder);
                    (folders.len() - 1) as u32
                });
                let (project, line, state) = (f.project, f.line, f.state.clone());
                File { folder, name, project, line, state }
            })
            .collect();
        Stored { folders, files }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Files {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Files, D::Error> {
        d.deserialize_struct("Stored", &["folders", "files"], StoredVisitor)
    }
}

/// Reads [`Stored`] straight into a [`Packed`]: each file checked and put in place as it is
/// read, with no list of them in between.
struct StoredVisitor;

impl<'de> Visitor<'de> for StoredVisitor {
    type Value = Files;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the folders, then the files")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Files, A::Error> {
        let folders: Vec<&'de str> =
            seq.next_element()?.ok_or_else(|| Error::invalid_length(0, &self))?;
        if !folders.iter().all(|f| paths::is_normal(f)) {
            return Err(Error::custom("a folder that is not absolute and normalised"));
        }
        let packed = seq.next_element_seed(FilesSeed { folders: &folders })?;
        let packed = packed.ok_or_else(|| Error::invalid_length(1, &self))?;
        Ok(Files { packed: Some(packed), list: OnceLock::new() })
    }
}

/// The files of [`Stored`], read against its folders.
struct FilesSeed<'a, 'de> {
    folders: &'a [&'de str],
}

impl<'de> DeserializeSeed<'de> for FilesSeed<'_, 'de> {
    type Value = Packed;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Packed, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for FilesSeed<'_, 'de> {
    type Value = Packed;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the files")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Packed, A::Error> {
        // The length a stored index claims is not trusted for more than a bounded start.
        let claimed = seq.size_hint().unwrap_or(0).min(1 << 16);
        let mut packed = Packed {
            folders: self.folders.iter().map(|f| (*f).to_owned()).collect(),
            names: String::with_capacity(claimed * 16),
            entries: Vec::with_capacity(claimed),
            others: Vec::new(),
        };
        while let Some(File { folder, name, project, line, state }) = seq.next_element()? {
            let dir = self.folders.get(folder as usize).filter(|_| plain(name));
            let dir = dir.ok_or_else(|| Error::custom("a file out of its folders"))?;
            let at = u32::try_from(packed.entries.len()).map_err(|_| Error::custom("files"))?;
            let project = u32::try_from(project).map_err(|_| Error::custom("a project"))?;
            packed.names.push_str(name);
            let end = u32::try_from(packed.names.len()).map_err(|_| Error::custom("names"))?;
            packed.entries.push(Entry { folder, end, project, line });
            if state != FileState::Exists {
                packed.others.push((at, state, join(dir, name)));
            }
        }
        Ok(packed)
    }
}

/// `name` in the folder `folder` (the folder itself for an empty name).
pub(crate) fn join(folder: &str, name: &str) -> String {
    if name.is_empty() {
        return folder.to_owned();
    }
    let mut path = String::with_capacity(folder.len() + 1 + name.len());
    path.push_str(folder);
    if !folder.ends_with('/') {
        path.push('/');
    }
    path.push_str(name);
    path
}

/// A path's folder and name: the name one plain component when the path is normal.
pub(crate) fn split(path: &str) -> (&str, &str) {
    let folder = paths::parent(path);
    (folder, path[folder.len()..].trim_start_matches('/'))
}

/// One component that adds no folder: not empty, no `/`, not `.` or `..`.
fn plain(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/')
}

#[cfg(test)]
mod tests {
    use ctx_diagnostics::Code;

    use super::*;

    /// The files a stored list decodes to, or `None`.
    fn unpacked(folders: Vec<&str>, files: Vec<(u32, &str)>) -> Option<Vec<String>> {
        let files = files
            .into_iter()
            .map(|(folder, name)| File {
                folder,
                name,
                project: 0,
                line: 1,
                state: FileState::Exists,
            })
            .collect();
        let bytes = postcard::to_stdvec(&Stored { folders, files }).ok()?;
        let files: Files = postcard::from_bytes(&bytes).ok()?;
        Some(files.iter().map(|f| f.path.clone()).collect())
    }

    fn file(path: &str, project: usize, state: FileState) -> SourceFile {
        SourceFile { path: path.into(), project, line: project as u32 + 1, state }
    }

    /// A list of files of every state, stored and read back (packed).
    fn stored_and_read(list: &[SourceFile]) -> Files {
        let bytes = postcard::to_stdvec(&Files::from(list.to_vec())).unwrap();
        postcard::from_bytes(&bytes).unwrap()
    }

    fn every_state() -> Vec<SourceFile> {
        let refused = FileState::Refused { code: Code::Outside };
        let corrected = FileState::Corrected { written: "/src/app/X.c".into() };
        vec![
            file("/src/App/a.c", 0, FileState::Exists),
            file("/src/App/b.c", 1, FileState::Missing),
            file("/src/App/X.c", 2, corrected),
            file("/etc/passwd", 3, refused),
            file("C:/x/y.h", 4, FileState::Exists),
            file("/src/App/c.c", 5, FileState::Exists),
        ]
    }

    #[test]
    fn a_stored_list_of_files_gives_back_only_normal_absolute_paths() {
        let packed = |folders: Vec<&str>, files| unpacked(folders, files);
        assert_eq!(
            packed(vec!["/src", "/"], vec![(0, "a.c"), (1, "b.c"), (0, "c.c")]),
            Some(vec!["/src/a.c".into(), "/b.c".into(), "/src/c.c".into()])
        );
        assert_eq!(packed(vec!["C:/"], vec![(0, "a.c")]), Some(vec!["C:/a.c".into()]));
        // A name that climbs or goes down, a folder out of range or not normal: refused.
        for name in ["..", ".", "", "x/../../etc/passwd", "a/b"] {
            assert_eq!(packed(vec!["/src"], vec![(0, name)]), None, "{name}");
        }
        assert_eq!(packed(vec!["/src"], vec![(1, "a.c")]), None);
        for folder in ["src", "/src/../etc", "/src//x", "/src/."] {
            assert_eq!(packed(vec![folder], vec![(0, "a.c")]), None, "{folder}");
        }
    }

    #[test]
    fn every_normal_path_is_stored_and_given_back_as_it_was() {
        let list = every_state();
        let read = stored_and_read(&list);
        assert_eq!(read.count(), list.len());
        assert_eq!(*read, list);
        // Stored again from its packed form, it reads back the same.
        let again = stored_and_read(&stored_and_read(&list));
        assert_eq!(*again, list);
    }

    #[test]
    fn a_packed_list_counts_the_files_in_a_folder_as_the_list_does() {
        let list = every_state();
        let (read, built) = (stored_and_read(&list), Files::from(list.clone()));
        let roots = ["/src", "/src/App", "/src/Ap", "/src/App/a.c", "/src/App/a", "/", "", "C:/x"];
        for root in roots.into_iter().chain(["C:/", "/etc", "/src/app", "/src/App/"]) {
            let by_hand = list
                .iter()
                .filter(|f| f.path.strip_prefix(root).is_some_and(|rest| rest.starts_with('/')))
                .count();
            assert_eq!((read.count_within(root), built.count_within(root)), (by_hand, by_hand));
        }
        assert_eq!(read.count_within("/src/App"), 4);
        assert!(read.is_packed());
    }

    #[test]
    fn a_packed_list_reports_and_gives_its_folders_as_the_list_does() {
        let list = every_state();
        let (read, built) = (stored_and_read(&list), Files::from(list.clone()));
        let brief = |files: &Files| -> Vec<(usize, u32, FileState, Option<String>)> {
            let of = |b: Brief<'_>| (b.project, b.line, b.state.clone(), b.path.map(Into::into));
            files.listed().map(of).collect()
        };
        let written = |files: &Files| -> Vec<(String, String)> {
            files.written().map(|(d, n)| (d.to_owned(), n.to_owned())).collect()
        };
        assert_eq!(brief(&read), brief(&built));
        assert_eq!(written(&read), written(&built));
        assert!(read.list.get().is_none(), "neither built a path per file");
        assert_eq!(written(&read)[2], ("/src/app".to_owned(), "X.c".to_owned()));
        // A change goes through the list, and the packed form is dropped with it.
        let mut read = read;
        read.push(file("/src/App/d.c", 6, FileState::Exists));
        assert!(read.packed.is_none());
        assert_eq!((read.count(), brief(&read).len()), (7, 7));
    }
}
