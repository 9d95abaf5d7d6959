//! [`SocketDir`]: a folder of the user's own that holds local sockets (Unix only), and the
//! checks that make a socket in it the user's own on both ends.
//!
//! - The folder is created with mode 0700 and, created or found, refused unless it is a real
//!   folder (not a link), owned by the user running ctx, with no permission for anyone else.
//! - Before connecting, the socket's entry is refused unless it is a socket (a link in its
//!   place is refused, not followed), owned by the user, with no permission for anyone else.
//! - Each end checks the other's user id with the kernel's peer credentials (`SO_PEERCRED` on
//!   Linux, `getpeereid` on macOS and the BSDs): a peer of another user is refused, whatever
//!   the folder's modes say. Where the platform offers neither, no connection is trusted.
//!
//! So a socket planted by another user, a link put in a socket's place, or a process of
//! another user connecting to a service's socket all fail before a byte is exchanged.

use std::io;
use std::os::unix::fs::{DirBuilderExt as _, FileTypeExt as _, MetadataExt as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::os::unix::net::{UnixListener, UnixStream};

use camino::{Utf8Path, Utf8PathBuf};
use cap_std::AmbientAuthority;

use crate::error::{Error, ErrorKind, Result};

/// The longest socket path the platforms take (`sun_path` holds 104 bytes on macOS, 108 on
/// Linux, the final NUL included).
pub const MAX_SOCKET_PATH: usize = 103;

/// A folder of the user's own for local sockets and the small files of the services that
/// listen on them; see the module's documentation for the checks.
#[derive(Debug, Clone)]
pub struct SocketDir {
    path: Utf8PathBuf,
}

impl SocketDir {
    /// Opens the folder at `path`, creating it (mode 0700, its parents as usual) when it is
    /// missing, then checks it.
    ///
    /// # Ambient Authority
    ///
    /// This names `path` with the process's ambient authority; every entry is then found
    /// under it by name, in a folder no one else may change.
    ///
    /// # Errors
    ///
    /// `E_PERMISSION` when the folder is a link, is not a folder, belongs to another user or
    /// grants anything to others; `E_IO` when it cannot be created.
    pub fn open(path: impl Into<Utf8PathBuf>, _ambient: AmbientAuthority) -> Result<SocketDir> {
        let path = path.into();
        if let Some(parent) = path.parent().filter(|p| !p.as_str().is_empty()) {
            // Missing parents (the cache folder itself, on a first run) are private too.
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| Error::io(parent.as_str(), e))?;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(path.as_str(), e)),
        }
        let meta = std::fs::symlink_metadata(&path).map_err(|e| Error::io(path.as_str(), e))?;
        let why = if !meta.file_type().is_dir() {
            Some("is not a folder (a link is refused)")
        } else if meta.uid() != my_uid() {
            Some("belongs to another user")
        } else if meta.mode() & 0o077 != 0 {
            Some("is open to other users (mode must be 0700)")
        } else {
            None
        };
        match why {
            Some(why) => Err(refused(path.as_str(), why)),
            None => Ok(SocketDir { path }),
        }
    }

    /// Where the folder lives.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// The path of the entry `name` (one plain file name) in the folder.
    fn entry(&self, name: &str) -> Result<Utf8PathBuf> {
        let plain = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            && !name.starts_with('.');
        if !plain {
            return Err(Error::new(ErrorKind::BadPath, name).with_detail("not a plain name"));
        }
        let path = self.path.join(name);
        if path.as_str().len() > MAX_SOCKET_PATH {
            return Err(Error::new(ErrorKind::BadPath, path.as_str())
                .with_detail(format!("a socket path is at most {MAX_SOCKET_PATH} bytes")));
        }
        Ok(path)
    }

    /// Listens on the socket `name`, replacing a socket left there by a process that ended;
    /// the socket's mode is 0600.
    ///
    /// # Errors
    ///
    /// `E_IO` when a process answers on that socket already (kind `AddrInUse` in the
    /// source), or when the socket cannot be made; `E_PERMISSION` when something other than
    /// a socket of the user's lies there.
    pub fn listen(&self, name: &str) -> Result<Listener> {
        let path = self.entry(name)?;
        if let Some(meta) = lstat(&path)? {
            // Only a socket of ours is replaced, and only when no one answers on it.
            if !meta.file_type().is_socket() || meta.uid() != my_uid() {
                return Err(refused(path.as_str(), "is not a socket of this user"));
            }
            if UnixStream::connect(&path).is_ok() {
                let busy = io::Error::new(io::ErrorKind::AddrInUse, "a service answers there");
                return Err(Error::io(path.as_str(), busy));
            }
            std::fs::remove_file(&path).map_err(|e| Error::io(path.as_str(), e))?;
        }
        let listener = UnixListener::bind(&path).map_err(|e| Error::io(path.as_str(), e))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io(path.as_str(), e))?;
        Ok(Listener { listener, path })
    }

    /// Connects to the socket `name`: `Ok(None)` when nothing is there or no one listens.
    ///
    /// # Errors
    ///
    /// `E_PERMISSION` when the entry is not a socket (a link is refused, not followed), is not
    /// the user's, grants anything to others, or when the process listening on it runs as
    /// another user; `E_BAD_PATH` when the path is too long for a socket.
    pub fn connect(&self, name: &str) -> Result<Option<UnixStream>> {
        let path = self.entry(name)?;
        let Some(meta) = lstat(&path)? else { return Ok(None) };
        if !meta.file_type().is_socket() {
            return Err(refused(path.as_str(), "is not a socket (a link is refused)"));
        }
        if meta.uid() != my_uid() {
            return Err(refused(path.as_str(), "belongs to another user"));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(refused(path.as_str(), "is open to other users"));
        }
        let stream = match UnixStream::connect(&path) {
            Ok(stream) => stream,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound
                ) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(Error::io(path.as_str(), e)),
        };
        check_peer(&stream, path.as_str())?;
        Ok(Some(stream))
    }

    /// Writes the file `name` in the folder anew (mode 0600) and removes it: a change the
    /// folder's watch sees, and nothing is left behind.
    ///
    /// # Errors
    ///
    /// `E_IO` when the file cannot be written.
    pub fn touch(&self, name: &str) -> Result<()> {
        let path = self.entry(name)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .map_err(|e| Error::io(path.as_str(), e))?;
        drop(file);
        std::fs::remove_file(&path).map_err(|e| Error::io(path.as_str(), e))
    }

    /// Removes the entry `name` when it is a socket of the user's (a service's own socket, as
    /// it ends); anything else is left.
    pub fn remove_socket(&self, name: &str) {
        if let Ok(path) = self.entry(name)
            && let Ok(Some(meta)) = lstat(&path)
            && meta.file_type().is_socket()
            && meta.uid() == my_uid()
        {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A socket listening in a [`SocketDir`]; every connection it accepts is checked as
/// [`SocketDir::connect`] checks the listener.
#[derive(Debug)]
pub struct Listener {
    listener: UnixListener,
    path: Utf8PathBuf,
}

impl Listener {
    /// Waits for the next connection; a peer of another user is refused (`E_PERMISSION`),
    /// its connection closed.
    ///
    /// # Errors
    ///
    /// As above, and `E_IO` when accepting fails.
    pub fn accept(&self) -> Result<UnixStream> {
        let (stream, _) = self.listener.accept().map_err(|e| Error::io(self.path.as_str(), e))?;
        check_peer(&stream, self.path.as_str())?;
        Ok(stream)
    }

    /// The socket's path.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }
}

fn refused(path: &str, why: &str) -> Error {
    Error::new(ErrorKind::Permission, path).with_detail(why.to_owned())
}

fn lstat(path: &Utf8Path) -> Result<Option<std::fs::Metadata>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path.as_str(), e)),
    }
}

