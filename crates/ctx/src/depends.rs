//! What an assembly depends on: the document, every file and directory its references read,
//! and the directories where a reference found nothing (so that creating the file counts as a
//! change). `ctx assemble --watch` re-runs when one of them changes.

use std::collections::{BTreeSet, HashMap};

use ctx_assemble::record::{Kind, ReferenceRecord};
use ctx_fs::Location;

use crate::Context;

/// The locations an assembly read, or would read if they appeared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// Files and directories read.
    read: BTreeSet<Location>,
    /// Directories any change below which may change the assembly (directory and glob
    /// expansions, references that found nothing, tool calls).
    below: BTreeSet<Location>,
}

impl Dependencies {
    /// Every location depended on, sorted.
    pub fn locations(&self) -> impl Iterator<Item = &Location> {
        self.read.union(&self.below)
    }

    /// Adds the dependencies of another assembly (`ctx check` of several documents).
    pub fn extend(&mut self, other: Dependencies) {
        self.read.extend(other.read);
        self.below.extend(other.below);
    }

    /// Whether a change of these locations may change the assembly: one of them is a
    /// dependency, contains one (a directory deleted, created again or renamed), or lies
    /// below a directory the assembly expanded or looked in.
    pub fn affected_by(&self, changed: &[Location]) -> bool {
        changed.iter().any(|c| {
            self.read.contains(c)
                || self.locations().any(|d| contains(c, d))
                || self.below.iter().any(|d| contains(d, c))
        })
    }
}

/// Whether `inner` is `outer` or below it.
fn contains(outer: &Location, inner: &Location) -> bool {
    outer.root() == inner.root() && inner.path().starts_with(outer.path())
}

impl Context {
    /// The dependencies of an assembly of the document at `document` (`None` for a text
    /// that is not a file), from its reference records (`&assembly.references`; none when
    /// the document could not be read, which then depends on its root).
    pub fn dependencies<'a>(
        &self,
        document: Option<&'a str>,
        references: &'a [ReferenceRecord],
    ) -> Dependencies {
        let sandbox = self.sandbox();
        // Each path is resolved once: a document of thousands of references to one file (or
        // of failed ones, which all name the document) would resolve it thousands of times.
        let mut resolved: HashMap<&str, Option<Location>> = HashMap::new();
        let mut resolve = |path: &'a str| {
            resolved.entry(path).or_insert_with(|| sandbox.resolve_in_workspace(path).ok()).clone()
        };
        let mut deps = Dependencies::default();
        match document.and_then(&mut resolve) {
            Some(location) => {
                deps.read.insert(location);
            }
            None => {
                deps.below.insert(sandbox.workspace());
            }
        }
        for record in references {
            let found = (record.error.is_none()).then(|| resolve(&record.path)).flatten();
            match (found, record.kind) {
                (Some(location), Kind::File) => {
                    deps.read.insert(location);
                }
                (Some(location), Kind::Directory) => {
                    deps.below.insert(location);
                }
                _ => {
                    // A glob, a tool call or a reference that found nothing: any change next
                    // to the document that holds it may matter.
                    let holder = resolve(&record.at.file)
                        .and_then(|l| l.parent())
                        .unwrap_or_else(|| sandbox.workspace());
                    deps.below.insert(holder);
                }
            }
        }
        deps
    }

    /// Starts watching every root for changes (see [`ctx_fs::Sandbox::watch`]).
    ///
    /// # Errors
    ///
    /// When a root cannot be watched.
    #[cfg(feature = "watch")]
    pub fn watch(&self, debounce: std::time::Duration) -> Result<ctx_fs::Watcher, crate::Error> {
        self.sandbox().watch(debounce).map_err(|e| crate::Error::from(crate::ErrorKind::Fs(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_depends_on_what_it_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("main.md"), "@[docs/a.md] @[docs/] @[gone.md]").unwrap();
        std::fs::write(dir.path().join("docs/a.md"), "a").unwrap();
        std::fs::write(dir.path().join("other.md"), "o").unwrap();
        let ctx = Context::builder().root(dir.path()).build().unwrap();
        let assembly = ctx.assemble_file("main.md").unwrap();
        let deps = ctx.dependencies(Some("main.md"), &assembly.references);
        let at = |p: &str| ctx.sandbox().resolve_in_workspace(p).unwrap();
        assert!(deps.affected_by(&[at("main.md")]));
        assert!(deps.affected_by(&[at("docs/a.md")]));
        assert!(deps.affected_by(&[at("docs")]));
        // `gone.md` found nothing: a change next to main.md counts.
        assert!(deps.affected_by(&[at("other.md")]));
        let nested = Context::builder().root(dir.path()).build().unwrap();
        let only = nested.assemble_file("docs/a.md").unwrap();
        let deps = nested.dependencies(Some("docs/a.md"), &only.references);
        assert!(!deps.affected_by(&[at("other.md")]));
        assert!(deps.affected_by(&[at("docs")]), "its directory was replaced");
    }
}
