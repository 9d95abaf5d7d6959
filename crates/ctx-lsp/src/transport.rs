//! The connection on byte streams (standard input and output, or a test's pipes): a reader
//! thread that frames ([`crate::frame`]) and decodes ([`crate::decode`]) the client's
//! messages, and a writer thread that writes the server's.
//!
//! `lsp_server::Connection::stdio` trusts `Content-Length` (a huge one panics or aborts, a
//! large one allocates its whole buffer before a byte comes) and ends the session on any
//! body it cannot parse; this transport bounds the first and answers the second. The
//! channels are rendezvous channels, as `lsp_server`'s: the reader holds at most one message
//! ahead of the server, so a client that floods the server is slowed, not buffered.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded, never, select};
use lsp_server::{Connection, Message};
use serde_json::Value;

use crate::decode::{self, Decoded};
use crate::frame::{self, FrameError};

/// The input is read in chunks of this size.
const CHUNK: usize = 64 * 1024;

/// The bounds of the transport.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Largest message body (`u64::MAX` for none).
    pub(crate) max_message: u64,
    /// The bounds of decoding a body.
    pub(crate) decode: decode::Limits,
}

/// The reader and writer threads of a connection.
#[derive(Debug)]
pub(crate) struct Threads {
    reader: thread::JoinHandle<Result<(), FrameError>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl Threads {
    /// Waits for both threads, once the server has stopped and dropped its connection; the
    /// reader's error comes first. A panic of either thread goes on in the caller.
    pub(crate) fn join(self) -> Result<(), Failed> {
        let reader = self.reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let writer = self.writer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        reader.map_err(Failed::Framing)?;
        writer.map_err(Failed::Io)
    }
}

/// Why a connection failed.
#[derive(Debug)]
pub(crate) enum Failed {
    /// The input could not be framed (reading it failed, or it broke the base protocol).
    Framing(FrameError),
    /// Writing the output failed.
    Io(io::Error),
}

/// Starts the threads of a connection over `input` and `output`.
pub(crate) fn spawn<R, W>(input: R, output: W, limits: Limits) -> io::Result<(Connection, Threads)>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let (to_server, from_client) = bounded::<Message>(0);
    let (to_client, from_server) = bounded::<Message>(0);
    let (answers, answered) = bounded::<Value>(0);
    let writer = thread::Builder::new()
        .name("ctx-lsp-writer".to_owned())
        .spawn(move || write(BufWriter::new(output), &from_server, answered))?;
    let reader = thread::Builder::new().name("ctx-lsp-reader".to_owned()).spawn(move || {
        read(BufReader::with_capacity(CHUNK, input), &to_server, &answers, limits)
    })?;
    Ok((Connection { sender: to_client, receiver: from_client }, Threads { reader, writer }))
}

/// The reader: frames and decodes messages until `exit`, the end of the input, or a frame
/// it cannot read (answered, then the error). Bodies that do not decode are answered by the
/// transport itself and the session goes on.
fn read(
    mut input: impl io::BufRead,
    to_server: &Sender<Message>,
    answers: &Sender<Value>,
    limits: Limits,
) -> Result<(), FrameError> {
    loop {
        let mut body = match frame::read(&mut input, limits.max_message) {
            Ok(Some(body)) => body,
            Ok(None) => return Ok(()),
            Err(err) => {
                if !matches!(err, FrameError::Io(_)) {
                    let _ = answers.send(error_answer(None, err.code(), &err.to_string()));
                }
                return Err(err);
            }
        };
        let decoded = decode::decode(&mut body, limits.decode);
        drop(body);
        match decoded {
            Decoded::Message(message) => {
                let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                if to_server.send(message).is_err() || exit {
                    return Ok(());
                }
            }
            Decoded::Refused { id, code, message } => {
                tracing::warn!(
                    "answered a message the server cannot read with an error: {message}"
                );
                let _ = answers.send(error_answer(id, code, &message));
            }
            Decoded::Ignored(why) => tracing::warn!("ignored a message: {why}"),
        }
    }
}

/// A JSON-RPC error answer; `id` is `null` when it is not known.
fn error_answer(id: Option<Value>, code: i32, message: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": { "code": code, "message": message },
    })
}

/// The writer: the server's messages, and the transport's own answers, until the server
/// drops its sender.
fn write(
    mut output: impl Write,
    from_server: &Receiver<Message>,
    mut answers: Receiver<Value>,
) -> io::Result<()> {
    loop {
        select! {
            recv(from_server) -> message => match message {
                Ok(message) => message.write(&mut output)?,
                Err(_) => break,
            },
            recv(answers) -> answer => match answer {
                Ok(answer) => write_value(&mut output, &answer)?,
                // The reader has stopped: the server's messages only.
                Err(_) => answers = never(),
            },
        }
    }
    while let Ok(answer) = answers.try_recv() {
        write_value(&mut output, &answer)?;
    }
    output.flush()
}

fn write_value(output: &mut impl Write, value: &Value) -> io::Result<()> {
    let text = value.to_string();
    write!(output, "Content-Length: {}\r\n\r\n{text}", text.len())?;
    output.flush()
}
