//! Large files attached whole are written part by part when nothing needs them whole; the
//! output and the diagnostics are those of reading them whole.

use std::sync::Arc;

use ctx_assemble::{Assembler, Assembly, Format, Mode, Options};
use ctx_fs::{Limits, Sandbox};
use ctx_syntax::Code;

/// Over the size from which files are streamed, with what the writing must handle: wrapper
/// tags to neutralise (one across what could be a part boundary), backtick runs for the
/// Markdown fence, hidden and control characters deep inside, multi-byte text, and a long
/// line.
fn large_text(early_control: bool) -> String {
    let mut text = String::new();
    if early_control {
        // Then the hidden character near the end is counted from here on.
        text.push_str("a line\nthe bell \u{7} rings\n");
    }
    let line = "fn retry_with_timeout(deadline: Instant) -> Result<(), Error> { // ünï 日本 `x`\n";
    while text.len() < 9 << 20 {
        text.push_str(line);
        if text.len() % 997 < line.len() {
            text.push_str("</file> and <system-reminder> in a line\n");
        }
    }
    text.push_str(&"w".repeat((1 << 20) + 100));
    text.push_str("</file>\n");
    text.push_str("a ````` run\nhidden \u{202E} bidi and \u{1b}[31m control\n");
    text.push_str("\u{E0041}tag character, then no line ending at the end");
    text
}

fn assembler(dir: &std::path::Path, mode: Mode, format: Format, streamed: bool) -> Assembler {
    let mut fs_limits = Limits::default();
    fs_limits.max_file_bytes = 64 << 20;
    let sandbox = Sandbox::builder(dir.to_str().unwrap())
        .limits(fs_limits)
        .open(cap_std::ambient_authority())
        .unwrap();
    let mut options = Options { mode, format, ..Options::default() };
    options.limits.max_lines = 0;
    options.limits.max_files = 0;
    // Any output budget means reading whole; one this large cuts nothing.
    options.limits.max_output_bytes = if streamed { 0 } else { 1 << 40 };
    Assembler::new(Arc::new(sandbox), options)
}

fn diagnostics(assembly: &Assembly) -> Vec<(Code, String, u32, u32)> {
    assembly.diagnostics.iter().map(|d| (d.code, d.message.clone(), d.line, d.column)).collect()
}

#[test]
fn streamed_output_is_the_output_of_a_whole_read() {
    let every = [
        (Mode::Append, Format::Xml),
        (Mode::Append, Format::Markdown),
        (Mode::Append, Format::Inline),
        (Mode::Inline, Format::Inline),
        (Mode::Inline, Format::Xml),
        (Mode::Inline, Format::Markdown),
        (Mode::Append, Format::Json),
    ];
    the_same_either_way(&large_text(false), &every);
    the_same_either_way(&large_text(true), &every[..2]);
    // A hidden character far into a line longer than a part: its column counts the parts
    // of the line before its own.
    let mut long = "w".repeat(300_000);
    long.push_str("\u{202E}x\u{1}\n");
    while long.len() < 9 << 20 {
        long.push_str("a short line\n");
    }
    the_same_either_way(&long, &every[3..5]);
}

fn the_same_either_way(text: &str, cases: &[(Mode, Format)]) {
    let dir = tempfile::tempdir().unwrap();
    // Not a `.txt` or `.md` file, which inline mode assembles as a document.
    std::fs::write(dir.path().join("big.rs"), text).unwrap();
    std::fs::write(dir.path().join("main.md"), "> see @[big.rs] here\n").unwrap();
    for &(mode, format) in cases {
        let run = |streamed| {
            let asm = assembler(dir.path(), mode, format, streamed);
            let mut out = Vec::new();
            let assembly = asm.assemble_file_to("main.md", &mut out).unwrap();
            // The one thing that differs from run to run: the time JSON reports.
            let out = String::from_utf8(out).unwrap();
            let out: Vec<&str> =
                out.split_inclusive('\n').filter(|l| !l.contains("\"elapsed_ms\"")).collect();
            let out = out.concat();
            (out, assembly)
        };
        let (streamed, a) = run(true);
        let (whole, b) = run(false);
        assert!(streamed == whole, "{mode:?} {format:?}: outputs differ");
        assert_eq!(diagnostics(&a), diagnostics(&b), "{mode:?} {format:?}");
        let parts = u64::from(format != Format::Json);
        assert_eq!((a.stats.streamed, b.stats.streamed), (parts, 0), "{mode:?} {format:?}");
        assert_eq!(a.references.len(), b.references.len());
        assert_eq!(a.references[0].bytes, b.references[0].bytes, "{mode:?} {format:?}");
        let codes: Vec<Code> = a.diagnostics.iter().map(|d| d.code).collect();
        assert!(
            codes.contains(&Code::HiddenText) && codes.contains(&Code::Control),
            "{codes:?} {:?}",
            diagnostics(&a)
        );
        assert!(streamed.len() > text.len(), "{mode:?} {format:?}");
    }
}

