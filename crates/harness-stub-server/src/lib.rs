//! A small HTTP/1.1 server for tests: in process, on `127.0.0.1` and a free port.
//!
//! It stands in for a model server (Ollama, llama.cpp's `llama-server`, vLLM, …) so a test
//! can drive a real client, or a real binary, over a real socket. Every request is recorded,
//! and each is answered with a reply scripted beforehand, usually a recorded response read
//! from a fixture file.
//!
//! ```
//! use std::io::{Read, Write};
//! use harness_stub_server::{Reply, StubServer};
//!
//! let server = StubServer::start()?;
//! server.reply("GET", "/api/version", Reply::json(200, r#"{"version":"0.9.0"}"#));
//!
//! let mut socket = std::net::TcpStream::connect(server.addr())?;
//! socket.write_all(b"GET /api/version HTTP/1.1\r\nHost: stub\r\nConnection: close\r\n\r\n")?;
//! let mut answer = String::new();
//! socket.read_to_string(&mut answer)?;
//!
//! assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"));
//! assert!(answer.ends_with(r#"{"version":"0.9.0"}"#));
//! assert_eq!(server.requests()[0].path, "/api/version");
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Scripting replies
//!
//! A request is answered by the first rule that applies:
//!
//! 1. the oldest reply queued with [`StubServer::reply`] for its method and path (each is used
//!    once, so several queued for one route are served in order);
//! 2. the reply set with [`StubServer::reply_always`] for its method and path;
//! 3. otherwise `404` with a body naming the request, so a test fails with a readable message.
//!
//! The path is matched without its query string; [`Request::target`] keeps the whole target.
//!
//! # Framing and faults
//!
//! [`Reply::json`] and [`Reply::text`] are `Content-Length` framed. [`Reply::ndjson`] sends one
//! chunk per line and [`Reply::sse`] one chunk per event, with chunked transfer encoding, the
//! way Ollama and OpenAI-compatible servers stream. Faults are modifiers on a reply:
//! [`Reply::delay_first_byte`], [`Reply::chunk_gap`] and [`Reply::cut_after_chunks`]; a
//! hostile server's endless reply is [`Reply::flood`], generated as it is sent, with
//! [`Reply::sent`] counting the bytes that went out. A port
//! that refuses connections needs no server at all: see [`closed_port_url`].
//!
//! # Connections
//!
//! Connections are kept alive until the client closes them (or a reply is cut). Each accepted
//! connection gets a number, recorded with its requests, so a test can check connection reuse.
//!
//! This crate is test support, not a web server: it trusts its client, parses only what
//! HTTP/1.1 clients send to a model server, and speaks no TLS.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// A running stub server. It stops when dropped.
#[derive(Debug)]
pub struct StubServer {
    addr: SocketAddr,
    state: Arc<State>,
    acceptor: Option<JoinHandle<()>>,
}

