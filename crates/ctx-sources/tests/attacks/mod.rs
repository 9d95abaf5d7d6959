//! Attacks of a hostile repository on the index build (docs/sources.md, "Bounds" and
//! "Messages"): project files that repeat, multiply or point at folders that are missing,
//! are files or lie outside the roots. Each test is the attack, then what must not happen: no
//! unbounded work (a hang guard turns it into a failure), nothing kept per copy, no message
//! that tells whether something outside the roots exists, no error where a warning does.

use std::fmt::Write as _;
use std::sync::mpsc;
use std::time::Duration;

use ctx_fs::{Code, Limits, RootKind, Sandbox};
use ctx_sources::{DEFAULT_MAX_PROJECTS, FileState, MAX_WARNINGS, Options, SourceIndex, Warning};
use tempfile::TempDir;

/// Runs `f` on its own thread and fails if it has not finished after `secs` seconds: a hang
/// guard, generous, never a measure of speed.
fn guarded<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hang guard: not done in {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the build panicked"),
    }
}

/// A fresh folder with `build/` and `src/`, and its canonical path.
fn tree() -> (TempDir, String) {
    tree_in(TempDir::new().unwrap())
}

/// The same for the large shapes, which hold tens of thousands of entries: where the system
/// has a memory-backed folder they are made there, so that writing them costs no disk. That
/// folder (`/dev/shm`) is in a system tree, which is never a source root, so these builds take
/// the whole tree as their workspace: what they bound (reads, walks, listings, warnings) is the
/// same in a source root.
fn shape() -> (TempDir, String) {
    let shm = std::path::Path::new("/dev/shm");
    tree_in(if shm.is_dir() { TempDir::new_in(shm) } else { TempDir::new() }.unwrap())
}

fn tree_in(tmp: TempDir) -> (TempDir, String) {
    let root = tmp.path().canonicalize().unwrap().to_str().unwrap().to_owned();
    for dir in ["build", "src"] {
        std::fs::create_dir_all(format!("{root}/{dir}")).unwrap();
    }
    (tmp, root)
}

