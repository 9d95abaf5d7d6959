//! The index service (Unix only): `ctx index --watch` keeps the suggestion index current
//! with a file watch and answers on a local socket of the user's own (`serve.rs`); the ranking
//! commands ask it when it runs (`ask.rs`). The messages are in `proto.rs`, the socket's place
//! and the fingerprint of the settings in `place.rs`.

pub(crate) mod ask;
mod place;
mod proto;
pub(crate) mod serve;
