//! The tables of terms and of symbol names: each name ended by a NUL byte in one byte string,
//! found by id (symbols) or by one pass over the table (both).

use serde::{Deserialize, Serialize};

use crate::hash::{SeededMap, SeededSet};

/// A table of names, each ended by a NUL byte in one byte string, so that a stored index
/// decodes it with one copy instead of one allocation a name. Names never hold NUL: they are
/// made of word characters.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Names {
    #[serde(with = "serde_bytes")]
    bytes: Vec<u8>,
    len: u32,
}

impl Names {
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// Adds `name`; returns where it starts in the table's bytes (see [`Names::name_at`]).
    pub(super) fn push(&mut self, name: &str) -> usize {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.len += 1;
        at
    }

    /// The name that starts at byte `at` of the table (up to its NUL byte); empty past the end.
    pub(super) fn name_at(&self, at: usize) -> &[u8] {
        let rest = self.bytes.get(at..).unwrap_or_default();
        rest.split(|b| *b == 0).next().unwrap_or_default()
    }

    /// Bytes of the table: no table holds more names (each is ended by a NUL byte), whatever
    /// the count a damaged one says.
    pub(super) fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The names in id order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &str> {
        self.iter_bytes().map(|n| std::str::from_utf8(n).unwrap_or(""))
    }

    /// The names from the one that starts at byte `at` on, in id order, as bytes.
    pub(super) fn iter_bytes_from(&self, at: usize) -> impl Iterator<Item = &[u8]> {
        let rest = self.bytes.get(at..).unwrap_or_default();
        let body = rest.strip_suffix(&[0]).unwrap_or(rest);
        body.split(|b| *b == 0).filter(move |_| !rest.is_empty())
    }

    /// The names in id order, as bytes.
    pub(super) fn iter_bytes(&self) -> impl Iterator<Item = &[u8]> {
        let body = self.bytes.strip_suffix(&[0]).unwrap_or(&self.bytes);
        let empty = self.bytes.is_empty();
        body.split(|b| *b == 0).filter(move |_| !empty)
    }
}

/// [`Names`] that are also found by id: the end of each name is found once, when the table
/// is decoded (one pass over its bytes), and is not stored.
#[derive(Clone, Debug, Default)]
pub(super) struct Table {
    pub(super) names: Names,
    /// The offset of each name's NUL byte.
    ends: Vec<u32>,
}

impl Table {
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn push(&mut self, name: &str) {
        self.names.push(name);
        self.ends.push(self.names.bytes.len() as u32 - 1);
    }

    /// The name of `id`; empty when there is none.
    pub(super) fn get(&self, id: u32) -> &str {
        std::str::from_utf8(self.get_bytes(id)).unwrap_or("")
    }

    /// The name of `id` as bytes.
    pub(super) fn get_bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        let Some(&end) = self.ends.get(i) else { return &[] };
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize + 1 };
        &self.names.bytes[start..end as usize]
    }

    /// The names in id order.
    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = &str> {
        self.names.iter()
    }
}

impl From<Names> for Table {
    fn from(names: Names) -> Table {
        let ends = names
            .bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == 0)
            .map(|(i, _)| i as u32)
            .collect();
        Table { names, ends }
    }
}

impl Serialize for Table {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.names.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Table {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Table, D::Error> {
        let table = Table::from(Names::deserialize(d)?);
        let whole = table.names.bytes.last().is_none_or(|b| *b == 0);
        if table.len() != table.names.len() || !whole {
            return Err(serde::de::Error::custom("a name table whose count is not its length"));
        }
        Ok(table)
    }
}

/// Finds each of `names` in `table` in one pass (the first occurrence wins).
/// Names are compared as bytes: they were stored from strings, and checking that each is
/// UTF-8 again was a tenth of the pass.
pub(super) fn lookup<'t>(
    table: impl Iterator<Item = &'t [u8]>,
    names: &[&str],
) -> Vec<Option<u32>> {
    let wanted: SeededMap<&[u8], usize> =
        names.iter().enumerate().map(|(i, n)| (n.as_bytes(), i)).collect();
    // The lengths asked for (all from 64 bytes up share a bit): most names of the table are
    // passed over without hashing them.
    let lengths = names.iter().fold(0u64, |m, n| m | 1 << n.len().min(63));
    let mut found = vec![None; names.len()];
    let mut left = wanted.len();
    for (id, name) in table.enumerate() {
        if lengths & 1 << name.len().min(63) == 0 {
            continue;
        }
        if let Some(&i) = wanted.get(name)
            && found[i].is_none()
        {
            found[i] = Some(id as u32);
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    // Repeated names share the answer of their first occurrence.
    for (i, n) in names.iter().enumerate() {
        if found[i].is_none() {
            found[i] = wanted.get(n.as_bytes()).and_then(|&j| found[j]);
        }
    }
    found
}

/// Gives `found` each name of `table` (the names of a table in id order, from its first)
/// that `wanted` holds, with its id and where it starts in the table's bytes, and takes it
/// out of `wanted`. As in [`lookup`], names are compared as bytes.
pub(super) fn find<'t>(
    table: impl Iterator<Item = &'t [u8]>,
    wanted: &mut SeededSet<&[u8]>,
    mut found: impl FnMut(&str, u32, usize),
) {
    let mut at = 0;
    for (id, name) in table.enumerate() {
        if wanted.is_empty() {
            break;
        }
        if wanted.remove(name)
            && let Ok(name) = std::str::from_utf8(name)
        {
            found(name, id as u32, at);
        }
        at += name.len() + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let mut names = Names::default();
        assert_eq!(names.iter().count(), 0);
        for n in ["retri", "timeout", "é"] {
            names.push(n);
        }
        assert_eq!(names.iter().collect::<Vec<_>>(), ["retri", "timeout", "é"]);
        assert_eq!(names.len(), 3);
        assert_eq!(
            (names.name_at(0), names.name_at(6), names.name_at(14)),
            (&b"retri"[..], &b"timeout"[..], "é".as_bytes())
        );
        assert_eq!(names.name_at(99), b"");
        let mut wanted: SeededSet<&[u8]> = [&b"timeout"[..], b"none"].into_iter().collect();
        let mut found = Vec::new();
        find(names.iter_bytes(), &mut wanted, |n, id, at| found.push((n.to_owned(), id, at)));
        assert_eq!(found, [("timeout".to_owned(), 1, 6)]);
        assert_eq!(wanted.len(), 1);
    }

    #[test]
    fn tables_find_names_by_id() {
        let mut table = Table::default();
        assert_eq!(table.get(0), "");
        for n in ["retri", "", "é"] {
            table.push(n);
        }
        let decoded: Table = postcard::from_bytes(&postcard::to_stdvec(&table).unwrap()).unwrap();
        for t in [&table, &decoded] {
            assert_eq!((t.get(0), t.get(1), t.get(2), t.get(3)), ("retri", "", "é", ""));
            assert_eq!(t.iter().collect::<Vec<_>>(), ["retri", "", "é"]);
        }
        let mut torn = Names::default();
        torn.push("a");
        torn.len = 2;
        assert!(postcard::from_bytes::<Table>(&postcard::to_stdvec(&torn).unwrap()).is_err());
    }
}
