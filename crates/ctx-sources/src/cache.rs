//! A built index kept in a [`ctx_fs::Store`] between runs, and served again only when it
//! holds together: built for the same solution, workspace and options, from project files
//! that have not changed, and with the source roots that the rule gives for its own files.

use std::time::UNIX_EPOCH;

use ctx_fs::{Location, Sandbox, Store};

use crate::bounds::Bounds;
use crate::index::{FileState, SourceIndex, Stamp};
use crate::index::{absolute_of, workspace_of};
use crate::{Error, Options, paths};

/// The magic bytes of a stored index, then a format version.
const MAGIC: &[u8; 8] = b"CTXSRC\0\0";
const VERSION: u32 = 8;

impl SourceIndex {
    /// Loads like [`SourceIndex::load`], served from `store` when the stored index was built
    /// for the same solution, workspace and options, from a solution and project files that
    /// have not changed since (length and modification time of each); a stored index of
    /// another version, a corrupt one, or one that does not hold together (its source roots
    /// are not those the rule gives for its files, a file or a project out of range) is
    /// rebuilt.
    pub fn load_cached(
        sandbox: &Sandbox,
        path: &str,
        options: &Options,
        store: &Store,
    ) -> Result<SourceIndex, Error> {
        SourceIndex::load_cached_all(sandbox, &[path], options, store)
    }

    /// [`SourceIndex::load_all`], served from `store` as [`SourceIndex::load_cached`] does.
    pub fn load_cached_all(
        sandbox: &Sandbox,
        paths: &[&str],
        options: &Options,
        store: &Store,
    ) -> Result<SourceIndex, Error> {
        let mut read = Vec::with_capacity(paths.len());
        for path in paths {
            let location = sandbox.resolve(path, None).map_err(Error::fs)?;
            read.push(absolute_of(sandbox, &location));
        }
        let workspace = workspace_of(sandbox);
        let key = key_of(&read.join("\n"), &workspace, options);
        if let Ok(Some(bytes)) = store.read(&store_name(&key))
            && let Some(mut index) = decode(&bytes)
            && index.key == key
            && index.sound(&workspace, options)
            && index.fresh(sandbox, &workspace)
        {
            index.cached = true;
            return Ok(index);
        }
        SourceIndex::load_all(sandbox, paths, options)
    }

    /// Stores the index (verified or not) in `store`, for [`SourceIndex::load_cached`]. An
    /// index verified without all its source roots open is not stored (nothing is written):
    /// what it found is that of this run's roots.
    pub fn save(&self, store: &Store) -> Result<(), Error> {
        if !self.closed.is_empty() {
            return Ok(());
        }
        let name = store_name(&self.key);
        let _lock = store.lock(&name).map_err(Error::fs)?;
        store.write(&name, &encode(self)).map_err(Error::fs)
    }

    /// Whether a decoded index holds together, so that a stored index rewritten by anyone
    /// adds no source root the rule does not give for its files and makes nothing index out
    /// of range. Its counts are within the caps of `options`, its paths absolute and
    /// normalised, and its source roots are recomputed from its files (as the projects wrote
    /// them) and the folders of its wildcard items with the rule of a fresh build.
    fn sound(&self, workspace: &str, options: &Options) -> bool {
        let bounds = Bounds::of(options.max_files);
        let normal = paths::is_normal;
        // A database read with the solution adds its one project and its one file read.
        let also = self.also.len();
        let counts = also <= 1
            && self.projects.len() <= options.max_projects.max(1) + also
            && self.files.count() <= options.max_files
            && self.pending.len() <= bounds.items * (1 + also)
            && self.stamps.len()
                <= options.max_projects.saturating_mul(66).saturating_add(1 + also)
            && (self.top_names.is_empty() || self.top_names.len() == self.roots.len())
            && self.warnings.is_sound()
            && self.listed.as_deref().is_none_or(|l| {
                l.files <= self.files.count()
                    && l.counts.len() == self.projects.len()
                    && l.warnings.is_sound()
                    && l.left_out <= self.left_out
            });
        // The files are read as stored: a path is built only for a file not on disk as
        // listed, and their paths are normal by the way they are stored (`files.rs`).
        let in_range = self.files.listed().all(|f| {
            f.project < self.projects.len()
                && match f.state {
                    FileState::Corrected { written } => normal(written),
                    _ => true,
                }
        }) && self
            .pending
            .iter()
            .all(|p| p.project < self.projects.len() && p.exclude < self.exclusions.len());
        let paths = self.workspace == workspace
            && self.folders.iter().all(|f| normal(f))
            && self.pending.iter().all(|p| paths::is_absolute(&p.pattern));
        counts
            && in_range
            && paths
            && self.roots_from_files(options.home.as_deref()).0 == self.roots
    }

