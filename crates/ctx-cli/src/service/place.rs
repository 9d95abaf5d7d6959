//! Where the service of a workspace listens and what it answers for: its socket in the folder
//! `watch` of the cache folder (mode 0700, checked by `ctx::fs::SocketDir`), named after a
//! hash of the workspace's canonical path, and the fingerprint of what decides its answers.

use std::hash::{Hash as _, Hasher as _};

use anyhow::Context as _;
use ctx::fs::SocketDir;

use crate::settings::Settings;

/// The folder of the services' sockets in the cache folder.
const SOCKET_FOLDER: &str = "watch";

/// A stable 64-bit hash (the standard library's SipHash with fixed keys) as hex.
fn hash_hex(text: &str) -> String {
    #[allow(deprecated)] // SipHasher: fixed keys, so every process agrees.
    let mut hasher = std::hash::SipHasher::new();
    text.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// The socket folder in the cache folder, created if missing.
pub(crate) fn socket_dir(settings: &Settings) -> anyhow::Result<SocketDir> {
    let cache = settings.cache_dir()?;
    ctx::socket_dir(cache.join(SOCKET_FOLDER))
        .with_context(|| "cannot use the folder of the index service")
}

/// The canonical path of the context's workspace.
pub(crate) fn root_of(ctx: &ctx::Context) -> String {
    let sandbox = ctx.sandbox();
    sandbox.root_path(sandbox.workspace().root()).as_str().to_owned()
}

/// The socket's name for a workspace.
pub(crate) fn socket_name(root: &str) -> String {
    format!("{}.sock", hash_hex(root))
}

/// What decides the answers besides the prompt: the settings, and the roots the context
/// opened (trust decides which a project's configuration adds).
pub(crate) fn fingerprint(settings: &Settings, ctx: &ctx::Context) -> String {
    let sandbox = ctx.sandbox();
    let roots: Vec<&str> = sandbox.roots().map(|r| sandbox.root_path(r).as_str()).collect();
    hash_hex(&format!("{}\n{roots:?}\n{}", settings.index_settings_text(), build_identity()))
}

/// The running executable's path, length and modification time: a service started from
/// another build of ctx, even of the same version, answers nothing (its ranking may differ).
#[allow(clippy::disallowed_methods)] // The process's own executable, not workspace content.
fn build_identity() -> String {
    let exe = std::env::current_exe().ok();
    let meta = exe.as_ref().and_then(|path| std::fs::metadata(path).ok());
    let len = meta.as_ref().map(std::fs::Metadata::len);
    format!("{exe:?} {len:?} {:?}", meta.and_then(|m| m.modified().ok()))
}
