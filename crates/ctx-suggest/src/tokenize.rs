//! Identifier-aware tokenisation with light English stemming.
//!
//! A word is a run of letters, digits, `_` and inner `-`. It splits into
//! parts at `_`, `-`, lower-to-upper case changes (`retryTimeout`) and the
//! end of an upper-case run before a capitalised word (`HTTPServer`). Each
//! part is lower-cased and stemmed; a word of several parts also yields its
//! parts joined (`retrytimeout`), so `retryTimeout`, `retry_timeout`,
//! `RETRY-TIMEOUT` and `retry timeout` share their terms.

use std::cell::RefCell;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use crate::hash::SeededMap;

/// Words too common in prose or code to tell files apart.
const STOP_WORDS: &[&str] = &[
    "a", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "do", "does", "for", "from", "has", "have", "he", "i", "if", "in", "into", "is", "it",
    "its", "me", "my", "no", "not", "of", "on", "or", "our", "she", "should", "so", "some", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "us",
    "was", "we", "were", "when", "which", "will", "with", "would", "you", "your",
];

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Whether `word` (lower case) is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    // Most words are longer than any stop word: they are told apart without a search.
    word.len() <= 6 && STOP_WORDS.binary_search(&word).is_ok()
}

/// The words of `text`: runs of alphanumerics and `_`, with `-` kept
/// between two alphanumerics, each with its byte offset.
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !is_word_byte(bytes[i]) {
            i += 1;
        }
        if i >= bytes.len() {
            return None;
        }
        let start = i;
        while i < bytes.len() {
            let b = bytes[i];
            let inner_dash = b == b'-'
                && i > start
                && bytes.get(i + 1).is_some_and(|n| n.is_ascii_alphanumeric());
            if !is_word_byte(b) && !inner_dash {
                break;
            }
            i += 1;
        }
        Some((start, &text[start..i]))
    })
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Splits an identifier into its lower-case parts (unstemmed).
pub fn split_identifier(word: &str) -> Vec<String> {
    if word.is_ascii() {
        split_ascii_identifier(word.as_bytes())
    } else {
        split_unicode_identifier(word)
    }
}

fn split_unicode_identifier(word: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for chunk in word.split(['_', '-']).filter(|c| !c.is_empty()) {
        let chars: Vec<char> = chunk.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                || (prev.is_ascii_digit() && cur.is_uppercase());
            if boundary {
                parts.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        parts.push(chars[start..].iter().collect::<String>().to_lowercase());
    }
    parts
}

/// [`split_identifier`] of an ASCII word, without decoding it into characters: the same
/// boundaries, as bytes.
fn split_ascii_identifier(word: &[u8]) -> Vec<String> {
    let (mut lower, mut ends) = (String::new(), Vec::new());
    split_ascii_into(word, &mut lower, &mut ends);
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let part = lower[start..end].to_owned();
            start = end;
            part
        })
        .collect()
}

/// The parts of an ASCII word, lower-cased end to end into `lower`, where each ends into
/// `ends`.
fn split_ascii_into(word: &[u8], lower: &mut String, ends: &mut Vec<usize>) {
    for chunk in word.split(|&b| b == b'_' || b == b'-').filter(|c| !c.is_empty()) {
        for (i, &cur) in chunk.iter().enumerate() {
            if i > 0 {
                let prev = chunk[i - 1];
                let next_lower = chunk.get(i + 1).is_some_and(u8::is_ascii_lowercase);
                let boundary = (prev.is_ascii_lowercase() && cur.is_ascii_uppercase())
                    || (prev.is_ascii_uppercase() && cur.is_ascii_uppercase() && next_lower)
                    || (prev.is_ascii_digit() && cur.is_ascii_uppercase());
                if boundary {
                    ends.push(lower.len());
                }
            }
            lower.push(char::from(cur.to_ascii_lowercase()));
        }
        ends.push(lower.len());
    }
}

