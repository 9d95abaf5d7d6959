//! Text read part by part: the same text as a whole read, in parts that end at line ends or
//! character boundaries, binary content told at any depth, and the rules of a read.

use std::ops::ControlFlow;

use ctx_fs::{Code, Content, Encoding, Ended, STREAM_PART_BYTES, Sandbox, Streamed, TextStream};
use proptest::prelude::*;

use crate::util::{Fixture, code};

/// A sandbox of the fixture's workspace that reads files of any size.
fn unlimited(fx: &Fixture) -> Sandbox {
    let mut limits = ctx_fs::Limits::default();
    limits.max_file_bytes = u64::MAX;
    fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap()
}

fn stream(sb: &Sandbox, path: &str) -> ctx_fs::Result<Streamed> {
    let location = sb.resolve(path, None)?;
    sb.text_stream(&location)
}

fn text_stream(sb: &Sandbox, path: &str) -> TextStream {
    match stream(sb, path).unwrap() {
        Streamed::Text(stream) => stream,
        other => panic!("not a text stream: {other:?}"),
    }
}

/// The parts of a stream, read through.
fn parts(stream: &TextStream) -> (Vec<String>, Ended) {
    let mut parts = Vec::new();
    let ended = stream
        .read_parts(|part| {
            parts.push(part.to_owned());
            ControlFlow::Continue(())
        })
        .unwrap();
    (parts, ended)
}

/// Checks that `content` streams back whole, each part ending a line unless it lies within a
/// longer line.
fn streams_back(content: &str) {
    let fx = Fixture::new();
    fx.write("big.txt", content);
    let sb = unlimited(&fx);
    let stream = text_stream(&sb, "big.txt");
    assert_eq!(stream.len(), content.len() as u64);
    let (parts, ended) = parts(&stream);
    assert_eq!(ended, Ended::Text);
    assert_eq!(stream.check().unwrap(), Ended::Text);
    assert_eq!(parts.concat(), content);
    let mut at = 0;
    for part in &parts[..parts.len().saturating_sub(1)] {
        at += part.len();
        let next_newline = content[at..].find('\n').map_or(content.len(), |p| at + p);
        let line_start = content[..at].rfind('\n').map_or(0, |p| p + 1);
        assert!(
            part.ends_with('\n') || next_newline - line_start > STREAM_PART_BYTES,
            "a part ends inside a short line at {at}"
        );
    }
}

#[test]
fn text_streams_back_in_parts() {
    let line = "fn retry() { // ünïcödé and 日本語 and <file> tags\n";
    // Past four parts, a check reads the file in two halves.
    streams_back(&line.repeat(6 * STREAM_PART_BYTES / line.len() + 7));
    streams_back(&line.repeat(2 * STREAM_PART_BYTES / line.len() + 7));
    streams_back("");
    streams_back("one line without an ending");
}

#[test]
fn lines_longer_than_a_part_are_cut_at_character_boundaries_before_tags() {
    // One line of three parts and more, multi-byte characters straddling every boundary,
    // then a wrapper tag right at the end of the first part's room.
    let mut long = "é".repeat(STREAM_PART_BYTES / 2 + 1);
    long.push_str("</file>");
    long.push_str(&"日".repeat(STREAM_PART_BYTES / 2));
    long.push('\n');
    streams_back(&long);
    let fx = Fixture::new();
    fx.write("long.txt", &long);
    let sb = unlimited(&fx);
    let (parts, _) = parts(&text_stream(&sb, "long.txt"));
    assert!(parts.len() > 1);
    assert!(parts.iter().all(|p| !p.ends_with("</fil") && !p.ends_with('<')));
}

#[test]
fn a_check_in_two_halves_tells_what_a_read_through_tells() {
    let fx = Fixture::new();
    let sb = unlimited(&fx);
    let len = 4 * STREAM_PART_BYTES + 10;
    let verdict = |bytes: &[u8]| {
        fx.write("t.txt", bytes);
        text_stream(&sb, "t.txt").check().unwrap()
    };
    // A four-byte character across the middle, at each of its offsets.
    for before in 1..4 {
        let mut bytes = vec![b'a'; len];
        let at = len / 2 - before;
        bytes[at..at + 4].copy_from_slice("😀".as_bytes());
        assert_eq!(verdict(&bytes), Ended::Text, "{before}");
    }
    // A stray continuation byte anywhere, or four in a row at the middle.
    for at in [10, len / 2 - 1, len / 2, len / 2 + 1, len - 1] {
        let mut bytes = vec![b'a'; len];
        bytes[at] = 0x80;
        assert_eq!(verdict(&bytes), Ended::Binary, "{at}");
    }
    let mut bytes = vec![b'a'; len];
    bytes[len / 2..len / 2 + 4].fill(0x80);
    assert_eq!(verdict(&bytes), Ended::Binary);
    // A character cut off by the end of the file.
    let mut bytes = vec![b'a'; len];
    bytes[len - 1] = 0xE2;
    assert_eq!(verdict(&bytes), Ended::Binary);
}

