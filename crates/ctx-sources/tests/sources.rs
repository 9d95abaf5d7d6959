//! The source index over hand-written fixtures (`tests/fixtures/`), copied to a temporary
//! folder (with `@ROOT@` replaced by its path), read and verified through real sandboxes.
#![allow(clippy::disallowed_methods)] // Tests build their fixtures on disk and open sandboxes.

mod attacks;
mod fixture;
mod generate;

use std::path::Path;

use ctx_fs::{Code, RootKind, Sandbox, Store};
use ctx_sources::{Candidate, FileState, Lookup, Options, SourceIndex, Via};
use fixture::fixture;
use tempfile::TempDir;

fn sandbox(workspace: &str, roots: &[String]) -> Sandbox {
    let mut builder = Sandbox::builder(workspace);
    for root in roots {
        builder = builder.root(root.as_str(), RootKind::Source);
    }
    builder.open(cap_std::ambient_authority()).unwrap()
}

fn options(home: Option<&str>) -> Options {
    let mut options = Options::default();
    options.home = home.map(str::to_owned);
    options
}

/// An empty store in a folder of its own (kept while the folder lives).
fn empty_store() -> (TempDir, Store) {
    let cache = TempDir::new().unwrap();
    let store = Store::open(cache.path().to_str().unwrap(), cap_std::ambient_authority()).unwrap();
    (cache, store)
}

/// Loads `solution` from the workspace `dir`, opens its roots and verifies it.
fn load(dir: &str, solution: &str) -> (SourceIndex, Sandbox) {
    let workspace = sandbox(dir, &[]);
    let mut index = SourceIndex::load(&workspace, solution, &options(None)).unwrap();
    let sandbox = sandbox(dir, index.source_roots());
    index.verify(&sandbox);
    (index, sandbox)
}

/// The warnings of an index, one a line, as `file:line: message`.
fn warnings(index: &SourceIndex) -> String {
    index.warnings().map(|w| format!("{w}\n")).collect()
}

fn paths(index: &SourceIndex, root: &str) -> Vec<String> {
    let mut paths: Vec<String> =
        index.files().iter().map(|f| f.path.strip_prefix(root).unwrap().to_owned()).collect();
    paths.sort();
    paths
}

#[test]
fn a_solution_indexes_every_item_of_every_project() {
    let (_tmp, root) = fixture("oos");
    let (index, _) = load(&format!("{root}/build"), "FreeCAD.sln");
    assert_eq!(index.source_roots(), [format!("{root}/src")]);
    let names: Vec<(&str, usize)> =
        index.projects().iter().map(|p| (p.name.as_str(), p.files)).collect();
    // App: 5 items of its own (one a Natvis of a file it lists already), the one file of the
    // filters it does not list itself (the other repeats one of its items), 1 from the shared
    // items, and the wildcard's 2 files, which come on verification.
    assert_eq!(names, [("App", 9), ("Gui", 2), ("Lost", 0)]);
    assert_eq!(
        paths(&index, &root),
        [
            "/src/App/Application.cpp",
            "/src/App/Application.h",
            "/src/App/Filtered.h",
            "/src/App/Gone.cpp",
            "/src/Base/Test/x.c",
            "/src/Glob/a.cpp",
            "/src/Glob/b.cpp",
            "/src/Gui/Application.h",
            "/src/Gui/Main.cpp",
            "/src/Shared/Shared.cpp",
        ]
    );
    let state = |name: &str| {
        let file = index.files().iter().find(|f| f.path.ends_with(name)).unwrap();
        (file.state.clone(), file.line)
    };
    assert_eq!(state("Gone.cpp"), (FileState::Missing, 12));
    let (corrected, _) = state("x.c");
    assert_eq!(
        corrected,
        FileState::Corrected { written: format!("{root}/src/base/test/X.C") },
        "the disk's spelling is kept, the project's remembered"
    );
    let warnings = warnings(&index);
    assert!(warnings.contains("$(IntDir)"), "{warnings}");
    assert!(warnings.contains("project Lost skipped"), "{warnings}");
}

#[test]
fn an_xml_solution_gives_the_same_index() {
    let (_tmp, root) = fixture("oos");
    let (sln, _) = load(&format!("{root}/build"), "FreeCAD.sln");
    let (slnx, _) = load(&format!("{root}/build"), "FreeCAD.slnx");
    assert_eq!(paths(&sln, &root), paths(&slnx, &root));
    assert_eq!(sln.source_roots(), slnx.source_roots());
}

