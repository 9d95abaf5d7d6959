//! Configuration files are read like any other file (docs/security.md): through a sandbox,
//! regular files only, no link out of their folder, at most [`MAX_CONFIG_BYTES`].

use std::path::Path;

use ctx_fs::{AmbientAuthority, Content, Sandbox};

use crate::context::{Error, ErrorKind};

/// The largest configuration file read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A configuration file that was read: its path as shown to the user and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigText {
    /// Where it is: relative to the workspace for a workspace's own file (`ctx.toml`), as
    /// named for a file the user named.
    pub path: String,
    /// Its text.
    pub text: String,
}

/// The first of `names` (relative paths, such as `ctx.toml` and `.ctx/config.toml`) that the
/// workspace at `root` holds, read through a sandbox of the workspace: a name that leads out
/// of it by a link, a denied name, a FIFO or device, a file over [`MAX_CONFIG_BYTES`] or one
/// that is not text is an error, never followed or waited on; `None` when there is none (a
/// folder of that name does not count).
///
/// # Errors
///
/// When the workspace cannot be opened or a file of those names cannot be read as text.
///
/// # Ambient Authority
///
/// The workspace folder is opened by its path, once.
#[allow(clippy::disallowed_methods)] // Opens the workspace, as ContextBuilder::build does.
pub fn read_workspace_config(root: &Path, names: &[&str]) -> Result<Option<ConfigText>, Error> {
    let sandbox = open(root, cap_std::ambient_authority())?;
    for name in names {
        if let Some(text) = read(&sandbox, name)? {
            return Ok(Some(ConfigText { path: (*name).to_owned(), text }));
        }
    }
    Ok(None)
}

/// The configuration file the user named (`--config FILE`), read through a sandbox of the
/// folder it really is in, with the rules of [`read_workspace_config`].
///
/// # Errors
///
/// When it cannot be found or read as text.
///
/// # Ambient Authority
///
/// The file's folder is opened by its path, once.
#[allow(clippy::disallowed_methods)] // Opens the file's folder, as ContextBuilder::build does.
pub fn read_user_config(path: &Path) -> Result<ConfigText, Error> {
    let ambient = cap_std::ambient_authority();
    let shown = path.display().to_string();
    let utf8 = camino::Utf8Path::from_path(path)
        .ok_or_else(|| Error::from(ErrorKind::NotUtf8(path.to_path_buf())))?;
    // The user chose this file: a link to it is followed to where it is, and that folder is
    // the sandbox.
    let real = ctx_fs::real_path_of(utf8, ambient).unwrap_or_else(|| utf8.to_owned());
    let missing = || Error::from(ErrorKind::Config(format!("no such file: {shown}")));
    let (Some(dir), Some(name)) = (real.parent(), real.file_name()) else {
        return Err(missing());
    };
    // A bare name lies in the current folder.
    let dir = if dir.as_str().is_empty() { camino::Utf8Path::new(".") } else { dir };
    let sandbox = open(dir.as_std_path(), ambient)?;
    let text = read(&sandbox, name)?.ok_or_else(missing)?;
    Ok(ConfigText { path: shown, text })
}

fn open(root: &Path, ambient: AmbientAuthority) -> Result<Sandbox, Error> {
    let root = camino::Utf8Path::from_path(root)
        .ok_or_else(|| Error::from(ErrorKind::NotUtf8(root.to_path_buf())))?;
    let mut limits = ctx_fs::Limits::default();
    limits.max_file_bytes = MAX_CONFIG_BYTES;
    Sandbox::builder(root)
        .limits(limits)
        .cache_capacity(0)
        .open(ambient)
        .map_err(|e| ErrorKind::Fs(e).into())
}

/// The text of `name`, `None` when there is no file of that name (a folder does not count).
fn read(sandbox: &Sandbox, name: &str) -> Result<Option<String>, Error> {
    let location = match sandbox.resolve_in_workspace(name) {
        Ok(location) => location,
        Err(err) if err.code() == ctx_diagnostics::Code::NotFound => return Ok(None),
        Err(err) => return Err(ErrorKind::Fs(err).into()),
    };
    if sandbox.stat(&location).is_ok_and(|s| s.kind == ctx_fs::FileKind::Dir) {
        return Ok(None);
    }
    match sandbox.read_text(&location).map_err(ErrorKind::Fs)? {
        Content::Text { text, .. } => Ok(Some(text.to_string())),
        _ => Err(ErrorKind::Binary(name.to_owned()).into()),
    }
}

/// Whether `path` really lies in the folder `root` (every link of either followed); `false`
/// when either cannot be found.
///
/// # Ambient Authority
///
/// Both are looked up by their paths; nothing is opened.
#[allow(clippy::disallowed_methods)] // A look at where two paths lead, as real_path_of is.
pub fn lies_in(path: &Path, root: &Path) -> bool {
    let ambient = cap_std::ambient_authority();
    let real =
        |p: &Path| camino::Utf8Path::from_path(p).and_then(|p| ctx_fs::real_path_of(p, ambient));
    let folder = path.parent().and_then(real);
    match (folder, real(root)) {
        (Some(folder), Some(root)) => folder.starts_with(root),
        _ => false,
    }
}
