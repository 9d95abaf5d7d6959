//! [`Overlay`]: unsaved texts that win over the disk, for editors (a language server's open
//! documents).
//!
//! An overlay never widens what the sandbox reads: a text is served only for a path that
//! passed every check of a disk read (in a root, not denied, a regular file with no link
//! leading out); it replaces only the bytes read.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::Text;
use crate::location::{Location, RootId};

/// Unsaved texts by root and in-root path.
type Texts = HashMap<(RootId, String), Text>;

/// Texts keyed by location, shared between the sandbox and the editor that updates them.
/// Cloning is cheap and clones share the texts.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    texts: Arc<RwLock<Texts>>,
}

impl Overlay {
    /// An empty overlay.
    pub fn new() -> Overlay {
        Overlay::default()
    }

    /// Serves `text` for `location` in place of its bytes on disk.
    pub fn set(&self, location: &Location, text: impl Into<Text>) {
        let key = (location.root(), location.path().as_str().to_owned());
        self.write().insert(key, text.into());
    }

    /// Goes back to the disk for `location`.
    pub fn remove(&self, location: &Location) {
        self.write().remove(&(location.root(), location.path().as_str().to_owned()));
    }

    /// The unsaved text of `location`, if any.
    pub fn get(&self, location: &Location) -> Option<Text> {
        self.lookup(location.root(), location.path().as_str())
    }

    /// Whether no text is held.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    pub(crate) fn lookup(&self, root: RootId, path: &str) -> Option<Text> {
        let texts = self.read();
        if texts.is_empty() {
            return None;
        }
        texts.get(&(root, path.to_owned())).cloned()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Texts> {
        self.texts.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Texts> {
        self.texts.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sandbox;

    fn open(dir: &std::path::Path, overlay: &Overlay) -> Sandbox {
        let root = camino::Utf8PathBuf::try_from(dir.to_path_buf()).unwrap();
        Sandbox::builder(root)
            .deny("secret.md")
            .overlay(overlay.clone())
            .open(cap_std::ambient_authority())
            .unwrap()
    }

    #[test]
    fn unsaved_text_wins_until_removed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "disk\n").unwrap();
        let overlay = Overlay::new();
        let sandbox = open(dir.path(), &overlay);
        let location = sandbox.resolve_in_workspace("a.md").unwrap();
        // Warm the cache with the disk's bytes first: the overlay must still win.
        assert_eq!(&**sandbox.read_text(&location).unwrap().text().unwrap(), "disk\n");
        overlay.set(&location, "unsaved\n");
        assert_eq!(&**sandbox.read_text(&location).unwrap().text().unwrap(), "unsaved\n");
        let (_, content) = sandbox.read_path("a.md", None).unwrap();
        assert_eq!(&**content.text().unwrap(), "unsaved\n");
        overlay.remove(&location);
        assert!(overlay.is_empty());
        assert_eq!(&**sandbox.read_text(&location).unwrap().text().unwrap(), "disk\n");
    }

    #[test]
    fn checks_still_apply() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret.md"), "disk\n").unwrap();
        let overlay = Overlay::new();
        let sandbox = open(dir.path(), &overlay);
        // An overlay entry for a denied path is never served.
        let denied = Location::new(RootId::WORKSPACE, &["secret.md"]);
        overlay.set(&denied, "unsaved\n");
        assert_eq!(sandbox.read_path("secret.md", None).unwrap_err().code(), crate::Code::Denied);
        // Nor for a file that is not on disk.
        let ghost = Location::new(RootId::WORKSPACE, &["ghost.md"]);
        overlay.set(&ghost, "unsaved\n");
        assert!(sandbox.read_text(&ghost).is_err());
    }
}
