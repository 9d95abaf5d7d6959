//! The readers over real trees in temporary folders: the observed fixtures (what the real
//! agents sent), one fixture test per documented or observed rule, and attacks.
#![allow(clippy::disallowed_methods)] // Tests build their trees on disk and open sandboxes.

mod attacks;
mod observed;
mod rules;
mod util;
