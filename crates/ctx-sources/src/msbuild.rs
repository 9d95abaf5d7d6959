//! Solutions and MSBuild projects: `.sln`, `.slnx`, `.vcxproj`, `.vcxproj.filters`,
//! `.vcxitems`, `.csproj` and `.vbproj`, read from their text (no I/O here); and the projects
//! of Visual Studio 2008 and before (`.vcproj`), whose `File` elements name the files.
//!
//! Elements are matched by local name, so any XML namespace (or none) is read the same way.

use std::borrow::Cow;

use crate::items::{Entry, Gather, Items, Kind};
#[cfg(test)]
use crate::paths::Language;
use crate::paths::{self, Dirs, Unexpanded};
use crate::warning::clip;

/// A project a solution lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProjectRef {
    /// The project's name in the solution (its file stem for a `.slnx`).
    pub(crate) name: String,
    /// The project file, absolute and normalised.
    pub(crate) path: String,
    /// The 1-based line of the solution that names it.
    pub(crate) line: u32,
}

/// The type GUID of a solution folder, which is not a project.
const SOLUTION_FOLDER: &str = "2150E333-8FDC-42A3-9474-1A3956D46DE8";

/// The projects of a classic text solution:
/// `Project("{type}") = "Name", "rel\path.vcxproj", "{guid}"`; solution folders are skipped.
pub(crate) fn parse_sln(text: &str, solution_dir: &str) -> Vec<ProjectRef> {
    let mut projects = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("Project(") else { continue };
        let quoted: Vec<&str> = rest.split('"').skip(1).step_by(2).collect();
        let [kind, name, path, ..] = quoted[..] else { continue };
        if kind.trim_matches(['{', '}']).eq_ignore_ascii_case(SOLUTION_FOLDER) {
            continue;
        }
        if let Some(path) = paths::absolute(solution_dir, path) {
            projects.push(ProjectRef { name: name.to_owned(), path, line: line_no(i) });
        }
    }
    projects
}

/// The projects of an XML solution (`.slnx`): every `Project` element's `Path`, in any
/// `Folder`.
pub(crate) fn parse_slnx(text: &str, solution_dir: &str) -> Result<Vec<ProjectRef>, (u32, String)> {
    let doc = parse_xml(text)?;
    let lines = Lines::new(text);
    let mut projects = Vec::new();
    for node in doc.descendants().filter(|n| n.has_tag_name("Project")) {
        let Some(path) = attribute(&node, "Path").and_then(|p| paths::absolute(solution_dir, p))
        else {
            continue;
        };
        let stem = paths::file_name(&path).split('.').next().unwrap_or_default().to_owned();
        let name = attribute(&node, "Name").map_or(stem, str::to_owned);
        let line = lines.of(node.range().start);
        projects.push(ProjectRef { name, path, line });
    }
    Ok(projects)
}

/// The items of a project file: a `.vcxproj`, its `.filters`, a `.vcxitems` or a `.csproj`.
/// Item groups under any `Condition` are all taken (the union of the configurations).
/// A document that does not parse is an error: its line and what is wrong.
///
/// The document is read as a stream of events (quick-xml), so that the elements that are
/// not items (an `ObjectFileName` per configuration on every item, in CMake's projects) cost
/// a scan and no node of a tree; what a tree's parser refuses is refused here too (see
/// [`Reader`]).
pub(crate) fn parse_project(text: &str, dirs: &Dirs<'_>) -> Result<Items, (u32, String)> {
    let mut reader = Reader::new(text)?;
    let mut read = Read::default();
    while let Some(element) = reader.next_element()? {
        read.element(&element, dirs, &mut reader)?;
    }
    if let Some(text) = reader.captured.take() {
        read.default_items(&text);
    }
    Ok(read.finish(dirs))
}

/// What [`parse_project`] has gathered so far.
#[derive(Default)]
struct Read {
    items: Gather,
    /// Whether `EnableDefaultCompileItems` (or `EnableDefaultItems`) is `false`.
    off: bool,
    /// Whether it is an SDK-style project (`<Project Sdk=…>`).
    sdk: bool,
    /// Whether it is a project of Visual Studio 2008 or before ([`LEGACY_ROOT`]).
    legacy: bool,
}

/// The root element of a Visual C++ project of Visual Studio 2008 and before (`.vcproj`):
/// each `File` element names a file by its `RelativePath`, relative to the project's folder.
const LEGACY_ROOT: &str = "VisualStudioProject";

impl Read {
    fn element(
        &mut self,
        element: &Element<'_>,
        dirs: &Dirs<'_>,
        reader: &mut Reader<'_>,
    ) -> Result<(), (u32, String)> {
        if let Some(text) = reader.captured.take() {
            self.default_items(&text);
        }
        let name = element.name();
        let at = element.at;
        let attribute = |reader: &mut Reader<'_>, name: &str| {
            element.attribute(name).map_err(|why| reader.fail(at, &why))
        };
        let sdk_attribute = |reader: &mut Reader<'_>| attribute(reader, "Sdk").map(|a| a.is_some());
        if element.depth == 0 && sdk_attribute(reader)? {
            self.sdk = true;
        }
        if element.depth == 1 && (name == "Sdk" || (name == "Import" && sdk_attribute(reader)?)) {
            self.sdk = true;
        }
        if element.depth == 0 && name == LEGACY_ROOT {
            self.legacy = true;
        }
        if self.legacy {
            if name == "File" {
                let path = attribute(reader, "RelativePath")?;
                legacy_file(&mut self.items, path, reader.line(element.at), dirs);
            }
            return Ok(());
        }
        if name == "Import" {
            let project = attribute(reader, "Project")?.unwrap_or_default();
            if shared_items(&project) {
                let line = reader.line(element.at);
                match expanded(&project, dirs, dirs.this_file) {
                    Ok(path) => self.items.import(path, line),
                    Err(why) => self.items.warn(line, format!("import skipped: {why}")),
                }
            }
            return Ok(());
        }
        if name == "EnableDefaultCompileItems" || name == "EnableDefaultItems" {
            // Under a condition it holds in some configurations only: the union keeps the
            // implicit items.
            let conditional = element.in_condition || attribute(reader, "Condition")?.is_some();
            reader.capture = !element.empty && !conditional;
            return Ok(());
        }
        let Some(kind) = element.in_item_group.then(|| Kind::of(name)).flatten() else {
            return Ok(());
        };
        let [remove, include, exclude, condition] = element
            .find(["Remove", "Include", "Exclude", "Condition"])
            .map_err(|why| reader.fail(at, &why))?;
        // A `Remove` under a condition removes in some configurations only: the union of the
        // configurations keeps what it names.
        let remove = remove.filter(|_| !element.in_condition && condition.is_none());
        let attributes = Attributes {
            remove: optional(remove, "Remove").map_err(|why| reader.fail(at, &why))?,
            include: optional(include, "Include").map_err(|why| reader.fail(at, &why))?,
            exclude: optional(exclude, "Exclude").map_err(|why| reader.fail(at, &why))?,
        };
        item(&mut self.items, name, kind, &attributes, reader.line(element.at), dirs);
        Ok(())
    }

    /// The first text of an `EnableDefaultCompileItems` or `EnableDefaultItems`: `false`
    /// turns the implicit items off.
    fn default_items(&mut self, text: &str) {
        self.off |= text.trim().eq_ignore_ascii_case("false");
    }

    /// The items, an SDK project's implicit pattern first.
    fn finish(self, dirs: &Dirs<'_>) -> Items {
        self.items.finish(implicit(self.sdk && !self.off, dirs))
    }
}

