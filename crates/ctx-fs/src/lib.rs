//! The ctx capability sandbox: every byte ctx reads goes through it.
//!
//! A [`Sandbox`] holds a cap-std directory handle for each allowed root (the
//! workspace root and extra read-only roots) and implements every rule of
//! assembly.md §3, each refusal with its stable code ([`ErrorKind::code`]).
//!
//! # Guarantee
//!
//! Nothing outside the roots is ever opened or read through a sandbox:
//! not by `..`, not by an absolute path, not by a symbolic link in any
//! component (chains included), not by a link swapped in while a read is
//! under way. Paths are resolved one component at a time through directory
//! handles opened without following links; each link is read and its
//! target walked the same way (a `..` in it goes to the parent of the real
//! directories walked so far, as the OS takes it), refused when it is
//! absolute or climbs out of its root; cap-std's own containment checks
//! stand behind every open.
//! A refusal to leave a root reads nothing outside it, so its code and
//! message are the same whether or not the outside file exists.
//!
//! On Linux a path is first tried with one `openat2` call that stays beneath
//! the root and refuses every symbolic link; only paths with links in them
//! (or errors) take the component-by-component walk. Both give the same
//! answers ([`SandboxBuilder::fast_path`]).
//!
//! A cached file whose status-change time had settled when it was read is
//! served again after one `fstatat` of its path, with no open, when the stat
//! shows the very same file (device, inode) in the very same state (length,
//! modification and status-change times); that stat may follow a link
//! swapped in since, but it only looks, and a match means the bytes served
//! are those read safely before (docs/security.md, promise 7).
//!
//! On top of that, the sandbox refuses denied entries (`.git`, `.env*`,
//! credential stores, private keys, configured globs) on the path as
//! written and on the final in-root target, FIFOs, sockets and devices
//! without ever blocking, files over the size cap (checked on the opened
//! handle, reads bounded to cap + 1 bytes), and paths that are malformed
//! or mean something else on Windows (`E_BAD_PATH`, on every platform).
//!
//! # Limits
//!
//! - This is not a sandbox for untrusted code: it confines the paths that
//!   ctx is asked to read, while the process itself keeps its ambient
//!   authority ([`SandboxBuilder::open`] uses it once, to open the roots).
//! - Hard links inside a root are followed like any file.
//! - A symbolic link with an absolute target is refused even when it points
//!   inside the root, as cap-std does.
//! - A root moved elsewhere while a sandbox holds its handle keeps being
//!   read where it now is.
//! - Devices are refused after a non-blocking open, so opening one with
//!   side effects on open could still trigger them; only privileged users
//!   can create device nodes, so this matters only for roots like `/dev`.
//! - Symbolic link loops are reported as `E_NOT_FOUND` ("too many levels of
//!   symbolic links"), as the spec has no code of its own for them.
//!
//! # Content
//!
//! Beside the reads, what their content is and how it may be shown, without I/O, for every
//! crate that shows file text: [`decode()`] tells text from binary and decodes text that is not
//! UTF-8 (UTF-16 with or without a byte order mark, legacy encodings), [`image`] tells the image
//! kinds a model takes by their extension and first bytes, and [`sanitize`] makes hidden and
//! control characters visible.
//!
//! # Example
//!
//! ```no_run
//! use ctx_fs::{Content, Sandbox};
//!
//! let sandbox = Sandbox::builder("/work/project")
//!     .allow("/usr/share/doc")
//!     .deny("secrets/**")
//!     .open(cap_std::ambient_authority())?;
//! let readme = sandbox.resolve("docs/../README.md", None)?;
//! if let Content::Text { text, .. } = sandbox.read_text(&readme)? {
//!     assert!(!text.is_empty());
//! }
//! let walk = sandbox.glob("src/**/*.rs", None)?;
//! for file in walk.files() {
//!     let _ = sandbox.read_text(&file.location)?;
//! }
//! # Ok::<(), ctx_fs::Error>(())
//! ```
#![allow(clippy::disallowed_methods)]

mod builder;
mod cache;
mod decode;
mod deny;
mod error;
pub mod image;
mod listing;
mod location;
mod many;
mod overlay;
mod path;
mod root;
mod root_rule;
mod sandbox;
pub mod sanitize;
mod settings;
#[cfg(unix)]
mod socket;
mod store;
mod stream;
#[cfg(all(unix, feature = "watch"))]
mod sync_watch;
mod text;
mod walk;
mod walk_par;
#[cfg(feature = "watch")]
mod watch;

pub use builder::SandboxBuilder;
pub use cap_std::AmbientAuthority;
pub use ctx_diagnostics::{Code, Severity};
pub use decode::{
    BINARY_SNIFF_BYTES, CONTROL_SHARE, Content, Encoding, Legacy, decode, decode_owned,
};
pub use deny::{builtin_denial, deny_glob_parses};
pub use error::{Error, ErrorKind, Result};
pub use location::{FileKind, Location, RootId, RootKind, Stat};
pub use overlay::Overlay;
pub use path::{MAX_NAME_BYTES, MAX_PATH_BYTES};
pub use root::{RefusedRoot, real_path_of};
pub use root_rule::{RootRefusal, root_refusal};
pub use sandbox::{MAX_SYMLINK_HOPS, Sandbox};
pub use settings::{IgnoreSettings, Limits};
#[cfg(unix)]
pub use socket::{Listener, MAX_SOCKET_PATH, SocketDir};
pub use store::{Mapped, Store, StoreLock, StoreWriter};
pub use stream::{Ended, STREAM_PART_BYTES, Streamed, TextStream};
#[cfg(all(unix, feature = "watch"))]
pub use sync_watch::{Changes, MAX_PENDING_CHANGES, SyncWatcher, Wake};
pub use text::{Text, WeakText};
pub use walk::{COUNT_PAST_LIMIT, SkipReason, Skipped, Walk, WalkEntry, WalkOptions, split_glob};
#[cfg(feature = "watch")]
pub use watch::Watcher;
