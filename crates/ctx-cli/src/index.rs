//! `ctx index`: build or update the suggestion index of the root and print what it holds.

use std::io::{self, Write};
use std::process::ExitCode;

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
    let mut out = io::stdout().lock();
    if json {
        let classes: serde_json::Map<String, serde_json::Value> =
            classes.iter().map(|(c, n)| (c.name().to_owned(), (*n).into())).collect();
        let value = serde_json::json!({
            "root": ctx.sandbox().root_path(ctx.sandbox().workspace().root()).as_str(),
            "cache_dir": cache.display().to_string(),
            "files": stats.files,
            "indexed": stats.indexed,
            "reused": stats.reused,
            "removed": stats.removed,
            "rebuilt_corrupt": stats.rebuilt_corrupt,
            "truncated": stats.truncated,
            "terms": terms,
            "symbols": symbols,
            "definitions": definitions,
            "symbol_source": taken.symbols.name(),
            "data_files": taken.data_files,
            "classes": classes,
            "bytes": stats.bytes,
            "elapsed_ms": (stats.elapsed.as_secs_f64() * 1e5).round() / 100.0,
        });
        // Serialised first, so that a closed pipe is an I/O error (success), not a JSON one.
        let text = serde_json::to_string_pretty(&value)?;
        writeln!(out, "{text}")?;
    } else {
        let classes: Vec<String> =
            classes.iter().map(|(c, n)| format!("{n} {}", c.name())).collect();
        writeln!(
            out,
            "{} files ({}), {} read, {} unchanged, {} removed{}",
            stats.files,
            classes.join(", "),
            stats.indexed,
            stats.reused,
            stats.removed,
            if stats.rebuilt_corrupt { ", rebuilt (the stored index was corrupt)" } else { "" },
        )?;
        if stats.truncated {
            writeln!(out, "the walk stopped at the entry limit: some files are left out")?;
        }
        writeln!(out, "{terms} terms, {symbols} symbols, {definitions} definitions")?;
        writeln!(
            out,
            "{} bytes in {}, {:.1} ms",
            stats.bytes,
            cache.display(),
            stats.elapsed.as_secs_f64() * 1000.0
        )?;
    }
    out.flush()?;
    // As in `ctx suggest`: the process ends, so the index is not freed piece by piece.
    std::mem::forget(ctx);
    Ok(ExitCode::SUCCESS)
}
