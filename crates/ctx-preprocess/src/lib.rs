//! The ctx preprocessor: evaluates `@{...}` directives (`define`, `undef`, `ifdef`, `ifndef`,
//! `if`, `elif`, `else`, `endif`, `include`, substitution) over the items that `ctx-syntax`
//! scans, and tells the caller which text, includes and mentions are active.
//!
//! Properties:
//! - no I/O: includes and mentions come out as [`Request`]s for the caller to resolve, so a
//!   file inside an inactive branch is never opened;
//! - streaming: a [`Preprocessor`] yields [`Event`]s in document order, and takes the
//!   [`Macros`] on every call, so the caller can recurse into an include between two events
//!   with the same macros (they flow in document order, as in C);
//! - zero-copy: text events borrow from the scanned text;
//! - total: malformed directives never panic; they give diagnostics with stable codes
//!   (`E_DIRECTIVE`, `E_REGEX`, `W_UNDEFINED_MACRO`) and the recovery of the specification;
//! - bounded: a regular expression is compiled once per [`Macros`] and under a size limit, so
//!   a hostile pattern is `E_REGEX`, not a stall.
//!
//! The main entry points are [`Preprocessor`] for callers that resolve includes, and
//! [`preprocess`] for those that do not; [`check`] asserts the invariants above and is what
//! the fuzzer and the property tests call.
//!
//! The language is described for users in `docs/preprocessor.md`.
//!
//! # Example
//!
//! ```
//! use ctx_preprocess::{Macros, preprocess};
//! use ctx_syntax::Options;
//!
//! let text = "@{define MODE, \"fast\"}\n@{if MODE IS \"fast\"}\nGo @{MODE}.\n@{else}\nWait.\n@{endif}\n";
//! let mut macros = Macros::new();
//! let out = preprocess(text, &Options::default(), &mut macros);
//! assert_eq!(out.text, "Go fast.\n");
//! assert!(out.diagnostics.is_empty());
//! assert_eq!(macros.get("MODE"), Some("fast"));
//! ```

mod check;
mod engine;
mod macros;

pub use check::check;
pub use engine::{Event, Events, Preprocessor, Request, RequestKind};
pub use macros::{Error, ErrorKind, Macros, is_macro_name};

use ctx_syntax::{Diagnostic, Options};

/// The result of [`preprocess`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preprocessed<'a> {
    /// The output text. Escapes are resolved as for inline output, substitutions are replaced
    /// by their values, and every active request is left as written in the source.
    pub text: String,
    /// The scan's diagnostics and the preprocessor's, in the order the events gave them.
    pub diagnostics: Vec<Diagnostic>,
    /// The active includes, mentions and tool calls, in document order.
    pub requests: Vec<Request<'a>>,
}

/// Scans and preprocesses one text without resolving anything: the simple entry point for
/// tests and for callers that do not recurse.
pub fn preprocess<'a>(text: &'a str, options: &Options, macros: &mut Macros) -> Preprocessed<'a> {
    let scan = ctx_syntax::scan_with(text, options);
    let mut out = Preprocessed {
        text: String::with_capacity(text.len()),
        diagnostics: Vec::new(),
        requests: Vec::new(),
    };
    let mut pre = Preprocessor::new(&scan);
    while let Some(event) = pre.next_event(macros) {
        match event {
            Event::Text { text, .. } => out.text.push_str(text),
            Event::Escape { unescaped, .. } => out.text.push_str(unescaped),
            Event::Substitution { value, .. } => out.text.push_str(&value),
            Event::Request(request) => {
                out.text.push_str(request.span.of(text));
                out.requests.push(request);
            }
            Event::Diagnostic(d) => out.diagnostics.push(d),
        }
    }
    out
}
