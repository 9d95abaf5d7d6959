//! What one index build may spend, from its file cap.

/// The work one index build may do, from its file cap: the items read from project files
/// (duplicates included), the bytes of project files read, and the entries its wildcard
/// walks and case corrections list. Each is spent once for the whole index, so that the time
/// and memory of a build grow with the cap, never with what the project files repeat.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub(crate) items: usize,
    pub(crate) bytes: usize,
    pub(crate) walk: usize,
}

impl Bounds {
    pub(crate) fn of(max_files: usize) -> Bounds {
        Bounds {
            items: max_files.saturating_mul(8).max(10_000),
            bytes: max_files.saturating_mul(2048).max(16 << 20),
            walk: max_files.saturating_mul(8).max(10_000),
        }
    }
}
