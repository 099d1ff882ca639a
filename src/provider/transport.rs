//! The HTTP side shared by both wire formats: the reqwest client (rustls with ring), one POST per attempt (sent and
//! read on the stream thread, `stream_thread`), the timed read of the event stream (an idle timeout that any bytes reset, and an overall deadline that nothing
//! resets), telling a broken stream from one that was never an answer, and turning HTTP failures into errors a person
//! can act on. The format modules only build request bodies and interpret events (`StreamHandler`).

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION, USER_AGENT};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::{Instant, timeout_at};
use tokio_util::sync::CancellationToken;

use super::retry::{self, Failure, RetryPolicy};
use super::stream_thread::{self, Body, SendError};
use super::{Completion, Delta, ProviderConfig, ProviderError, ProviderEvent, ProviderKind};
use tern_http::error_chain;
use tern_http::sse::{SseDecoder, SseEvent};

/// Interprets one attempt's events for a wire format.
pub(crate) trait StreamHandler: Send {
    /// Takes one event; returns `true` when it marks the end of the answer.
    fn on_event(&mut self, event: SseEvent, events: &mut Outbox<'_>) -> Result<bool, ProviderError>;
    /// Whether what arrived is a whole answer although the end marker did not (some servers omit it).
    fn is_complete(&self) -> bool;
    /// Whether any event of an answer in this format arrived. A body without one was never an answer (an HTML page,
    /// another API), which is an error even when it carried an end marker, not an empty answer.
    fn has_message(&self) -> bool;
    /// Whether text, reasoning or a tool call went out to the consumer.
    fn has_output(&self) -> bool;
    fn finish(self) -> Completion;
}

/// What a handler passes on while it reads a chunk of the body. Runs of text or reasoning deltas are joined, and all
/// of it goes to the consumer when the chunk has been read (or the outbox is dropped): one message per chunk, not one
/// per token, and no copy of each token of its own. A fast stream's chunks are the stream thread's batches.
pub(crate) struct Outbox<'a> {
    to: &'a UnboundedSender<ProviderEvent>,
    held: Vec<ProviderEvent>,
}

impl<'a> Outbox<'a> {
    pub(crate) fn new(to: &'a UnboundedSender<ProviderEvent>) -> Self {
        Self { to, held: Vec::new() }
    }

    pub(crate) fn text(&mut self, text: &str) {
        ProviderEvent::append_delta(&mut self.held, Delta::Text, text.into());
    }

    pub(crate) fn reasoning(&mut self, text: &str) {
        ProviderEvent::append_delta(&mut self.held, Delta::Reasoning, text.into());
    }

    /// Any other event, in order with the deltas.
    pub(crate) fn push(&mut self, event: ProviderEvent) {
        self.held.push(event);
    }

    /// Sends what is held (a closed receiver is fine).
    pub(crate) fn flush(&mut self) {
        for event in self.held.drain(..) {
            let _ = self.to.send(event);
        }
    }
}

impl Drop for Outbox<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The most of an error body kept: enough for any real error message.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// The longest error message passed on.
const MAX_MESSAGE_CHARS: usize = 2000;
/// How much of a body that is not an event stream is quoted in the error.
const EXCERPT_BYTES: usize = 300;

/// The time limits of one attempt: no silence longer than `idle`, and no more than `total` in all, however steadily
/// the server sends keep-alives.
struct Limits {
    idle: Duration,
    total: Duration,
    deadline: Instant,
}

impl Limits {
    fn start(policy: &RetryPolicy) -> Self {
        let now = Instant::now();
        Self {
            idle: policy.idle_timeout,
            total: policy.request_timeout,
            // A limit too large to add is no limit; a year stands in for it.
            deadline: now
                .checked_add(policy.request_timeout)
                .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600)),
        }
    }

    /// Waits for `future` until the idle timeout or the deadline, whichever comes first, and names the one that hit.
    async fn wait<F: std::future::Future>(&self, future: F) -> Result<F::Output, ProviderError> {
        let idle_end = Instant::now().checked_add(self.idle).unwrap_or(self.deadline);
        if self.deadline <= idle_end {
            timeout_at(self.deadline, future)
                .await
                .map_err(|_| ProviderError::Deadline(self.total))
        } else {
            timeout_at(idle_end, future)
                .await
                .map_err(|_| ProviderError::Stalled(self.idle))
        }
    }
}

pub(crate) struct Transport {
    client: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    policy: RetryPolicy,
    kind: ProviderKind,
    model: String,
}

