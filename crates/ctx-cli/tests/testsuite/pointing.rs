//! Messages that point well: a YAML error at the mistake, a "did you mean" that is never the
//! including document, a command's own options before the global ones in its help, the
//! values of `--provider`, and image errors at their mention.

use std::path::Path;

use assert_cmd::Command;
use assert_fs::TempDir;
use assert_fs::prelude::*;

use crate::util::{Run, run};

fn ctx(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CTX_CONFIG_DIR", "/nonexistent/ctx-config")
        .env("CTX_CACHE_DIR", dir.join(".cache-outside"))
        .env_remove("CTX_FORCE_TTY")
        .env_remove("RUST_LOG");
    cmd
}

#[test]
fn a_yaml_error_points_at_the_unterminated_quote_not_the_closing_line() {
    let dir = TempDir::new().unwrap();
    dir.child("rule.md")
        .write_str("---\ndescription: \"never closed\nparams: [a]\n---\nbody\n")
        .unwrap();
    let r = run(ctx(dir.path()).args(["check", "rule.md"]));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "rule.md:2:14: error[E_FRONT_MATTER]: invalid front matter: found unexpected end of \
         stream while scanning a quoted scalar that starts here\n"
    );
    // On a terminal the caret is under the quote.
    let r = run(ctx(dir.path()).args(["assemble", "rule.md"]).env("CTX_FORCE_TTY", "1"));
    let caret = r.stderr.lines().skip_while(|l| !l.contains("description")).nth(1).unwrap();
    assert_eq!(caret.find('━').map(|i| caret[..i].chars().count()), Some(17), "{}", r.stderr);
}

#[test]
fn did_you_mean_never_proposes_the_including_document() {
    let dir = TempDir::new().unwrap();
    dir.child("rules/main.md").write_str("See @[mains.md].\n").unwrap();
    dir.child("rules/other.md").write_str("See @[mains.md] and @[styl.md].\n").unwrap();
    dir.child("rules/style.md").write_str("style\n").unwrap();
    let r = run(ctx(dir.path()).args(["check", "rules/main.md", "rules/other.md"]));
    assert_eq!(
        r.stdout,
        "rules/main.md:1:5: error[E_NOT_FOUND]: no such file or directory: mains.md\n\
         rules/other.md:1:5: error[E_NOT_FOUND]: no such file or directory: mains.md (did you mean main.md?)\n\
         rules/other.md:1:21: error[E_NOT_FOUND]: no such file or directory: styl.md (did you mean style.md?)\n"
    );
}

/// The names of the long options under `heading` in a help text, in order.
fn options_under(help: &str, heading: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != heading)
        .skip(1)
        .take_while(|line| line.is_empty() || line.starts_with(' '))
        .filter_map(|line| line.trim_start().split([',', ' ']).find(|w| w.starts_with("--")))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_commands_help_lists_its_own_options_before_the_global_ones() {
    let dir = TempDir::new().unwrap();
    for args in [&["help", "trust"][..], &["trust", "--help"], &["trust", "-h"]] {
        let r = run(ctx(dir.path()).args(args));
        assert_eq!(r.code, 0, "{args:?}");
        assert_eq!(
            options_under(&r.stdout, "Options:"),
            ["--yes", "--revoke", "--help"],
            "{args:?}"
        );
        let global = options_under(&r.stdout, "Global options:");
        assert!(global.starts_with(&["--root".to_owned(), "--allow".to_owned()]), "{global:?}");
        let own_at = r.stdout.find("Options:").unwrap();
        assert!(own_at < r.stdout.find("Global options:").unwrap(), "{}", r.stdout);
    }
    // The same for a command with many options of its own.
    let r = run(ctx(dir.path()).args(["help", "messages"]));
    let own = options_under(&r.stdout, "Options:");
    assert_eq!(own.first().map(String::as_str), Some("--provider"), "{own:?}");
    assert!(!own.contains(&"--root".to_owned()), "{own:?}");
}

#[test]
fn provider_lists_its_values_in_help_and_in_the_error() {
    let dir = TempDir::new().unwrap();
    let Run { stdout: help, .. } = run(ctx(dir.path()).args(["messages", "-h"]));
    let words: Vec<&str> = help.split_whitespace().collect();
    let text = words.join(" ");
    assert!(text.contains("--provider <NAME> The chat API"), "{help}");
    assert!(text.contains("[possible values: openai, anthropic]"), "{help}");
    let Run { stdout: long, .. } = run(ctx(dir.path()).args(["help", "messages"]));
    assert!(long.contains("- openai:") && long.contains("- anthropic:"), "{long}");
    let r = run(ctx(dir.path()).args(["messages", "--provider", "gemini", "hi"]));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("'gemini'"), "{}", r.stderr);
    assert!(r.stderr.contains("[possible values: openai, anthropic]"), "{}", r.stderr);
}

#[test]
fn image_errors_carry_the_position_of_their_mention() {
    let dir = TempDir::new().unwrap();
    dir.child("fake.png").write_str("not an image").unwrap();
    dir.child("real.png").write_binary(&crate::images::png()).unwrap();
    let prompt = "see ![x](fake.png) and @real.png\nthen ![y](gone.png) and @fake.png\n";
    let r = run(ctx(dir.path()).args(["messages", prompt]));
    assert_eq!(r.code, 1);
    // The mention `@fake.png` is the prompt's own diagnostic (its attachment); the images,
    // read once each, are diagnostics of the prompt at their references.
    assert_eq!(
        r.stderr,
        "-:2:25: error[E_IMAGE]: fake.png: not a PNG, JPEG, GIF or WebP image\n\
         -:1:5: error[E_IMAGE]: fake.png: not a PNG, JPEG, GIF or WebP image\n\
         -:2:6: error[E_NOT_FOUND]: no such file or directory: gone.png\n"
    );
    // `-q` hides warnings, not these errors.
    let r = run(ctx(dir.path()).args(["-q", "messages", prompt]));
    assert_eq!(r.stderr.lines().count(), 3, "{}", r.stderr);
}