    /// Whether every file the index was built from is unchanged.
    fn fresh(&self, sandbox: &Sandbox, workspace: &str) -> bool {
        // The stamps go in shares of neighbours (a project's files sit together), each share
        // stated at once, so that a folder of several files is opened once.
        const SHARE: usize = 128;
        let shares: Vec<&[Stamp]> = self.stamps.chunks(SHARE).collect();
        let same = |share: &&[Stamp]| {
            let paths: Vec<&str> = share.iter().map(|s| named(&s.path, workspace)).collect();
            let stats = sandbox.stat_many(&paths);
            share.iter().zip(stats).all(|(s, stat)| match stat {
                // A file that was not there must still not be.
                Err(err) if s.is_absent() => err.code() == ctx_fs::Code::NotFound,
                Err(_) => false,
                Ok(_) if s.is_absent() => false,
                Ok((_, stat)) => stamp_from(&stat, &s.path).is_some_and(|now| now == *s),
            })
        };
        !self.stamps.is_empty() && crate::par_map(&shares, 1, same).into_iter().all(|s| s)
    }
}

/// What shapes an index besides its files: the source roots depend on the workspace and the
/// home folder, the cut on the caps.
pub(crate) fn key_of(solution: &str, workspace: &str, options: &Options) -> String {
    let home = options.home.as_deref().unwrap_or_default();
    format!("{solution}\n{workspace}\n{home}\n{}\n{}", options.max_files, options.max_projects)
}

/// The length and modification time of a file read to build the index.
pub(crate) fn stamp_of(sandbox: &Sandbox, location: &Location, path: &str) -> Option<Stamp> {
    stamp_from(&sandbox.stat(location).ok()?, path)
}

/// The stamps of the files at `paths` (absolute), in order, those that cannot be stated left
/// out: a folder that holds several of them opened once ([`Sandbox::stat_many`]), as a stored
/// index's stamps are checked.
pub(crate) fn stamps_of(sandbox: &Sandbox, paths: &[String], workspace: &str) -> Vec<Stamp> {
    let named: Vec<&str> = paths.iter().map(|p| named(p, workspace)).collect();
    let stats = sandbox.stat_many(&named);
    paths.iter().zip(stats).filter_map(|(p, stat)| stamp_from(&stat.ok()?.1, p)).collect()
}

/// How a file read into an index is named to the sandbox: from the workspace when it lies in
/// it (`P0/P0.vcxproj`: the same file through the same sandbox, its path parsed and checked
/// in two components rather than ten), else by its absolute path.
fn named<'a>(path: &'a str, workspace: &str) -> &'a str {
    let rest = path.get(workspace.len()..).and_then(|r| r.strip_prefix('/'));
    match rest {
        Some(rest) if paths::within(path, workspace) && !rest.is_empty() => rest,
        _ => path,
    }
}

/// The stamp of `path` from its metadata.
fn stamp_from(stat: &ctx_fs::Stat, path: &str) -> Option<Stamp> {
    let mtime_ns = stat.modified?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
    Some(Stamp { path: path.to_owned(), len: stat.len, mtime_ns })
}

/// The store entry of an index: a stable hash of its key (solution, workspace, options).
fn store_name(key: &str) -> String {
    // FNV-1a, stable across runs and platforms.
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("sources-{hash:016x}.idx")
}

fn encode(index: &SourceIndex) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend(postcard::to_stdvec(index).unwrap_or_default());
    bytes
}

fn decode(bytes: &[u8]) -> Option<SourceIndex> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (version, body) = rest.split_at_checked(4)?;
    if u32::from_le_bytes(version.try_into().ok()?) != VERSION {
        return None;
    }
    postcard::from_bytes(body).ok()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // The tests build a tree on disk and open sandboxes.
