//! A private state directory (caches, indexes) that ctx writes to.
//!
//! The sandbox only reads; what ctx keeps between runs (such as the
//! suggestion index) lives in a [`Store`]: one directory, opened once with
//! ambient authority, in which files are named by a single plain name and
//! replaced atomically (written to a temporary file, then renamed), so a
//! reader never sees half a file and two writers never mix their bytes.
//!
//! The folder is read like any other: an entry is opened without following a
//! symbolic link and without blocking, and must be a regular file, so a link,
//! FIFO, socket or device planted under an entry's name is refused at once
//! (`E_NOT_REGULAR`) instead of being followed or waited on; temporary files
//! are created exclusively, so a name planted there is never written through.
//!
//! What a store holds is the user's own (the paths and terms of their repositories, hashes
//! of their files' contents), so on Unix the folders a store creates, its own and any parent
//! that was missing, are private to the user (mode 0700, as the XDG base directory
//! specification asks of the folders it names); a folder that is already there keeps the
//! mode it has, so a cache shared on purpose stays shared.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use camino::{Utf8Path, Utf8PathBuf};
use cap_fs_ext::DirExtUtf8;
use cap_std::AmbientAuthority;
use cap_std::fs_utf8::Dir;

use crate::error::{Error, ErrorKind, Result};

/// A directory for ctx's own state, such as `~/.cache/ctx`.
#[derive(Debug)]
pub struct Store {
    dir: Dir,
    path: Utf8PathBuf,
}

/// An exclusive lock on a name of a [`Store`], released when dropped.
///
/// On Unix this is an advisory `flock` on a lock file beside the data, so
/// two processes updating the same entry take turns; elsewhere it is a
/// no-op and atomic replacement alone keeps the entry whole.
#[derive(Debug)]
pub struct StoreLock {
    _file: std::fs::File,
}

/// An entry of a [`Store`] mapped into memory, read-only: its bytes are the page cache's own,
/// neither copied nor allocated, so a large entry (a suggestion index of tens of megabytes)
/// is ready in a fraction of the time a read takes.
///
/// On Unix only: elsewhere a mapped file cannot be replaced while it is mapped (and the store
/// replaces entries by renaming over them), so the entry is read instead.
#[derive(Debug)]
pub struct Mapped(MappedBytes);

#[derive(Debug)]
enum MappedBytes {
    #[cfg(unix)]
    Map(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            #[cfg(unix)]
            MappedBytes::Map(map) => map,
            MappedBytes::Read(bytes) => bytes,
        }
    }
}

