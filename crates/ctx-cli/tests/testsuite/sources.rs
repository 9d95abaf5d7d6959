//! CLI tests of out-of-source builds: `ctx sources`, `ctx resolve`, and mentions and includes
//! of real sources from the build folder, with the real binary on a copy of ctx-sources'
//! fixture (`crates/ctx-sources/tests/fixtures/oos`).

#[path = "../../../ctx-sources/tests/fixture/mod.rs"]
mod fixture;

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

use crate::util::assert_no_raw_hidden;

struct Build {
    _tmp: TempDir,
    cache: TempDir,
    /// The user's configuration folder, where `ctx trust` records its grants.
    config: TempDir,
    root: String,
}

impl Build {
    fn new() -> Build {
        let (tmp, root) = fixture::fixture("oos");
        Build { _tmp: tmp, cache: TempDir::new().unwrap(), config: TempDir::new().unwrap(), root }
    }

    /// The binary in the build folder, run by a user who trusts the source folders that the
    /// build's solution asks for as they are now (`ctx trust --yes`; a broken configuration
    /// leaves nothing to trust).
    fn ctx(&self) -> Command {
        self.ctx_with(&[])
    }

    /// [`Build::ctx`] with these variables set, for the trust and the command alike.
    fn ctx_with(&self, vars: &[(&str, &str)]) -> Command {
        let vars: Vec<(&str, &str)> = vars.to_vec();
        run(self.untrusted_ctx().envs(vars.iter().copied()).args(["trust", "--yes"]));
        let mut cmd = self.untrusted_ctx();
        cmd.envs(vars);
        cmd
    }

    /// The binary in the build folder, with the user's trust as it stands.
    fn untrusted_ctx(&self) -> Command {
        let mut cmd = Command::cargo_bin("ctx").unwrap();
        cmd.current_dir(format!("{}/build", self.root))
            .env("NO_COLOR", "1")
            .env("CTX_CACHE_DIR", self.cache.path())
            .env("CTX_CONFIG_DIR", self.config.path())
            .env_remove("CTX_FORCE_TTY")
            .env_remove("RUST_LOG");
        cmd
    }

