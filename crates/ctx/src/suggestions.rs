//! [`Context::suggest`]: the files and line ranges that matter for a prompt, from an index
//! kept in memory and, with [`ContextBuilder::cache_dir`](crate::ContextBuilder::cache_dir),
//! on disk between runs.

use std::sync::Arc;

use ctx_fs::Store;
use ctx_suggest::{Index, Suggestion, UpdateStats};

use crate::context::Context;
use crate::error::{Error, ErrorKind};
use crate::suggest_state::State;

/// The options of [`Context::suggest`]: limit, range cap, token budget, explanations and
/// weights.
pub type SuggestOptions = ctx_suggest::Options;

/// The folder of the sockets of the services that keep indexes current (`ctx index --watch`),
/// created (mode 0700) if missing and checked: see [`ctx_fs::SocketDir`]. Unix only.
///
/// # Ambient Authority
///
/// This names `dir` by path, using the process's ambient authority once.
///
/// # Errors
///
/// When the folder cannot be made, or is not the user's own and closed to others.
#[cfg(unix)]
#[allow(clippy::disallowed_methods)] // The one folder of the sockets, named by the caller.
pub fn socket_dir(dir: impl AsRef<std::path::Path>) -> Result<ctx_fs::SocketDir, Error> {
    let dir = dir.as_ref();
    let path = dir.to_str().ok_or_else(|| ErrorKind::NotUtf8(dir.to_path_buf()))?;
    Ok(ctx_fs::SocketDir::open(path, cap_std::ambient_authority()).map_err(ErrorKind::Fs)?)
}

impl Context {
    /// The same context with its suggestion index stored in `dir` between runs (as
    /// [`ContextBuilder::cache_dir`](crate::ContextBuilder::cache_dir) does), the folder
    /// created if missing; nothing else is opened again. The index starts anew: it is loaded
    /// from the store when first asked for.
    ///
    /// # Ambient Authority
    ///
    /// This opens `dir` by path, using the process's ambient authority once.
    ///
    /// # Errors
    ///
    /// When the folder cannot be created or opened, or its path is not UTF-8.
    #[allow(clippy::disallowed_methods)] // The one folder of the index, named by the caller.
    pub fn with_index_store(&self, dir: impl AsRef<std::path::Path>) -> Result<Context, Error> {
        let dir = dir.as_ref();
        let path = dir.to_str().ok_or_else(|| ErrorKind::NotUtf8(dir.to_path_buf()))?;
        let store = Store::open(path, cap_std::ambient_authority()).map_err(ErrorKind::Fs)?;
        let mut this = self.clone();
        this.suggest = State::new(Some(Arc::new(store)), self.suggest.settings);
        Ok(this)
    }

    /// The same context with its suggestion index kept in memory only: for a run whose
    /// store cannot be used, which ranks all the same.
    pub fn without_index_store(&self) -> Context {
        let mut this = self.clone();
        this.suggest = State::new(None, self.suggest.settings);
        this
    }

    /// Builds or updates the suggestion index of the workspace: loads the stored one (when
    /// the context has a cache directory), reads the files that changed since, and stores it
    /// again. Later calls on the same context only look for changes.
    ///
    /// # Errors
    ///
    /// When the workspace cannot be walked or the store cannot be used.
    pub fn update_index(&self) -> Result<UpdateStats, Error> {
        let mut slot = self.suggest.index.lock().unwrap_or_else(|e| e.into_inner());
        self.refresh(&mut slot)
    }

    /// [`Context::update_index`], then `f` on the updated index, with one walk of the
    /// workspace.
    ///
    /// # Errors
    ///
    /// As [`Context::update_index`].
    pub fn update_index_with<T>(
        &self,
        f: impl FnOnce(&Index) -> T,
    ) -> Result<(UpdateStats, T), Error> {
        let mut slot = self.suggest.index.lock().unwrap_or_else(|e| e.into_inner());
        let stats = self.refresh(&mut slot)?;
        Ok((stats, f(slot.as_ref().expect("refresh leaves an index"))))
    }

    fn refresh(&self, slot: &mut Option<Index>) -> Result<UpdateStats, Error> {
        let sandbox = self.sandbox();
        let stats = match (slot.as_mut(), &self.suggest.store) {
            (Some(index), _) => {
                let mut stats = index.refresh(sandbox).map_err(ErrorKind::Suggest)?;
                self.save_changed(index, &mut stats)?;
                stats
            }
            (None, Some(store)) => {
                let (index, stats, ()) =
                    Index::open_with(sandbox, store, self.suggest.settings, |_| ())
                        .map_err(ErrorKind::Suggest)?;
                *slot = Some(index);
                stats
            }
            (None, None) => {
                let (index, stats) = Index::build_with(sandbox, self.suggest.settings)
                    .map_err(ErrorKind::Suggest)?;
                *slot = Some(index);
                stats
            }
        };
        Ok(stats)
    }