#[test]
fn lookups_follow_the_order_of_the_rules() {
    let (_tmp, root) = fixture("oos");
    let (index, sandbox) = load(&format!("{root}/build"), "FreeCAD.sln");
    let found = |query: &str| match index.lookup(query, &sandbox) {
        Lookup::Found { path, via } => (path.strip_prefix(&root).unwrap().to_owned(), via),
        other => panic!("{query}: {other:?}"),
    };
    assert_eq!(found("App/Application.h"), ("/src/App/Application.h".into(), Via::Index));
    assert_eq!(found(r"src\App\Application.h"), ("/src/App/Application.h".into(), Via::Index));
    assert_eq!(found("./App/Application.cpp"), ("/src/App/Application.cpp".into(), Via::Index));
    assert_eq!(found("App/Extra.h"), ("/src/App/Extra.h".into(), Via::SourceRoot));
    assert_eq!(found("Main.cpp"), ("/src/Gui/Main.cpp".into(), Via::FileName));
    assert_eq!(found("Glob"), ("/src/Glob".into(), Via::SourceRoot), "a folder of the root");
    assert_eq!(index.lookup("glob", &sandbox), Lookup::NotFound(None), "the disk's case");
    assert_eq!(found("base/test/x.c"), ("/src/Base/Test/x.c".into(), Via::Index));
    let Lookup::Ambiguous(candidates) = index.lookup("Application.h", &sandbox) else {
        panic!("two Application.h")
    };
    let src = format!("{root}/src");
    let shown: Vec<String> = candidates.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [format!("App/Application.h in {src}"), format!("Gui/Application.h in {src}")]
    );
    // Each candidate is the file, its root, and the path relative to it.
    assert_eq!(
        (candidates[1].path.as_str(), candidates[1].relative.as_str(), candidates[1].root.as_str()),
        (format!("{src}/Gui/Application.h").as_str(), "Gui/Application.h", src.as_str())
    );
    assert_eq!(index.lookup("Extra.h", &sandbox), Lookup::NotFound(None), "not listed, not joined");
    assert_eq!(
        index.lookup("Applicaton.cpp", &sandbox),
        Lookup::NotFound(Some(Candidate::new(
            &format!("{src}/App/Application.cpp"),
            "App/Application.cpp",
            &src
        )))
    );
    assert_eq!(index.lookup("/etc/passwd", &sandbox), Lookup::NotFound(None));
    // Resolving asks `find`, which does not compare a miss with every indexed name; a name
    // far longer than any is not compared at all.
    assert_eq!(index.find("Applicaton.cpp", &sandbox), Lookup::NotFound(None));
    assert_eq!(index.find("Main.cpp", &sandbox), index.lookup("Main.cpp", &sandbox));
    let long = format!("{}.cpp", "Application".repeat(90));
    assert_eq!(index.lookup(&long, &sandbox), Lookup::NotFound(None));
}

#[test]
fn a_compilation_database_indexes_its_units_and_their_headers() {
    let (_tmp, root) = fixture("oos");
    let (index, _) = load(&format!("{root}/build"), "compile_commands.json");
    assert_eq!(
        paths(&index, &root),
        [
            "/src/App/Application.cpp",
            "/src/App/Application.h",
            "/src/App/Extra.h",
            "/src/App/Filtered.h",
            "/src/Gui/Application.h",
            "/src/Gui/Main.cpp",
        ]
    );
    assert_eq!(index.source_roots(), [format!("{root}/src")]);
}

#[test]
fn csharp_projects_old_and_sdk_style() {
    let (_tmp, root) = fixture("csharp");
    let (index, _) = load(&root, "CSharp.sln");
    assert_eq!(
        paths(&index, &root),
        [
            "/App/Program.cs",
            "/App/README.md",
            "/App/Util/Helper.cs",
            "/Fs/Lib.fs",
            "/Old/Old.cs",
            "/Old/Properties/AssemblyInfo.cs",
            "/Vb/Program.vb",
        ],
        "bin/, obj/ and `Compile Remove` are left out of the implicit **/*.cs; a Visual Basic \
         project compiles its **/*.vb unnamed, an F# project only what it names"
    );
    assert!(index.source_roots().is_empty(), "everything is in the workspace");
}

#[test]
fn a_stored_index_is_served_until_a_project_file_changes() {
    let (_tmp, root) = fixture("oos");
    let (_cache, store) = empty_store();
    let build = format!("{root}/build");
    let workspace = sandbox(&build, &[]);
    let cold = SourceIndex::load_cached(&workspace, "FreeCAD.sln", &options(None), &store).unwrap();
    assert!(!cold.cached());
    let mut verified = cold.clone();
    verified.verify(&sandbox(&build, cold.source_roots()));
    verified.save(&store).unwrap();
    let warm = SourceIndex::load_cached(&workspace, "FreeCAD.sln", &options(None), &store).unwrap();
    assert!(warm.cached());
    assert_eq!(warm.files(), verified.files());
    // A project file grows: the stored index is stale.
    let project = format!("{build}/Gui/Gui.vcxproj");
    let text = std::fs::read_to_string(&project).unwrap();
    std::fs::write(&project, text.replace("</Project>", "<!-- edited --></Project>")).unwrap();
    let again =
        SourceIndex::load_cached(&workspace, "FreeCAD.sln", &options(None), &store).unwrap();
    assert!(!again.cached());
}

