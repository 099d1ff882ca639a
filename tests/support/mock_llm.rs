//! A scripted model server for tests and benchmarks: a minimal HTTP/1.1 server on 127.0.0.1 that speaks OpenAI Chat
//! Completions (`POST /v1/chat/completions`), OpenAI Responses (`POST /v1/responses`) and Anthropic Messages
//! (`POST /v1/messages`) streaming. It
//! answers from one shared script of `Reply`s, in order, in the format of the endpoint hit, and records every request.
//!
//! Replies stream in small pieces: text split into words, each event split across two HTTP chunks (inside a UTF-8
//! character when it has one, else mid-line), so clients' decoders are exercised. Tool call ids are `call_1`,
//! `call_2`, ... in the order the server sends them. When the script runs out the server answers
//! "(script exhausted)" so a test fails readably instead of hanging.
//!
//! Reasoning goes out as each format has it: `reasoning_content` deltas (Chat Completions), a `thinking` block signed
//! `mock-signature` (Anthropic), a `reasoning` item with its summary streamed and `encrypted_content` set to
//! `enc:` + the reasoning text (Responses).
//!
//! Usage reported (every format, so the mapped `Usage` is the same): the prompt is `ceil(body bytes / 4)` tokens of
//! which half (rounded down) were cache reads; the output is `ceil(output chars / 4)` tokens, at least 1.
//!
//! Two ways to run it:
//! - `MockLlm::start(script).await` runs on the test's own tokio runtime. The test must keep that runtime free to
//!   serve: await a tokio task or `tokio::process::Command` (a child `tern` process), or use
//!   `#[tokio::test(flavor = "multi_thread")]` when blocking on something else.
//! - `MockLlm::start_standalone(script)` runs on its own thread and runtime, for synchronous code: benchmarks, or
//!   tests that run the binary with `std::process::Command`.
//!
//! Like the real APIs, it refuses (400) a request that breaks the rules a client can get wrong across a tool-use
//! loop (see `rules.rs`): Anthropic thinking blocks not sent back, Responses items with ids under `store: false`.
//!
//! Faults: besides the fault `Reply`s, `drop_every_second_connection` makes the server cut every other request
//! (the first, third, ...) before its response head or halfway through the answer the script has next, without
//! using that answer up, so the retry gets it whole.
//!
//! Point a provider (or `tern --base-url`) at `openai_base_url()` or `anthropic_base_url()`; `requests()` then holds
//! what the model received. Dropping the `MockLlm` stops the server. From a test file: `mod support;`; from a
//! benchmark: `#[path = "../tests/support/mod.rs"] mod support;`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

