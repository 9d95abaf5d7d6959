//! The examples of README.md and docs/*.md, run: every `$ ctx …` line of a fenced block is run
//! with the real binary and what it prints is compared with the lines shown under it, so the
//! documentation cannot drift from the binary.
//!
//! How a block is checked is said by an HTML comment on the line before its fence:
//!
//! - `<!-- example: file FIXTURE PATH -->`: the block is the file `PATH` of the fixture
//!   `FIXTURE` of this document (the README's tour builds its workspace from the files it shows).
//! - `<!-- example: run FIXTURE -->`: each `$ ctx …` line is run in the fixture and prints
//!   exactly the lines shown under it. A shown line ending in `(on standard error)` is expected
//!   on standard error, the others on standard output.
//! - `<!-- example: run FIXTURE, loose -->`: the same, but `…` in a shown line stands for any
//!   text, a line of `…` alone for any lines, and durations (`41.7 ms`) for any duration.
//! - `<!-- example: skip: REASON -->`: illustrative, not run; the reason says why.
//!
//! A block with a `$ ctx` line and none of these fails, as does a drifted example, named by its
//! file and line. Besides `$ ctx ARGS`, a block may hold `$ cd DIR` and `$ printf 'TEXT' | ctx
//! ARGS` (the text is the command's standard input; otherwise standard input is empty).
//!
//! A fixture is a folder `~/work/FIXTURE` of a home folder of its own (`HOME` is `/home/me` as
//! the examples show it: the temporary folder above it is left out of the output), with the
//! user's configuration and cache folders inside that home. It holds the files its document
//! declares, on top of a base named here ([`base`]): `examples` is the repository's `examples/`
//! folder. The blocks of one document share each fixture, in order; each starts in its folder.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use assert_fs::TempDir;

/// The repository's root.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The documents whose examples are run: README.md and every docs/*.md.
fn documents() -> Vec<PathBuf> {
    let root = repository();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

#[test]
fn every_shown_example_prints_what_it_shows() {
    let root = repository();
    let mut failures = String::new();
    let mut ran = 0;
    for path in documents() {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let report = check_document(&name, &text);
        ran += report.ran;
        failures.push_str(&report.failures);
    }
    assert!(failures.is_empty(), "examples that drifted from the binary:\n\n{failures}");
    // The README and docs/cli.md alone show more than this; a parser that finds nothing fails.
    assert!(ran >= 10, "only {ran} examples were run");
}

// ---------------------------------------------------------------- the documents

/// How a block is checked, from the comment before its fence.
#[derive(Debug, Clone, PartialEq)]
enum Directive {
    /// The block is a file of a fixture.
    File { fixture: String, path: String },
    /// Run the block's commands in a fixture.
    Run { fixture: String, loose: bool },
    /// Illustrative; not run.
    Skip,
}

/// A fenced block: the line of its opening fence, its info string, its lines and the directive
/// before it.
struct Block {
    line: usize,
    lang: String,
    lines: Vec<String>,
    directive: Option<Result<Directive, String>>,
}

/// The fenced blocks of a Markdown text, at the top level (not indented).
fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    let mut before: Option<&str> = None;
    while let Some((index, line)) = lines.next() {
        let Some(fence) = fence_of(line) else {
            if !line.trim().is_empty() {
                before = Some(line);
            }
            continue;
        };
        let lang = line[fence.len()..].trim().to_owned();
        let mut body = Vec::new();
        for (_, inner) in lines.by_ref() {
            if inner.trim_end() == fence {
                break;
            }
            body.push(inner.to_owned());
        }
        let directive = before.and_then(directive);
        blocks.push(Block { line: index + 1, lang, lines: body, directive });
        before = None;
    }
    blocks
}

/// The backticks or tildes that open a fence on `line`, if it is one.
fn fence_of(line: &str) -> Option<&str> {
    for mark in ['`', '~'] {
        let count = line.chars().take_while(|&c| c == mark).count();
        if count >= 3 {
            return Some(&line[..count]);
        }
    }
    None
}

