//! What the tools of one run may spend (issue of bounded runs, assembly.md §4): regular
//! expressions compiled, bytes scanned, and walks shared between calls; and the warnings tools
//! raise about cuts they made (`W_LIMIT`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ctx_fs::{Location, Sandbox, Walk};
use ctx_syntax::Code;
use regex_automata::meta::{Config, Regex};

use crate::tool_error::ToolError;

/// Largest compiled form of one pattern, for each of its engines.
const PATTERN_LIMIT: usize = 1 << 20;

/// Most distinct patterns one run compiles while the regex budget is on. Each compiled pattern
/// also holds a pool of search caches that its `memory_usage` leaves out (a few KiB), so many
/// small patterns would pass the byte budget's intent without passing the budget itself.
const MAX_PATTERNS: usize = 4096;

/// Time the searches of one run may take together: a pattern whose automaton the lazy DFA
/// cannot hold (`[ab]*a[ab]{3000}c`) searches at a few kilobytes a second, which the byte
/// budget alone would let run for hours.
pub(crate) const MAX_SEARCH_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// The directory and glob walks of one run, its mentions' and its tools' alike, may together
/// look at this many times what one walk may look at ([`ctx_fs::COUNT_PAST_LIMIT`] times its
/// entry limit): a line of distinct globs, or of tool calls, cannot multiply the cost of one
/// walk without end.
pub(crate) const RUN_WALKS: usize = 10;

/// A run's tool budget. Shared by every tool call of one assembly.
#[derive(Debug)]
pub struct ToolBudget {
    max_scan_bytes: u64,
    scanned: AtomicU64,
    /// Nanoseconds spent searching so far.
    searching: AtomicU64,
    max_regex_bytes: usize,
    regexes: Mutex<Regexes>,
    walks: Mutex<HashMap<Location, Arc<Walk>>>,
    /// Entries the run's walks have looked at, mentions' and tools' alike.
    looked: std::sync::atomic::AtomicUsize,
    warnings: Mutex<Vec<(Code, String)>>,
}

#[derive(Debug, Default)]
struct Regexes {
    compiled: HashMap<String, Result<Arc<Regex>, String>>,
    /// Memory the compiled patterns hold.
    spent: usize,
}

impl ToolBudget {
    /// A budget of `max_scan_bytes` bytes that tools may read and search, and `max_regex_bytes`
    /// bytes of compiled regular expressions (0: no limit for either).
    pub fn new(max_scan_bytes: u64, max_regex_bytes: usize) -> ToolBudget {
        ToolBudget {
            max_scan_bytes,
            scanned: AtomicU64::new(0),
            searching: AtomicU64::new(0),
            max_regex_bytes,
            regexes: Mutex::default(),
            walks: Mutex::default(),
            looked: std::sync::atomic::AtomicUsize::new(0),
            warnings: Mutex::default(),
        }
    }

    /// Whether the run's walks may look at more entries (ten times what one walk
    /// of `sandbox` may look at); the reason when they may not.
    pub fn walk_room(&self, sandbox: &Sandbox) -> Result<(), String> {
        let limit = sandbox.limits().max_walk_entries;
        let budget = limit.saturating_mul(ctx_fs::COUNT_PAST_LIMIT * RUN_WALKS);
        let looked = self.looked.load(Ordering::Relaxed);
        if looked >= budget {
            return Err(format!(
                "the directory and glob walks of this run have looked at {looked} entries, their \
                 budget"
            ));
        }
        Ok(())
    }

    /// Counts the entries a walk looked at against the run's budget of walks.
    pub fn charge_walk(&self, walk: &Walk) {
        self.looked.fetch_add(walk.looked, Ordering::Relaxed);
    }

    /// [`ToolBudget::walk_room`] for a tool's walk: `E_BUDGET` when there is none.
    pub(crate) fn admit_walk(&self, sandbox: &Sandbox) -> Result<(), ToolError> {
        self.walk_room(sandbox).map_err(|why| ToolError {
            code: Code::Budget,
            message: format!("{why}; this call's walk is not made (--max-files 0 lifts it)"),
        })
    }

    /// The compiled form of `pattern`, compiled once per run. A pattern over the size limit
    /// is `E_TOOL_ARGS`; once the run's patterns hold the regex budget, a new one is
    /// `E_BUDGET`.
    ///
    /// # Errors
    ///
    /// As said above.
    pub fn regex(&self, pattern: &str) -> Result<Arc<Regex>, ToolError> {
        let mut regexes = self.regexes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = regexes.compiled.get(pattern) {
            return found.clone().map_err(ToolError::args);
        }
        if self.max_regex_bytes > 0 && regexes.compiled.len() >= MAX_PATTERNS {
            return Err(ToolError {
                code: Code::Budget,
                message: format!(
                    "{MAX_PATTERNS} distinct patterns compiled in this run; this one is not compiled"
                ),
            });
        }
        if self.max_regex_bytes > 0 && regexes.spent >= self.max_regex_bytes {
            return Err(ToolError {
                code: Code::Budget,
                message: format!(
                    "regex budget of {} bytes spent by the patterns of this run; this one is not compiled",
                    self.max_regex_bytes
                ),
            });
        }
        let config = Config::new()
            .nfa_size_limit(Some(PATTERN_LIMIT))
            .onepass_size_limit(Some(PATTERN_LIMIT))
            .dfa_size_limit(Some(PATTERN_LIMIT))
            .hybrid_cache_capacity(PATTERN_LIMIT);
        let built = Regex::builder().configure(config).build(pattern);
        // A pattern refused for its size may have cost as much as the limit before it was
        // refused, so it is charged that much: a stream of oversized patterns ends fast.
        // A pattern that has searched keeps a search cache, which `memory_usage` leaves out.
        regexes.spent += pattern.len()
            + match &built {
                Ok(regex) => regex.memory_usage() + regex.create_cache().memory_usage(),
                Err(e) if e.size_limit().is_some() => PATTERN_LIMIT,
                Err(_) => 0,
            };
        let compiled = built.map(Arc::new).map_err(|e| match e.size_limit() {
            Some(limit) => format!("pattern too large: its compiled form passes {limit} bytes"),
            None => {
                // The parser's own message (`unclosed group`), not the builder's wrapper.
                let detail = e.syntax_error().map_or_else(|| e.to_string(), ToString::to_string);
                format!("bad pattern: {}", first_line(&detail).trim_start_matches("error: "))
            }
        });
        regexes.compiled.insert(pattern.to_owned(), compiled.clone());
        compiled.map_err(ToolError::args)
    }

