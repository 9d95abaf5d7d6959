//! Scores the ranking on the development set in one process, for deciding
//! the weights on the whole set (never on single queries).
//!
//! `cargo run --release -p ctx-suggest --example tune -- DATASET TREES [NAME=VALUE…]`
//! where TREES holds `OWNER+NAME/PARENT` trees (as `eval.py` builds them)
//! and each `NAME=VALUE` overrides one weight (`graph=0.3`, `field.0=2`);
//! several values separated by `,` run one line each. `TUNE_PROMPT_FIELD=prompt_noscope`
//! ranks with the prompts without their conventional-commit prefix; `TUNE_SYMBOLS=tree-sitter`
//! takes the symbols from tree-sitter instead of the scanner. `TUNE_COMPARE_LISTS=LIMIT`
//! instead ranks every prompt with `--explain` and that limit twice, from every file's postings
//! and then from the postings by term (where the ranking stops early), and counts the answers
//! that differ.
#![allow(clippy::disallowed_methods, clippy::print_stdout, missing_docs)]

use std::collections::{BTreeMap, HashMap};

use ctx_suggest::{Index, Options, SymbolSource, Weights};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dataset: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&args[0]).expect("dataset")).expect("json");
    let trees = std::path::PathBuf::from(&args[1]);
    let grid: Vec<(String, Vec<f64>)> = args[2..]
        .iter()
        .map(|a| {
            let (k, v) = a.split_once('=').expect("NAME=VALUE");
            (k.to_owned(), v.split(',').map(|x| x.parse().expect("number")).collect())
        })
        .collect();
    let queries = dataset["queries"].as_array().expect("queries");
    let field = std::env::var("TUNE_PROMPT_FIELD").unwrap_or_else(|_| "prompt".to_owned());
    let source = std::env::var("TUNE_SYMBOLS")
        .map_or(SymbolSource::Scan, |s| SymbolSource::from_name(&s).expect("scan or tree-sitter"));
    let mut indexes: HashMap<String, (ctx_fs::Sandbox, Index)> = HashMap::new();
    let started = std::time::Instant::now();
    for q in queries {
        let repo = q["repo"].as_str().unwrap().replace('/', "+");
        let parent = q["parent"].as_str().unwrap();
        let root = trees.join(&repo).join(parent);
        let key = root.to_string_lossy().into_owned();
        if let std::collections::hash_map::Entry::Vacant(slot) = indexes.entry(key) {
            let sandbox = ctx_fs::Sandbox::builder(slot.key().as_str())
                .open(cap_std::ambient_authority())
                .expect("sandbox");
            let (index, _) = Index::build_with(&sandbox, source).expect("index");
            slot.insert((sandbox, index));
        }
    }
    println!("indexed {} trees in {:.1}s", indexes.len(), started.elapsed().as_secs_f64());
    if let Ok(limit) = std::env::var("TUNE_COMPARE_LISTS") {
        let opts = Options::default().limit(limit.parse().expect("a limit")).explain(true);
        let answer = |q: &serde_json::Value| {
            let repo = q["repo"].as_str().unwrap().replace('/', "+");
            let root = trees.join(repo).join(q["parent"].as_str().unwrap());
            let (sandbox, index) = &indexes[root.to_string_lossy().as_ref()];
            index.suggest(sandbox, q[field.as_str()].as_str().unwrap(), &opts)
        };
        let whole: Vec<_> = queries.iter().map(answer).collect();
        indexes.values().for_each(|(_, index)| index.keep_term_lists());
        let started = std::time::Instant::now();
        let best: Vec<_> = queries.iter().map(answer).collect();
        let differ = whole.iter().zip(&best).filter(|(a, b)| a != b).count();
        let secs = started.elapsed().as_secs_f64();
        println!("{} prompts, {differ} answers differ ({secs:.2}s with the lists)", queries.len());
        return;
    }
    for weights in combinations(&grid) {
        let (label, w) = weights;
        let mut per_repo: BTreeMap<String, [f64; 6]> = BTreeMap::new();
        for q in queries {
            let repo = q["repo"].as_str().unwrap();
            let root = trees.join(repo.replace('/', "+")).join(q["parent"].as_str().unwrap());
            let (sandbox, index) = &indexes[root.to_string_lossy().as_ref()];
            let prompt = q[field.as_str()].as_str().unwrap();
            let found =
                index.suggest(sandbox, prompt, &Options::default().limit(10).weights(w.clone()));
            let gold: Vec<&str> =
                q["gold"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect();
            let ranked: Vec<&str> = found.iter().map(|s| s.path.as_str()).collect();
            let recall = |k: usize| {
                gold.iter().filter(|g| ranked.iter().take(k).any(|r| r == *g)).count() as f64
                    / gold.len() as f64
            };
            let mrr =
                ranked.iter().position(|r| gold.contains(r)).map_or(0.0, |i| 1.0 / (i + 1) as f64);
            let covered = gold
                .iter()
                .filter(|g| {
                    found.iter().any(|s| {
                        s.path == **g
                            && q["gold_lines"][**g].as_array().is_some_and(|hunks| {
                                hunks.iter().any(|h| {
                                    let a = h[0].as_i64().unwrap() - 2;
                                    let b = h[1].as_i64().unwrap() + 2;
                                    i64::from(s.lines.start) <= b && a <= i64::from(s.lines.end)
                                })
                            })
                    })
                })
                .count() as f64
                / gold.len() as f64;
            let short = repo.rsplit('/').next().unwrap().to_owned();
            for key in [short, "all".to_owned()] {
                let m = per_repo.entry(key).or_default();
                for (slot, v) in
                    m.iter_mut().zip([recall(1), recall(5), recall(10), mrr, covered, 1.0])
                {
                    *slot += v;
                }
            }
        }
        println!("== {label}");
        for (repo, m) in &per_repo {
            let n = m[5];
            println!(
                "{repo:8} n={n:3} R@1={:.3} R@5={:.3} R@10={:.3} MRR@10={:.3} lines@10={:.3}",
                m[0] / n,
                m[1] / n,
                m[2] / n,
                m[3] / n,
                m[4] / n
            );
        }
    }
}

/// Every combination of the grid's values, applied to the default weights.
fn combinations(grid: &[(String, Vec<f64>)]) -> Vec<(String, Weights)> {
    let mut out = vec![(String::from("default"), Weights::default())];
    for (name, values) in grid {
        let mut next = Vec::new();
        for (label, w) in &out {
            for v in values {
                let mut w = w.clone();
                set(&mut w, name, *v);
                let label = if label == "default" {
                    format!("{name}={v}")
                } else {
                    format!("{label} {name}={v}")
                };
                next.push((label, w));
            }
        }
        out = next;
    }
    out
}

fn set(w: &mut Weights, name: &str, v: f64) {
    match name.split_once('.') {
        Some(("field", i)) => w.field[i.parse::<usize>().unwrap()] = v,
        Some(("b", i)) => w.b[i.parse::<usize>().unwrap()] = v,
        Some(("demote", "test")) => w.demote.test = v,
        Some(("demote", "doc")) => w.demote.doc = v,
        Some(("demote", "other")) => w.demote.other = v,
        _ => match name {
            "k1" => w.k1 = v,
            "ident" => w.ident = v,
            "path" => w.path = v,
            "name" => w.name = v,
            "graph" => w.graph = v,
            "damping" => w.damping = v,
            "reverse" => w.reverse = v,
            _ => panic!("unknown weight {name}"),
        },
    }
}