mod tests {
    use ctx_fs::RootKind;
    use proptest::prelude::*;
    use tempfile::TempDir;

    use super::*;
    use crate::index::{Lookup, SourceFile};

    /// A rewrite of a stored index.
    type Attack<'a> = Box<dyn FnOnce(&mut SourceIndex) + 'a>;

    /// A build folder whose one project lists `src/a.c` beside it, a fake home folder with a
    /// key, and the index of that build verified and stored.
    struct Stored {
        _tmp: TempDir,
        root: String,
        store: Store,
        options: Options,
        fresh: SourceIndex,
    }

    fn sandbox(workspace: &str, roots: &[String]) -> Sandbox {
        let mut builder = Sandbox::builder(workspace);
        for root in roots {
            builder = builder.root(root.as_str(), RootKind::Source);
        }
        builder.open(cap_std::ambient_authority()).unwrap()
    }

    fn stored() -> Stored {
        let tmp = TempDir::new().unwrap();
        let root = tmp.path().canonicalize().unwrap().to_str().unwrap().to_owned();
        for dir in ["build", "src", "cache", "home/.ssh"] {
            std::fs::create_dir_all(format!("{root}/{dir}")).unwrap();
        }
        std::fs::write(format!("{root}/src/a.c"), "int a;\n").unwrap();
        std::fs::write(format!("{root}/home/.ssh/id_rsa"), "KEY\n").unwrap();
        let project =
            "<Project><ItemGroup><ClCompile Include=\"../src/a.c\"/></ItemGroup></Project>";
        std::fs::write(format!("{root}/build/p.vcxproj"), project).unwrap();
        let store = Store::open(format!("{root}/cache"), cap_std::ambient_authority()).unwrap();
        let options = Options { home: Some(format!("{root}/home")), ..Options::default() };
        let workspace = sandbox(&format!("{root}/build"), &[]);
        let mut index =
            SourceIndex::load_cached(&workspace, "p.vcxproj", &options, &store).unwrap();
        index.verify(&sandbox(&format!("{root}/build"), index.source_roots()));
        index.save(&store).unwrap();
        Stored { _tmp: tmp, root, store, options, fresh: index }
    }

    impl Stored {
        /// Rewrites the stored entry with `tamper`, then loads it again. Each rewrite starts
        /// from the entry as it was stored: a rewritten one may no longer decode.
        fn tampered(&self, tamper: impl FnOnce(&mut SourceIndex)) -> SourceIndex {
            let name = store_name(&self.fresh.key);
            let mut index = self.fresh.clone();
            tamper(&mut index);
            self.store.write(&name, &encode(&index)).unwrap();
            self.load()
        }

        fn load(&self) -> SourceIndex {
            let workspace = sandbox(&format!("{}/build", self.root), &[]);
            SourceIndex::load_cached(&workspace, "p.vcxproj", &self.options, &self.store).unwrap()
        }

        fn file(&self, path: &str) -> SourceFile {
            let path = path.replace("@ROOT@", &self.root);
            SourceFile { path, project: 0, line: 1, state: FileState::Exists }
        }
    }

    #[test]
    fn an_untouched_entry_is_served() {
        let stored = stored();
        let again = stored.load();
        assert!(again.cached());
        assert_eq!(again.source_roots(), [format!("{}/src", stored.root)]);
    }

    #[test]
    fn a_served_entry_builds_its_lookup_maps_only_when_asked_and_again_after_a_change() {
        let stored = stored();
        let src = format!("{}/src", stored.root);
        let mut again = stored.load();
        assert!(again.maps.get().is_none(), "a report makes no maps");
        // Nor a path per file: the re-check, the stamps and a report read the stored form.
        let _ = again.summary();
        assert!(again.files.is_packed(), "a report builds no path per file");
        let sources = sandbox(&format!("{}/build", stored.root), std::slice::from_ref(&src));
        again.verify(&sources);
        let found = |index: &SourceIndex, query: &str| match index.find(query, &sources) {
            Lookup::Found { path, .. } => Some(path.to_string()),
            _ => None,
        };
        assert_eq!(found(&again, "a.c"), Some(format!("{src}/a.c")));
        assert!(again.maps.get().is_some());
        // Files changed after a lookup (as a verification does) are looked up anew.
        again.files.push(stored.file("@ROOT@/src/b.c"));
        again.forget_maps();
        assert_eq!(found(&again, "b.c"), Some(format!("{src}/b.c")));
    }

