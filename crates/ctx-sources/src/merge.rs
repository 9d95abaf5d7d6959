//! One index from several project files: a solution and the `compile_commands.json` beside it,
//! each read as [`SourceIndex::load`] reads it, then merged (each file once, the cap kept) and
//! the source roots chosen again from all their files.

use std::collections::HashSet;

use ctx_fs::Sandbox;

use crate::cache::key_of;
use crate::index::SourceIndex;
use crate::warning::Warning;
use crate::{Error, Options, roots};

impl SourceIndex {
    /// Reads each of `paths` (a solution, then a compilation database) as
    /// [`SourceIndex::load`] does, into one index: the projects of each in turn, every file
    /// once (the first that lists it wins), within the one cap of `options`, and the source
    /// roots that the rule gives for all of them. [`SourceIndex::solution`] is the first path,
    /// [`SourceIndex::also_read`] the others. One that cannot be read is an error.
    pub fn load_all(
        sandbox: &Sandbox,
        paths: &[&str],
        options: &Options,
    ) -> Result<SourceIndex, Error> {
        let Some((first, rest)) = paths.split_first() else {
            return Err(Error::config("", "no solution or database to read".to_owned()));
        };
        let mut index = SourceIndex::load(sandbox, first, options)?;
        for path in rest {
            let other = SourceIndex::load(sandbox, path, options)?;
            index.absorb(other);
        }
        if !rest.is_empty() {
            index.rechoose_roots(options);
            let mut read = vec![index.solution.clone()];
            read.extend(index.also.iter().cloned());
            index.key = key_of(&read.join("\n"), &index.workspace, options);
        }
        Ok(index)
    }

    /// Takes in the projects, files, wildcard items, stamps and warnings of `other`.
    fn absorb(&mut self, mut other: SourceIndex) {
        let projects = self.projects.len();
        let exclusions = self.exclusions.len();
        self.also.push(other.solution);
        self.projects.extend(other.projects);
        self.exclusions.extend(other.exclusions);
        let known: HashSet<String> = self.files.iter().map(|f| f.path.clone()).collect();
        for mut file in std::mem::take(&mut *other.files) {
            if known.contains(&file.path) {
                continue;
            }
            if self.files.len() >= self.max_files {
                self.left_out += 1;
                continue;
            }
            file.project += projects;
            self.files.push(file);
        }
        let patterns: HashSet<String> = self.pending.iter().map(|p| p.pattern.clone()).collect();
        for mut pending in other.pending {
            if !patterns.contains(&pending.pattern) {
                pending.project += projects;
                pending.exclude += exclusions;
                self.pending.push(pending);
            }
        }
        self.stamps.extend(other.stamps);
        self.warnings.append(other.warnings);
        // One count of the files left out, of both, in one warning.
        self.warn_cut(other.left_out);
    }

    /// The wildcard folders and the source roots again, for the files of every part.
    fn rechoose_roots(&mut self, options: &Options) {
        self.folders.clear();
        if self.files.len() < self.max_files {
            let folders: HashSet<String> =
                self.pending.iter().map(|p| crate::walk::split(&p.pattern).0).collect();
            self.folders = folders.into_iter().collect();
            self.folders.sort();
        }
        let (roots, more) = self.roots_from_files(options.home.as_deref());
        self.roots = roots;
        if more > 0 {
            self.warnings.push(Warning::general(format!(
                "{more} more source roots left out: an index has at most {} (their files \
                 stay listed, unreadable)",
                roots::MAX_SOURCE_ROOTS
            )));
        }
    }
}
