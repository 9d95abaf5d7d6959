//! The error of index and suggestion calls.

use std::fmt;

/// An error from building, loading or storing an index.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    source: ctx_fs::Error,
}

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The workspace could not be walked.
    Walk,
    /// The index store could not be read, written or locked.
    Store,
}

/// A shorthand for results with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn new(kind: ErrorKind, source: ctx_fs::Error) -> Error {
        Error { kind, source }
    }

    /// An error of the index store.
    pub(crate) fn store(e: ctx_fs::Error) -> Error {
        Error::new(ErrorKind::Store, e)
    }

    /// An error of the walk of the workspace.
    pub(crate) fn fs(e: ctx_fs::Error) -> Error {
        Error::new(ErrorKind::Walk, e)
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable code of the underlying sandbox error (`E_IO`, …).
    pub fn code(&self) -> ctx_diagnostics::Code {
        self.source.code()
    }

    /// The sandbox error underneath.
    pub fn fs_error(&self) -> &ctx_fs::Error {
        &self.source
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Walk => "cannot walk the workspace",
            ErrorKind::Store => "cannot use the index store",
        };
        write!(f, "{what}: {}", self.source)
    }
}

/// The sandbox error's message is part of this one's, so it is not its source too (a report
/// that walks the chain would say it twice); [`Error::fs_error`] gives it.
impl std::error::Error for Error {}