/// A new entry of a [`Store`] written piece by piece (a large index streamed as it is built,
/// never whole in memory): the bytes go to a temporary file of the store, created exclusively
/// and without following a link, which [`StoreWriter::commit`] renames over the entry's name.
///
/// It borrows the entry's [`StoreLock`], so the lock is held from the first byte to the
/// rename. Until the rename the entry keeps its old bytes: a writer dropped without a commit
/// (an error, a panic) removes its temporary file, and a process stopped while it writes
/// leaves the entry as it was (and a temporary file named `.NAME.PID.N.tmp`).
#[derive(Debug)]
pub struct StoreWriter<'s> {
    store: &'s Store,
    name: String,
    temp: String,
    file: std::io::BufWriter<std::fs::File>,
    len: u64,
    committed: bool,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Store {
    /// Opens the directory at `path`, creating it (and its parents) when it
    /// is missing, private to the user on Unix.
    ///
    /// # Ambient Authority
    ///
    /// This opens `path` with the process's ambient authority, once; every
    /// later access goes through the directory handle.
    pub fn open(path: impl Into<Utf8PathBuf>, ambient: AmbientAuthority) -> Result<Store> {
        let path = path.into();
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path).map_err(|e| Error::io(path.as_str(), e))?;
        let dir = Dir::open_ambient_dir(&path, ambient).map_err(|e| Error::io(path.as_str(), e))?;
        Ok(Store { dir, path })
    }

    /// Opens the directory at `path` when it exists, without creating it: `None` when there
    /// is nothing there (a store that is only read need not exist).
    ///
    /// # Ambient Authority
    ///
    /// As [`Store::open`].
    pub fn open_existing(
        path: impl Into<Utf8PathBuf>,
        ambient: AmbientAuthority,
    ) -> Result<Option<Store>> {
        let path = path.into();
        match Dir::open_ambient_dir(&path, ambient) {
            Ok(dir) => Ok(Some(Store { dir, path })),
            Err(e) if crate::error::is_not_found(&e) => Ok(None),
            Err(e) => Err(Error::io(path.as_str(), e)),
        }
    }

    /// Where the store lives.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// The bytes stored under `name`, or `None` when there is no such entry.
    pub fn read(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.read_up_to(name, u64::MAX - 1)
    }

    /// The bytes stored under `name`, or `None` when there is no such entry; an entry of more
    /// than `cap` bytes is `E_TOO_LARGE` (checked on the opened handle, and at most `cap + 1`
    /// bytes are read).
    pub fn read_up_to(&self, name: &str, cap: u64) -> Result<Option<Vec<u8>>> {
        let Some(file) = self.open_entry(name)? else { return Ok(None) };
        let md = crate::sandbox::regular_within(&file, name, cap)?;
        let mut bytes = Vec::with_capacity(usize::try_from(md.len()).unwrap_or(0));
        file.take(cap.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| Error::io(name, e))?;
        if bytes.len() as u64 > cap {
            return Err(Error::new(ErrorKind::TooLarge, name)
                .with_detail(format!("more than {cap} bytes, limit {cap}")));
        }
        Ok(Some(bytes))
    }

    /// Opens the entry `name` for reading, without following a link or blocking; `None` when
    /// there is none.
    fn open_entry(&self, name: &str) -> Result<Option<std::fs::File>> {
        check(name)?;
        match crate::sandbox::open_file_nofollow(&self.dir, name) {
            Ok(file) => Ok(Some(file)),
            Err(e) if crate::error::is_not_found(&e) => Ok(None),
            Err(e) => Err(refused(name, e)),
        }
    }

    /// The bytes stored under `name` mapped into memory (read, off Unix: see [`Mapped`]), or
    /// `None` when there is no such entry.
    pub fn map(&self, name: &str) -> Result<Option<Mapped>> {
        #[cfg(not(unix))]
        return Ok(self.read(name)?.map(|bytes| Mapped(MappedBytes::Read(bytes))));
        #[cfg(unix)]
        self.map_unix(name)
    }

    #[cfg(unix)]
    fn map_unix(&self, name: &str) -> Result<Option<Mapped>> {
        let Some(file) = self.open_entry(name)? else { return Ok(None) };
        let len = crate::sandbox::regular_within(&file, name, u64::MAX)?.len();
        map_file(&file, name, len).map(Some)
    }

    /// Replaces the entry `name` with `bytes` atomically: a reader sees the
    /// old bytes or the new ones, never a mix.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        self.write_parts(name, &[bytes])
    }

    /// [`Store::write`] of `parts` one after the other, so that an entry made of pieces in
    /// different places is not first copied into one buffer.
    pub fn write_parts(&self, name: &str, parts: &[&[u8]]) -> Result<()> {
        check(name)?;
        let temp = temp_name(name);
        let written = (|| {
            let options = write_options(cap_std::fs::OpenOptions::new().create_new(true));
            let mut file = self.dir.open_with(&temp, &options)?;
            for part in parts {
                file.write_all(part)?;
            }
            file.flush()?;
            self.dir.rename(&temp, &self.dir, name)
        })();
        if let Err(e) = written {
            let _ = self.dir.remove_file(&temp);
            return Err(Error::io(name, e));
        }
        Ok(())
    }

    /// Starts a new version of the entry `name`, written piece by piece and put in place by
    /// [`StoreWriter::commit`] (see [`StoreWriter`]); `lock` is the entry's, held until then.
    pub fn writer<'s>(&'s self, lock: &'s StoreLock, name: &str) -> Result<StoreWriter<'s>> {
        let _ = lock;
        check(name)?;
        self.remove_stale(name);
        let temp = temp_name(name);
        let options = write_options(cap_std::fs::OpenOptions::new().create_new(true).read(true));
        let file = self.dir.open_with(&temp, &options).map_err(|e| refused(name, e))?.into_std();
        Ok(StoreWriter {
            store: self,
            name: name.to_owned(),
            temp,
            file: std::io::BufWriter::with_capacity(1 << 16, file),
            len: 0,
            committed: false,
        })
    }

    /// Creates the entry `name` with `bytes` unless it exists: `Ok(false)` leaves an existing
    /// entry as it is (the file is created exclusively, so a concurrent writer is never
    /// overwritten either).
    pub fn create_new(&self, name: &str, bytes: &[u8]) -> Result<bool> {
        check(name)?;
        let options = write_options(cap_std::fs::OpenOptions::new().create_new(true));
        let mut file = match self.dir.open_with(name, &options) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(Error::io(name, e)),
        };
        file.write_all(bytes).and_then(|()| file.flush()).map_err(|e| Error::io(name, e))?;
        Ok(true)
    }

    /// Appends `bytes` to the entry `name` (created when missing) under its lock, in one
    /// write, so that two appenders never interleave their bytes.
    pub fn append(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let lock = self.lock(name)?;
        self.append_locked(&lock, name, bytes)
    }

    /// [`Store::append`] by a caller that holds the lock of `name` already (a second lock
    /// would wait for the first): the bytes go past the end in one write, so a reader that
    /// mapped the entry before keeps its bytes, and a write cut short leaves the entry's
    /// earlier bytes as they were.
    pub fn append_locked(&self, _lock: &StoreLock, name: &str, bytes: &[u8]) -> Result<()> {
        check(name)?;
        let options = write_options(cap_std::fs::OpenOptions::new().append(true).create(true));
        let mut file = self.dir.open_with(name, &options).map_err(|e| refused(name, e))?.into_std();
        crate::sandbox::regular_within(&file, name, u64::MAX)?;
        file.write_all(bytes).and_then(|()| file.flush()).map_err(|e| Error::io(name, e))
    }

    /// Opens the folder `name` inside the store (created when missing, private to the user
    /// on Unix) as a store of its own.
    pub fn sub(&self, name: &str) -> Result<Store> {
        check(name)?;
        let mut builder = cap_std::fs::DirBuilder::new();
        #[cfg(unix)]
        cap_std::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match self.dir.create_dir_with(name, &builder) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(Error::io(name, e));
            }
            _ => {}
        }
        let dir = self.dir.open_dir_nofollow(name).map_err(|e| match e.kind() {
            // A file where a folder is wanted: no "no such file" for what is there.
            std::io::ErrorKind::NotADirectory => {
                Error::new(crate::ErrorKind::Io, name).with_detail("a file is there, not a folder")
            }
            _ => Error::io(name, e),
        })?;
        Ok(Store { dir, path: self.path.join(name) })
    }

    /// Removes the temporary files of writers of `name` that never reached their rename (a
    /// process stopped while it wrote); called with the entry's lock held, so that none of
    /// them is still being written. Only names of the form `.NAME.PID.N.tmp` are removed, and
    /// a link among them is removed, not followed.
    fn remove_stale(&self, name: &str) {
        let prefix = format!(".{name}.");
        let Ok(entries) = self.dir.entries() else { return };
        for entry in entries.flatten() {
            let Ok(file) = entry.file_name() else { continue };
            let Some(rest) = file.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".tmp")) else {
                continue;
            };
            let numbers: Vec<&str> = rest.split('.').collect();
            let numeric = |n: &&str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
            if numbers.len() == 2 && numbers.iter().all(numeric) {
                let _ = self.dir.remove_file(&file);
            }
        }
    }

    /// Removes the entry `name`; a missing entry is not an error.
    pub fn remove(&self, name: &str) -> Result<()> {
        check(name)?;
        match self.dir.remove_file(name) {
            Err(e) if !crate::error::is_not_found(&e) => Err(Error::io(name, e)),
            _ => Ok(()),
        }
    }

    /// Takes the exclusive lock of `name` (a file `name.lock`), waiting for
    /// another holder to release it.
    pub fn lock(&self, name: &str) -> Result<StoreLock> {
        check(name)?;
        let lock_name = format!("{name}.lock");
        let options = write_options(cap_std::fs::OpenOptions::new().create(true).truncate(false));
        let file = self
            .dir
            .open_with(&lock_name, &options)
            .map_err(|e| refused(&lock_name, e))?
            .into_std();
        crate::sandbox::regular_within(&file, &lock_name, u64::MAX)?;
        #[cfg(unix)]
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| Error::io(&lock_name, e.into()))?;
        Ok(StoreLock { _file: file })
    }
}