    /// Runs `f` on the up-to-date index.
    ///
    /// # Errors
    ///
    /// As [`Context::update_index`].
    pub fn with_index<T>(&self, f: impl FnOnce(&Index) -> T) -> Result<T, Error> {
        let mut slot = self.suggest.index.lock().unwrap_or_else(|e| e.into_inner());
        self.refresh(&mut slot)?;
        Ok(f(slot.as_ref().expect("refresh leaves an index")))
    }

    /// The files and line ranges that matter for `prompt`, best first (see
    /// `docs/suggest.md`). The index is brought up to date first.
    ///
    /// # Errors
    ///
    /// As [`Context::update_index`].
    pub fn suggest(&self, prompt: &str, opts: &SuggestOptions) -> Result<Vec<Suggestion>, Error> {
        let sandbox = self.sandbox();
        self.ask(|index: &Index| index.suggest(sandbox, prompt, opts))
    }

    /// Brings the index held in memory up to date after changes at `changed` (paths relative
    /// to the workspace's root, as a watch of the sandbox reports them), listing only their
    /// folders ([`Index::refresh_paths`]); the stored index is not written (see
    /// [`Context::save_index`]). `Ok(None)` when no index is held yet or only a walk of the
    /// whole workspace can tell ([`Context::update_index`] then).
    ///
    /// # Errors
    ///
    /// When a folder cannot be listed.
    pub fn update_index_paths(&self, changed: &[&str]) -> Result<Option<UpdateStats>, Error> {
        let mut slot = self.suggest.index.lock().unwrap_or_else(|e| e.into_inner());
        let Some(index) = slot.as_mut() else { return Ok(None) };
        Ok(index.refresh_paths(self.sandbox(), changed).map_err(ErrorKind::Suggest)?)
    }

    /// Stores the index held in memory when the context has a store and holds an index: what
    /// changed since it was last stored as one segment appended to the stored file, or the
    /// whole index when that cannot be ([`Index::store`]); returns the stored file's size (0
    /// when nothing was stored).
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    pub fn save_index(&self) -> Result<u64, Error> {
        let mut slot = self.suggest.index.lock().unwrap_or_else(|e| e.into_inner());
        match (slot.as_mut(), &self.suggest.store) {
            (Some(index), Some(store)) => Ok(index.store(store).map_err(ErrorKind::Suggest)?),
            _ => Ok(0),
        }
    }

    /// [`Context::save_index`] when what changed can be appended as a segment; `Ok(None)`,
    /// nothing written, when only a write of the whole index would store it
    /// ([`Index::store_appending`]).
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    pub fn save_index_appending(&self) -> Result<Option<u64>, Error> {
        let mut slot = self.suggest.index.lock().unwrap_or_else(|e| e.into_inner());
        match (slot.as_mut(), &self.suggest.store) {
            (Some(index), Some(store)) => {
                Ok(index.store_appending(store).map_err(ErrorKind::Suggest)?)
            }
            _ => Ok(Some(0)),
        }
    }

    /// `f` on the index held in memory as it is: no walk looks for changes first, so the
    /// caller vouches that the workspace did not change since the index was last brought up to
    /// date (a process that watches it, after [`Context::update_index`]). `None` when no
    /// index is held yet.
    pub fn with_index_as_is<T>(&self, f: impl FnOnce(&Index) -> T) -> Option<T> {
        let slot = self.suggest.index.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref().map(f)
    }

    /// `ask` of the index, brought up to date while it answers (the stored index on the
    /// first query of a context, the one in memory after).
    pub(crate) fn ask<T: Send>(&self, ask: impl Fn(&Index) -> T + Sync) -> Result<T, Error> {
        let sandbox = self.sandbox();
        let mut slot = self.suggest.index.lock().unwrap_or_else(|e| e.into_inner());
        if let (None, Some(store)) = (slot.as_ref(), &self.suggest.store) {
            // The first query of a context asks the stored index while the workspace is
            // walked for changes.
            let (index, _, found) = Index::open_with(sandbox, store, self.suggest.settings, ask)
                .map_err(ErrorKind::Suggest)?;
            *slot = Some(index);
            return Ok(found);
        }
        let Some(index) = slot.as_mut() else {
            self.refresh(&mut slot)?;
            return Ok(ask(slot.as_ref().expect("refresh leaves an index")));
        };
        // Later queries ask the index in memory while the workspace is walked for changes.
        let (mut stats, found) = index.refresh_with(sandbox, ask).map_err(ErrorKind::Suggest)?;
        self.save_changed(index, &mut stats)?;
        Ok(found)
    }

