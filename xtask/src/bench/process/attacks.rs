//! The shapes of a hostile workspace or client (docs/security.md), each run through the release
//! `ctx` as a user or a client would run it, with its time and peak memory, beside `ctx check`
//! of a one-line document (the process start) in the same run. The target of each: under a
//! second and under 100 MiB.
//!
//! - one 1 MiB line of failing mentions through `ctx check`, `ctx expand`, the MCP `expand`
//!   tool and an LSP `didOpen` with ten edits; one 1 MiB line of the densest items (`@a `);
//! - an LSP `didOpen` of 51 MB;
//! - out-of-source builds: one project of 20 000 items listed 400 times, 2 000 identical `**`
//!   wildcard items, a `compile_commands.json` of 20 000 directories, a solution of 100 000
//!   projects, projects naming a missing folder outside the workspace and a file used as a
//!   folder.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use super::{Measured, Memory, Sizes, Value, cached, seconds};
use crate::Result;

pub(in crate::bench) const START: &str = "process/attack_baseline";

/// Each shape: its name in the table, the name of its peak memory, and what it is.
pub(in crate::bench) const SHAPES: &[(&str, &str, &str)] = &[
    (
        "process/attack_check_mentions",
        "process/attack_check_mentions_peak_rss",
        "ctx check: 1 MiB line of failing mentions",
    ),
    (
        "process/attack_check_dense",
        "process/attack_check_dense_peak_rss",
        "ctx check: 1 MiB line of `@a `",
    ),
    (
        "process/attack_expand_mentions",
        "process/attack_expand_mentions_peak_rss",
        "ctx expand: 1 MiB line of failing mentions",
    ),
    (
        "process/attack_mcp_mentions",
        "process/attack_mcp_mentions_peak_rss",
        "ctx mcp: expand of a 1 MiB line of failing mentions",
    ),
    (
        "process/attack_lsp_mentions",
        "process/attack_lsp_mentions_peak_rss",
        "ctx lsp: didOpen of a 1 MiB line, ten edits",
    ),
    ("process/attack_lsp_huge", "process/attack_lsp_huge_peak_rss", "ctx lsp: didOpen of 51 MB"),
    (
        "process/attack_sources_repeated",
        "process/attack_sources_repeated_peak_rss",
        "ctx sources: 20 000-item project listed 400 times",
    ),
    (
        "process/attack_sources_wildcards",
        "process/attack_sources_wildcards_peak_rss",
        "ctx sources: 2 000 identical ** items",
    ),
    (
        "process/attack_sources_compdb",
        "process/attack_sources_compdb_peak_rss",
        "ctx sources: 20 000 directories",
    ),
    (
        "process/attack_sources_projects",
        "process/attack_sources_projects_peak_rss",
        "ctx sources: 100 000 projects",
    ),
    (
        "process/attack_sources_missing",
        "process/attack_sources_missing_peak_rss",
        "ctx sources: missing folder, file as folder",
    ),
];

/// A megabyte of one line of `unit`.
fn line_of(unit: &str) -> String {
    unit.repeat(((1 << 20) - 1) / unit.len())
}

pub(super) fn run(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let dir = data.join("attacks");
    cached(&dir, || generate(&dir))?;
    let memory = Memory::probe(data);
    println!("attacks: {} runs of each shape in {}", sizes.runs, dir.display());
    let mut measured = Vec::new();
    let mut start = Vec::new();
    for run in 0..=sizes.runs {
        let (time, _) = memory.run_any(command(ctx, &dir, "baseline")?, data)?;
        if run > 0 {
            start.push(time);
        }
    }
    measured.push(seconds(START, &start, None, Some("ctx check of a one-line document".into())));
    for (name, peak_name, _) in SHAPES {
        let (mut times, mut peak) = (Vec::new(), None::<u64>);
        for run in 0..=sizes.runs {
            // Every run reads its project files afresh: a stored index would be the warm case.
            let cache = dir.join("cache");
            if cache.exists() {
                fs::remove_dir_all(&cache)?;
            }
            let (time, rss) = memory.run_any(command(ctx, &dir, name)?, data)?;
            if run > 0 {
                times.push(time);
                peak = peak.max(rss);
            }
        }
        let detail = format!("median of {}, each run cold", sizes.runs);
        measured.push(seconds(name, &times, None, Some(detail)));
        if let Some(peak) = peak {
            measured.push(Measured {
                name: (*peak_name).to_owned(),
                value: Value::Bytes(peak),
                shown: format!("{:.1} MiB", peak as f64 / crate::bench::MIB),
                detail: Some(format!("{}, max of {}", memory.describe(), sizes.runs)),
            });
        }
    }
    Ok(measured)
}