mod render;
mod rules;
use render::{Answer, Render};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    Text(String),
    Reasoning {
        reasoning: String,
        text: String,
    },
    /// Reasoning, then tool calls (name, arguments).
    ReasoningAndToolCalls(String, Vec<(String, Value)>),
    /// Tool calls (name, arguments), streamed in parallel: argument pieces of the calls interleave (OpenAI).
    ToolCalls(Vec<(String, Value)>),
    TextAndToolCalls(String, Vec<(String, Value)>),
    /// One tool call whose argument text is sent verbatim (it may be invalid JSON).
    RawToolArgs(String, String),
    /// Text cut off by the output limit (`finish_reason: length` / `stop_reason: max_tokens`).
    Length(String),
    /// A complete answer with no content at all.
    Empty,
    /// A plain HTTP error response; `body` is sent as is (see `Reply::status` for the usual JSON shape).
    Status {
        code: u16,
        retry_after: Option<u64>,
        body: String,
    },
    /// An error event inside a 200 stream (`{"error": ...}` / Anthropic `event: error`).
    StreamError {
        kind: String,
        message: String,
    },
    /// The start of a text answer, then the connection is cut.
    DropMidStream(String),
    /// The start of a text answer, then nothing more until the client gives up.
    Stall(String),
    /// A valid text answer with comments, unknown events, junk lines and invalid JSON interleaved.
    Garbage(String),
    /// Waits before answering (before the response headers).
    Delay(Duration, Box<Reply>),
    /// The start of a text answer (possibly empty), then SSE keep-alives (comments and blank lines, plus Anthropic
    /// `ping` events) every 20 ms until the client gives up: a server that never ends and never goes silent.
    KeepAlive(String),
    /// A 200 response with this content type and body, sent as is (not an event stream, or not the right one).
    RawBody {
        content_type: String,
        body: Vec<u8>,
    },
    /// A text answer streamed at a steady rate: its word pieces (one per event, as for `Text`) are sent
    /// `per_second` a second on a fixed schedule, so a benchmark sees a model producing that many tokens a second.
    Paced {
        text: String,
        per_second: u32,
    },
    /// Given only to a request whose system prompt contains the text (agents sharing one server: a subagent's prompt
    /// holds its task). A request takes the first reply in the script that fits it; other replies fit any request.
    ForSystem(String, Box<Reply>),
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Self {
        Reply::Text(text.into())
    }

    pub fn tool(name: impl Into<String>, arguments: Value) -> Self {
        Reply::ToolCalls(vec![(name.into(), arguments)])
    }

    /// An HTTP error with a JSON body both providers' clients understand.
    pub fn status(code: u16, message: &str) -> Self {
        let body = json!({"type": "error", "error": {"type": "mock_error", "message": message}});
        Reply::Status {
            code,
            retry_after: None,
            body: body.to_string(),
        }
    }

    /// A 429 asking the client to wait `seconds`.
    pub fn rate_limited(seconds: u64) -> Self {
        let body = json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limit reached"}});
        Reply::Status {
            code: 429,
            retry_after: Some(seconds),
            body: body.to_string(),
        }
    }

    pub fn delayed(delay: Duration, reply: Reply) -> Self {
        Reply::Delay(delay, Box::new(reply))
    }

    /// `reply`, for the request whose system prompt contains `needle` only.
    pub fn for_system(needle: impl Into<String>, reply: Reply) -> Self {
        Reply::ForSystem(needle.into(), Box::new(reply))
    }

    /// A 200 `text/event-stream` response whose body is `body`, sent as is.
    pub fn raw_stream(body: impl Into<Vec<u8>>) -> Self {
        Reply::RawBody {
            content_type: "text/event-stream".into(),
            body: body.into(),
        }
    }

    /// `text` streamed at `per_second` word pieces a second.
    pub fn paced(text: impl Into<String>, per_second: u32) -> Self {
        Reply::Paced {
            text: text.into(),
            per_second,
        }
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Value::String` of the raw text when it was not JSON).
    pub body: Value,
    pub body_bytes: usize,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }
}

/// Where `MockLlm::drop_every_second_connection` cuts a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropAt {
    /// After reading the request, before any response byte.
    BeforeHeaders,
    /// After the head and the first half of the answer's events.
    MidStream,
    /// Before the head, then mid-stream the next time, and so on.
    Alternately,
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    next_call_id: AtomicUsize,
    drop_every_second: Mutex<Option<DropAt>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockLlm {
    /// Starts the server on the current tokio runtime.
    pub async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let (shared, stop) = Self::state(script);
        tokio::spawn(serve(listener, Arc::clone(&shared), stop.clone()));
        Self {
            addr,
            shared,
            stop,
            thread: None,
        }
    }

    /// Starts the server on its own thread and runtime, for callers without a tokio runtime.
    pub fn start_standalone(script: Vec<Reply>) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let (shared, stop) = Self::state(script);
        let (thread_shared, thread_stop) = (Arc::clone(&shared), stop.clone());
        let thread = std::thread::Builder::new()
            .name("mock-llm".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("mock server runtime");
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(listener).expect("tokio listener");
                    serve(listener, thread_shared, thread_stop).await;
                });
            })
            .expect("mock server thread");
        Self {
            addr,
            shared,
            stop,
            thread: Some(thread),
        }
    }

    fn state(script: Vec<Reply>) -> (Arc<Shared>, CancellationToken) {
        let shared = Shared {
            script: Mutex::new(script.into()),
            ..Shared::default()
        };
        (Arc::new(shared), CancellationToken::new())
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL an OpenAI-format provider takes.
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT`, the base URL an Anthropic provider takes.
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// From now on, cuts the connection of every other request (the first, third, ...; counted over all requests)
    /// at `at`. The answer the script has next is not used up by a cut.
    pub fn drop_every_second_connection(&self, at: DropAt) {
        *lock(&self.shared.drop_every_second) = Some(at);
    }

    /// Adds a turn at the end of the script.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared.script).push_back(reply);
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }

    /// The request bodies received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.requests).iter().map(|r| r.body.clone()).collect()
    }

    /// The requests received so far, with method, path and headers.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    pub fn request_count(&self) -> usize {
        lock(&self.shared.requests).len()
    }

    /// Waits until at least `n` requests arrived; false if `timeout` passed first.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.request_count() < n {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => {
                if let Ok((socket, _)) = accepted {
                    let _ = socket.set_nodelay(true);
                    tokio::spawn(connection(socket, Arc::clone(&shared), stop.clone()));
                }
            }
        }
    }
}

