//! LLM providers: one module per wire format (OpenAI Chat Completions, Anthropic Messages) behind the `Provider`
//! trait. A provider streams one completion: text, reasoning and tool-call starts go out live as `ProviderEvent`s,
//! and the whole answer comes back as a `Completion`. Transient failures (429, 5xx, dropped or stalled streams, an
//! attempt past its overall deadline before any output) are retried here with backoff, each retry announced so
//! consumers drop the failed attempt's partial output; cancellation stops everything at once. A 200 response that is
//! not an answer in the expected format is an error (`Decode`), never an empty answer.
//!
//! Usage accounting is the same for both formats: `input_tokens` is everything the prompt counted, and
//! `cache_read_tokens` / `cache_write_tokens` are the parts of it read from or written to the prompt cache.
//!
//! This module never logs or displays an API key.

mod anthropic;
mod anthropic_stream;
mod caps;
pub mod models;
mod openai;
mod reasoning;
mod responses;
pub(crate) mod retry;
mod stream_thread;
mod transport;
mod wire;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use tern_protocol::ToolDefinition;
use tern_protocol::{FinishReason, Message, Reasoning, ToolCall, Usage};

pub use reasoning::{ReasoningEffort, Thinking, WireApi};
pub use retry::RetryPolicy;
pub use wire::{Encoded, History, PreparedRequest};

/// One request to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The model to ask; empty means the provider's configured model.
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    /// The output limit; `None` means the configured limit (and for Anthropic, which requires one, 8192).
    pub max_tokens: Option<u32>,
}

impl ChatRequest {
    /// The same request with no message encoded yet.
    pub fn prepared(&self) -> PreparedRequest<'_> {
        PreparedRequest {
            model: &self.model,
            system: &self.system,
            messages: &self.messages,
            encoded: &[],
            tools: &self.tools,
            max_tokens: self.max_tokens,
            history: None,
        }
    }
}

/// What a provider reports while a completion streams.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    TextDelta(String),
    ReasoningDelta(String),
    /// A tool call began: `index` is its position in `Completion::tool_calls` order of appearance, so a UI can show
    /// the call while its arguments are still being written.
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    /// The attempt failed and attempt number `attempt` (2 for the first retry) follows after `delay`. The consumer
    /// must discard any text or reasoning the failed attempt delivered: the next attempt starts the answer afresh.
    /// Attempts are retried even after text went out (a dropped connection should not cost the turn), except when
    /// the request deadline ran out mid-answer, where another attempt would most likely run out again.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
}

/// Which stream a delta belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta {
    Text,
    Reasoning,
}

impl ProviderEvent {
    /// Adds a `kind` delta to `events`: onto the last event when that is a delta of the same kind, else as a new
    /// one. How runs of deltas are joined wherever they are held (a chunk's `transport::Outbox`, the turn's batch).
    pub fn append_delta(events: &mut Vec<ProviderEvent>, kind: Delta, text: std::borrow::Cow<'_, str>) {
        match (events.last_mut(), kind) {
            (Some(ProviderEvent::TextDelta(held)), Delta::Text)
            | (Some(ProviderEvent::ReasoningDelta(held)), Delta::Reasoning) => held.push_str(&text),
            (_, Delta::Text) => events.push(ProviderEvent::TextDelta(text.into_owned())),
            (_, Delta::Reasoning) => events.push(ProviderEvent::ReasoningDelta(text.into_owned())),
        }
    }
}

/// The model's whole answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub content: String,
    pub reasoning: Option<Reasoning>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Usage,
}

#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// The provider: "openai" (whichever of its APIs is spoken) or "anthropic".
    fn name(&self) -> &str;
    fn model(&self) -> &str;
    /// Streams one completion. Live events go to `events` (a closed receiver is fine); cancelling `cancel` aborts
    /// the request, the stream or a retry pause at once with `ProviderError::Cancelled`. The request borrows the
    /// conversation and the wire forms `encode` made of its messages (`ChatRequest::prepared` makes one of an owned
    /// request), so an HTTP provider splices stored bytes into the body instead of serialising the history again.
    async fn complete(
        &self,
        request: &PreparedRequest<'_>,
        events: &UnboundedSender<ProviderEvent>,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError>;

    /// One message in this provider's wire format, made once and passed back in every later `PreparedRequest` so a
    /// request does not serialise the whole history again. `None` (the default) when the provider has no such form.
    fn encode(&self, _message: &Message) -> Option<Encoded> {
        None
    }
}

