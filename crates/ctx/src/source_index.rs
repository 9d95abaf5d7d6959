//! The source index of an out-of-source build in the facade: loading it when the context is
//! built, and the resolver that plugs it into assembly (assembly.md §2, rule 5).

use std::sync::Arc;

use ctx_assemble::{Resolution, Resolver};
use ctx_diagnostics::Code;
use ctx_fs::{RootKind, Sandbox, Store};
use ctx_sources::{Lookup, SourceIndex};

use crate::error::{Error, ErrorKind};

/// A source index to use, as the builder was given it.
#[derive(Clone, Debug)]
pub(crate) enum Planned {
    /// Built by the caller.
    Index(Box<SourceIndex>),
    /// Read from this solution or database, relative to the root.
    Solution(String, ctx_sources::Options),
    /// Read from the one solution or database found in the root or its `build/` folder, if
    /// there is exactly one, or from a solution and the `compile_commands.json` beside it
    /// together ([`ctx_sources::detect`]).
    Detect(ctx_sources::Options),
}

impl Planned {
    /// The index, read through the workspace sandbox that `workspace` opens when a solution
    /// is to be looked for or read (from `store` when it holds a fresh copy); with that
    /// sandbox when it was opened.
    pub(crate) fn load(
        self,
        workspace: impl FnOnce() -> Result<Sandbox, Error>,
        store: &dyn Fn() -> Option<Arc<Store>>,
    ) -> Result<(Option<SourceIndex>, Option<Sandbox>), Error> {
        let (sandbox, paths, options, detected) = match self {
            Planned::Index(index) => return Ok((Some(*index), None)),
            Planned::Solution(path, options) => (workspace()?, vec![path], options, false),
            Planned::Detect(options) => {
                let sandbox = workspace()?;
                match ctx_sources::detect(&sandbox) {
                    ctx_sources::Detected::One(path) => (sandbox, vec![path], options, true),
                    ctx_sources::Detected::Both(solution, database) => {
                        (sandbox, vec![solution, database], options, true)
                    }
                    _ => return Ok((None, Some(sandbox))),
                }
            }
        };
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let index = match store() {
            Some(store) => SourceIndex::load_cached_all(&sandbox, &paths, &options, &store),
            None => SourceIndex::load_all(&sandbox, &paths, &options),
        };
        match index {
            Ok(index) => Ok((Some(index), Some(sandbox))),
            // A solution found by looking, not named: one that cannot be read leaves the
            // context without a source index rather than without a context (`ctx sources`
            // says why).
            Err(_) if detected => Ok((None, Some(sandbox))),
            Err(err) => Err(ErrorKind::Sources(err).into()),
        }
    }
}

/// The index checked against the disk through the final sandbox, and stored when it was
/// built in this run with every source root open (an index checked without one of them, not
/// trusted or refused, says nothing of that root's files and is not kept). A cache that
/// cannot be written costs the next run a rebuild, nothing more, so that failure is not an
/// error.
pub(crate) fn verified(
    mut index: SourceIndex,
    sandbox: &Sandbox,
    store: Option<&Store>,
) -> Arc<SourceIndex> {
    let open: Vec<&camino::Utf8Path> = sandbox
        .roots()
        .filter(|&r| sandbox.root_kind(r) == RootKind::Source)
        .map(|r| sandbox.root_path(r))
        .collect();
    let all_open = index.source_roots().iter().all(|root| {
        let real = ctx_fs::real_path_of(camino::Utf8Path::new(root), ambient());
        open.iter().any(|o| *o == camino::Utf8Path::new(root) || Some(*o) == real.as_deref())
    });
    let built_now = !index.cached();
    index.verify(sandbox);
    if let (true, true, Some(store)) = (built_now, all_open, store) {
        let _ = index.save(store);
    }
    Arc::new(index)
}

#[allow(clippy::disallowed_methods)] // A look at where a root is, as the builder opens them.
fn ambient() -> ctx_fs::AmbientAuthority {
    cap_std::ambient_authority()
}

/// The resolver of assembly.md §2, rule 5, over a source index.
pub(crate) fn resolver(index: Arc<SourceIndex>) -> Arc<dyn Resolver> {
    Arc::new(SourcesResolver(index))
}

struct SourcesResolver(Arc<SourceIndex>);

impl Resolver for SourcesResolver {
    fn resolve(&self, written: &str, sandbox: &Sandbox) -> Resolution {
        // Without the closest name of a miss: only a "did you mean" asks for it.
        match self.0.find(written, sandbox) {
            Lookup::Found { path, .. } => match sandbox.resolve(&path, None) {
                Ok(location) => Resolution::Found(location),
                Err(err) if err.code() == Code::NotFound => Resolution::NotFound,
                Err(err) => Resolution::Refused(err),
            },
            Lookup::Ambiguous(candidates) => {
                let shown: Vec<String> = candidates.iter().map(ToString::to_string).collect();
                Resolution::Ambiguous(numbered(&shown))
            }
            _ => Resolution::NotFound,
        }
    }

    fn closest(&self, written: &str, sandbox: &Sandbox) -> Option<String> {
        match self.0.lookup(written, sandbox) {
            Lookup::NotFound(closest) => closest.map(|c| c.to_string()),
            _ => None,
        }
    }
}

/// Candidates numbered from 1, so that a model (or a person) can name the one it means.
fn numbered(candidates: &[String]) -> Vec<String> {
    candidates.iter().enumerate().map(|(i, c)| format!("{}) {c}", i + 1)).collect()
}