/// How the shape `name` is run: `ctx` with its arguments in its folder, standard input from a
/// file for the servers.
fn command(ctx: &Path, dir: &Path, name: &str) -> Result<Command> {
    let shape = name.trim_start_matches("process/attack_");
    let (folder, args, stdin): (&str, Vec<&str>, Option<&str>) = match shape {
        "baseline" => ("lines", vec!["check", "tiny.md"], None),
        "check_mentions" => ("lines", vec!["check", "mentions.md"], None),
        "check_dense" => ("lines", vec!["check", "dense.md"], None),
        "expand_mentions" => ("lines", vec!["expand"], Some("mentions.md")),
        "mcp_mentions" => ("lines", vec!["mcp"], Some("mcp.jsonl")),
        "lsp_mentions" => ("lines", vec!["lsp"], Some("lsp.txt")),
        "lsp_huge" => ("lines", vec!["lsp"], Some("huge.txt")),
        "sources_repeated" => ("repeated/build", vec!["--sln", "app.sln", "sources"], None),
        "sources_wildcards" => ("wildcards/build", vec!["--sln", "app.sln", "sources"], None),
        "sources_compdb" => (
            "compdb/build",
            vec!["--compile-commands", "compile_commands.json", "--max-file-bytes", "33554432"]
                .into_iter()
                .chain(["sources"])
                .collect(),
            None,
        ),
        "sources_projects" => (
            "projects/build",
            vec!["--sln", "app.sln", "--max-file-bytes", "33554432", "sources"],
            None,
        ),
        "sources_missing" => ("missing/build", vec!["--sln", "app.sln", "sources"], None),
        other => return Err(format!("no attack shape `{other}`").into()),
    };
    let folder = dir.join(folder);
    // The servers read their script from standard input: a shell hands it over and becomes
    // the command, so the time and memory measured are ctx's own.
    let mut cmd = match stdin {
        Some(file) => {
            let mut sh = Command::new("sh");
            sh.args(["-c", "f=$1; shift; exec \"$0\" \"$@\" < \"$f\""]).arg(ctx).arg(file);
            sh.args(&args);
            sh
        }
        None => {
            let mut cmd = Command::new(ctx);
            cmd.args(&args);
            cmd
        }
    };
    cmd.current_dir(folder)
        .env("CTX_CONFIG_DIR", dir.join("config"))
        .env("CTX_CACHE_DIR", dir.join("cache"));
    Ok(cmd)
}

