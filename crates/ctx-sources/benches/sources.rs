//! The source index of a generated FreeCAD-scale out-of-source build (300 projects, 15 000
//! source files, about 7 MB of `.vcxproj` and 3 MB of `.vcxproj.filters`, CMake-style with
//! per-configuration metadata on every item): a cold index (read, parse, pick the roots, check
//! every file against the disk), a warm one (the stored index, its stamps checked), a lookup by
//! root-relative path and by file name, beside `cat` of the same project files to /dev/null
//! in the same run.
#![allow(clippy::disallowed_methods, clippy::print_stderr)] // The bench builds its tree on disk, opens sandboxes and says what it built.

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::sync::LazyLock;

use ctx_fs::{RootKind, Sandbox, Store};
use ctx_sources::{Lookup, Options, SourceIndex};

const PROJECTS: usize = 300;
const FILES_PER_PROJECT: usize = 50;
const CONFIGURATIONS: [&str; 4] = ["Debug", "Release", "MinSizeRel", "RelWithDebInfo"];

struct Build {
    _tmp: tempfile::TempDir,
    root: String,
    projects: Vec<String>,
    queries: Vec<(String, String)>,
}

static BUILD: LazyLock<Build> = LazyLock::new(|| {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap().to_str().unwrap().to_owned();
    let mut sln = String::from("Microsoft Visual Studio Solution File, Format Version 12.00\n");
    let mut projects = vec![format!("{root}/build/FreeCAD.sln")];
    let mut queries = Vec::new();
    for p in 0..PROJECTS {
        let module =
            format!("Mod/M{:02}/{}", p / 6, ["App", "Gui", "Base", "Io", "Ui", "Py"][p % 6]);
        let _ = writeln!(
            sln,
            "Project(\"{{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}}\") = \"P{p}\", \"P{p}\\P{p}.vcxproj\", \"{{00000000-0000-0000-0000-{p:012}}}\"\nEndProject"
        );
        let (mut items, mut filters) = (String::new(), String::new());
        for f in 0..FILES_PER_PROJECT {
            let ext = if f % 2 == 0 { "cpp" } else { "h" };
            let rel = format!("{module}/File{p:03}_{f:02}.{ext}");
            let path = format!("{root}/src/{rel}");
            std::fs::create_dir_all(format!("{root}/src/{module}")).unwrap();
            std::fs::write(&path, "// source\n").unwrap();
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
            if f == 0 {
                // Relative to the source root, which is `src/Mod`, the folder all files share.
                let relative = rel.strip_prefix("Mod/").unwrap().to_owned();
                queries.push((relative, format!("File{p:03}_{f:02}.{ext}")));
            }
        }
        let dir = format!("{root}/build/P{p}");
        std::fs::create_dir_all(&dir).unwrap();
        let header = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Project DefaultTargets=\"Build\" ToolsVersion=\"17.0\" xmlns=\"http://schemas.microsoft.com/developer/msbuild/2003\">\n";
        std::fs::write(
            format!("{dir}/P{p}.vcxproj"),
            format!("{header}  <ItemGroup>\n{items}  </ItemGroup>\n</Project>\n"),
        )
        .unwrap();
        std::fs::write(
            format!("{dir}/P{p}.vcxproj.filters"),
            format!("{header}  <ItemGroup>\n{filters}  </ItemGroup>\n</Project>\n"),
        )
        .unwrap();
        projects.push(format!("{dir}/P{p}.vcxproj"));
        projects.push(format!("{dir}/P{p}.vcxproj.filters"));
    }
    std::fs::write(format!("{root}/build/FreeCAD.sln"), sln).unwrap();
    let bytes: u64 = projects.iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
    eprintln!(
        "sources bench: {PROJECTS} projects, {} files, {:.1} MB of project files",
        PROJECTS * FILES_PER_PROJECT,
        bytes as f64 / 1e6
    );
    Build { _tmp: tmp, root, projects, queries }
});

fn workspace(build: &Build) -> Sandbox {
    Sandbox::builder(format!("{}/build", build.root)).open(cap_std::ambient_authority()).unwrap()
}

/// Load, open the roots, verify: what a first run does.
fn cold(build: &Build) -> (SourceIndex, Sandbox) {
    let mut index =
        SourceIndex::load(&workspace(build), "FreeCAD.sln", &Options::default()).unwrap();
    let mut builder = Sandbox::builder(format!("{}/build", build.root));
    for root in index.source_roots() {
        builder = builder.root(root.as_str(), RootKind::Source);
    }
    let sandbox = builder.open(cap_std::ambient_authority()).unwrap();
    index.verify(&sandbox);
    (index, sandbox)
}

#[divan::bench(sample_count = 10)]
fn sources_cold() -> usize {
    cold(&BUILD).0.files().len()
}

#[divan::bench(sample_count = 20)]
fn sources_warm(bencher: divan::Bencher<'_, '_>) {
    let build = &*BUILD;
    let cache = tempfile::tempdir().unwrap();
    let store = Store::open(cache.path().to_str().unwrap(), cap_std::ambient_authority()).unwrap();
    cold(build).0.save(&store).unwrap();
    let workspace = workspace(build);
    bencher.bench(|| {
        let index =
            SourceIndex::load_cached(&workspace, "FreeCAD.sln", &Options::default(), &store)
                .unwrap();
        assert!(index.cached());
        index.files().len()
    });
}

#[divan::bench]
fn sources_lookup_path(bencher: divan::Bencher<'_, '_>) {
    let (index, sandbox) = cold(&BUILD);
    let queries = &BUILD.queries;
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % queries.len();
        matches!(index.lookup(&queries[i].0, &sandbox), Lookup::Found { .. })
    });
}

#[divan::bench]
fn sources_lookup_name(bencher: divan::Bencher<'_, '_>) {
    let (index, sandbox) = cold(&BUILD);
    let queries = &BUILD.queries;
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % queries.len();
        matches!(index.lookup(&queries[i].1, &sandbox), Lookup::Found { .. })
    });
}

/// `cat` of the solution and every project file to /dev/null: reading what the index reads.
#[divan::bench(sample_count = 10)]
fn sources_cat_baseline() {
    let status = Command::new("cat").args(&BUILD.projects).stdout(Stdio::null()).status().unwrap();
    assert!(status.success());
}

fn main() {
    LazyLock::force(&BUILD);
    divan::main();
}
