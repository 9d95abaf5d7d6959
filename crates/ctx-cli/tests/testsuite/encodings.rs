//! Text in other encodings than UTF-8, binaries and files that could not be loaded, through
//! the real binary: sources in Latin-1, CP-1252, GBK, Shift-JIS and UTF-16 (with and without
//! a byte order mark) are read decoded and named in every format; real binaries never pass as
//! text; a binary or unloadable mention is noted in every format.
//!
//! The encoded files are ctx-fs's fixtures (`crates/ctx-fs/tests/fixtures/encodings`, written by
//! another program than the decoder), their UTF-8 text beside them (`…/expected`).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use assert_fs::TempDir;
use assert_fs::prelude::*;
use serde_json::Value;

use crate::util::{assert_no_raw_hidden, run};

fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ctx-fs/tests/fixtures").join(dir)
}

fn fixture(dir: &str, name: &str) -> Vec<u8> {
    std::fs::read(fixtures(dir).join(name)).unwrap()
}

fn expected(name: &str) -> String {
    String::from_utf8(fixture("expected", name)).unwrap()
}

/// A workspace holding every encoded fixture and every binary fixture.
fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    for folder in ["encodings", "binaries"] {
        for entry in std::fs::read_dir(fixtures(folder)).unwrap() {
            let entry = entry.unwrap();
            dir.child(entry.file_name())
                .write_binary(&std::fs::read(entry.path()).unwrap())
                .unwrap();
        }
    }
    dir
}

fn ctx(dir: &TempDir) -> Command {
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(dir.path()).env("NO_COLOR", "1").env_remove("CTX_FORCE_TTY");
    cmd.env_remove("RUST_LOG").env("CTX_CONFIG_DIR", "/nonexistent/ctx-config");
    cmd
}

/// The encoded fixtures: name, the UTF-8 text's file, the encoding's name.
const ENCODED: [(&str, &str, &str); 8] = [
    ("latin1.c", "latin1.c", "windows-1252"),
    ("cp1252.txt", "cp1252.txt", "windows-1252"),
    ("gbk.cpp", "gbk.cpp", "GBK"),
    ("shift_jis.cpp", "shift_jis.cpp", "Shift_JIS"),
    ("utf16le-bom.txt", "utf16.txt", "UTF-16LE"),
    ("utf16be-bom.txt", "utf16.txt", "UTF-16BE"),
    ("utf16le.txt", "utf16.txt", "UTF-16LE"),
    ("utf16be.txt", "utf16.txt", "UTF-16BE"),
];

#[test]
fn every_encoding_is_read_decoded_and_named_in_every_format() {
    let dir = workspace();
    let prompt: Vec<String> = ENCODED.iter().map(|(name, ..)| format!("@{name}")).collect();
    let prompt = format!("fix {}", prompt.join(" "));
    for format in ["xml", "markdown", "inline", "json"] {
        let r = run(ctx(&dir).args(["expand", "--format", format, &prompt]));
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        let content = match format {
            "json" => {
                let json: Value = serde_json::from_str(&r.stdout).unwrap();
                for (i, (_, _, encoding)) in ENCODED.iter().enumerate() {
                    assert_eq!(json["references"][i]["encoding"], *encoding, "{json:#}");
                }
                json["content"].as_str().unwrap().to_owned()
            }
            _ => r.stdout.clone(),
        };
        for (name, text, encoding) in ENCODED {
            assert!(content.contains(&expected(text)), "{format} {name}: {content}");
            let note = match format {
                "markdown" | "inline" => format!("#### Source: {name}\n> Encoding: {encoding}\n"),
                _ => format!("<file path=\"{name}\" encoding=\"{encoding}\">"),
            };
            assert!(content.contains(&note), "{format} {name}: {note}\n{content}");
            let warning = format!("warning[W_ENCODING]: text decoded from {encoding}: {name}\n");
            assert!(r.stderr.contains(&warning), "{format}: {warning}\n{}", r.stderr);
        }
    }
}

