//! Builds the o200k rank table (src/table.rs) from OpenAI's published ranks,
//! data/o200k_base.tiktoken.gz, into `OUT_DIR/o200k.table`.
//!
//! The source is one `base64-token rank` line per token; the table is laid out to be used
//! in place by the binary, so a run that counts tokens pays no start-up for it.

#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::io::Read;
use std::path::PathBuf;
use std::{env, fs};

#[path = "src/table.rs"]
#[allow(dead_code)]
mod table;

fn main() {
    let source = "data/o200k_base.tiktoken.gz";
    println!("cargo::rerun-if-changed={source}");
    println!("cargo::rerun-if-changed=src/table.rs");
    counter_revision(source);
    let gz = fs::read(source).expect("read the o200k ranks");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut text).expect("gunzip the ranks");

    let mut tokens: Vec<Vec<u8>> = Vec::with_capacity(table::TOKENS);
    for (line_no, line) in text.lines().filter(|l| !l.is_empty()).enumerate() {
        let (token, rank) = line.split_once(' ').expect("a `token rank` line");
        let rank: usize = rank.parse().expect("a decimal rank");
        assert_eq!(rank, line_no, "ranks are consecutive from 0");
        let token = base64(token);
        assert!(token.len() <= table::MAX_TOKEN_LEN, "token {rank} is longer than the maximum");
        tokens.push(token);
    }
    assert_eq!(tokens.len(), table::TOKENS);

    // The hash table is laid out here, in rank order as the first count will, so that each
    // token's distance from its home slot is known and fits a byte (a bad hash would show
    // here long before it shows in counting speed).
    let mut slots = vec![table::EMPTY; table::SLOTS];
    let mut probes = Vec::with_capacity(tokens.len());
    for (rank, token) in tokens.iter().enumerate() {
        let h = table::hash(token);
        let mut i = table::home(h);
        let mut probe = 0;
        while slots[i] != table::EMPTY {
            i = (i + 1) & (table::SLOTS - 1);
            probe += 1;
        }
        probes.push(u8::try_from(probe).expect("the hash spreads o200k: probes under 256"));
        slots[i] = table::tag(h) | rank as u32;
    }

    let mut out = Vec::with_capacity(2 * tokens.len() + tokens.iter().map(Vec::len).sum::<usize>());
    for token in &tokens {
        out.push(u8::try_from(token.len()).expect("a token fits its length in a byte"));
    }
    out.extend_from_slice(&probes);
    for token in &tokens {
        out.extend_from_slice(token);
    }
    let path = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(path.join("o200k.table"), out).expect("write the table");
}

/// Decodes standard, padded base64.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {text:?}"),
        }
    };
    let text = text.as_bytes();
    assert!(text.len().is_multiple_of(4), "unpadded base64: {text:?}");
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for quad in text.chunks_exact(4) {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            n = (n << 6) | value(c);
        }
        n <<= 6 * pad as u32;
        let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    out
}

/// Names the counter that this build makes, for the counts remembered across runs
/// (src/known.rs): FNV-1a over the ranks and every source file the counts come from, so that
/// counts taken by one counter are never read by another.
fn counter_revision(ranks: &str) {
    let files =
        [ranks, "src/table.rs", "src/o200k.rs", "src/ascii.rs", "src/memo.rs", "src/lib.rs"];
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in files {
        println!("cargo::rerun-if-changed={file}");
        for byte in fs::read(file).expect("read a source of the counter") {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("cargo::rustc-env=CTX_TOKENS_COUNTER={hash:016x}");
}