fn write(path: &str, text: &str) {
    if let Some((dir, _)) = path.rsplit_once('/') {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// A sandbox of `workspace` and `roots`, reading files of up to 64 MiB (as a user who raised
/// `--max-file-bytes` would).
fn sandbox(workspace: &str, roots: &[String]) -> Sandbox {
    let mut limits = Limits::default();
    limits.max_file_bytes = 64 << 20;
    let mut builder = Sandbox::builder(workspace).limits(limits);
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

/// Loads `solution` from `workspace`, opens the source roots that can be opened (as the
/// facade does) and verifies the index through them.
fn build(workspace: &str, solution: &str, options: &Options) -> SourceIndex {
    let mut index = SourceIndex::load(&sandbox(workspace, &[]), solution, options).unwrap();
    let openable: Vec<String> = index
        .source_roots()
        .iter()
        .filter(|r| std::fs::metadata(r).is_ok_and(|m| m.is_dir()))
        .cloned()
        .collect();
    index.verify(&sandbox(workspace, &openable));
    index
}

fn warnings(index: &SourceIndex) -> Vec<Warning> {
    index.warnings().cloned().collect()
}

fn project(items: &str) -> String {
    format!("<Project>\n<ItemGroup>\n{items}</ItemGroup>\n</Project>\n")
}

fn sln_line(name: &str, path: &str) -> String {
    format!(
        "Project(\"{{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}}\") = \"{name}\", \"{path}\", \"{{0}}\"\nEndProject\n"
    )
}

/// 20 000 items, in folders of 500.
fn many_sources(root: &str) -> String {
    let mut items = String::new();
    for i in 0..20_000 {
        let dir = i / 500;
        write(&format!("{root}/src/d{dir}/f{i}.cpp"), "int x;\n");
        let _ = writeln!(items, "  <ClCompile Include=\"..\\..\\src\\d{dir}\\f{i}.cpp\" />");
    }
    items
}

#[test]
fn one_project_listed_400_times_in_any_spelling_is_read_once() {
    let (_tmp, root) = shape();
    write(&format!("{root}/build/a/b.vcxproj"), &project(&many_sources(&root)));
    let spellings = [
        "a\\b.vcxproj",
        "./a/b.vcxproj",
        "a/b.vcxproj",
        "a/./b.vcxproj",
        "a\\..\\a\\b.vcxproj",
        ".\\a\\b.vcxproj",
        "a//b.vcxproj",
        "A\\B.VCXPROJ",
    ];
    let sln: String = (0..400).map(|i| sln_line(&format!("P{i}"), spellings[i % 8])).collect();
    write(&format!("{root}/build/app.sln"), &sln);
    let top = root.clone();
    let index = guarded(120, move || build(&top, "build/app.sln", &options(None)));
    assert_eq!(index.projects().len(), 1, "one project, not one per copy");
    assert_eq!(index.projects()[0].files, 20_000);
    assert_eq!(index.files().len(), 20_000);
    assert!(index.files().iter().all(|f| f.state == FileState::Exists));
    let warnings = warnings(&index);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].code, Code::Sources);
    assert_eq!(
        (warnings[0].file.as_str(), warnings[0].line),
        (&*format!("{root}/build/app.sln"), 3)
    );
    assert!(warnings[0].message.contains("listed 400 times"), "{}", warnings[0]);
}

#[test]
fn two_thousand_identical_wildcards_are_expanded_once() {
    let (_tmp, root) = shape();
    for i in 0..2_000 {
        write(&format!("{root}/src/d{}/e/f{i}.cpp", i / 100), "int x;\n");
    }
    let items = "  <ClCompile Include=\"..\\src\\**\\*.cpp\" />\n".repeat(2_000);
    write(&format!("{root}/build/b.vcxproj"), &project(&items));
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/b.vcxproj", &options(None)));
    assert_eq!(index.files().len(), 2_000);
    assert_eq!(index.projects()[0].files, 2_000);
    assert!(warnings(&index).is_empty(), "{:?}", warnings(&index));
}

/// The attack: a project of a thousand distinct wildcards over one folder (`**\*1.cpp`,
/// `**\*2.cpp` …), each matched against every file of the walk, on every run. What must not
/// happen: time growing with patterns times files without a bound; past two million
/// matches a folder's files are left unexpanded, with a warning.
#[test]
fn a_thousand_distinct_wildcards_are_matched_within_a_bound() {
    let (_tmp, root) = shape();
    for i in 0..2_100 {
        write(&format!("{root}/src/d{}/f{i}.cpp", i / 100), "int x;\n");
    }
    let items: String = (0..1_024)
        .map(|i| format!("  <ClCompile Include=\"..\\src\\**\\*{i}.cpp\" />\n"))
        .collect();
    write(&format!("{root}/build/b.vcxproj"), &project(&items));
    let top = root.clone();
    let index = guarded(120, move || build(&top, "build/b.vcxproj", &options(None)));
    let warnings = warnings(&index);
    assert!(
        warnings.iter().any(|w| w.message.contains("matched against its first files only")),
        "{warnings:?}"
    );
    // 2 000 000 matches of 1 024 patterns: the first 1 953 files of the walk.
    assert!(index.files().len() <= 1_953 && index.files().len() > 1_000, "{}", index.files().len());
}

#[test]
fn wildcards_share_one_walk_budget() {
    let (_tmp, root) = shape();
    for i in 0..12_000 {
        write(&format!("{root}/src/d{}/f{i}.c", i / 100), "int x;\n");
    }
    // One wildcard that walks the whole tree, then forty of other folders.
    let mut items = String::from("  <ClCompile Include=\"..\\src\\**\\*.c\" />\n");
    for i in 0..40 {
        let _ = writeln!(items, "  <ClCompile Include=\"..\\src\\d{i}\\*.c\" />");
    }
    write(&format!("{root}/build/b.vcxproj"), &project(&items));
    let mut options = options(None);
    options.max_files = 1_000;
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/b.vcxproj", &options));
    assert!(index.files().len() <= 1_000);
    let text: String = warnings(&index).iter().map(|w| format!("{w}\n")).collect();
    assert!(text.contains("holds more entries than the walk budget leaves"), "{text}");
    assert!(text.contains("wildcard items not expanded: the walk budget"), "{text}");
}

/// The walks run on every core, but the budget is charged in the items' order: which items
/// are expanded, cut or left out is the same on every run, however the threads were timed.
#[test]
fn the_walk_budget_cuts_the_same_items_on_every_run() {
    let (_tmp, root) = shape();
    for i in 0..6_000 {
        write(&format!("{root}/src/d{}/f{i}.c", i / 50), "int x;\n");
    }
    // Many folders of one size, then one that walks them all, then many again: the budget
    // runs out among walks that run at once.
    let mut items = String::new();
    for i in 0..60 {
        let _ = writeln!(items, "  <ClCompile Include=\"..\\src\\d{i}\\**\\*.c\" />");
    }
    items.push_str("  <ClCompile Include=\"..\\src\\**\\*.c\" />\n");
    for i in 60..120 {
        let _ = writeln!(items, "  <ClCompile Include=\"..\\src\\d{i}\\**\\*.c\" />");
    }
    write(&format!("{root}/build/b.vcxproj"), &project(&items));
    let mut options = options(None);
    options.max_files = 1_000;
    let runs: Vec<(Vec<String>, Vec<String>)> = (0..6)
        .map(|_| {
            let (top, options) = (root.clone(), options.clone());
            let index = guarded(60, move || build(&top, "build/b.vcxproj", &options));
            let files = index.files().iter().map(|f| f.path.clone()).collect();
            let warnings = warnings(&index).iter().map(|w| format!("{w}")).collect();
            (files, warnings)
        })
        .collect();
    let text = runs[0].1.join("\n");
    assert!(text.contains("wildcard items not expanded: the walk budget"), "{text}");
    for run in &runs[1..] {
        assert_eq!(run, &runs[0]);
    }
}

#[test]
fn a_database_of_20000_directories_lists_each_folder_once() {
    let (_tmp, root) = shape();
    let mut entries = Vec::new();
    for i in 0..20_000 {
        write(&format!("{root}/src/d{i}/f.c"), "int x;\n");
        entries.push(format!("{{\"directory\":\"../src/d{i}\",\"file\":\"f.c\"}}"));
    }
    // Relative directories keep the database under the default 1 MiB.
    let db = format!("[{}]", entries.join(",\n"));
    assert!(db.len() < 1 << 20);
    write(&format!("{root}/build/compile_commands.json"), &db);
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/compile_commands.json", &options(None)));
    assert_eq!(index.files().len(), 20_000);
    assert!(warnings(&index).is_empty(), "{:?}", warnings(&index));
    // With a cap the units fill, no folder is listed for headers at all.
    let mut capped = options(None);
    capped.max_files = 2_000;
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/compile_commands.json", &capped));
    assert_eq!(index.files().len(), 2_000);
    let text: String = warnings(&index).iter().map(|w| format!("{w}\n")).collect();
    assert!(text.contains("18000 files left out"), "{text}");
    assert!(
        text.contains("20000 wildcard items not expanded: the index holds at most 2000 files"),
        "{text}"
    );
}

#[test]
fn a_database_naming_missing_folders_warns_within_the_cap() {
    let (_tmp, root) = shape();
    write(&format!("{root}/src/here/a.c"), "int a;\n");
    let mut entries = vec!["{\"directory\":\"../src/here\",\"file\":\"a.c\"}".to_owned()];
    for i in 0..5_000 {
        entries.push(format!("{{\"directory\":\"../src/gone{i}\",\"file\":\"f.c\"}}"));
    }
    write(&format!("{root}/build/compile_commands.json"), &format!("[{}]", entries.join(",\n")));
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/compile_commands.json", &options(None)));
    let missing = index.files().iter().filter(|f| f.state == FileState::Missing).count();
    assert_eq!(missing, 5_000);
    let warnings = warnings(&index);
    assert_eq!(warnings.len(), MAX_WARNINGS + 1, "listed up to the cap, the rest counted");
    assert!(warnings[0].message.contains("is missing or is a file"), "{}", warnings[0]);
    assert_eq!(warnings[0].line, 2, "the line of the entry");
    assert!(warnings[MAX_WARNINGS].message.starts_with("4900 more warnings"));
}

#[test]
fn a_solution_of_100000_projects_reads_at_most_the_cap() {
    let (_tmp, root) = shape();
    let sln: String =
        (0..100_000).map(|i| sln_line(&format!("P{i}"), &format!("p{i}\\P{i}.vcxproj"))).collect();
    write(&format!("{root}/build/app.sln"), &sln);
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/app.sln", &options(None)));
    assert_eq!(index.projects().len(), DEFAULT_MAX_PROJECTS);
    let warnings = warnings(&index);
    assert!(warnings.len() <= MAX_WARNINGS + 2, "{}", warnings.len());
    let text: String = warnings.iter().map(|w| format!("{w}\n")).collect();
    assert!(text.contains("90000 more projects not read"), "{text}");
    // The cap's own warning comes first, then 99 of the 10 000 projects that are not there.
    assert!(text.contains("9901 more warnings not listed"), "{text}");
}

#[test]
fn projects_past_the_reading_budget_are_not_read() {
    let (_tmp, root) = shape();
    // Fifty distinct projects that each list the same 2 000 items: 100 000 items read.
    let items: String =
        (0..2_000).map(|i| format!("  <ClCompile Include=\"..\\..\\src\\f{i}.c\" />\n")).collect();
    let mut sln = String::new();
    for p in 0..50 {
        write(&format!("{root}/build/p{p}/p{p}.vcxproj"), &project(&items));
        sln.push_str(&sln_line(&format!("P{p}"), &format!("p{p}\\p{p}.vcxproj")));
    }
    write(&format!("{root}/build/app.sln"), &sln);
    let mut options = options(None);
    options.max_files = 1_000;
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/app.sln", &options));
    assert_eq!(index.files().len(), 1_000);
    let read = index.projects().iter().filter(|p| p.files > 0).count();
    assert!(read < 50, "the budget of 10 000 items stops the reading: {read} read");
    let text: String = warnings(&index).iter().map(|w| format!("{w}\n")).collect();
    assert!(text.contains("projects not read: the projects read before list"), "{text}");
    assert!(text.contains("files left out: the index holds at most 1000"), "{text}");
}

/// The messages of an index with every mention of the three outside folders made the same.
fn outside_messages(index: &SourceIndex) -> Vec<String> {
    warnings(index)
        .iter()
        .map(|w| {
            let text = w.to_string();
            ["exists", "missing", "file.txt"].iter().fold(text, |t, name| t.replace(name, "X"))
        })
        .collect()
}

#[test]
fn nothing_tells_whether_a_folder_outside_the_roots_exists() {
    let (_tmp, root) = tree();
    // The home folder's hidden folders are never roots: what lies there is outside.
    let home = format!("{root}/home");
    std::fs::create_dir_all(format!("{home}/.hidden/exists")).unwrap();
    write(&format!("{home}/.hidden/exists/x.cpp"), "int x;\n");
    write(&format!("{home}/.hidden/file.txt"), "a file\n");
    write(&format!("{root}/src/a.c"), "int a;\n");
    let mut indexes = Vec::new();
    for name in ["exists", "missing", "file.txt"] {
        let items = format!(
            "  <ClCompile Include=\"..\\src\\a.c\" />\n  <ClCompile Include=\"{home}/.hidden/{name}/x.cpp\" />\n  <ClCompile Include=\"{home}/.hidden/{name}/**/*.cpp\" />\n  <ClCompile Include=\"{home}/.hidden/{name}/*.cpp\" />\n"
        );
        write(&format!("{root}/build/b.vcxproj"), &project(&items));
        indexes.push(build(&format!("{root}/build"), "b.vcxproj", &options(Some(&home))));
    }
    for index in &indexes {
        assert_eq!(index.source_roots(), [format!("{root}/src")]);
        let outside = index.files().iter().find(|f| f.path.ends_with("x.cpp")).unwrap();
        assert_eq!(outside.state, FileState::Refused { code: Code::Outside });
        assert_eq!(index.summary().missing.len(), 0, "outside is not \"missing\"");
    }
    let [a, b, c] = [0, 1, 2].map(|i| outside_messages(&indexes[i]));
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(a[0].contains("outside the open roots"), "{a:?}");
    assert_eq!(a, b, "an outside folder that exists or is missing reads the same");
    assert_eq!(a, c, "an outside file used as a folder reads the same");
}

#[test]
fn source_roots_that_are_missing_or_files_are_warnings_alike() {
    let (_tmp, root) = tree();
    write(&format!("{root}/src/a.c"), "int a;\n");
    write(&format!("{root}/other/file.txt"), "a file\n");
    std::fs::create_dir_all(format!("{root}/other/exists")).unwrap();
    let mut messages = Vec::new();
    for name in ["missing", "file.txt"] {
        let items = format!(
            "  <ClCompile Include=\"..\\src\\a.c\" />\n  <ClCompile Include=\"{root}/other/{name}/x.cpp\" />\n  <ClCompile Include=\"{root}/other/{name}/**/*.cpp\" />\n"
        );
        write(&format!("{root}/build/b.vcxproj"), &project(&items));
        // With the tree as the home folder, `other/{name}` is a root of its own.
        let index = build(&format!("{root}/build"), "b.vcxproj", &options(Some(&root)));
        assert!(index.source_roots().contains(&format!("{root}/other/{name}")));
        let x = index.files().iter().find(|f| f.path.ends_with("x.cpp")).unwrap();
        assert_eq!(x.state, FileState::Refused { code: Code::Outside }, "unreadable, not missing");
        messages.push(outside_messages(&index));
    }
    assert_eq!(messages[0], messages[1]);
    let text = messages[0].join("\n");
    assert!(text.contains("is not open: its files are not read"), "{text}");
}

#[test]
fn a_file_used_as_a_folder_in_a_root_is_missing_with_a_warning() {
    let (_tmp, root) = tree();
    write(&format!("{root}/src/main.cpp"), "int main;\n");
    let items = "  <ClCompile Include=\"../src/main.cpp\" />\n  <ClCompile Include=\"../src/main.cpp/x.cpp\" />\n  <ClCompile Include=\"../src/main.cpp/**/*.cpp\" />\n  <ClCompile Include=\"../src/gone/**/*.cpp\" />\n";
    write(&format!("{root}/build/b.vcxproj"), &project(items));
    let index = build(&format!("{root}/build"), "b.vcxproj", &options(None));
    assert_eq!(index.source_roots(), [format!("{root}/src")]);
    let state =
        |end: &str| index.files().iter().find(|f| f.path.ends_with(end)).unwrap().state.clone();
    assert_eq!(state("src/main.cpp"), FileState::Exists);
    assert_eq!(state("main.cpp/x.cpp"), FileState::Missing);
    let warnings = warnings(&index);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let project = format!("{root}/build/b.vcxproj");
    assert_eq!((warnings[0].file.as_str(), warnings[0].line), (project.as_str(), 5));
    assert!(
        warnings[0].message.contains("src/main.cpp is missing or is a file"),
        "{}",
        warnings[0]
    );
    assert_eq!(warnings[1].line, 6);
    assert!(warnings[1].message.contains("src/gone is missing or is a file"), "{}", warnings[1]);
}

#[test]
fn a_project_that_does_not_parse_is_a_warning_of_its_solution() {
    let (_tmp, root) = tree();
    write(&format!("{root}/src/a.c"), "int a;\n");
    write(
        &format!("{root}/build/good/good.vcxproj"),
        &project("<ClCompile Include=\"..\\..\\src\\a.c\" />"),
    );
    write(&format!("{root}/build/bad/bad.vcxproj"), "<Project><ItemGroup>");
    let sln = sln_line("good", "good\\good.vcxproj") + &sln_line("bad", "bad\\bad.vcxproj");
    write(&format!("{root}/build/app.sln"), &sln);
    let index = build(&format!("{root}/build"), "app.sln", &options(None));
    assert_eq!(index.files().len(), 1);
    let warnings = warnings(&index);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].file, format!("{root}/build/bad/bad.vcxproj"));
    assert!(warnings[0].message.starts_with("not read: "), "{}", warnings[0]);
    // Named alone, the project is the index: it not parsing is the error.
    let err = SourceIndex::load(
        &sandbox(&format!("{root}/build"), &[]),
        "bad/bad.vcxproj",
        &options(None),
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::Config);
}

