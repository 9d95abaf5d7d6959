//! A client of the server on an in-memory connection, and the helpers of the requests.

use std::path::Path;
use std::thread;
use std::time::Duration;

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

/// How long a test waits for the server before it fails instead of hanging.
pub(crate) const HANG: Duration = Duration::from_secs(60);

/// A client connected to a server running on its own thread.
pub(crate) struct Client {
    pub(crate) conn: Connection,
    server: Option<thread::JoinHandle<Result<ctx_lsp::Ending, ctx_lsp::Error>>>,
    next: i32,
    /// Notifications received while waiting for responses.
    pub(crate) notes: Vec<Notification>,
}

impl Client {
    /// A server on `root`, initialized.
    pub(crate) fn start(root: &Path) -> Client {
        Client::start_with(ctx::Context::builder().root(root))
    }

    /// A server on the context `builder` makes, initialized.
    pub(crate) fn start_with(builder: ctx::ContextBuilder) -> Client {
        let mut client = Client::connect_with(builder);
        let init = client.request("initialize", json!({ "capabilities": {} }));
        assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
        client.notify("initialized", json!({}));
        client
    }

    /// A server on `root`, before the handshake.
    pub(crate) fn connect(root: &Path) -> Client {
        Client::connect_with(ctx::Context::builder().root(root))
    }

    /// A server on the context `builder` makes, before the handshake.
    pub(crate) fn connect_with(builder: ctx::ContextBuilder) -> Client {
        let (server, conn) = Connection::memory();
        let config =
            ctx_lsp::Config { debounce: Duration::from_millis(5), ..ctx_lsp::Config::default() };
        let handle = thread::spawn(move || ctx_lsp::run(&server, builder, &config));
        Client { conn, server: Some(handle), next: 0, notes: Vec::new() }
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.request_raw(method, params);
        assert!(response.error.is_none(), "{method}: {:?}", response.error);
        response.result.unwrap_or(Value::Null)
    }

    pub(crate) fn request_raw(&mut self, method: &str, params: Value) -> Response {
        self.next += 1;
        let id = RequestId::from(self.next);
        let request = Request::new(id.clone(), method.to_owned(), params);
        self.conn.sender.send(Message::Request(request)).unwrap();
        loop {
            match self.conn.receiver.recv_timeout(HANG).expect("a message") {
                Message::Response(response) if response.id == id => return response,
                Message::Notification(note) => self.notes.push(note),
                _ => {}
            }
        }
    }

    /// Waits for the next request of the server and answers it with `null`.
    pub(crate) fn server_request(&mut self) -> Request {
        loop {
            match self.conn.receiver.recv_timeout(HANG).expect("a request") {
                Message::Request(request) => {
                    let response = Response::new_ok(request.id.clone(), Value::Null);
                    self.conn.sender.send(Message::Response(response)).unwrap();
                    return request;
                }
                Message::Notification(note) => self.notes.push(note),
                Message::Response(response) => panic!("unexpected {response:?}"),
            }
        }
    }

    pub(crate) fn notify(&self, method: &str, params: Value) {
        let note = Notification::new(method.to_owned(), params);
        self.conn.sender.send(Message::Notification(note)).unwrap();
    }

    /// Waits for the diagnostics of `uri` with the given version.
    pub(crate) fn diagnostics(&mut self, uri: &str, version: i32) -> Vec<Value> {
        let matches = |n: &Notification| {
            n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == uri
                && n.params["version"] == version
        };
        loop {
            if let Some(i) = self.notes.iter().position(matches) {
                let note = self.notes.remove(i);
                return note.params["diagnostics"].as_array().unwrap().clone();
            }
            match self.conn.receiver.recv_timeout(HANG).expect("diagnostics") {
                Message::Notification(note) => self.notes.push(note),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    pub(crate) fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        assert_eq!(self.exit(), ctx_lsp::Ending::Shutdown);
    }

    /// Sends `exit` and waits for the server to stop.
    pub(crate) fn exit(mut self) -> ctx_lsp::Ending {
        self.notify("exit", Value::Null);
        self.join()
    }

    /// Waits for the server to stop, which must not have panicked.
    pub(crate) fn join(&mut self) -> ctx_lsp::Ending {
        self.server.take().unwrap().join().expect("no panic").unwrap()
    }
}

pub(crate) fn uri(path: &Path) -> String {
    let dir = path.parent().unwrap().canonicalize().unwrap();
    lsp_types::Url::from_file_path(dir.join(path.file_name().unwrap())).unwrap().to_string()
}

pub(crate) fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } })
}
