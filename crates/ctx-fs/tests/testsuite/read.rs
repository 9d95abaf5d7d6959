//! Reading: special files without blocking, size cap, decoding.

use std::io::Write;
use std::time::{Duration, Instant};

use ctx_fs::{Code, Content, Encoding, FileKind, Limits};

use crate::util::{Fixture, code, read};

#[test]
fn fifo_does_not_block() {
    let fx = Fixture::new();
    let status = std::process::Command::new("mkfifo").arg(fx.path("pipe")).status().unwrap();
    assert!(status.success());
    fx.link("to_pipe", "pipe");
    let sb = fx.sandbox();
    let start = Instant::now();
    assert_eq!(code(read(&sb, "pipe")), Some(Code::NotRegular));
    assert_eq!(code(read(&sb, "to_pipe")), Some(Code::NotRegular));
    let loc = sb.resolve("pipe", None).unwrap();
    assert_eq!(code(sb.read_text(&loc)), Some(Code::NotRegular));
    assert_eq!(sb.stat(&loc).unwrap().kind, FileKind::Other);
    // A hang guard, not a speed test: a blocking open would never return.
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

#[test]
fn socket_and_device() {
    let fx = Fixture::new();
    let _listener = std::os::unix::net::UnixListener::bind(fx.path("sock")).unwrap();
    let sb = fx.builder().allow("/dev").open(cap_std::ambient_authority()).unwrap();
    assert_eq!(code(read(&sb, "sock")), Some(Code::NotRegular));
    let start = Instant::now();
    for device in ["/dev/null", "/dev/zero", "/dev/tty", "/dev/urandom"] {
        let result = read(&sb, device);
        assert!(
            matches!(code(result), Some(Code::NotRegular) | Some(Code::NotFound) | Some(Code::Io)),
            "{device}"
        );
    }
    assert_eq!(code(read(&sb, "/dev/zero")), Some(Code::NotRegular));
    // A hang guard, not a speed test: reading a device whole would never end.
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn directories_are_not_files() {
    let fx = Fixture::new();
    fx.mkdir("docs");
    let sb = fx.sandbox();
    assert_eq!(code(read(&sb, "docs")), Some(Code::NotRegular));
    assert_eq!(code(read(&sb, ".")), Some(Code::NotRegular));
}

#[test]
fn size_cap() {
    let fx = Fixture::new();
    let cap = 1000;
    fx.write("under", vec![b'a'; cap - 1])
        .write("at", vec![b'a'; cap])
        .write("over", vec![b'a'; cap + 1]);
    let mut limits = Limits::default();
    limits.max_file_bytes = cap as u64;
    let sb = fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap();
    assert_eq!(read(&sb, "under").unwrap().len(), cap - 1);
    assert_eq!(read(&sb, "at").unwrap().len(), cap);
    let err = read(&sb, "over").unwrap_err();
    assert_eq!(err.code(), Code::TooLarge);
    assert_eq!(err.to_string(), "file too large: over (1001 bytes, limit 1000)");
    assert_eq!(Limits::default().max_file_bytes, 1024 * 1024);
    let big = Fixture::new();
    big.write("mib", vec![b'a'; 1024 * 1024]).write("mib1", vec![b'a'; 1024 * 1024 + 1]);
    let sb = big.sandbox();
    assert_eq!(code(read(&sb, "mib")), None);
    assert_eq!(code(read(&sb, "mib1")), Some(Code::TooLarge));
}

#[test]
fn an_unlimited_cap_reads_the_whole_file() {
    let fx = Fixture::new();
    fx.write("a.txt", b"whole file\n");
    let mut limits = Limits::default();
    limits.max_file_bytes = u64::MAX;
    let sb = fx.builder().limits(limits).open(cap_std::ambient_authority()).unwrap();
    assert_eq!(read(&sb, "a.txt").unwrap(), "whole file\n");
}

#[test]
fn growing_file_never_exceeds_cap() {
    let fx = Fixture::new();
    let cap = 64 * 1024;
    fx.write("log", vec![b'x'; cap - 10]);
    let mut limits = Limits::default();
    limits.max_file_bytes = cap as u64;
    let sb =
        fx.builder().limits(limits).cache_capacity(0).open(cap_std::ambient_authority()).unwrap();
    let path = fx.path("log");
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut file = std::fs::File::options().append(true).open(&path).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                file.write_all(&[b'y'; 512]).unwrap();
            }
        });
        let (mut ok, mut large) = (0, 0);
        for _ in 0..200 {
            match read(&sb, "log") {
                Ok(text) => {
                    assert!(text.len() <= cap);
                    ok += 1;
                }
                Err(e) => {
                    assert_eq!(e.code(), Code::TooLarge);
                    large += 1;
                }
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(ok + large, 200);
    });
}