    /// Counts `elapsed` of searching; whether the run's searches are still within
    /// the search time of a run, 10 s (never bounded when the scan budget is off).
    pub fn searched(&self, elapsed: std::time::Duration) -> bool {
        if self.max_scan_bytes == 0 {
            return true;
        }
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let total = self.searching.fetch_add(nanos, Ordering::Relaxed).saturating_add(nanos);
        u128::from(total) <= MAX_SEARCH_TIME.as_nanos()
    }

    /// Takes `bytes` from the scan budget; `false` (taking nothing) when they do not fit.
    pub fn scan(&self, bytes: u64) -> bool {
        if self.max_scan_bytes == 0 {
            return true;
        }
        self.scanned
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |spent| {
                (spent + bytes <= self.max_scan_bytes).then_some(spent + bytes)
            })
            .is_ok()
    }

    /// The scan budget (0: none).
    pub fn max_scan_bytes(&self) -> u64 {
        self.max_scan_bytes
    }

    /// The walk of `dir`, walked once per run and shared by the calls that need it, within
    /// the run's budget of walks.
    ///
    /// # Errors
    ///
    /// When the sandbox refuses the walk (its code), or the run's walks have spent their
    /// budget (`E_BUDGET`).
    pub fn walk(&self, sandbox: &Sandbox, dir: &Location) -> Result<Arc<Walk>, ToolError> {
        let mut walks = self.walks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(walk) = walks.get(dir) {
            return Ok(walk.clone());
        }
        self.admit_walk(sandbox)?;
        let walk = Arc::new(sandbox.walk(dir).map_err(|e| ToolError::from_fs(&e))?);
        self.charge_walk(&walk);
        walks.insert(dir.clone(), walk.clone());
        Ok(walk)
    }

    /// Raises a warning about the call being made (a cut, files left out).
    pub fn warn(&self, code: Code, message: impl Into<String>) {
        self.warnings.lock().unwrap_or_else(|e| e.into_inner()).push((code, message.into()));
    }

    /// The warnings raised since the last call.
    pub(crate) fn take_warnings(&self) -> Vec<(Code, String)> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Default for ToolBudget {
    /// 256 MiB to scan, 32 MiB of compiled patterns.
    fn default() -> ToolBudget {
        ToolBudget::new(256 << 20, 32 << 20)
    }
}

fn first_line(s: &str) -> &str {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(s).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile_once_and_within_the_budget() {
        let budget = ToolBudget::new(0, 200_000);
        let a = budget.regex("ab+c").unwrap();
        let again = budget.regex("ab+c").unwrap();
        assert!(Arc::ptr_eq(&a, &again), "compiled once");
        assert_eq!(budget.regex("(").unwrap_err().code, Code::ToolArgs);
        let mut codes = Vec::new();
        for i in 0..2000 {
            codes.push(budget.regex(&format!("x{i}[a-z]{{1,20}}")).err().map(|e| e.code));
        }
        assert_eq!(codes[0], None);
        assert_eq!(codes.last().copied().flatten(), Some(Code::Budget), "the budget ends it");
    }

    #[test]
    fn search_caches_are_charged() {
        let pattern = |i: usize| format!("(a|b)*c{{0,50}}x{i}");
        let probe = ToolBudget::new(0, 0).regex(&pattern(0)).unwrap();
        let (compiled, cache) = (probe.memory_usage(), probe.create_cache().memory_usage());
        assert!(cache * 4 > compiled, "{cache} bytes of cache beside {compiled} compiled");
        // Room for ten patterns by their compiled size alone; the caches leave less.
        let budget = ToolBudget::new(0, 10 * compiled);
        let fitted = (0..20).take_while(|&i| budget.regex(&pattern(i)).is_ok()).count();
        assert!(fitted <= 9, "{fitted} patterns fitted");
    }

    #[test]
    fn distinct_patterns_are_counted_too() {
        let budget = ToolBudget::new(0, 64 << 20);
        let codes: Vec<_> = (0..MAX_PATTERNS + 10)
            .map(|i| budget.regex(&format!("x{i}")).err().map(|e| e.code))
            .collect();
        assert!(codes[..MAX_PATTERNS].iter().all(Option::is_none));
        assert!(codes[MAX_PATTERNS..].iter().all(|c| *c == Some(Code::Budget)));
        assert!(budget.regex("x0").is_ok(), "a pattern already compiled is served");
        assert!(ToolBudget::new(0, 0).regex("x").is_ok());
    }

    #[test]
    fn the_scan_budget_takes_all_or_nothing() {
        let budget = ToolBudget::new(10, 0);
        assert!(budget.scan(6));
        assert!(!budget.scan(6));
        assert!(budget.scan(4));
        assert!(ToolBudget::new(0, 0).scan(u64::MAX), "0 is no limit");
    }
}
