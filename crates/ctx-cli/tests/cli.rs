//! CLI tests: the real `ctx` binary run in a temporary directory.

#![allow(clippy::disallowed_methods)] // Tests build their fixtures on disk.

use assert_cmd::Command;
use serde_json::Value;

fn ctx(dir: &tempfile::TempDir) -> Command {
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(dir.path()).env("NO_COLOR", "1");
    cmd
}

#[test]
fn parse_prints_items_as_json() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("doc.md"), "see @a.md#L2-3 and @[b.md:1:2]\n").unwrap();
    let out = ctx(&dir).args(["parse", "doc.md"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = json["items"].as_array().unwrap();
    let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "mention", "text", "include", "text"]);
    assert_eq!(items[1]["path"], "a.md");
    assert_eq!(items[1]["selector"]["lines"]["start"], 2);
    assert_eq!(items[1]["selector"]["lines"]["end"], 3);
    assert_eq!(items[1]["column"], 5);
    assert_eq!(items[3]["span"]["start"], 19);
    assert_eq!(json["diagnostics"].as_array().unwrap().len(), 0);
}

#[test]
fn parse_reads_standard_input_and_prints_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = ctx(&dir)
        .args(["parse", "-", "--format", "text"])
        .write_stdin("@{ifdef X}\n")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "directive 0..10 1:1 ifdef X alone=0..11\ntext 10..11 1:11 \"\\n\"\n"
    );
}

#[test]
fn parse_exits_1_on_error_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let out = ctx(&dir).args(["parse", "-"]).write_stdin("@{bogus body}").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["diagnostics"][0]["code"], "E_DIRECTIVE");
}

#[test]
fn unreadable_input_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = ctx(&dir).args(["parse", "missing.md"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read missing.md"));

    let out = ctx(&dir).args(["parse", "-"]).write_stdin(vec![0x66, 0xff, 0x00]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not UTF-8"));
}

#[test]
fn help_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let out = ctx(&dir).arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("parse"));
    let out = ctx(&dir).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ctx "));
}
