//! Differential tests (below).
