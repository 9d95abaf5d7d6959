//! Token counting throughput over text held in memory, beside the tokenizer ours replaced.
//!
//! The text is up to 4 MiB of real Rust sources (from the cargo registry, or generated when
//! there is none), one text per file, as the assembler counts them:
//! - `count`: each file counted in turn on one thread;
//! - `count_many`: the same files counted together, on every core;
//! - `bpe_openai`: each file counted in turn by `bpe-openai`, the baseline.

#![allow(clippy::disallowed_methods)] // The benchmark reads its text from the cargo registry.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// How many bytes of sources the benches count.
const SIZE: usize = 4 << 20;

/// The texts, one a file, and their size in bytes.
static TEXTS: LazyLock<(Vec<String>, usize)> = LazyLock::new(|| {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let mut paths = Vec::new();
    if let Some(home) = home {
        collect_rs(&home.join("registry/src"), &mut paths, 3000);
    }
    paths.sort();
    let mut texts = Vec::new();
    let mut bytes = 0;
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        if text.len() > 256 * 1024 {
            continue;
        }
        bytes += text.len();
        texts.push(text);
        if bytes >= SIZE {
            break;
        }
    }
    if bytes < SIZE / 2 {
        for i in 0.. {
            let text: String =
                (0..120).map(|l| format!("fn f{i}_{l}() -> u32 {{ {l} }}\n")).collect();
            bytes += text.len();
            texts.push(text);
            if bytes >= SIZE {
                break;
            }
        }
    }
    (texts, bytes)
});

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>, max: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if out.len() >= max {
            return;
        }
        if path.is_dir() {
            collect_rs(&path, out, max);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[divan::bench(sample_count = 20)]
fn count(bencher: Bencher<'_, '_>) {
    let (texts, bytes) = &*TEXTS;
    bencher
        .counter(BytesCount::new(*bytes))
        .bench(|| texts.iter().map(|text| ctx_tokens::count(black_box(text))).sum::<usize>());
}

#[divan::bench(sample_count = 20)]
fn count_many(bencher: Bencher<'_, '_>) {
    let (texts, bytes) = &*TEXTS;
    bencher
        .counter(BytesCount::new(*bytes))
        .bench(|| ctx_tokens::count_many(black_box(texts)).into_iter().sum::<usize>());
}

#[divan::bench(sample_count = 20)]
fn bpe_openai(bencher: Bencher<'_, '_>) {
    let (texts, bytes) = &*TEXTS;
    let bpe = bpe_openai::o200k_base();
    bencher
        .counter(BytesCount::new(*bytes))
        .bench(|| texts.iter().map(|text| bpe.count(black_box(text))).sum::<usize>());
}