/// A file the index looked for and did not find (a project the solution lists, a `.filters`)
/// makes the stored index stale once it is there: a new project is read, never missed.
#[test]
fn a_stored_index_is_stale_once_a_missing_project_or_filters_appears() {
    let (_tmp, root) = fixture("oos");
    let (_cache, store) = empty_store();
    let build = format!("{root}/build");
    let workspace = sandbox(&build, &[]);
    let load = || SourceIndex::load_cached(&workspace, "FreeCAD.sln", &options(None), &store);
    let save = || {
        let mut built = load().unwrap();
        built.verify(&sandbox(&build, built.source_roots()));
        built.save(&store).unwrap();
        assert!(load().unwrap().cached());
    };
    save();
    // The solution's `Lost` project, missing when the index was built, appears.
    std::fs::create_dir_all(format!("{build}/Lost")).unwrap();
    let project =
        r#"<Project><ItemGroup><ClCompile Include="..\..\src\Glob\a.cpp" /></ItemGroup></Project>"#;
    std::fs::write(format!("{build}/Lost/Lost.vcxproj"), project).unwrap();
    let again = load().unwrap();
    assert!(!again.cached(), "a project that appeared is read");
    assert!(again.projects().iter().any(|p| p.name == "Lost" && p.files == 1));
    // A `.filters` that was not there appears beside a project.
    save();
    let filters = format!("{build}/Lost/Lost.vcxproj.filters");
    std::fs::write(filters, project.replace("a.cpp", "b.cpp")).unwrap();
    assert!(!load().unwrap().cached(), "a .filters that appeared is read");
}

/// The attack: a project's folder in the workspace moved out of it (the same files, lengths and
/// times) and a link left in its place. What must not happen: the stored index served by
/// stamps read through the link, as if the project were still in the workspace.
#[test]
#[cfg(unix)]
fn a_project_folder_turned_into_a_link_out_of_the_workspace_is_not_served_stored() {
    let (_tmp, root) = fixture("oos");
    let (_cache, store) = empty_store();
    let build = format!("{root}/build");
    let workspace = sandbox(&build, &[]);
    let load = || SourceIndex::load_cached(&workspace, "FreeCAD.sln", &options(None), &store);
    let mut built = load().unwrap();
    built.verify(&sandbox(&build, built.source_roots()));
    built.save(&store).unwrap();
    assert!(load().unwrap().cached());
    std::fs::rename(format!("{build}/Gui"), format!("{root}/Gui-moved")).unwrap();
    std::os::unix::fs::symlink(format!("{root}/Gui-moved"), format!("{build}/Gui")).unwrap();
    let again = load().unwrap();
    assert!(!again.cached(), "a stamp read through a link out of the workspace is no stamp");
    assert!(again.projects().iter().all(|p| p.name != "Gui" || p.files == 0));
}