/// One wire format: how a request's body is made and what its stream means. The HTTP exchange, retries and
/// cancellation are `transport::Transport`'s, and `Provider` is implemented once, for every format (`Http`).
pub(crate) trait WireFormat: Send + Sync + 'static {
    /// The provider, as sessions name it (not the API: a session may switch between OpenAI's two).
    const PROVIDER: &'static str;
    /// Reads one response's stream.
    type Stream: transport::StreamHandler + Default;
    fn model(&self) -> &str;
    fn transport(&self) -> &transport::Transport;
    /// The request's body.
    fn body(&self, request: &PreparedRequest<'_>) -> Result<bytes::Bytes, ProviderError>;
    /// One message's wire form.
    fn encode(message: &Message) -> Result<Encoded, ProviderError>;
}

/// A provider over HTTP that speaks wire format `F`.
pub(crate) struct Http<F>(pub(crate) F);

#[async_trait::async_trait]
impl<F: WireFormat> Provider for Http<F> {
    fn name(&self) -> &str {
        F::PROVIDER
    }

    fn model(&self) -> &str {
        self.0.model()
    }

    async fn complete(
        &self,
        request: &PreparedRequest<'_>,
        events: &UnboundedSender<ProviderEvent>,
        cancel: &CancellationToken,
    ) -> Result<Completion, ProviderError> {
        let body = self.0.body(request)?;
        self.0
            .transport()
            .complete(body, F::Stream::default, events, cancel)
            .await
    }

    fn encode(&self, message: &Message) -> Option<Encoded> {
        F::encode(message).ok()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("the request was cancelled")]
    Cancelled,
    /// A non-success status. `body` is the error message from the response body (with a hint for 401 and 404).
    #[error("HTTP {status}: {body}")]
    Http { status: u16, body: String },
    #[error("could not reach the provider: {0}")]
    Connect(String),
    #[error("the provider sent nothing for {secs:.1} s (idle timeout)", secs = .0.as_secs_f64())]
    Stalled(Duration),
    /// The attempt as a whole took longer than `RetryPolicy::request_timeout`, keep-alives or not.
    #[error(
        "the request took longer than its {secs:.1} s deadline (request_timeout_secs in [retry])",
        secs = .0.as_secs_f64()
    )]
    Deadline(Duration),
    /// The response body broke off or ended before the answer was complete.
    #[error("the response stream broke: {0}")]
    Stream(String),
    #[error("could not understand the provider's response: {0}")]
    Decode(String),
    /// An error the provider reported inside a successful response (an `error` event).
    #[error("the provider reported an error ({kind}): {message}")]
    Api { kind: String, message: String },
    /// The prompt does not fit the model's context window. Never retried as it is: the conversation must shrink
    /// first (the agent compacts it and tries once more).
    #[error("the conversation is too long for the model's context window: {0}")]
    ContextOverflow(String),
    #[error("gave up after {attempts} attempts; last error: {last}")]
    RetriesExhausted { attempts: u32, last: Box<ProviderError> },
    #[error("invalid provider configuration: {0}")]
    Config(String),
    /// The provider's public endpoint was configured with no key: nothing is sent.
    #[error("no API key: set {env} or api_key in config, or use --demo")]
    NoKey { env: &'static str },
    /// The provider's host name does not resolve. Not retried: a name that does not resolve now will not in a
    /// second either, and five attempts only delay the message.
    #[error("cannot resolve the provider's host name (check base_url and the network): {0}")]
    Dns(String),
    /// A streamed answer passed a size cap (`caps`): the stream was dropped. Never retried: the same request would
    /// most likely grow the same way.
    #[error("the model's {what} passed {limit_mb} MB; the turn was stopped")]
    TooLarge { what: &'static str, limit_mb: usize },
}

impl ProviderError {
    /// Whether sending the same request again may succeed.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Http { status, .. } => retry::is_retryable_status(*status),
            // A deadline hit while the answer was already streaming is not retried (the transport says so): the
            // next attempt would most likely run out of time at the same point.
            ProviderError::Connect(_)
            | ProviderError::Stalled(_)
            | ProviderError::Deadline(_)
            | ProviderError::Stream(_) => true,
            ProviderError::Api { kind, .. } => {
                let kind = kind.to_ascii_lowercase();
                [
                    "overloaded",
                    "rate_limit",
                    "server_error",
                    "api_error",
                    "timeout",
                    "internal",
                ]
                .iter()
                .any(|k| kind.contains(k))
            }
            ProviderError::Cancelled
            | ProviderError::ContextOverflow(_)
            | ProviderError::Decode(_)
            | ProviderError::RetriesExhausted { .. }
            | ProviderError::Config(_)
            | ProviderError::NoKey { .. }
            | ProviderError::Dns(_)
            | ProviderError::TooLarge { .. } => false,
        }
    }
}

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI Chat Completions: OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio, DeepSeek ...
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    /// OpenAI's base URL includes `/v1`; Anthropic's does not.
    pub(crate) fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable that conventionally holds this provider's key.
    pub(crate) fn api_key_env(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" => Ok(ProviderKind::OpenAi),
            "anthropic" => Ok(ProviderKind::Anthropic),
            other => Err(format!("unknown provider {other:?}: expected openai or anthropic")),
        }
    }
}

