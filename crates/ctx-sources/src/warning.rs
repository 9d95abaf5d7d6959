//! [`Warning`]: a problem of the project files that the index lives with (`W_SOURCES`), and the
//! capped list an index keeps of them.

use std::fmt;

use ctx_diagnostics::Code;
use serde::{Deserialize, Serialize};

/// Most warnings an index lists one by one; past it they are counted in one more warning.
pub const MAX_WARNINGS: usize = 100;

/// Longest text taken from a project file into a message (an item as written, a property
/// name), in bytes; longer is clipped with `…`.
const MAX_QUOTED: usize = 240;

/// A problem of a solution, project or database that the index lives with: a project that
/// cannot be read, an item left out, a folder that is missing or is a file, a limit reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Warning {
    /// `W_SOURCES`.
    #[serde(with = "crate::files::code_name")]
    pub code: Code,
    /// The file it is about (a project, the solution or database), absolute; empty when it is
    /// about the index as a whole.
    pub file: String,
    /// The 1-based line of that file, 0 when none applies.
    pub line: u32,
    /// What was left out and why, lower-case.
    pub message: String,
}

impl Warning {
    pub(crate) fn new(file: &str, line: u32, message: String) -> Warning {
        Warning { code: Code::Sources, file: file.to_owned(), line, message }
    }

    /// About the index as a whole.
    pub(crate) fn general(message: String) -> Warning {
        Warning::new("", 0, message)
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.file.is_empty(), self.line) {
            (true, _) => f.write_str(&self.message),
            (false, 0) => write!(f, "{}: {}", self.file, self.message),
            (false, line) => write!(f, "{}:{line}: {}", self.file, self.message),
        }
    }
}

/// A warning that sums up many events and is rewritten in place as they add up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Tally {
    /// Files left out by the file cap.
    Cut,
    /// Warnings past [`MAX_WARNINGS`].
    Dropped,
}

/// The warnings of an index: at most [`MAX_WARNINGS`] listed, the rest counted in-band, and the
/// tallies ([`Tally`]) once each however often they grow.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Warnings {
    list: Vec<Warning>,
    tallies: Vec<(Tally, usize)>,
    listed: usize,
    dropped: usize,
}

impl Warnings {
    /// Lists `warning`, or counts it once [`MAX_WARNINGS`] are listed.
    pub(crate) fn push(&mut self, warning: Warning) {
        if self.listed < MAX_WARNINGS {
            self.listed += 1;
            self.list.push(warning);
            return;
        }
        self.dropped += 1;
        let message = format!("{} more warnings not listed (at most {MAX_WARNINGS})", self.dropped);
        self.tally(Tally::Dropped, message);
    }

    /// Sets the one warning of `kind` to `message`.
    pub(crate) fn tally(&mut self, kind: Tally, message: String) {
        match self.tallies.iter().find(|(k, _)| *k == kind) {
            Some(&(_, at)) => self.list[at].message = message,
            None => {
                self.tallies.push((kind, self.list.len()));
                self.list.push(Warning::general(message));
            }
        }
    }

    /// Adds the warnings of `other`: its list, then its tallies (which, of a kind this list
    /// has, replace this one's message).
    pub(crate) fn append(&mut self, other: Warnings) {
        let tallied: Vec<usize> = other.tallies.iter().map(|&(_, at)| at).collect();
        let mut list: Vec<Option<Warning>> = other.list.into_iter().map(Some).collect();
        for (at, warning) in list.iter_mut().enumerate() {
            if !tallied.contains(&at)
                && let Some(warning) = warning.take()
            {
                self.push(warning);
            }
        }
        for (kind, at) in other.tallies {
            if let Some(warning) = list.get_mut(at).and_then(Option::take) {
                self.tally(kind, warning.message);
            }
        }
    }

    pub(crate) fn as_slice(&self) -> &[Warning] {
        &self.list
    }

    /// Whether a decoded list holds together: its tallies point into it, within the cap.
    pub(crate) fn is_sound(&self) -> bool {
        self.list.len() <= MAX_WARNINGS + self.tallies.len()
            && self.tallies.iter().all(|&(_, at)| at < self.list.len())
    }
}

/// `text` as a message quotes it: at most [`MAX_QUOTED`] bytes, cut on a character boundary
/// with `…`.
pub(crate) fn clip(text: &str) -> String {
    if text.len() <= MAX_QUOTED {
        return text.to_owned();
    }
    let mut end = MAX_QUOTED;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_past_the_cap_are_counted_in_one() {
        let mut warnings = Warnings::default();
        for i in 0..MAX_WARNINGS + 5 {
            warnings.push(Warning::new("/b/a.vcxproj", 1, format!("w{i}")));
        }
        warnings.tally(Tally::Cut, "3 files left out".into());
        warnings.tally(Tally::Cut, "4 files left out".into());
        let list = warnings.as_slice();
        assert_eq!(list.len(), MAX_WARNINGS + 2);
        assert_eq!(list[MAX_WARNINGS].message, "5 more warnings not listed (at most 100)");
        assert_eq!(list[MAX_WARNINGS + 1].message, "4 files left out");
        assert!(warnings.is_sound());
        assert_eq!(list[0].to_string(), "/b/a.vcxproj:1: w0");
        assert_eq!(list[0].code, Code::Sources);
    }

    #[test]
    fn quoted_text_is_clipped_on_a_character_boundary() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(200);
        let clipped = clip(&long);
        assert!(clipped.len() <= MAX_QUOTED + '…'.len_utf8() && clipped.ends_with('…'));
    }
}