    /// Saves `index` in the context's store, when it has one and the update behind `stats`
    /// changed anything.
    fn save_changed(&self, index: &mut Index, stats: &mut UpdateStats) -> Result<(), Error> {
        if let Some(store) = &self.suggest.store
            && (stats.indexed > 0 || stats.removed > 0)
        {
            stats.bytes = index.store(store).map_err(ErrorKind::Suggest)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // Tests set up and inspect real directories.
mod tests {
    use super::*;

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/retry.rs"),
            "/// Retries until the deadline.\npub fn retry_with_timeout() {}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "fn main() { parse_args(); }\n").unwrap();
        dir
    }

    /// A context of `dir` keeping its index in memory only, and one storing it in `cache`.
    fn contexts(dir: &tempfile::TempDir, cache: &tempfile::TempDir) -> (Context, Context) {
        let plain = Context::builder().root(dir.path()).build().unwrap();
        let stored = Context::builder().root(dir.path()).cache_dir(cache.path()).build().unwrap();
        (plain, stored)
    }

    #[test]
    fn a_context_sees_changes_between_its_queries() {
        let dir = workspace();
        let cache = tempfile::tempdir().unwrap();
        let (plain, stored) = contexts(&dir, &cache);
        let opts = SuggestOptions::default();
        for ctx in [&plain, &stored] {
            assert!(
                ctx.suggest("parse_args", &opts).unwrap().iter().all(|s| s.path != "src/args.rs")
            );
        }
        std::fs::write(dir.path().join("src/args.rs"), "pub fn parse_args() {}\n").unwrap();
        for ctx in [&plain, &stored] {
            let found = ctx.suggest("parse_args", &opts).unwrap();
            assert_eq!(found[0].path, "src/args.rs");
            // Nothing changed since: the same answer, from the index in memory.
            assert_eq!(ctx.suggest("parse_args", &opts).unwrap(), found);
        }
        // The context with a store saved the update.
        let fresh = Context::builder().root(dir.path()).cache_dir(cache.path()).build().unwrap();
        assert_eq!(fresh.update_index().unwrap().indexed, 0);
    }

    #[test]
    fn suggests_in_memory_and_from_a_store() {
        let dir = workspace();
        let cache = tempfile::tempdir().unwrap();
        let (plain, stored) = contexts(&dir, &cache);
        let opts = SuggestOptions::default();
        for ctx in [&plain, &stored] {
            let found = ctx.suggest("fix the retry timeout", &opts).unwrap();
            assert_eq!(found[0].path, "src/retry.rs");
        }
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 2, "index and lock file");
        let again = stored.update_index().unwrap();
        assert_eq!((again.indexed, again.reused), (0, 2));
        let (stats, files) = stored.update_index_with(Index::len).unwrap();
        assert_eq!((stats.files, files), (2, 2));
    }

    #[test]
    fn a_store_is_added_and_taken_away() {
        let dir = workspace();
        let cache = tempfile::tempdir().unwrap();
        let plain = Context::builder().root(dir.path()).build().unwrap();
        let stored = plain.with_index_store(cache.path().join("index")).unwrap();
        let opts = SuggestOptions::default();
        assert_eq!(stored.suggest("retry timeout", &opts).unwrap()[0].path, "src/retry.rs");
        assert!(cache.path().join("index").is_dir(), "created");
        let again = plain.with_index_store(cache.path().join("index")).unwrap();
        assert_eq!(again.update_index().unwrap().indexed, 0, "loaded from the store");
        // A folder that cannot be made (under a file) is an error; without a store, the same
        // context ranks in memory.
        std::fs::write(cache.path().join("file"), "x").unwrap();
        assert!(plain.with_index_store(cache.path().join("file/index")).is_err());
        let memory = again.without_index_store();
        assert_eq!(memory.suggest("retry timeout", &opts).unwrap()[0].path, "src/retry.rs");
        assert_eq!(std::fs::read_dir(cache.path().join("index")).unwrap().count(), 2);
    }

    #[tokio::test]
    async fn suggests_async() {
        let dir = workspace();
        let ctx = Context::builder().root(dir.path()).build().unwrap();
        let found = ctx.suggest_async("retry_with_timeout", &SuggestOptions::default()).await;
        assert_eq!(found.unwrap()[0].path, "src/retry.rs");
    }
}