impl StoreWriter<'_> {
    /// Appends `bytes` to what is written.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        self.file.write_all(bytes).map_err(|e| Error::io(&self.name, e))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing is written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes `bytes` again at `offset` over bytes already written (a header whose checksum is
    /// known at the end); `E_IO` when they would run past what is written.
    pub fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        use std::io::{Seek, SeekFrom};
        if offset.checked_add(bytes.len() as u64).is_none_or(|end| end > self.len) {
            return Err(Error::new(ErrorKind::Io, &self.name)
                .with_detail("a rewrite past the bytes written"));
        }
        let name = &self.name;
        let io = |e| Error::io(name, e);
        self.file.flush().map_err(io)?;
        let file = self.file.get_mut();
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        file.write_all(bytes).map_err(io)?;
        file.seek(SeekFrom::End(0)).map_err(io)?;
        Ok(())
    }

    /// Puts the bytes written in place of the entry, atomically: a reader sees the old bytes
    /// or the new ones, never a mix.
    pub fn commit(mut self) -> Result<()> {
        self.file.flush().map_err(|e| Error::io(&self.name, e))?;
        self.rename()
    }

    /// [`StoreWriter::commit`], and the bytes written mapped into memory (read, off Unix: see
    /// [`Mapped`]): the very file put in place, whatever replaces the entry afterwards.
    pub fn commit_mapped(mut self) -> Result<Mapped> {
        self.file.flush().map_err(|e| Error::io(&self.name, e))?;
        #[cfg(unix)]
        {
            let mapped = map_file(self.file.get_ref(), &self.name, self.len)?;
            self.rename()?;
            Ok(mapped)
        }
        #[cfg(not(unix))]
        {
            self.rename()?;
            let bytes = self.store.read(&self.name)?.unwrap_or_default();
            Ok(Mapped(MappedBytes::Read(bytes)))
        }
    }

    fn rename(&mut self) -> Result<()> {
        let dir = &self.store.dir;
        dir.rename(&self.temp, dir, &self.name).map_err(|e| Error::io(&self.name, e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for StoreWriter<'_> {
    fn drop(&mut self) {
        if !self.committed {
            let _ = self.store.dir.remove_file(&self.temp);
        }
    }
}

/// `file` (of `len` bytes, the entry `name`) mapped into memory.
#[cfg(unix)]
fn map_file(file: &std::fs::File, name: &str, len: u64) -> Result<Mapped> {
    if len == 0 {
        // Nothing to map (and an empty mapping is an error on some systems).
        return Ok(Mapped(MappedBytes::Read(Vec::new())));
    }
    // SAFETY: a mapping is undefined behaviour if the file changes under it. A store never
    // changes the bytes of an entry in place: `write`, `create_new` and a `StoreWriter` write
    // a new file and rename it over the old name (a writer maps its file once it is done with
    // it), and `append` only adds bytes past the mapped length, so a mapped file keeps its
    // bytes until it is unmapped. The store is ctx's private directory; another program
    // truncating an entry in it would end the process with SIGBUS on access, the accepted risk
    // of mapping files (ripgrep maps the files it searches the same way).
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(file) }.map_err(|e| Error::io(name, e))?;
    Ok(Mapped(MappedBytes::Map(map)))
}

/// A fresh name for a temporary file of the entry `name`, hidden and unique to this process.
fn temp_name(name: &str) -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{name}.{}.{n}.tmp", std::process::id())
}

