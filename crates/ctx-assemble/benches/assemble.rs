//! Assembly throughput, each figure beside a baseline measured in the same run.
//!
//! - `directory`: `@[corpus/]` over a few thousand real Rust source files (copied at start-up
//!   from the cargo registry, or generated when there is none), limits off, output to a sink;
//!   beside `cat` of the same files to /dev/null and `std::fs::read` of them.
//! - `directory_tokens`: the same with o200k token counting on.
//! - `many_includes`: one document of 10 000 includes of small files.
//! - `rules_cold` / `rules_warm`: a 200-file rule set assembled by a new assembler each time,
//!   and again and again by one assembler whose cache is warm.
//! - `sanitize`: the hidden-text check alone over clean text held in memory: the corpus
//!   (mostly ASCII source), French prose (accents, no-break spaces and guillemets led by
//!   0xC2), Chinese prose (full-width commas led by 0xEF), and a worst case where every
//!   character has a lead byte the check looks at.

#![allow(clippy::disallowed_methods)] // The benchmark builds its corpus on disk.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, LazyLock};

use ctx_assemble::{Assembler, Options};
use ctx_fs::Sandbox;
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

struct Corpus {
    _dir: tempfile::TempDir,
    root: PathBuf,
    files: Vec<PathBuf>,
    bytes: u64,
}

const CORPUS_FILES: usize = 3000;

/// Copies up to 3000 `.rs` files of the cargo registry into `root/corpus/`, or generates
/// them when the registry is not there.
fn build_corpus() -> Corpus {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let corpus = root.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let mut sources = Vec::new();
    if let Some(home) = home {
        collect_rs(&home.join("registry/src"), &mut sources, CORPUS_FILES);
    }
    sources.sort();
    let mut files = Vec::new();
    let mut bytes = 0;
    for (i, source) in sources.iter().enumerate() {
        let Ok(content) = std::fs::read(source) else { continue };
        if content.len() > 256 * 1024 || std::str::from_utf8(&content).is_err() {
            continue;
        }
        let sub = corpus.join(format!("d{:02}", i % 40));
        std::fs::create_dir_all(&sub).unwrap();
        let path = sub.join(format!("f{i:04}.rs"));
        std::fs::write(&path, &content).unwrap();
        bytes += content.len() as u64;
        files.push(path);
    }
    if files.len() < 100 {
        for i in 0..CORPUS_FILES {
            let sub = corpus.join(format!("d{:02}", i % 40));
            std::fs::create_dir_all(&sub).unwrap();
            let path = sub.join(format!("f{i:04}.rs"));
            let content: String =
                (0..120).map(|l| format!("fn f{i}_{l}() -> u32 {{ {l} }}\n")).collect();
            bytes += content.len() as u64;
            std::fs::write(&path, content).unwrap();
            files.push(path);
        }
    }
    files.sort();
    std::fs::write(root.join("dir.md"), "@[corpus/]\n").unwrap();
    // 10 000 includes of 500 small files.
    let small = root.join("small");
    std::fs::create_dir_all(&small).unwrap();
    for i in 0..500 {
        std::fs::write(small.join(format!("s{i}.txt")), format!("small file {i}\n")).unwrap();
    }
    let many: String = (0..10_000).map(|i| format!("@[small/s{}.txt]\n", i % 500)).collect();
    std::fs::write(root.join("many.md"), many.as_str()).unwrap();
    // The same 10 000 includes after 900 000 empty lines: an item's cost must not grow with
    // its place in the document.
    std::fs::write(root.join("deep.md"), format!("{}{many}", "\n".repeat(900_000))).unwrap();
    // A rule set of 200 Markdown files, each with front matter and a range include.
    let rules = root.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let mut main = String::from("---\nDescription: bench rules\n---\n");
    for i in 0..200 {
        let body = format!(
            "---\nparams: [p{i}]\n---\n# Rule {i}\n\n@{{ifdef STRICT}}\nstrict {i}\n@{{endif}}\nKeep lines short.\n@[../small/s{}.txt:1]\n",
            i % 500
        );
        std::fs::write(rules.join(format!("r{i:03}.md")), body).unwrap();
        main.push_str(&format!("@[rules/r{i:03}.md]\n"));
    }
    std::fs::write(root.join("rules.md"), main).unwrap();
    // The sandbox caches no file modified or changed in the last two seconds.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    Corpus { _dir: dir, root, files, bytes }
}

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

static CORPUS: LazyLock<Corpus> = LazyLock::new(build_corpus);

fn sandbox(cache: bool) -> Arc<Sandbox> {
    let mut limits = ctx_fs::Limits::default();
    limits.max_file_bytes = 1 << 30;
    let mut builder = Sandbox::builder(CORPUS.root.to_str().unwrap()).limits(limits);
    if !cache {
        builder = builder.cache_capacity(0);
    }
    Arc::new(builder.open(cap_std::ambient_authority()).unwrap())
}

fn unlimited(tokens: bool) -> Options {
    let mut options = Options::default();
    options.limits.max_files = 0;
    options.limits.max_lines = 0;
    options.limits.max_output_bytes = 0;
    options.limits.max_includes = 0;
    options.count_tokens = tokens;
    options
}