    /// Keeps one solution of the three, so that detection finds exactly one.
    fn keep_only(&self, name: &str) {
        for other in ["FreeCAD.sln", "FreeCAD.slnx", "compile_commands.json"] {
            if other != name {
                std::fs::remove_file(format!("{}/build/{other}", self.root)).unwrap();
            }
        }
    }
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

#[test]
fn a_stored_index_sees_a_file_added_under_a_wildcard_folder_and_a_project_edited() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    // Trusted once; then run as the user runs it, the index stored by the run before.
    let json = |cmd: &mut Command| -> Value {
        let (code, out, err) = run(cmd.args(["sources", "--format", "json"]));
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    assert_eq!(json(&mut build.ctx())["files"], 10);
    let warm = json(&mut build.untrusted_ctx());
    assert_eq!((warm["cached"].as_bool(), warm["files"].as_u64()), (Some(true), Some(10)));
    // A file added under the folder of `..\..\src\Glob\*.cpp`: seen by the stored index.
    std::fs::write(format!("{}/src/Glob/c.cpp", build.root), "// c\n").unwrap();
    let warm = json(&mut build.untrusted_ctx());
    assert_eq!((warm["cached"].as_bool(), warm["files"].as_u64()), (Some(true), Some(11)));
    assert_eq!(warm["projects"][0]["files"], 10);
    // A project edited: built again.
    let project = format!("{}/build/Gui/Gui.vcxproj", build.root);
    let text = std::fs::read_to_string(&project).unwrap();
    std::fs::write(&project, text.replace("</Project>", "<!-- edited --></Project>")).unwrap();
    let rebuilt = json(&mut build.untrusted_ctx());
    assert_eq!((rebuilt["cached"].as_bool(), rebuilt["files"].as_u64()), (Some(false), Some(11)));
}

/// A database found by looking that does not parse: `ctx sources` says why, with the code,
/// the line and the column, as for one named with `--compile-commands`.
#[test]
fn a_broken_database_found_by_looking_says_why() {
    let build = Build::new();
    build.keep_only("compile_commands.json");
    let broken = "[\n {\"directory\":\"/tmp\",\"file\":\"x.c\"}\n {\"directory\":\"/tmp\",\"file\":\"y.c\"}\n]\n";
    std::fs::write(format!("{}/build/compile_commands.json", build.root), broken).unwrap();
    let (code, _, err) = run(build.untrusted_ctx().arg("sources"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("E_CONFIG") && err.contains("line 3 column 2"), "{err}");
}

#[test]
fn sources_reports_the_index_and_caches_it() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let (code, out, err) = run(build.ctx().args(["sources", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["solution"], format!("{}/build/FreeCAD.sln", build.root));
    assert_eq!(json["source_roots"], serde_json::json!([format!("{}/src", build.root)]));
    assert_eq!(json["files"], 10);
    assert_eq!(json["projects"][0]["name"], "App");
    // Its own items, the filters' one file it does not list, the shared items, the wildcard's.
    assert_eq!(json["projects"][0]["files"], 9);
    assert_eq!(json["missing"][0]["path"], format!("{}/src/App/Gone.cpp", build.root));
    assert_eq!(json["missing"][0]["project"], "App");
    assert_eq!(json["corrected"][0]["path"], format!("{}/src/Base/Test/x.c", build.root));
    assert_eq!(json["cached"], false);
    assert!(json["elapsed_ms"].as_f64().is_some());
    let (_, again, _) = run(build.ctx().args(["sources", "--format", "json"]));
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["cached"], true, "the second run reads the stored index");
    assert_eq!(again["files"], 10);

    let (code, text, _) = run(build.ctx().arg("sources"));
    assert_eq!(code, 0);
    assert!(
        text.contains("3 projects, 10 files (9 on disk, 1 missing, 1 case-corrected)"),
        "{text}"
    );
    let (_, prompt, _) = run(build.ctx().args(["sources", "--prompt"]));
    assert!(prompt.starts_with("## Source roots\n") && prompt.contains("read-only"), "{prompt}");
}

#[test]
fn resolve_says_how_each_query_resolves() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let queries = [
        "FreeCAD.sln",
        "src/App/Application.h",
        "App/Extra.h",
        "Main.cpp",
        "Application.h",
        "nope.c",
        ".git/config",
    ];
    let (code, out, err) = run(build.ctx().args(["resolve", "--format", "json"]).args(queries));
    assert_eq!(code, 1, "not every query is a file: {err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    let row = |i: usize| {
        let r = &json[i];
        (
            r["status"].as_str().unwrap().to_owned(),
            r["via"].as_str().map(str::to_owned),
            r["code"].as_str().map(str::to_owned),
        )
    };
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(row(0), ("file".into(), some("workspace"), None));
    assert_eq!(row(1), ("file".into(), some("index"), None));
    assert_eq!(row(2), ("file".into(), some("source_root"), None));
    assert_eq!(row(3), ("file".into(), some("file_name"), None));
    assert_eq!(row(4), ("ambiguous".into(), None, some("E_AMBIGUOUS")));
    // Each candidate is an object: the file, its root, and the path relative to that root.
    let src = format!("{}/src", build.root);
    assert_eq!(
        json[4]["candidates"],
        serde_json::json!([
            { "path": format!("{src}/App/Application.h"), "relative": "App/Application.h", "root": src },
            { "path": format!("{src}/Gui/Application.h"), "relative": "Gui/Application.h", "root": src },
        ])
    );
    assert_eq!(row(5), ("not_found".into(), None, some("E_NOT_FOUND")));
    assert_eq!(row(6), ("refused".into(), None, some("E_DENIED")));
    assert_eq!(json[1]["path"], format!("{}/src/App/Application.h", build.root));

    let (code, text, _) = run(build.ctx().args(["resolve", "Main.cpp", "App/Application.h"]));
    assert_eq!(code, 0, "every query is a file");
    assert!(text.contains("Main.cpp: ") && text.contains("(via file_name)"), "{text}");
}

#[test]
fn mentions_and_includes_reach_the_sources_from_the_build_folder() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let (code, out, err) =
        run(build.ctx().args(["expand", "explain @src/App/Application.h and @Main.cpp"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("struct Application {};"), "{out}");
    assert!(out.contains("// gui"), "{out}");
    std::fs::write(
        format!("{}/build/rules.md", build.root),
        "@[App/Application.cpp]\n@[Application.h]\n",
    )
    .unwrap();
    let (code, out, err) = run(build.ctx().args(["assemble", "rules.md"]));
    assert_eq!(code, 1, "the ambiguous include is an error");
    assert!(out.contains("int main() { return 0; }"), "{out}");
    assert!(err.contains("E_AMBIGUOUS") && err.contains("1) App/Application.h in "), "{err}");
    // A typo of an indexed name: the index says what was meant.
    std::fs::write(format!("{}/build/typo.md", build.root), "@[Applicaton.cpp]\n").unwrap();
    let (code, _, err) = run(build.ctx().args(["assemble", "typo.md"]));
    assert_eq!(code, 1);
    assert!(err.contains("E_NOT_FOUND") && err.contains("did you mean"), "{err}");
    assert!(err.contains("did you mean App/Application.cpp in "), "{err}");
    let (code, out, err) =
        run(build.ctx().args(["--no-sources", "expand", "@App/Application.cpp"]));
    assert_eq!(code, 0, "an unresolved mention is a warning");
    assert!(err.contains("W_UNRESOLVED") && !out.contains("int main"), "{err}");
}

#[test]
fn a_named_database_or_xml_solution_is_used_and_several_are_not_guessed() {
    let build = Build::new();
    let (code, _, err) = run(build.ctx().arg("sources"));
    assert_eq!(code, 2, "three candidates");
    assert!(err.contains("several") && err.contains("--sln"), "{err}");
    let (code, out, err) = run(build.ctx().args([
        "--compile-commands",
        "compile_commands.json",
        "sources",
        "--format",
        "json",
    ]));
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["projects"][0]["name"], "compile_commands");
    let (code, out, _) = run(build.ctx().args(["--sln", "FreeCAD.slnx", "resolve", "Filtered.h"]));
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = run(build.ctx().args(["--sln", "missing.sln", "sources"]));
    assert_eq!(code, 2);
    assert!(err.contains("E_NOT_FOUND"), "{err}");
}

/// A build folder with a solution and a `compile_commands.json`, as CMake leaves one that was
/// configured for Visual Studio and for Ninja.
#[test]
fn a_solution_and_a_database_side_by_side_are_read_into_one_index() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let other = Build::new();
    let db = format!("{}/build/compile_commands.json", other.root);
    let db = std::fs::read_to_string(db).unwrap().replace(&other.root, &build.root);
    std::fs::write(format!("{}/build/compile_commands.json", build.root), db).unwrap();
    // Until the source folder is trusted, nothing of it is read, merged or not.
    let (_, out, err) = run(build.untrusted_ctx().args(["expand", "@Application.cpp"]));
    assert!(err.contains("W_UNTRUSTED") && !out.contains("int main"), "{err} {out}");
    assert!(err.contains("FreeCAD.sln and compile_commands.json"), "{err}");

