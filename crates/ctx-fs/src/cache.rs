//! The content cache's entries: a file's content with the fingerprint it was read under, so
//! that a hit is served only for the very same file.

use std::time::{Duration, SystemTime};

use crate::decode::Content;

/// A file modified this recently is not cached: a second write within the
/// file system's time granularity could keep length and modification time.
pub(crate) const RACY_WINDOW: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub(crate) struct Cached {
    /// The file as it was opened and checked before it was read.
    pub(crate) print: Fingerprint,
    /// Whether a stat of the path alone may validate this entry (the warm
    /// path): the status-change time was settled too when the file was read.
    pub(crate) warm: bool,
    pub(crate) content: Content,
}

/// What identifies a file and its state: device, inode, length,
/// modification and status-change times on Unix; length and modification
/// time elsewhere. Every write moves the modification and status-change
/// times; no user can set the status-change time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) len: u64,
    pub(crate) modified: (i64, i64),
    pub(crate) changed: (i64, i64),
}

impl Fingerprint {
    #[cfg(unix)]
    pub(crate) fn of(md: &std::fs::Metadata) -> Fingerprint {
        use std::os::unix::fs::MetadataExt;
        Fingerprint {
            dev: md.dev(),
            ino: md.ino(),
            len: md.len(),
            modified: (md.mtime(), md.mtime_nsec()),
            changed: (md.ctime(), md.ctime_nsec()),
        }
    }

    #[cfg(not(unix))]
    pub(crate) fn of(md: &std::fs::Metadata) -> Fingerprint {
        let modified = md
            .modified()
            .ok()
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or((-1, -1), |d| (d.as_secs() as i64, i64::from(d.subsec_nanos())));
        Fingerprint { dev: 0, ino: 0, len: md.len(), modified, changed: (0, 0) }
    }

    /// The fingerprint in a raw `stat` result, whose field types vary by platform.
    #[cfg(unix)]
    #[allow(clippy::unnecessary_cast)]
    pub(crate) fn of_stat(st: &rustix::fs::Stat) -> Fingerprint {
        Fingerprint {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            len: st.st_size as u64,
            modified: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            changed: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }

    /// Whether the status-change time lies at least [`RACY_WINDOW`] before `now`.
    #[cfg(unix)]
    pub(crate) fn change_settled(&self, now: SystemTime) -> bool {
        let (secs, nanos) = self.changed;
        let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else {
            return false;
        };
        let changed = std::time::UNIX_EPOCH + Duration::new(secs, nanos);
        now.duration_since(changed).is_ok_and(|age| age >= RACY_WINDOW)
    }

    /// Without a status-change time a stat alone never validates an entry.
    #[cfg(not(unix))]
    pub(crate) fn change_settled(&self, _now: SystemTime) -> bool {
        false
    }
}
