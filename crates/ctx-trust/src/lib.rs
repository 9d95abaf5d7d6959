//! The user's trust in workspaces: which folders outside a workspace its own files may open.
//!
//! A repository's files can ask ctx to open folders outside the repository: its `ctx.toml`
//! (`allow = ["../shared"]`), a solution whose source folders lie beside the build folder.
//! Those folders are opened only after the user said so, once, for that workspace
//! (docs/security.md, "Trust"). This crate keeps those answers.
//!
//! - A [`Request`] is what a workspace asks for: its canonical path and the folders ([`Asked`])
//!   with the file that asked for each, as written and where each really is.
//! - A [`Grant`] is the user's answer for a workspace: the real paths of the folders trusted,
//!   and the digest of the request that was shown ([`Request::digest`]).
//! - A [`TrustStore`] keeps the grants in one file, `trust.json`, in a folder of the user's
//!   own (`~/.config/ctx` for the command line), read and written through a
//!   [`ctx_fs::Store`] like any other file: a link, FIFO or oversized file there is refused.
//!
//! Nothing here decides what a repository may ask for (the root rule,
//! [`ctx_fs::root_refusal`], does) or opens a folder: a grant only says which folders the user
//! is willing to have opened. A repository cannot write a grant: the store is never in a
//! workspace's hands, and no setting of a workspace's own says where it is.

use std::fmt;

use camino::{Utf8Path, Utf8PathBuf};
pub use ctx_diagnostics::Code;
use ctx_fs::{AmbientAuthority, Store};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The file of a [`TrustStore`].
pub const TRUST_FILE: &str = "trust.json";

/// The largest trust file read (it holds a few lines per trusted workspace).
pub const MAX_TRUST_FILE_BYTES: u64 = 4 << 20;

/// A folder outside the workspace that a file of the workspace asks to open.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Asked {
    /// The folder as the file names it, made absolute and normalised lexically.
    pub path: Utf8PathBuf,
    /// Where it really is, every link followed, when it exists.
    pub real: Option<Utf8PathBuf>,
    /// The file that asks for it, relative to the workspace when it is in it, with what in
    /// it asks (`ctx.toml (allow)`, `app.sln (source folder)`).
    pub asked_by: String,
    /// How many files it is asked for, when that is known (the files of a solution in it).
    pub files: Option<usize>,
}

impl Asked {
    /// A folder asked for by `asked_by`.
    pub fn new(path: impl Into<Utf8PathBuf>, asked_by: impl Into<String>) -> Asked {
        Asked { path: path.into(), real: None, asked_by: asked_by.into(), files: None }
    }

    /// With where it really is.
    pub fn with_real(mut self, real: Option<Utf8PathBuf>) -> Asked {
        self.real = real;
        self
    }

    /// With how many files it is asked for.
    pub fn with_files(mut self, files: usize) -> Asked {
        self.files = Some(files);
        self
    }

    /// The path a grant records and compares: the real one, else the one written.
    pub fn key(&self) -> &Utf8Path {
        self.real.as_deref().unwrap_or(&self.path)
    }
}

/// What a workspace asks for: the folders outside it that its files want opened.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Request {
    /// The workspace's canonical path.
    pub workspace: Utf8PathBuf,
    /// The folders, in the order they were asked for.
    pub asked: Vec<Asked>,
}

impl Request {
    /// A request of `workspace` (its canonical path) for `asked`.
    pub fn new(workspace: impl Into<Utf8PathBuf>, asked: Vec<Asked>) -> Request {
        Request { workspace: workspace.into(), asked }
    }

    /// Whether the workspace asks for nothing outside it.
    pub fn is_empty(&self) -> bool {
        self.asked.is_empty()
    }

    /// `sha256:` and the hex SHA-256 of the workspace and of the folders' written and real
    /// paths, sorted: the same folders give the same digest whatever asked for them and in
    /// what order, and a link that now leads elsewhere gives another.
    pub fn digest(&self) -> String {
        let mut lines: Vec<String> = self
            .asked
            .iter()
            .map(|a| format!("{}\t{}\n", a.path, a.real.as_deref().map_or("", |r| r.as_str())))
            .collect();
        lines.sort();
        lines.dedup();
        let mut hasher = Sha256::new();
        hasher.update(self.workspace.as_str().as_bytes());
        hasher.update(b"\n");
        for line in &lines {
            hasher.update(line.as_bytes());
        }
        let hex: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }
}

/// The user's answer for one workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Grant {
    /// The workspace's canonical path.
    pub workspace: Utf8PathBuf,
    /// The digest of the request the user was shown ([`Request::digest`]).
    pub digest: String,
    /// The real paths of the folders trusted, sorted.
    pub roots: Vec<Utf8PathBuf>,
}

