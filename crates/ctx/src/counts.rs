//! Token counts kept between runs ([`KeptCounts`]): the table of `ctx_tokens::KnownCounts`,
//! stored in ctx's cache folder as `token-counts`, mapped at the start of a run and written
//! again at its end when the run counted texts the table did not hold.
//!
//! The table is read through the store's rules (no link followed, a regular file only); a
//! table that does not hold together is no table, and the run counts everything. Two runs at
//! once each store what they hold, one after the other under the store's lock: the last one
//! wins, and what it did not hold is only counted again by a later run.

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

/// A mapped table, handed to the counts as their bytes.
struct Stored(ctx_fs::Mapped);

impl AsRef<[u8]> for Stored {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl KeptCounts {
    /// The counts kept in `dir`: none yet when it holds no table (or none that holds
    /// together); the folder is not created until counts are stored.
    pub(crate) fn open(dir: &camino::Utf8Path, authority: AmbientAuthority) -> KeptCounts {
        let stored = ctx_fs::Store::open_existing(dir, authority)
            .ok()
            .flatten()
            .and_then(|store| store.map(COUNTS_FILE).ok().flatten());
        let known = match stored {
            Some(mapped) => KnownCounts::from_stored(Stored(mapped)),
            None => KnownCounts::new(),
        };
        KeptCounts { dir: dir.to_owned(), authority, known: Arc::new(known) }
    }

    /// Stores the table when the run counted texts it did not hold.
    pub(crate) fn keep(&self) -> Result<(), ctx_fs::Error> {
        if !self.known.changed() {
            return Ok(());
        }
        let store = ctx_fs::Store::open(self.dir.clone(), self.authority)?;
        let _lock = store.lock(COUNTS_FILE)?;
        store.write(COUNTS_FILE, &self.known.to_bytes())
    }
}
