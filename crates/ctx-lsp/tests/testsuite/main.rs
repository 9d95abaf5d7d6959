//! The language server's tests: a session of an in-process client (`session`), and attacks by
//! a hostile client or document (`hostile`).

mod client;
mod hostile;
mod session;