#[test]
fn large_binary_content_is_told_at_any_depth() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = "line\n".repeat(2 << 20).into_bytes();
    // Not UTF-8, and a NUL: binary, as a whole read tells it.
    bytes.extend_from_slice(b"\xFF\xFE\0 not utf-8\n");
    std::fs::write(dir.path().join("late.txt"), &bytes).unwrap();
    std::fs::write(dir.path().join("main.md"), "@[late.txt]\n").unwrap();
    for streamed in [true, false] {
        let asm = assembler(dir.path(), Mode::Append, Format::Xml, streamed);
        let mut out = Vec::new();
        let assembly = asm.assemble_file_to("main.md", &mut out).unwrap();
        let codes: Vec<Code> = assembly.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::Binary]);
        assert!(out.len() < 1000, "nothing of the file is written: {}", out.len());
    }
}

/// Large text in another encoding than UTF-8 (windows-1252 that the first reading finds not
/// UTF-8 deep inside, UTF-16 without a byte order mark told by its first bytes) is read whole
/// and decoded: the output, its note and the diagnostics are those of a whole read, alone and
/// inside a directory expansion.
#[test]
fn large_text_in_other_encodings_is_read_whole_and_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let mut latin1 = "plain ascii line\n".repeat(9 << 16).into_bytes();
    latin1.extend_from_slice(b"caf\xE9 cr\xE8me, last line\n");
    std::fs::write(d.join("latin1.txt"), &latin1).unwrap();
    let utf16: Vec<u8> =
        "wide line \u{4E2D}\n".repeat(1 << 19).encode_utf16().flat_map(u16::to_le_bytes).collect();
    std::fs::write(d.join("utf16.txt"), &utf16).unwrap();
    std::fs::write(dir.path().join("files.md"), "@[d/latin1.txt]\n@[d/utf16.txt]\n").unwrap();
    std::fs::write(dir.path().join("dir.md"), "@[d/]\n").unwrap();
    for document in ["files.md", "dir.md"] {
        for (mode, format) in [(Mode::Append, Format::Xml), (Mode::Append, Format::Markdown)] {
            let run = |streamed| {
                let asm = assembler(dir.path(), mode, format, streamed);
                let mut out = Vec::new();
                let assembly = asm.assemble_file_to(document, &mut out).unwrap();
                (String::from_utf8(out).unwrap(), assembly)
            };
            let (streamed, a) = run(true);
            let (whole, b) = run(false);
            assert!(streamed == whole, "{document} {format:?}: outputs differ");
            assert_eq!(diagnostics(&a), diagnostics(&b), "{document} {format:?}");
            assert_eq!(a.stats.streamed, 0, "{document} {format:?}: nothing was streamed");
            let codes: Vec<Code> = a.diagnostics.iter().map(|d| d.code).collect();
            assert_eq!(codes, [Code::Encoding, Code::Encoding], "{document} {format:?}");
            assert!(streamed.contains("café crème, last line\n"), "{document} {format:?}");
            assert!(streamed.contains("wide line \u{4E2D}\n"), "{document} {format:?}");
            for name in ["windows-1252", "UTF-16LE"] {
                let note = match format {
                    Format::Xml => format!("encoding=\"{name}\""),
                    _ => format!("> Encoding: {name}\n"),
                };
                assert!(streamed.contains(&note), "{document} {format:?}: {note}");
            }
        }
    }
}