/// Everything needed to talk to one provider.
#[derive(Clone, PartialEq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// OpenAI: up to and including `/v1`; Anthropic: without `/v1`.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub max_tokens: Option<u32>,
    pub retry: RetryPolicy,
    /// Extra request headers (e.g. OpenRouter's `HTTP-Referer`); they override the defaults.
    pub headers: Vec<(String, String)>,
    /// How much the model should think, for every model of this provider that can (the model catalog may say
    /// otherwise per model; see `crate::models::Catalog::thinking`).
    pub thinking: Thinking,
    /// Which OpenAI API to speak: Chat Completions (the default) or Responses.
    pub wire_api: WireApi,
    /// What tern knows of models (the built-in catalog with the user's entries): how each may think, its output
    /// limit, its prices.
    pub catalog: std::sync::Arc<models::Catalog>,
}

impl ProviderConfig {
    /// A configuration with the provider's default base URL, no key, and default limits.
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> Self {
        Self {
            kind,
            base_url: kind.default_base_url().to_string(),
            api_key: None,
            model: model.into(),
            max_tokens: None,
            retry: RetryPolicy::default(),
            headers: Vec::new(),
            thinking: Thinking::default(),
            wire_api: WireApi::default(),
            catalog: std::sync::Arc::new(models::Catalog::builtin().clone()),
        }
    }

    /// Whether requests would go to the provider's public endpoint without a key: refused before any is sent.
    fn lacks_key(&self) -> bool {
        let keyed = self.api_key.as_deref().is_some_and(|k| !k.trim().is_empty())
            || self
                .headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("x-api-key"));
        !keyed && reasoning::is_public_endpoint(&self.base_url)
    }
}

/// Keeps the key (and header values, which may hold keys too) out of logs and error reports.
impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("retry", &self.retry)
            .field("headers", &headers)
            .field("thinking", &self.thinking)
            .field("wire_api", &self.wire_api)
            .finish()
    }
}

/// Builds the provider a configuration describes. Fails on a configuration that cannot work: a malformed base URL or
/// header, or no key for a provider's public endpoint (which would only answer 401; local and custom servers may go
/// without a key).
pub fn build(config: &ProviderConfig) -> Result<Arc<dyn Provider>, ProviderError> {
    if config.lacks_key() {
        return Err(ProviderError::NoKey {
            env: config.kind.api_key_env(),
        });
    }
    Ok(match (config.kind, config.wire_api) {
        (ProviderKind::OpenAi, WireApi::Chat) => Arc::new(Http(openai::OpenAiProvider::new(config)?)),
        (ProviderKind::OpenAi, WireApi::Responses) => Arc::new(Http(responses::ResponsesProvider::new(config)?)),
        // `wire_api` chooses between OpenAI's APIs; Anthropic has one.
        (ProviderKind::Anthropic, _) => Arc::new(Http(anthropic::AnthropicProvider::new(config)?)),
    })
}

/// The assembled argument text of a tool call as a JSON value. Empty means no arguments; text that is not JSON is
/// kept as a string so the registry can tell the model its arguments were invalid.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// A tool call id for servers that send none: unique enough to pair a call with its result within a conversation.
pub(crate) fn generated_call_id() -> String {
    let suffix: String = std::iter::repeat_with(fastrand::alphanumeric).take(16).collect();
    format!("call_{suffix}")
}

