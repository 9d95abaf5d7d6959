//! The roots that files of the workspace ask for (a configuration found there, a solution's
//! source folders), and which of them are opened: the root rule, then the user's trust
//! (docs/security.md, "Roots and trust").
//!
//! Each asked-for root goes through these steps, in order:
//! 1. The root rule on the path as written (made absolute): a refused root is never opened,
//!    and the warning says why. Nothing on disk is looked at.
//! 2. A root inside the workspace needs no trust: it is opened through the workspace's own
//!    handle, so it cannot lead out.
//! 3. A root outside the workspace is opened only when the user trusts it: their grant for
//!    this workspace names its real path ([`ctx_trust::Grant::covers`]). An untrusted root is
//!    not opened; one `W_UNTRUSTED` warning names them all and the command that trusts them,
//!    and says the same whether or not they exist.
//! 4. The sandbox judges each root it opens by the real path of its handle
//!    ([`ctx_fs::SandboxBuilder::project_root`]); a refused one is a warning too.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use ctx_diagnostics::Code;
use ctx_fs::{AmbientAuthority, RootKind, Sandbox, SandboxBuilder};
use ctx_trust::{Asked, Request, TrustStore};

/// Whose word opens the folders outside the workspace that its files ask for
/// ([`ContextBuilder::trust`](crate::ContextBuilder::trust)).
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum Trust {
    /// None is opened (the default of the library): the workspace is all there is, besides
    /// the roots the caller adds itself.
    #[default]
    Nothing,
    /// The folders the user trusted for this workspace, as recorded in this store (`ctx
    /// trust`, [`TrustStore::grant`]).
    Store(Arc<TrustStore>),
    /// Every folder the root rule allows: for a caller that has asked its user already.
    Everything,
}

impl Trust {
    /// The grants kept in `trust.json` of the folder `dir` (for the command line, the user's
    /// configuration folder followed by `ctx`); the folder is read when a context needs it
    /// and created by the first grant.
    ///
    /// # Ambient Authority
    ///
    /// The folder is opened by its path, with the process's ambient authority.
    #[allow(clippy::disallowed_methods)] // The user's own folder, as ContextBuilder::build opens roots.
    pub fn user_store(dir: impl AsRef<std::path::Path>) -> Trust {
        let dir = Utf8PathBuf::from_path_buf(dir.as_ref().to_path_buf())
            .unwrap_or_else(|p| Utf8PathBuf::from(p.to_string_lossy().into_owned()));
        Trust::Store(Arc::new(TrustStore::new(dir, cap_std::ambient_authority())))
    }

    /// The store of the grants, when there is one.
    pub fn store(&self) -> Option<&TrustStore> {
        match self {
            Trust::Store(store) => Some(store),
            _ => None,
        }
    }
}

/// A setting that could not be honoured in full, found while the context was built: a root
/// left closed, a bound ignored. The context works without it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Notice {
    /// `W_UNTRUSTED`, `W_CONFIG` or `W_SOURCES`.
    pub code: Code,
    /// What happened and what to do, lower-case.
    pub message: String,
}

impl Notice {
    /// A notice.
    pub fn new(code: Code, message: impl Into<String>) -> Notice {
        Notice { code, message: message.into() }
    }
}

/// A root that a file of the workspace asks for.
#[derive(Clone, Debug)]
pub(crate) struct AskedRoot {
    /// As written by the file, made absolute.
    pub(crate) path: Utf8PathBuf,
    pub(crate) kind: RootKind,
    /// The file and what in it asks (`ctx.toml (allow)`).
    pub(crate) asked_by: String,
    /// How many files it is asked for, when known.
    pub(crate) files: Option<usize>,
    /// The code of the warnings about it: `W_CONFIG` for a configuration's, `W_SOURCES` for a
    /// solution's.
    pub(crate) code: Code,
    /// The caller named what asks for it (a solution on the command line): no trust needed,
    /// the root rule still applies.
    pub(crate) trusted: bool,
}

/// What [`decide`] makes of the asked-for roots.
#[derive(Debug, Default)]
pub(crate) struct Decided {
    /// The folders outside the workspace that were asked for, trusted or not.
    pub(crate) request: Request,
    pub(crate) notices: Vec<Notice>,
    /// The roots to open, each with the index of its asker in `asked`.
    open: Vec<usize>,
}

