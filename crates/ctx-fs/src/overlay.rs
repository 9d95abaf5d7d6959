//! [`Overlay`]: unsaved texts that win over the disk, for editors (a language server's open
//! documents).
//!
//! An overlay never widens what the sandbox reads: a text is served only for a path that
//! passed every check of a disk read (in a root, not denied, a regular file with no link
//! leading out); it replaces only the bytes read.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::location::{Location, RootId};

/// Texts keyed by location, shared between the sandbox and the editor that updates them.
/// Cloning is cheap and clones share the texts.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    texts: Arc<RwLock<HashMap<(RootId, String), Arc<str>>>>,
}

impl Overlay {
    /// An empty overlay.
    pub fn new() -> Overlay {
        Overlay::default()
    }

    /// Serves `text` for `location` in place of its bytes on disk.
    pub fn set(&self, location: &Location, text: impl Into<Arc<str>>) {
        let key = (location.root(), location.path().as_str().to_owned());
        self.write().insert(key, text.into());
    }

    /// Goes back to the disk for `location`.
    pub fn remove(&self, location: &Location) {
        self.write().remove(&(location.root(), location.path().as_str().to_owned()));
    }

    /// The unsaved text of `location`, if any.
    pub fn get(&self, location: &Location) -> Option<Arc<str>> {
        self.lookup(location.root(), location.path().as_str())
    }

    /// Whether no text is held.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    pub(crate) fn lookup(&self, root: RootId, path: &str) -> Option<Arc<str>> {
        let texts = self.read();
        if texts.is_empty() {
            return None;
        }
        texts.get(&(root, path.to_owned())).cloned()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<(RootId, String), Arc<str>>> {
        self.texts.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<(RootId, String), Arc<str>>> {
        self.texts.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