/// The directive of an `<!-- example: … -->` comment line; `None` for any other line.
fn directive(line: &str) -> Option<Result<Directive, String>> {
    let body = line.trim().strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    let body = body.strip_prefix("example:")?.trim();
    let words: Vec<&str> = body.split_whitespace().collect();
    Some(match words.as_slice() {
        ["file", fixture, path] => {
            Ok(Directive::File { fixture: (*fixture).into(), path: (*path).into() })
        }
        ["run", fixture] => Ok(Directive::Run { fixture: (*fixture).into(), loose: false }),
        ["run", fixture, "loose"] if fixture.ends_with(',') => {
            Ok(Directive::Run { fixture: fixture.trim_end_matches(',').into(), loose: true })
        }
        ["skip:", reason @ ..] if !reason.is_empty() => Ok(Directive::Skip),
        _ => Err(format!(
            "`{body}` is none of `file FIXTURE PATH`, `run FIXTURE[, loose]`, `skip: REASON`"
        )),
    })
}

/// Whether a block shows a command of ctx.
fn shows_ctx(block: &Block) -> bool {
    block.lines.iter().any(|line| {
        line.strip_prefix("$ ").is_some_and(|cmd| cmd.starts_with("ctx ") || cmd.contains("| ctx "))
    })
}

/// What checking one document found.
#[derive(Default)]
struct Report {
    /// The commands run.
    ran: usize,
    /// One paragraph per failure, each starting with `FILE:LINE:`.
    failures: String,
}

/// Checks every example of the document `name` holding `text`.
fn check_document(name: &str, text: &str) -> Report {
    let blocks = blocks(text);
    let mut report = Report::default();
    let mut files: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for block in &blocks {
        if let Some(Ok(Directive::File { fixture, path })) = &block.directive {
            let content: String = block.lines.iter().map(|line| format!("{line}\n")).collect();
            files.entry(fixture.clone()).or_default().push((path.clone(), content));
        }
    }
    let mut fixtures: BTreeMap<String, Fixture> = BTreeMap::new();
    for block in &blocks {
        let at = format!("{name}:{}", block.line);
        match &block.directive {
            Some(Err(message)) => writeln!(report.failures, "{at}: {message}\n").unwrap(),
            Some(Ok(Directive::Run { fixture, loose })) => {
                if !fixtures.contains_key(fixture) {
                    let declared = files.get(fixture).map_or(&[][..], Vec::as_slice);
                    match Fixture::new(fixture, declared) {
                        Ok(built) => drop(fixtures.insert(fixture.clone(), built)),
                        Err(message) => {
                            writeln!(report.failures, "{at}: {message}\n").unwrap();
                            continue;
                        }
                    }
                }
                let fixture = fixtures.get_mut(fixture).unwrap();
                run_block(name, block, fixture, *loose, &mut report);
            }
            Some(Ok(Directive::File { .. } | Directive::Skip)) => {}
            None if shows_ctx(block) => writeln!(
                report.failures,
                "{at}: a `{}` block shows `$ ctx` without saying how it is checked: put \
                 `<!-- example: run FIXTURE -->` (or `run FIXTURE, loose`, or `skip: REASON`) \
                 on the line before its fence\n",
                block.lang
            )
            .unwrap(),
            None => {}
        }
    }
    report
}

// ---------------------------------------------------------------- the commands

/// A shown command: its line in the document, its words, and the lines shown under it.
struct Shown {
    line: usize,
    command: String,
    stdin: Option<String>,
    words: Vec<String>,
    stdout: Vec<String>,
    stderr: Vec<String>,
}

/// The note that marks a shown line as standard error.
const ON_STDERR: &str = "(on standard error)";

