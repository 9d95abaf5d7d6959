//! The integration tests of ctx-preprocess: the table of directive cases, the streaming API
//! with a recursing caller, and the differential property test against a reference
//! interpreter.

mod props;
mod stream;
mod table;

use ctx_preprocess::{Macros, preprocess};
use ctx_syntax::Options;

/// Preprocesses `input` with the macros `defs` (`NAME=VALUE` each) and compares the output
/// text and the diagnostics, written as `CODE@line:column` separated by spaces.
#[track_caller]
pub(crate) fn check(defs: &[&str], input: &str, text: &str, diagnostics: &str) {
    let mut macros = Macros::new();
    for def in defs {
        macros.define_arg(def).unwrap();
    }
    let out = preprocess(input, &Options::default(), &mut macros);
    let got: Vec<String> =
        out.diagnostics.iter().map(|d| format!("{}@{}", d.code, d.pos)).collect();
    assert_eq!(out.text, text, "output text of {input:?}");
    assert_eq!(got.join(" "), diagnostics, "diagnostics of {input:?}: {:#?}", out.diagnostics);
}