/// Steps 1 to 3 of the module's documentation, for the workspace at `ws_given` (as given,
/// made absolute), which really is at `ws_root`.
pub(crate) fn decide(
    ws_given: &Utf8Path,
    ws_root: &Utf8Path,
    asked: &[AskedRoot],
    trust: &Trust,
    ambient: AmbientAuthority,
) -> Decided {
    let home = std::env::home_dir().and_then(|h| Utf8PathBuf::try_from(h).ok());
    let mut decided = Decided { request: Request::new(ws_root, Vec::new()), ..Default::default() };
    let mut outside = Vec::new();
    for (i, root) in asked.iter().enumerate() {
        let home = home.as_ref().map(|h| h.as_str());
        if let Some(why) = ctx_fs::root_refusal(root.path.as_str(), home) {
            decided.notices.push(Notice::new(
                root.code,
                format!("{} asks for {}, {why}; it is never opened", root.asked_by, root.path),
            ));
            continue;
        }
        if root.path.starts_with(ws_given) || root.path.starts_with(ws_root) || root.trusted {
            decided.open.push(i);
            continue;
        }
        let real = ctx_fs::real_path_of(&root.path, ambient);
        let mut entry = Asked::new(root.path.clone(), root.asked_by.clone()).with_real(real);
        if let Some(files) = root.files {
            entry = entry.with_files(files);
        }
        decided.request.asked.push(entry);
        outside.push(i);
    }
    let grant = match trust {
        Trust::Nothing => Ok(None),
        Trust::Everything => {
            decided.open.extend(&outside);
            return decided;
        }
        Trust::Store(store) => store.grant_for(ws_root),
    };
    let mut untrusted = Vec::new();
    let grant = match grant {
        Ok(grant) => grant,
        Err(err) => {
            decided.notices.push(Notice::new(Code::Untrusted, format!("{err}")));
            None
        }
    };
    for (asked_at, &i) in decided.request.asked.iter().zip(&outside) {
        if grant.as_ref().is_some_and(|g| g.covers(asked_at)) {
            decided.open.push(i);
        } else {
            untrusted.push(format!("{} ({})", asked_at.path, asked_at.asked_by));
        }
    }
    if !untrusted.is_empty() {
        let (folders, them) =
            if untrusted.len() == 1 { ("folder", "it") } else { ("folders", "them") };
        decided.notices.push(Notice::new(
            Code::Untrusted,
            format!(
                "{} {folders} outside the workspace not opened, as you have not trusted {them}: \
                 {}; `ctx trust` shows and trusts {them}",
                untrusted.len(),
                untrusted.join(", ")
            ),
        ));
    }
    decided
}

impl Decided {
    /// Adds the roots to open to `builder`, each judged by the sandbox where it really is.
    pub(crate) fn add_to(
        &self,
        asked: &[AskedRoot],
        mut builder: SandboxBuilder,
    ) -> SandboxBuilder {
        for &i in &self.open {
            builder = builder.project_root(asked[i].path.clone(), asked[i].kind);
        }
        builder
    }

    /// Step 4: a notice for each root the sandbox refused to open.
    pub(crate) fn refused(&mut self, asked: &[AskedRoot], sandbox: &Sandbox) {
        for refused in sandbox.refused_roots() {
            let Some(root) = asked.iter().find(|a| a.path == refused.written) else { continue };
            let message = match &refused.refusal {
                Some((real, why)) => format!(
                    "{} asks for {}, which leads to {real}, {why}; it is never opened",
                    root.asked_by, root.path
                ),
                None => format!("{} asks for {}: {}", root.asked_by, root.path, refused.error),
            };
            self.notices.push(Notice::new(root.code, message));
        }
    }
}

/// `dir` as a root path: `~` and `~/…` under the home folder (a home root), anything else
/// made absolute from the current folder; `.` and `..` applied to the text.
pub(crate) fn absolute_root(
    dir: &std::path::Path,
    kind: RootKind,
) -> Option<(Utf8PathBuf, RootKind)> {
    let text = dir.to_str()?;
    let (path, kind) = match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with(['/', '\\']) => {
            let home = Utf8PathBuf::try_from(std::env::home_dir()?).ok()?;
            (home.join(rest.trim_start_matches(['/', '\\'])), RootKind::Home)
        }
        _ => (Utf8PathBuf::try_from(std::path::absolute(dir).ok()?).ok()?, kind),
    };
    let mut normal = Utf8PathBuf::new();
    for comp in path.components() {
        match comp {
            camino::Utf8Component::ParentDir => {
                normal.pop();
            }
            camino::Utf8Component::CurDir => {}
            other => normal.push(other),
        }
    }
    Some((normal, kind))
}
