//! [`Context::resolve`]: how any path resolves, through the workspace, the allowed roots and
//! the source index of an out-of-source build (assembly.md §2).

use ctx_diagnostics::Code;
use ctx_fs::{Location, RootKind, Sandbox};
use ctx_sources::{Candidate, Lookup, SourceIndex};

use crate::context::Context;

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
    /// The candidates of an ambiguous query, or the closest indexed path of a missing one:
    /// each `{"path", "relative", "root"}` in JSON, `relative in root` in text.
    pub candidates: Vec<Candidate>,
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
            Ok(location) => return found(sandbox, query, &location, "workspace"),
            Err(err) => err,
        };
        if missing.code() == Code::NotFound {
            let allowed = sandbox.roots().filter(|&r| sandbox.root_kind(r) == RootKind::Allowed);
            let hits: Vec<Location> = allowed
                .filter_map(|root| sandbox.resolve(query, Some(&Location::root_of(root))).ok())
                .collect();
            match &hits[..] {
                [one] => return found(sandbox, query, one, "workspace"),
                [] => {}
                several => {
                    let mut report =
                        ResolveReport::new(query, ResolveStatus::Ambiguous, Some(Code::Ambiguous));
                    report.candidates = several.iter().map(|l| candidate(sandbox, l)).collect();
                    return report;
                }
            }
        }
        if let (Some(index), Code::NotFound) = (self.source_index(), missing.code()) {
            match index.lookup(query, sandbox) {
                Lookup::Found { path, via } => match sandbox.resolve(&path, None) {
                    Ok(location) => {
                        let mut report = found(sandbox, query, &location, via.name());
                        if report.status == ResolveStatus::File {
                            report.path = Some(path);
                        }
                        return report;
                    }
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

/// The report of a query that resolved to `location` by the rule `via`: a file, or, for a
/// folder or a special file (a FIFO, a socket, a device), refused as not a regular file, as
/// reading it would be.
fn found(sandbox: &Sandbox, query: &str, location: &Location, via: &'static str) -> ResolveReport {
    match sandbox.stat(location) {
        Ok(stat) if stat.kind == ctx_fs::FileKind::File => {
            ResolveReport::file(query, absolute(sandbox, location), via)
        }
        Ok(_) => ResolveReport::new(query, ResolveStatus::Refused, Some(Code::NotRegular)),
        Err(err) => {
            let status = if err.code() == Code::NotFound {
                ResolveStatus::NotFound
            } else {
                ResolveStatus::Refused
            };
            ResolveReport::new(query, status, Some(err.code()))
        }
    }
}

/// The absolute path of a location, `/`-separated.
/// A file of an allowed root as a candidate: its path, and where it lies in that root.
fn candidate(sandbox: &Sandbox, location: &Location) -> Candidate {
    let root = sandbox.root_path(location.root()).as_str();
    Candidate::new(&absolute(sandbox, location), location.path().as_str(), root)
}

fn absolute(sandbox: &Sandbox, location: &Location) -> String {
    let root = sandbox.root_path(location.root()).as_str().trim_end_matches('/');
    if location.path().as_str().is_empty() {
        root.to_owned()
    } else {
        format!("{root}/{}", location.path())
    }
}
