//! Front matter parsed once per file content ([`FrontMatterMemo`]), for the clones of an
//! assembler and the files a run meets again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ctx_fs::{Text, WeakText};

use crate::front_matter;

/// Front matter parsed once per file content, shared by the clones of an assembler: a content
/// cache hit hands back the same `Text`, so an unchanged file is not parsed again. Keyed by
/// the content's address, checked through a weak reference so a reused address never matches
/// stale content.
#[derive(Default)]
pub(crate) struct FrontMatterMemo {
    entries: Mutex<HashMap<usize, MemoEntry>>,
}

/// The content a parse was made of (alive or not), and the parse.
type MemoEntry = (WeakText, Arc<ParsedFrontMatter>);

/// How many parsed front matters an assembler keeps.
const FRONT_MATTER_MEMO: usize = 4096;

/// The owned result of `front_matter::parse`.
pub(crate) struct ParsedFrontMatter {
    pub(crate) body_offset: usize,
    pub(crate) body_line: u32,
    pub(crate) front_matter: Option<front_matter::FrontMatter>,
    pub(crate) diagnostics: Vec<ctx_syntax::Diagnostic>,
}

impl ParsedFrontMatter {
    fn of(text: &str) -> ParsedFrontMatter {
        let parsed = front_matter::parse(text);
        ParsedFrontMatter {
            body_offset: parsed.body_offset,
            body_line: parsed.body_line,
            front_matter: parsed.front_matter,
            diagnostics: parsed.diagnostics,
        }
    }
}

impl FrontMatterMemo {
    /// Splits and parses front matter, once per file content when `text` is the whole file.
    pub(crate) fn parse(&self, text: &str, whole: Option<&Text>) -> Arc<ParsedFrontMatter> {
        let Some(whole) = whole.filter(|w| is_all_of(text, w)) else {
            return Arc::new(ParsedFrontMatter::of(text));
        };
        let key = whole.as_ptr() as usize;
        let lock = || self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((weak, parsed)) = lock().get(&key)
            && weak.upgrade().is_some_and(|alive| Text::ptr_eq(&alive, whole))
        {
            return parsed.clone();
        }
        let parsed = Arc::new(ParsedFrontMatter::of(text));
        let mut entries = lock();
        if entries.len() >= FRONT_MATTER_MEMO {
            entries.retain(|_, (weak, _)| weak.strong_count() > 0);
            if entries.len() >= FRONT_MATTER_MEMO {
                entries.clear();
            }
        }
        entries.insert(key, (whole.downgrade(), parsed.clone()));
        parsed
    }
}

/// Whether `text` is the whole of `whole` (the same bytes in place), not a part of it.
pub(crate) fn is_all_of(text: &str, whole: &Text) -> bool {
    std::ptr::eq(whole.as_ptr(), text.as_ptr()) && whole.len() == text.len()
}
