//! `cargo xtask bench [FILTER]`: the divan benchmarks of every crate with a `benches/` directory,
//! passed through as they run, then one summary table of medians.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use crate::{Result, cargo, display};

pub(crate) fn run(root: &Path, filter: Option<&str>) -> Result {
    let packages = packages_with_benches(root)?;
    if packages.is_empty() {
        println!("no crate under crates/ has a benches/ directory");
        return Ok(());
    }
    let mut cmd = cargo(root);
    cmd.arg("bench");
    for package in &packages {
        cmd.args(["-p", package]);
    }
    cmd.arg("--benches");
    if let Some(filter) = filter {
        cmd.args(["--", filter]);
    }
    cmd.stdout(Stdio::piped());
    println!("$ {}", display(&cmd));
    let mut child = cmd.spawn().map_err(|err| format!("cannot run `{}`: {err}", display(&cmd)))?;
    let mut output = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            println!("{line}");
            output.push(line);
        }
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("`{}` failed: {status}", display(&cmd)).into());
    }
    let rows = parse_divan(&output);
    if !rows.is_empty() {
        println!("\nsummary (medians):");
        print!("{}", summary_table(&rows));
    }
    Ok(())
}

/// The package names of the crates under crates/ that have a `benches/` directory, sorted.
fn packages_with_benches(root: &Path) -> Result<Vec<String>> {
    let mut packages = Vec::new();
    for entry in fs::read_dir(root.join("crates"))? {
        let dir = entry?.path();
        if !dir.join("benches").is_dir() {
            continue;
        }
        let manifest = fs::read_to_string(dir.join("Cargo.toml"))?;
        match crate::tidy::package_name(&manifest) {
            Some(name) => packages.push(name),
            None => return Err(format!("no package name in {}/Cargo.toml", dir.display()).into()),
        }
    }
    packages.sort();
    Ok(packages)
}

/// One benchmark case of divan's output.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    /// `binary/function/argument`.
    name: String,
    median: String,
    /// The median of the counter line below the case (`1.2 GB/s`), if it has one.
    throughput: Option<String>,
}

/// Reads divan's tables: a header `NAME  fastest │ slowest │ median │ …` fixes the width of the
/// name column, whose tree (`├─ `, `│  `) gives each case's depth; a line with an empty name is
/// a counter line of the case above it.
fn parse_divan(lines: &[String]) -> Vec<Row> {
    const MEDIAN: usize = 2;
    let mut rows: Vec<Row> = Vec::new();
    let mut width = None;
    let mut path: Vec<String> = Vec::new();
    for line in lines {
        let chars: Vec<char> = line.chars().collect();
        if line.contains("fastest") && line.contains("median") && line.contains('│') {
            let at = line.find("fastest").unwrap_or(0);
            width = Some(line[..at].chars().count());
            path = vec![line[..at].trim().to_string()];
            continue;
        }
        let Some(width) = width else { continue };
        if line.trim().is_empty() || chars.len() <= width || !line.contains('│') {
            continue;
        }
        let name_part: String = chars[..width].iter().collect();
        let values: String = chars[width..].iter().collect();
        let columns: Vec<&str> = values.split('│').map(str::trim).collect();
        let unindented = name_part.trim_start_matches(TREE);
        let name = unindented.trim();
        let median = columns.get(MEDIAN).copied().unwrap_or("");
        if name.is_empty() {
            if let Some(row) = rows.last_mut().filter(|row| row.throughput.is_none())
                && !median.is_empty()
            {
                row.throughput = Some(median.to_string());
            }
            continue;
        }
        let depth = ((width - unindented.chars().count()) / 3).max(1);
        path.truncate(depth);
        path.push(name.to_string());
        if !median.is_empty() {
            rows.push(Row { name: path.join("/"), median: median.to_string(), throughput: None });
        }
    }
    rows
}

/// The characters divan draws its tree with: each level of depth takes three.
const TREE: [char; 5] = ['│', '├', '╰', '─', ' '];

/// The rows as an aligned table.
fn summary_table(rows: &[Row]) -> String {
    let name_width = rows.iter().map(|row| row.name.chars().count()).max().unwrap_or(0).max(9);
    let median_width = rows.iter().map(|row| row.median.chars().count()).max().unwrap_or(0).max(6);
    let mut table =
        format!("{:<name_width$}  {:>median_width$}  throughput\n", "benchmark", "median");
    for row in rows {
        let throughput = row.throughput.as_deref().unwrap_or("-");
        table.push_str(&format!(
            "{:<name_width$}  {:>median_width$}  {throughput}\n",
            row.name, row.median
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::{Row, parse_divan, summary_table};

    const OUTPUT: &str = "\
Timer precision: 20 ns
scan         fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ memchr                  │               │               │               │         │
│  ├─ dense  24.5 µs       │ 81.73 µs      │ 24.71 µs      │ 26.73 µs      │ 100     │ 100
│  │         42.78 GB/s    │ 12.82 GB/s    │ 42.43 GB/s    │ 39.22 GB/s    │         │
│  ╰─ prose  408.8 µs      │ 795 µs        │ 428.6 µs      │ 449.9 µs      │ 100     │ 100
│            41.03 GB/s    │ 21.1 GB/s     │ 39.13 GB/s    │ 37.28 GB/s    │         │
╰─ scan                    │               │               │               │         │
   ╰─ prose  2.054 ms      │ 6.186 ms      │ 2.114 ms      │ 2.203 ms      │ 100     │ 100
             8.164 GB/s    │ 2.711 GB/s    │ 7.934 GB/s    │ 7.614 GB/s    │         │

     Running benches/read.rs (target/release/deps/read-1646630fd029fd65)
read         fastest       │ slowest       │ median        │ mean          │ samples │ iters
╰─ small     1.5 µs        │ 2 µs          │ 1.6 µs        │ 1.7 µs        │ 100     │ 100
";

    fn row(name: &str, median: &str, throughput: Option<&str>) -> Row {
        Row {
            name: name.to_string(),
            median: median.to_string(),
            throughput: throughput.map(str::to_string),
        }
    }

    #[test]
    fn divan_tables() {
        let lines: Vec<String> = OUTPUT.lines().map(str::to_string).collect();
        let rows = parse_divan(&lines);
        assert_eq!(
            rows,
            [
                row("scan/memchr/dense", "24.71 µs", Some("42.43 GB/s")),
                row("scan/memchr/prose", "428.6 µs", Some("39.13 GB/s")),
                row("scan/scan/prose", "2.114 ms", Some("7.934 GB/s")),
                row("read/small", "1.6 µs", None),
            ]
        );
        assert_eq!(
            summary_table(&rows[2..]),
            "\
benchmark          median  throughput
scan/scan/prose  2.114 ms  7.934 GB/s
read/small         1.6 µs  -
"
        );
    }
}
