//! Token counts kept between runs ([`KeptCounts`]): the table of `ctx_tokens::KnownCounts`,
//! stored in ctx's cache folder as `token-counts`, mapped at the start of a run and written
//! again at its end when the run counted texts the table did not hold.
//!
//! The table is read through the store's rules (no link followed, a regular file only, at
//! most the bytes of a full table); a table that does not hold together is no table, and the
//! run counts everything. Two runs at once store one after the other under the store's lock,
//! each merging its counts with the table the other stored.

use std::sync::Arc;

use cap_std::AmbientAuthority;
use ctx_tokens::KnownCounts;

/// The entry of the table in the store.
pub(crate) const COUNTS_FILE: &str = "token-counts";

/// The counts of a run and the folder they are kept in.
pub(crate) struct KeptCounts {
    dir: camino::Utf8PathBuf,
    authority: AmbientAuthority,
    pub(crate) known: Arc<KnownCounts>,
}

impl std::fmt::Debug for KeptCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptCounts").field("dir", &self.dir).field("known", &self.known).finish()
    }
}

/// A table as stored: mapped on Unix, read elsewhere (see `ctx_fs::Mapped`).
enum Stored {
    #[cfg(unix)]
    Mapped(ctx_fs::Mapped),
    #[cfg_attr(unix, allow(dead_code))]
    Read(Vec<u8>),
}

impl AsRef<[u8]> for Stored {
    fn as_ref(&self) -> &[u8] {
        match self {
            #[cfg(unix)]
            Stored::Mapped(mapped) => mapped,
            Stored::Read(bytes) => bytes,
        }
    }
}

/// The table stored in `store`, when there is one no longer than a full table. On Unix it is
/// mapped (its length checked on the opened file first); elsewhere it is read, up to that
/// length.
fn stored_table(store: &ctx_fs::Store) -> Option<Stored> {
    let cap = ctx_tokens::known::MAX_STORED_BYTES as u64;
    #[cfg(unix)]
    {
        let mapped = store.map(COUNTS_FILE).ok().flatten()?;
        (mapped.len() as u64 <= cap).then_some(Stored::Mapped(mapped))
    }
    #[cfg(not(unix))]
    {
        store.read_up_to(COUNTS_FILE, cap).ok().flatten().map(Stored::Read)
    }
}

impl KeptCounts {
    /// The counts kept in `dir`: none yet when it holds no table (or none that holds
    /// together); the folder is not created until counts are stored.
    pub(crate) fn open(dir: &camino::Utf8Path, authority: AmbientAuthority) -> KeptCounts {
        let stored = ctx_fs::Store::open_existing(dir, authority)
            .ok()
            .flatten()
            .and_then(|store| stored_table(&store));
        let known = match stored {
            Some(stored) => KnownCounts::from_stored(stored),
            None => KnownCounts::new(),
        };
        KeptCounts { dir: dir.to_owned(), authority, known: Arc::new(known) }
    }

    /// Stores the table when the run counted texts not stored yet, merged with the table
    /// stored now (another run may have stored its own since this one read it).
    pub(crate) fn keep(&self) -> Result<(), ctx_fs::Error> {
        if !self.known.changed() {
            return Ok(());
        }
        let store = ctx_fs::Store::open(self.dir.clone(), self.authority)?;
        let _lock = store.lock(COUNTS_FILE)?;
        let current = stored_table(&store);
        let bytes = self.known.merged_bytes(current.as_ref().map_or(&[], AsRef::as_ref));
        drop(current);
        store.write(COUNTS_FILE, &bytes)?;
        self.known.mark_stored();
        Ok(())
    }
}
