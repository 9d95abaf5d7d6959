//! Scanner throughput beside a plain `memchr` pass over the same bytes, in the same run.
//!
//! `prose`: 16 MB of generated prose with a mention every ~4 KB and an inline code span
//! every ~2 KB. `dense`: 1 MB of rule-document lines, each an include, a tool call or a
//! directive. The `memchr` benches count the `@` bytes of the same texts: the floor that any
//! scanner looking for `@` has to pay.

use std::sync::LazyLock;

use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// A small deterministic generator, so every run scans the same bytes.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

const WORDS: [&str; 16] = [
    "the",
    "context",
    "assembler",
    "reads",
    "files",
    "through",
    "a",
    "sandbox",
    "and",
    "expands",
    "references",
    "into",
    "prompts",
    "for",
    "agents",
    "quickly",
];

static PROSE: LazyLock<String> = LazyLock::new(|| {
    let mut rng = Lcg(7);
    let mut text = String::with_capacity(16 << 20);
    let mut since_mention = 0;
    let mut since_code = 0;
    while text.len() < 16 << 20 {
        let word = WORDS[rng.next() % WORDS.len()];
        text.push_str(word);
        since_mention += word.len();
        since_code += word.len();
        if since_mention > 4096 {
            text.push_str(" @src/module/file.rs#L10-20");
            since_mention = 0;
        }
        if since_code > 2048 {
            text.push_str(" `code span`");
            since_code = 0;
        }
        text.push(if rng.next().is_multiple_of(12) { '\n' } else { ' ' });
    }
    text
});

static DENSE: LazyLock<String> = LazyLock::new(|| {
    let lines = [
        "@[common/style.md]\n",
        "@[src/api.rs:10:40]\n",
        "@{ifdef DEBUG}\n",
        "Use @{MODE} mode with @[docs/guide.md#getting-started] here.\n",
        "@[grep{\"pattern\":\"TODO\",\"glob\":\"*.rs\"}]\n",
        "@{elif MODE MATCHES \"^f\"}\n",
        "@{define LEVEL, \"3\"}\n",
        "@{endif}\n",
    ];
    let mut rng = Lcg(11);
    let mut text = String::with_capacity(1 << 20);
    while text.len() < 1 << 20 {
        text.push_str(lines[rng.next() % lines.len()]);
    }
    text
});

fn input(name: &str) -> &'static str {
    match name {
        "prose" => &PROSE,
        _ => &DENSE,
    }
}

#[divan::bench(args = ["prose", "dense"])]
fn scan(bencher: Bencher<'_, '_>, name: &str) {
    let text = input(name);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| black_box(ctx_syntax::scan(black_box(text))).items.len());
}

#[divan::bench(args = ["prose", "dense"])]
fn memchr(bencher: Bencher<'_, '_>, name: &str) {
    let text = input(name);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| memchr::memchr_iter(b'@', black_box(text).as_bytes()).count());
}