/// Whether an `Import` names a shared-items project: a C++ `.vcxitems` or a C# `.projitems`,
/// whose items are the importing project's.
/// A `File` of a `.vcproj` ([`LEGACY_ROOT`]) naming `path`, as an item that includes it.
fn legacy_file(gather: &mut Gather, path: Option<Cow<'_, str>>, line: u32, dirs: &Dirs<'_>) {
    let kind = Kind::of("ClCompile").unwrap_or_default();
    let attributes = Attributes { remove: None, include: path, exclude: None };
    item(gather, "File", kind, &attributes, line, dirs);
}

fn shared_items(project: &str) -> bool {
    let lower = project.to_ascii_lowercase();
    lower.ends_with(".vcxitems") || lower.ends_with(".projitems")
}

/// The attributes of an item element that say what it adds or takes out.
struct Attributes<'a> {
    remove: Option<Cow<'a, str>>,
    include: Option<Cow<'a, str>>,
    exclude: Option<Cow<'a, str>>,
}

/// One item element, `name` of type `kind` at `line`, for both readers: a `Remove` takes out
/// of its type's items (and includes nothing, as MSBuild has it), else an `Include` adds its
/// paths minus its `Exclude` patterns.
fn item(
    gather: &mut Gather,
    name: &str,
    kind: Kind,
    a: &Attributes<'_>,
    line: u32,
    dirs: &Dirs<'_>,
) {
    let patterns = |list: &str| -> Vec<String> {
        split(list).filter_map(|p| expanded(p, dirs, dirs.project).ok()).collect()
    };
    if let Some(remove) = &a.remove {
        gather.remove(kind, patterns(remove), line);
        return;
    }
    let Some(include) = &a.include else { return };
    gather.include(kind, a.exclude.as_deref().map(patterns).unwrap_or_default(), line);
    for part in split(include) {
        match item_path(part, dirs, dirs.project) {
            Ok((pattern, true)) => gather.entry(Entry::Pattern { pattern, exclude: 0, line }),
            Ok((path, false)) => gather.entry(Entry::File { path, line }),
            Err(why) => gather.warn(line, format!("{name} skipped: {why}")),
        }
    }
}

/// An SDK project's implicit `Compile` items, when it has them: every file of its language
/// under its folder (`**/*.cs` for C#, `**/*.vb` for Visual Basic) but `bin/` and `obj/`.
fn implicit(on: bool, dirs: &Dirs<'_>) -> Option<(String, Vec<String>)> {
    let extension = dirs.language.implicit_sources().filter(|_| on)?;
    let base = vec![format!("{}/bin/**", dirs.project), format!("{}/obj/**", dirs.project)];
    Some((format!("{}/**/*.{extension}", dirs.project), base))
}

/// [`Reader::open`]: the element is an `ItemGroup`.
const ITEM_GROUP: u8 = 1;
/// [`Reader::open`]: what the element holds is under a condition ([`conditional_element`], or
/// a `Condition` on it or an element that holds it).
const CONDITIONAL: u8 = 2;

/// Whether what an element holds holds in some configurations only, whatever its attributes.
fn conditional_element(name: &str) -> bool {
    matches!(name, "When" | "Otherwise" | "Target")
}

/// One start tag (`<a …>` or `<a …/>`).
struct Element<'a> {
    start: quick_xml::events::BytesStart<'a>,
    /// Its byte offset in the document.
    at: usize,
    /// How many elements hold it (0 for the root).
    depth: usize,
    /// Whether the element that holds it is an `ItemGroup`.
    in_item_group: bool,
    /// Whether it is under a condition (a `Condition` on an element that holds it, or a
    /// `When`, `Otherwise` or `Target` around it).
    in_condition: bool,
    /// Whether it closes itself (`<a/>`).
    empty: bool,
}

impl Element<'_> {
    /// Its local name (the namespace prefix left out).
    fn name(&self) -> &str {
        self.start.local_name().into_inner()
    }

    /// The value of the attribute of local name `name`, entities expanded and white space
    /// normalised as XML says; a value naming an entity XML does not predefine, or a
    /// character it does not allow, is an error.
    fn attribute(&self, name: &str) -> Result<Option<std::borrow::Cow<'_, str>>, String> {
        let [found] = self.find([name])?;
        found.map(|a| value(&a, name)).transpose()
    }

    /// The first attribute of each local name of `names`, in one pass over the tag, their
    /// values not yet looked at ([`value`]).
    fn find<const N: usize>(
        &self,
        names: [&str; N],
    ) -> Result<[Option<quick_xml::events::attributes::Attribute<'_>>; N], String> {
        let mut found = [const { None }; N];
        // The names were checked once for the whole tag ([`attributes_hold`]).
        let mut attributes = self.start.attributes();
        attributes.with_checks(false);
        for attribute in attributes {
            let attribute = attribute.map_err(|e| e.to_string())?;
            let key = attribute.key.local_name().into_inner();
            if let Some(i) = names.iter().position(|&n| n == key)
                && found[i].is_none()
            {
                found[i] = Some(attribute);
            }
        }
        Ok(found)
    }
}

/// The value of the attribute `attribute` (of local name `name`), entities expanded and white
/// space normalised as XML says; a value naming an entity XML does not predefine, or a
/// character it does not allow, is an error.
/// [`value`] of an attribute that may be missing.
fn optional<'a>(
    attribute: Option<quick_xml::events::attributes::Attribute<'a>>,
    name: &str,
) -> Result<Option<Cow<'a, str>>, String> {
    attribute.map(|a| value(&a, name)).transpose()
}

