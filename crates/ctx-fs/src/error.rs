//! The sandbox's typed error, one [`ErrorKind`] per stable diagnostic code.

use std::fmt;
use std::io;

use ctx_diagnostics::Code;

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
    /// The operating system refused access to the entry (permission denied
    /// on a file or a directory). Code `E_PERMISSION`.
    Permission,
    /// The file is larger than the size cap. Code `E_TOO_LARGE`.
    TooLarge,
    /// A sandbox setting is invalid, such as a deny glob that does not
    /// parse or a root that cannot be opened. Code `E_CONFIG`.
    Config,
    /// Any other input/output error inside a root. Code `E_IO`.
    Io,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::Outside,
        ErrorKind::Denied,
        ErrorKind::NotRegular,
        ErrorKind::BadPath,
        ErrorKind::NotFound,
        ErrorKind::Permission,
        ErrorKind::TooLarge,
        ErrorKind::Config,
        ErrorKind::Io,
    ];

    /// The stable diagnostic code of this kind, as in assembly.md §3.
    pub fn code(self) -> Code {
        match self {
            ErrorKind::Outside => Code::Outside,
            ErrorKind::Denied => Code::Denied,
            ErrorKind::NotRegular => Code::NotRegular,
            ErrorKind::BadPath => Code::BadPath,
            ErrorKind::NotFound => Code::NotFound,
            ErrorKind::Permission => Code::Permission,
            ErrorKind::TooLarge => Code::TooLarge,
            ErrorKind::Config => Code::Config,
            ErrorKind::Io => Code::Io,
        }
    }

    fn what(self) -> &'static str {
        match self {
            ErrorKind::Outside => "path is outside the allowed roots",
            ErrorKind::Denied => "access denied",
            ErrorKind::NotRegular => "not a regular file",
            ErrorKind::BadPath => "invalid path",
            ErrorKind::NotFound => "no such file or directory",
            ErrorKind::Permission => "permission denied",
            ErrorKind::TooLarge => "file too large",
            ErrorKind::Config => "invalid sandbox setting",
            ErrorKind::Io => "i/o error",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code().as_str())
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
    /// [`ErrorKind::NotFound`], refused access [`ErrorKind::Permission`], everything else
    /// [`ErrorKind::Io`]. The operating system's message is kept as the detail; it names no
    /// path (the path shown is the one written).
    pub(crate) fn io(written: &str, err: io::Error) -> Error {
        if is_not_found(&err) {
            return Error::new(ErrorKind::NotFound, written);
        }
        let kind = if err.kind() == io::ErrorKind::PermissionDenied {
            ErrorKind::Permission
        } else {
            ErrorKind::Io
        };
        let mut detail = lower_first(&os_message(&err));
        // "permission denied: x (os error 13)", not the kind's words twice.
        if kind == ErrorKind::Permission
            && let Some(rest) = detail.strip_prefix("permission denied (")
        {
            detail = rest.trim_end_matches(')').to_owned();
        }
        Error::new(kind, written).with_detail(detail).with_source(err)
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable diagnostic code, shorthand for `self.kind().code()`.
    pub fn code(&self) -> Code {
        self.kind.code()
    }

    /// The I/O error behind this one, if any.
    pub fn io_error(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }

    /// The path as the user wrote it, with control and invisible characters
    /// escaped.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// The characters of a path a message shows: a longer one (a 60 000-byte path of a hostile
/// document) is cut, and says how much is left out.
const SHOWN_PATH_CHARS: usize = 256;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.path.char_indices().nth(SHOWN_PATH_CHARS) {
            Some((cut, _)) => {
                let more = self.path.len() - cut;
                write!(f, "{}: {}… ({more} more bytes)", self.kind.what(), &self.path[..cut])?;
            }
            None => write!(f, "{}: {}", self.kind.what(), self.path)?,
        }
        if let Some(detail) = &self.detail {
            write!(f, " ({detail})")?;
        }
        Ok(())
    }
}

/// The operating system's message is part of the error's own message, so the I/O error is
/// not its source too (a report walking the chain would say it twice); [`Error::io_error`]
/// gives it.
impl std::error::Error for Error {}

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

/// The operating system's message without any path: `io::Error`'s own text for an OS error
/// is "Permission denied (os error 13)", which names nothing outside the roots; a custom error
/// (which could carry a path) is reduced to its kind.
fn os_message(err: &io::Error) -> String {
    if err.raw_os_error().is_some() { err.to_string() } else { err.kind().to_string() }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The attack: a path of 60 000 bytes that the sandbox refuses. What must not happen: a
    /// message of 60 000 bytes on every surface that shows it; it is cut, and says so.
    #[test]
    fn a_long_path_is_cut_in_its_message() {
        let long = "a".repeat(60_000);
        let message = Error::new(ErrorKind::BadPath, &long).to_string();
        assert!(message.len() < 400, "{}", message.len());
        assert!(message.ends_with(&format!("… ({} more bytes)", 60_000 - SHOWN_PATH_CHARS)));
        let short = Error::new(ErrorKind::NotFound, "src/a.rs").to_string();
        assert!(short.ends_with(": src/a.rs"), "{short}");
    }
}
