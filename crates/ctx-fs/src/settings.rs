//! The settings of a sandbox that are plain values: its limits and what its walks leave out.

/// Size and walk limits.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest file read, in bytes (default 1 MiB); larger is `E_TOO_LARGE`.
    pub max_file_bytes: u64,
    /// Most entries one walk returns (default 10 000); the walk is then
    /// marked truncated.
    pub max_walk_entries: usize,
    /// Deepest level a walk descends to, the walked directory's own entries
    /// being level 1 (default 64).
    pub max_walk_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_file_bytes: 1024 * 1024, max_walk_entries: 10_000, max_walk_depth: 64 }
    }
}

/// What walks leave out besides the ignore files.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IgnoreSettings {
    /// Skip entries whose name starts with `.` (default true).
    pub skip_hidden: bool,
    /// Directory names skipped in walks (default `node_modules`, `target`,
    /// `dist`, `build`, `.venv`, `__pycache__`).
    pub skip_dirs: Vec<String>,
    /// Names of the ignore files read in every directory, lowest precedence
    /// first (default `.gitignore`, `.ignore`, `.ctxignore`).
    pub ignore_files: Vec<String>,
    /// Extra lines in gitignore syntax, applied at each root after its own
    /// ignore files (so they win over them there).
    pub extra_rules: Vec<String>,
}

impl Default for IgnoreSettings {
    fn default() -> IgnoreSettings {
        let strings = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
        IgnoreSettings {
            skip_hidden: true,
            skip_dirs: strings(&[
                "node_modules",
                "target",
                "dist",
                "build",
                ".venv",
                "__pycache__",
            ]),
            ignore_files: strings(&[".gitignore", ".ignore", ".ctxignore"]),
            extra_rules: Vec::new(),
        }
    }
}
