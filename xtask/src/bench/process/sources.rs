//! `ctx sources` as a user runs it, on the build the in-process bench generates
//! (`crates/ctx-sources/benches/sources.rs`: 300 projects, 15 000 source files, CMake-style
//! `.vcxproj` and `.vcxproj.filters`): cold (an empty cache folder each run) and warm (the index
//! stored by a run before), process start included, beside the process start alone (`ctx check`
//! of a one-line document) and a naive index in Python (read the solution, every project's
//! `Include` attributes, a `stat` of every file) in the same rounds, runs interleaved.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{Measured, Memory, Sizes, cached, seconds};
use crate::Result;

pub(in crate::bench) const COLD: &str = "process/sources_cold";
pub(in crate::bench) const WARM: &str = "process/sources_warm";
pub(in crate::bench) const START: &str = "process/sources_start";
pub(in crate::bench) const NAIVE: &str = "process/sources_naive_python";

const PROJECTS: usize = 300;
const FILES_PER_PROJECT: usize = 50;
const CONFIGURATIONS: [&str; 4] = ["Debug", "Release", "MinSizeRel", "RelWithDebInfo"];

/// The naive index: every project of the solution, every `Include` of each, a `stat` of each
/// file; prints how many exist.
const NAIVE_INDEX: &str = r#"
import os, re, sys
root = sys.argv[1]
sln = open(os.path.join(root, "FreeCAD.sln"), encoding="utf-8").read()
found = 0
for rel in re.findall(r'"([^"]+\.vcxproj)"', sln):
    project = os.path.join(root, rel.replace("\\", "/"))
    for path in (project, project + ".filters"):
        base = os.path.dirname(path)
        for item in re.findall(r'Include="([^"]+)"', open(path, encoding="utf-8").read()):
            full = os.path.normpath(os.path.join(base, item.replace("\\", "/")))
            found += os.path.exists(full)
print(found)
"#;

pub(super) fn run(ctx: &Path, data: &Path, sizes: &Sizes) -> Result<Vec<Measured>> {
    let dir = data.join("sources-300");
    cached(&dir, || generate(&dir))?;
    let build = dir.canonicalize()?.join("build");
    let memory = Memory::probe(data);
    let (cold_cache, warm_cache) =
        (data.join("sources-cache-cold"), data.join("sources-cache-warm"));
    // The sources lie outside the workspace (`build/`): trusted once, in a configuration
    // folder of the bench's own, as a user does with `ctx trust`; untrusted, they would be
    // listed as refused and the index never stored.
    let config = data.join("sources-config");
    fs::create_dir_all(&config)?;
    let mut trust = Command::new(ctx);
    trust.args(["trust", "--yes"]).current_dir(&build).env("CTX_CONFIG_DIR", &config);
    crate::run_command(&mut trust)?;
    // The process start: `ctx check` of a one-line document in a folder with no build.
    let start_dir = dir.join("start");
    fs::create_dir_all(&start_dir)?;
    fs::write(start_dir.join("one.md"), "one line\n")?;
    let python = Command::new("python3").arg("-c").arg("pass").status().is_ok_and(|s| s.success());
    println!(
        "sources: {} rounds of `ctx sources` cold and warm, the process start{} in {}",
        sizes.runs,
        if python { " and a naive index in Python" } else { "" },
        build.display()
    );
    let ctx_in = |cache: &Path, args: &[&str], dir: &Path| {
        let mut cmd = Command::new(ctx);
        cmd.args(args).current_dir(dir);
        cmd.env("CTX_CACHE_DIR", cache).env("CTX_CONFIG_DIR", &config);
        cmd
    };
    let mut times: [Vec<Duration>; 4] = Default::default();
    for run in 0..=sizes.runs {
        let _ = fs::remove_dir_all(&cold_cache);
        fs::create_dir_all(&cold_cache)?;
        let mut cmds = vec![
            ctx_in(&cold_cache, &["sources"], &build),
            ctx_in(&warm_cache, &["sources"], &build),
            ctx_in(&warm_cache, &["check", "one.md"], &start_dir),
        ];
        if python {
            let mut naive = Command::new("python3");
            naive.arg("-c").arg(NAIVE_INDEX).arg(&build);
            cmds.push(naive);
        }
        for (i, cmd) in cmds.into_iter().enumerate() {
            let (time, _) = memory.run_any(cmd, data)?;
            if run > 0 {
                times[i].push(time);
            }
        }
    }
    let _ = fs::remove_dir_all(&cold_cache);
    let detail = |what: &str| {
        format!(
            "{PROJECTS} projects, {} files, {what}, median of {}",
            PROJECTS * FILES_PER_PROJECT,
            sizes.runs
        )
    };
    let [cold, warm, start, naive] = &times;
    let mut measured = vec![
        seconds(COLD, cold, None, Some(detail("an empty cache each run"))),
        seconds(WARM, warm, None, Some(detail("the index stored"))),
        seconds(START, start, None, Some("ctx check of a one-line document".into())),
    ];
    if python {
        measured.push(seconds(NAIVE, naive, None, None));
    }
    Ok(measured)
}