    #[test]
    fn a_rewritten_entry_adds_no_root_the_rule_refuses() {
        let stored = stored();
        let src = format!("{}/src", stored.root);
        let attacks: Vec<Attack<'_>> = vec![
            Box::new(|i| i.roots.push("/".into())),
            Box::new(|i| i.roots = vec!["/etc".into()]),
            Box::new(|i| i.roots.push(format!("{}/home", stored.root))),
            Box::new(|i| {
                // A key added as a file, with a root to read it through.
                i.files.push(stored.file("@ROOT@/home/.ssh/id_rsa"));
                i.roots.push(format!("{}/home/.ssh", stored.root));
            }),
            // A root that no file of the index asks for.
            Box::new(|i| i.roots.push(format!("{}/cache", stored.root))),
        ];
        for attack in attacks {
            let index = stored.tampered(attack);
            assert!(!index.cached(), "rebuilt, not served");
            assert_eq!(index.source_roots(), std::slice::from_ref(&src));
        }
    }

    #[test]
    fn a_rewritten_entry_that_does_not_hold_together_is_rebuilt_without_a_panic() {
        let stored = stored();
        let attacks: Vec<Attack<'_>> = vec![
            Box::new(|i| i.files[0].project = 99),
            // A project number past what the stored form holds (32 bits), and a spelling as
            // written that is not a normal absolute path: read from the stored form as it is.
            Box::new(|i| i.files[0].project = usize::MAX),
            Box::new(|i| {
                i.files[0].state = FileState::Corrected { written: "../../etc/passwd".into() };
            }),
            Box::new(|i| i.files[0].state = FileState::Corrected { written: "/src/../..".into() }),
            Box::new(|i| i.files.push(stored.file("@ROOT@/src/../../../etc/passwd"))),
            Box::new(|i| i.files.push(stored.file("relative/x.c"))),
            Box::new(|i| i.top_names.push(vec!["x".into()])),
            Box::new(|i| i.files = vec![stored.file("@ROOT@/src/a.c"); 60_000].into()),
            Box::new(|i| {
                i.verified = false;
                i.pending.push(crate::index::Pending {
                    pattern: format!("{}/src/*.c", stored.root),
                    exclude: 7,
                    project: 3,
                    file: String::new(),
                    line: 1,
                });
            }),
            Box::new(|i| i.workspace = "/".into()),
            // What it held before its wildcards were walked, out of range.
            Box::new(|i| {
                let mut listed = crate::index::Listed::of(i);
                listed.files = i.files.len() + 1;
                i.listed = Some(Box::new(listed));
            }),
            Box::new(|i| {
                let mut listed = crate::index::Listed::of(i);
                listed.counts.push(7);
                i.listed = Some(Box::new(listed));
            }),
        ];
        for attack in attacks {
            let mut index = stored.tampered(attack);
            assert!(!index.cached());
            index.verify(&sandbox(&format!("{}/build", stored.root), index.source_roots()));
            assert_eq!(index.files(), stored.fresh.files());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        /// Any bytes after the header decode to an index or to nothing, never a panic.
        #[test]
        fn any_stored_bytes_decode_without_a_panic(body in prop::collection::vec(any::<u8>(), 0..512)) {
            let mut bytes = MAGIC.to_vec();
            bytes.extend_from_slice(&VERSION.to_le_bytes());
            bytes.extend(body);
            let _ = decode(&bytes);
        }
    }

    #[test]
    fn flipped_bytes_of_a_stored_index_never_panic() {
        let stored = stored();
        let bytes = encode(&stored.fresh);
        for at in (12..bytes.len()).step_by(7) {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = bytes.clone();
                bad[at] ^= flip;
                if let Some(index) = decode(&bad) {
                    let _ = index.sound(&stored.fresh.workspace, &stored.options);
                }
            }
        }
    }
}
