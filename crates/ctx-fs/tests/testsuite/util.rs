//! Fixtures: a workspace root beside an outside directory with a secret.

use std::fs;
use std::os::unix::fs::symlink;
use std::time::{Duration, SystemTime};

use camino::{Utf8Path, Utf8PathBuf};
use ctx_fs::{Code, Content, Error, Sandbox, SandboxBuilder};

/// The secret stored outside the workspace; it must never come back.
pub(crate) const SECRET: &str = "TOP-SECRET-0xC0FFEE";

pub(crate) struct Fixture {
    _tmp: tempfile::TempDir,
    pub(crate) base: Utf8PathBuf,
    pub(crate) ws: Utf8PathBuf,
    pub(crate) outside: Utf8PathBuf,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let base = Utf8PathBuf::try_from(fs::canonicalize(tmp.path()).unwrap()).unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(&ws).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        Fixture { _tmp: tmp, base, ws, outside }
    }

    /// Writes a file under the workspace, creating its directories.
    pub(crate) fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Fixture {
        let path = self.ws.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
        self
    }

    pub(crate) fn mkdir(&self, rel: &str) -> &Fixture {
        fs::create_dir_all(self.ws.join(rel)).unwrap();
        self
    }

    /// Creates a symbolic link at `rel` (under the workspace) to `target`, as written.
    pub(crate) fn link(&self, rel: &str, target: &str) -> &Fixture {
        let path = self.ws.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        symlink(target, &path).unwrap();
        self
    }

    /// A builder for the workspace; `CTX_FS_SLOW_PATH=1` turns the Linux
    /// fast path off, to run the whole suite on the portable resolution.
    pub(crate) fn builder(&self) -> SandboxBuilder {
        let slow = std::env::var_os("CTX_FS_SLOW_PATH").is_some_and(|v| v == "1");
        Sandbox::builder(self.ws.clone()).fast_path(!slow)
    }

    pub(crate) fn sandbox(&self) -> Sandbox {
        self.builder().open(cap_std::ambient_authority()).unwrap()
    }

    pub(crate) fn path(&self, rel: &str) -> Utf8PathBuf {
        self.ws.join(rel)
    }
}

/// Moves a file's modification time into the past so it may be cached.
pub(crate) fn age(path: &Utf8Path) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
}

/// The code of an error result, or `None` for a success.
#[track_caller]
pub(crate) fn code<T>(result: Result<T, Error>) -> Option<Code> {
    result.err().map(|e| e.code())
}

/// Resolves and reads `written` from the workspace root as text.
#[track_caller]
pub(crate) fn read(sandbox: &Sandbox, written: &str) -> Result<String, Error> {
    let (_, content) = sandbox.read_path(written, None)?;
    match content {
        Content::Text { text, .. } => Ok(text.to_string()),
        Content::Binary => Ok("<binary>".to_owned()),
        _ => unreachable!(),
    }
}

/// The error message of a failed read, checked to leak nothing.
#[track_caller]
pub(crate) fn message(sandbox: &Sandbox, written: &str) -> String {
    let err = read(sandbox, written).expect_err(written);
    let msg = err.to_string();
    assert!(!msg.contains(SECRET), "{msg}");
    msg
}