/// Ranges select lines of the decoded text, in place and as attachments, with their numbers.
#[test]
fn ranges_and_line_numbers_are_those_of_the_decoded_text() {
    let dir = workspace();
    dir.child("doc.md")
        .write_str("@[gbk.cpp:5:7]\n@[shift_jis.cpp#L11]\n@[utf16be.txt:2]\n")
        .unwrap();
    let r = run(ctx(&dir).args(["assemble", "doc.md", "--line-numbers"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = |name: &str, from: usize, to: usize| -> String {
        let text = expected(name);
        let taken: Vec<String> = text
            .lines()
            .enumerate()
            .skip(from - 1)
            .take(to - from + 1)
            .map(|(i, line)| format!("{}: {line}", i + 1))
            .collect();
        taken.join("\n")
    };
    let gbk = format!(
        "<!-- ctx: W_ENCODING: text decoded from GBK: gbk.cpp -->\n{}\n",
        lines("gbk.cpp", 5, 7)
    );
    assert!(r.stdout.starts_with(&gbk), "{}", r.stdout);
    assert!(r.stdout.contains(&lines("shift_jis.cpp", 11, 11)), "{}", r.stdout);
    assert!(r.stdout.contains("2: int main() {"), "{}", r.stdout);
    let r = run(ctx(&dir).args(["expand", "--format", "xml", "see @latin1.c#L2-3"]));
    let latin1 = expected("latin1.c");
    let latin1: Vec<&str> = latin1.lines().skip(1).take(2).collect();
    let element = format!(
        "<file path=\"latin1.c\" lines=\"2-3\" encoding=\"windows-1252\">\n{}\n</file>",
        latin1.join("\n")
    );
    assert!(r.stdout.contains(&element), "{}", r.stdout);
}

/// The attack: text hidden by bidi controls and Tag characters, and terminal escapes, in files
/// that are not UTF-8. What must not happen: any of them reaching the output raw.
#[test]
fn hidden_text_in_decoded_files_is_made_visible() {
    let dir = TempDir::new().unwrap();
    let wide: Vec<u8> =
        "safe \u{202E}txt.exe\ntag \u{E0041}\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
    dir.child("wide.txt").write_binary(&[&[0xFF, 0xFE][..], &wide].concat()).unwrap();
    // Two control characters in more than 512 characters: text (one per 256 is allowed).
    let latin1 = [b"caf\xE9 ".repeat(160), b"\x1b]0;pwned\x07\n".to_vec()].concat();
    dir.child("latin1.txt").write_binary(&latin1).unwrap();
    for format in ["xml", "markdown", "inline", "json"] {
        let r = run(ctx(&dir).args(["expand", "--format", format, "@wide.txt @latin1.txt"]));
        assert_eq!(r.code, 0, "{format}: {}", r.stderr);
        let shown = match format {
            "json" => serde_json::from_str::<Value>(&r.stdout).unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned(),
            _ => r.stdout.clone(),
        };
        assert_no_raw_hidden(&shown);
        assert_no_raw_hidden(&r.stderr);
        for visible in ["\\u{202E}", "\\u{E0041}", "\\u{1b}]0;pwned\\u{7}"] {
            assert!(shown.contains(visible), "{format}: {visible}: {shown}");
        }
        for code in ["W_HIDDEN_TEXT", "W_CONTROL", "W_ENCODING"] {
            assert!(r.stderr.contains(code), "{format}: {code}: {}", r.stderr);
        }
    }
}

/// A PNG (named as data, so that it is no image mention), a gzip, an ELF and a PDF are binary
/// for ctx as they are on disk: left out with `W_BINARY`, never shown as text.
#[test]
fn real_binaries_are_never_read_as_text() {
    let dir = workspace();
    std::fs::rename(dir.path().join("tiny.png"), dir.path().join("tiny.png.bin")).unwrap();
    let binaries = ["tiny.png.bin", "notes.txt.gz", "tiny.elf", "tiny.pdf"];
    let doc: String = binaries.iter().map(|name| format!("@[{name}]\n")).collect();
    dir.child("doc.md").write_str(&doc).unwrap();
    let r = run(ctx(&dir).args(["assemble", "doc.md"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for name in binaries {
        let marker = format!("<!-- ctx: W_BINARY: binary file left out: {name} -->\n");
        assert!(r.stdout.contains(&marker), "{name}: {}", r.stdout);
    }
    assert!(!r.stderr.contains("W_ENCODING"), "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), binaries.len(), "nothing but the markers: {}", r.stdout);
}

/// A binary mention, and one that could not be loaded, no longer vanish from the output: every
/// format lists them after the attachments, as an oversized file was listed in XML.
#[test]
fn a_binary_or_unloadable_mention_is_noted_in_every_format() {
    let dir = workspace();
    dir.child("big.txt").write_str(&"x".repeat(10_000)).unwrap();
    dir.child("a.txt").write_str("hello\n").unwrap();
    let prompt = "read @a.txt @tiny.pdf @tiny.elf @big.txt @[grep{\"pattern\": \"zzz-nothing\", \"glob\": \"*.txt\"}]";
    for format in ["xml", "markdown", "inline", "json"] {
        let r =
            run(ctx(&dir).args(["expand", "--format", format, "--max-file-bytes", "9000", prompt]));
        assert_eq!(r.code, 1, "{format}: E_TOO_LARGE is an error: {}", r.stderr);
        let content = match format {
            "json" => serde_json::from_str::<Value>(&r.stdout).unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned(),
            _ => r.stdout.clone(),
        };
        let list = "\nSome files could not be loaded:\n\
                    - @tiny.pdf: W_BINARY: binary file left out: tiny.pdf\n\
                    - @tiny.elf: W_BINARY: binary file left out: tiny.elf\n\
                    - @big.txt: E_TOO_LARGE: file too large: big.txt (10000 bytes, limit 9000)\n";
        assert!(content.ends_with(list), "{format}: {content}");
        assert!(content.contains("\nno matches\n"), "{format}: an empty grep says so: {content}");
    }
}
