//! What a project file's items come to once MSBuild's `Exclude` and `Remove` are applied, for
//! both readers of project files (the stream and, in the tests, the tree it is held to).
//!
//! MSBuild evaluates items in document order, one list per item type: `Include` adds to its
//! type's list minus the element's own `Exclude` patterns, and `Remove` takes out of its
//! type's list what is already there. So `<Compile Remove="a.cs"/>` followed by
//! `<None Include="a.cs"/>` keeps `a.cs` (as a `None` item), a `Remove` leaves the items
//! written after it alone, and a wildcard keeps as exclusions the removes of its type written
//! after it.

use crate::walk::Patterns;

/// What a project file lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Items {
    /// Files and patterns, in document order.
    pub(crate) entries: Vec<Entry>,
    /// Shared-items projects (`.vcxitems`) it imports, absolute, with the line of each
    /// import.
    pub(crate) imports: Vec<(String, u32)>,
    /// Items left out: the line and the reason.
    pub(crate) warnings: Vec<(u32, String)>,
    /// The exclusion lists of the patterns (absolute patterns each), each distinct list once.
    pub(crate) excludes: Vec<Vec<String>>,
}

/// One item of a project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A file, absolute and normalised, with the line that names it.
    File { path: String, line: u32 },
    /// A wildcard pattern (`src/**/*.cpp`), absolute, expanded later through the sandbox,
    /// minus the patterns of [`Items::excludes`]`[exclude]`.
    Pattern { pattern: String, exclude: usize, line: u32 },
}

/// Most distinct `Remove` and `Exclude` patterns of one project file; past it the rest are
/// ignored with a warning (each one is matched against every file item).
pub(crate) const MAX_FILTERS: usize = 256;

/// Most patterns in the exclusion lists of one project file's wildcards together; a wildcard
/// whose list would pass it is left out with a warning (a `Remove` after each of many
/// wildcards would otherwise make lists quadratic in the text).
const MAX_EXCLUDED: usize = 4_096;

/// Most bytes of those lists together (a long pattern repeated in many lists).
const MAX_EXCLUDED_BYTES: usize = 1 << 20;

/// The item types that name files, as [`Gather`] tells them apart.
const KINDS: &[&str] = &[
    // C++ (`Filter`, `ProjectConfiguration` and `ProjectReference` name no file).
    "ClCompile",
    "ClInclude",
    "CustomBuild",
    "None",
    "Text",
    "Natvis",
    "MASM",
    "Midl",
    "ResourceCompile",
    "FxCompile",
    "Image",
    "Manifest",
    "AppxManifest",
    // C# (and XAML of both).
    "Compile",
    "Content",
    "EmbeddedResource",
    "Page",
    "ApplicationDefinition",
];

/// An item type of [`KINDS`], by its place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Kind(u8);

impl Kind {
    /// The type of an element named `name`, when it names files.
    pub(crate) fn of(name: &str) -> Option<Kind> {
        KINDS.iter().position(|k| *k == name).and_then(|i| u8::try_from(i).ok()).map(Kind)
    }

    fn index(self) -> usize {
        usize::from(self.0)
    }

    fn bit(self) -> u32 {
        1 << self.0
    }
}

/// What an exclusion list depends on: the type of the wildcard, its `Exclude` filters and how
/// many removes were met before it (backwards).
type ListKey = (Kind, std::ops::Range<usize>, u32);

/// One step of the document, kept until [`Gather::finish`] applies the removes.
enum Step {
    /// An entry, of `kind`, minus the filters `own` (indices into `Gather::own`).
    Entry { entry: Entry, kind: Kind, own: std::ops::Range<usize> },
    /// A `Remove` of `kind`: the filter it names.
    Remove { kind: Kind, filter: usize },
}