fn value<'a>(
    attribute: &quick_xml::events::attributes::Attribute<'a>,
    name: &str,
) -> Result<std::borrow::Cow<'a, str>, String> {
    let value = attribute
        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
        .map_err(|e| e.to_string())?;
    // What XML does not allow in a value is a control character (one of the text was refused
    // before the first event, but a character reference can make one) or U+FFFE and U+FFFF,
    // whose encodings start with 0xEF: bytes looked at in blocks, and the characters only
    // where such a byte is.
    let bytes = value.as_bytes();
    if control(bytes) || (memchr::memchr(0xEF, bytes).is_some() && !value.chars().all(xml_char)) {
        return Err(format!("the value of {name} holds a character XML does not allow"));
    }
    Ok(value)
}

/// Whether `bytes` hold a control character XML does not allow (all but tab, line feed and
/// carriage return): in blocks without a branch per byte, so that it runs at memory speed.
fn control(bytes: &[u8]) -> bool {
    bytes.chunks(64).any(|block| {
        block.iter().fold(false, |found, &b| {
            found | ((b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r'))
        })
    })
}

/// Whether XML 1.0 allows `c` in a document.
fn xml_char(c: char) -> bool {
    !matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
}

/// A project document as a stream of start tags, checked as a tree's parser checks it: one
/// root element, every element closed by its own name, no text beside the root, no document
/// type declaration (no entity is ever defined), only the entities XML predefines and
/// character references that name a character XML allows, no control characters, unique
/// attributes on every element.
struct Reader<'a> {
    text: &'a str,
    inner: quick_xml::Reader<&'a [u8]>,
    /// For each open element, whether it is an `ItemGroup` ([`ITEM_GROUP`]) and whether it
    /// is a group under a `Condition` ([`CONDITIONAL`]).
    open: Vec<u8>,
    roots: usize,
    /// Whether the first text of the element just opened is to be kept, and that text.
    capture: bool,
    captured: Option<String>,
    /// The line of [`Reader::line_at`], so that lines are counted once, forwards.
    line_at: (usize, u32),
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Result<Reader<'a>, (u32, String)> {
        if control(text.as_bytes()) {
            let at = text.bytes().position(|b| control(&[b])).unwrap_or_default();
            let line = line_no(bytecount::count(&text.as_bytes()[..at], b'\n'));
            return Err((line, "a control character, which XML does not allow".to_owned()));
        }
        let inner = quick_xml::Reader::from_str(text);
        Ok(Reader {
            text,
            inner,
            open: Vec::new(),
            roots: 0,
            capture: false,
            captured: None,
            line_at: (0, 1),
        })
    }

    /// The 1-based line of a byte offset at or after the last one asked for.
    fn line(&mut self, at: usize) -> u32 {
        let (from, line) = self.line_at;
        let at = at.clamp(from, self.text.len());
        let more = bytecount::count(&self.text.as_bytes()[from..at], b'\n');
        let line = line.saturating_add(u32::try_from(more).unwrap_or(u32::MAX));
        self.line_at = (at, line);
        line
    }

    fn fail(&mut self, at: usize, why: &str) -> (u32, String) {
        let line = self.line(at);
        (line, clip(why))
    }

    /// The next start tag, or `None` at the end of a document that holds together.
    fn next_element(&mut self) -> Result<Option<Element<'a>>, (u32, String)> {
        use quick_xml::events::Event;
        loop {
            let at = usize::try_from(self.inner.buffer_position()).unwrap_or(usize::MAX);
            let event = match self.inner.read_event() {
                Ok(event) => event,
                Err(e) => {
                    let at = usize::try_from(self.inner.error_position()).unwrap_or(at);
                    return Err(self.fail(at, &e.to_string()));
                }
            };
            let capture = std::mem::take(&mut self.capture);
            let text = match event {
                Event::Start(start) => return self.start(start, at, false).map(Some),
                Event::Empty(start) => return self.start(start, at, true).map(Some),
                Event::End(_) => {
                    self.open.pop();
                    continue;
                }
                Event::Text(text) if self.open.is_empty() => {
                    if text.bytes().all(|b| b.is_ascii_whitespace()) {
                        continue;
                    }
                    return Err(self.fail(at, "text outside the root element"));
                }
                // A text is only looked at when it is kept: nothing in it can fail the
                // document (control characters were refused before the first event, and a
                // reference is an event of its own).
                Event::Text(text) => capture.then(|| text.xml10_content()),
                Event::CData(data) => capture.then(|| data.xml10_content()),
                Event::GeneralRef(reference) => match reference_text(&reference) {
                    Some(text) => Some(std::borrow::Cow::Owned(text)),
                    None => {
                        let why = "an unknown entity or a character XML does not allow";
                        return Err(self.fail(at, why));
                    }
                },
                Event::DocType(_) => {
                    return Err(self.fail(at, "a document type declaration is not allowed"));
                }
                Event::Decl(_) | Event::PI(_) | Event::Comment(_) => continue,
                Event::Eof if self.roots == 1 && self.open.is_empty() => return Ok(None),
                Event::Eof => {
                    let at = self.text.len();
                    return Err(self.fail(at, "the document ends before its root element does"));
                }
            };
            if self.open.is_empty() {
                return Err(self.fail(at, "text outside the root element"));
            }
            if let (true, Some(text)) = (capture, text) {
                self.captured.get_or_insert_default().push_str(&text);
                self.capture = true;
            }
        }
    }

    /// A start tag at `at`: the second root, or attributes that do not hold together, fail
    /// the document.
    fn start(
        &mut self,
        start: quick_xml::events::BytesStart<'a>,
        at: usize,
        empty: bool,
    ) -> Result<Element<'a>, (u32, String)> {
        if self.open.is_empty() {
            self.roots += 1;
            if self.roots > 1 {
                return Err(self.fail(at, "a second root element"));
            }
        }
        let condition = match attributes_hold(&start) {
            Ok(condition) => condition,
            Err(why) => return Err(self.fail(at, &why)),
        };
        let local = start.local_name().into_inner();
        let item_group = local == "ItemGroup";
        let parent = self.open.last().copied().unwrap_or(0);
        let mut flags = if item_group { ITEM_GROUP } else { 0 };
        // What holds in some configurations only: below a `Condition`, a `When` or
        // `Otherwise` of a `Choose`, or a `Target` (run, or not, by the build).
        if parent & CONDITIONAL != 0 || condition || conditional_element(local) {
            flags |= CONDITIONAL;
        }
        let element = Element {
            start,
            at,
            depth: self.open.len(),
            in_item_group: parent & ITEM_GROUP != 0,
            in_condition: parent & CONDITIONAL != 0,
            empty,
        };
        if !empty {
            self.open.push(flags);
        }
        Ok(element)
    }
}