fn my_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Refuses a peer that runs as another user, or whose user cannot be known.
fn check_peer(stream: &UnixStream, path: &str) -> Result<()> {
    match peer_uid(stream) {
        Ok(uid) if uid == my_uid() => Ok(()),
        Ok(_) => Err(refused(path, "the peer runs as another user")),
        Err(e) => Err(Error::io(path, e).with_detail("the peer's user cannot be known")),
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    Ok(rustix::net::sockopt::socket_peercred(stream)?.uid.as_raw())
}

#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly",
))]
fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    use std::os::fd::AsRawFd as _;
    let (uid, _) = nix::unistd::getpeereid(stream.as_raw_fd()).map_err(io::Error::from)?;
    Ok(uid.as_raw())
}

#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly",
)))]
fn peer_uid(_stream: &UnixStream) -> io::Result<u32> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "no peer credentials on this platform"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, SocketDir) {
        let tmp = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::try_from(tmp.path().join("s")).unwrap();
        let dir = SocketDir::open(path, cap_std::ambient_authority()).unwrap();
        (tmp, dir)
    }

    #[test]
    fn the_folder_is_made_private() {
        let (_tmp, dir) = dir();
        let mode = std::fs::metadata(dir.path()).unwrap().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn a_folder_open_to_others_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("open");
        std::fs::create_dir(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
        let path = Utf8PathBuf::try_from(path).unwrap();
        let err = SocketDir::open(path, cap_std::ambient_authority()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Permission, "{err}");
    }

    #[test]
    fn a_link_in_the_folders_place_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::DirBuilder::new().mode(0o700).create(&real).unwrap();
        std::os::unix::fs::symlink(&real, tmp.path().join("link")).unwrap();
        let path = Utf8PathBuf::try_from(tmp.path().join("link")).unwrap();
        let err = SocketDir::open(path, cap_std::ambient_authority()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Permission, "{err}");
    }

    #[test]
    fn a_socket_answers_its_user() {
        let (_tmp, dir) = dir();
        assert!(dir.connect("svc.sock").unwrap().is_none(), "nothing there yet");
        let listener = dir.listen("svc.sock").unwrap();
        let mode = std::fs::symlink_metadata(listener.path()).unwrap().mode();
        assert_eq!(mode & 0o777, 0o600);
        let client = std::thread::spawn({
            let dir = dir.clone();
            move || dir.connect("svc.sock").unwrap().is_some()
        });
        listener.accept().unwrap();
        assert!(client.join().unwrap());
        // A second listener on a live socket is refused; a dead socket is replaced.
        let busy = dir.listen("svc.sock").unwrap_err();
        assert_eq!(busy.io_error().map(io::Error::kind), Some(io::ErrorKind::AddrInUse));
        drop(listener);
        assert!(dir.connect("svc.sock").unwrap().is_none(), "no one listens");
        dir.listen("svc.sock").unwrap();
    }

    #[test]
    fn a_link_or_a_file_in_a_sockets_place_is_refused() {
        let (tmp, dir) = dir();
        let elsewhere = tmp.path().join("elsewhere.sock");
        let _real = UnixListener::bind(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.path().join("link.sock")).unwrap();
        let err = dir.connect("link.sock").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Permission, "{err}");
        std::fs::write(dir.path().join("file.sock"), "x").unwrap();
        assert_eq!(dir.connect("file.sock").unwrap_err().kind(), ErrorKind::Permission);
        assert_eq!(dir.listen("file.sock").unwrap_err().kind(), ErrorKind::Permission);
        assert_eq!(dir.listen("link.sock").unwrap_err().kind(), ErrorKind::Permission);
    }

    #[test]
    fn a_socket_open_to_others_is_refused() {
        let (_tmp, dir) = dir();
        let listener = dir.listen("open.sock").unwrap();
        std::fs::set_permissions(listener.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(dir.connect("open.sock").unwrap_err().kind(), ErrorKind::Permission);
    }

    #[test]
    fn another_users_socket_or_folder_is_refused() {
        // Only a process that may give files away (root, as in the containers that run the
        // tests) can plant another user's entry; elsewhere the checks above stand alone.
        if my_uid() != 0 {
            return;
        }
        let (tmp, dir) = dir();
        let listener = dir.listen("theirs.sock").unwrap();
        std::os::unix::fs::chown(listener.path(), Some(65534), None).unwrap();
        let err = dir.connect("theirs.sock").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Permission, "{err}");
        assert_eq!(dir.listen("theirs.sock").unwrap_err().kind(), ErrorKind::Permission);
        let theirs = tmp.path().join("theirs");
        std::fs::DirBuilder::new().mode(0o700).create(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
        let theirs = Utf8PathBuf::try_from(theirs).unwrap();
        let err = SocketDir::open(theirs, cap_std::ambient_authority()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Permission, "{err}");
    }

    /// `script` run by python as the user `nobody`, or `None` where that cannot be done.
    fn as_nobody(script: &str, arg: &Utf8Path) -> Option<std::process::Child> {
        let tools = ["/usr/bin/setpriv", "/usr/bin/python3"];
        if my_uid() != 0 || !tools.iter().all(|t| std::path::Path::new(t).exists()) {
            return None;
        }
        let child = std::process::Command::new(tools[0])
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", tools[1], "-c", script])
            .arg(arg.as_str())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .ok()?;
        Some(child)
    }

    #[test]
    fn a_peer_of_another_user_is_refused_on_both_ends() {
        let (tmp, dir) = dir();
        // Open the way for `nobody`, so that only the peer check stands between the two.
        for path in [tmp.path(), dir.path().as_std_path()] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let listener = dir.listen("svc.sock").unwrap();
        std::fs::set_permissions(listener.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
        let connect = "import socket,sys,time\ns=socket.socket(socket.AF_UNIX)\n\
                       s.connect(sys.argv[1])\ntime.sleep(2)";
        let Some(mut child) = as_nobody(connect, listener.path()) else { return };
        let err = listener.accept().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Permission, "{err}");
        let _ = child.wait();
        // A listener of another user behind a socket entry that looks like ours.
        let theirs = dir.path().join("theirs.sock");
        let listen = "import socket,sys,time\ns=socket.socket(socket.AF_UNIX)\n\
                      s.bind(sys.argv[1])\ns.listen(1)\nprint('ready',flush=True)\n\
                      c,_=s.accept()\ntime.sleep(2)";
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let mut child = as_nobody(listen, &theirs).unwrap();
        let mut ready = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut ready,
        )
        .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(0), Some(0)).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = dir.connect("theirs.sock").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Permission, "{err}");
        assert!(err.to_string().contains("another user"), "{err}");
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn names_are_plain_and_paths_short() {
        let (_tmp, dir) = dir();
        for bad in ["", "../x", "a/b", ".hidden", "x\0y"] {
            assert_eq!(dir.connect(bad).unwrap_err().kind(), ErrorKind::BadPath, "{bad:?}");
        }
        let long = "x".repeat(MAX_SOCKET_PATH);
        assert_eq!(dir.listen(&long).unwrap_err().kind(), ErrorKind::BadPath);
    }

    #[test]
    fn a_touch_leaves_nothing() {
        let (_tmp, dir) = dir();
        dir.touch("cookie-1").unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
