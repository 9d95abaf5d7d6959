//! `ctx index`: build or update the suggestion index of the root and print what it holds.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use ctx::{Format, Mode};

use crate::cli::IndexArgs;
use crate::settings::Settings;

/// `ctx index [--format text|json]`: its work is the stored index, so a cache folder that
/// cannot hold it is an error (exit status 2).
pub(crate) fn run(settings: &Settings, _args: &IndexArgs) -> anyhow::Result<ExitCode> {
    let json = settings.json_or_text("index", false)?;
    let cache = settings.cache_dir()?;
    let ctx = settings
        .ranking_context(Mode::Append, Format::Xml)?
        .with_index_store(cache)
        .with_context(|| format!("cannot open the cache {}", cache.display()))?;
    let root = ctx.sandbox().root_path(ctx.sandbox().workspace().root()).as_str().to_owned();
    // A running index service keeps the index current and stored: its figures are the answer.
    #[cfg(unix)]
    if let Some(status) = crate::service::ask::status(settings, &ctx) {
        let figures = Figures {
            files: status.files,
            indexed: 0,
            reused: status.files,
            removed: 0,
            rebuilt_corrupt: false,
            truncated: status.truncated,
            terms: status.terms,
            symbols: status.symbols,
            definitions: status.definitions,
            symbol_source: status.symbol_source,
            data_files: status.data_files,
            classes: status.classes,
            bytes: status.bytes,
            elapsed: Duration::ZERO,
            service: true,
        };
        print(&figures, &root, cache, json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let show = settings.style.stderr_tty && !settings.quiet;
    let progress = crate::progress::Progress::start(
        show,
        settings.style.color,
        "indexing the workspace".to_owned(),
    );
    // One walk: the counts are taken from the index the update left.
    let (stats, ((terms, symbols, definitions), classes, taken)) =
        ctx.update_index_with(|index| {
            let counts = (index.term_count(), index.symbol_count(), index.definition_count());
            (counts, index.class_counts(), index.settings())
        })?;
    drop(progress);
    let figures = Figures {
        files: stats.files,
        indexed: stats.indexed,
        reused: stats.reused,
        removed: stats.removed,
        rebuilt_corrupt: stats.rebuilt_corrupt,
        truncated: stats.truncated,
        terms,
        symbols,
        definitions,
        symbol_source: taken.symbols.name().to_owned(),
        data_files: taken.data_files,
        classes: classes.iter().map(|(c, n)| (c.name().to_owned(), *n)).collect(),
        bytes: stats.bytes,
        elapsed: stats.elapsed,
        service: false,
    };
    print(&figures, &root, cache, json)?;
    // As in `ctx suggest`: the process ends, so the index is not freed piece by piece.
    std::mem::forget(ctx);
    Ok(ExitCode::SUCCESS)
}

/// What `ctx index` reports.
struct Figures {
    files: usize,
    indexed: usize,
    reused: usize,
    removed: usize,
    rebuilt_corrupt: bool,
    truncated: bool,
    terms: usize,
    symbols: usize,
    definitions: usize,
    symbol_source: String,
    data_files: bool,
    classes: Vec<(String, usize)>,
    bytes: u64,
    elapsed: Duration,
    /// Whether the index service answered (it took every change in; nothing was read).
    service: bool,
}

fn print(f: &Figures, root: &str, cache: &Path, json: bool) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    if json {
        let classes: serde_json::Map<String, serde_json::Value> =
            f.classes.iter().map(|(c, n)| (c.clone(), (*n).into())).collect();
        let value = serde_json::json!({
            "root": root,
            "cache_dir": cache.display().to_string(),
            "files": f.files,
            "indexed": f.indexed,
            "reused": f.reused,
            "removed": f.removed,
            "rebuilt_corrupt": f.rebuilt_corrupt,
            "truncated": f.truncated,
            "terms": f.terms,
            "symbols": f.symbols,
            "definitions": f.definitions,
            "symbol_source": f.symbol_source,
            "data_files": f.data_files,
            "classes": classes,
            "bytes": f.bytes,
            "elapsed_ms": (f.elapsed.as_secs_f64() * 1e5).round() / 100.0,
            "service": f.service,
        });
        // Serialised first, so that a closed pipe is an I/O error (success), not a JSON one.
        let text = serde_json::to_string_pretty(&value)?;
        writeln!(out, "{text}")?;
    } else {
        let classes: Vec<String> = f.classes.iter().map(|(c, n)| format!("{n} {c}")).collect();
        writeln!(
            out,
            "{} files ({}), {} read, {} unchanged, {} removed{}",
            f.files,
            classes.join(", "),
            f.indexed,
            f.reused,
            f.removed,
            if f.rebuilt_corrupt { ", rebuilt (the stored index was corrupt)" } else { "" },
        )?;
        if f.truncated {
            writeln!(out, "the walk stopped at the entry limit: some files are left out")?;
        }
        writeln!(out, "{} terms, {} symbols, {} definitions", f.terms, f.symbols, f.definitions)?;
        if f.service {
            writeln!(
                out,
                "{} bytes in {}, kept current by the index service",
                f.bytes,
                cache.display()
            )?;
        } else {
            writeln!(
                out,
                "{} bytes in {}, {:.1} ms",
                f.bytes,
                cache.display(),
                f.elapsed.as_secs_f64() * 1000.0
            )?;
        }
    }
    out.flush()?;
    Ok(())
}
