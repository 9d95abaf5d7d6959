//! [`Text`]: the shared, immutable text of a file.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Weak};

/// Immutable text shared between the cache, the walk and the output; cloning
/// it is cheap.
///
/// It is built from a `String` without copying the string's bytes (an
/// `Arc<str>` would copy them once more), so a file read into one buffer
/// stays in that buffer: reading a 200 MiB file costs 200 MiB, not twice
/// that for a moment.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<String>);

impl Text {
    /// The text as a string slice.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Whether two values share one buffer (so a cache hit can be told from
    /// an equal text read again).
    pub fn ptr_eq(a: &Text, b: &Text) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// A reference that does not keep the text alive.
    pub fn downgrade(&self) -> WeakText {
        WeakText(Arc::downgrade(&self.0))
    }
}

/// A [`Text`] that is not kept alive by this reference (see [`Text::downgrade`]).
#[derive(Clone, Debug, Default)]
pub struct WeakText(Weak<String>);

impl WeakText {
    /// The text, if something still holds it.
    pub fn upgrade(&self) -> Option<Text> {
        self.0.upgrade().map(Text)
    }

    /// How many [`Text`] values hold the text.
    pub fn strong_count(&self) -> usize {
        self.0.strong_count()
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for Text {
    fn from(text: String) -> Text {
        Text(Arc::new(text))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Text {
        Text(Arc::new(text.to_owned()))
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Text {
        Text::from(text.as_str())
    }
}

impl From<Arc<str>> for Text {
    fn from(text: Arc<str>) -> Text {
        Text::from(&*text)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_becomes_text_without_a_copy() {
        let string = String::from("hello");
        let bytes = string.as_ptr();
        let text = Text::from(string);
        assert_eq!(text.as_ptr(), bytes, "the string's buffer is kept");
        let clone = text.clone();
        assert!(Text::ptr_eq(&text, &clone));
        assert!(!Text::ptr_eq(&text, &Text::from("hello")));
        let weak = text.downgrade();
        assert!(weak.upgrade().is_some_and(|alive| Text::ptr_eq(&alive, &text)));
        drop((text.clone(), clone));
        assert_eq!(weak.strong_count(), 1);
        assert_eq!(text, "hello");
        assert_eq!(format!("{text}|{text:?}"), "hello|\"hello\"");
        drop(text);
        assert!(weak.upgrade().is_none());
    }
}