#[test]
fn a_byte_order_mark_is_left_out() {
    let fx = Fixture::new();
    fx.write("bom.txt", "\u{feff}text\n");
    let sb = unlimited(&fx);
    let stream = text_stream(&sb, "bom.txt");
    assert_eq!(stream.len(), 5);
    assert_eq!(parts(&stream).0.concat(), "text\n");
}

#[test]
fn binary_and_other_encodings_are_told() {
    let fx = Fixture::new();
    fx.write("zero.bin", b"abc\0def");
    fx.write("utf16.txt", b"\xFF\xFEh\0i\0")
        .write("unmarked.txt", b"h\0e\0l\0l\0o\0,\0 \0w\0o\0r\0l\0d\0\n\0");
    let mut late = "line\n".repeat(2 * STREAM_PART_BYTES / 5).into_bytes();
    late.extend_from_slice(b"\xC3\x28 invalid\n");
    fx.write("late.txt", &late);
    let sb = unlimited(&fx);
    assert!(matches!(stream(&sb, "zero.bin").unwrap(), Streamed::Binary));
    assert!(matches!(stream(&sb, "utf16.txt").unwrap(), Streamed::Whole));
    assert!(matches!(stream(&sb, "unmarked.txt").unwrap(), Streamed::Whole));
    let (parts, ended) = parts(&text_stream(&sb, "late.txt"));
    assert_eq!(ended, Ended::Binary);
    assert!(!parts.is_empty(), "the parts before the invalid bytes came");
    // Not UTF-8: a whole read tells what it is, here text in a legacy encoding.
    let location = sb.resolve("late.txt", None).unwrap();
    let content = sb.read_text(&location).unwrap();
    assert!(
        matches!(content, Content::Text { encoding: Encoding::Legacy(_), .. }),
        "{:?}",
        content.warning_code()
    );
}

#[test]
fn a_caller_may_stop_early() {
    let fx = Fixture::new();
    fx.write("big.txt", "x\n".repeat(8 * STREAM_PART_BYTES));
    let sb = unlimited(&fx);
    let mut seen = 0;
    let ended = text_stream(&sb, "big.txt")
        .read_parts(|_| {
            seen += 1;
            ControlFlow::Break(())
        })
        .unwrap();
    assert_eq!((ended, seen), (Ended::Text, 1));
}

#[test]
fn a_file_that_changes_length_is_an_error() {
    let fx = Fixture::new();
    let sb = unlimited(&fx);
    let mut streams = Vec::new();
    // Small and large files (checked in two halves, or read through).
    for lines in [1000, 4 * STREAM_PART_BYTES] {
        let (grows, shrinks) = (format!("grows{lines}.txt"), format!("shrinks{lines}.txt"));
        fx.write(&grows, "a\n".repeat(lines));
        fx.write(&shrinks, "a\n".repeat(lines));
        streams.push(text_stream(&sb, &grows));
        streams.push(text_stream(&sb, &shrinks));
        fx.write(&grows, "a\n".repeat(2 * lines));
        fx.write(&shrinks, "a\n".repeat(lines / 2));
    }
    for stream in streams {
        for err in [
            stream.read_parts(|_| ControlFlow::Continue(())).unwrap_err(),
            stream.check().unwrap_err(),
        ] {
            assert_eq!(err.code(), Code::Io);
            assert!(err.to_string().contains("changed while it was read"), "{err}");
        }
    }
}

#[test]
fn the_rules_of_a_read_hold() {
    let fx = Fixture::new();
    fx.write(".env", "SECRET=1\n");
    fx.link("out", "../outside/secret.txt");
    fx.write("big.txt", "x".repeat(100));
    let mut limits = ctx_fs::Limits::default();
    limits.max_file_bytes = 10;
    let sb = fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap();
    assert_eq!(code(stream(&sb, ".env")), Some(Code::Denied));
    assert_eq!(code(stream(&sb, "out")), Some(Code::Outside));
    assert_eq!(code(stream(&sb, "big.txt")), Some(Code::TooLarge));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Any text of a few parts, with lines of any length and characters of every width,
    /// streams back exactly.
    #[test]
    fn any_text_streams_back(
        pieces in proptest::collection::vec(
            prop_oneof![
                Just("\n".to_owned()),
                "[a-z<>/ ]{1,40}",
                "[é日😀]{1,8}",
                (1usize..4).prop_map(|n| "w".repeat(n * STREAM_PART_BYTES / 3)),
            ],
            1..40,
        ),
    ) {
        streams_back(&pieces.concat());
    }
}