    let (code, out, err) = run(build.ctx().args(["sources", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    let dir = format!("{}/build", build.root);
    assert_eq!(json["solution"], format!("{dir}/FreeCAD.sln"));
    assert_eq!(json["also_read"], serde_json::json!([format!("{dir}/compile_commands.json")]));
    let names: Vec<&str> =
        json["projects"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["App", "Gui", "Lost", "compile_commands"]);
    // Said once, as a notice.
    let notice = "found FreeCAD.sln and compile_commands.json: both read into one source index";
    assert_eq!(err.matches(notice).count(), 1, "{err}");
    let (code, text, err) = run(build.ctx().arg("sources"));
    assert_eq!(code, 0, "{err}");
    assert!(text.contains(&format!("also read: {dir}/compile_commands.json\n")), "{text}");
    // A file of either resolves.
    let (code, out, err) = run(build.ctx().args(["expand", "@Main.cpp @App/Application.h"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("// gui") && out.contains("struct Application"), "{out}");

    // `--sln` and `--compile-commands` still read one alone, without the notice.
    for (option, file, project) in [
        ("--sln", "FreeCAD.sln", "App"),
        ("--compile-commands", "compile_commands.json", "compile_commands"),
    ] {
        let (code, out, err) = run(build.ctx().args([option, file, "sources", "--format", "json"]));
        assert_eq!(code, 0, "{err}");
        let json: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(json["solution"], format!("{dir}/{file}"));
        assert_eq!(json["also_read"], serde_json::json!([]));
        assert_eq!(json["projects"][0]["name"], project);
        assert!(!err.contains("both read"), "{err}");
    }
}

#[test]
fn sources_prompt_cites_the_projects_own_paths() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().to_str().unwrap().to_owned();
    for file in ["src/net/socket.c", "src/net/socket.h", "src/io/socket.h", "src/io/poll.c"] {
        let path = format!("{root}/{file}");
        std::fs::create_dir_all(std::path::Path::new(&path).parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    std::fs::create_dir(format!("{root}/build")).unwrap();
    let unit = |f: &str| {
        format!(
            "{{\"directory\": \"{root}/build\", \"file\": \"../src/{f}\", \"command\": \"cc\"}}"
        )
    };
    let db = format!("[{}, {}]", unit("net/socket.c"), unit("io/poll.c"));
    std::fs::write(format!("{root}/build/compile_commands.json"), db).unwrap();
    let config = tempfile::tempdir().unwrap();
    let ctx = || {
        let mut cmd = Command::cargo_bin("ctx").unwrap();
        cmd.current_dir(format!("{root}/build"))
            .env("NO_COLOR", "1")
            .env("CTX_CACHE_DIR", config.path().join("cache"))
            .env("CTX_CONFIG_DIR", config.path())
            .env_remove("CTX_FORCE_TTY")
            .env_remove("RUST_LOG");
        cmd
    };
    run(ctx().args(["trust", "--yes"]));
    let (code, text, err) = run(ctx().args(["sources", "--prompt"]));
    assert_eq!(code, 0, "{err}");
    assert!(text.contains(&format!("- {root}/src\n")), "{text}");
    assert!(text.contains("resolves (`@net/socket.c`)"), "{text}");
    assert!(text.contains("has (`@socket.c`)"), "not `socket.h`, which two files have: {text}");
    assert!(!text.contains("Application") && !text.contains("FreeCAD"), "{text}");
}

#[test]
fn the_build_folder_is_searched_and_ctx_toml_chooses() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    // From the folder above the build: the one solution in `build/` is found.
    let mut above = build.ctx();
    above.current_dir(&build.root);
    let (code, out, err) = run(above.args(["sources", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["solution"], format!("{}/build/FreeCAD.sln", build.root));

    let config = format!("{}/build/ctx.toml", build.root);
    let sources = |config_text: &str| {
        std::fs::write(&config, config_text).unwrap();
        run(build.ctx().args(["sources", "--format", "json"]))
    };
    let (code, out, err) = sources("sources_max_files = 3\n");
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["files"], 3, "{json}");
    let (code, _, err) = sources("no_sources = true\n");
    assert_eq!(code, 2, "{err}");
    // A solution named on the command line wins over the file's `no_sources`.
    let (code, _, err) = run(build.ctx().args(["--sln", "FreeCAD.sln", "sources"]));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = sources("sln = \"missing.sln\"\n");
    assert_eq!(code, 2);
    assert!(err.contains("E_NOT_FOUND"), "the configured solution is the one looked for: {err}");
}

#[test]
fn a_project_naming_a_key_outside_the_tree_does_not_make_it_readable() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let home = format!("{}/home", build.root);
    std::fs::create_dir_all(format!("{home}/.ssh")).unwrap();
    std::fs::write(format!("{home}/.ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
    let project = format!("{}/build/Gui/Gui.vcxproj", build.root);
    let text = std::fs::read_to_string(&project).unwrap();
    let evil = format!(
        "<ClInclude Include=\"{home}/.ssh/id_rsa\" /><ClInclude Include=\"/etc/passwd\" /></ItemGroup>"
    );
    std::fs::write(&project, text.replacen("</ItemGroup>", &evil, 1)).unwrap();
    let (_, out, _) = run(build.ctx_with(&[("HOME", &home)]).args(["sources", "--format", "json"]));
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["source_roots"], serde_json::json!([format!("{}/src", build.root)]));
    // The text summary counts them as refused, not as files on disk.
    let (_, text, _) = run(build.ctx_with(&[("HOME", &home)]).arg("sources"));
    let files = json["files"].as_u64().unwrap();
    let missing = json["missing"].as_array().unwrap().len() as u64;
    let on_disk = files - missing - 2;
    assert!(
        text.contains(&format!("({on_disk} on disk,")) && text.contains(", 2 refused)"),
        "{text}"
    );
    let (code, out, _) = run(build
        .ctx_with(&[("HOME", &home)])
        .args(["resolve", "--format", "json", "id_rsa", "passwd"]));
    assert_eq!(code, 1);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json[0]["status"], "refused");
    assert_eq!(json[1]["status"], "refused");
    let (_, out, err) = run(build.ctx_with(&[("HOME", &home)]).args(["expand", "@id_rsa @passwd"]));
    assert!(!out.contains("PRIVATE KEY") && !out.contains("root:"), "{out}");
    assert!(err.contains("E_OUTSIDE"), "{err}");
}

#[test]
fn tools_and_walks_of_the_root_cover_the_source_roots() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let src = format!("{}/src", build.root);
    let rules = "@[grep{\"pattern\":\"struct Applicatio[n]\"}]\n---\n@[glob{\"pattern\":\"**/Main.cpp\"}]\n---\n@[ls{\"uri\":\".\"}]\n---\n@[tree{\"uri\":\".\",\"depth\":1}]\n---\n@[src/Gui/]\n";
    std::fs::write(format!("{}/build/tools.md", build.root), rules).unwrap();
    let (code, out, err) = run(build.ctx().args(["assemble", "tools.md"]));
    assert_eq!(code, 0, "{err}");
    let parts: Vec<&str> = out.split("---\n").collect();
    assert_eq!(parts[0], format!("{src}/App/Application.h:2: struct Application {{}};\n"));
    assert_eq!(parts[1], format!("{src}/Gui/Main.cpp\n"));
    let roots_line = format!("[source roots, read-only: {src}]\n");
    assert!(parts[2].ends_with(&roots_line), "{}", parts[2]);
    assert!(parts[3].ends_with(&roots_line), "{}", parts[3]);
    assert!(parts[4].contains("// gui") && parts[4].contains("Main.cpp"), "{}", parts[4]);
}

#[test]
fn globs_may_name_a_folder_under_a_source_root() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let src = format!("{}/src", build.root);
    std::fs::write(
        format!("{}/build/globs.md", build.root),
        "@[src/App/*.h]\n---\n@[Base/Test/*.c]\n",
    )
    .unwrap();
    let (code, out, err) = run(build.ctx().args(["--format", "json", "assemble", "globs.md"]));
    assert_eq!(code, 0, "{err}\n{out}");
    let json: Value = serde_json::from_str(&out).unwrap();
    let content = json["content"].as_str().unwrap();
    let parts: Vec<&str> = content.split("---\n").collect();
    for name in ["Application.h", "Extra.h", "Filtered.h"] {
        assert!(parts[0].contains(name), "{name} in {}", parts[0]);
    }
    assert!(parts[1].contains("x.c") && !parts[1].contains("Application.h"), "{}", parts[1]);
    let references = json["references"].as_array().unwrap();
    assert_eq!(references[0]["kind"], "glob");
    assert_eq!(references[0]["path"], "src/App/*.h");
    assert!(references.iter().all(|r| r["error"].is_null()), "{references:?}");
    assert!(!content.contains(&format!("{src}/Gui")), "{content}");
}

#[test]
fn the_stored_index_of_one_workspace_is_not_served_to_another() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    // From the folder above the build, the sources are part of the workspace.
    let mut top = build.ctx();
    top.current_dir(&build.root).args([
        "--sln",
        "build/FreeCAD.sln",
        "sources",
        "--format",
        "json",
    ]);
    let (code, out, err) = run(&mut top);
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["source_roots"], serde_json::json!([]));
    // From the build folder they lie outside it: source roots, and the files resolve.
    let (code, out, err) =
        run(build.ctx().args(["resolve", "--format", "json", "App/Application.h"]));
    assert_eq!(code, 0, "{err}\n{out}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json[0]["status"], "file", "{json}");
}

#[cfg(feature = "mcp")]
#[test]
fn the_mcp_server_resolves_and_reports_the_sources() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let script = [
        serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "script", "version": "1" } } }),
        serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "resolve", "arguments": { "queries": ["Main.cpp", "Application.h"] } } }),
        serde_json::json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "sources", "arguments": {} } }),
    ];
    let responses = crate::util::mcp_answers(&mut build.ctx(), &script);
    let results = &responses[1]["result"]["structuredContent"]["results"];
    assert_eq!(results[0]["status"], "file");
    assert_eq!(results[0]["via"], "file_name");
    assert_eq!(results[1]["status"], "ambiguous");
    assert_eq!(results[1]["code"], "E_AMBIGUOUS");
    let summary = &responses[2]["result"]["structuredContent"]["summary"];
    assert_eq!(summary["source_roots"], serde_json::json!([format!("{}/src", build.root)]));
    assert_eq!(summary["files"], 10);
}