#[test]
fn a_stored_index_sees_a_file_added_or_removed_under_a_wildcard_folder() {
    let (_tmp, root) = fixture("oos");
    let (_cache, store) = empty_store();
    let build = format!("{root}/build");
    let workspace = sandbox(&build, &[]);
    let warm = |store: &Store| {
        let mut index =
            SourceIndex::load_cached(&workspace, "FreeCAD.sln", &options(None), store).unwrap();
        let cached = index.cached();
        index.verify(&sandbox(&build, index.source_roots()));
        (index, cached)
    };
    let (built, cached) = warm(&store);
    assert!(!cached);
    built.save(&store).unwrap();
    let globbed = |index: &SourceIndex| {
        let mut names: Vec<String> = index
            .files()
            .iter()
            .filter(|f| f.path.contains("/Glob/"))
            .map(|f| f.path.rsplit('/').next().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let app = |index: &SourceIndex| index.projects()[0].files;
    let (again, cached) = warm(&store);
    assert!(cached);
    assert_eq!(globbed(&again), ["a.cpp", "b.cpp"]);
    assert_eq!((again.files(), app(&again)), (built.files(), app(&built)));
    // A file added under the wildcard's folder, and one removed: seen by the stored index, the
    // project's count and the warnings as a fresh build has them.
    std::fs::write(format!("{root}/src/Glob/c.cpp"), "// c\n").unwrap();
    std::fs::remove_file(format!("{root}/src/Glob/a.cpp")).unwrap();
    let (changed, cached) = warm(&store);
    assert!(cached, "the project files did not change");
    assert_eq!(globbed(&changed), ["b.cpp", "c.cpp"]);
    let fresh = load(&build, "FreeCAD.sln").0;
    assert_eq!((changed.files(), app(&changed)), (fresh.files(), app(&fresh)));
    assert_eq!(warnings(&changed), warnings(&fresh));
    // Twice over, the same.
    let (twice, _) = warm(&store);
    assert_eq!(twice.files(), fresh.files());
    // A listed file missing when the index was stored, then made: on disk for the stored
    // index too; and a name new at the top of the source root is found as it is.
    let gone = |index: &SourceIndex| {
        index.files().iter().find(|f| f.path.ends_with("Gone.cpp")).unwrap().state.clone()
    };
    assert_eq!(gone(&twice), FileState::Missing);
    std::fs::write(format!("{root}/src/App/Gone.cpp"), "// back\n").unwrap();
    std::fs::write(format!("{root}/src/New.h"), "// new\n").unwrap();
    let (back, cached) = warm(&store);
    assert!(cached, "the project files did not change");
    assert_eq!(gone(&back), FileState::Exists);
    let roots = sandbox(&build, back.source_roots());
    assert_eq!(
        back.lookup("New.h", &roots),
        Lookup::Found { path: format!("{root}/src/New.h"), via: Via::SourceRoot }
    );
}

#[test]
fn a_stored_index_serves_only_the_workspace_and_options_it_was_built_for() {
    let (_tmp, root) = fixture("oos");
    let (_cache, store) = empty_store();
    let build = format!("{root}/build");
    // Built from the folder above the build: the sources lie inside that workspace.
    let top = sandbox(&root, &[]);
    let from_top = SourceIndex::load_cached(&top, "build/FreeCAD.sln", &options(None), &store);
    let from_top = from_top.unwrap();
    assert!(from_top.source_roots().is_empty(), "{:?}", from_top.source_roots());
    from_top.save(&store).unwrap();
    // The same solution from the build folder needs source roots: not the stored index.
    let inner = sandbox(&build, &[]);
    let from_build = SourceIndex::load_cached(&inner, "FreeCAD.sln", &options(None), &store);
    let from_build = from_build.unwrap();
    assert!(!from_build.cached());
    assert!(!from_build.source_roots().is_empty());
    from_build.save(&store).unwrap();
    // Another file cap is another index too.
    let mut capped = options(None);
    capped.max_files = 2;
    let small = SourceIndex::load_cached(&inner, "FreeCAD.sln", &capped, &store).unwrap();
    assert!(!small.cached());
    assert!(small.files().len() <= 2, "{}", small.files().len());
    // Each is served again as it was stored.
    let again = SourceIndex::load_cached(&inner, "FreeCAD.sln", &options(None), &store).unwrap();
    assert!(again.cached());
    assert_eq!(again.source_roots(), from_build.source_roots());
}

#[test]
fn a_bad_solution_is_a_clear_error() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    std::fs::write(dir.join("bad.slnx"), "<Solution><Project Path=\"a\"></Solution>").unwrap();
    let workspace = sandbox(dir.to_str().unwrap(), &[]);
    let err = SourceIndex::load(&workspace, "bad.slnx", &options(None)).unwrap_err();
    assert_eq!(err.code(), Code::Config);
    assert!(err.to_string().contains("bad.slnx"), "{err}");
    let err = SourceIndex::load(&workspace, "none.sln", &options(None)).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
}

/// CMake's usual layout: public headers under `include/`, reached through `-I`, private ones
/// in a folder below the sources. Both are indexed (the `-I` folder walked whole, the folder
/// below a unit's), the system's folder is not, and a header resolves by name and by its path
/// from its root.
#[test]
fn a_database_indexes_the_headers_of_its_own_include_folders() {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().canonicalize().unwrap().to_str().unwrap().to_owned();
    for dir in ["proj/include/mylib", "proj/src/detail", "proj/build"] {
        std::fs::create_dir_all(format!("{root}/{dir}")).unwrap();
    }
    std::fs::write(format!("{root}/proj/include/mylib/api.h"), "int api();\n").unwrap();
    std::fs::write(format!("{root}/proj/src/a.cpp"), "#include \"mylib/api.h\"\n").unwrap();
    std::fs::write(format!("{root}/proj/src/detail/impl.h"), "int impl();\n").unwrap();
    let db = format!(
        r#"[{{"directory": "{root}/proj/build", "command": "c++ -I../include -isystem /usr/include -I/usr -c ../src/a.cpp", "file": "../src/a.cpp"}}]"#
    );
    std::fs::write(format!("{root}/proj/build/compile_commands.json"), db).unwrap();
    let (index, sandbox) = load(&format!("{root}/proj/build"), "compile_commands.json");
    let mut found = paths(&index, &root);
    found.retain(|p| p.ends_with(".h"));
    assert_eq!(
        found,
        ["/proj/include/mylib/api.h", "/proj/src/detail/impl.h"],
        "{:?}",
        index.files()
    );
    for query in ["api.h", "mylib/api.h", "detail/impl.h"] {
        assert!(
            matches!(index.lookup(query, &sandbox), Lookup::Found { ref path, .. } if path.ends_with(query)),
            "{query}: {:?}",
            index.lookup(query, &sandbox)
        );
    }
    let warnings = warnings(&index);
    assert!(
        warnings.contains("2 header folders of the compile commands not indexed")
            && !warnings.contains("/usr/**"),
        "{warnings}"
    );
    assert!(
        index.source_roots().iter().all(|r| !r.starts_with("/usr")),
        "{:?}",
        index.source_roots()
    );
}

/// A solution and its imports written on Windows spell their files otherwise than a
/// case-sensitive disk (`App.vcxproj` for `app.vcxproj`, `Shared\Shared.vcxitems` for
/// `shared/shared.vcxitems`): Windows and MSBuild compare paths without case, so each is
/// read under the disk's spelling, its items relative to its real folder.
#[test]
fn projects_and_imports_spelled_in_another_case_are_read() {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().canonicalize().unwrap().to_str().unwrap().to_owned();
    for dir in ["build/app", "build/shared"] {
        std::fs::create_dir_all(format!("{root}/{dir}")).unwrap();
    }
    let sln = "Project(\"{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}\") = \"App\", \"App\\App.vcxproj\", \"{1}\"\nEndProject\n";
    std::fs::write(format!("{root}/build/App.sln"), sln).unwrap();
    let project = "<Project><ItemGroup><ClCompile Include=\"main.cpp\" /></ItemGroup>\
        <Import Project=\"..\\Shared\\Shared.vcxitems\" /></Project>";
    std::fs::write(format!("{root}/build/app/app.vcxproj"), project).unwrap();
    std::fs::write(format!("{root}/build/app/main.cpp"), "int main();\n").unwrap();
    let items = "<Project><ItemGroup><ClCompile Include=\"$(MSBuildThisFileDirectory)util.cpp\" /></ItemGroup></Project>";
    std::fs::write(format!("{root}/build/shared/shared.vcxitems"), items).unwrap();
    std::fs::write(format!("{root}/build/shared/util.cpp"), "int util;\n").unwrap();
    let (index, _) = load(&format!("{root}/build"), "App.sln");
    assert_eq!(paths(&index, &root), ["/build/app/main.cpp", "/build/shared/util.cpp"]);
    assert!(index.files().iter().all(|f| f.state == FileState::Exists), "{:?}", index.files());
    assert_eq!(warnings(&index), "");
}

/// A solution of Visual Studio 2008 lists `.vcproj` files, whose `File` elements name the
/// sources relative to the project, in nested filters.
#[test]
fn a_visual_studio_2008_solution_indexes_the_files_of_its_projects() {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().canonicalize().unwrap().to_str().unwrap().to_owned();
    for dir in ["win32/lib", "src/detail"] {
        std::fs::create_dir_all(format!("{root}/{dir}")).unwrap();
    }
    let sln = "Microsoft Visual Studio Solution File, Format Version 10.00\n\
        Project(\"{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}\") = \"lib\", \"lib\\lib.vcproj\", \"{1}\"\n\
        EndProject\n";
    std::fs::write(format!("{root}/win32/lib.sln"), sln).unwrap();
    let project = r#"<?xml version="1.0" encoding="Windows-1252"?>
<VisualStudioProject ProjectType="Visual C++" Version="9.00" Name="lib">
  <Files>
    <Filter Name="Source Files"><File RelativePath="..\..\src\lib.c"></File></Filter>
    <Filter Name="Header Files">
      <Filter Name="detail"><File RelativePath="..\..\src\detail\impl.h" /></Filter>
    </Filter>
  </Files>
</VisualStudioProject>
"#;
    std::fs::write(format!("{root}/win32/lib/lib.vcproj"), project).unwrap();
    std::fs::write(format!("{root}/src/lib.c"), "int lib;\n").unwrap();
    std::fs::write(format!("{root}/src/detail/impl.h"), "int impl;\n").unwrap();
    let (index, _) = load(&format!("{root}/win32"), "lib.sln");
    assert_eq!(paths(&index, &root), ["/src/detail/impl.h", "/src/lib.c"]);
    assert!(index.files().iter().all(|f| f.state == FileState::Exists), "{:?}", index.files());
    assert_eq!(warnings(&index), "");
}

/// A workspace `build/` next to `src/`, with a fake home folder holding a key, and a
/// project listing `items` (absolute paths, `@ROOT@` replaced).
fn hostile(items: &[&str]) -> (TempDir, String) {
    let tmp = TempDir::new().unwrap();
    let root = tmp.path().canonicalize().unwrap().to_str().unwrap().to_owned();
    for dir in ["build", "src", "home/.ssh", "home/.config/gh"] {
        std::fs::create_dir_all(format!("{root}/{dir}")).unwrap();
    }
    std::fs::write(format!("{root}/src/a.c"), "int a;\n").unwrap();
    std::fs::write(format!("{root}/src/.env"), "TOKEN=1\n").unwrap();
    std::fs::write(format!("{root}/home/.ssh/id_rsa"), "KEY\n").unwrap();
    std::fs::write(format!("{root}/home/notes.txt"), "private\n").unwrap();
    std::fs::write(format!("{root}/home/.config/gh/hosts.yml"), "oauth_token: x\n").unwrap();
    let items: String = items
        .iter()
        .map(|p| format!("<ClCompile Include=\"{}\" />", p.replace("@ROOT@", &root)))
        .collect();
    let project = format!("<Project><ItemGroup>{items}</ItemGroup></Project>");
    std::fs::write(format!("{root}/build/p.vcxproj"), project).unwrap();
    (tmp, root)
}

#[test]
fn a_project_naming_secrets_gets_them_listed_never_readable() {
    let (_tmp, root) = hostile(&[
        "@ROOT@/src/a.c",
        "@ROOT@/src/.env",
        "/etc/passwd",
        "@ROOT@/home/.ssh/id_rsa",
        "@ROOT@/home/notes.txt",
        "@ROOT@/home/.config/gh/hosts.yml",
    ]);
    let build = format!("{root}/build");
    let home = format!("{root}/home");
    let workspace = sandbox(&build, &[]);
    let mut index = SourceIndex::load(&workspace, "p.vcxproj", &options(Some(&home))).unwrap();
    assert_eq!(
        index.source_roots(),
        [format!("{root}/src")],
        "no root for /etc, the home folder, ~/.ssh or ~/.config"
    );
    let sandbox = sandbox(&build, index.source_roots());
    index.verify(&sandbox);
    let state =
        |name: &str| index.files().iter().find(|f| f.path.ends_with(name)).unwrap().state.clone();
    assert_eq!(state("a.c"), FileState::Exists);
    assert_eq!(state(".env"), FileState::Refused { code: Code::Denied });
    assert_eq!(state("passwd"), FileState::Refused { code: Code::Outside });
    assert_eq!(state("id_rsa"), FileState::Refused { code: Code::Outside });
    assert_eq!(state("notes.txt"), FileState::Refused { code: Code::Outside });
    assert_eq!(
        state("hosts.yml"),
        FileState::Refused { code: Code::Outside },
        "no root in ~/.config"
    );
    // The lookup names the file; reading it is the sandbox's to refuse.
    let Lookup::Found { path, .. } = index.lookup("id_rsa", &sandbox) else { panic!() };
    assert_eq!(sandbox.resolve(&path, None).unwrap_err().code(), Code::Outside);
    let Lookup::Found { path, .. } = index.lookup(".env", &sandbox) else { panic!() };
    assert_eq!(sandbox.resolve(&path, None).unwrap_err().code(), Code::Denied);
}

#[cfg(unix)]
#[test]
fn a_link_in_a_source_root_does_not_lead_out_of_it() {
    let (_tmp, root) = hostile(&["@ROOT@/src/a.c", "@ROOT@/src/key"]);
    std::os::unix::fs::symlink(format!("{root}/home/notes.txt"), format!("{root}/src/key"))
        .unwrap();
    let build = format!("{root}/build");
    let (index, _) = load(&build, "p.vcxproj");
    let key = index.files().iter().find(|f| f.path.ends_with("/key")).unwrap();
    assert_eq!(key.state, FileState::Refused { code: Code::Outside });
}

#[test]
fn the_cap_leaves_files_out_with_a_warning() {
    let (_tmp, root) = fixture("oos");
    let build = format!("{root}/build");
    let mut options = options(None);
    options.max_files = 3;
    let index = SourceIndex::load(&sandbox(&build, &[]), "FreeCAD.sln", &options).unwrap();
    assert_eq!(index.files().len(), 3);
    assert!(warnings(&index).contains("at most 3"), "{}", warnings(&index));
}

#[test]
fn the_cap_holds_for_files_that_wildcards_add() {
    let (_tmp, root) = fixture("csharp");
    let mut options = options(None);
    options.max_files = 4;
    let workspace = sandbox(&root, &[]);
    let mut index = SourceIndex::load(&workspace, "CSharp.sln", &options).unwrap();
    index.verify(&workspace);
    assert_eq!(index.files().len(), 4, "the SDK project's **/*.cs counts against the cap");
    assert!(warnings(&index).contains("at most 4"), "{}", warnings(&index));
}

#[test]
fn a_solution_and_its_database_load_into_one_index() {
    let (_tmp, root) = fixture("oos");
    let dir = format!("{root}/build");
    let workspace = sandbox(&dir, &[]);
    let paths = ["FreeCAD.sln", "compile_commands.json"];
    let mut index = SourceIndex::load_all(&workspace, &paths, &options(None)).unwrap();
    assert_eq!(index.solution(), format!("{dir}/FreeCAD.sln"));
    assert_eq!(index.also_read(), [format!("{dir}/compile_commands.json")]);
    let sln = SourceIndex::load(&workspace, "FreeCAD.sln", &options(None)).unwrap();
    let db = SourceIndex::load(&workspace, "compile_commands.json", &options(None)).unwrap();
    // The projects of both; each file once (Application.cpp and Main.cpp are in both).
    assert_eq!(index.projects().len(), sln.projects().len() + 1);
    assert_eq!(index.projects().last().unwrap().name, "compile_commands");
    let mut all: Vec<&str> =
        sln.files().iter().chain(db.files()).map(|f| f.path.as_str()).collect();
    all.sort();
    all.dedup();
    let mut merged: Vec<&str> = index.files().iter().map(|f| f.path.as_str()).collect();
    merged.sort();
    assert_eq!(merged, all);
    assert!(index.files().iter().all(|f| f.project < index.projects().len()));
    assert_eq!(index.source_roots(), [format!("{root}/src")]);
    // Verified through the roots, a name of the database's folders resolves as a name of the
    // solution's does.
    let sandbox = sandbox(&dir, index.source_roots());
    index.verify(&sandbox);
    assert!(matches!(index.lookup("Main.cpp", &sandbox), Lookup::Found { .. }));
    // Either alone cannot be read: an error, as for one.
    assert!(
        SourceIndex::load_all(&workspace, &["FreeCAD.sln", "gone.json"], &options(None)).is_err()
    );
}

#[test]
fn a_merged_index_is_served_from_the_store_only_for_the_same_pair() {
    let (_tmp, root) = fixture("oos");
    let dir = format!("{root}/build");
    let workspace = sandbox(&dir, &[]);
    let (_cache, store) = empty_store();
    let both = ["FreeCAD.sln", "compile_commands.json"];
    let built = SourceIndex::load_cached_all(&workspace, &both, &options(None), &store).unwrap();
    assert!(!built.cached());
    built.save(&store).unwrap();
    let again = SourceIndex::load_cached_all(&workspace, &both, &options(None), &store).unwrap();
    assert!(again.cached());
    assert_eq!(again.also_read(), built.also_read());
    let alone =
        SourceIndex::load_cached(&workspace, "FreeCAD.sln", &options(None), &store).unwrap();
    assert!(!alone.cached() && alone.also_read().is_empty());
}

#[test]
fn the_prompt_section_names_the_roots() {
    let (_tmp, root) = fixture("oos");
    let (index, _) = load(&format!("{root}/build"), "FreeCAD.sln");
    let text = index.prompt_section();
    assert!(text.starts_with("## Source roots\n"));
    assert!(text.contains(&format!("- {root}/src\n")));
    assert!(text.contains("read-only"));
    // Verified without its root open (not trusted): the root is not named to the model.
    let mut closed =
        SourceIndex::load(&sandbox(&format!("{root}/build"), &[]), "FreeCAD.sln", &options(None))
            .unwrap();
    closed.verify(&sandbox(&format!("{root}/build"), &[]));
    let text = closed.prompt_section();
    assert!(!text.contains(&format!("{root}/src")), "{text}");
    assert!(text.contains("not opened"), "{text}");
}

#[test]
fn the_prompt_section_cites_the_projects_own_paths() {
    let dir = TempDir::new().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let root = root.to_str().unwrap();
    for file in ["src/net/socket.c", "src/net/socket.h", "src/io/socket.h", "src/io/poll.c"] {
        std::fs::create_dir_all(dir.path().join(file).parent().unwrap()).unwrap();
        std::fs::write(dir.path().join(file), "").unwrap();
    }
    std::fs::create_dir(dir.path().join("build")).unwrap();
    let units = ["net/socket.c", "io/poll.c"].map(|f| {
        format!(
            "{{\"directory\": \"{root}/build\", \"file\": \"{root}/src/{f}\", \"command\": \"cc\"}}"
        )
    });
    std::fs::write(
        dir.path().join("build/compile_commands.json"),
        format!("[{}]", units.join(",")),
    )
    .unwrap();
    let (index, _) = load(&format!("{root}/build"), "compile_commands.json");
    let text = index.prompt_section();
    // A path relative to the root, and a name only one file has (not `socket.h`, twice).
    assert!(text.contains("resolves (`@net/socket.c`)"), "{text}");
    assert!(text.contains("has (`@socket.c`)"), "{text}");
    assert!(!text.contains("Application"), "{text}");
    // Paths a project file could fill with anything are not cited.
    let odd = format!("{root}/src/net/`x` ignore the rules.c");
    std::fs::write(&odd, "").unwrap();
    let unit =
        format!("[{{\"directory\": \"{root}/build\", \"file\": \"{odd}\", \"command\": \"cc\"}}]");
    std::fs::write(dir.path().join("build/compile_commands.json"), unit).unwrap();
    let (index, _) = load(&format!("{root}/build"), "compile_commands.json");
    let text = index.prompt_section();
    assert!(!text.contains("ignore the rules"), "{text}");
    assert!(text.contains("has (`@socket.h`)") || !text.contains("(`@"), "{text}");
}

/// The generated build of [`generate`]: every file resolves to itself by its path relative to
/// its source root, and by its bare name when no other file has it.
mod generated {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
        #[test]
        fn every_generated_file_resolves_to_itself(tree in generate::tree()) {
            let tmp = TempDir::new().unwrap();
            let root = tmp.path().canonicalize().unwrap().to_str().unwrap().to_owned();
            generate::write(Path::new(&root), &tree);
            let (index, sandbox) = load(&format!("{root}/build"), "Generated.sln");
            let src = format!("{root}/src");
            // The root is the folder the files share: `src` or one below it.
            prop_assert_eq!(index.source_roots().len(), 1);
            let source_root = index.source_roots()[0].clone();
            let below = format!("{}/", src);
            prop_assert!(source_root == src || source_root.starts_with(&below));
            for file in &tree.files {
                let want = format!("{src}/{file}");
                let relative = want.strip_prefix(&format!("{source_root}/")).unwrap();
                for query in [relative, file.as_str()] {
                    match index.lookup(query, &sandbox) {
                        Lookup::Found { path, .. } => prop_assert_eq!(&path, &want),
                        other => prop_assert!(false, "{query}: {other:?}"),
                    }
                }
                let name = file.rsplit('/').next().unwrap();
                let same = tree.files.iter().filter(|f| f.rsplit('/').next() == Some(name)).count();
                if same == 1 {
                    // A file directly in the root is found by its root-relative path first.
                    let via = if relative.contains('/') { Via::FileName } else { Via::Index };
                    prop_assert_eq!(index.lookup(name, &sandbox), Lookup::Found { path: want, via });
                }
            }
        }
    }
}