/// `options` for writing, without following a final link and, on Unix, without blocking (a
/// FIFO with no reader fails at once) or taking a controlling terminal.
fn write_options(options: &mut cap_std::fs::OpenOptions) -> cap_std::fs::OpenOptions {
    use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
    options.write(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        options.custom_flags(flags.bits() as i32);
    }
    options.clone()
}

/// The error of opening an entry: a link where a file is wanted is `E_NOT_REGULAR`, as the
/// FIFOs and devices that the handle's check refuses are.
fn refused(name: &str, e: std::io::Error) -> Error {
    #[cfg(unix)]
    if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
        || e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error())
    {
        return Error::new(ErrorKind::NotRegular, name);
    }
    Error::io(name, e)
}

/// Entry names are single plain file names.
fn check(name: &str) -> Result<()> {
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && crate::path::check_name(name).is_ok();
    if plain {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::BadPath, name).with_detail("not a plain file name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store opened in a fresh temporary folder, with the folder and its path.
    fn fresh() -> (tempfile::TempDir, Utf8PathBuf, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(tmp.path().to_owned()).unwrap();
        let store = Store::open(&path, cap_std::ambient_authority()).unwrap();
        (tmp, path, store)
    }

    /// Another local user must not read what a store holds: the folders it makes are the
    /// user's alone, and a folder already there keeps its mode.
    #[cfg(unix)]
    #[test]
    fn the_folders_a_store_makes_are_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Utf8Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let (_tmp, path, _) = fresh();
        let deep = path.join("cache/ctx");
        let store = Store::open(&deep, cap_std::ambient_authority()).unwrap();
        assert_eq!(mode(&path.join("cache")), 0o700);
        assert_eq!(mode(&deep), 0o700);
        store.sub("watch").unwrap();
        assert_eq!(mode(&deep.join("watch")), 0o700);
        let shared = path.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
        Store::open(&shared, cap_std::ambient_authority()).unwrap();
        assert_eq!(mode(&shared), 0o755);
    }

    #[test]
    fn a_file_where_a_folder_is_wanted_is_named_so() {
        let (_tmp, _path, store) = fresh();
        store.write("sub", b"a file").unwrap();
        let err = store.sub("sub").unwrap_err();
        assert_eq!(err.code(), crate::Code::Io);
        assert!(err.to_string().contains("a file is there, not a folder"), "{err}");
    }

    #[test]
    fn a_mapped_entry_keeps_its_bytes_when_replaced() {
        let (_tmp, _path, store) = fresh();
        assert!(store.map("x").unwrap().is_none());
        store.write("empty", b"").unwrap();
        assert_eq!(&*store.map("empty").unwrap().unwrap(), b"");
        store.write("x", b"one").unwrap();
        let one = store.map("x").unwrap().unwrap();
        store.write("x", b"two, longer").unwrap();
        store.append("x", b"!").unwrap();
        assert_eq!(&*one, b"one");
        assert_eq!(&*store.map("x").unwrap().unwrap(), b"two, longer!");
        assert_eq!(store.map("../x").unwrap_err().code(), crate::Code::BadPath);
    }

    #[test]
    fn write_read_replace_remove() {
        let tmp = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(tmp.path().join("a/b")).unwrap();
        let store = Store::open(&path, cap_std::ambient_authority()).unwrap();
        assert_eq!(store.read("x").unwrap(), None);
        store.write("x", b"one").unwrap();
        store.write("x", b"two").unwrap();
        assert_eq!(store.read("x").unwrap().as_deref(), Some(&b"two"[..]));
        {
            let _lock = store.lock("x").unwrap();
        }
        store.remove("x").unwrap();
        store.remove("x").unwrap();
        assert_eq!(store.read("x").unwrap(), None);
        let names: Vec<_> =
            std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.lock")]);
    }

    #[test]
    fn create_new_never_overwrites_and_append_adds() {
        let (_tmp, path, store) = fresh();
        assert!(store.create_new("a.md", b"first").unwrap());
        assert!(!store.create_new("a.md", b"second").unwrap());
        assert_eq!(store.read("a.md").unwrap().unwrap(), b"first");
        store.append("log.jsonl", b"1\n").unwrap();
        store.append("log.jsonl", b"2\n").unwrap();
        assert_eq!(store.read("log.jsonl").unwrap().unwrap(), b"1\n2\n");
        let sub = store.sub("rules").unwrap();
        assert!(sub.create_new("x.md", b"x").unwrap());
        assert_eq!(sub.path(), path.join("rules"));
        assert!(store.sub("rules").unwrap().read("x.md").unwrap().is_some(), "opened again");
        assert!(store.sub("../up").is_err());
    }

    #[test]
    fn an_append_under_a_held_lock_neither_waits_nor_follows_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(tmp.path().join("store")).unwrap();
        let store = Store::open(&path, cap_std::ambient_authority()).unwrap();
        store.write("index", b"base").unwrap();
        let mapped = store.map("index").unwrap().unwrap();
        let lock = store.lock("index").unwrap();
        store.append_locked(&lock, "index", b"+segment").unwrap();
        assert_eq!(&*mapped, b"base", "a mapping keeps its length");
        assert_eq!(store.read("index").unwrap().unwrap(), b"base+segment");
        // A link put in the entry's place is not followed: the file it names is untouched.
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, b"secret").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, path.join("linked")).unwrap();
            assert!(store.append_locked(&lock, "linked", b"x").is_err());
            assert_eq!(std::fs::read(&outside).unwrap(), b"secret");
        }
        assert_eq!(
            store.append_locked(&lock, "../outside", b"x").unwrap_err().code(),
            crate::Code::BadPath
        );
    }

    fn entries(path: &Utf8Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_streamed_write_replaces_the_entry_only_when_committed() {
        let (_tmp, path, store) = fresh();
        store.write("index", b"old bytes").unwrap();
        let mapped = store.map("index").unwrap().unwrap();
        let lock = store.lock("index").unwrap();
        let mut w = store.writer(&lock, "index").unwrap();
        assert!(w.is_empty());
        w.write_all(b"....").unwrap();
        w.write_all(b" body").unwrap();
        assert_eq!(w.len(), 9);
        w.write_at(0, b"HEAD").unwrap();
        // A rewrite past the bytes written is refused, and changes nothing.
        assert_eq!(w.write_at(6, b"four").unwrap_err().code(), crate::Code::Io);
        assert!(w.write_at(u64::MAX, b"x").is_err());
        assert_eq!(store.read("index").unwrap().unwrap(), b"old bytes", "not before the commit");
        w.commit().unwrap();
        assert_eq!(store.read("index").unwrap().unwrap(), b"HEAD body");
        assert_eq!(&*mapped, b"old bytes", "a mapping keeps its bytes");
        assert_eq!(entries(&path), ["index", "index.lock"], "no temporary file is left");
        // Stopped before its commit (an error, a panic): the entry keeps its bytes and the
        // temporary file goes.
        let mut w = store.writer(&lock, "index").unwrap();
        w.write_all(b"half of a new ind").unwrap();
        drop(w);
        assert_eq!(store.read("index").unwrap().unwrap(), b"HEAD body");
        assert_eq!(entries(&path), ["index", "index.lock"]);
        // A process killed while it writes runs no drop: the entry is still the old one.
        let mut w = store.writer(&lock, "index").unwrap();
        w.write_all(b"cut short").unwrap();
        std::mem::forget(w);
        assert_eq!(store.read("index").unwrap().unwrap(), b"HEAD body");
        let names = entries(&path);
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(names[0].starts_with(".index.") && names[0].ends_with(".tmp"), "{names:?}");
        // The next writer, under the lock, removes what was left; not another entry's.
        std::fs::write(path.join(".index.b.1.2.tmp"), b"another entry's").unwrap();
        let mut w = store.writer(&lock, "index").unwrap();
        w.write_all(b"whole").unwrap();
        w.commit().unwrap();
        assert_eq!(entries(&path), [".index.b.1.2.tmp", "index", "index.lock"]);
        assert_eq!(store.read("index").unwrap().unwrap(), b"whole");
        assert_eq!(store.writer(&lock, "../index").unwrap_err().code(), crate::Code::BadPath);
    }

    #[test]
    fn a_streamed_write_holds_the_lock_until_its_rename() {
        let (_tmp, path, store) = fresh();
        store.write("index", b"old").unwrap();
        let lock = store.lock("index").unwrap();
        let mut w = store.writer(&lock, "index").unwrap();
        let other = std::thread::spawn({
            let path = path.clone();
            move || {
                let store = Store::open(&path, cap_std::ambient_authority()).unwrap();
                // Waits for the writer's lock; then the new bytes are all there.
                let _lock = store.lock("index").unwrap();
                store.read("index").unwrap().unwrap()
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        w.write_all(b"new, ").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        w.write_all(b"whole").unwrap();
        w.commit().unwrap();
        drop(lock);
        #[cfg(unix)]
        assert_eq!(other.join().unwrap(), b"new, whole");
        #[cfg(not(unix))]
        drop(other.join());
    }

    #[cfg(unix)]
    #[test]
    fn a_streamed_write_never_writes_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::from_path_buf(tmp.path().join("store")).unwrap();
        let store = Store::open(&path, cap_std::ambient_authority()).unwrap();
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, b"secret").unwrap();
        // A link in the entry's place is replaced by the rename, never written through.
        std::os::unix::fs::symlink(&outside, path.join("index")).unwrap();
        let lock = store.lock("index").unwrap();
        let mut w = store.writer(&lock, "index").unwrap();
        w.write_all(b"index").unwrap();
        w.commit().unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"secret");
        assert!(!path.join("index").is_symlink());
        assert_eq!(store.read("index").unwrap().unwrap(), b"index");
        // Links planted under the next temporary names are removed as stale ones, never
        // written through.
        let next = TEMP_COUNTER.load(Ordering::Relaxed);
        for n in next..next + 256 {
            let temp = path.join(format!(".index.{}.{n}.tmp", std::process::id()));
            std::os::unix::fs::symlink(&outside, temp).unwrap();
        }
        let mut w = store.writer(&lock, "index").unwrap();
        w.write_all(b"again").unwrap();
        w.commit().unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"secret");
        assert_eq!(store.read("index").unwrap().unwrap(), b"again");
        assert!(std::fs::read_dir(&path).unwrap().all(|e| !e.unwrap().path().is_symlink()));
    }

    #[test]
    fn names_must_be_plain() {
        let (_tmp, _path, store) = fresh();
        for bad in ["", "..", "a/b", "../x", "a\\b"] {
            assert_eq!(store.write(bad, b"").unwrap_err().kind(), ErrorKind::BadPath, "{bad}");
        }
    }
}
