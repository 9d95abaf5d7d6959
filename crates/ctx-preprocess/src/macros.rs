//! The macro context: definitions, predefinitions from the caller, and the cache of compiled
//! regular expressions that `MATCHES` and `DOESNT_MATCH` use.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use regex::{Regex, RegexBuilder};

/// The most bytes a compiled pattern may take; a larger one is `E_REGEX`.
pub(crate) const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// The most bytes the lazy DFA of one pattern may take while matching.
const REGEX_DFA_SIZE_LIMIT: usize = 1 << 20;
/// The most patterns kept compiled; past it, new patterns are compiled on every use.
const REGEX_CACHE_LIMIT: usize = 1024;
/// What the patterns of one assembly may cost to compile, in units of one ordinary
/// compilation; a pattern refused for its size costs [`TOO_BIG_COST`]. Past it, a new
/// pattern is not compiled (`E_BUDGET`).
pub(crate) const REGEX_BUDGET: usize = 8192;
/// The cost of a pattern refused for its size: it may have taken as long as 64 others.
const TOO_BIG_COST: usize = 64;

/// The macros in force, carried by the caller through one assembly.
///
/// One `Macros` goes from a file into the files it includes and back, so that a `define`
/// inside an included file is visible after the include, as in C. It also keeps every
/// regular expression that a condition compiled, so a pattern is compiled once per assembly
/// however often it is tested.
///
/// # Example
///
/// ```
/// use ctx_preprocess::Macros;
///
/// let mut macros = Macros::new();
/// macros.define_arg("MODE=fast").unwrap();
/// macros.define("DEBUG", "");
/// assert_eq!(macros.get("MODE"), Some("fast"));
/// assert!(macros.is_defined("DEBUG"));
/// macros.undef("DEBUG");
/// assert!(!macros.is_defined("DEBUG"));
/// assert!(macros.define_arg("1X=y").is_err());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Macros {
    defs: HashMap<String, Arc<str>>,
    regexes: RegexCache,
}

impl Macros {
    /// An empty context.
    pub fn new() -> Macros {
        Macros::default()
    }

    /// Defines `name` as `value`, replacing any earlier value, which it returns.
    ///
    /// The name is not checked: a name that the grammar cannot spell is stored but can never
    /// be referenced. Use [`Macros::define_arg`] for names typed by a user.
    pub fn define(
        &mut self,
        name: impl Into<String>,
        value: impl Into<Arc<str>>,
    ) -> Option<Arc<str>> {
        self.defs.insert(name.into(), value.into())
    }

    /// Defines a macro from a command-line argument such as `-D NAME=VALUE`: `NAME=VALUE`
    /// defines `NAME` as `VALUE` (taken as it is, without escapes), and `NAME` alone defines it
    /// as the empty string.
    ///
    /// # Errors
    ///
    /// Fails when the name is empty or is not a valid macro name (a letter or `_` followed by
    /// letters, digits or `_`, all ASCII).
    pub fn define_arg(&mut self, arg: &str) -> Result<(), Error> {
        let (name, value) = arg.split_once('=').unwrap_or((arg, ""));
        if name.is_empty() {
            return Err(Error { kind: ErrorKind::EmptyName, arg: arg.to_owned() });
        }
        if !is_macro_name(name) {
            return Err(Error { kind: ErrorKind::InvalidName, arg: arg.to_owned() });
        }
        self.define(name, value);
        Ok(())
    }

    /// Removes `name`, returning its value if it was defined.
    pub fn undef(&mut self, name: &str) -> Option<Arc<str>> {
        self.defs.remove(name)
    }

    /// The value of `name`, if it is defined.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.defs.get(name).map(|v| &**v)
    }

    /// The value of `name` as a shared string, cheap to clone, if it is defined.
    pub fn get_shared(&self, name: &str) -> Option<&Arc<str>> {
        self.defs.get(name)
    }

    /// Whether `name` is defined (possibly as the empty string).
    pub fn is_defined(&self, name: &str) -> bool {
        self.defs.contains_key(name)
    }

    /// The number of macros defined.
    pub fn len(&self) -> usize {
        self.defs.len()
    }

    /// Whether no macro is defined.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// Every macro and its value, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.defs.iter().map(|(k, v)| (k.as_str(), &**v))
    }

    /// The compiled form of `pattern`, from the cache or compiled now.
    pub(crate) fn regex(&mut self, pattern: &str) -> Result<&Regex, RegexError<'_>> {
        self.regexes.get(pattern)
    }

    /// How many patterns are cached (compiled or known not to compile).
    pub fn cached_regexes(&self) -> usize {
        self.regexes.map.len()
    }
}

/// Whether `name` is a macro name: `(ALPHA | "_") *(ALNUM | "_")`, ASCII.
pub fn is_macro_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A compiled pattern, or the message saying why it does not compile.
type Compiled = Result<Regex, Box<str>>;

/// Why a pattern cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegexError<'a> {
    /// It does not compile; the lower-case message says why.
    Invalid(&'a str),
    /// The assembly's patterns spent the compilation budget.
    Budget,
}

/// Compiled patterns, and the messages of those that do not compile.
#[derive(Debug, Clone, Default)]
struct RegexCache {
    map: HashMap<Box<str>, Compiled>,
    /// The last pattern compiled past the cache limit, kept only to lend it out.
    overflow: Option<Compiled>,
    /// What compiling has cost so far (see [`REGEX_BUDGET`]).
    spent: usize,
}