impl Grant {
    /// Whether this grant trusts the folder `asked`: its real path (or, when it does not
    /// exist, its path) is one the user trusted.
    pub fn covers(&self, asked: &Asked) -> bool {
        self.roots.iter().any(|root| root == asked.key())
    }

    /// Whether this grant trusts every folder of `request`.
    pub fn covers_all(&self, request: &Request) -> bool {
        self.workspace == request.workspace
            && (self.digest == request.digest() || request.asked.iter().all(|a| self.covers(a)))
    }
}

/// Why the trust store could not be read or written.
#[derive(Debug)]
pub struct Error {
    path: Utf8PathBuf,
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    Fs(ctx_fs::Error),
    Corrupt(String),
    /// The store lies in the workspace it would speak for.
    InWorkspace(Utf8PathBuf),
}

impl Error {
    /// The diagnostic code: the sandbox's for a refused or failed read, `E_CONFIG` for a file
    /// that is not a trust file.
    pub fn code(&self) -> Code {
        match &self.kind {
            ErrorKind::Fs(err) => err.code(),
            ErrorKind::Corrupt(_) | ErrorKind::InWorkspace(_) => Code::Config,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Fs(err) => write!(f, "trust file {}: {err}", self.path),
            ErrorKind::InWorkspace(workspace) => write!(
                f,
                "trust file {} lies in the workspace {workspace}, which cannot trust itself; \
                 keep it elsewhere (CTX_CONFIG_DIR)",
                self.path
            ),
            ErrorKind::Corrupt(why) => write!(
                f,
                "trust file {} is not one ctx wrote ({why}); remove it to start afresh",
                self.path
            ),
        }
    }
}

impl std::error::Error for Error {}

/// The file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    version: u32,
    workspaces: Vec<Grant>,
}

const VERSION: u32 = 1;

/// The grants of one user, in `trust.json` of a folder of their own.
pub struct TrustStore {
    dir: Utf8PathBuf,
    ambient: AmbientAuthority,
}

