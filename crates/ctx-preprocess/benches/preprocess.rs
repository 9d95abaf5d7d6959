//! Preprocessor throughput on a 1 MB document dense with directives and substitutions,
//! beside the scan alone in the same run: `cargo bench -p ctx-preprocess`.

use std::sync::LazyLock;

use ctx_preprocess::{Macros, Preprocessor, preprocess};
use ctx_syntax::Options;
use divan::Bencher;
use divan::counter::BytesCount;

fn main() {
    divan::main();
}

/// One block of the document: every directive, conditions true and false, substitutions
/// inline and on their own lines, CRLF and LF, and some plain prose between them.
const BLOCK: &str = "@{define TITLE, \"Section \\u00a7 title\"}\n\
# @{TITLE}\n\
@{ifdef DEBUG}\n\
Debug notes for @{TITLE}: never shown.\n\
@{else}\n\
Release notes for @{TITLE} in @{MODE} mode.\n\
@{endif}\n\
  @{if MODE IS \"fast\"}\r\n\
\tFast path: @{MODE}, skip the slow checks.\r\n\
  @{elif MODE MATCHES \"^sl(ow)?$\"}\r\n\
\tSlow path.\r\n\
  @{else}\r\n\
\tUnknown mode @{MODE}.\r\n\
  @{endif}\r\n\
@{ifndef QUIET}\n\
@{if TITLE CONTAINS \"title\"}\n\
@{if MODE DOESNT_MATCH \"\\\\d+\"}\n\
Nested three deep, all active: @{TITLE} / @{MODE}.\n\
@{endif}\n\
@{endif}\n\
@{endif}\n\
An inline @{ifdef X}x@{else}y@{endif} choice, and a value @{MODE} in running prose, \
with `code @{MODE}` left alone.\n\
Plain prose without any directive at all, long enough to look like a paragraph of a \
rule document that someone wrote by hand.\n\
@{undef TITLE}\n\n";

static DOC: LazyLock<String> = LazyLock::new(|| {
    let mut doc = String::with_capacity(1 << 20);
    while doc.len() < 1 << 20 {
        doc.push_str(BLOCK);
    }
    doc
});

fn macros() -> Macros {
    let mut macros = Macros::new();
    macros.define("MODE", "fast");
    macros
}

/// The scanner alone, for comparison.
#[divan::bench]
fn scan(bencher: Bencher) {
    let doc = DOC.as_str();
    bencher
        .counter(BytesCount::of_str(doc))
        .bench(|| ctx_syntax::scan(divan::black_box(doc)).items.len());
}

/// Scan and preprocess into an output string, as [`preprocess`] does.
#[divan::bench]
fn scan_and_preprocess(bencher: Bencher) {
    let doc = DOC.as_str();
    bencher.counter(BytesCount::of_str(doc)).bench(|| {
        let mut macros = macros();
        let out = preprocess(divan::black_box(doc), &Options::default(), &mut macros);
        assert!(out.diagnostics.is_empty());
        out.text.len()
    });
}

/// The preprocessor alone over a scan made beforehand, events counted but not written.
#[divan::bench]
fn events_only(bencher: Bencher) {
    let doc = DOC.as_str();
    let scan = ctx_syntax::scan(doc);
    bencher.counter(BytesCount::of_str(doc)).bench(|| {
        let mut macros = macros();
        Preprocessor::new(divan::black_box(&scan)).events(&mut macros).count()
    });
}