/// The commands of a block, each with the output shown under it.
fn commands(block: &Block) -> Result<Vec<Shown>, (usize, String)> {
    let mut shown: Vec<Shown> = Vec::new();
    let mut index = 0;
    while index < block.lines.len() {
        let line = &block.lines[index];
        let number = block.line + 1 + index;
        index += 1;
        let Some(first) = line.strip_prefix("$ ") else {
            let Some(last) = shown.last_mut() else {
                return Err((number, "output shown before any `$` command".into()));
            };
            match line.trim_end().strip_suffix(ON_STDERR) {
                Some(text) => last.stderr.push(text.trim_end().to_owned()),
                None => last.stdout.push(line.clone()),
            }
            continue;
        };
        // A line ending in `\` goes on on the next one, as in a shell.
        let mut command = first.to_owned();
        while command.ends_with('\\') && index < block.lines.len() {
            command.pop();
            command.push_str(block.lines[index].trim_start());
            index += 1;
        }
        let (stdin, words) = parse_command(&command).map_err(|message| (number, message))?;
        shown.push(Shown {
            line: number,
            command,
            stdin,
            words,
            stdout: Vec::new(),
            stderr: Vec::new(),
        });
    }
    Ok(shown)
}

/// The standard input and words of a shown command: `WORDS`, or `printf 'TEXT' | WORDS`.
fn parse_command(command: &str) -> Result<(Option<String>, Vec<String>), String> {
    let words = split_words(command)?;
    match words.iter().position(|word| word == "|") {
        None => Ok((None, words)),
        Some(2) if words[0] == "printf" => Ok((Some(printf_text(&words[1])), words[3..].to_vec())),
        Some(_) => Err(format!("`{command}`: only `printf 'TEXT' | ctx …` can be piped")),
    }
}

/// The text `printf` prints for a format without conversions: `\n`, `\t` and `\\` escapes.
fn printf_text(format: &str) -> String {
    format.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
}

/// What an unquoted `~` at the start of a word becomes in [`split_words`].
const HOME: char = '\u{1}';