#[test]
fn thousands_of_removes_and_wildcards_stay_bounded() {
    let (_tmp, root) = shape();
    write(&format!("{root}/build/app/Program.cs"), "class P {}\n");
    // An SDK project with 20 000 distinct `Compile Remove` and 2 000 distinct wildcards.
    let mut items = String::new();
    for i in 0..20_000 {
        let _ = writeln!(items, "<Compile Remove=\"gen{i}/**\" />");
    }
    for i in 0..2_000 {
        let _ = writeln!(items, "<Compile Include=\"w{i}/*.cs\" />");
    }
    let text =
        format!("<Project Sdk=\"Microsoft.NET.Sdk\"><ItemGroup>{items}</ItemGroup></Project>");
    write(&format!("{root}/build/app/app.csproj"), &text);
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/app/app.csproj", &options(None)));
    assert_eq!(index.files().len(), 1, "Program.cs by the implicit **/*.cs");
    let text: String = warnings(&index).iter().map(|w| format!("{w}\n")).collect();
    assert!(
        text.contains("19744 more `Remove` and `Exclude` patterns ignored (at most 256)"),
        "{text}"
    );
    assert!(text.contains("977 more wildcard items left out"), "{text}");
}

/// A `Remove` after each wildcard gives each wildcard a longer list of exclusions (the
/// removes written after it); their lists together are capped, and a wildcard past the cap
/// is left out with a warning, not expanded with fewer exclusions than it has.
#[test]
fn interleaved_removes_and_wildcards_keep_their_exclusions_bounded() {
    let (_tmp, root) = shape();
    write(&format!("{root}/build/app/w0/a.cs"), "class A {}\n");
    let long = "x".repeat(2_000);
    let mut items = String::new();
    for i in 0..250 {
        let _ = writeln!(items, "<Compile Include=\"w{i}/*.cs\" />");
        let _ = writeln!(items, "<Compile Remove=\"{long}{i}/**\" />");
    }
    let text = format!("<Project><ItemGroup>{items}</ItemGroup></Project>");
    write(&format!("{root}/build/app/app.csproj"), &text);
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/app/app.csproj", &options(None)));
    let text: String = warnings(&index).iter().map(|w| format!("{w}\n")).collect();
    assert!(text.contains("/w0/*.cs` left out: the exclusion lists of its project file"), "{text}");
    assert!(index.files().is_empty(), "{:?}", index.files());
    // The lists kept stay within their bytes, however many wildcards share them.
    let lines = text.lines().filter(|l| l.contains("left out: the exclusion lists")).count();
    assert!((1..250).contains(&lines), "{lines}");
}

