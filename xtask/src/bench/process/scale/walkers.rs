//! Everything besides the suggestion index that walks a tree, run as users run it on each
//! scale tree: a mention of the whole tree (`ctx expand @./`), the `tree`, `glob` and `grep`
//! tools of a rule document, the completion of a mention being typed (`ctx complete`), and
//! the `**` wildcard of a build's project file (`ctx sources`, its cache cold each run).
//! For each: the median wall time with process start, the peak resident set, and the bytes
//! written, so that the rows of two sizes show whether time stays linear and output bounded.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::super::{Memory, grouped, median};
use crate::Result;
use crate::bench::{MIB, format_seconds};

/// The hidden folder of the tree that holds the benchmark's documents: hidden entries are
/// skipped by every walk, so the documents change neither the index nor the tools' output.
const DOCS: &str = ".bench";

/// A command that walks the tree: its name in the table and how it is run.
struct Walker {
    name: &'static str,
    args: Vec<String>,
    /// Whether each run starts from an empty cache folder (a cached result walks nothing).
    cold: bool,
}

/// The walkers, with the documents their tools need written into the tree's [`DOCS`] (a
/// tool's paths are relative to its document, so `..` is the tree).
fn walkers(tree: &Path) -> Result<Vec<Walker>> {
    fs::create_dir_all(tree.join(DOCS))?;
    let tool = |name: &'static str, call: &str| -> Result<Walker> {
        let doc = format!("{DOCS}/{name}.md");
        fs::write(tree.join(&doc), format!("{call}\n"))?;
        Ok(Walker { name, args: vec!["assemble".into(), doc], cold: false })
    };
    // A solution whose one project takes every `.rs` file of the tree by a `**` wildcard.
    let project = tree.join(DOCS).join("sources/p");
    fs::create_dir_all(&project)?;
    fs::write(
        project.join("p.vcxproj"),
        "<Project>\n<ItemGroup>\n  <ClCompile Include=\"..\\..\\..\\**\\*.rs\" />\n</ItemGroup>\n</Project>\n",
    )?;
    fs::write(
        tree.join(DOCS).join("sources/bench.sln"),
        "Project(\"{8BC9CEB8-8B4A-11D0-8D11-00A0C91BC942}\") = \"p\", \"p\\p.vcxproj\", \"{0}\"\nEndProject\n",
    )?;
    Ok(vec![
        Walker { name: "expand @./", args: vec!["expand".into(), "see @./".into()], cold: false },
        tool("tree", r#"@[tree{"uri":"..","depth":3}]"#)?,
        tool("glob", r#"@[glob{"pattern":"../**/*.rs"}]"#)?,
        tool("grep", r#"@[grep{"pattern":"configuration"}]"#)?,
        Walker { name: "complete", args: vec!["complete".into(), "mod0/part".into()], cold: false },
        Walker {
            name: "sources",
            args: vec!["--sln".into(), format!("{DOCS}/sources/bench.sln"), "sources".into()],
            cold: true,
        },
    ])
}

/// The figures of one walker on one tree.
pub(super) struct Walked {
    pub(super) name: &'static str,
    pub(super) files: usize,
    pub(super) seconds: f64,
    pub(super) peak: Option<u64>,
    pub(super) out_bytes: u64,
}

/// Runs every walker `runs` times on `tree` (`files` files), the output written to a file in
/// `data` to be measured.
pub(super) fn measure(
    ctx: &Path,
    tree: &Path,
    data: &Path,
    memory: &Memory,
    files: usize,
    runs: usize,
) -> Result<Vec<Walked>> {
    let cache = tree.with_extension("cache");
    let out_path = data.join("walker-out.txt");
    let mut rows = Vec::new();
    for walker in walkers(tree)? {
        let (mut times, mut peak, mut out_bytes) = (Vec::new(), None, 0);
        for _ in 0..runs {
            let mut cmd = Command::new(ctx);
            cmd.args(&walker.args).current_dir(tree);
            if walker.cold {
                let fresh = data.join("walker-cache");
                let _ = fs::remove_dir_all(&fresh);
                cmd.env("CTX_CACHE_DIR", fresh);
            } else {
                cmd.env("CTX_CACHE_DIR", &cache);
            }
            // A limit reached is a warning; only a crash or a refusal fails the row.
            let (time, rss) = memory.run_any_to(cmd, data, fs::File::create(&out_path)?)?;
            times.push(time);
            peak = peak.max(rss);
            out_bytes = fs::metadata(&out_path)?.len();
        }
        if out_bytes == 0 {
            return Err(format!(
                "`ctx {}` wrote nothing on {}",
                walker.args.join(" "),
                tree.display()
            )
            .into());
        }
        rows.push(Walked { name: walker.name, files, seconds: median(&times), peak, out_bytes });
    }
    let _ = fs::remove_file(&out_path);
    Ok(rows)
}

/// The rows as a Markdown table, each walker's time and output at the largest size beside
/// its smallest as a ratio.
pub(super) fn render(rows: &[Walked]) -> String {
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / MIB);
    let kib = |b: u64| format!("{:.1} KiB", b as f64 / 1024.0);
    let mut out = String::from(
        "| command | files | time | peak memory | output | time / smallest tree's |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in rows {
        let smallest = rows
            .iter()
            .filter(|o| o.name == r.name)
            .min_by_key(|o| o.files)
            .filter(|o| o.files < r.files);
        let ratio = smallest.map_or_else(
            || "-".to_owned(),
            |s| {
                format!(
                    "{:.1}x for {:.0}x the files",
                    r.seconds / s.seconds.max(1e-9),
                    r.files as f64 / s.files as f64
                )
            },
        );
        out.push_str(&format!(
            "| `ctx {}` | {} | {} | {} | {} | {ratio} |\n",
            r.name,
            grouped(r.files),
            format_seconds(r.seconds),
            r.peak.map_or_else(|| "-".to_owned(), mib),
            kib(r.out_bytes),
        ));
    }
    out
}