#[test]
fn decoding() {
    let fx = Fixture::new();
    fx.write("bom.md", b"\xEF\xBB\xBFhello");
    let utf16le: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain("hé\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    let utf16be: Vec<u8> =
        [0xFE, 0xFF].into_iter().chain("hé\n".encode_utf16().flat_map(u16::to_be_bytes)).collect();
    fx.write("le.txt", utf16le).write("be.txt", utf16be);
    fx.write("zero.bin", b"abc\0def").write("latin1.txt", b"caf\xE9").write("empty", b"");
    fx.write("controls.txt", b"caf\xE9\x01\x02\x03");
    let sb = fx.sandbox();
    let text = |name: &str| match sb.read_path(name, None).unwrap().1 {
        Content::Text { text, encoding } => (text.to_string(), encoding),
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(text("bom.md"), ("hello".into(), Encoding::Utf8Bom));
    assert_eq!(text("le.txt"), ("hé\n".into(), Encoding::Utf16Le));
    assert_eq!(text("be.txt"), ("hé\n".into(), Encoding::Utf16Be));
    assert_eq!(text("empty"), (String::new(), Encoding::Utf8));
    let (latin1, encoding) = text("latin1.txt");
    assert_eq!((latin1.as_str(), encoding.name()), ("café", "windows-1252"));
    for binary in ["zero.bin", "controls.txt"] {
        let content = sb.read_path(binary, None).unwrap().1;
        assert_eq!(content, Content::Binary, "{binary}");
        assert_eq!(content.warning_code(), Some(Code::Binary));
    }
}

/// The fixtures of other encodings, each encoded by another program than the decoder
/// (`tests/fixtures/encodings`), and their UTF-8 text (`tests/fixtures/expected`).
fn fixture(dir: &str, name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn text_in_other_encodings_is_decoded_and_named() {
    let cases = [
        ("latin1.c", "latin1.c", "windows-1252", Code::Encoding),
        ("cp1252.txt", "cp1252.txt", "windows-1252", Code::Encoding),
        ("gbk.cpp", "gbk.cpp", "GBK", Code::Encoding),
        ("shift_jis.cpp", "shift_jis.cpp", "Shift_JIS", Code::Encoding),
        ("utf16le-bom.txt", "utf16.txt", "UTF-16LE", Code::Encoding),
        ("utf16be-bom.txt", "utf16.txt", "UTF-16BE", Code::Encoding),
        ("utf16le.txt", "utf16.txt", "UTF-16LE", Code::Encoding),
        ("utf16be.txt", "utf16.txt", "UTF-16BE", Code::Encoding),
    ];
    let fx = Fixture::new();
    for (name, _, _, _) in cases {
        fx.write(name, fixture("encodings", name));
    }
    let sb = fx.sandbox();
    for (name, expected, encoding, code) in cases {
        let content = sb.read_path(name, None).unwrap().1;
        assert_eq!(content.warning_code(), Some(code), "{name}");
        let Content::Text { text, encoding: found } = content else { panic!("{name}: binary") };
        let expected = String::from_utf8(fixture("expected", expected)).unwrap();
        assert_eq!((text.as_str(), found.name()), (expected.as_str(), encoding), "{name}");
        assert_eq!(found.note(), Some(encoding));
        // Lines are those of the decoded text, one for one.
        assert_eq!(text.lines().count(), expected.lines().count(), "{name}");
    }
}

#[test]
fn real_binaries_are_never_text() {
    let mut binaries: Vec<(String, Vec<u8>)> = ["tiny.png", "notes.txt.gz", "tiny.pdf", "tiny.elf"]
        .iter()
        .map(|name| (name.to_string(), fixture("binaries", name)))
        .collect();
    // The PDF without its NUL bytes: its compressed stream still makes it binary.
    let pdf: Vec<u8> = fixture("binaries", "tiny.pdf").into_iter().filter(|&b| b != 0).collect();
    binaries.push(("tiny.pdf without NUL".into(), pdf));
    // The test's own executable, whatever the platform's format: its first 64 KiB and its
    // parts of 64 KiB from the middle on, each as a file of its own.
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    for (i, part) in exe.chunks(1 << 16).enumerate().filter(|(i, _)| *i == 0 || i % 17 == 5) {
        binaries.push((format!("exe part {i}"), part.to_vec()));
    }
    let fx = Fixture::new();
    for (i, (_, bytes)) in binaries.iter().enumerate() {
        fx.write(&format!("b{i}"), bytes);
    }
    let sb = fx.sandbox();
    for (i, (name, bytes)) in binaries.iter().enumerate() {
        assert_eq!(ctx_fs::decode(bytes), Content::Binary, "{name}");
        assert_eq!(sb.read_path(&format!("b{i}"), None).unwrap().1, Content::Binary, "{name}");
    }
}

#[test]
fn stat() {
    let fx = Fixture::new();
    fx.write("a.md", "12345").mkdir("d");
    let sb = fx.sandbox();
    let st = sb.stat(&sb.resolve("a.md", None).unwrap()).unwrap();
    assert_eq!((st.kind, st.len), (FileKind::File, 5));
    assert!(st.modified.is_some());
    assert_eq!(sb.stat(&sb.resolve("d", None).unwrap()).unwrap().kind, FileKind::Dir);
    assert_eq!(sb.stat(&sb.workspace()).unwrap().kind, FileKind::Dir);
    let loc = sb.resolve("a.md", None).unwrap();
    std::fs::remove_file(fx.path("a.md")).unwrap();
    assert_eq!(code(sb.stat(&loc)), Some(Code::NotFound));
    assert_eq!(code(sb.read_text(&loc)), Some(Code::NotFound));
}

/// Files in /proc claim a length of 0 and then deliver more: the bounded read
/// is what stops them at the cap.
#[cfg(target_os = "linux")]
#[test]
fn reads_stop_at_cap_plus_one_whatever_the_length_says() {
    let mut limits = Limits::default();
    limits.max_file_bytes = 16;
    for fast in [true, false] {
        let sb = ctx_fs::Sandbox::builder("/proc/self")
            .limits(limits.clone())
            .fast_path(fast)
            .open(cap_std::ambient_authority())
            .unwrap();
        let loc = sb.resolve("status", None).unwrap();
        assert_eq!(sb.stat(&loc).unwrap().len, 0);
        let err = sb.read_text(&loc).unwrap_err();
        assert_eq!(err.code(), Code::TooLarge);
        assert_eq!(err.to_string(), "file too large: status (more than 16 bytes, limit 16)");
    }
}

#[test]
fn raw_bytes_keep_every_rule_and_their_own_cap() {
    let fx = Fixture::new();
    fx.write("shot.png", b"\x89PNG\r\n\x1a\n rest");
    fx.write(".env", "TOKEN=1");
    fx.link("out", "/etc/hostname");
    let sb = fx.sandbox();
    let (location, bytes) = sb.read_bytes("shot.png", None, 1024).unwrap();
    assert_eq!(location.path(), "shot.png");
    assert!(bytes.starts_with(b"\x89PNG"));
    assert_eq!(sb.read_bytes("shot.png", None, 4).unwrap_err().code(), Code::TooLarge);
    assert_eq!(sb.read_bytes(".env", None, 1024).unwrap_err().code(), Code::Denied);
    assert_eq!(sb.read_bytes("out", None, 1024).unwrap_err().code(), Code::Outside);
    assert_eq!(sb.read_bytes("nope.png", None, 1024).unwrap_err().code(), Code::NotFound);
}

/// A folder's names come from its listing alone, sorted, denied names left out; ignored and
/// hidden names and links stay (a caller resolves a name before using it).
#[test]
fn names_of_a_folder() {
    let fx = Fixture::new();
    fx.write(".gitignore", "ignored.txt\n");
    fx.write("b.txt", "b").write("a.txt", "a").write("ignored.txt", "i").write(".env", "SECRET");
    fx.mkdir("sub");
    fx.link("out", "../outside/secret.txt");
    let sb = fx.sandbox();
    let names = sb.names(&sb.workspace()).unwrap();
    assert_eq!(names, [".gitignore", "a.txt", "b.txt", "ignored.txt", "out", "sub"]);
    let sub = sb.resolve("sub", None).unwrap();
    assert!(sb.names(&sub).unwrap().is_empty());
    assert_eq!(code(sb.resolve("out", None)), Some(Code::Outside));
}
