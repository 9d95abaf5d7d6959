//! The terminal picker of `ctx suggest --interactive` (cargo feature `picker`, on by default):
//! keep or drop each suggestion, then edit the ranges kept. It is drawn on standard error
//! (crossterm, raw mode) and every text in it, the list's filter, the answer to "edit line
//! ranges?" and each range, is a [`Field`], edited with a shell's line-editing keys: Ctrl-U
//! clears it, and no chord with Ctrl types its letter.

use ctx::Suggestion;

#[cfg(feature = "picker")]
use crate::field::{Field, Key};

/// Applies an edited range (`12-40`, `12`) to a suggestion; an empty answer keeps it.
#[cfg(any(feature = "picker", test))]
pub(crate) fn apply_range(s: &mut Suggestion, answer: &str) -> Result<(), String> {
    let answer = answer.trim().trim_start_matches(['L', '#']);
    if answer.is_empty() {
        return Ok(());
    }
    let (a, b) = answer.split_once('-').unwrap_or((answer, answer));
    let parse = |x: &str| {
        x.trim()
            .trim_start_matches('L')
            .parse::<u32>()
            .map_err(|_| format!("not a line number: {x:?}"))
    };
    let (start, end) = (parse(a)?, parse(b)?);
    if start == 0 || end < start {
        return Err(format!("not a line range: {answer:?} (expected START-END, 1-based)"));
    }
    s.lines.start = start;
    s.lines.end = end;
    Ok(())
}

/// One label per suggestion, as the picker lists them, made visible.
#[cfg(any(feature = "picker", test))]
pub(crate) fn label(s: &Suggestion) -> String {
    let head = format!("{}:{}-{}", s.path, s.lines.start, s.lines.end);
    let label = if s.summary.is_empty() { head } else { format!("{head}  {}", s.summary) };
    crate::term::visible(&label).into_owned()
}

/// Whether this build has the picker; without it, `--interactive` is refused before any
/// ranking.
pub(crate) fn available() -> anyhow::Result<()> {
    if cfg!(feature = "picker") {
        return Ok(());
    }
    anyhow::bail!("this ctx was built without the picker (cargo feature `picker`)")
}

/// A key of the picker: one for the field being edited, or one that moves, confirms or ends.
#[cfg(feature = "picker")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Press {
    Field(Key),
    Up,
    Down,
    PageUp,
    PageDown,
    Enter,
    /// Esc: the picker is cancelled.
    Escape,
    /// Ctrl-C: the picker is interrupted.
    Interrupt,
    Other,
}

/// What a key did to a screen of the picker.
#[cfg(feature = "picker")]
#[derive(Debug, PartialEq, Eq)]
enum Step {
    Stay,
    Done,
}

/// The list of suggestions: which are kept, the filter typed, and the row of the cursor among
/// those the filter shows.
#[cfg(feature = "picker")]
struct List<'a> {
    labels: &'a [String],
    kept: Vec<bool>,
    filter: Field,
    row: usize,
}

#[cfg(feature = "picker")]
impl<'a> List<'a> {
    const TITLE: &'static str = "Attach which suggestions? (space toggles, enter confirms)";
    const HELP: &'static str =
        "[↑↓ move, space toggles, → all, ← none, type to filter, ctrl-u clears it]";

