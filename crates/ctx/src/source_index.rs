//! The source index of an out-of-source build in the facade: loading it when the context is
//! built, the resolver that plugs it into assembly (assembly.md §2, rule 5), and
//! [`Context::resolve`], which tells how any path resolves.

use std::sync::Arc;

use ctx_assemble::{Resolution, Resolver};
use ctx_diagnostics::Code;
use ctx_fs::{Location, RootKind, Sandbox, Store};
use ctx_sources::{Lookup, SourceIndex};

use crate::context::{Context, Error, ErrorKind};

/// A source index to use, as the builder was given it.
#[derive(Clone, Debug)]
pub(crate) enum Planned {
    /// Built by the caller.
    Index(Box<SourceIndex>),
    /// Read from this solution or database, relative to the root.
    Solution(String, ctx_sources::Options),
    /// Read from the one solution or database found in the root or its `build/` folder, if
    /// there is exactly one ([`ctx_sources::detect`]).
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
        let (sandbox, path, options, detected) = match self {
            Planned::Index(index) => return Ok((Some(*index), None)),
            Planned::Solution(path, options) => (workspace()?, path, options, false),
            Planned::Detect(options) => {
                let sandbox = workspace()?;
                match ctx_sources::detect(&sandbox) {
                    ctx_sources::Detected::One(path) => (sandbox, path, options, true),
                    _ => return Ok((None, Some(sandbox))),
                }
            }
        };
        let index = match store() {
            Some(store) => SourceIndex::load_cached(&sandbox, &path, &options, &store),
            None => SourceIndex::load(&sandbox, &path, &options),
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
            Lookup::Ambiguous(candidates) => Resolution::Ambiguous(numbered(&candidates)),
            _ => Resolution::NotFound,
        }
    }

    fn closest(&self, written: &str, sandbox: &Sandbox) -> Option<String> {
        match self.0.lookup(written, sandbox) {
            Lookup::NotFound(closest) => closest,
            _ => None,
        }
    }
}

/// Candidates numbered from 1, so that a model (or a person) can name the one it means.
fn numbered(candidates: &[String]) -> Vec<String> {
    candidates.iter().enumerate().map(|(i, c)| format!("{}) {c}", i + 1)).collect()
}

/// How a query resolves ([`Context::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolveStatus {
    /// One file (or folder).
    File,
    /// Several files; see the candidates.
    Ambiguous,
    /// Nothing.
    NotFound,
    /// The sandbox refuses it (a denied name, outside every root, a bad path).
    Refused,
}

impl ResolveStatus {
    /// The name used in JSON: `file`, `ambiguous`, `not_found`, `refused`.
    pub fn name(self) -> &'static str {
        match self {
            ResolveStatus::File => "file",
            ResolveStatus::Ambiguous => "ambiguous",
            ResolveStatus::NotFound => "not_found",
            ResolveStatus::Refused => "refused",
        }
    }
}

/// What [`Context::resolve`] says about one query; serialised as in `ctx resolve --format
/// json` (`status` and `code` by name).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ResolveReport {
    /// The query as given.
    pub query: String,
    /// The outcome.
    #[serde(serialize_with = "status_name")]
    pub status: ResolveStatus,
    /// The file, absolute, when there is one.
    pub path: Option<String>,
    /// The rule that found it: `workspace`, `index`, `source_root` or `file_name`.
    pub via: Option<&'static str>,
    /// The candidates of an ambiguous query, or the closest indexed path of a missing one.
    pub candidates: Vec<String>,
    /// The code of a query that is not one file.
    #[serde(serialize_with = "code_name")]
    pub code: Option<Code>,
}

fn status_name<S: serde::Serializer>(status: &ResolveStatus, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(status.name())
}

fn code_name<S: serde::Serializer>(code: &Option<Code>, s: S) -> Result<S::Ok, S::Error> {
    match code {
        Some(code) => s.serialize_str(code.as_str()),
        None => s.serialize_none(),
    }
}

impl ResolveReport {
    fn new(query: &str, status: ResolveStatus, code: Option<Code>) -> ResolveReport {
        let query = query.to_owned();
        ResolveReport { query, status, path: None, via: None, candidates: Vec::new(), code }
    }

    fn file(query: &str, path: String, via: &'static str) -> ResolveReport {
        ResolveReport {
            path: Some(path),
            via: Some(via),
            ..Self::new(query, ResolveStatus::File, None)
        }
    }
}

impl Context {
    /// The source index of the out-of-source build, when one is loaded.
    pub fn source_index(&self) -> Option<&SourceIndex> {
        self.sources.as_deref()
    }

    /// How `query` resolves from the workspace root: as it is (absolute paths, relative to the
    /// root, then to each `--allow` root), then through the source index (assembly.md §2).
    pub fn resolve(&self, query: &str) -> ResolveReport {
        let sandbox = self.sandbox();
        let mut missing = match sandbox.resolve(query, None) {
            Ok(location) => {
                return ResolveReport::file(query, absolute(sandbox, &location), "workspace");
            }
            Err(err) => err,
        };
        if missing.code() == Code::NotFound {
            let allowed = sandbox.roots().filter(|&r| sandbox.root_kind(r) == RootKind::Allowed);
            let hits: Vec<Location> = allowed
                .filter_map(|root| sandbox.resolve(query, Some(&Location::root_of(root))).ok())
                .collect();
            match &hits[..] {
                [one] => return ResolveReport::file(query, absolute(sandbox, one), "workspace"),
                [] => {}
                several => {
                    let mut report =
                        ResolveReport::new(query, ResolveStatus::Ambiguous, Some(Code::Ambiguous));
                    report.candidates = several.iter().map(|l| absolute(sandbox, l)).collect();
                    return report;
                }
            }
        }
        if let (Some(index), Code::NotFound) = (self.source_index(), missing.code()) {
            match index.lookup(query, sandbox) {
                Lookup::Found { path, via } => match sandbox.resolve(&path, None) {
                    Ok(_) => return ResolveReport::file(query, path, via.name()),
                    Err(err) => missing = err,
                },
                Lookup::Ambiguous(candidates) => {
                    let mut report =
                        ResolveReport::new(query, ResolveStatus::Ambiguous, Some(Code::Ambiguous));
                    report.candidates = candidates;
                    return report;
                }
                Lookup::NotFound(hint) => {
                    let mut report =
                        ResolveReport::new(query, ResolveStatus::NotFound, Some(Code::NotFound));
                    report.candidates = hint.into_iter().collect();
                    return report;
                }
                _ => {}
            }
        }
        let status = if missing.code() == Code::NotFound {
            ResolveStatus::NotFound
        } else {
            ResolveStatus::Refused
        };
        ResolveReport::new(query, status, Some(missing.code()))
    }
}

/// The absolute path of a location, `/`-separated.
fn absolute(sandbox: &Sandbox, location: &Location) -> String {
    let root = sandbox.root_path(location.root()).as_str().trim_end_matches('/');
    if location.path().as_str().is_empty() {
        root.to_owned()
    } else {
        format!("{root}/{}", location.path())
    }
}
