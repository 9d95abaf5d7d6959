//! The suggestion state of a context: where its index is stored, and the index once built.

use std::sync::{Arc, Mutex};

use ctx_fs::Store;
use ctx_suggest::{Index, SymbolSource};

/// The suggestion state of a context: the store, if any, and the index once built.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub(crate) store: Option<Arc<Store>>,
    /// Where the index takes its symbols from.
    pub(crate) symbols: SymbolSource,
    pub(crate) index: Arc<Mutex<Option<Index>>>,
}

impl State {
    pub(crate) fn new(store: Option<Arc<Store>>, symbols: SymbolSource) -> State {
        State { store, symbols, index: Arc::new(Mutex::new(None)) }
    }
}