    fn new(labels: &'a [String]) -> List<'a> {
        List { labels, kept: vec![true; labels.len()], filter: Field::default(), row: 0 }
    }

    /// The suggestions the filter shows (a case-insensitive part of the label), in order.
    fn shown(&self) -> Vec<usize> {
        let filter = self.filter.text().to_lowercase();
        (0..self.labels.len())
            .filter(|&i| self.labels[i].to_lowercase().contains(&filter))
            .collect()
    }

    fn handle(&mut self, press: Press, page: usize) -> anyhow::Result<Step> {
        let shown = self.shown();
        let last = shown.len().saturating_sub(1);
        match press {
            Press::Enter => return Ok(Step::Done),
            Press::Up => self.row = if self.row == 0 { last } else { self.row - 1 },
            Press::Down => self.row = if self.row >= last { 0 } else { self.row + 1 },
            Press::PageUp => self.row = self.row.saturating_sub(page),
            Press::PageDown => self.row = (self.row + page).min(last),
            Press::Field(Key::Home) => self.row = 0,
            Press::Field(Key::End) => self.row = last,
            Press::Field(Key::Char(' ')) => {
                if let Some(&i) = shown.get(self.row) {
                    self.kept[i] = !self.kept[i];
                }
            }
            Press::Field(Key::Right) => shown.iter().for_each(|&i| self.kept[i] = true),
            Press::Field(Key::Left) => shown.iter().for_each(|&i| self.kept[i] = false),
            Press::Field(key) => {
                if self.filter.apply(key) {
                    self.row = 0;
                }
            }
            Press::Escape | Press::Interrupt => return Err(ended(press)),
            Press::Other => {}
        }
        Ok(Step::Stay)
    }

    /// The lines of the list (the title with the filter, at most `page` suggestions around
    /// the cursor, the help) and the column of the cursor on the first.
    fn lines(&self, page: usize, paint: &Paint) -> (Vec<String>, String) {
        let head = format!("{} {} ", paint.ask(), Self::TITLE);
        let filter = crate::term::visible(&self.filter.text()).into_owned();
        let before = crate::term::visible(&self.filter.before_cursor()).into_owned();
        let mut lines = vec![format!("{head}{filter}")];
        let shown = self.shown();
        let page = page.max(1);
        let first = (self.row + 1).saturating_sub(page);
        for (row, &i) in shown.iter().enumerate().skip(first).take(page) {
            let mark = if self.kept[i] { "[x]" } else { "[ ]" };
            let line = format!("{mark} {}", self.labels[i]);
            lines.push(if row == self.row { paint.current(&line) } else { format!("  {line}") });
        }
        if shown.is_empty() {
            lines.push("  (no suggestion matches the filter)".to_owned());
        }
        lines.push(paint.help(Self::HELP));
        (lines, format!("{} {} {before}", "?", Self::TITLE))
    }

    /// The kept suggestions, in order.
    fn kept(&self) -> Vec<usize> {
        (0..self.labels.len()).filter(|&i| self.kept[i]).collect()
    }
}

/// The error that ends the picker at Esc or Ctrl-C (exit status 2; nothing is printed on
/// standard output).
#[cfg(feature = "picker")]
fn ended(press: Press) -> anyhow::Error {
    match press {
        Press::Interrupt => anyhow::anyhow!("the picker was interrupted (ctrl-c)"),
        _ => anyhow::anyhow!("the picker was cancelled (esc)"),
    }
}

/// Colours of the picker, or none.
#[cfg(feature = "picker")]
struct Paint {
    color: bool,
}

#[cfg(feature = "picker")]
impl Paint {
    fn ask(&self) -> &'static str {
        if self.color { "\x1b[32m?\x1b[0m" } else { "?" }
    }

    fn answered(&self) -> &'static str {
        if self.color { "\x1b[32m>\x1b[0m" } else { ">" }
    }

    fn current(&self, line: &str) -> String {
        if self.color { format!("\x1b[36m> {line}\x1b[0m") } else { format!("> {line}") }
    }

    fn help(&self, text: &str) -> String {
        if self.color { format!("\x1b[2m{text}\x1b[0m") } else { text.to_owned() }
    }

    fn error(&self, text: &str) -> String {
        if self.color { format!("\x1b[31m! {text}\x1b[0m") } else { format!("! {text}") }
    }
}