/// Stems a lower-case word part.
pub fn stem(part: &str) -> String {
    let mut out = String::new();
    stem_into(part, &mut out);
    out
}

/// [`stem`] into `out` (cleared first): no allocation once `out` and the memo of stems have
/// room.
fn stem_into(part: &str, out: &mut String) {
    out.clear();
    if part.len() <= 3 || part.bytes().any(|b| b.is_ascii_digit()) {
        out.push_str(part);
        return;
    }
    // Stemming is the costliest step of indexing and words repeat a lot: remember them.
    thread_local! {
        static MEMO: RefCell<SeededMap<String, String>> = RefCell::new(SeededMap::default());
    }
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(stem) = memo.get(part) {
            out.push_str(stem);
            return;
        }
        let stem = stemmer().stem(part);
        out.push_str(&stem);
        if memo.len() < 200_000 {
            memo.insert(part.to_owned(), stem.into_owned());
        }
    });
}

/// Whether a term is worth indexing: two characters or more, not a stop
/// word, not a bare number.
fn keep(part: &str) -> bool {
    part.len() >= 2 && !is_stop_word(part) && !part.bytes().all(|b| b.is_ascii_digit())
}

/// Calls `emit` with each term of one word: its stemmed parts, then the
/// joined form when it has several parts.
pub fn word_terms(word: &str, mut emit: impl FnMut(String)) {
    for_each_term(word, |term| emit(term.to_owned()));
}

/// [`word_terms`] lent rather than given: `f` sees each term in a buffer reused from term to
/// term and word to word, so indexing a word whose stems are known allocates nothing.
pub(crate) fn for_each_term(word: &str, mut f: impl FnMut(&str)) {
    thread_local! {
        /// The word's parts lower-cased end to end (so the joined form is the whole), where
        /// each part ends, and the stem of the term at hand.
        static SCRATCH: RefCell<(String, Vec<usize>, String)> = RefCell::default();
    }
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => {
            let (lower, ends, stemmed) = &mut *scratch;
            terms_into(word, lower, ends, stemmed, &mut f);
        }
        // An `f` that tokenises again (none does today) gets buffers of its own.
        Err(_) => terms_into(word, &mut String::new(), &mut Vec::new(), &mut String::new(), &mut f),
    });
}

/// [`for_each_term`] with the buffers given.
fn terms_into(
    word: &str,
    lower: &mut String,
    ends: &mut Vec<usize>,
    stemmed: &mut String,
    f: &mut impl FnMut(&str),
) {
    lower.clear();
    ends.clear();
    if word.is_ascii() {
        split_ascii_into(word.as_bytes(), lower, ends);
    } else {
        for part in split_unicode_identifier(word) {
            lower.push_str(&part);
            ends.push(lower.len());
        }
    }
    let mut start = 0;
    for &end in ends.iter() {
        let part = &lower[start..end];
        if keep(part) {
            stem_into(part, stemmed);
            f(stemmed);
        }
        start = end;
    }
    if ends.len() > 1 && keep(lower) {
        stem_into(lower, stemmed);
        f(stemmed);
    }
}

/// All the terms of a text, in order, repeated as often as they occur.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (_, word) in words(text) {
        word_terms(word, |t| out.push(t));
    }
    out
}

/// The terms of a path: split at `/`, `.`, `_`, `-` and case changes.
pub fn path_terms(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in path.split(['/', '.', '\\']) {
        word_terms(piece, |t| out.push(t));
    }
    out
}