/// Serves requests on one connection (keep-alive) until the client closes it, a fault closes it, or the server stops.
async fn connection(mut socket: TcpStream, shared: Arc<Shared>, stop: CancellationToken) {
    let mut buffer = Vec::new();
    loop {
        let request = tokio::select! {
            () = stop.cancelled() => return,
            request = read_request(&mut socket, &mut buffer) => request,
        };
        let Some(request) = request else { return };
        let keep_alive = tokio::select! {
            () = stop.cancelled() => return,
            keep = handle(&mut socket, request, &shared) => keep,
        };
        if !keep_alive {
            return;
        }
    }
}

async fn read_request(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<RecordedRequest> {
    let head_end = loop {
        if let Some(pos) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        if buffer.len() > 64 * 1024 || !read_more(socket, buffer).await {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let (method, path) = (request_line.next()?.to_string(), request_line.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        if !read_more(socket, buffer).await {
            return None;
        }
    }
    let raw: Vec<u8> = buffer.drain(..head_end + length).skip(head_end).collect();
    let body = serde_json::from_slice(&raw).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&raw).into()));
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
        body_bytes: raw.len(),
    })
}

async fn read_more(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    match socket.read(&mut chunk).await {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buffer.extend_from_slice(&chunk[..n]);
            true
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    OpenAi,
    Anthropic,
    Responses,
}

/// The first reply of the script that fits a request with this system prompt (see `Reply::ForSystem`).
fn take_reply(script: &mut VecDeque<Reply>, system: &str) -> Reply {
    let fits = |reply: &Reply| match reply {
        Reply::ForSystem(needle, _) => system.contains(needle.as_str()),
        _ => true,
    };
    match script.iter().position(fits).and_then(|i| script.remove(i)) {
        Some(Reply::ForSystem(_, reply)) => *reply,
        Some(reply) => reply,
        None => Reply::text("(script exhausted)"),
    }
}

/// A request's system prompt: OpenAI's system message, or Anthropic's `system` (text or blocks).
fn system_prompt(body: &Value) -> String {
    let openai = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| {
            m.iter()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        })
        .and_then(|m| m.get("content"));
    match openai
        .or_else(|| body.get("system"))
        .or_else(|| body.get("instructions"))
    {
        Some(Value::String(text)) => text.clone(),
        Some(blocks) => blocks.to_string(),
        None => String::new(),
    }
}