/// The items of one project file as they are read, in document order.
#[derive(Default)]
pub(crate) struct Gather {
    steps: Vec<Step>,
    /// The distinct `Remove` and `Exclude` patterns, at most [`MAX_FILTERS`].
    filters: Vec<String>,
    /// The `Exclude` filters of the elements, each element's a range of it.
    own: Vec<usize>,
    /// Filters past [`MAX_FILTERS`]: how many, and the line of the first.
    ignored: (usize, u32),
    imports: Vec<(String, u32)>,
    warnings: Vec<(u32, String)>,
    /// The type and `Exclude` filters of the `Include` started last.
    current: (Kind, std::ops::Range<usize>),
}

impl Gather {
    pub(crate) fn import(&mut self, path: String, line: u32) {
        self.imports.push((path, line));
    }

    pub(crate) fn warn(&mut self, line: u32, why: String) {
        self.warnings.push((line, why));
    }

    /// The filter of `pattern`, or `None` past [`MAX_FILTERS`] (counted, at `line`).
    fn filter(&mut self, pattern: String, line: u32) -> Option<usize> {
        if let Some(i) = self.filters.iter().position(|f| *f == pattern) {
            return Some(i);
        }
        if self.filters.len() < MAX_FILTERS {
            self.filters.push(pattern);
            return Some(self.filters.len() - 1);
        }
        let first = if self.ignored.1 == 0 { line } else { self.ignored.1 };
        self.ignored = (self.ignored.0 + 1, first);
        None
    }

    /// Starts an `Include` of `kind` at `line`: the entries given next ([`Gather::entry`]) are
    /// taken minus its `Exclude` patterns.
    pub(crate) fn include(&mut self, kind: Kind, excluded: Vec<String>, line: u32) {
        let start = self.own.len();
        for pattern in excluded {
            if let Some(i) = self.filter(pattern, line)
                && !self.own[start..].contains(&i)
            {
                self.own.push(i);
            }
        }
        self.current = (kind, start..self.own.len());
    }

    /// An entry of the `Include` started last.
    pub(crate) fn entry(&mut self, entry: Entry) {
        let (kind, own) = self.current.clone();
        self.steps.push(Step::Entry { entry, kind, own });
    }

    /// A `Remove` of `kind` at `line`: the items of that type written before it that match
    /// one of `patterns` are taken out.
    pub(crate) fn remove(&mut self, kind: Kind, patterns: Vec<String>, line: u32) {
        for pattern in patterns {
            if let Some(filter) = self.filter(pattern, line) {
                self.steps.push(Step::Remove { kind, filter });
            }
        }
    }

