//! The sandbox's typed error, one [`ErrorKind`] per stable diagnostic code.

use std::fmt;
use std::io;

/// An error from the sandbox.
///
/// It names the path as the user wrote it (control characters escaped) and
/// never anything about what lies outside the allowed roots: a refusal to
/// leave a root has the same kind and message whether or not the outside
/// file exists.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    path: String,
    detail: Option<String>,
    source: Option<io::Error>,
}

/// What went wrong; each kind maps to exactly one stable code (see
/// [`ErrorKind::code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The path leaves every allowed root: `..` climbing out, an absolute path
    /// elsewhere, or a symbolic link whose target leaves its root (absolute
    /// link targets included). Code `E_OUTSIDE`.
    Outside,
    /// The path names a denied entry (`.git`, `.env`, credential stores,
    /// private keys or a configured deny glob), either as written or once
    /// symbolic links inside the root are resolved. Code `E_DENIED`.
    Denied,
    /// The entry is a FIFO, socket, device or directory where a regular file
    /// was needed. Code `E_NOT_REGULAR`.
    NotRegular,
    /// The path is malformed or means something else on some platform:
    /// control characters, default-ignorable code points, over-long paths
    /// or names, Windows device names, drive-relative, UNC or stream paths.
    /// Code `E_BAD_PATH`.
    BadPath,
    /// Nothing is there: a missing file, a dangling symbolic link, or a
    /// chain of links that loops (reported with its own message). Code
    /// `E_NOT_FOUND`.
    NotFound,
    /// The file is larger than the size cap. Code `E_TOO_LARGE`.
    TooLarge,
    /// A sandbox setting is invalid, such as a deny glob that does not
    /// parse or a root that cannot be opened. Code `E_CONFIG`.
    Config,
    /// Any other input/output error inside a root. Code `E_IO`.
    Io,
}

impl ErrorKind {
    /// The stable diagnostic code of this kind, as in assembly.md §3.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Outside => "E_OUTSIDE",
            ErrorKind::Denied => "E_DENIED",
            ErrorKind::NotRegular => "E_NOT_REGULAR",
            ErrorKind::BadPath => "E_BAD_PATH",
            ErrorKind::NotFound => "E_NOT_FOUND",
            ErrorKind::TooLarge => "E_TOO_LARGE",
            ErrorKind::Config => "E_CONFIG",
            ErrorKind::Io => "E_IO",
        }
    }

    fn what(self) -> &'static str {
        match self {
            ErrorKind::Outside => "path is outside the allowed roots",
            ErrorKind::Denied => "access denied",
            ErrorKind::NotRegular => "not a regular file",
            ErrorKind::BadPath => "invalid path",
            ErrorKind::NotFound => "no such file or directory",
            ErrorKind::TooLarge => "file too large",
            ErrorKind::Config => "invalid sandbox setting",
            ErrorKind::Io => "i/o error",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, written: &str) -> Error {
        Error { kind, path: escape(written), detail: None, source: None }
    }

    pub(crate) fn with_detail(mut self, detail: impl Into<String>) -> Error {
        self.detail = Some(detail.into());
        self
    }

    pub(crate) fn with_source(mut self, source: io::Error) -> Error {
        self.source = Some(source);
        self
    }

    /// The same error, naming `written` instead.
    pub(crate) fn renamed(mut self, written: &str) -> Error {
        self.path = escape(written);
        self
    }

    /// Maps an I/O error met inside a root: not-found errors become
    /// [`ErrorKind::NotFound`], everything else [`ErrorKind::Io`].
    pub(crate) fn io(written: &str, err: io::Error) -> Error {
        if is_not_found(&err) {
            Error::new(ErrorKind::NotFound, written)
        } else {
            let detail = lower_first(&err.to_string());
            Error::new(ErrorKind::Io, written).with_detail(detail).with_source(err)
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable diagnostic code, shorthand for `self.kind().code()`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The path as the user wrote it, with control and invisible characters
    /// escaped.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.what(), self.path)?;
        if let Some(detail) = &self.detail {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

/// A shorthand for results with the sandbox's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn is_not_found(err: &io::Error) -> bool {
    if err.kind() == io::ErrorKind::NotFound {
        return true;
    }
    #[cfg(unix)]
    if let Some(code) = err.raw_os_error() {
        return code == rustix::io::Errno::NOTDIR.raw_os_error()
            || code == rustix::io::Errno::NAMETOOLONG.raw_os_error();
    }
    false
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Escapes control characters and default-ignorable code points so that a
/// message shows exactly what was written.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if crate::path::is_control(c) || crate::path::is_default_ignorable(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}
