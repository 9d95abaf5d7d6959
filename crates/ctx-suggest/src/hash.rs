//! The maps of short strings and ids that indexing and ranking fill, with foldhash's fast
//! hasher and a fixed seed: the standard `SipHash` protects against chosen keys, which a local
//! index does not need, and cost a tenth of a warm query; a fixed seed keeps symbol ids, and
//! so the stored index, the same from run to run.

use std::collections::{HashMap, HashSet};

/// A map with foldhash's fast hasher, seeded the same in every run.
pub(crate) type FxHashMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// A set with foldhash's fast hasher, seeded the same in every run.
pub(crate) type FxHashSet<K> = HashSet<K, foldhash::fast::FixedState>;