impl fmt::Debug for TrustStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrustStore").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl TrustStore {
    /// The store in `dir`; nothing is opened until it is read, and the folder is created on
    /// the first grant.
    ///
    /// # Ambient Authority
    ///
    /// The folder is opened by its path, with the process's ambient authority, when the store
    /// is read or written.
    pub fn new(dir: impl Into<Utf8PathBuf>, ambient: AmbientAuthority) -> TrustStore {
        TrustStore { dir: dir.into(), ambient }
    }

    /// The folder of the store.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// The grant for the workspace at `workspace` (canonical), if the user gave one.
    ///
    /// # Errors
    ///
    /// When the trust file cannot be read or is not one ctx wrote.
    pub fn grant_for(&self, workspace: &Utf8Path) -> Result<Option<Grant>, Error> {
        self.outside(workspace)?;
        let file = self.load(Store::open_existing(self.dir.clone(), self.ambient))?;
        Ok(file.workspaces.into_iter().find(|g| g.workspace == workspace))
    }

    /// Whether the user trusts every folder `request` asks for.
    ///
    /// # Errors
    ///
    /// As [`TrustStore::grant_for`].
    pub fn trusts(&self, request: &Request) -> Result<bool, Error> {
        if request.is_empty() {
            return Ok(true);
        }
        Ok(self.grant_for(&request.workspace)?.is_some_and(|g| g.covers_all(request)))
    }

    /// Records that the user trusts the folders of `request` for its workspace, replacing an
    /// earlier grant for it.
    ///
    /// # Errors
    ///
    /// When the trust file cannot be read or written.
    pub fn grant(&self, request: &Request) -> Result<Grant, Error> {
        self.outside(&request.workspace)?;
        let store = Store::open(self.dir.clone(), self.ambient).map_err(|e| self.fs(e))?;
        let _lock = store.lock(TRUST_FILE).map_err(|e| self.fs(e))?;
        let mut file = self.load(Ok(Some(store)))?;
        let mut roots: Vec<Utf8PathBuf> =
            request.asked.iter().map(|a| a.key().to_owned()).collect();
        roots.sort();
        roots.dedup();
        let grant = Grant { workspace: request.workspace.clone(), digest: request.digest(), roots };
        file.workspaces.retain(|g| g.workspace != request.workspace);
        file.workspaces.push(grant.clone());
        self.save(&file)?;
        Ok(grant)
    }

    /// Forgets the grant of the workspace at `workspace`; `false` when there was none.
    ///
    /// # Errors
    ///
    /// When the trust file cannot be read or written.
    pub fn revoke(&self, workspace: &Utf8Path) -> Result<bool, Error> {
        let Some(store) =
            Store::open_existing(self.dir.clone(), self.ambient).map_err(|e| self.fs(e))?
        else {
            return Ok(false);
        };
        let _lock = store.lock(TRUST_FILE).map_err(|e| self.fs(e))?;
        let mut file = self.load(Ok(Some(store)))?;
        let before = file.workspaces.len();
        file.workspaces.retain(|g| g.workspace != workspace);
        if file.workspaces.len() == before {
            return Ok(false);
        }
        self.save(&file)?;
        Ok(true)
    }

    /// A trust file in the workspace would be the repository's own word: refused, wherever
    /// the store's folder really is (through links too).
    fn outside(&self, workspace: &Utf8Path) -> Result<(), Error> {
        let real = ctx_fs::real_path_of(&self.dir, self.ambient);
        let dir = real.as_deref().unwrap_or(&self.dir);
        let real_ws = ctx_fs::real_path_of(workspace, self.ambient);
        let ws = real_ws.as_deref().unwrap_or(workspace);
        if dir.starts_with(ws) || self.dir.starts_with(workspace) {
            return Err(Error {
                path: self.dir.join(TRUST_FILE),
                kind: ErrorKind::InWorkspace(workspace.to_owned()),
            });
        }
        Ok(())
    }

    fn load(&self, store: ctx_fs::Result<Option<Store>>) -> Result<TrustFile, Error> {
        let Some(store) = store.map_err(|e| self.fs(e))? else {
            return Ok(TrustFile { version: VERSION, workspaces: Vec::new() });
        };
        let Some(bytes) =
            store.read_up_to(TRUST_FILE, MAX_TRUST_FILE_BYTES).map_err(|e| self.fs(e))?
        else {
            return Ok(TrustFile { version: VERSION, workspaces: Vec::new() });
        };
        // The message of a parse error never quotes the file: only where it failed.
        let file: TrustFile = serde_json::from_slice(&bytes)
            .map_err(|e| self.corrupt(format!("line {}, column {}", e.line(), e.column())))?;
        if file.version != VERSION {
            return Err(self.corrupt(format!("version {}", file.version)));
        }
        Ok(file)
    }

    fn save(&self, file: &TrustFile) -> Result<(), Error> {
        let store = Store::open(self.dir.clone(), self.ambient).map_err(|e| self.fs(e))?;
        let mut bytes = serde_json::to_vec_pretty(file).map_err(|e| self.corrupt(e.to_string()))?;
        bytes.push(b'\n');
        store.write(TRUST_FILE, &bytes).map_err(|e| self.fs(e))
    }

    fn fs(&self, err: ctx_fs::Error) -> Error {
        Error { path: self.dir.join(TRUST_FILE), kind: ErrorKind::Fs(err) }
    }

    fn corrupt(&self, why: String) -> Error {
        Error { path: self.dir.join(TRUST_FILE), kind: ErrorKind::Corrupt(why) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(workspace: &str, asked: &[(&str, Option<&str>)]) -> Request {
        let asked = asked
            .iter()
            .map(|(path, real)| {
                Asked::new(*path, "ctx.toml (allow)").with_real(real.map(Into::into))
            })
            .collect();
        Request::new(workspace, asked)
    }

    #[test]
    fn the_digest_follows_the_folders_not_their_order_or_askers() {
        let a = request("/w", &[("/x", Some("/x")), ("/y", None)]);
        let b = request("/w", &[("/y", None), ("/x", Some("/x"))]);
        assert_eq!(a.digest(), b.digest());
        assert!(a.digest().starts_with("sha256:") && a.digest().len() == 7 + 64);
        let moved = request("/w", &[("/x", Some("/elsewhere")), ("/y", None)]);
        assert_ne!(a.digest(), moved.digest(), "a link that now leads elsewhere is another ask");
        assert_ne!(a.digest(), request("/v", &[("/x", Some("/x")), ("/y", None)]).digest());
    }

    #[test]
    fn a_grant_covers_the_real_paths_it_names() {
        let asked = request("/w", &[("/w/../src", Some("/src")), ("/gone", None)]);
        let grant = Grant {
            workspace: "/w".into(),
            digest: "sha256:0".into(),
            roots: vec!["/gone".into(), "/src".into()],
        };
        assert!(grant.covers_all(&asked));
        let fewer = request("/w", &[("/w/../src", Some("/src"))]);
        assert!(grant.covers_all(&fewer), "asking for less stays trusted");
        let moved = request("/w", &[("/w/../src", Some("/home/u/.aws"))]);
        assert!(!grant.covers_all(&moved), "a link that now leads elsewhere is not trusted");
        assert!(!grant.covers_all(&request("/v", &[("/src", Some("/src"))])));
    }
}
