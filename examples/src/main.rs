//! The todo service: an HTTP API over an in-memory store.

mod handler;
mod store;

fn main() {
    let store = store::Store::default();
    let app = handler::Router::new(store);
    app.serve("127.0.0.1:8080");
}