/// Lets the user keep, drop and edit the suggestions on the terminal.
#[cfg(feature = "picker")]
pub(crate) fn pick(found: Vec<Suggestion>, color: bool) -> anyhow::Result<Vec<Suggestion>> {
    if found.is_empty() {
        return Ok(found);
    }
    let mut screen = screen::Screen::open(Paint { color })?;
    let labels: Vec<String> = found.iter().map(label).collect();
    let mut list = List::new(&labels);
    loop {
        let page = screen.rows().saturating_sub(3).max(1);
        let (lines, cursor) = list.lines(page, &screen.paint);
        screen.draw(&lines, &cursor)?;
        if list.handle(screen.read()?, page)? == Step::Done {
            break;
        }
    }
    let kept = list.kept();
    let names: Vec<&str> = kept.iter().map(|&i| found[i].path.as_str()).collect();
    screen
        .done(&format!("Attach which suggestions? {}", crate::term::visible(&names.join(", "))))?;
    let mut picked: Vec<Suggestion> = kept.iter().map(|&i| found[i].clone()).collect();
    if picked.is_empty() {
        return Ok(picked);
    }
    let edit = screen.ask("Edit line ranges? (y/N)", |answer| {
        match answer.trim().to_ascii_lowercase().as_str() {
            "" | "n" | "no" => Ok(false),
            "y" | "yes" => Ok(true),
            _ => Err("answer y or n".to_owned()),
        }
    })?;
    if edit {
        for s in &mut picked {
            let question = format!(
                "Lines of {} ({}-{})",
                crate::term::visible(&s.path),
                s.lines.start,
                s.lines.end
            );
            let mut edited = s.clone();
            screen.ask(&question, |answer| apply_range(&mut edited, answer))?;
            *s = edited;
        }
    }
    Ok(picked)
}

/// The terminal of the picker: raw mode for as long as it lives, drawing on standard error.
#[cfg(feature = "picker")]
mod screen {
    use std::io::{self, Write};

    use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
    use crossterm::{cursor, queue, terminal};
    use unicode_width::UnicodeWidthChar;

    use super::{Paint, Press, ended};
    use crate::field::{Field, Key};

    pub(super) struct Screen {
        pub(super) paint: Paint,
        out: io::Stderr,
    }

    impl Screen {
        pub(super) fn open(paint: Paint) -> anyhow::Result<Screen> {
            terminal::enable_raw_mode()
                .map_err(|e| anyhow::anyhow!("the picker needs a terminal: {e}"))?;
            Ok(Screen { paint, out: io::stderr() })
        }

        /// The terminal's columns and rows (80 × 24 when it does not say, or says 0).
        fn size(&self) -> (usize, usize) {
            match terminal::size() {
                Ok((c, r)) if c > 0 && r > 0 => (usize::from(c), usize::from(r)),
                _ => (80, 24),
            }
        }

        pub(super) fn rows(&self) -> usize {
            self.size().1
        }

        /// Draws `lines` from the start of the current line down, each cut to the width so
        /// that none wraps, and leaves the cursor on the first line after `before_cursor`.
        pub(super) fn draw(&mut self, lines: &[String], before_cursor: &str) -> io::Result<()> {
            let width = self.size().0.saturating_sub(1).max(1);
            queue!(
                self.out,
                cursor::MoveToColumn(0),
                terminal::Clear(terminal::ClearType::FromCursorDown)
            )?;
            for (n, line) in lines.iter().enumerate() {
                if n > 0 {
                    self.out.write_all(b"\r\n")?;
                }
                self.out.write_all(fit(line, width).as_bytes())?;
            }
            if lines.len() > 1 {
                queue!(
                    self.out,
                    cursor::MoveUp(u16::try_from(lines.len() - 1).unwrap_or(u16::MAX))
                )?;
            }
            let column = columns(before_cursor).min(width);
            queue!(self.out, cursor::MoveToColumn(u16::try_from(column).unwrap_or(u16::MAX)))?;
            self.out.flush()
        }

        /// Replaces what is drawn by one answered line and moves below it.
        pub(super) fn done(&mut self, line: &str) -> io::Result<()> {
            let line = format!("{} {line}", self.paint.answered());
            self.draw(&[line], "")?;
            self.out.write_all(b"\r\n")?;
            self.out.flush()
        }