/// The start of an event's data, for a log line about it.
pub(crate) fn sse_excerpt(data: &str) -> &str {
    match data.char_indices().nth(200) {
        Some((cut, _)) => data.get(..cut).unwrap_or(data),
        None => data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_print() {
        assert_eq!("openai".parse::<ProviderKind>(), Ok(ProviderKind::OpenAi));
        assert_eq!(" Anthropic ".parse::<ProviderKind>(), Ok(ProviderKind::Anthropic));
        assert!(
            "gemini"
                .parse::<ProviderKind>()
                .unwrap_err()
                .contains("openai or anthropic")
        );
        assert_eq!(ProviderKind::OpenAi.to_string(), "openai");
        let kind: ProviderKind = serde_json::from_str("\"anthropic\"").unwrap();
        assert_eq!(kind, ProviderKind::Anthropic);
        assert_eq!(serde_json::to_string(&ProviderKind::OpenAi).unwrap(), "\"openai\"");
    }

    #[test]
    fn debug_output_hides_the_key() {
        let mut config = ProviderConfig::new(ProviderKind::OpenAi, "m");
        config.api_key = Some("sk-secret-123".into());
        config.headers.push(("X-Token".into(), "hidden-value".into()));
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("sk-secret-123") && !shown.contains("hidden-value"),
            "{shown}"
        );
        assert!(shown.contains("<redacted>") && shown.contains("X-Token"));
    }

    #[test]
    fn arguments_parse_or_stay_raw() {
        assert_eq!(parse_arguments(""), serde_json::json!({}));
        assert_eq!(parse_arguments(" {\"a\": 1} "), serde_json::json!({"a": 1}));
        assert_eq!(parse_arguments("{\"a\": "), Value::String("{\"a\": ".into()));
    }

    #[test]
    fn retryable_errors() {
        assert!(ProviderError::Stalled(Duration::from_secs(1)).is_retryable());
        assert!(ProviderError::Deadline(Duration::from_secs(1)).is_retryable());
        assert!(!ProviderError::Decode("not an event stream".into()).is_retryable());
        assert!(ProviderError::Stream("torn".into()).is_retryable());
        assert!(
            ProviderError::Http {
                status: 529,
                body: String::new()
            }
            .is_retryable()
        );
        assert!(
            !ProviderError::Http {
                status: 401,
                body: String::new()
            }
            .is_retryable()
        );
        let overloaded = ProviderError::Api {
            kind: "overloaded_error".into(),
            message: "busy".into(),
        };
        assert!(overloaded.is_retryable());
        let invalid = ProviderError::Api {
            kind: "invalid_request_error".into(),
            message: "no".into(),
        };
        assert!(!invalid.is_retryable());
        assert!(!ProviderError::Cancelled.is_retryable());
    }

    #[test]
    fn context_overflow_is_never_retried() {
        assert!(!ProviderError::ContextOverflow("prompt is too long".into()).is_retryable());
    }

    #[test]
    fn no_request_to_a_public_endpoint_without_a_key() {
        for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
            let err = build(&ProviderConfig::new(kind, "m")).err().map(|e| e.to_string());
            let expected = format!(
                "no API key: set {} or api_key in config, or use --demo",
                kind.api_key_env()
            );
            assert_eq!(err.as_deref(), Some(expected.as_str()));
        }
        let mut responses = ProviderConfig::new(ProviderKind::OpenAi, "gpt-5");
        responses.wire_api = WireApi::Responses;
        assert!(matches!(build(&responses), Err(ProviderError::NoKey { .. })));
        // A blank key is no key; a key in a configured header is one.
        let mut blank = ProviderConfig::new(ProviderKind::OpenAi, "m");
        blank.api_key = Some("  ".into());
        assert!(matches!(build(&blank), Err(ProviderError::NoKey { .. })));
        let mut header = ProviderConfig::new(ProviderKind::Anthropic, "m");
        header.headers.push(("X-Api-Key".into(), "k".into()));
        assert!(build(&header).is_ok());
        // Local servers and other hosts may go without a key.
        for base_url in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080/v1",
            "https://llm.example.com/v1",
        ] {
            let mut local = ProviderConfig::new(ProviderKind::OpenAi, "m");
            local.base_url = base_url.into();
            assert!(build(&local).is_ok(), "{base_url}");
        }
        let mut anthropic = ProviderConfig::new(ProviderKind::Anthropic, "m");
        anthropic.api_key = Some("k".into());
        anthropic.wire_api = WireApi::Responses;
        assert_eq!(
            build(&anthropic).map(|p| p.name().to_string()).ok().as_deref(),
            Some("anthropic")
        );
        assert!(!ProviderError::NoKey { env: "X" }.is_retryable());
        assert!(!ProviderError::Dns("no such host".into()).is_retryable());
    }

    #[test]
    fn build_rejects_a_bad_base_url() {
        let mut config = ProviderConfig::new(ProviderKind::OpenAi, "m");
        config.base_url = "not a url".into();
        let err = build(&config).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("not a url"), "{err}");
        config.base_url = "ftp://example.com".into();
        assert!(build(&config).is_err());
        let mut keyed = ProviderConfig::new(ProviderKind::Anthropic, "claude");
        keyed.api_key = Some("sk-ant-test".into());
        let ok = build(&keyed).unwrap();
        assert_eq!((ok.name(), ok.model()), ("anthropic", "claude"));
    }
}