impl StubServer {
    /// Starts a server on `127.0.0.1` and a port chosen by the operating system.
    ///
    /// # Errors
    ///
    /// When no loopback port can be bound.
    pub fn start() -> io::Result<StubServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::default());
        let acceptor = {
            let state = Arc::clone(&state);
            thread::spawn(move || accept_connections(&listener, &state))
        };
        Ok(StubServer {
            addr,
            state,
            acceptor: Some(acceptor),
        })
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL of the server, `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues `reply` to answer the next `method` request for `path`, once.
    pub fn reply(&self, method: &str, path: &str, reply: Reply) -> &Self {
        self.state.route(method, path).queued.push_back(reply);
        self
    }

    /// Answers every `method` request for `path` with `reply` once its queue is empty.
    pub fn reply_always(&self, method: &str, path: &str, reply: Reply) -> &Self {
        self.state.route(method, path).always = Some(reply);
        self
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.state.requests).clone()
    }

    /// The requests received so far for `path` (any method), oldest first.
    pub fn requests_to(&self, path: &str) -> Vec<Request> {
        lock(&self.state.requests)
            .iter()
            .filter(|request| request.path == path)
            .cloned()
            .collect()
    }
}

impl Drop for StubServer {
    fn drop(&mut self) {
        self.state.stopping.store(true, Ordering::SeqCst);
        // `accept` blocks; a connection of our own wakes it up to see the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// A URL on `127.0.0.1` where nothing listens: connecting to it is refused.
///
/// The port was bound and released, so no other test holds it; in the short window
/// before it is used, the system could hand it out again, which is as unlikely as it
/// is harmless here (the test would see a different failure, not a false pass).
///
/// # Errors
///
/// When no loopback port can be bound.
pub fn closed_port_url() -> io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    drop(listener);
    Ok(format!("http://{addr}"))
}

/// One request as the server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The method, e.g. `POST`.
    pub method: String,
    /// The request target as sent, query string included.
    pub target: String,
    /// The target without its query string.
    pub path: String,
    /// Header names (lowercase) and values, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked if it was sent with chunked transfer encoding.
    pub body: Vec<u8>,
    /// The number of the connection it arrived on, counting from 0 in accept order.
    pub connection: usize,
}

impl Request {
    /// The value of the first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as text, with invalid UTF-8 replaced.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A scripted response: status, headers, a body in chunks, and optional faults.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    chunks: Vec<Vec<u8>>,
    framing: Framing,
    first_byte_delay: Duration,
    chunk_gap: Duration,
    cut_after_chunks: Option<usize>,
    close_on_next_request: bool,
    /// Chunks generated after the scripted ones: see [`Reply::flood`].
    flood: Option<Flood>,
    /// The body bytes written so far, shared by the clones of this reply.
    sent: SentBytes,
}

/// A flood of generated chunks: `unit` with `{n}` replaced by its number, `times` times, then
/// `tail`.
#[derive(Clone, Debug)]
struct Flood {
    unit: String,
    times: u64,
    tail: Vec<u8>,
}

/// The body bytes a reply has written so far, readable while and after it is sent.
#[derive(Clone, Debug, Default)]
pub struct SentBytes(Arc<AtomicU64>);

impl SentBytes {
    /// The bytes of body written so far, chunk framing excluded.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    fn add(&self, bytes: usize) {
        self.0.fetch_add(bytes as u64, Ordering::SeqCst);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    ContentLength,
    Chunked,
}

impl Reply {
    /// A JSON body with `status`, `Content-Length` framed.
    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply::whole(status, "application/json", body.into())
    }

    /// A plain-text body with `status`, `Content-Length` framed.
    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply::whole(status, "text/plain; charset=utf-8", body.into())
    }

    /// A `200` newline-delimited JSON stream, one chunk per line, as Ollama streams.
    pub fn ndjson(body: impl Into<Vec<u8>>) -> Reply {
        Reply::streamed("application/x-ndjson", split_after(&body.into(), b"\n"))
    }

    /// A `200` server-sent-event stream, one chunk per event, as OpenAI-compatible servers stream.
    pub fn sse(body: impl Into<Vec<u8>>) -> Reply {
        Reply::streamed("text/event-stream", split_after(&body.into(), b"\n\n"))
    }

    /// A `200` body sent as the given chunks, with chunked transfer encoding: for tests of
    /// where the chunk boundaries fall.
    pub fn chunks(content_type: &str, chunks: Vec<Vec<u8>>) -> Reply {
        Reply::streamed(content_type, chunks)
    }

    /// Replaces the status code.
    #[must_use]
    pub fn status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Waits `delay` before sending anything, status line included.
    #[must_use]
    pub fn delay_first_byte(mut self, delay: Duration) -> Reply {
        self.first_byte_delay = delay;
        self
    }

    /// Waits `gap` between body chunks.
    #[must_use]
    pub fn chunk_gap(mut self, gap: Duration) -> Reply {
        self.chunk_gap = gap;
        self
    }

    /// Sends the headers and the first `count` body chunks, then closes the connection
    /// without finishing the body (no final chunk, or fewer bytes than `Content-Length`).
    #[must_use]
    pub fn cut_after_chunks(mut self, count: usize) -> Reply {
        self.cut_after_chunks = Some(count);
        self
    }

    /// Keeps the connection open after the reply, but answers the next request on it by
    /// closing the connection (the request is still recorded), as llama.cpp's server does
    /// after a streamed answer, without a `Connection: close` to warn the client.
    #[must_use]
    pub fn close_on_next_request(mut self) -> Reply {
        self.close_on_next_request = true;
        self
    }

    /// After the scripted chunks, sends `unit` as a chunk `times` times, each with `{n}`
    /// replaced by its number (from 0, so a client's loop detection sees no repetition),
    /// then `tail`: a hostile server's endless reply, generated while it is sent, so a test
    /// can send gigabytes without holding them. The flood ends early when the client hangs
    /// up; [`Reply::sent`] tells how far it got. Chunked framing only.
    #[must_use]
    pub fn flood(mut self, unit: &str, times: u64, tail: impl Into<Vec<u8>>) -> Reply {
        self.flood = Some(Flood {
            unit: unit.to_owned(),
            times,
            tail: tail.into(),
        });
        self
    }

    /// The counter of body bytes this reply (and every clone of it) has written.
    pub fn sent(&self) -> SentBytes {
        self.sent.clone()
    }

    /// Sends the body with `Content-Length` instead of chunked transfer encoding.
    #[must_use]
    pub fn length_framed(mut self) -> Reply {
        self.framing = Framing::ContentLength;
        self
    }

    fn whole(status: u16, content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".to_owned(), content_type.to_owned())],
            chunks: vec![body],
            framing: Framing::ContentLength,
            first_byte_delay: Duration::ZERO,
            chunk_gap: Duration::ZERO,
            cut_after_chunks: None,
            close_on_next_request: false,
            flood: None,
            sent: SentBytes::default(),
        }
    }

    fn streamed(content_type: &str, chunks: Vec<Vec<u8>>) -> Reply {
        Reply {
            framing: Framing::Chunked,
            chunks,
            ..Reply::whole(200, content_type, Vec::new())
        }
    }

    fn write_chunk(&self, stream: &mut TcpStream, chunk: &[u8]) -> io::Result<()> {
        // An empty chunk would end a chunked body: there is nothing to send.
        if chunk.is_empty() && self.framing == Framing::Chunked {
            return Ok(());
        }
        match self.framing {
            Framing::ContentLength => stream.write_all(chunk)?,
            Framing::Chunked => {
                stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
                stream.write_all(chunk)?;
                stream.write_all(b"\r\n")?;
            }
        }
        stream.flush()?;
        self.sent.add(chunk.len());
        Ok(())
    }

    /// Writes the reply; returns `false` when the connection must close afterwards.
    fn write_to(&self, stream: &mut TcpStream) -> io::Result<bool> {
        thread::sleep(self.first_byte_delay);
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        match self.framing {
            Framing::ContentLength => {
                let length: usize = self.chunks.iter().map(Vec::len).sum();
                head.push_str(&format!("Content-Length: {length}\r\n"));
            }
            Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;

        for (index, chunk) in self.chunks.iter().enumerate() {
            if self.cut_after_chunks == Some(index) {
                break;
            }
            if index > 0 {
                thread::sleep(self.chunk_gap);
            }
            self.write_chunk(stream, chunk)?;
        }
        if let Some(flood) = &self.flood {
            for number in 0..flood.times {
                let chunk = flood.unit.replace("{n}", &number.to_string());
                self.write_chunk(stream, chunk.as_bytes())?;
            }
            self.write_chunk(stream, &flood.tail)?;
        }

        if self
            .cut_after_chunks
            .is_some_and(|count| count < self.chunks.len())
        {
            stream.shutdown(Shutdown::Both)?;
            return Ok(false);
        }
        if self.framing == Framing::Chunked {
            stream.write_all(b"0\r\n\r\n")?;
        }
        stream.flush()?;
        Ok(true)
    }
}

/// What the server shares between its threads.
#[derive(Debug, Default)]
struct State {
    /// Scripted replies, one entry per method and path.
    routes: Mutex<Vec<Route>>,
    /// Every request received, oldest first.
    requests: Mutex<Vec<Request>>,
    /// Set when the server is dropped; the accept loop stops at the next connection.
    stopping: AtomicBool,
    /// The number the next accepted connection gets.
    connections: AtomicUsize,
}

#[derive(Debug)]
struct Route {
    method: String,
    path: String,
    queued: VecDeque<Reply>,
    always: Option<Reply>,
}

impl State {
    fn route(&self, method: &str, path: &str) -> RouteGuard<'_> {
        let mut routes = lock(&self.routes);
        let index = match routes
            .iter()
            .position(|route| route.method == method && route.path == path)
        {
            Some(index) => index,
            None => {
                routes.push(Route {
                    method: method.to_owned(),
                    path: path.to_owned(),
                    queued: VecDeque::new(),
                    always: None,
                });
                routes.len() - 1
            }
        };
        RouteGuard { routes, index }
    }

    fn reply_for(&self, request: &Request) -> Reply {
        let mut routes = lock(&self.routes);
        let scripted = routes
            .iter_mut()
            .find(|route| route.method == request.method && route.path == request.path)
            .and_then(|route| route.queued.pop_front().or_else(|| route.always.clone()));
        scripted.unwrap_or_else(|| {
            Reply::text(
                404,
                format!(
                    "stub server: no reply scripted for {} {}",
                    request.method, request.target
                ),
            )
        })
    }
}

/// A locked route table pointing at one route.
struct RouteGuard<'a> {
    routes: MutexGuard<'a, Vec<Route>>,
    index: usize,
}

impl std::ops::Deref for RouteGuard<'_> {
    type Target = Route;
    fn deref(&self) -> &Route {
        &self.routes[self.index]
    }
}

impl std::ops::DerefMut for RouteGuard<'_> {
    fn deref_mut(&mut self) -> &mut Route {
        &mut self.routes[self.index]
    }
}

fn accept_connections(listener: &TcpListener, state: &Arc<State>) {
    for stream in listener.incoming() {
        if state.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let connection = state.connections.fetch_add(1, Ordering::SeqCst);
        let state = Arc::clone(state);
        thread::spawn(move || {
            // A client that hangs up mid-reply ends its connection; nothing to report.
            let _ = serve_connection(stream, connection, &state);
        });
    }
}

fn serve_connection(stream: TcpStream, connection: usize, state: &State) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut hang_up = false;
    while let Some(request) = read_request(&mut reader, connection)? {
        if hang_up {
            lock(&state.requests).push(request);
            break;
        }
        let wants_close = request
            .header("connection")
            .is_some_and(|value| value.eq_ignore_ascii_case("close"));
        let reply = state.reply_for(&request);
        lock(&state.requests).push(request);
        let keep_open = reply.write_to(&mut writer)?;
        hang_up = reply.close_on_next_request;
        if wants_close || !keep_open {
            break;
        }
    }
    Ok(())
}

/// Reads one request; `None` when the client closed the connection between requests.
fn read_request(reader: &mut impl BufRead, connection: usize) -> io::Result<Option<Request>> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(None);
    }
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(invalid(format!("bad request line {request_line:?}")));
    };
    let path = target.split('?').next().unwrap_or(target).to_owned();
    let (method, target) = (method.to_owned(), target.to_owned());

    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(invalid(
                "connection closed inside the request headers".to_owned(),
            ));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(invalid(format!("bad header line {line:?}")));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }

    let mut request = Request {
        method,
        target,
        path,
        headers,
        body: Vec::new(),
        connection,
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|value| value.eq_ignore_ascii_case("chunked"))
    {
        request.body = read_chunked_body(reader)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| invalid(format!("bad Content-Length {length:?}")))?;
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        request.body = body;
    }
    Ok(Some(request))
}

fn read_chunked_body(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line)?;
        let size_text = size_line.trim().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| invalid(format!("bad chunk size line {size_line:?}")))?;
        let mut chunk = vec![0; size + 2]; // the chunk and its CRLF
        reader.read_exact(&mut chunk)?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// Splits `body` after each occurrence of `separator`; a tail without one is the last piece.
fn split_after(body: &[u8], separator: &[u8]) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut index = 0;
    while index + separator.len() <= body.len() {
        if &body[index..index + separator.len()] == separator {
            index += separator.len();
            pieces.push(body[start..index].to_vec());
            start = index;
        } else {
            index += 1;
        }
    }
    if start < body.len() {
        pieces.push(body[start..].to_vec());
    }
    pieces
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Locks a mutex, ignoring poisoning: a panicking test thread leaves the data usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn exchange(server: &StubServer, raw_request: &str) -> String {
        let mut socket = TcpStream::connect(server.addr()).unwrap();
        socket.write_all(raw_request.as_bytes()).unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn split_after_keeps_separators_and_the_tail() {
        assert_eq!(
            split_after(b"a\nb\nc", b"\n"),
            vec![b"a\n".to_vec(), b"b\n".to_vec(), b"c".to_vec()]
        );
        assert_eq!(
            split_after(b"data: 1\n\ndata: 2\n\n", b"\n\n"),
            vec![b"data: 1\n\n".to_vec(), b"data: 2\n\n".to_vec()]
        );
        assert!(split_after(b"", b"\n").is_empty());
    }

    #[test]
    fn queued_replies_are_used_once_in_order_then_the_standing_reply() {
        let server = StubServer::start().unwrap();
        server
            .reply("GET", "/x", Reply::text(200, "first"))
            .reply("GET", "/x", Reply::text(503, "second"))
            .reply_always("GET", "/x", Reply::text(200, "always"));
        let request = "GET /x?q=1 HTTP/1.1\r\nConnection: close\r\n\r\n";
        assert!(exchange(&server, request).ends_with("\r\n\r\nfirst"));
        let second = exchange(&server, request);
        assert!(second.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
        assert!(exchange(&server, request).ends_with("always"));
        assert!(exchange(&server, request).ends_with("always"));
        assert_eq!(server.requests()[0].target, "/x?q=1");
    }

    #[test]
    fn an_unscripted_request_gets_a_404_naming_it() {
        let server = StubServer::start().unwrap();
        let answer = exchange(
            &server,
            "DELETE /nope HTTP/1.1\r\nConnection: close\r\n\r\n",
        );
        assert!(answer.starts_with("HTTP/1.1 404 Not Found\r\n"));
        assert!(answer.ends_with("stub server: no reply scripted for DELETE /nope"));
    }

    #[test]
    fn bodies_are_recorded_whether_sized_or_chunked() {
        let server = StubServer::start().unwrap();
        server.reply_always("POST", "/p", Reply::json(200, "{}"));
        exchange(
            &server,
            "POST /p HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
        );
        exchange(
            &server,
            "POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
             3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n",
        );
        let bodies: Vec<String> = server.requests().iter().map(Request::body_text).collect();
        assert_eq!(bodies, ["hello", "hello"]);
        assert_eq!(
            server.requests()[1].header("Transfer-Encoding"),
            Some("chunked")
        );
    }

    #[test]
    fn ndjson_is_sent_one_chunk_per_line_and_finished() {
        let server = StubServer::start().unwrap();
        server.reply("POST", "/s", Reply::ndjson("{\"a\":1}\n{\"b\":2}\n"));
        let answer = exchange(&server, "POST /s HTTP/1.1\r\nConnection: close\r\n\r\n");
        assert!(answer.contains("Transfer-Encoding: chunked\r\n"));
        assert!(answer.ends_with("8\r\n{\"a\":1}\n\r\n8\r\n{\"b\":2}\n\r\n0\r\n\r\n"));
    }

    #[test]
    fn a_cut_reply_stops_after_the_given_chunks_without_the_final_chunk() {
        let server = StubServer::start().unwrap();
        server.reply("POST", "/s", Reply::ndjson("1\n2\n3\n").cut_after_chunks(1));
        let answer = exchange(&server, "POST /s HTTP/1.1\r\n\r\n");
        assert!(answer.ends_with("\r\n\r\n2\r\n1\n\r\n"), "{answer:?}");
    }

    #[test]
    fn a_cut_length_framed_reply_sends_fewer_bytes_than_announced() {
        let server = StubServer::start().unwrap();
        server.reply("GET", "/j", Reply::json(200, "{}").cut_after_chunks(0));
        let answer = exchange(&server, "GET /j HTTP/1.1\r\n\r\n");
        assert!(answer.ends_with("Content-Length: 2\r\n\r\n"), "{answer:?}");
    }

    #[test]
    fn requests_on_one_kept_alive_connection_share_its_number() {
        let server = StubServer::start().unwrap();
        server.reply_always("GET", "/k", Reply::text(200, "k"));
        let mut socket = TcpStream::connect(server.addr()).unwrap();
        socket
            .write_all(b"GET /k HTTP/1.1\r\n\r\nGET /k HTTP/1.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).unwrap();
        assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 2);
        exchange(&server, "GET /k HTTP/1.1\r\nConnection: close\r\n\r\n");
        let connections: Vec<usize> = server.requests().iter().map(|r| r.connection).collect();
        assert_eq!(connections, [0, 0, 1]);
        assert_eq!(server.requests_to("/k").len(), 3);
    }

    #[test]
    fn a_lazily_closed_connection_records_the_next_request_and_hangs_up() {
        let server = StubServer::start().unwrap();
        server.reply("GET", "/a", Reply::text(200, "a").close_on_next_request());
        let mut socket = TcpStream::connect(server.addr()).unwrap();
        socket
            .write_all(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).unwrap();
        assert_eq!(answer.matches("HTTP/1.1").count(), 1, "{answer:?}");
        assert!(answer.ends_with("\r\n\r\na"));
        let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["/a", "/b"]);
    }

    #[test]
    fn a_closed_port_refuses_connections() {
        let url = closed_port_url().unwrap();
        let addr = url.trim_start_matches("http://");
        let error = TcpStream::connect(addr).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused);
    }
}