/// Answers one request; returns whether the connection stays open.
async fn handle(socket: &mut TcpStream, request: RecordedRequest, shared: &Shared) -> bool {
    let format = match (request.method.as_str(), request.path.split('?').next().unwrap_or("")) {
        ("POST", path) if path.ends_with("/chat/completions") => Some(Format::OpenAi),
        ("POST", path) if path.ends_with("/v1/messages") => Some(Format::Anthropic),
        ("POST", path) if path.ends_with("/responses") => Some(Format::Responses),
        _ => None,
    };
    let model = request
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock")
        .to_string();
    let prompt_tokens = request.body_bytes.div_ceil(4) as u64;
    let system = system_prompt(&request.body);
    let path = request.path.clone();
    let violation = format.and_then(|f| rules::violation(f, &request.body));
    let number = {
        let mut requests = lock(&shared.requests);
        requests.push(request);
        requests.len()
    };
    let Some(format) = format else {
        let body = json!({"error": {"type": "not_found", "message": format!("no such endpoint: {path}")}});
        return write_plain(socket, 404, None, &body.to_string()).await;
    };
    if let Some(message) = violation {
        let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
        return write_plain(socket, 400, None, &body.to_string()).await;
    }
    let cut = *lock(&shared.drop_every_second);
    if let Some(at) = cut.filter(|_| number % 2 == 1) {
        let mid_stream = match at {
            DropAt::BeforeHeaders => false,
            DropAt::MidStream => true,
            DropAt::Alternately => number % 4 == 3,
        };
        if mid_stream {
            let ctx = Render {
                format,
                model: model.clone(),
                prompt_tokens,
                shared,
            };
            let next = lock(&shared.script).front().cloned();
            let next = next.unwrap_or_else(|| Reply::text("(script exhausted)"));
            // Rendering numbers tool calls; the answer sent whole later must get the same ids.
            let ids = shared.next_call_id.load(std::sync::atomic::Ordering::SeqCst);
            let events = ctx.render(next);
            shared.next_call_id.store(ids, std::sync::atomic::Ordering::SeqCst);
            let half = (events.len() / 2).max(1);
            let _ = write_stream(socket, &events[..half.min(events.len())]).await;
            let _ = socket.shutdown().await;
        }
        return false;
    }
    let mut reply = take_reply(&mut lock(&shared.script), &system);
    while let Reply::Delay(delay, inner) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    let ctx = Render {
        format,
        model,
        prompt_tokens,
        shared,
    };
    match reply {
        Reply::Status {
            code,
            retry_after,
            body,
        } => write_plain(socket, code, retry_after, &body).await,
        Reply::DropMidStream(text) => {
            let stream = ctx.answer(Answer::text(text, "stop"));
            let _ = write_stream(socket, &stream.events[..stream.content_end]).await;
            let _ = socket.shutdown().await;
            false
        }
        Reply::Stall(text) => {
            let stream = ctx.answer(Answer::text(text, "stop"));
            if write_stream(socket, &stream.events[..stream.content_end]).await {
                // Hold the connection open, silent, until the client gives up on it.
                let mut scratch = [0u8; 1024];
                while matches!(socket.read(&mut scratch).await, Ok(n) if n > 0) {}
            }
            false
        }
        Reply::KeepAlive(text) => {
            let stream = ctx.answer(Answer::text(text, "stop"));
            if write_stream(socket, &stream.events[..stream.content_end]).await {
                let ping = match format {
                    Format::OpenAi | Format::Responses => ": keep-alive\n\n\n",
                    Format::Anthropic => "event: ping\ndata: {\"type\": \"ping\"}\n\n: keep-alive\n\n",
                };
                while write_event(socket, ping).await {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
            false
        }
        Reply::RawBody { content_type, body } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await.is_ok()
                && socket.write_all(&body).await.is_ok()
                && socket.flush().await.is_ok()
        }
        Reply::Paced { text, per_second } => {
            let stream = ctx.answer(Answer::text(text, "stop"));
            write_paced(socket, &stream.events, stream.content_end, per_second).await && finish_stream(socket).await
        }
        other => {
            let events = ctx.render(other);
            write_stream(socket, &events).await && finish_stream(socket).await
        }
    }
}

async fn write_plain(socket: &mut TcpStream, code: u16, retry_after: Option<u64>, body: &str) -> bool {
    let reason = match code {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Mock Status",
    };
    let retry = retry_after.map(|s| format!("Retry-After: {s}\r\n")).unwrap_or_default();
    let response = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{retry}\r\n{body}",
        body.len()
    );
    socket.write_all(response.as_bytes()).await.is_ok() && socket.flush().await.is_ok()
}

/// Writes the response head and `events` as chunked SSE, each event split across two chunks: just inside its first
/// multi-byte character if it has one, else in the middle of the line.
async fn write_stream(socket: &mut TcpStream, events: &[String]) -> bool {
    if !write_head(socket).await {
        return false;
    }
    for event in events {
        if !write_event(socket, event).await {
            return false;
        }
    }
    true
}

/// Like `write_stream`, but the content events (`events[..content_end]`) go out `per_second` a second, each at its
/// slot of a fixed schedule from the first, so timer lateness does not slow the overall rate.
async fn write_paced(socket: &mut TcpStream, events: &[String], content_end: usize, per_second: u32) -> bool {
    if !write_head(socket).await {
        return false;
    }
    let start = tokio::time::Instant::now();
    let interval = Duration::from_secs(1) / per_second.max(1);
    for (i, event) in events.iter().enumerate() {
        if i < content_end {
            tokio::time::sleep_until(start + interval * i as u32).await;
        }
        if !write_event(socket, event).await {
            return false;
        }
    }
    true
}

async fn write_head(socket: &mut TcpStream) -> bool {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
                Transfer-Encoding: chunked\r\n\r\n";
    socket.write_all(head.as_bytes()).await.is_ok()
}

async fn write_event(socket: &mut TcpStream, event: &str) -> bool {
    let bytes = event.as_bytes();
    let cut = bytes
        .iter()
        .position(|b| !b.is_ascii())
        .map_or(bytes.len() / 2, |i| i + 1);
    for piece in [&bytes[..cut], &bytes[cut..]] {
        if piece.is_empty() {
            continue;
        }
        let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
        chunk.extend_from_slice(piece);
        chunk.extend_from_slice(b"\r\n");
        if socket.write_all(&chunk).await.is_err() || socket.flush().await.is_err() {
            return false;
        }
    }
    true
}

async fn finish_stream(socket: &mut TcpStream) -> bool {
    socket.write_all(b"0\r\n\r\n").await.is_ok() && socket.flush().await.is_ok()
}
