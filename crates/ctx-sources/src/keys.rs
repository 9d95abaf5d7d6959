//! Keys by hash: the index's maps from a file name or a root-relative path to its files.

/// A map from a hashed key (a lower-case name or path) to file numbers: one sorted array, so
/// building it allocates once and a lookup is a binary search. Hashes can collide; callers
/// compare the real names of what they get.
#[derive(Clone, Debug, Default)]
pub(crate) struct Keys(Vec<(u64, u32)>);

impl Keys {
    pub(crate) fn new(mut pairs: Vec<(u64, u32)>) -> Keys {
        pairs.sort_unstable();
        Keys(pairs)
    }

    /// The file numbers stored under the hash of `key`.
    pub(crate) fn get(&self, key: &str) -> impl Iterator<Item = u32> + '_ {
        let hash = key_hash(key);
        let start = self.0.partition_point(|&(h, _)| h < hash);
        self.0[start..].iter().take_while(move |&&(h, _)| h == hash).map(|&(_, i)| i)
    }
}

/// The index's maps from a hashed file name and from a hashed root-relative path to its files.
#[derive(Clone, Debug, Default)]
pub(crate) struct Maps {
    pub(crate) by_name: Keys,
    pub(crate) by_path: Keys,
}

/// FNV-1a over the ASCII-lower-cased bytes of `key`.
pub(crate) fn key_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