#[divan::bench]
fn cat_baseline(bencher: Bencher<'_, '_>) {
    let corpus = &*CORPUS;
    bencher.counter(BytesCount::new(corpus.bytes)).bench(|| {
        for chunk in corpus.files.chunks(1000) {
            let status =
                Command::new("cat").args(chunk).stdout(Stdio::null()).status().expect("cat runs");
            assert!(status.success());
        }
    });
}

#[divan::bench]
fn read_baseline(bencher: Bencher<'_, '_>) {
    let corpus = &*CORPUS;
    bencher.counter(BytesCount::new(corpus.bytes)).bench(|| {
        let mut sink = std::io::sink();
        for file in &corpus.files {
            let bytes = std::fs::read(file).unwrap();
            std::io::Write::write_all(&mut sink, &bytes).unwrap();
        }
    });
}

#[divan::bench]
fn directory(bencher: Bencher<'_, '_>) {
    let corpus = &*CORPUS;
    let asm = Assembler::new(sandbox(false), unlimited(false));
    bencher.counter(BytesCount::new(corpus.bytes)).bench(|| {
        let assembly = asm.assemble_file_to("dir.md", &mut std::io::sink()).unwrap();
        black_box(assembly.stats.bytes)
    });
}

#[divan::bench(sample_count = 10)]
fn directory_tokens(bencher: Bencher<'_, '_>) {
    let corpus = &*CORPUS;
    let asm = Assembler::new(sandbox(false), unlimited(true));
    bencher.counter(BytesCount::new(corpus.bytes)).bench(|| {
        let assembly = asm.assemble_file_to("dir.md", &mut std::io::sink()).unwrap();
        black_box(assembly.stats.tokens)
    });
}

/// The same expansion under a token budget of about half its tokens: what keeping a budget
/// costs (bytes stand for tokens while they fit, then each file is counted, in parallel).
#[divan::bench(sample_count = 10)]
fn directory_budget(bencher: Bencher<'_, '_>) {
    let corpus = &*CORPUS;
    let mut options = unlimited(false);
    options.limits.max_tokens = (corpus.bytes / 8) as usize;
    let asm = Assembler::new(sandbox(false), options);
    bencher.counter(BytesCount::new(corpus.bytes)).bench(|| {
        let assembly = asm.assemble_file_to("dir.md", &mut std::io::sink()).unwrap();
        black_box(assembly.stats.bytes)
    });
}

#[divan::bench(sample_count = 20)]
fn many_includes(bencher: Bencher<'_, '_>) {
    let asm = Assembler::new(sandbox(false), unlimited(false));
    bencher.bench(|| black_box(asm.assemble_file("many.md").unwrap().references.len()));
}

#[divan::bench(sample_count = 20)]
fn many_includes_deep(bencher: Bencher<'_, '_>) {
    let asm = Assembler::new(sandbox(false), unlimited(false));
    bencher.bench(|| black_box(asm.assemble_file("deep.md").unwrap().references.len()));
}

#[divan::bench(sample_count = 20)]
fn rules_cold(bencher: Bencher<'_, '_>) {
    LazyLock::force(&CORPUS);
    bencher.bench(|| {
        let asm = Assembler::new(sandbox(true), Options::default());
        black_box(asm.assemble_file("rules.md").unwrap().params.len())
    });
}

#[divan::bench(sample_count = 20)]
fn rules_warm(bencher: Bencher<'_, '_>) {
    let asm = Assembler::new(sandbox(true), Options::default());
    asm.assemble_file("rules.md").unwrap();
    bencher.bench(|| black_box(asm.assemble_file("rules.md").unwrap().params.len()));
}

/// Clean text of four kinds, each about 4 MiB, for [`sanitize`].
static TEXTS: LazyLock<[(&str, String); 4]> = LazyLock::new(|| {
    let size = 4 << 20;
    let mut source = String::new();
    // Files with a character the check makes visible are left out, so that the text is
    // clean for every version of the check.
    let hidden = |c: char| {
        matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
            || matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            || matches!(c, '\u{e0000}'..='\u{e007f}')
    };
    for file in &CORPUS.files {
        let text = std::fs::read_to_string(file).unwrap();
        if !text.chars().any(hidden) {
            source.push_str(&text);
        }
        if source.len() >= size {
            break;
        }
    }
    let repeat = |line: &str| line.repeat(size / line.len() + 1);
    [
        ("source", source),
        (
            "french",
            repeat(
                "L\u{2019}été dernier, nous sommes allés à la mer\u{a0}: «\u{a0}quelle chaleur\u{a0}!\u{a0}» disait-il, à 35\u{b0}C.\n",
            ),
        ),
        (
            "chinese",
            repeat(
                "这是一个用来测试全角标点处理速度的中文句子，我们在每一行里放一个逗号和一个句号。\n",
            ),
        ),
        // The worst case: a character with a marked lead byte every few bytes.
        ("dense", repeat("\u{a0}«\u{b0}»\u{2014}\u{2019}\u{ff0c}\u{ff08}\u{ff09}½£\n")),
    ]
});

#[divan::bench(args = ["source", "french", "chinese", "dense"], sample_count = 50)]
fn sanitize(bencher: Bencher<'_, '_>, kind: &str) {
    let text = &TEXTS.iter().find(|(k, _)| *k == kind).unwrap().1;
    bencher.counter(BytesCount::new(text.len())).bench(|| {
        let clean = ctx_assemble::sanitize::sanitize(black_box(text));
        assert!(!clean.changed());
        black_box(clean.text.len())
    });
}
