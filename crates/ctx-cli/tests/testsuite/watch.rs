//! `ctx assemble --watch` and `ctx check --watch` against the real binary: an edit of an
//! included file, a save by rename and a delete-then-create each cause a re-run. Waits are
//! bounded and end as soon as the expected line arrives.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `ctx … --watch` whose output lines arrive on a channel; killed when dropped.
struct Watch {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Watch {
    fn start(dir: &Path, args: &[&str]) -> Watch {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("ctx"))
            .args(args)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Both streams, line by line: outputs and diagnostics on one, summaries on the other.
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let readers: [Box<dyn std::io::Read + Send>; 2] = [Box::new(stdout), Box::new(stderr)];
        for stream in readers {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    if tx.send(line.unwrap()).is_err() {
                        break;
                    }
                }
            });
        }
        Watch { child, lines }
    }

    /// Waits (bounded) for a line equal to `wanted`.
    fn expect(&self, wanted: &str) {
        self.expect_line(wanted, |line| line == wanted);
    }

    /// Waits (bounded) for a line that passes `test`.
    fn expect_line(&self, wanted: &str, test: impl Fn(&str) -> bool) {
        let mut seen = Vec::new();
        loop {
            match self.lines.recv_timeout(Duration::from_secs(30)) {
                Ok(line) if test(&line) => return,
                Ok(line) => seen.push(line),
                Err(_) => panic!("no line {wanted:?}; saw {seen:?}"),
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn assemble_watch_reruns_on_a_change_of_an_include() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.md"), "Style: @[style.md]\n").unwrap();
    std::fs::write(dir.path().join("style.md"), "first\n").unwrap();
    let watch = Watch::start(dir.path(), &["assemble", "--watch", "main.md"]);
    watch.expect("Style: first");
    // The watch is set up before the first run, so this edit is seen.
    std::fs::write(dir.path().join("style.md"), "second\n").unwrap();
    watch.expect("Style: second");
    // An editor that saves by writing a temporary file and renaming it over the original.
    std::fs::write(dir.path().join(".style.md.tmp"), "third\n").unwrap();
    std::fs::rename(dir.path().join(".style.md.tmp"), dir.path().join("style.md")).unwrap();
    watch.expect("Style: third");
    // Deleted, then created again.
    std::fs::remove_file(dir.path().join("style.md")).unwrap();
    watch.expect_line("E_NOT_FOUND", |line| line.contains("E_NOT_FOUND"));
    std::fs::write(dir.path().join("style.md"), "fourth\n").unwrap();
    watch.expect("Style: fourth");
}

#[test]
fn check_watch_reports_a_fix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.md"), "@[missing.md]\n").unwrap();
    let watch = Watch::start(dir.path(), &["check", "--watch", "main.md"]);
    watch.expect("1 error, 0 warnings in 1 file");
    std::fs::write(dir.path().join("missing.md"), "here\n").unwrap();
    watch.expect("0 errors, 0 warnings in 1 file");
}

/// A checked document that cannot be read is counted as `ctx check` counts it, apart from
/// the errors, and its line goes when it comes back.
#[test]
fn check_watch_counts_a_document_not_read_apart() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.md"), "fine\n").unwrap();
    let watch = Watch::start(dir.path(), &["check", "--watch", "main.md", "later.md"]);
    watch.expect("0 errors, 0 warnings in 2 files (1 could not be read)");
    std::fs::write(dir.path().join("later.md"), "here\n").unwrap();
    watch.expect("0 errors, 0 warnings in 2 files");
}

#[test]
fn a_watch_does_not_wake_on_its_own_reads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/a.md"), "alpha\n").unwrap();
    std::fs::write(dir.path().join("main.md"), "@[sub/]\n@[grep{\"pattern\":\"alph\"}]\n").unwrap();
    let watch = Watch::start(dir.path(), &["assemble", "--watch", "main.md"]);
    watch.expect("alpha");
    // Reading the folder, the file and the tree again and again is no change: nothing more
    // is printed until a file changes.
    std::thread::sleep(Duration::from_millis(1500));
    let extra: Vec<String> = watch.lines.try_iter().collect();
    let runs = extra.iter().filter(|l| l.as_str() == "alpha").count();
    assert_eq!(runs, 0, "re-ran without a change: {extra:?}");
    std::fs::write(dir.path().join("sub/a.md"), "beta\n").unwrap();
    watch.expect("beta");
}

/// Output and errors redirected into the watched folder (`ctx assemble --watch m.md > out.md`)
/// are the run's own writes, not changes: one run, not a run for ever.
#[cfg(target_os = "linux")]
#[test]
fn its_own_output_in_the_folder_runs_it_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.md"), "@[nope.md]\n").unwrap();
    let out = std::fs::File::create(dir.path().join("out.md")).unwrap();
    let err = std::fs::File::create(dir.path().join("err.log")).unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("ctx"))
        .current_dir(dir.path())
        .args(["assemble", "--watch", "m.md"])
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let runs = std::fs::read_to_string(dir.path().join("err.log")).unwrap();
    assert_eq!(runs.matches("E_NOT_FOUND").count(), 1, "{runs}");
}

/// SIGTERM ends a watch at once: the watch holds nothing that needs cleaning up, so ctx keeps
/// the signal's default action (as for Ctrl-C's SIGINT, which is not sent here: a test run
/// started in the background inherits SIGINT ignored, as shells start background jobs). The
/// wait is a hang guard, not a timing.
#[cfg(unix)]
#[test]
fn a_signal_ends_a_watch_at_once() {
    use std::os::unix::process::ExitStatusExt;
    for (signal, number) in [("TERM", 15)] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.md"), "Style: @[style.md]\n").unwrap();
        std::fs::write(dir.path().join("style.md"), "first\n").unwrap();
        let mut watch = Watch::start(dir.path(), &["assemble", "--watch", "main.md"]);
        watch.expect("Style: first");
        let sent = Command::new("kill")
            .args([format!("-{signal}"), watch.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = watch.child.try_wait().unwrap() {
                break status;
            }
            assert!(std::time::Instant::now() < deadline, "SIG{signal} did not end the watch");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.signal(), Some(number), "SIG{signal}: {status:?}");
    }
}

/// An agent's rule file under `ctx check --watch` gets the rule diagnostics of `ctx check`,
/// and the fix clears them.
#[test]
fn check_watch_of_an_agents_rule_file() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join(".cursor/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join("a.mdc"), "---\nalwaysApply: \"true\"\n---\nx\n").unwrap();
    let watch = Watch::start(dir.path(), &["check", "--watch", ".cursor/rules/a.mdc"]);
    // The assembly alone finds nothing: the error is the rule diagnostic.
    watch.expect("1 error, 0 warnings in 1 file");
    std::fs::write(rules.join("a.mdc"), "---\nalwaysApply: true\n---\nx\n").unwrap();
    watch.expect("0 errors, 0 warnings in 1 file");
}
