//! A one-line text field of the terminal picker, edited with the keys of a shell's line
//! editor. A chord with Ctrl edits the field or does nothing; it never types its letter:
//! Ctrl-U clears what is before the cursor (the whole field when the cursor is at its end),
//! Ctrl-K what is after it, Ctrl-W the word before it.

/// The longest text a field holds, in characters: a paste of any length keeps the field, and
/// what is drawn of it, small.
pub(crate) const MAX_CHARS: usize = 1024;

/// A key as the picker hands it to a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// A character typed without Ctrl or Alt.
    Char(char),
    /// A character typed with Ctrl held, lower case (`Ctrl('u')`).
    Ctrl(char),
    /// Backspace: the character before the cursor.
    Backspace,
    /// Alt-Backspace or Ctrl-Backspace: the word before the cursor.
    WordBackspace,
    /// Delete: the character under the cursor.
    Delete,
    /// One character left.
    Left,
    /// One character right.
    Right,
    /// To the start.
    Home,
    /// To the end.
    End,
}

/// The text of a field and its cursor, a count of characters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Field {
    chars: Vec<char>,
    cursor: usize,
}

impl Field {
    /// The text.
    pub(crate) fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// The text before the cursor, where the terminal's cursor goes.
    pub(crate) fn before_cursor(&self) -> String {
        self.chars[..self.cursor].iter().collect()
    }

    /// Applies `key`; whether the text or the cursor changed. A key that is not one of a
    /// field's (any other Ctrl chord, a control character) changes nothing.
    pub(crate) fn apply(&mut self, key: Key) -> bool {
        let (text, cursor) = (self.chars.clone(), self.cursor);
        match key {
            Key::Char(c) if !c.is_control() && self.chars.len() < MAX_CHARS => {
                self.chars.insert(self.cursor, c);
                self.cursor += 1;
            }
            Key::Ctrl('u') => {
                self.chars.drain(..self.cursor);
                self.cursor = 0;
            }
            Key::Ctrl('k') => self.chars.truncate(self.cursor),
            Key::Ctrl('w') | Key::WordBackspace => {
                let start = self.word_start();
                self.chars.drain(start..self.cursor);
                self.cursor = start;
            }
            Key::Ctrl('h') | Key::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.chars.remove(self.cursor);
            }
            Key::Ctrl('d') | Key::Delete if self.cursor < self.chars.len() => {
                self.chars.remove(self.cursor);
            }
            Key::Ctrl('a') | Key::Home => self.cursor = 0,
            Key::Ctrl('e') | Key::End => self.cursor = self.chars.len(),
            Key::Ctrl('b') | Key::Left => self.cursor = self.cursor.saturating_sub(1),
            Key::Ctrl('f') | Key::Right => self.cursor = (self.cursor + 1).min(self.chars.len()),
            _ => {}
        }
        text != self.chars || cursor != self.cursor
    }

    /// Where the word before the cursor starts: back over white space, then over the rest
    /// (as a shell's Ctrl-W).
    fn word_start(&self) -> usize {
        let mut i = self.cursor;
        while i > 0 && self.chars[i - 1].is_whitespace() {
            i -= 1;
        }
        while i > 0 && !self.chars[i - 1].is_whitespace() {
            i -= 1;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> Field {
        let mut field = Field::default();
        for c in text.chars() {
            field.apply(Key::Char(c));
        }
        field
    }

    #[test]
    fn ctrl_u_clears_the_field_and_types_nothing() {
        let mut field = typed("9-9");
        assert!(field.apply(Key::Ctrl('u')));
        assert_eq!(field.text(), "");
        field = typed("2-3");
        assert_eq!(field.text(), "2-3");
    }

    #[test]
    fn ctrl_u_clears_what_is_before_the_cursor() {
        let mut field = typed("12-40");
        field.apply(Key::Left);
        field.apply(Key::Left);
        field.apply(Key::Ctrl('u'));
        assert_eq!((field.text(), field.before_cursor()), ("40".to_owned(), String::new()));
    }

    #[test]
    fn the_keys_of_a_line_editor() {
        let mut field = typed("fix the retry");
        field.apply(Key::Ctrl('w'));
        assert_eq!(field.text(), "fix the ");
        field.apply(Key::WordBackspace);
        assert_eq!(field.text(), "fix ");
        field.apply(Key::Ctrl('a'));
        field.apply(Key::Char('>'));
        field.apply(Key::Ctrl('e'));
        field.apply(Key::Backspace);
        assert_eq!(field.text(), ">fix");
        field.apply(Key::Home);
        field.apply(Key::Right);
        field.apply(Key::Ctrl('k'));
        assert_eq!(field.text(), ">");
        field.apply(Key::Ctrl('b'));
        assert!(field.apply(Key::Delete));
        assert_eq!(field.text(), "");
        assert!(!field.apply(Key::Backspace) && !field.apply(Key::Ctrl('d')));
    }

    /// Every other chord with Ctrl, and control characters typed as such, leave the field
    /// as it was: none types its letter.
    #[test]
    fn no_ctrl_chord_types_its_letter() {
        for c in 'a'..='z' {
            let mut field = typed("ab");
            field.apply(Key::Ctrl(c));
            assert!(!field.text().contains(c) || "ab".contains(c), "Ctrl-{c}: {:?}", field.text());
            assert!(field.text().len() <= 2, "Ctrl-{c}: {:?}", field.text());
        }
        let mut field = typed("ab");
        for c in ['\u{1b}', '\u{7f}', '\u{15}', '\u{9b}'] {
            assert!(!field.apply(Key::Char(c)));
        }
        assert_eq!(field.text(), "ab");
    }

    #[test]
    fn a_paste_of_any_length_is_capped() {
        let field = typed(&"x".repeat(MAX_CHARS * 4));
        assert_eq!(field.text().len(), MAX_CHARS);
    }

    #[test]
    fn multibyte_text_is_edited_by_character() {
        let mut field = typed("héllo wörld");
        field.apply(Key::Left);
        field.apply(Key::Backspace);
        assert_eq!(field.text(), "héllo wörd");
        assert_eq!(field.before_cursor(), "héllo wör");
    }
}
