//! The invariants of a preprocessing run, asserted; what the fuzzer and the property tests
//! run.

use ctx_syntax::{Code, Options, Span, scan_with};

use crate::engine::{Event, Preprocessor};
use crate::macros::Macros;

/// Preprocesses `text` under several option sets and macro contexts and panics if an invariant
/// does not hold: the events' spans lie inside the text, in order and without overlap, and
/// each borrowed slice is the text of its span; diagnostics lie inside the text and carry only
/// the preprocessor's and the scanner's codes; with directives switched off, the events give
/// back the text byte for byte; running twice gives the same events.
pub fn check(text: &str) {
    let all = Options::default();
    let mut defined = Macros::new();
    for name in ["A", "B", "C", "X", "MODE", "DEBUG"] {
        defined.define(name, "a");
    }
    for options in [all, Options { code_skip: false, ..all }, Options { directives: false, ..all }]
    {
        for macros in [&Macros::new(), &defined] {
            let first = run(text, &options, &mut macros.clone());
            let again = run(text, &options, &mut macros.clone());
            assert_eq!(first, again, "preprocessing must be deterministic");
            check_events(text, &first);
            if !options.directives {
                let mut raw = String::new();
                for event in &first {
                    match event {
                        Event::Text { text, .. } | Event::Escape { raw: text, .. } => {
                            raw.push_str(text);
                        }
                        Event::Request(r) => raw.push_str(r.span.of(text)),
                        Event::Substitution { .. } => panic!("a substitution without directives"),
                        Event::Diagnostic(_) => {}
                    }
                }
                assert_eq!(raw, text, "without directives the events must give back the text");
            }
        }
    }
}

fn run<'a>(text: &'a str, options: &Options, macros: &mut Macros) -> Vec<Event<'a>> {
    let scan = scan_with(text, options);
    Preprocessor::new(&scan).events(macros).collect()
}

fn check_events(text: &str, events: &[Event<'_>]) {
    let mut at = 0;
    let mut advance = |span: Span, what: &str| {
        assert!(span.start >= at, "{what} at {span:?} overlaps or precedes the previous event");
        assert!(
            span.start < span.end && span.end <= text.len(),
            "{what} at {span:?} is out of bounds"
        );
        at = span.end;
    };
    for event in events {
        match event {
            Event::Text { text: t, span } => {
                advance(*span, "text");
                assert_eq!(span.of(text), *t, "text event and its span differ");
            }
            Event::Escape { raw, unescaped, span } => {
                advance(*span, "escape");
                assert_eq!(span.of(text), *raw, "escape event and its span differ");
                assert!(raw.ends_with(unescaped), "an escape's output is a suffix of its source");
            }
            Event::Substitution { name, span, .. } => {
                advance(*span, "substitution");
                assert!(span.of(text).contains(name), "a substitution names its macro");
            }
            Event::Request(request) => advance(request.span, "request"),
            Event::Diagnostic(d) => {
                assert!(d.span.start <= d.span.end && d.span.end <= text.len());
                assert!(
                    matches!(
                        d.code,
                        Code::Directive
                            | Code::Regex
                            | Code::Budget
                            | Code::UndefinedMacro
                            | Code::Unterminated
                    ),
                    "unexpected code {}",
                    d.code
                );
                assert!(
                    !d.message.is_empty() && !d.message.ends_with('.'),
                    "messages are lower-case without a final period: {:?}",
                    d.message
                );
            }
        }
    }
}