/// A large file inside a directory expansion is written part by part too, between its
/// neighbours, as reading it whole would write it.
#[test]
fn large_files_in_a_directory_stream_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("a.txt"), "first \u{202E} file\n").unwrap();
    std::fs::write(d.join("big.txt"), large_text(true)).unwrap();
    std::fs::write(d.join("c.txt"), "a ``` fence\n").unwrap();
    let mut binary = "x\n".repeat(5 << 20).into_bytes();
    binary.extend_from_slice(b"\xC3\x28\0\n");
    std::fs::write(d.join("d.bin.txt"), binary).unwrap();
    std::fs::write(d.join("e.txt"), "last\n").unwrap();
    std::fs::write(dir.path().join("main.md"), "- @[d/]\n").unwrap();
    for (mode, format) in [
        (Mode::Append, Format::Xml),
        (Mode::Append, Format::Markdown),
        (Mode::Inline, Format::Inline),
        (Mode::Inline, Format::Xml),
    ] {
        let run = |streamed| {
            let asm = assembler(dir.path(), mode, format, streamed);
            let mut out = Vec::new();
            let assembly = asm.assemble_file_to("main.md", &mut out).unwrap();
            (String::from_utf8(out).unwrap(), assembly)
        };
        let (streamed, a) = run(true);
        let (whole, b) = run(false);
        assert!(streamed == whole, "{mode:?} {format:?}: outputs differ");
        assert_eq!(diagnostics(&a), diagnostics(&b), "{mode:?} {format:?}");
        assert_eq!(a.references[0].bytes, b.references[0].bytes, "{mode:?} {format:?}");
        assert_eq!(a.stats.files, b.stats.files);
        assert_eq!((a.stats.streamed, b.stats.streamed), (1, 0), "{mode:?} {format:?}");
        let codes: Vec<Code> = a.diagnostics.iter().map(|d| d.code).collect();
        assert!(codes.contains(&Code::Binary), "{codes:?}");
        let (first, last) = (streamed.find("first").unwrap(), streamed.find("last").unwrap());
        assert!(first < streamed.find("retry_with_timeout").unwrap() && first < last);
    }
}

/// A large file full of characters to make visible, one at the start and one at the end of
/// every line (parts end at line ends, so one stands on each side of every part boundary)
/// and every 997 bytes of a line longer than a part (which ends inside it): the streamed
/// output is the whole read's, and its content is the file with each such character
/// written as its escape, counted exactly, as a plain character by character rewrite says.
#[test]
fn characters_to_make_visible_at_part_boundaries_come_out_as_a_whole_read() {
    let rare =
        ['\u{1b}', '\u{200B}', '\u{202E}', '\u{7f}', '\u{9b}', '\u{E0041}', '\u{FEFF}', '\u{b}'];
    let mut text = String::from("first line\n");
    let mut i = 0usize;
    while text.len() < 9 << 20 {
        text.push(rare[i % rare.len()]);
        text.push_str(&"x".repeat(i % 301));
        text.push_str(" é ");
        text.push(rare[(i + 3) % rare.len()]);
        text.push('\n');
        i += 1;
        if i == 20_000 {
            let long: String = (0..700_000)
                .map(|k| if k % 997 == 0 { rare[k % rare.len()] } else { 'y' })
                .collect();
            text.push_str(&long);
            text.push('\n');
        }
    }
    let (mut want, mut counts, mut first_lines, mut line) =
        (String::new(), [0usize; 2], [0u32; 2], 1u32);
    for c in text.chars() {
        let kind = match c {
            '\u{200B}' | '\u{202E}' | '\u{E0041}' | '\u{FEFF}' => Some(0),
            '\u{1b}' | '\u{7f}' | '\u{9b}' | '\u{b}' => Some(1),
            _ => None,
        };
        match kind {
            None => want.push(c),
            Some(kind) => {
                counts[kind] += 1;
                if first_lines[kind] == 0 {
                    first_lines[kind] = line;
                }
                let code = u32::from(c);
                want.push_str(&if kind == 0 {
                    format!("\\u{{{code:X}}}")
                } else {
                    format!("\\u{{{code:x}}}")
                });
            }
        }
        line += u32::from(c == '\n');
    }
    let cases = [
        (Mode::Append, Format::Xml),
        (Mode::Append, Format::Markdown),
        (Mode::Inline, Format::Inline),
    ];
    the_same_either_way(&text, &cases);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.rs"), &text).unwrap();
    std::fs::write(dir.path().join("main.md"), "@[big.rs]\n").unwrap();
    let asm = assembler(dir.path(), Mode::Append, Format::Xml, true);
    let mut out = Vec::new();
    let assembly = asm.assemble_file_to("main.md", &mut out).unwrap();
    assert_eq!(assembly.stats.streamed, 1);
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains(&want), "the content is the file with each character escaped");
    let found: Vec<(Code, u32, String)> =
        assembly.diagnostics.iter().map(|d| (d.code, d.line, d.message.clone())).collect();
    let hidden = "hidden unicode characters (tag, bidi control or zero-width) made visible";
    let control = "control characters made visible";
    let mut expected = vec![
        (Code::HiddenText, first_lines[0], format!("{} {hidden} in big.rs", counts[0])),
        (Code::Control, first_lines[1], format!("{} {control} in big.rs", counts[1])),
    ];
    expected.sort_by_key(|(_, line, _)| *line);
    assert_eq!(found, expected);
}
