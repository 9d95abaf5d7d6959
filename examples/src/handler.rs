//! HTTP handlers of the todo service.

use crate::store::{Store, Todo};

pub struct Router {
    store: Store,
}

impl Router {
    pub fn new(store: Store) -> Router {
        Router { store }
    }

    // ANCHOR: create
    /// `POST /todos`: validates the title and stores a new todo.
    pub fn create(&mut self, title: &str) -> Result<Todo, (u16, String)> {
        let title = title.trim();
        if title.is_empty() {
            return Err((422, "title must not be empty".to_owned()));
        }
        Ok(self.store.insert(title))
    }
    // ANCHOR_END: create

    pub fn serve(self, addr: &str) {
        println!("listening on {addr} with {} todos", self.store.len());
    }
}