/// No character a terminal obeys or that hides text, raw, in `text`.
/// The attack: a `compile_commands.json` whose paths carry a terminal title sequence
/// (`\e]0;…\a`), a screen clear through the C1 CSI, a bidi override, a zero-width joiner and
/// a Tag character. What must not happen: any of them reaching the terminal raw, in the text or
/// the JSON of `ctx sources`, `ctx sources --prompt` or `ctx resolve`.
#[test]
fn paths_from_a_project_file_reach_the_terminal_made_visible() {
    let build = Build::new();
    build.keep_only("compile_commands.json");
    let database = serde_json::json!([
        { "directory": format!("{}/build/App", build.root), "command": "c++ -c x.cpp",
          "file": "../../src/App/pwn\u{1b}]0;owned\u{7}.cpp" },
        { "directory": format!("{}/build/App", build.root), "command": "c++ -c y.cpp",
          "file": "../../src/App/evil\u{9b}2J\u{202e}txt.exe\u{200d}\u{e0041}.cpp" },
        { "directory": format!("{}/build/Gui", build.root), "command": "c++ -c Main.cpp",
          "file": format!("{}/src/Gui/Main.cpp", build.root) },
    ]);
    std::fs::write(format!("{}/build/compile_commands.json", build.root), database.to_string())
        .unwrap();
    let (code, text, err) = run(build.ctx().arg("sources"));
    assert_eq!(code, 0, "{err}");
    assert_no_raw_hidden(&text);
    assert_no_raw_hidden(&err);
    assert!(text.contains("pwn\\u{1b}]0;owned\\u{7}.cpp"), "{text}");
    assert!(text.contains("evil\\u{9b}2J\\u{202E}txt.exe\\u{200D}\\u{E0041}.cpp"), "{text}");
    let (code, json, _) = run(build.ctx().args(["sources", "--format", "json"]));
    assert_eq!(code, 0);
    let value: Value = serde_json::from_str(&json).unwrap();
    assert_no_raw_hidden(&format!("{value:#}"));
    assert!(json.contains("pwn\\\\u{1b}]0;owned\\\\u{7}.cpp"), "{json}");
    let (_, prompt, _) = run(build.ctx().args(["sources", "--prompt"]));
    assert_no_raw_hidden(&prompt);
    for format in ["text", "json"] {
        let (_, out, err) = run(build.ctx().args([
            "resolve",
            "--format",
            format,
            "pwn\u{1b}]0;owned\u{7}.cpp",
            "Main.cpp",
        ]));
        assert_no_raw_hidden(&out);
        assert_no_raw_hidden(&err);
    }
}