/// Whether a word looks like a code identifier rather than prose: it has
/// an inner `_`, an inner upper-case letter, or digits with letters.
pub fn looks_like_identifier(word: &str) -> bool {
    let inner_upper =
        word.chars().skip(1).any(char::is_uppercase) && word.chars().any(char::is_lowercase);
    let underscore = word.trim_matches('_').contains('_');
    inner_upper || underscore
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        // `is_stop_word` skips the search for longer words.
        assert!(STOP_WORDS.iter().all(|w| w.len() <= 6));
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(split_identifier("retryTimeout"), ["retry", "timeout"]);
        assert_eq!(split_identifier("retry_timeout"), ["retry", "timeout"]);
        assert_eq!(split_identifier("RETRY-TIMEOUT"), ["retry", "timeout"]);
        assert_eq!(split_identifier("HTTPServer"), ["http", "server"]);
        assert_eq!(split_identifier("parseHTTP2Frame"), ["parse", "http2", "frame"]);
        assert_eq!(split_identifier("utf8"), ["utf8"]);
        assert_eq!(split_identifier("__init__"), ["init"]);
    }

    #[test]
    fn forms_meet() {
        let a = terms("retryTimeout");
        assert_eq!(a, ["retri", "timeout", "retrytimeout"]);
        assert_eq!(terms("retry_timeout"), a);
        assert_eq!(terms("RETRY-TIMEOUT"), a);
        assert_eq!(terms("RetryTimeout"), a);
        assert_eq!(terms("retry timeout"), ["retri", "timeout"]);
        assert_eq!(terms("Retries timeouts"), ["retri", "timeout"]);
    }

    #[test]
    fn paths_split() {
        assert_eq!(
            path_terms("src/retry-loop/mod.rs"),
            ["src", "retri", "loop", "retryloop", "mod", "rs"]
        );
    }

    #[test]
    fn identifiers_are_told_from_prose() {
        assert!(looks_like_identifier("retryTimeout"));
        assert!(looks_like_identifier("retry_timeout"));
        assert!(!looks_like_identifier("Retry"));
        assert!(!looks_like_identifier("HTTP"));
        assert!(!looks_like_identifier("__init__"));
    }

    fn lower_words() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::vec("[a-z]{2,8}", 1..5)
    }

    #[test]
    fn terms_of_a_word_inside_the_terms_of_another() {
        let alone = terms("HTTPServer");
        let mut nested = Vec::new();
        word_terms("retryTimeout", |outer| {
            word_terms("HTTPServer", |inner| nested.push((outer.clone(), inner)));
        });
        let outer = terms("retryTimeout");
        let expected: Vec<(String, String)> =
            outer.iter().flat_map(|o| alone.iter().map(move |i| (o.clone(), i.clone()))).collect();
        assert_eq!(nested, expected);
    }

    proptest! {
        /// The byte-wise split of ASCII words is the character-wise one.
        #[test]
        fn ascii_words_split_as_characters_do(word in "[A-Za-z0-9_-]{0,24}") {
            prop_assert_eq!(
                split_ascii_identifier(word.as_bytes()),
                split_unicode_identifier(&word)
            );
        }
    }

    proptest! {
        #[test]
        fn every_spelling_gives_the_same_terms(words in lower_words()) {
            let snake = words.join("_");
            let kebab = words.join("-");
            let screaming = snake.to_uppercase();
            let camel: String = words.iter().enumerate().map(|(i, w)| {
                if i == 0 { w.clone() } else { let mut c = w.chars(); c.next().unwrap().to_uppercase().chain(c).collect() }
            }).collect();
            let expected = terms(&snake);
            prop_assert_eq!(&terms(&kebab), &expected);
            prop_assert_eq!(&terms(&screaming), &expected);
            prop_assert_eq!(&terms(&camel), &expected);
            // The spaced form has the same parts, without the joined one.
            let spaced = terms(&words.join(" "));
            for t in &spaced {
                prop_assert!(expected.contains(t));
            }
        }

        #[test]
        fn terms_are_lower_case_and_never_empty(text in "\\PC{0,64}") {
            for t in terms(&text) {
                prop_assert!(!t.is_empty());
                prop_assert_eq!(t.to_lowercase(), t.clone());
            }
        }
    }
}
