//! The legacy HTTP+SSE transport of MCP 2024-11-05, which rmcp no longer ships but many deployed servers still speak:
//! GET the SSE URL, wait for the `endpoint` event naming where to POST, then POST each JSON-RPC message there while
//! every answer and notification arrives as a `message` event on the open stream.
//!
//! Memory stays bounded against a server that floods: messages pass through a small bounded channel, so a client that
//! reads slowly makes the reader stop reading the socket (TCP back-pressure) instead of queueing without limit, and the
//! shared SSE decoder caps a single event at 16 MiB.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use tern_http::error_chain;
use tern_http::sse::{SseDecoder, SseEvent};

/// Messages read ahead of the client.
const CHANNEL_CAPACITY: usize = 64;
/// A POST only hands a message over (the answer comes on the stream), so it is quick or broken.
const POST_TIMEOUT: Duration = Duration::from_secs(60);
/// What `connect` answers when the server wants credentials (HTTP 401), so the caller can say how to log in.
pub(crate) const UNAUTHORIZED: &str = "the server requires authorization (HTTP 401)";
/// How much of an error body is quoted.
const MAX_ERROR_BODY: usize = 400;

#[derive(Debug, thiserror::Error)]
pub(crate) enum SseError {
    #[error("cannot POST to {url}: {message}")]
    Post { url: String, message: String },
    #[error("POST {url} answered {status}{body}")]
    Status { url: String, status: u16, body: String },
    #[error("cannot encode the message: {0}")]
    Encode(#[from] serde_json::Error),
}

pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: HeaderMap,
    rx: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

impl SseTransport {
    /// Opens the stream and waits for the `endpoint` event. The caller bounds the wait.
    pub(crate) async fn connect(client: reqwest::Client, url: &str, headers: HeaderMap) -> Result<Self, String> {
        let url = reqwest::Url::parse(url).map_err(|e| format!("invalid URL {url:?}: {e}"))?;
        let response = client
            .get(url.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| format!("cannot connect to {url}: {}", error_chain(&e)))?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(UNAUTHORIZED.to_string());
        }
        if !status.is_success() {
            let body = error_body(response).await;
            return Err(format!("GET {url} answered {status}{body}"));
        }
        let mut stream = response.bytes_stream();
        let mut decoder = SseDecoder::new();
        let mut early = Vec::new();
        let endpoint = 'found: loop {
            let chunk = match stream.next().await {
                Some(Ok(chunk)) => chunk,
                Some(Err(e)) => return Err(format!("the event stream from {url} failed: {}", error_chain(&e))),
                None => {
                    return Err(format!(
                        "the event stream from {url} ended before it announced the message endpoint"
                    ));
                }
            };
            let events = decoder
                .feed(&chunk)
                .map_err(|e| format!("the event stream from {url}: {e}"))?;
            let mut events = events.into_iter();
            while let Some(event) = events.next() {
                if event.event == "endpoint" {
                    early.extend(events);
                    break 'found event.data;
                }
                early.push(event);
            }
        };
        let endpoint = url
            .join(endpoint.trim())
            .map_err(|e| format!("{url} announced an invalid endpoint {endpoint:?}: {e}"))?;
        // The token and headers go to the endpoint too: it must not send them to another host.
        if endpoint.origin() != url.origin() {
            return Err(format!(
                "{url} announced an endpoint on another origin ({endpoint}); refused"
            ));
        }
        let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
        let reader = tokio::spawn(read_events(stream, decoder, early, tx));
        Ok(Self {
            client,
            endpoint,
            headers,
            rx,
            reader,
        })
    }
}

/// Forwards `message` events until the stream ends or the transport is dropped.
async fn read_events<S>(
    mut stream: S,
    mut decoder: SseDecoder,
    early: Vec<SseEvent>,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
) where
    S: futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin,
{
    for event in early {
        if !forward(event, &tx).await {
            return;
        }
    }
    loop {
        let events = match stream.next().await {
            Some(Ok(chunk)) => match decoder.feed(&chunk) {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(error = %e, "MCP SSE stream dropped");
                    return;
                }
            },
            Some(Err(e)) => {
                tracing::info!(error = %error_chain(&e), "MCP SSE stream failed");
                return;
            }
            None => {
                for event in decoder.finish() {
                    if !forward(event, &tx).await {
                        return;
                    }
                }
                tracing::info!("MCP SSE stream ended");
                return;
            }
        };
        for event in events {
            if !forward(event, &tx).await {
                return;
            }
        }
    }
}

/// Sends one event on if it is a JSON-RPC message; false when the transport is gone.
async fn forward(event: SseEvent, tx: &mpsc::Sender<ServerJsonRpcMessage>) -> bool {
    if !(event.event.is_empty() || event.event == "message") {
        return true;
    }
    match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
        Ok(message) => tx.send(message).await.is_ok(),
        Err(e) => {
            tracing::warn!(error = %e, "MCP SSE server sent an invalid message; skipped");
            true
        }
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        let url = self.endpoint.to_string();
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .timeout(POST_TIMEOUT);
        let body = serde_json::to_vec(&item);
        async move {
            let response = request.body(body?).send().await.map_err(|e| SseError::Post {
                url: url.clone(),
                message: error_chain(&e),
            })?;
            let status = response.status();
            if !status.is_success() {
                let body = error_body(response).await;
                return Err(SseError::Status {
                    url,
                    status: status.as_u16(),
                    body,
                });
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.rx.recv().await
    }

    async fn close(&mut self) -> Result<(), SseError> {
        self.reader.abort();
        self.rx.close();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// `: <start of the body>` for an error message, or nothing. Reads at most a few KiB of it.
async fn error_body(response: reqwest::Response) -> String {
    let mut bytes = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() >= MAX_ERROR_BODY * 4 {
            break;
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let cut: String = text.chars().take(MAX_ERROR_BODY).collect();
    format!(": {cut}")
}
