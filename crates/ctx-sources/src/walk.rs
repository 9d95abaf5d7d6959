//! Wildcard items, expanded through the sandbox.

use ctx_fs::Sandbox;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Absolute glob patterns, matched without case as MSBuild does, `*` not crossing `/`.
pub(crate) struct Patterns {
    set: GlobSet,
}

impl Patterns {
    pub(crate) fn new(patterns: &[String]) -> Patterns {
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            let glob =
                GlobBuilder::new(pattern).case_insensitive(true).literal_separator(true).build();
            if let Ok(glob) = glob {
                builder.add(glob);
            }
        }
        Patterns { set: builder.build().unwrap_or_else(|_| GlobSet::empty()) }
    }

    pub(crate) fn matches(&self, path: &str) -> bool {
        self.set.is_match(path)
    }
}

/// The files matching an absolute pattern, minus those matching `exclude`, as absolute
/// paths; a pattern whose folder the sandbox cannot reach gives nothing.
pub(crate) fn expand(sandbox: &Sandbox, pattern: &str, exclude: &[String]) -> Vec<String> {
    let Ok(walk) = sandbox.glob(pattern, None) else { return Vec::new() };
    let exclude = Patterns::new(exclude);
    walk.files()
        .map(|entry| {
            let root = sandbox.root_path(entry.location.root()).as_str().trim_end_matches('/');
            format!("{root}/{}", entry.location.path())
        })
        .filter(|path| !exclude.matches(path))
        .collect()
}
