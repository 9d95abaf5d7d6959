//! The terminal picker of `ctx suggest --interactive` (cargo feature `picker`, on by default):
//! confirm or drop each suggestion, then edit the ranges kept.

use ctx::Suggestion;

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

/// Lets the user keep, drop and edit the suggestions on the terminal.
#[cfg(feature = "picker")]
pub(crate) fn pick(found: Vec<Suggestion>, color: bool) -> anyhow::Result<Vec<Suggestion>> {
    use inquire::ui::RenderConfig;
    use inquire::{Confirm, MultiSelect, Text};
    if found.is_empty() {
        return Ok(found);
    }
    // The settings' colour rule (NO_COLOR set and not empty, --color), not inquire's own.
    let config = if color { RenderConfig::default_colored() } else { RenderConfig::empty() };
    inquire::set_global_render_config(config);
    let labels: Vec<String> = found.iter().map(label).collect();
    let all: Vec<usize> = (0..labels.len()).collect();
    let chosen =
        MultiSelect::new("Attach which suggestions? (space toggles, enter confirms)", labels)
            .with_default(&all)
            .raw_prompt()?;
    let mut picked: Vec<Suggestion> = chosen.iter().map(|o| found[o.index].clone()).collect();
    if !picked.is_empty() && Confirm::new("Edit line ranges?").with_default(false).prompt()? {
        for s in &mut picked {
            let current = format!("{}-{}", s.lines.start, s.lines.end);
            loop {
                let answer = Text::new(&format!("Lines of {}", crate::term::visible(&s.path)))
                    .with_default(&current)
                    .prompt()?;
                match apply_range(s, &answer) {
                    Ok(()) => break,
                    Err(why) => eprintln_safe(&why),
                }
            }
        }
    }
    Ok(picked)
}

#[cfg(feature = "picker")]
fn eprintln_safe(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "ctx: {}", crate::term::visible(message));
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

    #[test]
    fn a_label_shows_what_a_summary_hides() {
        let mut s = suggestion("a\u{1b}[2J.rs", 1, 2);
        s.summary = "fn b\u{202e}".into();
        assert_eq!(label(&s), "a\\u{1b}[2J.rs:1-2  fn b\\u{202E}");
    }
}
