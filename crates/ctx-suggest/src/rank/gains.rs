//! The prompt's bonuses: files that define an identifier of the prompt, whose path it
//! writes, or that a word of it names gain a share of the best text score.

use super::{Board, Weights};
use crate::classify::FileClass;
use crate::index::{Index, file_name_key_into};
use crate::query::Query;

/// A bonus of the prompt: each of its files gains `weight × best × share`, where `best` is
/// the best text score.
pub(super) struct Gain {
    pub(super) files: Vec<usize>,
    weight: f64,
    share: f64,
    why: Why,
}

/// What a bonus is for.
enum Why {
    /// A file defines an identifier of the prompt.
    Defines(String),
    /// A file's path is written in the prompt.
    Path(String),
    /// A file is named by a word of the prompt.
    Named(String),
}

/// The bonuses of the prompt, in the order they are given: identifiers, paths, names.
pub(super) fn gains(index: &Index, query: &Query, w: &Weights) -> Vec<Gain> {
    let mut gains = identifier_gains(index, query, w);
    path_gains(index, query, w, &mut gains);
    name_gains(index, query, w, &mut gains);
    gains
}

/// Gives the bonuses, `best` being the best text score.
pub(super) fn apply_gains(gains: &[Gain], best: f64, explain: bool, board: &mut Board) {
    for g in gains {
        let gain = g.weight * best;
        for &i in &g.files {
            let s = board.get(i);
            s.score += gain * g.share;
            if explain {
                s.why.push(match &g.why {
                    Why::Defines(name) => format!("defines `{name}` (+{:.2})", gain * g.share),
                    Why::Path(p) => format!("path mentioned: {p}"),
                    Why::Named(name) => format!("named `{name}` (+{:.2})", gain * g.share),
                });
            }
        }
    }
}

/// Files that define an identifier written in the prompt gain, the more
/// so the fewer files define it.
fn identifier_gains(index: &Index, query: &Query, w: &Weights) -> Vec<Gain> {
    if w.ident <= 0.0 {
        return Vec::new();
    }
    // In the prompt's order, so that explanations come out the same every time.
    let mut wanted: Vec<(u32, f64, &str)> = Vec::new();
    let names: Vec<&str> = query.idents.iter().map(|(i, _)| i.as_str()).collect();
    for ((ident, weight), sym) in query.idents.iter().zip(index.symbol_ids(&names)) {
        if let Some(sym) = sym
            && !wanted.iter().any(|(s, _, _)| *s == sym)
        {
            wanted.push((sym, *weight, ident));
        }
    }
    let mut gains = Vec::new();
    for (sym, weight, name) in wanted {
        let files = index.definers(sym);
        if files.len() > 20 {
            continue;
        }
        let share = weight / (files.len() as f64).sqrt();
        let files: Vec<usize> = files.map(|i| i as usize).collect();
        gains.push(Gain { files, weight: w.ident, share, why: Why::Defines(name.to_owned()) });
    }
    gains
}

/// Files whose path the prompt names (as a whole or as a suffix) gain.
fn path_gains(index: &Index, query: &Query, w: &Weights, gains: &mut Vec<Gain>) {
    let files = index.files();
    for p in &query.paths {
        let (suffix, prefix, inner) = (format!("/{p}"), format!("{p}/"), format!("/{p}/"));
        let matching: Vec<usize> = files
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.class != FileClass::LeftOut
                    && (f.path == *p
                        || f.path.ends_with(&suffix)
                        || f.path.starts_with(&prefix)
                        || f.path.contains(&inner))
            })
            .map(|(i, _)| i)
            .collect();
        if matching.len() <= 50 {
            gains.push(spread(matching, w.path, Why::Path(p.clone())));
        }
    }
}

/// A bonus shared among the files of `matching`, each getting `1 / √n` of it (so a name
/// that many files match counts less for each).
fn spread(matching: Vec<usize>, weight: f64, why: Why) -> Gain {
    let share = 1.0 / (matching.len().max(1) as f64).sqrt();
    Gain { files: matching, weight, share, why }
}

/// Files named by a word of the prompt gain, the more so the fewer files
/// share the name.
fn name_gains(index: &Index, query: &Query, w: &Weights, gains: &mut Vec<Gain>) {
    let files = index.files();
    if w.name <= 0.0 || query.names.is_empty() {
        return;
    }
    // The files of each name, in file order: from the files by name kept with the index, else
    // each file's name made in one buffer.
    let named: Vec<Vec<usize>> = match index.file_keys() {
        Some(keys) => query.names.iter().map(|name| keys.named(files, name)).collect(),
        None => {
            let mut named: Vec<Vec<usize>> = vec![Vec::new(); query.names.len()];
            let mut key = String::new();
            for (i, f) in files.iter().enumerate() {
                if f.class == FileClass::LeftOut {
                    continue;
                }
                key.clear();
                file_name_key_into(&f.path, &mut key);
                for (k, name) in query.names.iter().enumerate() {
                    if key == *name {
                        named[k].push(i);
                    }
                }
            }
            named
        }
    };
    for (name, matching) in query.names.iter().zip(named) {
        if matching.len() <= 12 {
            gains.push(spread(matching, w.name, Why::Named(name.clone())));
        }
    }
}
