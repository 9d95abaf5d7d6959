//! The suggestion state of a context: where its index is stored, and the index once built.

use std::sync::{Arc, Mutex};

use ctx_fs::Store;
use ctx_suggest::{Index, IndexSettings};

/// The suggestion state of a context: the store, if any, and the index once built.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub(crate) store: Option<Arc<Store>>,
    /// What the index takes in: where its symbols come from, whether data files are read.
    pub(crate) settings: IndexSettings,
    pub(crate) index: Arc<Mutex<Option<Index>>>,
}

impl State {
    pub(crate) fn new(store: Option<Arc<Store>>, settings: IndexSettings) -> State {
        State { store, settings, index: Arc::new(Mutex::new(None)) }
    }
}