/// Whether the attributes of a start tag hold together: each well formed, its value one XML
/// allows (no `<`; only references to the entities XML predefines and to characters it
/// allows), no name given twice, whether the attribute is read or not, as a tree's parser
/// checks them. The names are compared here rather than by quick-xml, whose check keeps them
/// in a vector allocated for every tag; a tag has a few attributes, so comparing each with
/// those before it costs less.
///
/// Whether one of them is a `Condition` comes back.
fn attributes_hold(start: &quick_xml::events::BytesStart<'_>) -> Result<bool, String> {
    /// Names compared without a vector; a tag with more takes one.
    const ON_STACK: usize = 8;
    let mut seen: [&str; ON_STACK] = [""; ON_STACK];
    let mut more: Vec<&str> = Vec::new();
    let mut attributes = start.attributes();
    attributes.with_checks(false);
    let mut condition = false;
    for (count, attribute) in attributes.enumerate() {
        let attribute = attribute.map_err(|e| e.to_string())?;
        condition |= attribute.key.local_name().into_inner() == "Condition";
        let key = attribute.key.into_inner();
        let raw = attribute.value.as_bytes();
        if memchr::memchr(b'<', raw).is_some() {
            return Err(format!(
                "the value of {} holds a `<`, which XML does not allow",
                clip(key)
            ));
        }
        if memchr::memchr(b'&', raw).is_some() {
            value(&attribute, key)?;
        }
        let before = seen[..count.min(ON_STACK)].iter().chain(&more);
        if before.clone().any(|k| *k == key) {
            return Err(format!("the attribute {} is given twice", clip(key)));
        }
        match seen.get_mut(count) {
            Some(slot) => *slot = key,
            None => more.push(key),
        }
    }
    Ok(condition)
}

/// The text an entity reference in text stands for: one XML predefines, or a reference to a
/// character XML allows; `None` for anything else.
fn reference_text(reference: &quick_xml::events::BytesRef<'_>) -> Option<String> {
    match reference.resolve_char_ref() {
        Ok(Some(c)) => xml_char(c).then(|| c.to_string()),
        Ok(None) => quick_xml::escape::resolve_predefined_entity(reference).map(str::to_owned),
        Err(_) => None,
    }
}

/// A path, properties expanded, joined to `base` (the project's folder for items, as MSBuild
/// does even in an imported file; the file's own folder for imports) and normalised.
fn expanded(raw: &str, dirs: &Dirs<'_>, base: &str) -> Result<String, String> {
    joined(raw, dirs, base, false).map(|(path, _)| path)
}

/// An item's path and whether it is a wildcard: as [`expanded`], and, when it holds no
/// wildcard, MSBuild's escapes taken back before it is joined and normalised (`%25` is `%`,
/// `%2A` a `*` that is no wildcard; [`paths::unescape`]).
fn item_path(raw: &str, dirs: &Dirs<'_>, base: &str) -> Result<(String, bool), String> {
    joined(raw, dirs, base, true)
}

/// `raw` with its properties expanded (escapes taken back when `unescape` and it holds no
/// wildcard), joined to `base` and normalised; and whether it holds a wildcard.
fn joined(
    raw: &str,
    dirs: &Dirs<'_>,
    base: &str,
    unescape: bool,
) -> Result<(String, bool), String> {
    let text = paths::expand(raw, dirs).map_err(|Unexpanded::Property(name)| {
        format!("`{}` uses {}, which ctx does not expand", clip(raw), clip(&name))
    })?;
    let wildcard = paths::has_wildcard(&text);
    let text = if !unescape || wildcard || !text.contains('%') {
        text
    } else {
        std::borrow::Cow::Owned(paths::unescape(text.into_owned()))
    };
    // `\\server\share\x.cpp` names a network share: as a path here it would be
    // `/server/share/x.cpp`, a folder of this machine the project never named.
    if text.trim_start().starts_with(r"\\") || text.trim_start().starts_with("//") {
        return Err(format!(
            "`{}` is a UNC path (a network share), which ctx does not read",
            clip(raw)
        ));
    }
    let path = paths::absolute(base, &text).ok_or_else(|| format!("`{}` is empty", clip(raw)))?;
    Ok((path, wildcard))
}

/// The parts of an `Include` list (`a.c;b.c`).
fn split(list: &str) -> impl Iterator<Item = &str> {
    list.split(';').map(str::trim).filter(|p| !p.is_empty())
}

/// An attribute by local name, whatever its namespace.
fn attribute<'a>(node: &roxmltree::Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.attributes().find(|a| a.name() == name).map(|a| a.value())
}

fn parse_xml(text: &str) -> Result<roxmltree::Document<'_>, (u32, String)> {
    let options = roxmltree::ParsingOptions { allow_dtd: false, ..Default::default() };
    roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| (e.pos().row, clip(&e.to_string())))
}

/// The line of a byte offset, from the offsets of the line ends found once (roxmltree's own
/// `text_pos_at` scans from the start each time).
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Lines {
        Lines(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i).collect())
    }

    fn of(&self, offset: usize) -> u32 {
        line_no(self.0.partition_point(|&end| end < offset))
    }
}