impl Transport {
    /// `path` is appended to the configured base URL; `auth` holds the provider's own headers (key, version).
    pub(crate) fn new(config: &ProviderConfig, path: &str, auth: HeaderMap) -> Result<Self, ProviderError> {
        let base = config.base_url.trim().trim_end_matches('/');
        let url = Url::parse(&format!("{base}{path}"))
            .map_err(|e| ProviderError::Config(format!("base URL {base:?} is not a valid URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ProviderError::Config(format!(
                "base URL {base:?} must start with http:// or https://"
            )));
        }
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("tern/", env!("CARGO_PKG_VERSION"))),
        );
        headers.extend(auth);
        for (name, value) in &config.headers {
            let header = HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| ProviderError::Config(format!("header name {name:?} is not valid")))?;
            // The value is not echoed: it may be a key.
            let mut value = HeaderValue::from_str(value.trim())
                .map_err(|_| ProviderError::Config(format!("the value of header {name:?} is not valid")))?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        Ok(Self {
            client: client(&config.retry, url.scheme() == "https")?,
            url,
            headers,
            policy: config.retry.clone(),
            kind: config.kind,
            model: config.model.clone(),
        })
    }

    /// Sends `body` and streams the answer through a fresh handler per attempt, retrying per the policy.
    pub(crate) async fn complete<H: StreamHandler>(
        &self,
        body: Bytes,
        new_handler: impl Fn() -> H,
        events: &UnboundedSender<ProviderEvent>,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        retry::run(&self.policy, events, cancel, |number| {
            self.attempt(number, body.clone(), new_handler(), events)
        })
        .await
    }

    async fn attempt<H: StreamHandler>(
        &self,
        number: u32,
        body: Bytes,
        mut handler: H,
        events: &UnboundedSender<ProviderEvent>,
    ) -> Result<Completion, Failure> {
        let limits = Limits::start(&self.policy);
        tracing::debug!(provider = %self.kind, model = %self.model, url = %self.url, attempt = number, "request");
        let request = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .body(body);
        let (head, mut body) = match limits.wait(stream_thread::send(request)).await? {
            // A host name that does not resolve fails at once: retrying it only delays the message.
            Err(SendError::Http(e)) if e.is_dns() => return Err(ProviderError::Dns(error_chain(&e)).into()),
            Err(SendError::Http(e)) => return Err(ProviderError::Connect(error_chain(&e)).into()),
            Err(SendError::Lost) => {
                return Err(ProviderError::Connect("the request ended without an answer".into()).into());
            }
            Err(SendError::NoThread(why)) => return Err(ProviderError::Connect(why).into()),
            Ok(sent) => sent,
        };
        let status = head.status.as_u16();
        if !head.status.is_success() {
            let retry_after = retry::retry_after(&head.headers, SystemTime::now());
            let should_retry = retry::should_retry_header(&head.headers);
            let location = head
                .headers
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let text = read_body(&mut body, &limits).await;
            let message = match location {
                // Redirects are not followed: a POST would turn into a GET, or http into https.
                Some(to) if (300..400).contains(&status) => {
                    Some(format!("the server redirects to {to}; use that as the base URL"))
                }
                _ => error_message(&text),
            };
            // The raw body too: OpenAI puts `context_length_exceeded` in the error's code, not its message.
            if retry::is_context_overflow(Some(status), &text) {
                return Err(ProviderError::ContextOverflow(message.unwrap_or(text)).into());
            }
            return Err(Failure {
                error: ProviderError::Http {
                    status,
                    body: self.describe(status, message),
                },
                retry_after,
                should_retry,
            });
        }
        if is_json(&head.headers) {
            // A server that ignored `stream: true` or reports an error with a 200.
            let text = read_body(&mut body, &limits).await;
            return Err(match error_message(&text) {
                Some(message) => ProviderError::Api {
                    kind: "error".into(),
                    message,
                },
                None => ProviderError::Decode(format!(
                    "expected an event stream but got a JSON document: {}",
                    truncate(&text, 300)
                )),
            }
            .into());
        }
        match self.read_stream(&mut body, &limits, &mut handler, events).await {
            Ok(()) => Ok(handler.finish()),
            // Out of time after part of the answer went out: another attempt would most likely run out at the same
            // point, and the consumer would have to throw away what it showed for nothing.
            Err(error @ ProviderError::Deadline(_)) if handler.has_output() => Err(Failure {
                should_retry: Some(false),
                ..Failure::from(error)
            }),
            Err(error) => Err(error.into()),
        }
    }

    /// Feeds the body's events to `handler` until the answer is whole; an error says why it is not.
    async fn read_stream<H: StreamHandler>(
        &self,
        body: &mut Body,
        limits: &Limits,
        handler: &mut H,
        events: &UnboundedSender<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let mut decoder = SseDecoder::new();
        let mut out = Outbox::new(events);
        // The events of a chunk; one list for all of them.
        let mut decoded = Vec::new();
        // The start of the body, quoted if it turns out not to be an event stream.
        let mut excerpt = Vec::new();
        let mut decoded_any = false;
        let mut take = |event: SseEvent, handler: &mut H, out: &mut Outbox<'_>| -> Result<bool, ProviderError> {
            decoded_any = true;
            if !handler.on_event(event, out)? {
                return Ok(false);
            }
            if handler.has_message() {
                Ok(true)
            } else {
                Err(ProviderError::Decode(format!(
                    "the {} stream ended before any answer began",
                    self.kind
                )))
            }
        };
        loop {
            let chunk = match limits.wait(body.chunk()).await? {
                Err(e) => {
                    return Err(ProviderError::Stream(format!(
                        "the connection broke mid-answer: {}",
                        error_chain(&e)
                    )));
                }
                Ok(None) => break,
                Ok(Some(chunk)) => chunk,
            };
            if excerpt.len() < EXCERPT_BYTES {
                excerpt.extend(chunk.iter().take(EXCERPT_BYTES - excerpt.len()));
            }
            decoder
                .feed_into(&chunk, &mut decoded)
                .map_err(|e| ProviderError::Decode(e.to_string()))?;
            for event in decoded.drain(..) {
                if take(event, handler, &mut out)? {
                    return Ok(());
                }
            }
            out.flush();
        }
        for event in decoder.finish() {
            if take(event, handler, &mut out)? {
                return Ok(());
            }
        }
        if handler.is_complete() {
            return Ok(());
        }
        if handler.has_message() {
            return Err(ProviderError::Stream(
                "the response ended before the answer was complete".into(),
            ));
        }
        let what = if decoded_any {
            format!("its events are not {} stream events", self.kind)
        } else {
            "it is not an event stream".to_string()
        };
        Err(ProviderError::Decode(format!(
            "the provider answered 200 OK but {what}: {:?}",
            truncate(&String::from_utf8_lossy(&excerpt), EXCERPT_BYTES)
        )))
    }

    /// The message for an HTTP error, with what to do about the statuses a person can fix.
    fn describe(&self, status: u16, message: Option<String>) -> String {
        let message = message.unwrap_or_else(|| {
            reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("no error message")
                .to_string()
        });
        match status {
            401 => format!(
                "{message} (the API key is missing or was rejected: set {} or `api_key` / `api_key_env` in \
                 ~/.config/tern/config.toml or .tern/config.toml)",
                self.kind.api_key_env()
            ),
            403 => format!("{message} (the API key is not allowed to use model {:?})", self.model),
            404 => format!(
                "{message} (check the base URL and the model name: POST {} with model {:?})",
                self.url, self.model
            ),
            _ => message,
        }
    }
}