/// Writes every shape; returns how many files.
fn generate(dir: &Path) -> Result<usize> {
    let mut files = 0;
    let mut write = |rel: &str, text: &[u8]| -> Result<()> {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().expect("a file in a folder"))?;
        fs::write(path, text)?;
        files += 1;
        Ok(())
    };
    let mentions = line_of("@nothere.md ");
    write("lines/tiny.md", b"hello\n")?;
    write("lines/mentions.md", format!("{mentions}\n").as_bytes())?;
    write("lines/dense.md", format!("{}\n", line_of("@a ")).as_bytes())?;
    write("lines/mcp.jsonl", mcp_script(&mentions).as_bytes())?;
    let uri = format!("file://{}", dir.join("lines/main.md").display());
    write("lines/lsp.txt", &lsp_script(&uri, &mentions, 10))?;
    write("lines/huge.txt", &lsp_script(&uri, &"x".repeat(51_000_000), 0))?;

    let sln = |projects: &[String]| {
        let mut text = String::new();
        for (i, project) in projects.iter().enumerate() {
            let _ = writeln!(
                text,
                "Project(\"{{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}}\") = \"p{i}\", \"{project}\", \"{{{i}}}\"\nEndProject"
            );
        }
        text
    };
    let project = |items: &str| format!("<Project><ItemGroup>{items}</ItemGroup></Project>");

    // One project of 20 000 items, listed 400 times in several spellings.
    let items: String =
        (0..20_000).map(|i| format!("<ClCompile Include=\"..\\src\\f{i}.cpp\"/>")).collect();
    write("repeated/build/app.vcxproj", project(&items).as_bytes())?;
    let spellings = ["app.vcxproj", ".\\app.vcxproj", "./APP.vcxproj", "x\\..\\app.vcxproj"];
    let listed: Vec<String> = (0..400).map(|i| spellings[i % spellings.len()].to_owned()).collect();
    write("repeated/build/app.sln", sln(&listed).as_bytes())?;
    write("repeated/src/f0.cpp", b"int f0;\n")?;

    // 2 000 identical wildcard items over a tree of 2 000 files.
    let items = "<ClCompile Include=\"..\\src\\**\\*.cpp\"/>".repeat(2_000);
    write("wildcards/build/app.vcxproj", project(&items).as_bytes())?;
    write("wildcards/build/app.sln", sln(&["app.vcxproj".to_owned()]).as_bytes())?;
    for i in 0..2_000 {
        write(&format!("wildcards/src/d{}/f{i}.cpp", i % 40), b"int x;\n")?;
    }

    // A database of 20 000 directories outside the workspace, none of them there.
    let outside = dir.join("compdb-outside");
    let mut db = String::from("[");
    for i in 0..20_000 {
        let sep = if i == 0 { "" } else { "," };
        let directory = outside.join(format!("d{i}"));
        let _ = write!(
            db,
            "{sep}{{\"directory\":\"{}\",\"file\":\"f{i}.c\",\"command\":\"cc -c f{i}.c\"}}",
            directory.display()
        );
    }
    db.push(']');
    write("compdb/build/compile_commands.json", db.as_bytes())?;

    // 100 000 distinct projects, the first thousand there, one item each.
    for i in 0..1_000 {
        let item = format!("<ClCompile Include=\"..\\src\\f{i}.cpp\"/>");
        write(&format!("projects/build/p{i}.vcxproj"), project(&item).as_bytes())?;
    }
    let many: Vec<String> = (0..100_000).map(|i| format!("p{i}.vcxproj")).collect();
    write("projects/build/app.sln", sln(&many).as_bytes())?;
    write("projects/src/f0.cpp", b"int a;\n")?;

    // A project naming a missing folder outside the workspace and a file used as a folder.
    let items = format!(
        "<ClCompile Include=\"{}\\x.cpp\"/><ClCompile Include=\"..\\src\\main.cpp\\x.cpp\"/><ClCompile Include=\"{}\\**\\*.cpp\"/>",
        dir.join("missing-outside").display(),
        dir.join("missing-outside").display()
    );
    write("missing/build/app.vcxproj", project(&items).as_bytes())?;
    write("missing/build/app.sln", sln(&["app.vcxproj".to_owned()]).as_bytes())?;
    write("missing/src/main.cpp", b"int main;\n")?;
    Ok(files)
}

/// An MCP session: the handshake, then `expand` of `prompt` (plain text: no character of it
/// needs escaping in JSON).
fn mcp_script(prompt: &str) -> String {
    [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"expand","arguments":{{"prompt":"{prompt}"}}}}}}"#
        ),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect()
}

/// An LSP session: the handshake, `didOpen` of `text` (plain text), `edits` changes of one
/// character each, a hover, then shutdown and exit.
fn lsp_script(uri: &str, text: &str, edits: usize) -> Vec<u8> {
    let mut messages = vec![
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#.to_owned(),
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{uri}","languageId":"markdown","version":1,"text":"{text}"}}}}}}"#
        ),
    ];
    for version in 2..edits + 2 {
        messages.push(format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didChange","params":{{"textDocument":{{"uri":"{uri}","version":{version}}},"contentChanges":[{{"range":{{"start":{{"line":0,"character":0}},"end":{{"line":0,"character":0}}}},"text":" "}}]}}}}"#
        ));
    }
    messages.push(format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{{"textDocument":{{"uri":"{uri}"}},"position":{{"line":0,"character":3}}}}}}"#
    ));
    messages.push(r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#.to_owned());
    messages.push(r#"{"jsonrpc":"2.0","method":"exit"}"#.to_owned());
    let mut out = Vec::new();
    for body in messages {
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        out.extend_from_slice(body.as_bytes());
    }
    out
}