/// Splits a command line into words as a POSIX shell does for the forms the docs use: single
/// and double quotes, backslash escapes, a `#` comment, and `~` at the start of an unquoted
/// word (written [`HOME`], to be made the fixture's home).
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(word.take()),
            '#' if word.is_none() => break,
            '\'' => {
                let quoted: String = chars.by_ref().take_while(|&c| c != '\'').collect();
                word.get_or_insert_with(String::new).push_str(&quoted);
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => word.extend(chars.next()),
                        Some(c) => word.push(c),
                        None => return Err(format!("`{line}`: unclosed double quote")),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            '~' if word.is_none() => word = Some(HOME.to_string()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

// ---------------------------------------------------------------- the fixtures

/// A workspace the examples of one document run in.
struct Fixture {
    /// The temporary folder that stands for `/`: left out of the output.
    top: TempDir,
    /// `~/work/NAME`.
    folder: PathBuf,
}

impl Fixture {
    /// The fixture `name`: its base, then the files its document declares.
    fn new(name: &str, files: &[(String, String)]) -> Result<Self, String> {
        let top = TempDir::new().unwrap();
        let folder = top.path().join("home/me/work").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let based = base(name, &folder, &top.path().join("home/me"));
        if !based && files.is_empty() {
            return Err(format!("no fixture `{name}`: no base of that name, and no file of it"));
        }
        for (path, content) in files {
            let target = folder.join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(target, content).unwrap();
        }
        Ok(Fixture { top, folder })
    }

    /// The fixture's home folder.
    fn home(&self) -> PathBuf {
        self.top.path().join("home/me")
    }
}

/// Lays the base of the fixture `name` in `folder` (and `home`, the fixture's home folder);
/// false when there is none of that name.
fn base(name: &str, folder: &Path, home: &Path) -> bool {
    let write = |path: &Path, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    match name {
        // The repository's examples, as `examples/`.
        "examples" => copy_tree(&repository().join("examples"), &folder.join("examples")),
        // A small crate with a retry loop, for the suggestions.
        "retry" => {
            for (path, text) in [
                (
                    "src/retry.rs",
                    "/// Retries until the deadline.\npub fn retry_with_timeout() {\n    backoff();\n}\n",
                ),
                ("src/backoff.rs", "/// Waits a little longer each time.\npub fn backoff() {}\n"),
                (
                    "src/main.rs",
                    "mod backoff;\nmod retry;\n\nfn main() {\n    retry::retry_with_timeout();\n}\n",
                ),
                ("README.md", "Retry with a timeout.\n"),
            ] {
                write(&folder.join(path), text);
            }
        }
        // A CMake build for Visual Studio in `build/`, its sources in `src/`.
        "FreeCAD" => {
            let mut sln =
                String::from("\nMicrosoft Visual Studio Solution File, Format Version 12.00\n");
            for (number, (project, files)) in [
                ("App", &["Application.h", "Application.cpp"][..]),
                ("Gui", &["Application.h", "MainWindow.cpp"]),
                ("Base", &["Console.h", "Console.cpp"]),
            ]
            .into_iter()
            .enumerate()
            {
                let mut items = String::new();
                for file in files {
                    let kind = if file.ends_with(".h") { "ClInclude" } else { "ClCompile" };
                    writeln!(items, "    <{kind} Include=\"..\\..\\src\\{project}\\{file}\" />")
                        .unwrap();
                    write(
                        &folder.join(format!("src/{project}/{file}")),
                        &format!("// {project}/{file}\n"),
                    );
                }
                write(
                    &folder.join(format!("build/{project}/{project}.vcxproj")),
                    &format!("<Project>\n  <ItemGroup>\n{items}  </ItemGroup>\n</Project>\n"),
                );
                writeln!(
                    sln,
                    "Project(\"{{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}}\") = \"{project}\", \"{project}\\{project}.vcxproj\", \"{{0D3A4E1C-1111-4C8A-9F0A-00000000000{}}}\"\nEndProject",
                    number + 1
                )
                .unwrap();
            }
            write(&folder.join("build/FreeCAD.sln"), &sln);
        }
        // A project for conversations, with a screenshot on the desktop.
        "app" => {
            write(&folder.join("src/render.rs"), "pub fn render() {}\n");
            std::fs::create_dir_all(home.join("Desktop")).unwrap();
            std::fs::write(home.join("Desktop/bug.png"), crate::images::png()).unwrap();
        }
        _ => return false,
    }
    true
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

// ---------------------------------------------------------------- running and comparing

/// Runs the commands of `block` in `fixture` and notes each that drifted.
fn run_block(name: &str, block: &Block, fixture: &mut Fixture, loose: bool, report: &mut Report) {
    let shown = match commands(block) {
        Ok(shown) => shown,
        Err((line, message)) => {
            writeln!(report.failures, "{name}:{line}: {message}\n").unwrap();
            return;
        }
    };
    if shown.is_empty() {
        writeln!(report.failures, "{name}:{}: a `run` block without a `$` command\n", block.line)
            .unwrap();
        return;
    }
    let mut cwd = fixture.folder.clone();
    for command in &shown {
        let at = format!("{name}:{}", command.line);
        let words: Vec<String> = command
            .words
            .iter()
            .map(|word| match word.strip_prefix(HOME) {
                Some(rest) => format!("{}{rest}", fixture.home().display()),
                None => word.clone(),
            })
            .collect();
        match words.first().map(String::as_str) {
            Some("cd") if words.len() == 2 => {
                cwd = cwd.join(&words[1]);
                continue;
            }
            Some("ctx") => {}
            _ => {
                writeln!(report.failures, "{at}: `{}` is not a command of ctx\n", command.command)
                    .unwrap();
                continue;
            }
        }
        report.ran += 1;
        let (code, stdout, stderr) = run_ctx(fixture, &cwd, &words[1..], command.stdin.as_deref());
        let fits = |shown: &[String], actual: &str| {
            if loose { loose_match(shown, actual) } else { exact_match(shown, actual) }
        };
        let crashed = !matches!(code, 0..=2) || stderr.contains("panicked");
        if crashed || !fits(&command.stdout, &stdout) || !fits(&command.stderr, &stderr) {
            writeln!(
                report.failures,
                "{at}: `{}` (fixture {}{}, exit status {code}) prints\n{}\
                 but the document shows\n{}",
                command.command,
                fixture.folder.file_name().unwrap().to_string_lossy(),
                if loose { ", loose" } else { "" },
                both(
                    &stdout.lines().map(str::to_owned).collect::<Vec<_>>(),
                    &stderr_lines(&stderr)
                ),
                both(&command.stdout, &command.stderr),
            )
            .unwrap();
        }
    }
}

/// The lines of `stderr`, as the document writes them.
fn stderr_lines(stderr: &str) -> Vec<String> {
    stderr.lines().map(str::to_owned).collect()
}

/// Shown standard output and error, as the document would write them, indented.
fn both(stdout: &[String], stderr: &[String]) -> String {
    let mut text = String::new();
    for line in stdout {
        writeln!(text, "    {line}").unwrap();
    }
    for line in stderr {
        writeln!(text, "    {line}     {ON_STDERR}").unwrap();
    }
    if text.is_empty() {
        text.push_str("    (nothing)\n");
    }
    text.push('\n');
    text
}

/// Runs ctx in `cwd` of `fixture`: its code, standard output and standard error, with the
/// temporary folder above the fixture's home left out.
fn run_ctx(
    fixture: &Fixture,
    cwd: &Path,
    args: &[String],
    stdin: Option<&str>,
) -> (i32, String, String) {
    let home = fixture.home();
    let mut cmd = Command::cargo_bin("ctx").unwrap();
    cmd.current_dir(cwd)
        .args(args)
        .env("HOME", &home)
        .env("CTX_CONFIG_DIR", home.join(".config/ctx"))
        .env("CTX_CACHE_DIR", home.join(".cache/ctx"))
        .env("NO_COLOR", "1")
        .env_remove("CTX_FORCE_TTY")
        .env_remove("RUST_LOG")
        .write_stdin(stdin.unwrap_or(""));
    let out = cmd.output().unwrap();
    let top = fixture.top.path();
    let real = top.canonicalize().unwrap();
    let clean = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        let text = text.replace(&*real.to_string_lossy(), "");
        text.replace(&*top.to_string_lossy(), "")
    };
    (out.status.code().unwrap_or(-1), clean(&out.stdout), clean(&out.stderr))
}

/// Whether `actual` is exactly the `shown` lines.
fn exact_match(shown: &[String], actual: &str) -> bool {
    actual.lines().eq(shown.iter().map(String::as_str))
}

/// Whether `actual` matches the `shown` lines, with `…` for any text and durations for any.
fn loose_match(shown: &[String], actual: &str) -> bool {
    let shown: Vec<String> = shown.iter().map(|line| durations(line)).collect();
    let actual: Vec<String> = actual.lines().map(durations).collect();
    lines_match(&shown, &actual)
}

/// Matches lines, a shown line of `…` alone standing for any lines (none included).
fn lines_match(shown: &[String], actual: &[String]) -> bool {
    match shown.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "…" => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, others)| line_matches(first, line) && lines_match(rest, others)),
    }
}

