//! Attacks of a hostile repository on the roots it may ask for, with the real binary: links
//! that carry a source folder or an allowed folder out of the workspace, configurations that
//! are not what they seem, and a repository that tries to trust itself. Each test names the
//! attack, then what must not happen (docs/security.md, "Roots and trust").

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::util::{Run, run};

/// A temporary machine: a home folder with credentials, the user's configuration folder, a
/// cache, and a repository beside them.
struct Machine {
    tmp: TempDir,
}

const AWS: &str = "aws_secret_access_key = AKIA-SECRET-FROM-HOME";

impl Machine {
    fn new() -> Machine {
        let machine = Machine { tmp: TempDir::new().unwrap() };
        let home = machine.path("home");
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::fs::write(home.join(".aws/credentials"), format!("[default]\n{AWS}\n")).unwrap();
        std::fs::create_dir_all(home.join("other-project")).unwrap();
        std::fs::write(home.join("other-project/notes.md"), "OTHER PROJECT NOTES\n").unwrap();
        std::fs::create_dir_all(machine.path("config")).unwrap();
        std::fs::create_dir_all(machine.path("repo/build")).unwrap();
        std::fs::create_dir_all(machine.path("repo/src")).unwrap();
        machine
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().canonicalize().unwrap().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `ctx` in `dir` of the repository, as the user of this machine.
    fn ctx(&self, dir: &str) -> Command {
        let mut cmd = Command::cargo_bin("ctx").unwrap();
        cmd.current_dir(self.path(dir))
            .env("HOME", self.path("home"))
            .env("CTX_CONFIG_DIR", self.path("config"))
            .env("CTX_CACHE_DIR", self.path("cache"))
            .env("NO_COLOR", "1")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CTX_FORCE_TTY")
            .env_remove("RUST_LOG")
            .timeout(Duration::from_secs(20));
        cmd
    }

    /// A solution in `repo/build` whose one project lists `item` (relative to the project).
    fn solution_listing(&self, item: &str) {
        self.write(
            "repo/build/app.vcxproj",
            &format!("<Project><ItemGroup><ClCompile Include=\"{item}\"/></ItemGroup></Project>"),
        );
        self.write(
            "repo/build/app.sln",
            "Project(\"{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}\") = \"a\", \"app.vcxproj\", \"{1}\"\n",
        );
    }
}

/// Neither output holds any of `secrets`.
#[track_caller]
fn no_leak(r: &Run, secrets: &[&str]) {
    for secret in secrets {
        assert!(!r.stdout.contains(secret), "{secret} leaked to stdout:\n{}", r.stdout);
        assert!(!r.stderr.contains(secret), "{secret} leaked to stderr:\n{}", r.stderr);
    }
}

/// The first line of /etc/passwd, which every Linux machine has.
const PASSWD: &str = "root:x:0:0";

/// The attack: a source folder of the build is a link to /etc; the solution lists a file in
/// it. Before the fix, the source root was judged by its written path and opened through
/// the link, and `@passwd` printed /etc/passwd. What must not happen: /etc is read, before
/// the user trusts the build's folders or after.
#[test]
fn a_source_folder_linked_to_a_system_folder_is_never_opened() {
    let m = Machine::new();
    symlink("/etc", m.path("repo/src/evil")).unwrap();
    m.solution_listing("../src/evil/hostname");
    let attack =
        || run(m.ctx("repo/build").args(["expand", "@passwd @[grep{\"pattern\":\"^root:\"}]"]));
    let r = attack();
    no_leak(&r, &[PASSWD]);
    assert!(r.stderr.contains("warning[W_UNTRUSTED]"), "{}", r.stderr);
    assert!(r.stderr.contains("`ctx trust`"), "{}", r.stderr);
    // Trusted by the user, the folder is still judged where it leads.
    let trust = run(m.ctx("repo/build").args(["trust"]));
    assert!(
        trust.stdout.contains("leads to /etc: a system folder, never opened"),
        "{}",
        trust.stdout
    );
    assert_eq!(run(m.ctx("repo/build").args(["trust", "--yes"])).code, 0);
    let r = attack();
    no_leak(&r, &[PASSWD]);
    assert!(r.stderr.contains("warning[W_SOURCES]"), "{}", r.stderr);
    assert!(r.stderr.contains("which leads to /etc, a system folder"), "{}", r.stderr);
    // The same through `--sln`, which the user names: the rule still holds.
    let r = run(m.ctx("repo/build").args(["--sln", "app.sln", "expand", "@passwd"]));
    no_leak(&r, &[PASSWD]);
    let r = run(m.ctx("repo/build").args(["sources", "--format", "json"]));
    no_leak(&r, &[PASSWD]);
}

/// The attack: a link to `/` as a source folder opens the disk; a link to the home folder's
/// `.aws` (through a compilation database's `directory`) prints the credentials. What must
/// not happen: either is read, trusted or not.
#[test]
fn links_to_the_disk_or_the_home_folders_secrets_are_never_opened() {
    let m = Machine::new();
    symlink("/", m.path("repo/src/disk")).unwrap();
    symlink(m.path("home/.aws"), m.path("repo/src/aws")).unwrap();
    symlink(m.path("home"), m.path("repo/src/home")).unwrap();
    let db = json!([
        { "directory": m.path("repo/src/aws"), "file": "credentials", "command": "cc -c credentials" },
        { "directory": m.path("repo/src/disk"), "file": "etc/passwd", "command": "cc -c etc/passwd" },
        { "directory": m.path("repo/src/home"), "file": ".aws/credentials", "command": "cc -c x" },
    ]);
    m.write("repo/build/compile_commands.json", &db.to_string());
    for trusted in [false, true] {
        if trusted {
            assert_eq!(run(m.ctx("repo/build").args(["trust", "--yes"])).code, 0);
        }
        for prompt in ["@credentials", "@etc/passwd", "@.aws/credentials", "@[tree{\"uri\":\"/\"}]"]
        {
            let r = run(m.ctx("repo/build").args(["expand", prompt]));
            no_leak(&r, &[AWS, PASSWD, "AKIA"]);
        }
        let r = run(m.ctx("repo/build").args(["resolve", "credentials", "passwd"]));
        no_leak(&r, &[AWS, PASSWD]);
    }
}

/// The attack: the repository's own `ctx.toml` allows a folder outside it, the user's other
/// project. What must not happen: it is read before the user trusts it; and once trusted,
/// a link the repository repoints later does not carry the trust to another folder.
#[test]
fn a_repositorys_allow_is_opened_only_once_trusted_and_only_where_it_led() {
    let m = Machine::new();
    std::fs::create_dir_all(m.path("shared")).unwrap();
    m.write("shared/team.md", "TEAM RULES\n");
    symlink(m.path("shared"), m.path("repo/vendor-link")).unwrap();
    // The link is in the repository, the folder it leads to is not: asked by its real path.
    m.write("repo/ctx.toml", "allow = [\"../shared\"]\n");
    let shared = m.path("shared/team.md");
    let read = |what: &str| run(m.ctx("repo").args(["expand", &format!("@{what}")]));
    let r = read(shared.to_str().unwrap());
    assert!(!r.stdout.contains("TEAM RULES"), "{}", r.stdout);
    assert_eq!(r.stderr.matches("W_UNTRUSTED").count(), 1, "one warning: {}", r.stderr);
    let listed = run(m.ctx("repo").args(["trust", "--format", "json"]));
    let json: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(json["trusted"], false);
    // Not trusted is exit 1 in JSON as in text.
    assert_eq!(listed.code, 1, "{}", listed.stdout);
    assert_eq!(json["asked"][0]["asked_by"], "ctx.toml (allow)");
    // With its output closed before the grant is recorded, `trust --yes` grants nothing and
    // says so by its status.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let closed = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctx"))
        .current_dir(m.path("repo"))
        .env("HOME", m.path("home"))
        .env("CTX_CONFIG_DIR", m.path("config"))
        .env("CTX_CACHE_DIR", m.path("cache"))
        .args(["trust", "--yes"])
        .stdout(writer)
        .output()
        .unwrap();
    let granted = closed.status.code() == Some(0);
    let now = run(m.ctx("repo").args(["trust", "--format", "json"])).code;
    assert_eq!(now, if granted { 0 } else { 1 }, "the status says whether it was granted");
    assert_eq!(run(m.ctx("repo").args(["trust", "--yes"])).code, 0);
    assert_eq!(run(m.ctx("repo").args(["trust", "--format", "json"])).code, 0);
    let r = read(shared.to_str().unwrap());
    assert!(r.stdout.contains("TEAM RULES"), "{}", r.stderr);
    assert!(!r.stderr.contains("W_UNTRUSTED"), "{}", r.stderr);

    // The repository now asks for its link, repointed at another of the user's projects.
    std::fs::remove_file(m.path("repo/vendor-link")).unwrap();
    symlink(m.path("home/other-project"), m.path("repo/vendor-link")).unwrap();
    m.write(
        "repo/ctx.toml",
        "allow = [\"../shared\", \"../other/../repo/../home/other-project\"]\n",
    );
    let other = m.path("home/other-project/notes.md");
    let r = read(other.to_str().unwrap());
    no_leak(&r, &["OTHER PROJECT NOTES"]);
    assert!(r.stderr.contains("W_UNTRUSTED"), "{}", r.stderr);
    // Revoked, nothing outside is opened again.
    assert_eq!(run(m.ctx("repo").args(["trust", "--revoke"])).code, 0);
    let r = read(shared.to_str().unwrap());
    assert!(!r.stdout.contains("TEAM RULES"), "{}", r.stdout);
}

/// cli.md: a workspace that asks for nothing is named, in text and JSON, and is exit 0.
#[test]
fn a_workspace_with_nothing_to_trust_is_named() {
    let m = Machine::new();
    m.write("repo/a.md", "hi\n");
    let r = run(m.ctx("repo").arg("trust"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.ends_with("repo asks for no folder outside it: nothing to trust\n"),
        "{}",
        r.stdout
    );
    let r = run(m.ctx("repo").args(["trust", "--format", "json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(json["workspace"].as_str().unwrap().ends_with("/repo"), "{json}");
}

/// The attack: probing the user's disk through the warnings. What must not happen: the
/// warning about an untrusted folder differs between a folder that exists and one that
/// does not.
#[test]
fn untrusted_folders_are_named_the_same_whether_they_exist_or_not() {
    let m = Machine::new();
    let warning = |folder: &str| {
        m.write("repo/ctx.toml", &format!("allow = [\"{folder}\"]\n"));
        let r = run(m.ctx("repo").args(["expand", "hi"]));
        let line = r.stderr.lines().find(|l| l.contains("W_UNTRUSTED")).unwrap().to_owned();
        line.replace(folder, "FOLDER")
    };
    let existing = m.path("home/other-project");
    let missing = m.path("home/no-such-project");
    assert_eq!(warning(existing.to_str().unwrap()), warning(missing.to_str().unwrap()));
}

/// The attack: `ctx.toml` is a link to a credentials file outside the repository, or a
/// credentials file of the repository's own, or a FIFO, or huge. What must not happen: the
/// credentials are printed in an error, a link out is followed, the run hangs.
#[test]
fn a_configuration_is_read_like_any_other_file() {
    let m = Machine::new();
    let docker = r#"{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpodW50ZXIy="}}}"#;
    m.write("docker.json", docker);
    symlink(m.path("docker.json"), m.path("repo/ctx.toml")).unwrap();
    let r = run(m.ctx("repo").args(["expand", "hi"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("E_OUTSIDE"), "{}", r.stderr);
    no_leak(&r, &["dXNlcjpodW50ZXIy", "auths"]);

    std::fs::remove_file(m.path("repo/ctx.toml")).unwrap();
    m.write("repo/creds.json", docker);
    symlink("creds.json", m.path("repo/ctx.toml")).unwrap();
    let r = run(m.ctx("repo").args(["expand", "hi"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("ctx.toml:1:1"), "names the place: {}", r.stderr);
    no_leak(&r, &["dXNlcjpodW50ZXIy", "auths", "docker.io"]);

    std::fs::remove_file(m.path("repo/ctx.toml")).unwrap();
    let status = std::process::Command::new("mkfifo").arg(m.path("repo/ctx.toml")).status();
    assert!(status.unwrap().success());
    let r = run(m.ctx("repo").args(["expand", "hi"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("E_NOT_REGULAR"), "{}", r.stderr);

    std::fs::remove_file(m.path("repo/ctx.toml")).unwrap();
    m.write("repo/.ctx/config.toml", &format!("# {}\n", "x".repeat(2 << 20)));
    let r = run(m.ctx("repo").args(["expand", "hi"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("E_TOO_LARGE"), "{}", r.stderr);
}

/// The attack: the repository plants grants where a trust file might be looked for (its own
/// `.ctx/trust.json`, a `.config/ctx/trust.json` for a home folder set to the repository)
/// and a `trust` key in its configuration. What must not happen: any of it opens a folder.
#[test]
fn a_repository_cannot_trust_itself() {
    let m = Machine::new();
    m.write("shared/team.md", "TEAM RULES\n");
    let grant = |workspace: &Path| {
        json!({ "version": 1, "workspaces": [{
            "workspace": workspace, "digest": "sha256:0", "roots": [m.path("shared")]
        }] })
        .to_string()
    };
    let repo = m.path("repo");
    for planted in [".ctx/trust.json", "trust.json", ".config/ctx/trust.json"] {
        m.write(&format!("repo/{planted}"), &grant(&repo));
    }
    m.write("repo/ctx.toml", "allow = [\"../shared\"]\n");
    let team = m.path("shared/team.md");
    let r = run(m.ctx("repo").args(["expand", &format!("@{}", team.display())]));
    no_leak(&r, &["TEAM RULES"]);
    // Without CTX_CONFIG_DIR the trust file is the home folder's; the repository is not it.
    let r = run(m
        .ctx("repo")
        .env_remove("CTX_CONFIG_DIR")
        .env("HOME", &repo)
        .args(["expand", &format!("@{}", team.display())]));
    no_leak(&r, &["TEAM RULES"]);
    m.write("repo/ctx.toml", "trust = true\nallow = [\"../shared\"]\n");
    let r = run(m.ctx("repo").args(["expand", &format!("@{}", team.display())]));
    assert_eq!(r.code, 2, "an unknown key: {}", r.stderr);
    no_leak(&r, &["TEAM RULES"]);
}

/// The servers are built from the same settings: a hostile build folder reads nothing
/// outside through `ctx mcp` either.
#[cfg(feature = "mcp")]
#[test]
fn the_mcp_server_keeps_the_same_roots() {
    let m = Machine::new();
    symlink("/etc", m.path("repo/src/evil")).unwrap();
    m.solution_listing("../src/evil/hostname");
    let script = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "script", "version": "1" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "expand", "arguments": { "prompt": "@passwd @[grep{\"pattern\":\"^root:\"}]" } } }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "resolve", "arguments": { "queries": ["passwd"] } } }),
    ];
    let input: String = script.iter().map(|m| format!("{m}\n")).collect();
    for trusted in [false, true] {
        if trusted {
            assert_eq!(run(m.ctx("repo/build").args(["trust", "--yes"])).code, 0);
        }
        let r = run(m.ctx("repo/build").arg("mcp").write_stdin(input.clone()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        no_leak(&r, &[PASSWD]);
        assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
    }
}

/// The attack: the rules folder is a link to a folder outside the repository (another
/// project's rules, the home folder). What must not happen: its files reach the system
/// prompt, the MCP resources or `ctx messages`.
#[test]
fn a_rules_folder_that_leads_out_is_never_read() {
    let m = Machine::new();
    m.write("elsewhere/rules/secret.md", "RULES FROM ELSEWHERE\n");
    std::fs::create_dir_all(m.path("repo/.ctx")).unwrap();
    symlink(m.path("elsewhere/rules"), m.path("repo/.ctx/rules")).unwrap();
    let r = run(m.ctx("repo").args(["system-prompt"]));
    no_leak(&r, &["RULES FROM ELSEWHERE"]);
    let r = run(m.ctx("repo").args(["messages", "hi"]));
    no_leak(&r, &["RULES FROM ELSEWHERE"]);
    m.write("repo/ctx.toml", "rules_dir = \"../elsewhere/rules\"\n");
    let r = run(m.ctx("repo").args(["system-prompt"]));
    no_leak(&r, &["RULES FROM ELSEWHERE"]);
}

/// The user's own configuration (`config.toml` beside the trust file) is the user's word: its
/// roots open without `ctx trust` and it may raise bounds; the workspace's lies over it. The
/// attack: a repository that is the home folder plants `.config/ctx/config.toml`. What must
/// not happen: the repository's file counts as the user's.
#[test]
fn the_users_own_configuration_is_the_users_word_and_the_repositorys_is_not() {
    let m = Machine::new();
    m.write("shared/team.md", "TEAM RULES\n");
    m.write("repo/big.txt", &"x".repeat(3 << 20));
    let team = m.path("shared/team.md");
    let mine = format!(
        "allow = [\"{}\"]\nmax_file_bytes = 8388608\n[defines]\nWHO = \"me\"\nWHERE = \"home\"\n",
        m.path("shared").display()
    );
    m.write("config/config.toml", &mine);
    m.write("repo/ctx.toml", "[defines]\nWHERE = \"repo\"\n");
    // No token budget: the 3 MiB line is over the default one, and counting it in a debug
    // build is not what this test is about.
    let r = run(m.ctx("repo").args([
        "expand",
        "--max-tokens",
        "0",
        &format!("@{} @big.txt", team.display()),
    ]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("TEAM RULES"), "{}", r.stderr);
    assert!(!r.stderr.contains("W_UNTRUSTED") && !r.stderr.contains("E_TOO_LARGE"), "{}", r.stderr);
    let r = run(m.ctx("repo").args(["assemble", "-"]).write_stdin("@{WHO} @{WHERE}\n"));
    assert_eq!(r.stdout, "me repo\n", "the workspace's lies over the user's");

    // The same file in a repository that is the home folder is the repository's.
    m.write("repo/.config/ctx/config.toml", &mine);
    let r = run(m
        .ctx("repo")
        .env_remove("CTX_CONFIG_DIR")
        .env("HOME", m.path("repo"))
        .args(["expand", &format!("@{} @big.txt", team.display())]));
    no_leak(&r, &["TEAM RULES"]);
    assert!(r.stderr.contains("lies in the workspace"), "{}", r.stderr);
    assert!(r.stderr.contains("E_TOO_LARGE"), "its bounds do not count: {}", r.stderr);
}