fn client(policy: &RetryPolicy, tls: bool) -> Result<reqwest::Client, ProviderError> {
    let mut builder = tern_http::client_builder()
        .connect_timeout(policy.connect_timeout)
        .redirect(reqwest::redirect::Policy::none());
    if !tls {
        builder = tern_http::without_roots(builder).map_err(ProviderError::Config)?;
    }
    builder
        .build()
        .map_err(|e| ProviderError::Config(format!("cannot set up the HTTP client: {}", error_chain(&e))))
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"))
}

/// Reads up to `MAX_ERROR_BODY` bytes of a body; whatever arrived before a failure, a stall or the deadline is kept.
async fn read_body(response: &mut Body, limits: &Limits) -> String {
    let mut body = Vec::new();
    while let Ok(Ok(Some(chunk))) = limits.wait(response.chunk()).await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BODY {
            body.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    // A server may echo the key it refused; the body becomes error text shown and logged.
    tern_secrets::mask(&String::from_utf8_lossy(&body)).into_owned()
}

/// The human message in an error body: `{"error": {"message"}}` (OpenAI, Anthropic), `{"error": "..."}` (Ollama),
/// `{"message"}` or `{"detail"}`; otherwise the body itself, shortened.
pub(crate) fn error_message(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    let Ok(json) = serde_json::from_str::<Value>(body) else {
        return Some(truncate(body, MAX_MESSAGE_CHARS));
    };
    let error = json.get("error");
    let found = error
        .and_then(|e| e.get("message"))
        .or_else(|| error.filter(|e| e.is_string()))
        .or_else(|| json.get("message"))
        .or_else(|| json.get("detail"))
        .and_then(|m| match m {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        })
        .filter(|m| !m.trim().is_empty());
    Some(truncate(found.as_deref().unwrap_or(body), MAX_MESSAGE_CHARS))
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(event: ProviderEvent) -> String {
        match event {
            ProviderEvent::TextDelta(t) => format!("text:{t}"),
            ProviderEvent::ReasoningDelta(t) => format!("reasoning:{t}"),
            ProviderEvent::ToolCallStarted { index, name, .. } => format!("call:{index}:{name}"),
            ProviderEvent::Retrying { attempt, .. } => format!("retry:{attempt}"),
        }
    }

    #[test]
    fn an_outbox_joins_runs_of_deltas_keeps_their_order_and_sends_on_flush_or_drop() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut out = Outbox::new(&tx);
        out.reasoning("think");
        out.reasoning("ing");
        out.text("Hel");
        out.text("lo");
        out.push(ProviderEvent::ToolCallStarted {
            index: 0,
            id: "c1".into(),
            name: "read".into(),
        });
        out.text(" again");
        assert!(rx.try_recv().is_err(), "nothing goes out before the chunk is read");
        out.flush();
        let sent: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok()).map(shown).collect();
        assert_eq!(sent, ["reasoning:thinking", "text:Hello", "call:0:read", "text: again"]);
        out.text("last");
        drop(out);
        assert_eq!(rx.try_recv().ok().map(shown).as_deref(), Some("text:last"));
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn error_messages_from_every_shape() {
        let openai = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
        assert_eq!(error_message(openai).as_deref(), Some("Incorrect API key provided"));
        let anthropic = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(error_message(anthropic).as_deref(), Some("Overloaded"));
        let ollama = r#"{"error":"model \"qwen\" not found, try pulling it first"}"#;
        assert_eq!(
            error_message(ollama).as_deref(),
            Some("model \"qwen\" not found, try pulling it first")
        );
        assert_eq!(error_message(r#"{"detail":"Not Found"}"#).as_deref(), Some("Not Found"));
        assert_eq!(
            error_message("<html>bad gateway</html>").as_deref(),
            Some("<html>bad gateway</html>")
        );
        assert_eq!(error_message("  "), None);
        let long = "x".repeat(5000);
        assert_eq!(
            error_message(&long).map(|m| m.chars().count()),
            Some(MAX_MESSAGE_CHARS + 1)
        );
    }

    #[test]
    fn http_errors_say_what_to_fix() {
        let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude-x");
        config.api_key = Some("sk-ant-secret".into());
        let transport = Transport::new(&config, "/v1/messages", HeaderMap::new()).unwrap();
        let unauthorized = transport.describe(401, Some("invalid x-api-key".into()));
        assert!(unauthorized.contains("invalid x-api-key") && unauthorized.contains("ANTHROPIC_API_KEY"));
        assert!(!unauthorized.contains("sk-ant-secret"));
        let missing = transport.describe(404, None);
        assert!(missing.contains("Not Found") && missing.contains("https://api.anthropic.com/v1/messages"));
        assert_eq!(transport.describe(500, Some("boom".into())), "boom");
    }

    fn limits(idle_ms: u64, total_ms: u64) -> Limits {
        Limits::start(&RetryPolicy {
            idle_timeout: Duration::from_millis(idle_ms),
            request_timeout: Duration::from_millis(total_ms),
            ..RetryPolicy::default()
        })
    }

    #[tokio::test(start_paused = true)]
    async fn keep_alives_reset_the_idle_timeout_but_not_the_deadline() {
        let limits = limits(100, 300);
        let mut keep_alives = 0;
        let error = loop {
            match limits.wait(tokio::time::sleep(Duration::from_millis(20))).await {
                Ok(()) => keep_alives += 1,
                Err(e) => break e,
            }
        };
        assert!(
            matches!(error, ProviderError::Deadline(d) if d == Duration::from_millis(300)),
            "{error}"
        );
        assert!(error.to_string().contains("0.3 s deadline"), "{error}");
        assert!(keep_alives >= 5, "{keep_alives} keep-alives went through first");
    }

    #[tokio::test(start_paused = true)]
    async fn silence_is_a_stall_before_the_deadline() {
        let error = limits(50, 60_000).wait(std::future::pending::<()>()).await.unwrap_err();
        assert!(matches!(error, ProviderError::Stalled(_)), "{error}");
        let error = limits(60_000, 50).wait(std::future::pending::<()>()).await.unwrap_err();
        assert!(matches!(error, ProviderError::Deadline(_)), "{error}");
        let huge = limits(10, u64::MAX);
        assert_eq!(huge.wait(async { 7 }).await.unwrap(), 7);
    }

    #[test]
    fn bad_headers_are_refused_without_echoing_values() {
        let mut config = ProviderConfig::new(ProviderKind::OpenAi, "m");
        config.headers.push(("X-Secret".into(), "bad\nvalue".into()));
        let err = Transport::new(&config, "/chat/completions", HeaderMap::new())
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("X-Secret") && !err.contains("bad\nvalue"), "{err}");
        config.headers = vec![("bad header".into(), "v".into())];
        assert!(Transport::new(&config, "/chat/completions", HeaderMap::new()).is_err());
    }
}