/// A `.filters` is read at once and resolved alone only when that fails: one that is not
/// there, or that leads out of the workspace, is passed over in silence and nothing of it is
/// read; one that is there and cannot be read (a folder) is a warning, as before.
#[test]
fn a_filters_file_missing_leading_out_or_unreadable_is_told_apart() {
    let (_tmp, root) = shape();
    let (_outside, elsewhere) = shape();
    write(&format!("{elsewhere}/src/secret.c"), "int secret;\n");
    write(
        &format!("{elsewhere}/x.vcxproj.filters"),
        &project("  <ClCompile Include=\"src\\secret.c\" />\n"),
    );
    let mut sln = String::new();
    for name in ["a", "b", "c"] {
        write(&format!("{root}/src/{name}.c"), "int x;\n");
        let item = format!("  <ClCompile Include=\"..\\src\\{name}.c\" />\n");
        write(&format!("{root}/build/{name}.vcxproj"), &project(&item));
        sln.push_str(&sln_line(name, &format!("{name}.vcxproj")));
    }
    std::fs::create_dir_all(format!("{root}/build/a.vcxproj.filters")).unwrap();
    std::os::unix::fs::symlink(
        format!("{elsewhere}/x.vcxproj.filters"),
        format!("{root}/build/c.vcxproj.filters"),
    )
    .unwrap();
    write(&format!("{root}/build/all.sln"), &sln);
    let top = root.clone();
    let index = guarded(60, move || build(&top, "build/all.sln", &options(None)));
    let text: String = warnings(&index).iter().map(|w| format!("{w}\n")).collect();
    assert!(text.contains("a.vcxproj.filters") && text.contains("not read"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(!text.contains(&elsewhere), "{text}");
    let files: Vec<String> = index.files().iter().map(|f| f.path.clone()).collect();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(files.iter().all(|f| !f.contains("secret")), "{files:?}");
}