    /// The items, the removes applied; `implicit` is an SDK project's pattern of `Compile`
    /// items with its own exclusions, which come before everything the project writes.
    pub(crate) fn finish(self, implicit: Option<(String, Vec<String>)>) -> Items {
        let Gather { steps, filters, own, ignored, imports, mut warnings, .. } = self;
        if ignored.0 > 0 {
            let why = format!(
                "{} more `Remove` and `Exclude` patterns ignored (at most {MAX_FILTERS})",
                ignored.0
            );
            warnings.push((ignored.1, why));
        }
        let set = (!filters.is_empty()).then(|| Patterns::new(&filters));
        let mut lists = Lists::default();
        // Backwards, so that the removes written after an entry are known when it comes:
        // `later[f]` holds a bit for each type that a `Remove` of filter `f` after it names.
        let mut later: Vec<u32> = vec![0; filters.len()];
        // Each remove met changes the lists; the list of the last (type, `Exclude`s) asked
        // is kept until then, so that a run of wildcards costs one list.
        let mut changed = vec![0u32; KINDS.len()];
        let mut last: Option<(ListKey, Option<usize>)> = None;
        let mut kept = Vec::new();
        let mut past_cap = Vec::new();
        let mut matched = Vec::new();
        for step in steps.into_iter().rev() {
            let (entry, kind, range) = match step {
                Step::Remove { kind, filter } => {
                    later[filter] |= kind.bit();
                    changed[kind.index()] += 1;
                    continue;
                }
                Step::Entry { entry, kind, own } => (entry, kind, own),
            };
            let own = &own[range.clone()];
            let applies = |f: usize| later[f] & kind.bit() != 0 || own.contains(&f);
            match entry {
                Entry::File { ref path, .. } => {
                    if let Some(set) = &set {
                        set.matching(path, &mut matched);
                        if matched.iter().any(|&f| applies(f)) {
                            continue;
                        }
                    }
                    kept.push(entry);
                }
                Entry::Pattern { pattern, line, .. } => {
                    let key = (kind, range.clone(), changed[kind.index()]);
                    let id = match &last {
                        Some((k, id)) if *k == key => *id,
                        _ => {
                            let id = lists.id(&[], &chosen(&filters, applies));
                            last = Some((key, id));
                            id
                        }
                    };
                    match id {
                        Some(exclude) => kept.push(Entry::Pattern { pattern, exclude, line }),
                        None => past_cap.push((line, excluded_past_cap(&pattern))),
                    }
                }
            }
        }
        kept.reverse();
        warnings.extend(past_cap.into_iter().rev());
        if let Some((pattern, base)) = implicit {
            let compile = Kind::of("Compile").map_or(0, Kind::bit);
            match lists.id(&base, &chosen(&filters, |f| later[f] & compile != 0)) {
                Some(exclude) => kept.insert(0, Entry::Pattern { pattern, exclude, line: 1 }),
                None => warnings.push((1, excluded_past_cap(&pattern))),
            }
        }
        Items { entries: kept, imports, warnings, excludes: lists.lists }
    }
}

/// The filters, in order, that `applies` keeps: an exclusion list.
fn chosen(filters: &[String], applies: impl Fn(usize) -> bool) -> Vec<&str> {
    (0..filters.len()).filter(|&f| applies(f)).map(|f| filters[f].as_str()).collect()
}

fn excluded_past_cap(pattern: &str) -> String {
    format!(
        "wildcard `{}` left out: the exclusion lists of its project file would pass \
         {MAX_EXCLUDED} patterns or {MAX_EXCLUDED_BYTES} bytes",
        crate::warning::clip(pattern)
    )
}

/// The distinct exclusion lists, within [`MAX_EXCLUDED`] patterns and
/// [`MAX_EXCLUDED_BYTES`] bytes together.
#[derive(Default)]
struct Lists {
    lists: Vec<Vec<String>>,
    /// The lists by the hash of their patterns.
    known: std::collections::HashMap<u64, Vec<usize>>,
    hasher: std::collections::hash_map::RandomState,
    patterns: usize,
    bytes: usize,
}

impl Lists {
    /// The place of the list `base` then `more`, added if new; `None` past the caps. A list
    /// met before is found without being copied.
    fn id(&mut self, base: &[String], more: &[&str]) -> Option<usize> {
        let all = || base.iter().map(String::as_str).chain(more.iter().copied());
        let hash = {
            use std::hash::{BuildHasher, Hash, Hasher};
            let mut hasher = self.hasher.build_hasher();
            all().for_each(|p| p.hash(&mut hasher));
            hasher.finish()
        };
        let same = |list: &Vec<String>| {
            list.len() == base.len() + more.len() && list.iter().map(String::as_str).eq(all())
        };
        if let Some(ids) = self.known.get(&hash)
            && let Some(&i) = ids.iter().find(|&&i| same(&self.lists[i]))
        {
            return Some(i);
        }
        let len = base.len() + more.len();
        let bytes: usize = all().map(str::len).sum();
        if self.patterns + len > MAX_EXCLUDED || self.bytes + bytes > MAX_EXCLUDED_BYTES {
            return None;
        }
        self.patterns += len;
        self.bytes += bytes;
        self.known.entry(hash).or_default().push(self.lists.len());
        self.lists.push(all().map(str::to_owned).collect());
        Some(self.lists.len() - 1)
    }
}