/// Whether `line` matches `shown`, where each `…` of `shown` stands for any text.
fn line_matches(shown: &str, line: &str) -> bool {
    let mut pieces = shown.split('…');
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// `line` with every duration (`41.7 ms`, `3 s`, `12µs`) written as `DURATION`.
fn durations(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..start]);
        let number = rest[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map_or(rest.len(), |end| start + end);
        let after = &rest[number..];
        let spaced = after.strip_prefix(' ').unwrap_or(after);
        let unit = ["ms", "µs", "ns", "s"].into_iter().find(|unit| {
            spaced.strip_prefix(unit).is_some_and(|next| !next.starts_with(char::is_alphanumeric))
        });
        match unit {
            Some(unit) => {
                out.push_str("DURATION");
                rest = &spaced[unit.len()..];
            }
            None => {
                out.push_str(&rest[start..number]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------- the harness itself

#[test]
fn a_drifted_example_is_named_by_its_file_and_line() {
    let doc = "# Doc\n\n<!-- example: file w a.md -->\n```markdown\nhello\n```\n\n\
               <!-- example: run w -->\n```text\n$ ctx assemble a.md\nhullo\n```\n";
    let report = check_document("docs/x.md", doc);
    assert_eq!(report.ran, 1);
    assert!(
        report.failures.starts_with("docs/x.md:10: `ctx assemble a.md`"),
        "{}",
        report.failures
    );
    assert!(report.failures.contains("    hello\n"), "{}", report.failures);
    assert!(report.failures.contains("    hullo\n"), "{}", report.failures);

    let fixed = doc.replace("hullo", "hello");
    let report = check_document("docs/x.md", &fixed);
    assert_eq!((report.ran, report.failures.as_str()), (1, ""));
}

#[test]
fn a_shown_command_without_a_directive_fails() {
    let doc = "text\n\n```text\n$ ctx refs main.md\nmain.md\n```\n";
    let report = check_document("README.md", doc);
    assert!(
        report.failures.starts_with("README.md:3: a `text` block shows `$ ctx`"),
        "{}",
        report.failures
    );
    let skipped = doc.replace("```text", "<!-- example: skip: a FreeCAD checkout -->\n```text");
    assert_eq!(check_document("README.md", &skipped).failures, "");
    let unknown = doc.replace("```text", "<!-- example: runs w -->\n```text");
    assert!(check_document("README.md", &unknown).failures.contains("is none of"));
}

#[test]
fn standard_error_lines_and_standard_input_are_shown_as_such() {
    let doc = "<!-- example: file w bad.md -->\n```\n@[nope.md]\n```\n\
               <!-- example: run w -->\n```text\n$ ctx check bad.md\n\
               bad.md:1:1: error[E_NOT_FOUND]: no such file or directory: nope.md\n\
               1 error, 0 warnings in 1 file     (on standard error)\n\
               $ printf 'x @[nope.md]\\n' | ctx assemble - --on-error keep   # a comment\n\
               x @[nope.md]\n\
               -:1:3: error[E_NOT_FOUND]: no such file or directory: nope.md  (on standard error)\n\
               ```\n";
    let report = check_document("d.md", doc);
    assert_eq!((report.ran, report.failures.as_str()), (2, ""));
}

#[test]
fn loose_examples_elide_text_lines_and_durations() {
    let shown = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    assert!(loose_match(&shown(&["a…c", "…", "z"]), "abc\nx\ny\nz\n"));
    assert!(loose_match(&shown(&["built in 41.7 ms"]), "built in 3 ms\n"));
    assert!(!loose_match(&shown(&["a…c"]), "abd\n"));
    assert!(!loose_match(&shown(&["a", "…"]), "b\n"));
    assert!(loose_match(&shown(&["…", "b"]), "b\n"));
    assert!(!exact_match(&shown(&["a…c"]), "abc\n"));
    assert_eq!(durations("in 1.5 s, 12ms and 3 files"), "in DURATION, DURATION and 3 files");
}

#[test]
fn shown_commands_split_as_a_shell_splits_them() {
    let split = |line: &str| split_words(line).unwrap();
    assert_eq!(split(r#"ctx expand "why @a.md?"  # note"#), ["ctx", "expand", "why @a.md?"]);
    assert_eq!(split("ctx x 'it''s' a\\ b ~/x"), ["ctx", "x", "its", "a b", "\u{1}/x"]);
    assert_eq!(split("ctx '~' a~"), ["ctx", "~", "a~"]);
    assert!(split_words("ctx \"open").is_err());
    assert_eq!(
        parse_command("printf '' | ctx check -").unwrap(),
        (Some(String::new()), split("ctx check -"))
    );
    assert!(parse_command("ctx refs a.md | head").is_err());
}
