//! A generator of CMake-style out-of-source builds: sources under `src/`, and in `build/` one
//! solution, a `.vcxproj` per project (half with a `.vcxproj.filters`) naming the sources by
//! absolute POSIX paths, relative Windows-style paths and `$(SolutionDir)`, plus a
//! `compile_commands.json` of the compiled files.

use std::fmt::Write as _;
use std::path::Path;

use proptest::prelude::*;

/// A generated tree: source files relative to `src/`, and how many projects share them.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    pub(crate) files: Vec<String>,
    pub(crate) projects: usize,
}

/// Trees of 1 to 40 files in up to three levels of folders, names often shared.
pub(crate) fn tree() -> impl Strategy<Value = Tree> {
    let dir = prop::sample::select(vec!["core", "gui", "app", "base", "io"]);
    let name = prop::sample::select(vec!["main", "util", "Application", "x", "reader", "Types"]);
    let ext = prop::sample::select(vec!["cpp", "h", "c", "hpp"]);
    let file = (prop::collection::vec(dir, 0..3), name, ext).prop_map(|(dirs, name, ext)| {
        let mut path = dirs.join("/");
        if !path.is_empty() {
            path.push('/');
        }
        format!("{path}{name}.{ext}")
    });
    (prop::collection::btree_set(file, 1..40), 1usize..5)
        .prop_map(|(files, projects)| Tree { files: files.into_iter().collect(), projects })
}

/// Writes `tree` under `root`: `root/src/…` and `root/build/…`.
pub(crate) fn write(root: &Path, tree: &Tree) {
    let root_text = root.to_str().unwrap();
    for file in &tree.files {
        let path = root.join("src").join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("// {file}\n")).unwrap();
    }
    let mut sln = String::from("Microsoft Visual Studio Solution File, Format Version 12.00\n");
    let mut commands = Vec::new();
    for p in 0..tree.projects {
        let dir = root.join("build").join(format!("P{p}"));
        std::fs::create_dir_all(&dir).unwrap();
        let _ = writeln!(
            sln,
            "Project(\"{{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}}\") = \"P{p}\", \"P{p}\\P{p}.vcxproj\", \"{{00000000-0000-0000-0000-{p:012}}}\"\nEndProject"
        );
        let mine: Vec<(usize, &String)> =
            tree.files.iter().enumerate().filter(|(i, _)| i % tree.projects == p).collect();
        let mut items = String::new();
        let mut filters = String::new();
        for (i, file) in &mine {
            let kind = if file.ends_with(".h") || file.ends_with(".hpp") {
                "ClInclude"
            } else {
                "ClCompile"
            };
            let windows = file.replace('/', "\\");
            let include = match i % 3 {
                0 => format!("{root_text}/src/{file}"),
                1 => format!("..\\..\\src\\{windows}"),
                _ => format!("$(SolutionDir)..\\src\\{windows}"),
            };
            if i % 2 == 0 {
                let _ = writeln!(items, "    <{kind} Include=\"{include}\" />");
            } else {
                let _ = writeln!(
                    filters,
                    "    <{kind} Include=\"..\\..\\src\\{windows}\"><Filter>Source Files</Filter></{kind}>"
                );
                let _ = writeln!(items, "    <{kind} Include=\"..\\..\\src\\{windows}\" />");
            }
            if kind == "ClCompile" {
                commands.push(serde_json::json!({
                    "directory": dir.to_str().unwrap(),
                    "arguments": ["c++", "-c", format!("../../src/{file}")],
                    "file": format!("../../src/{file}"),
                }));
            }
        }
        let _ =
            writeln!(items, "    <ClCompile Include=\"D:\\elsewhere\\windows_only_{p}.cpp\" />");
        let project = format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Project DefaultTargets=\"Build\" xmlns=\"http://schemas.microsoft.com/developer/msbuild/2003\">\n  <ItemGroup>\n{items}  </ItemGroup>\n</Project>\n"
        );
        std::fs::write(dir.join(format!("P{p}.vcxproj")), project).unwrap();
        if p % 2 == 0 {
            let filters = format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Project xmlns=\"http://schemas.microsoft.com/developer/msbuild/2003\">\n  <ItemGroup>\n{filters}  </ItemGroup>\n</Project>\n"
            );
            std::fs::write(dir.join(format!("P{p}.vcxproj.filters")), filters).unwrap();
        }
    }
    std::fs::write(root.join("build/Generated.sln"), sln).unwrap();
    let db = serde_json::to_string_pretty(&commands).unwrap();
    std::fs::write(root.join("build/compile_commands.json"), db).unwrap();
}