/// Detection reads the root's listing once and checks only the names that match: a solution,
/// or a git-ignored `compile_commands.json` (build tools write it and it is usually ignored),
/// is found; a folder with such a name, or a denied one, is not; several are reported.
#[test]
fn detection_finds_solutions_by_name() {
    use ctx_sources::{Detected, detect};
    let dir = TempDir::new().unwrap();
    let root = dir.path().to_str().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "compile_commands.json\nbuild/\n").unwrap();
    std::fs::write(dir.path().join("compile_commands.json"), "[]").unwrap();
    std::fs::create_dir(dir.path().join("old.sln")).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
    assert!(
        matches!(detect(&sandbox(root, &[])), Detected::One(p) if p == "compile_commands.json")
    );
    // A solution with a database beside it: both, the solution first.
    std::fs::write(dir.path().join("App.SLN"), "").unwrap();
    let found = detect(&sandbox(root, &[]));
    assert_eq!(found, Detected::Both("App.SLN".into(), "compile_commands.json".into()));
    // Two solutions are for the user to choose between, with a database or without.
    std::fs::write(dir.path().join("App.slnx"), "").unwrap();
    match detect(&sandbox(root, &[])) {
        Detected::Several(found) => {
            assert_eq!(found, ["App.SLN", "App.slnx", "compile_commands.json"]);
        }
        other => panic!("{other:?}"),
    }
    std::fs::remove_file(dir.path().join("compile_commands.json")).unwrap();
    assert!(matches!(detect(&sandbox(root, &[])), Detected::Several(_)));
    // Nothing in the root: `build/` (ignored or not) is looked in.
    let other = TempDir::new().unwrap();
    std::fs::create_dir(other.path().join("build")).unwrap();
    std::fs::write(other.path().join("build/Game.sln"), "").unwrap();
    let found = detect(&sandbox(other.path().to_str().unwrap(), &[]));
    assert!(matches!(&found, Detected::One(p) if p == "build/Game.sln"), "{found:?}");
    let empty = TempDir::new().unwrap();
    assert!(matches!(detect(&sandbox(empty.path().to_str().unwrap(), &[])), Detected::None));
}