impl RegexCache {
    fn get(&mut self, pattern: &str) -> Result<&Regex, RegexError<'_>> {
        // Two lookups instead of the entry API, so a hit does not allocate the key.
        if self.map.contains_key(pattern) {
            return as_ref(&self.map[pattern]);
        }
        if self.spent >= REGEX_BUDGET {
            return Err(RegexError::Budget);
        }
        let compiled = compile(pattern);
        self.spent += match &compiled {
            Err(message) if message.starts_with("the compiled pattern would exceed") => {
                TOO_BIG_COST
            }
            _ => 1,
        };
        if self.map.len() < REGEX_CACHE_LIMIT {
            let entry = self.map.entry(pattern.into()).or_insert(compiled);
            return as_ref(entry);
        }
        as_ref(self.overflow.insert(compiled))
    }
}

fn as_ref(entry: &Compiled) -> Result<&Regex, RegexError<'_>> {
    match entry {
        Ok(re) => Ok(re),
        Err(message) => Err(RegexError::Invalid(message)),
    }
}

fn compile(pattern: &str) -> Compiled {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build()
        .map_err(|err| regex_message(&err).into_boxed_str())
}

/// A one-line, lower-case message for a pattern that does not compile.
fn regex_message(err: &regex::Error) -> String {
    match err {
        regex::Error::Syntax(text) => {
            // The crate's message shows the pattern with a caret, then `error: what`.
            let what = text
                .lines()
                .rev()
                .find_map(|line| line.trim().strip_prefix("error: "))
                .unwrap_or("syntax error");
            what.trim_end_matches('.').to_owned()
        }
        regex::Error::CompiledTooBig(limit) => {
            format!("the compiled pattern would exceed the limit of {limit} bytes")
        }
        other => other.to_string().to_lowercase().trim_end_matches('.').to_owned(),
    }
}

/// A macro definition given by the caller that cannot be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    arg: String,
}

impl Error {
    /// What is wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The definition as given.
    pub fn arg(&self) -> &str {
        &self.arg
    }
}

/// What is wrong with a macro definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The definition has no name, as in `=value`.
    EmptyName,
    /// The name is not a letter or `_` followed by letters, digits or `_`.
    InvalidName,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::EmptyName => {
                write!(f, "macro definition `{}` has no name; write NAME=VALUE", self.arg)
            }
            ErrorKind::InvalidName => {
                let name = self.arg.split_once('=').map_or(&*self.arg, |(name, _)| name);
                write!(
                    f,
                    "invalid macro name `{name}`; a name is an ASCII letter or `_` followed by \
                     letters, digits or `_`"
                )
            }
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_messages() {
        let mut cache = RegexCache::default();
        assert_eq!(cache.get("(").unwrap_err(), RegexError::Invalid("unclosed group"));
        assert!(cache.get("a+").unwrap().is_match("baa"));
        let Err(RegexError::Invalid(big)) = cache.get(r"\w{1000}{1000}") else { panic!() };
        assert!(big.starts_with("the compiled pattern would exceed"), "{big}");
        assert_eq!(cache.map.len(), 3);
    }

    #[test]
    fn hostile_patterns_fail_fast() {
        let mut cache = RegexCache::default();
        for pattern in [
            r"\w{1000}{1000}",
            r"((a{100}){100}){100}",
            r"[\p{L}\p{N}]{5000}",
            r".{65535}",
            r"(?i)\w{200}\W{200}\d{200}",
        ] {
            let start = std::time::Instant::now();
            let Err(RegexError::Invalid(err)) = cache.get(pattern) else { panic!("{pattern}") };
            assert!(err.contains("limit"), "{pattern}: {err}");
            // Generous for debug builds on a loaded machine; a stall would take far longer.
            assert!(start.elapsed().as_secs() < 5, "{pattern} took {:?}", start.elapsed());
        }
    }

    #[test]
    fn cache_overflow() {
        let mut cache = RegexCache::default();
        for i in 0..REGEX_CACHE_LIMIT + 5 {
            let p = format!("a{i}");
            assert!(cache.get(&p).unwrap().is_match(&p));
        }
        assert_eq!(cache.map.len(), REGEX_CACHE_LIMIT);
    }

    #[test]
    fn define_arg() {
        let mut m = Macros::new();
        m.define_arg("A=b=c").unwrap();
        m.define_arg("_B").unwrap();
        assert_eq!(m.get("A"), Some("b=c"));
        assert_eq!(m.get("_B"), Some(""));
        let err = m.define_arg("=x").unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::EmptyName);
        assert_eq!(err.to_string(), "macro definition `=x` has no name; write NAME=VALUE");
        let err = m.define_arg("a-b=1").unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::InvalidName);
        assert!(err.to_string().starts_with("invalid macro name `a-b`"));
        assert_eq!(m.len(), 2);
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn oversized_patterns_spend_the_budget_fast() {
        let mut macros = Macros::new();
        let mut budget = 0;
        for i in 0..20_000 {
            match macros.regex(&format!("\\w{{200}}{i}")) {
                Err(RegexError::Budget) => budget += 1,
                Err(RegexError::Invalid(m)) => assert!(m.contains("exceed"), "{m}"),
                Ok(_) => panic!("\\w{{200}} fits the size limit"),
            }
        }
        // 8192 / 64 oversized compilations, then none.
        assert_eq!(budget, 20_000 - REGEX_BUDGET / TOO_BIG_COST);
        // A pattern already compiled is still served.
        let mut macros = Macros::new();
        assert!(macros.regex("a+").is_ok());
        macros.regexes.spent = REGEX_BUDGET;
        assert!(macros.regex("a+").is_ok());
        assert_eq!(macros.regex("b+").unwrap_err(), RegexError::Budget);
    }
}
