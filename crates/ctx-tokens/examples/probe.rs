//! The counter alone: reads every UTF-8 file under a folder (at most 1 MiB each), then counts
//! them one after another on one thread, a few rounds, and prints each round's counting time
//! (the thread's CPU time where the kernel gives it) and the median in MB/s; with no rounds
//! (`0`), counts them once as a directory expansion does, in batches of 256 files on every core
//! (`count_many`), for the process's CPU time to be read from outside (`/usr/bin/time`).
//!
//! `cargo run --release -p ctx-tokens --example probe -- FOLDER [ROUNDS]`

#![allow(clippy::disallowed_methods)] // The probe reads its text from a folder given to it.
#![allow(clippy::print_stdout)] // It prints what it measured.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("a folder to read"));
    let rounds: usize = args.next().map_or(5, |r| r.parse().expect("a number of rounds"));
    let mut paths = Vec::new();
    collect(&dir, &mut paths);
    paths.sort();
    let texts: Vec<String> = paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter(|t| t.len() <= 1 << 20)
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    if rounds == 0 {
        // One cold pass as a directory expansion counts it: batches of 256 files, each
        // counted on every core (`count_many`); the process's CPU time is the measure.
        let (wall, mut tokens) = (Instant::now(), 0);
        for batch in texts.chunks(256) {
            tokens += ctx_tokens::count_many(batch).into_iter().sum::<usize>();
        }
        println!("{tokens} tokens in batches: {:.1} ms", wall.elapsed().as_secs_f64() * 1e3);
        return;
    }
    // A first count lays out the tables and warms the thread's state: timed apart, since a
    // process that counts once counts cold.
    let (cpu, wall) = (thread_cpu(), Instant::now());
    let tokens: usize = texts.iter().map(|t| ctx_tokens::count(t)).sum();
    let cold = thread_cpu().zip(cpu).map_or(wall.elapsed(), |(after, before)| after - before);
    println!("cold {:.1} ms", cold.as_secs_f64() * 1e3);
    let mut times = Vec::new();
    for _ in 0..rounds {
        let (cpu, wall) = (thread_cpu(), Instant::now());
        let n: usize = texts.iter().map(|t| ctx_tokens::count(std::hint::black_box(t))).sum();
        assert_eq!(n, tokens);
        let took = thread_cpu().zip(cpu).map_or(wall.elapsed(), |(after, before)| after - before);
        println!("{:.1} ms", took.as_secs_f64() * 1e3);
        times.push(took);
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "{} files, {bytes} bytes, {tokens} tokens: cold {:.1} ms, warm median {:.1} ms, {:.1} MB/s",
        texts.len(),
        cold.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3,
        bytes as f64 / median.as_secs_f64() / 1e6
    );
}

/// The calling thread's CPU time so far, from the kernel's accounting.
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect(&path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}