/// The build of the in-process bench, under `dir`: `build/FreeCAD.sln`, a folder of two
/// project files per project under `build/`, the sources under `src/Mod/`.
fn generate(dir: &Path) -> Result<usize> {
    fs::create_dir_all(dir)?;
    let root = dir.canonicalize()?;
    let root = root.to_str().ok_or("a data folder that is not UTF-8")?;
    let mut sln = String::from("Microsoft Visual Studio Solution File, Format Version 12.00\n");
    let header = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Project DefaultTargets=\"Build\" ToolsVersion=\"17.0\" xmlns=\"http://schemas.microsoft.com/developer/msbuild/2003\">\n";
    for p in 0..PROJECTS {
        let module =
            format!("Mod/M{:02}/{}", p / 6, ["App", "Gui", "Base", "Io", "Ui", "Py"][p % 6]);
        let _ = writeln!(
            sln,
            "Project(\"{{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}}\") = \"P{p}\", \"P{p}\\P{p}.vcxproj\", \"{{00000000-0000-0000-0000-{p:012}}}\"\nEndProject"
        );
        fs::create_dir_all(format!("{root}/src/{module}"))?;
        let (mut items, mut filters) = (String::new(), String::new());
        for f in 0..FILES_PER_PROJECT {
            let ext = if f % 2 == 0 { "cpp" } else { "h" };
            let rel = format!("{module}/File{p:03}_{f:02}.{ext}");
            let path = format!("{root}/src/{rel}");
            fs::write(&path, "// source\n")?;
            let windows = rel.replace('/', "\\");
            let kind = if ext == "cpp" { "ClCompile" } else { "ClInclude" };
            let _ = writeln!(items, "    <{kind} Include=\"{path}\">");
            for c in CONFIGURATIONS {
                let _ = writeln!(
                    items,
                    "      <ObjectFileName Condition=\"'$(Configuration)|$(Platform)'=='{c}|x64'\">$(IntDir)/{windows}.obj</ObjectFileName>"
                );
            }
            let _ = writeln!(items, "    </{kind}>");
            let _ = writeln!(
                filters,
                "    <{kind} Include=\"..\\..\\src\\{windows}\">\n      <Filter>Source Files\\{}</Filter>\n    </{kind}>",
                module.replace('/', "\\")
            );
        }
        let project = format!("{root}/build/P{p}");
        fs::create_dir_all(&project)?;
        fs::write(
            format!("{project}/P{p}.vcxproj"),
            format!("{header}  <ItemGroup>\n{items}  </ItemGroup>\n</Project>\n"),
        )?;
        fs::write(
            format!("{project}/P{p}.vcxproj.filters"),
            format!("{header}  <ItemGroup>\n{filters}  </ItemGroup>\n</Project>\n"),
        )?;
    }
    fs::write(format!("{root}/build/FreeCAD.sln"), sln)?;
    Ok(PROJECTS * FILES_PER_PROJECT)
}