/// A project names a folder outside the workspace that becomes a source root of its own: one
/// that is missing and one that is a file. Neither makes any command fail, and what is said of
/// them is the same text: nothing tells which of the two it was.
#[test]
fn a_source_root_that_is_missing_or_a_file_is_a_warning_told_the_same() {
    let mut seen = Vec::new();
    for name in ["missing", "file.txt"] {
        let build = Build::new();
        build.keep_only("FreeCAD.sln");
        std::fs::create_dir_all(format!("{}/other", build.root)).unwrap();
        std::fs::write(format!("{}/other/file.txt", build.root), "a file\n").unwrap();
        let project = format!("{}/build/Gui/Gui.vcxproj", build.root);
        let text = std::fs::read_to_string(&project).unwrap();
        let item = format!(
            "<ClInclude Include=\"{}/other/{name}/x.h\" /><ClInclude Include=\"{}/other/{name}/**/*.h\" /></ItemGroup>",
            build.root, build.root
        );
        std::fs::write(&project, text.replacen("</ItemGroup>", &item, 1)).unwrap();
        // The tree is the home folder: `other/{name}` is then a root of its own.
        let ctx = || build.ctx_with(&[("HOME", &build.root)]);
        let (code, text, err) = run(ctx().arg("sources"));
        assert_eq!(code, 0, "{err}");
        assert!(text.contains(&format!("source root: {}/other/{name}\n", build.root)), "{text}");
        assert!(text.contains(", 1 refused)"), "unreadable, not missing: {text}");
        let (code, out, err) = run(ctx().args(["expand", "@Main.cpp"]));
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("// gui"), "{out}");
        let (_, json, _) = run(ctx().args(["sources", "--format", "json"]));
        let json: Value = serde_json::from_str(&json).unwrap();
        let warnings = json["warnings"].as_array().unwrap();
        assert!(warnings.iter().all(|w| w["code"] == "W_SOURCES"), "{warnings:?}");
        let said: Vec<String> = text
            .lines()
            .filter(|l| l.contains("warning[") || l.starts_with("refused: "))
            .map(|l| l.replace(&build.root, "ROOT").replace(name, "NAME"))
            .collect();
        seen.push(said);
    }
    assert_eq!(seen[0], seen[1], "the same words whether missing or a file");
    let all = seen[0].join("\n");
    assert!(all.contains("warning[W_SOURCES]: source root ROOT/other/NAME is not open"), "{all}");
    assert!(all.contains("Gui.vcxproj:5: warning[W_SOURCES]: wildcard"), "{all}");
}

/// A solution lists one project again under other spellings: it is one project, read once,
/// and the solution's line that repeats it is named.
#[test]
fn a_project_listed_again_is_one_project_with_a_warning() {
    let build = Build::new();
    build.keep_only("FreeCAD.sln");
    let sln = format!("{}/build/FreeCAD.sln", build.root);
    let text = std::fs::read_to_string(&sln).unwrap();
    let again = "Project(\"{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}\") = \"App2\", \".\\App\\..\\APP\\app.vcxproj\", \"{9}\"\nEndProject\nGlobal";
    std::fs::write(&sln, text.replacen("Global", again, 1)).unwrap();
    let (code, text, err) = run(build.ctx().arg("sources"));
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("3 projects, 10 files"), "{text}");
    assert!(
        text.contains(&format!(
            "FreeCAD.sln:12: warning[W_SOURCES]: project {}/build/App/App.vcxproj listed 2 times",
            build.root
        )),
        "{text}"
    );
}