        /// The next key pressed.
        pub(super) fn read(&mut self) -> io::Result<Press> {
            loop {
                if let Event::Key(key) = event::read()?
                    && key.kind != KeyEventKind::Release
                {
                    return Ok(press(key));
                }
            }
        }

        /// Asks `question` in a field until `check` takes the answer; Esc and Ctrl-C end the
        /// picker.
        pub(super) fn ask<T>(
            &mut self,
            question: &str,
            mut check: impl FnMut(&str) -> Result<T, String>,
        ) -> anyhow::Result<T> {
            let mut field = Field::default();
            let mut error: Option<String> = None;
            loop {
                let head = format!("{} {question} ", self.paint.ask());
                let text = crate::term::visible(&field.text()).into_owned();
                let before = crate::term::visible(&field.before_cursor()).into_owned();
                let mut lines = vec![format!("{head}{text}")];
                lines.extend(error.as_deref().map(|e| self.paint.error(&crate::term::visible(e))));
                self.draw(&lines, &format!("? {question} {before}"))?;
                match self.read()? {
                    Press::Enter => match check(&field.text()) {
                        Ok(answer) => {
                            self.done(&format!("{question} {text}"))?;
                            return Ok(answer);
                        }
                        Err(why) => error = Some(why),
                    },
                    press @ (Press::Escape | Press::Interrupt) => return Err(ended(press)),
                    Press::Field(key) => {
                        field.apply(key);
                    }
                    _ => {}
                }
            }
        }
    }

    impl Drop for Screen {
        fn drop(&mut self) {
            let _ = terminal::disable_raw_mode();
        }
    }

    /// The picker's key for a key event: a chord with Ctrl is handed to the field as such,
    /// never as its letter.
    fn press(key: KeyEvent) -> Press {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('c') if ctrl => Press::Interrupt,
            KeyCode::Char('p') if ctrl => Press::Up,
            KeyCode::Char('n') if ctrl => Press::Down,
            KeyCode::Char(c) if ctrl => Press::Field(Key::Ctrl(c.to_ascii_lowercase())),
            KeyCode::Char(_) if alt => Press::Other,
            KeyCode::Char(c) => Press::Field(Key::Char(c)),
            KeyCode::Backspace if ctrl || alt => Press::Field(Key::WordBackspace),
            KeyCode::Backspace => Press::Field(Key::Backspace),
            KeyCode::Delete => Press::Field(Key::Delete),
            KeyCode::Left => Press::Field(Key::Left),
            KeyCode::Right => Press::Field(Key::Right),
            KeyCode::Home => Press::Field(Key::Home),
            KeyCode::End => Press::Field(Key::End),
            KeyCode::Up => Press::Up,
            KeyCode::Down => Press::Down,
            KeyCode::PageUp => Press::PageUp,
            KeyCode::PageDown => Press::PageDown,
            KeyCode::Enter => Press::Enter,
            KeyCode::Esc => Press::Escape,
            _ => Press::Other,
        }
    }

    /// How many columns `text` takes (escape sequences of the paint take none).
    fn columns(text: &str) -> usize {
        let mut n = 0;
        let mut escape = false;
        for c in text.chars() {
            match (escape, c) {
                (false, '\x1b') => escape = true,
                (true, 'm') => escape = false,
                (true, _) => {}
                (false, c) => n += c.width().unwrap_or(0),
            }
        }
        n
    }

    /// `line` cut to `width` columns, its paint's reset kept.
    fn fit(line: &str, width: usize) -> String {
        if columns(line) <= width {
            return line.to_owned();
        }
        let mut out = String::new();
        let (mut n, mut escape) = (0, false);
        for c in line.chars() {
            match (escape, c) {
                (false, '\x1b') => escape = true,
                (true, 'm') => escape = false,
                (true, _) => {}
                (false, c) => {
                    let w = c.width().unwrap_or(0);
                    if n + w > width {
                        break;
                    }
                    n += w;
                }
            }
            out.push(c);
        }
        if line.contains('\x1b') {
            out.push_str("\x1b[0m");
        }
        out
    }
}

