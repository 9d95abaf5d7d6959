//! `ctx index --watch`, the index service, and the commands that ask it, as attacks: a
//! question answered from a stale index, a socket planted in the service's place, questions
//! that are malformed, huge, slow or about another workspace; and the service's end when its
//! workspace goes away or it stays idle.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assert_fs::TempDir;
use assert_fs::prelude::*;

use crate::util::{ctx_in, run};

/// A hang guard: long enough for a busy machine, short enough to end a hung test.
const GUARD: Duration = Duration::from_secs(60);

fn workspace() -> TempDir {
    let dir = TempDir::new().unwrap();
    dir.child("src/retry.rs")
        .write_str("/// Retries until the deadline.\npub fn retry_with_timeout() {}\n")
        .unwrap();
    dir.child("src/main.rs").write_str("fn main() {}\n").unwrap();
    dir
}

/// A running `ctx index --watch` and the path of its socket; killed when dropped.
struct Service {
    child: Child,
    socket: PathBuf,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &TempDir, extra: &[&str]) -> Service {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("ctx"))
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("CTX_CACHE_DIR", dir.path().join(".cache"))
        .env_remove("RUST_LOG")
        .args(["index", "--watch"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let socket = line.trim_end().rsplit_once(" on ").map(|(_, p)| PathBuf::from(p));
    let socket = socket.unwrap_or_else(|| panic!("no socket in {line:?}"));
    assert!(socket.exists(), "{line}");
    Service { child, socket }
}

/// `ctx index --watch -q` in `cwd` with the cache folder `cache`, quiet; returns once its
/// socket folder holds an entry (polled every `poll`).
fn spawn_quiet(cwd: &Path, cache: &Path, poll: Duration) -> Child {
    let child = Command::new(assert_cmd::cargo::cargo_bin("ctx"))
        .current_dir(cwd)
        .env("CTX_CACHE_DIR", cache)
        .args(["index", "--watch", "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sockets = cache.join("watch");
    let started = Instant::now();
    while std::fs::read_dir(&sockets).map_or(true, |mut d| d.next().is_none()) {
        assert!(started.elapsed() < GUARD, "the service never listened");
        std::thread::sleep(poll);
    }
    child
}

/// `ctx suggest PROMPT` with debug logs: its output, and whether the service answered.
fn suggest(dir: &TempDir, prompt: &str) -> (String, bool) {
    let out = run(ctx_in(dir).env("RUST_LOG", "ctx=debug").args(["suggest", prompt]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    (out.stdout, out.stderr.contains("answered by the index service"))
}

/// Sends `body` as one frame on a fresh connection and returns the answer's JSON, if any.
fn raw(socket: &Path, body: &[u8]) -> Option<serde_json::Value> {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream.set_read_timeout(Some(GUARD)).unwrap();
    stream.write_all(&(body.len() as u32).to_be_bytes()).ok()?;
    stream.write_all(body).ok()?;
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).ok()?;
    let mut answer = vec![0u8; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut answer).ok()?;
    serde_json::from_slice(&answer).ok()
}

#[test]
fn the_service_answers_and_never_from_a_stale_index() {
    let dir = workspace();
    let _service = start(&dir, &[]);
    let (found, asked) = suggest(&dir, "retry timeout");
    assert!(asked, "the service answered");
    assert!(found.starts_with("src/retry.rs:1-2"), "{found}");
    // Asked right after each change: the answer must already hold it.
    for i in 0..5 {
        dir.child(format!("src/args{i}.rs"))
            .write_str(&format!("pub fn parse_args_{i}() {{}}\n"))
            .unwrap();
        let (found, asked) = suggest(&dir, &format!("parse_args_{i}"));
        assert!(asked);
        assert!(found.contains(&format!("src/args{i}.rs")), "{i}: {found}");
        std::fs::remove_file(dir.path().join(format!("src/args{i}.rs"))).unwrap();
        let (found, _) = suggest(&dir, &format!("parse_args_{i}"));
        assert!(!found.contains(&format!("src/args{i}.rs")), "removed, still found: {found}");
    }
    // The same answer as a command ranking by itself.
    let (with, _) = suggest(&dir, "retry deadline");
    drop(_service);
    let (without, asked) = suggest(&dir, "retry deadline");
    assert!(!asked);
    assert_eq!(with, without);
}

#[test]
fn ctx_index_and_expand_auto_ask_the_service() {
    let dir = workspace();
    let _service = start(&dir, &[]);
    let out = run(ctx_in(&dir).env("RUST_LOG", "ctx=debug").arg("index"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("answered by the index service"), "{}", out.stderr);
    assert!(out.stdout.starts_with("2 files (2 source)"), "{}", out.stdout);
    assert!(out.stdout.trim_end().ends_with("kept current by the index service"), "{}", out.stdout);
    let out = run(ctx_in(&dir).args(["index", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["service"], true, "{report}");
    let out = run(ctx_in(&dir).env("RUST_LOG", "ctx=debug").args([
        "expand",
        "--auto",
        "fix the retry timeout",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("answered by the index service"), "{}", out.stderr);
    assert!(out.stdout.contains("src/retry.rs"), "{}", out.stdout);
}

#[test]
fn other_settings_are_ranked_without_the_service() {
    let dir = workspace();
    dir.child("notes.json").write_str("{\"retry\": \"timeout\"}").unwrap();
    let _service = start(&dir, &[]);
    let out = run(ctx_in(&dir).env("RUST_LOG", "ctx=debug").args([
        "suggest",
        "--data-files",
        "retry timeout",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("answered by the index service"), "{}", out.stderr);
    assert!(out.stdout.contains("notes.json"), "{}", out.stdout);
}

#[test]
fn a_second_service_for_the_same_workspace_is_refused() {
    let dir = workspace();
    let _service = start(&dir, &[]);
    let out = run(ctx_in(&dir).args(["index", "--watch"]));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("already runs"), "{}", out.stderr);
}

#[test]
fn malformed_huge_and_slow_questions_end_only_their_connection() {
    let dir = workspace();
    let service = start(&dir, &[]);
    // A slow client holds its connection without a byte.
    let _slow = UnixStream::connect(&service.socket).unwrap();
    let mut half = UnixStream::connect(&service.socket).unwrap();
    half.write_all(&[0, 0]).unwrap();
    for body in [&b"not json"[..], b"{\"version\":1}", b"{}", &[0xff; 64][..]] {
        assert_eq!(raw(&service.socket, body), None, "{body:?}");
    }
    // A length over the bound is refused before a byte of the body is read.
    let mut huge = UnixStream::connect(&service.socket).unwrap();
    huge.write_all(&u32::MAX.to_be_bytes()).unwrap();
    huge.set_read_timeout(Some(GUARD)).unwrap();
    assert_eq!(huge.read(&mut [0u8; 4]).unwrap_or(0), 0, "the connection is closed");
    // Meanwhile others are answered.
    let started = Instant::now();
    let (found, asked) = suggest(&dir, "retry timeout");
    assert!(asked && found.starts_with("src/retry.rs"), "{found}");
    assert!(started.elapsed() < GUARD);
}

#[test]
fn a_question_about_another_workspace_or_settings_is_refused() {
    let dir = workspace();
    let other = workspace();
    let service = start(&dir, &[]);
    let question = |root: &str, fingerprint: &str| {
        serde_json::json!({
            "version": 1, "root": root, "fingerprint": fingerprint,
            "ask": {"suggest": {"prompt": "retry", "limit": 5, "max_lines": 80,
                                "max_tokens": null, "explain": false}}
        })
        .to_string()
    };
    let other_root = std::fs::canonicalize(other.path()).unwrap();
    for (root, fingerprint) in [(other_root.to_str().unwrap(), "x"), ("/", "x"), ("/etc", "x")] {
        let answer = raw(&service.socket, question(root, fingerprint).as_bytes()).unwrap();
        assert!(answer.get("refused").is_some(), "{answer}");
    }
    let own = std::fs::canonicalize(dir.path()).unwrap();
    let answer = raw(&service.socket, question(own.to_str().unwrap(), "forged").as_bytes());
    assert!(answer.unwrap().get("refused").is_some(), "a wrong fingerprint is refused");
}

#[test]
fn a_socket_planted_in_the_services_place_is_refused() {
    let dir = workspace();
    // The service's socket name, learnt from a service that then ends.
    let socket = {
        let service = start(&dir, &[]);
        service.socket.clone()
    };
    let _ = std::fs::remove_file(&socket);
    // A listener elsewhere, linked in the socket's place: never connected to.
    let elsewhere = dir.path().join("planted.sock");
    let planted = UnixListener::bind(&elsewhere).unwrap();
    planted.set_nonblocking(true).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &socket).unwrap();
    let out = run(ctx_in(&dir).args(["suggest", "retry timeout"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("src/retry.rs"), "ranked by itself: {}", out.stdout);
    assert!(out.stderr.contains("not asking the index service"), "{}", out.stderr);
    assert!(planted.accept().is_err(), "the planted socket was connected to");
    // A service does not replace the link either.
    let out = run(ctx_in(&dir).args(["index", "--watch"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(socket.symlink_metadata().unwrap().file_type().is_symlink());
}

#[test]
fn a_socket_folder_open_to_others_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = workspace();
    let folder = dir.path().join(".cache/watch");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = run(ctx_in(&dir).args(["index", "--watch"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("open to other users"), "{}", out.stderr);
    let out = run(ctx_in(&dir).args(["suggest", "retry timeout"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("src/retry.rs"), "{}", out.stdout);
}

/// Waits for `child` to end within the guard.
fn ends(child: &mut Child) -> bool {
    let started = Instant::now();
    while started.elapsed() < GUARD {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn the_service_ends_when_idle_or_when_its_workspace_goes_away() {
    let dir = workspace();
    let mut idle = start(&dir, &["--idle", "1"]);
    assert!(ends(&mut idle.child), "idle, still running");
    assert!(!idle.socket.exists(), "its socket is removed");

    let parent = TempDir::new().unwrap();
    let ws = parent.child("ws");
    ws.create_dir_all().unwrap();
    ws.child("a.rs").write_str("fn a() {}\n").unwrap();
    let mut child = spawn_quiet(ws.path(), &parent.path().join("cache"), Duration::from_millis(50));
    std::fs::remove_dir_all(ws.path()).unwrap();
    let ended = ends(&mut child);
    let _ = child.kill();
    assert!(ended, "the workspace is gone, the service still runs");
}

#[test]
fn new_folders_renames_and_ignore_files_are_followed() {
    let dir = workspace();
    let _service = start(&dir, &[]);
    let has = |prompt: &str, path: &str| {
        let (found, asked) = suggest(&dir, prompt);
        assert!(asked, "the service answered");
        found.lines().any(|l| l.starts_with(path))
    };
    dir.child("src/pkg/deep/feature.rs").write_str("pub fn shiny_feature() {}\n").unwrap();
    assert!(has("shiny_feature", "src/pkg/deep/feature.rs"), "a new folder's file");
    std::fs::rename(dir.path().join("src/pkg"), dir.path().join("src/moved")).unwrap();
    assert!(has("shiny_feature", "src/moved/deep/feature.rs"), "renamed");
    assert!(!has("shiny_feature", "src/pkg/"), "the old name is gone");
    dir.child(".gitignore").write_str("src/moved/\n").unwrap();
    assert!(!has("shiny_feature", "src/moved/"), "ignored now");
    std::fs::remove_file(dir.path().join(".gitignore")).unwrap();
    assert!(has("shiny_feature", "src/moved/deep/feature.rs"), "ignored no more");
    std::fs::remove_dir_all(dir.path().join("src/moved")).unwrap();
    assert!(!has("shiny_feature", "src/moved/"), "removed");
}

#[test]
fn a_question_while_the_index_is_built_is_refused_at_once() {
    let dir = workspace();
    for i in 0..2000 {
        dir.child(format!("gen/m{}/f{i}.rs", i / 50))
            .write_str(&format!("pub fn generated_{i}() {{ retry_with_timeout(); }}\n"))
            .unwrap();
    }
    let mut child = spawn_quiet(dir.path(), &dir.path().join(".cache"), Duration::from_millis(5));
    // Asked at once: answered by the service if it is ready, else refused without a wait.
    let asked = Instant::now();
    let out = run(ctx_in(&dir).env("RUST_LOG", "ctx=debug").args(["suggest", "retry timeout"]));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with("src/retry.rs"), "{}", out.stdout);
    if out.stderr.contains("refused") {
        assert!(out.stderr.contains("the index is being built"), "{}", out.stderr);
    }
    assert!(asked.elapsed() < GUARD);
}

/// `ctx suggest --explain PROMPT` with `cache` as the cache folder: its output, and whether
/// the service answered.
fn explained(dir: &TempDir, cache: &str, prompt: &str) -> (String, bool) {
    let mut cmd = ctx_in(dir);
    cmd.env("CTX_CACHE_DIR", dir.path().join(cache)).env("RUST_LOG", "ctx=debug");
    let out = run(cmd.args(["suggest", "--explain", prompt]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    (out.stdout, out.stderr.contains("answered by the index service"))
}

/// The attack: edits that move the symbol graph and the file list under the service (a
/// definition moved to another file, a caller added before the others, a file removed, one
/// renamed), each asked about right away, then the index the service stored loaded by a
/// command. What must not happen: the service, or the index it stored (segments appended
/// since it loaded it), answering otherwise than a command ranking by itself from an index of
/// its own (scores and explanations, which name the graph's links, included).
#[test]
fn answers_after_changes_are_the_commands_own() {
    let dir = workspace();
    dir.child("src/net/http.rs")
        .write_str("/// Sends a request.\npub fn send_request() { retry_with_timeout(); }\n")
        .unwrap();
    dir.child("src/net/dns.rs").write_str("pub fn resolve() { send_request(); }\n").unwrap();
    let service = start(&dir, &[]);
    let prompt = "send the request and retry with a timeout";
    let steps: [(&str, Option<&str>); 5] = [
        ("src/net/http.rs", Some("/// Sends.\npub fn send() {}\n")),
        ("src/net/send.rs", Some("/// Sends a request.\npub fn send_request() { send(); }\n")),
        ("src/net/a_caller.rs", Some("fn call() { send_request(); retry_with_timeout(); }\n")),
        ("src/net/dns.rs", None),
        ("src/main.rs", Some("fn main() { send_request(); send_request(); }\n")),
    ];
    for (path, text) in steps {
        match text {
            Some(text) => dir.child(path).write_str(text).unwrap(),
            None => std::fs::remove_file(dir.path().join(path)).unwrap(),
        }
        let (with, asked) = explained(&dir, ".cache", prompt);
        assert!(asked, "the service answered after {path}");
        let (own, asked) = explained(&dir, ".cache-own", prompt);
        assert!(!asked);
        assert_eq!(with, own, "after {path}");
    }
    // The service stores what it took in 5 s after the first change; a command then loads it.
    let started = Instant::now();
    let stored = || {
        let out = run(ctx_in(&dir).args(["index", "--format", "json"]));
        serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()["bytes"].as_u64()
    };
    let before = stored();
    while stored() == before && started.elapsed() < GUARD {
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(service);
    let out = run(ctx_in(&dir).args(["index", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["indexed"], 0, "the stored index was current: {report}");
    assert_eq!(report["rebuilt_corrupt"], false, "{report}");
    assert_eq!(report["service"], false, "{report}");
    let (loaded, asked) = explained(&dir, ".cache", prompt);
    assert!(!asked);
    assert_eq!(loaded, explained(&dir, ".cache-own", prompt).0);
}