fn line_no(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The tree parser the stream parser is held to (roxmltree, every element a node).
    fn tree_parse_project(text: &str, dirs: &Dirs<'_>) -> Result<Items, (u32, String)> {
        let doc = parse_xml(text)?;
        let lines = Lines::new(text);
        let root = doc.root_element();
        let sdk = attribute(&root, "Sdk").is_some()
            || root.children().any(|n| n.has_tag_name("Sdk") || is_sdk_import(&n));
        let mut items = Gather::default();
        let mut implicit = true;
        let legacy = root.has_tag_name(super::LEGACY_ROOT);
        for node in root.descendants().filter(roxmltree::Node::is_element) {
            let name = node.tag_name().name();
            let line = lines.of(node.range().start);
            if legacy {
                if name == "File" {
                    let path = attribute(&node, "RelativePath").map(Cow::Borrowed);
                    super::legacy_file(&mut items, path, line, dirs);
                }
                continue;
            }
            if name == "Import" {
                let project = attribute(&node, "Project").unwrap_or_default();
                if super::shared_items(project) {
                    match expanded(project, dirs, dirs.this_file) {
                        Ok(path) => items.import(path, line),
                        Err(why) => items.warn(line, format!("import skipped: {why}")),
                    }
                }
                continue;
            }
            let parent = node.parent_element();
            let in_condition =
                node.ancestors().skip(1).filter(roxmltree::Node::is_element).any(|a| {
                    attribute(&a, "Condition").is_some()
                        || super::conditional_element(a.tag_name().name())
                });
            let conditional = in_condition || attribute(&node, "Condition").is_some();
            if name == "EnableDefaultCompileItems" || name == "EnableDefaultItems" {
                implicit &= conditional
                    || !node.text().is_some_and(|t| t.trim().eq_ignore_ascii_case("false"));
                continue;
            }
            let in_item_group = parent.is_some_and(|p| p.has_tag_name("ItemGroup"));
            let Some(kind) = in_item_group.then(|| Kind::of(name)).flatten() else { continue };
            let borrowed = |name: &str| attribute(&node, name).map(Cow::Borrowed);
            let attributes = Attributes {
                remove: borrowed("Remove").filter(|_| !conditional),
                include: borrowed("Include"),
                exclude: borrowed("Exclude"),
            };
            super::item(&mut items, name, kind, &attributes, line, dirs);
        }
        Ok(items.finish(super::implicit(sdk && implicit, dirs)))
    }

    /// `<Import Project="Sdk.props" Sdk="Microsoft.NET.Sdk" />`, the long form of an SDK project.
    fn is_sdk_import(node: &roxmltree::Node<'_, '_>) -> bool {
        node.has_tag_name("Import") && attribute(node, "Sdk").is_some()
    }

    const DIRS: Dirs<'static> =
        Dirs { solution: "/b", project: "/b/app", this_file: "/b/app", language: Language::CSharp };

    #[test]
    fn a_text_solution_lists_projects_but_not_folders() {
        let sln = "Microsoft Visual Studio Solution File, Format Version 12.00\n\
            Project(\"{2150E333-8FDC-42A3-9474-1A3956D46DE8}\") = \"Folder\", \"Folder\", \"{1}\"\n\
            EndProject\n\
            Project(\"{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}\") = \"App\", \"app\\App.vcxproj\", \"{2}\"\n\
            EndProject\n";
        let projects = parse_sln(sln, "/b");
        assert_eq!(
            projects,
            [ProjectRef { name: "App".into(), path: "/b/app/App.vcxproj".into(), line: 4 }]
        );
    }

    #[test]
    fn an_xml_solution_lists_projects_in_folders() {
        let slnx = "<Solution>\n  <Folder Name=\"/libs/\">\n    <Project Path=\"libs\\core\\Core.vcxproj\" />\n  </Folder>\n  <Project Path=\"app/App.csproj\" />\n</Solution>\n";
        let projects = parse_slnx(slnx, "/b").unwrap();
        assert_eq!(projects.len(), 2);
        assert_eq!(projects[0].path, "/b/libs/core/Core.vcxproj");
        assert_eq!(projects[0].name, "Core");
        assert_eq!(projects[0].line, 3);
        assert_eq!(projects[1].path, "/b/app/App.csproj");
    }

    #[test]
    fn msbuild_escapes_are_taken_back_in_a_file_but_not_in_a_wildcard() {
        let xml = r#"<Project><ItemGroup>
    <ClCompile Include="100%25.cpp;semi%3Bcolon.cpp" />
    <ClInclude Include="star%2A.h" />
    <ClCompile Include="gen\*.cpp" />
    <ClCompile Include="odd%zz.cpp" />
</ItemGroup></Project>"#;
        let items = parse_project(xml, &DIRS).unwrap();
        let entries: Vec<(&str, bool)> = items
            .entries
            .iter()
            .map(|e| match e {
                Entry::File { path, .. } => (path.as_str(), false),
                Entry::Pattern { pattern, .. } => (pattern.as_str(), true),
            })
            .collect();
        assert_eq!(
            entries,
            [
                ("/b/app/100%.cpp", false),
                ("/b/app/semi;colon.cpp", false),
                ("/b/app/star*.h", false),
                ("/b/app/gen/*.cpp", true),
                ("/b/app/odd%zz.cpp", false),
            ]
        );
    }

    #[test]
    fn a_unc_path_is_left_out_with_a_warning() {
        let xml = r#"<Project><ItemGroup>
    <ClCompile Include="\\server\share\x.cpp;//server/share/y.cpp;a.cpp" />
    <Import Project="\\server\share\s.vcxitems" />
</ItemGroup></Project>"#;
        let items = parse_project(xml, &DIRS).unwrap();
        assert_eq!(items.entries, [Entry::File { path: "/b/app/a.cpp".into(), line: 2 }]);
        assert!(items.imports.is_empty(), "{:?}", items.imports);
        assert_eq!(items.warnings.len(), 3, "{:?}", items.warnings);
        assert!(items.warnings.iter().all(|(_, w)| w.contains("UNC path")), "{:?}", items.warnings);
    }

    #[test]
    fn cpp_items_of_every_condition_are_taken() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?>
<Project DefaultTargets="Build" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <ItemGroup Label="ProjectConfigurations">
    <ProjectConfiguration Include="Debug|x64" />
  </ItemGroup>
  <ItemGroup Condition="'$(Configuration)'=='Debug'">
    <ClCompile Include="..\..\src\a.cpp" />
    <ClInclude Include="$(SolutionDir)..\src\a.h;$(ProjectDir)b.h" />
    <CustomBuild Include="C:\src\CMakeLists.txt" />
    <Natvis Include="x.natvis" />
    <None Include="$(IntDir)gen.c" />
    <ProjectReference Include="other.vcxproj" />
    <Filter Include="Source Files" />
  </ItemGroup>
  <Import Project="..\shared\Shared.vcxitems" Label="Shared" />
</Project>"#;
        let items = parse_project(xml, &DIRS).unwrap();
        let files: Vec<&str> = items
            .entries
            .iter()
            .map(|e| match e {
                Entry::File { path, .. } => path.as_str(),
                Entry::Pattern { pattern, .. } => pattern.as_str(),
            })
            .collect();
        assert_eq!(
            files,
            ["/src/a.cpp", "/src/a.h", "/b/app/b.h", "C:/src/CMakeLists.txt", "/b/app/x.natvis"]
        );
        assert_eq!(items.imports, [("/b/shared/Shared.vcxitems".to_owned(), 15)]);
        assert_eq!(items.warnings.len(), 1);
        assert_eq!(items.warnings[0].0, 11);
        assert!(items.warnings[0].1.contains("$(IntDir)"), "{:?}", items.warnings);
        assert!(matches!(items.entries[0], Entry::File { line: 7, .. }));
    }

    #[test]
    fn an_sdk_project_takes_every_cs_file_but_bin_obj_and_removed() {
        let xml = r#"<Project Sdk="Microsoft.NET.Sdk">
  <ItemGroup>
    <Compile Remove="Generated\**" />
    <Compile Include="..\shared\Common.cs" />
    <None Include="README.md" />
  </ItemGroup>
</Project>"#;
        let items = parse_project(xml, &DIRS).unwrap();
        let Entry::Pattern { pattern, exclude, .. } = &items.entries[0] else { panic!() };
        assert_eq!(pattern, "/b/app/**/*.cs");
        assert_eq!(
            items.excludes[*exclude],
            ["/b/app/bin/**", "/b/app/obj/**", "/b/app/Generated/**"]
        );
        assert_eq!(items.entries[1], Entry::File { path: "/b/shared/Common.cs".into(), line: 4 });
        assert_eq!(items.entries[2], Entry::File { path: "/b/app/README.md".into(), line: 5 });
    }

    /// The items of `xml` as the stream reads them, held to the tree's reading.
    fn read_both(xml: &str) -> Items {
        let items = parse_project(xml, &DIRS).unwrap();
        assert_eq!(Ok(items.clone()), tree_parse_project(xml, &DIRS));
        items
    }

    /// The paths an item list comes to, wildcards with their exclusions.
    fn listed(items: &Items) -> Vec<String> {
        items
            .entries
            .iter()
            .map(|e| match e {
                Entry::File { path, .. } => path.clone(),
                Entry::Pattern { pattern, exclude, .. } => {
                    format!("{pattern} - {:?}", items.excludes[*exclude])
                }
            })
            .collect()
    }

    #[test]
    fn a_remove_takes_out_earlier_items_of_its_own_type_only() {
        // The SDK way to move a file from `Compile` to `None`: it stays listed.
        let xml = r#"<Project><ItemGroup>
    <Compile Include="a.cs;b.cs;gen\*.cs" />
    <Content Include="a.cs" />
    <Compile Remove="a.cs;gen\old\**" />
    <None Include="a.cs" />
    <Compile Include="a.cs;late\*.cs" />
    <ClCompile Include="x.cpp" />
    <ClCompile Remove="x.cpp" />
    <ClInclude Include="x.cpp" />
</ItemGroup></Project>"#;
        assert_eq!(
            listed(&read_both(xml)),
            [
                "/b/app/b.cs",
                "/b/app/gen/*.cs - [\"/b/app/a.cs\", \"/b/app/gen/old/**\"]",
                "/b/app/a.cs",
                "/b/app/a.cs",
                "/b/app/a.cs",
                "/b/app/late/*.cs - []",
                "/b/app/x.cpp",
            ]
        );
    }

    /// Every configuration's items are taken (their union): a `Remove` or an
    /// `EnableDefaultCompileItems` under a condition holds in some configurations only, so it
    /// takes nothing out of the union.
    #[test]
    fn a_conditional_remove_or_default_items_switch_takes_nothing_out_of_the_union() {
        let xml = r#"<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup Condition="'$(X)'=='1'"><EnableDefaultCompileItems>false</EnableDefaultCompileItems></PropertyGroup>
  <ItemGroup>
    <ClCompile Include="posix.cpp;win.cpp" />
    <ClCompile Remove="posix.cpp" Condition="'$(Platform)'=='Win32'" />
  </ItemGroup>
  <ItemGroup Condition="'$(Platform)'=='Linux'"><ClCompile Remove="win.cpp" /></ItemGroup>
  <Choose><When Condition="'$(X)'=='1'"><ItemGroup><ClCompile Remove="posix.cpp" /></ItemGroup>
    <PropertyGroup><EnableDefaultCompileItems>false</EnableDefaultCompileItems></PropertyGroup></When>
    <Otherwise><ItemGroup><ClCompile Remove="win.cpp" /></ItemGroup></Otherwise></Choose>
  <Target Name="T"><ItemGroup><ClCompile Remove="posix.cpp" /></ItemGroup></Target>
  <ItemGroup><ClCompile Remove="gone.cpp" /><ClCompile Include="gone.cpp" /></ItemGroup>
</Project>"#;
        assert_eq!(
            listed(&read_both(xml)),
            [
                "/b/app/**/*.cs - [\"/b/app/bin/**\", \"/b/app/obj/**\"]",
                "/b/app/posix.cpp",
                "/b/app/win.cpp",
                "/b/app/gone.cpp",
            ]
        );
        let off = r#"<Project Sdk="x"><PropertyGroup><EnableDefaultItems Condition="'$(X)'=='1'">false</EnableDefaultItems></PropertyGroup></Project>"#;
        assert_eq!(parse_project(off, &DIRS).unwrap().entries.len(), 1, "the implicit pattern");
    }

    /// The items of C++/WinRT, resources and shaders, and of WPF, are files of the build; a
    /// C# shared project's `.projitems` is imported as a `.vcxitems` is.
    #[test]
    fn resource_idl_xaml_and_shader_items_are_files_and_projitems_are_imported() {
        let xml = r#"<Project><ItemGroup>
    <Midl Include="App.idl" /><ResourceCompile Include="app.rc" /><FxCompile Include="s.hlsl" />
    <Image Include="logo.png" /><Manifest Include="app.manifest" /><AppxManifest Include="Package.appxmanifest" />
    <Page Include="MainWindow.xaml" /><ApplicationDefinition Include="App.xaml" /><EmbeddedResource Include="R.resx" />
  </ItemGroup>
  <Import Project="..\Shared\Shared.projitems" Label="Shared" />
</Project>"#;
        let items = read_both(xml);
        assert_eq!(items.entries.len(), 9, "{:?}", listed(&items));
        assert_eq!(items.imports, [("/b/Shared/Shared.projitems".to_owned(), 6)]);
    }

    #[test]
    fn an_exclude_takes_out_of_its_own_include_only() {
        let xml = r#"<Project Sdk="Microsoft.NET.Sdk"><ItemGroup>
    <Compile Include="a.cs;b.cs;src\**\*.cs" Exclude="b.cs;src\test\**" />
    <None Include="b.cs" />
    <Compile Remove="obsolete\**" />
</ItemGroup></Project>"#;
        assert_eq!(
            listed(&read_both(xml)),
            [
                "/b/app/**/*.cs - [\"/b/app/bin/**\", \"/b/app/obj/**\", \"/b/app/obsolete/**\"]",
                "/b/app/a.cs",
                "/b/app/src/**/*.cs - [\"/b/app/b.cs\", \"/b/app/src/test/**\", \"/b/app/obsolete/**\"]",
                "/b/app/b.cs",
            ]
        );
    }

    #[test]
    fn an_sdk_project_without_default_items_lists_only_its_own() {
        let xml = r#"<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><EnableDefaultCompileItems>false</EnableDefaultCompileItems></PropertyGroup><ItemGroup><Compile Include="a.cs" /></ItemGroup></Project>"#;
        let items = parse_project(xml, &DIRS).unwrap();
        assert_eq!(items.entries, [Entry::File { path: "/b/app/a.cs".into(), line: 1 }]);
    }

    #[test]
    fn an_old_style_csproj_lists_its_items() {
        let xml = r#"<Project ToolsVersion="15.0" xmlns="http://schemas.microsoft.com/developer/msbuild/2003">
  <ItemGroup><Compile Include="Properties\AssemblyInfo.cs" /><Content Include="app.config" /></ItemGroup>
</Project>"#;
        let items = parse_project(xml, &DIRS).unwrap();
        assert_eq!(items.entries.len(), 2);
        assert_eq!(
            items.entries[0],
            Entry::File { path: "/b/app/Properties/AssemblyInfo.cs".into(), line: 2 }
        );
    }

    #[test]
    fn an_sdk_project_compiles_the_files_of_its_own_language_unnamed() {
        let xml = r#"<Project Sdk="Microsoft.NET.Sdk"><ItemGroup><None Include="a.txt" /></ItemGroup></Project>"#;
        let read = |language| {
            let dirs = Dirs { language, ..DIRS };
            let items = parse_project(xml, &dirs).unwrap();
            assert_eq!(Ok(items.clone()), tree_parse_project(xml, &dirs));
            listed(&items)
        };
        let patterns = |extension: &str| {
            vec![
                format!(r#"/b/app/**/*.{extension} - ["/b/app/bin/**", "/b/app/obj/**"]"#),
                "/b/app/a.txt".to_owned(),
            ]
        };
        assert_eq!(read(Language::CSharp), patterns("cs"));
        assert_eq!(read(Language::VisualBasic), patterns("vb"));
        // F# writes out its compile order; a C++ or other project compiles nothing unnamed.
        assert_eq!(read(Language::Other), ["/b/app/a.txt"]);
        assert_eq!(Language::of("/b/App.VBPROJ"), Language::VisualBasic);
        assert_eq!(Language::of("/b/App.fsproj"), Language::Other);
    }

    #[test]
    fn a_visual_studio_2008_project_lists_the_files_of_its_file_elements() {
        let xml = r#"<?xml version="1.0" encoding="Windows-1252"?>
<VisualStudioProject ProjectType="Visual C++" Version="9.00" Name="app">
  <Configurations><Configuration Name="Debug|Win32" /></Configurations>
  <Files>
    <Filter Name="Source Files" Filter="cpp;c">
      <File RelativePath=".\src\main.cpp">
        <FileConfiguration Name="Release|Win32" ExcludedFromBuild="true" />
      </File>
      <Filter Name="Detail"><File RelativePath="..\shared\util.c" /></Filter>
    </Filter>
    <File RelativePath="$(IntDir)\gen.c" />
    <File RelativePath="readme.txt"></File>
    <Files><ClCompile Include="not-msbuild.cpp" /></Files>
  </Files>
</VisualStudioProject>"#;
        let items = read_both(xml);
        // Excluded from one configuration is still built in another: the union keeps it.
        assert_eq!(
            listed(&items),
            ["/b/app/src/main.cpp", "/b/shared/util.c", "/b/app/readme.txt"]
        );
        assert_eq!(items.entries[0], Entry::File { path: "/b/app/src/main.cpp".into(), line: 6 });
        assert_eq!(items.warnings.len(), 1, "{:?}", items.warnings);
        assert!(items.warnings[0].1.contains("$(IntDir)"), "{:?}", items.warnings);
    }

    #[test]
    fn a_project_nested_two_hundred_thousand_deep_is_read_without_recursion() {
        // The stream keeps one flag per open element: no stack grows with the nesting.
        let depth = 200_000;
        let xml = format!(
            "<Project>{}<ItemGroup><ClCompile Include=\"a.c\"/></ItemGroup>{}</Project>",
            "<a>".repeat(depth),
            "</a>".repeat(depth)
        );
        let items = parse_project(&xml, &DIRS).unwrap();
        assert_eq!(items.entries, [Entry::File { path: "/b/app/a.c".into(), line: 1 }]);
        // Unclosed, or closed by another name: refused with the line.
        assert!(parse_project(&"<a>".repeat(depth), &DIRS).is_err());
        assert_eq!(parse_project("<Project>\n<a></b></Project>", &DIRS).map_err(|e| e.0), Err(2));
    }

    #[test]
    fn bad_xml_is_an_error_and_a_dtd_is_refused() {
        assert!(parse_project("<Project>", &DIRS).is_err());
        let dtd = "<!DOCTYPE p [<!ENTITY a \"aaaa\">]><Project/>";
        assert!(parse_project(dtd, &DIRS).is_err());
    }

    /// A value XML does not allow fails the document in any attribute, read or not, as a
    /// tree parser finds (the property test comparing the two found `Include="<![CDATA["`).
    #[test]
    fn an_attribute_value_xml_does_not_allow_fails_the_document_whatever_the_attribute() {
        // A `<` in a value, an entity XML does not define, a reference to a character it does
        // not allow, a bare `&`: refused by a tree's parser in any attribute, read or not.
        for value in ["<![CDATA[", "a<b", "&bogus;", "&#0;", "&#x1b;", "a & b", "&amp"] {
            for attr in ["Include", "Condition", "Other"] {
                let text = format!(
                    "<Project><ItemGroup><ClCompile {attr}=\"{value}\" /></ItemGroup></Project>"
                );
                assert!(tree_parse_project(&text, &DIRS).is_err(), "{text}");
                assert!(parse_project(&text, &DIRS).is_err(), "{text}");
            }
            let root = format!("<ClCompile Include=\"{value}\" />");
            assert!(parse_project(&root, &DIRS).is_err(), "{root}");
        }
        // What XML allows stays allowed.
        for value in ["a &amp; b", "&lt;x&gt;", "&#x41;", "a > b", "'q'"] {
            let text = format!(
                "<Project><ItemGroup><ClCompile Other=\"{value}\" /></ItemGroup></Project>"
            );
            assert!(tree_parse_project(&text, &DIRS).is_ok(), "{text}");
            assert!(parse_project(&text, &DIRS).is_ok(), "{text}");
        }
    }

    /// An attribute given twice on any element fails the document, as a tree parser finds,
    /// among a few attributes or past the ones compared without a vector; distinct names
    /// (a prefix makes another name) hold.
    #[test]
    fn an_attribute_given_twice_fails_the_document() {
        let tag =
            |attrs: &str| format!("<Project><ItemGroup><None {attrs}/></ItemGroup></Project>");
        let many: String = (0..12).map(|i| format!("a{i}=\"{i}\" ")).collect();
        for attrs in [
            "Include=\"a.c\" Include=\"b.c\"".to_owned(),
            "Condition=\"1\" Include=\"a.c\" Condition=\"2\"".to_owned(),
            format!("{many}a3=\"again\""),
            format!("{many}a11=\"again\""),
            format!("{many}b=\"1\" b=\"2\""),
        ] {
            let text = tag(&attrs);
            assert!(parse_project(&text, &DIRS).is_err(), "{attrs}");
            assert!(tree_parse_project(&text, &DIRS).is_err(), "{attrs}");
        }
        for attrs in [many.clone(), "Include=\"a.c\" x:Include=\"b.c\" xmlns:x=\"u\"".to_owned()] {
            let text = tag(&attrs);
            assert_eq!(
                parse_project(&text, &DIRS).is_ok(),
                tree_parse_project(&text, &DIRS).is_ok(),
                "{attrs}"
            );
            assert!(parse_project(&text, &DIRS).is_ok(), "{attrs}");
        }
    }

    /// Text made of the pieces that solutions and projects are made of, hostile ones included
    /// (properties, wildcards, `..`, separators, entities, control characters, long runs).
    fn pieces() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "<Project>",
            "</Project>",
            "<Project Sdk=\"x\">",
            "<ItemGroup>",
            "</ItemGroup>",
            "<ClCompile Include=\"",
            "<Compile Remove=\"",
            "<Compile Include=\"",
            "<ClCompile Remove=\"",
            "\" Exclude=\"",
            "\" Condition=\"",
            "<ItemGroup Condition=\"x\">",
            "<PropertyGroup Condition=\"x\">",
            "<When Condition=\"x\">",
            "</When>",
            "<Target>",
            "</PropertyGroup>",
            "<EnableDefaultCompileItems>",
            "<None Include=\"",
            "\" />",
            "\">",
            "<Import Project=\"",
            ".vcxitems",
            "<VisualStudioProject>",
            "</VisualStudioProject>",
            "<File RelativePath=\"",
            "<Solution>",
            "<Folder>",
            "<Project Path=\"",
            "Project(\"{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}\") = \"",
            "\", \"",
            "\n",
            "$(SolutionDir)",
            "$(ProjectDir)",
            "$(MSBuildThisFileDirectory)",
            "$(",
            "%(",
            "@(",
            ")",
            "..\\",
            "../",
            "\\",
            "/",
            "*",
            "**",
            "?",
            ";",
            "{",
            "}",
            "[",
            "C:\\",
            "a.cpp",
            "&amp;",
            "&#0;",
            "&#x1b;",
            "\u{1b}]0;x\u{7}",
            "\u{0}",
            "\u{202e}",
            "é",
            "<!--",
            "-->",
            "<![CDATA[",
            "]]>",
            "<!DOCTYPE p>",
            "\r\n",
            "EnableDefaultItems",
            "false",
        ]);
        let long = prop::collection::vec(
            prop::sample::select(vec!["a", "..\\", "$(SolutionDir)", "*"]),
            0..400,
        )
        .prop_map(|parts| parts.concat());
        prop_oneof![
            prop::collection::vec(prop_oneof![piece.prop_map(str::to_owned), long], 0..80)
                .prop_map(|parts| parts.concat()),
            any::<String>(),
        ]
    }

    /// Every string a parse gives back, for bounds.
    fn strings(items: &Items) -> Vec<&str> {
        let mut out: Vec<&str> = items
            .entries
            .iter()
            .map(|e| match e {
                Entry::File { path, .. } | Entry::Pattern { pattern: path, .. } => path.as_str(),
            })
            .collect();
        out.extend(items.imports.iter().map(|(p, _)| p.as_str()));
        out.extend(items.warnings.iter().map(|(_, w)| w.as_str()));
        out.extend(items.excludes.iter().flatten().map(String::as_str));
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Any text: no panic, and what comes back is bounded by the text.
        #[test]
        fn any_project_text_parses_or_fails_within_bounds(text in pieces()) {
            let Ok(items) = parse_project(&text, &DIRS) else { return Ok(()) };
            let strings = strings(&items);
            // Each item needs an attribute of its own in the text; the SDK's implicit
            // pattern and its two exclusions come on top.
            prop_assert!(items.entries.len() + items.imports.len() + items.warnings.len() <= text.len() / 2 + 2);
            for s in strings {
                prop_assert!(s.len() <= 8 * text.len() + 600, "{} of {}", s.len(), text.len());
            }
        }

        /// The stream parser reads what the tree parser reads: the same items, imports,
        /// warnings and lines of a document the tree parser takes, and a refusal of one it
        /// refuses.
        #[test]
        fn the_stream_parser_reads_as_the_tree_parser(text in pieces()) {
            let stream = parse_project(&text, &DIRS);
            match tree_parse_project(&text, &DIRS) {
                Ok(tree) => prop_assert_eq!(stream, Ok(tree)),
                Err(_) => prop_assert!(stream.is_err(), "{:?} taken: {:?}", text, stream),
            }
        }

        #[test]
        fn any_solution_text_parses_or_fails_within_bounds(text in pieces()) {
            let projects = parse_sln(&text, "/b");
            prop_assert!(projects.len() <= text.lines().count());
            for p in &projects {
                prop_assert!(p.path.len() <= text.len() + 3 && p.name.len() <= text.len());
                prop_assert!(p.path.starts_with('/') || p.path.as_bytes().get(1) == Some(&b':'));
            }
            if let Ok(projects) = parse_slnx(&text, "/b") {
                prop_assert!(projects.len() <= text.len() / 8 + 1);
                for p in &projects {
                    prop_assert!(p.path.len() <= text.len() + 3 && p.name.len() <= text.len());
                }
            }
        }
    }
}