/// Without the feature: [`available`] refused the run before.
#[cfg(not(feature = "picker"))]
pub(crate) fn pick(_: Vec<Suggestion>, _: bool) -> anyhow::Result<Vec<Suggestion>> {
    available().map(|()| Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suggestion(path: &str, start: u32, end: u32) -> Suggestion {
        let json = serde_json::json!({"path": path, "lines": {"start": start, "end": end}, "score": 1.0, "summary": "fn a", "why": []});
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn ranges() {
        let mut s = suggestion("a.rs", 1, 5);
        apply_range(&mut s, "10-20").unwrap();
        assert_eq!((s.lines.start, s.lines.end), (10, 20));
        apply_range(&mut s, "L7").unwrap();
        assert_eq!((s.lines.start, s.lines.end), (7, 7));
        apply_range(&mut s, "").unwrap();
        assert_eq!((s.lines.start, s.lines.end), (7, 7));
        assert!(apply_range(&mut s, "9-3").is_err());
        assert!(apply_range(&mut s, "x").is_err());
        assert_eq!(label(&s), "a.rs:7-7  fn a");
    }

    #[cfg(feature = "picker")]
    #[test]
    fn the_list_keeps_drops_and_filters() {
        let labels: Vec<String> =
            ["src/retry.rs:1-4", "src/backoff.rs:1-2", "README.md:1-1"].map(String::from).into();
        let mut list = List::new(&labels);
        let paint = Paint { color: false };
        let press = |list: &mut List<'_>, p: Press| list.handle(p, 10).unwrap();
        press(&mut list, Press::Down);
        press(&mut list, Press::Field(Key::Char(' ')));
        assert_eq!(list.kept(), [0, 2]);
        for c in "zz".chars() {
            press(&mut list, Press::Field(Key::Char(c)));
        }
        let (lines, cursor) = list.lines(10, &paint);
        assert_eq!(lines[1], "  (no suggestion matches the filter)");
        assert!(cursor.ends_with("confirms) zz"), "{cursor}");
        press(&mut list, Press::Field(Key::Ctrl('u')));
        let (lines, _) = list.lines(10, &paint);
        assert_eq!(
            lines[1..4],
            ["> [x] src/retry.rs:1-4", "  [ ] src/backoff.rs:1-2", "  [x] README.md:1-1"]
        );
        for c in "read".chars() {
            press(&mut list, Press::Field(Key::Char(c)));
        }
        press(&mut list, Press::Field(Key::Left));
        assert_eq!(list.kept(), [0]);
        press(&mut list, Press::Field(Key::End));
        assert_eq!(press(&mut list, Press::Enter), Step::Done);
        let err = list.handle(Press::Escape, 10).unwrap_err().to_string();
        assert_eq!(err, "the picker was cancelled (esc)");
    }

    /// A long list shows a page around the cursor; the cursor wraps from the top to the end.
    #[cfg(feature = "picker")]
    #[test]
    fn a_long_list_is_shown_a_page_at_a_time() {
        let labels: Vec<String> = (1..=30).map(|n| format!("f{n}.rs:1-1")).collect();
        let mut list = List::new(&labels);
        list.handle(Press::Up, 5).unwrap();
        let (lines, _) = list.lines(5, &Paint { color: false });
        assert_eq!(lines.len(), 7);
        assert_eq!(lines[5], "> [x] f30.rs:1-1");
        list.handle(Press::PageUp, 5).unwrap();
        assert_eq!(list.row, 24);
    }

    #[test]
    fn a_label_shows_what_a_summary_hides() {
        let mut s = suggestion("a\u{1b}[2J.rs", 1, 2);
        s.summary = "fn b\u{202e}".into();
        assert_eq!(label(&s), "a\\u{1b}[2J.rs:1-2  fn b\\u{202E}");
    }
}
