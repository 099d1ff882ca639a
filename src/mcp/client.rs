//! One live connection to an MCP server over any of the three transports, on rmcp's client: connecting, the handler
//! that receives the server's notifications, and sending one request with a timeout and cancellation.
//!
//! Notifications never do work in place: a list change only sets a flag the refresher waits on (so a flood of them
//! costs one refresh), progress goes to the calling tool's live output at a bounded rate, and log messages go to the
//! tracing log.
//!
//! The client declares what the session's `ClientSetup` offers: `roots` (the workspace, answered on `roots/list`) and
//! form `elicitation` (a server's request for input goes to the agent and the user; when the answer is not values, the
//! model reads a note about it in the result of the call that was running).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{
    ClientCapabilities, ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation, InitializeRequestParams, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, ServerResult,
};
// Roots are deprecated from protocol 2026-07-28 on (SEP-2577); the servers of today still ask for them.
#[allow(deprecated)]
use rmcp::model::{ListRootsResult, Root, RootsCapabilities};
// Logging is deprecated from protocol 2026-07-28 on, but the servers of today (2025-11-25) still send it.
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{
    ClientInitializeError, NotificationContext, PeerRequestOptions, RequestContext, RequestHandle, RunningService,
};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::config::{HttpConfig, ServerConfig, Transport as TransportConfig};
use super::elicit::{Asking, ClientSetup, file_uri, note_for_model};
use super::oversize::DroppedReplies;
use super::stdio::{ChildProcess, LogLimiter};
use super::tasks::TaskOnly;
use tern_http::error_chain;
use tern_tools::OutputSink;

mod connect;

/// The shortest gap between two progress lines sent to a tool's live output.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(200);
/// How long a cancellation notice may take to go out before we stop waiting for it.
const CANCEL_SEND_TIMEOUT: Duration = Duration::from_secs(2);

/// Progress routes: which running call's live output a progress token belongs to.
type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, (OutputSink, Option<Instant>)>>>;
/// Where a call's notes travel in its result's `_meta`, to `output::call_output`.
pub(crate) const NOTES_KEY: &str = "tern/notes";
/// Notes for the model, per running call (by progress token), added to its result when it ends.
type CallNotes = Arc<Mutex<HashMap<ProgressToken, Vec<String>>>>;

/// Receives what the server sends on its own.
pub(crate) struct Handler {
    server: String,
    /// Set when the server says its tools, resources or prompts changed.
    changed: Arc<Notify>,
    progress: ProgressRoutes,
    log: LogLimiter,
    setup: ClientSetup,
    notes: CallNotes,
    asking: Asking,
}

impl ClientHandler for Handler {
    #[allow(deprecated)]
    fn get_info(&self) -> InitializeRequestParams {
        let mut capabilities = ClientCapabilities::default();
        if !self.setup.roots.is_empty() {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        if self.setup.elicitor.is_some() {
            capabilities.elicitation = Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        InitializeRequestParams::new(capabilities, Implementation::new("tern", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    #[allow(deprecated)]
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .setup
            .roots
            .iter()
            .map(|path| {
                let root = Root::new(file_uri(path));
                match path.file_name() {
                    Some(name) => root.with_name(name.to_string_lossy()),
                    None => root,
                }
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let (message, schema) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (message, serde_json::to_value(&requested_schema).unwrap_or_default()),
            // URL mode is not declared; a server that asks anyway is told no.
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        let asking = self.asking.start();
        let answer = match &self.setup.elicitor {
            Some(elicitor) => elicitor.ask(&self.server, &message, schema).await,
            None => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        drop(asking);
        if let Some(note) = note_for_model(&self.server, &message, &answer)
            && let Ok(mut notes) = self.notes.lock()
        {
            // The request does not say which call it belongs to; every call running on this server gets the note.
            for pending in notes.values_mut() {
                pending.push(note.clone());
            }
        }
        Ok(match answer {
            tern_protocol::ElicitationAnswer::Accept { content } => {
                ElicitResult::new(ElicitationAction::Accept).with_content(serde_json::Value::Object(content))
            }
            tern_protocol::ElicitationAnswer::Decline { .. } => ElicitResult::new(ElicitationAction::Decline),
            tern_protocol::ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let Ok(mut routes) = self.progress.lock() else {
            return;
        };
        let Some((sink, last)) = routes.get_mut(&params.progress_token) else {
            return;
        };
        let done = params.total.is_some_and(|t| params.progress >= t);
        if last.is_some_and(|l| l.elapsed() < PROGRESS_INTERVAL) && !done {
            return;
        }
        *last = Some(Instant::now());
        let amount = match params.total {
            Some(total) => format!("{}/{}", params.progress, total),
            None => params.progress.to_string(),
        };
        let message = params.message.map(|m| format!(" {m}")).unwrap_or_default();
        sink.send(format!("progress {amount}{message}\n"));
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if !self.log.allow(&self.server) {
            return;
        }
        let data = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let logger = params.logger.as_deref().unwrap_or("");
        match params.level {
            LoggingLevel::Debug => tracing::debug!(server = %self.server, logger, "{data}"),
            LoggingLevel::Info | LoggingLevel::Notice => tracing::info!(server = %self.server, logger, "{data}"),
            _ => tracing::warn!(server = %self.server, logger, level = ?params.level, "{data}"),
        }
    }

    async fn ping(&self, _context: RequestContext<RoleClient>) -> Result<(), rmcp::ErrorData> {
        Ok(())
    }
}

/// Wraps a transport to notice when it ends (the process died, the stream closed) or breaks: an error the server
/// could not tie to a request ("Bad Request: No valid session ID", what an HTTP server that restarted and forgot our
/// session answers) leaves every pending request unanswered, so it marks the connection as broken.
struct Observed<T> {
    inner: T,
    closed: CancellationToken,
    broken: Arc<Mutex<Option<String>>>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        match &message {
            None => self.closed.cancel(),
            Some(rmcp::model::JsonRpcMessage::Error(e)) if e.id.is_none() => {
                tracing::warn!(error = %e.error.message, "MCP server sent an error for no request; reconnecting");
                if let Ok(mut broken) = self.broken.lock() {
                    broken.get_or_insert_with(|| e.error.message.to_string());
                }
                self.closed.cancel();
            }
            Some(_) => {}
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.closed.cancel();
        self.inner.close()
    }
}

/// A connected, initialised server.
pub(crate) struct Connection {
    service: RunningService<RoleClient, Handler>,
    /// Fires when the transport ended or broke.
    closed: CancellationToken,
    /// Why it broke, when the server said so.
    broken: Arc<Mutex<Option<String>>>,
    child: Option<ChildProcess>,
    pub changed: Arc<Notify>,
    progress: ProgressRoutes,
    notes: CallNotes,
    task_only: TaskOnly,
    /// Replies too large to take (stdio), for the requests they answered.
    dropped: Arc<DroppedReplies>,
    asking: Asking,
}

impl Connection {
    /// Connects and runs the MCP handshake. The caller bounds how long this may take (dropping the future cleans up).
    pub(crate) async fn open(
        config: &ServerConfig,
        http: &reqwest::Client,
        setup: &ClientSetup,
    ) -> Result<Self, String> {
        if let Some(problem) = &config.problem {
            return Err(problem.clone());
        }
        let changed = Arc::new(Notify::new());
        let progress: ProgressRoutes = Arc::default();
        let notes: CallNotes = Arc::default();
        let task_only = TaskOnly::default();
        let dropped = Arc::new(DroppedReplies::default());
        let asking = Asking::default();
        let handler = Handler {
            server: config.name.clone(),
            changed: Arc::clone(&changed),
            progress: Arc::clone(&progress),
            log: LogLimiter::default(),
            setup: setup.clone(),
            notes: Arc::clone(&notes),
            asking: asking.clone(),
        };
        let closed = CancellationToken::new();
        let broken = Arc::new(Mutex::new(None));
        let ct = CancellationToken::new();
        let ends = connect::Ends {
            closed: &closed,
            broken: &broken,
        };
        let (service, child) = match &config.transport {
            TransportConfig::Stdio(stdio) => {
                let (service, child) =
                    connect::stdio(&config.name, stdio, handler, ends, ct, &task_only, &dropped).await?;
                (service, Some(child))
            }
            TransportConfig::Http(h) => (connect::http(config, h, http, handler, ends, ct).await?, None),
            TransportConfig::Sse(h) => (connect::sse(config, h, http, handler, ends, ct).await?, None),
        };
        Ok(Self {
            service,
            closed,
            broken,
            child,
            changed,
            progress,
            notes,
            task_only,
            dropped,
            asking,
        })
    }

    /// The tools the server's last tool list marked task-only (stdio servers; see `tasks.rs`).
    pub(crate) fn task_only_tools(&self) -> std::collections::HashSet<String> {
        self.task_only.lock().map(|t| t.clone()).unwrap_or_default()
    }

    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    pub(crate) fn is_alive(&self) -> bool {
        !self.closed.is_cancelled() && !self.service.peer().is_transport_closed()
    }

    /// Fires when the transport ends.
    pub(crate) fn closed_token(&self) -> CancellationToken {
        self.closed.clone()
    }

    /// Why the connection ended, as precisely as is known.
    pub(crate) async fn describe_end(&self) -> String {
        if let Some(message) = self.broken.lock().ok().and_then(|b| b.clone()) {
            return format!("the server rejected the session ({message})");
        }
        match &self.child {
            Some(child) => format!("the server {}", child.describe_exit().await),
            None => "the connection to the server closed".to_string(),
        }
    }

    /// The process id of a stdio server.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(ChildProcess::pid)
    }

    /// The server's name and version, and its instructions for the model.
    pub(crate) fn server_info(&self) -> (Option<String>, Option<String>) {
        match self.service.peer().peer_info() {
            Some(info) => (
                info.server_info.as_ref().map(|i| format!("{} {}", i.name, i.version)),
                info.instructions.clone(),
            ),
            None => (None, None),
        }
    }

    /// Closes the session: stdin closes (or the HTTP session ends), then a stdio server gets `grace` to exit before
    /// its process group is killed.
    pub(crate) async fn shutdown(&self, grace: Duration) {
        self.service.cancellation_token().cancel();
        if let Some(child) = &self.child {
            child.terminate(grace).await;
        }
    }

    /// Kills a stdio server now (the connection is unusable afterwards).
    pub(crate) fn kill(&self) {
        self.service.cancellation_token().cancel();
        if let Some(child) = &self.child {
            child.kill();
        }
    }

    /// Sends one request and waits for its answer, at most `timeout` (not counting the time the user takes to answer
    /// the server's requests for input), stopping early when `cancel` fires. On a timeout
    /// or cancellation the server is told with `notifications/cancelled`.
    pub(crate) async fn request(
        &self,
        request: ClientRequest,
        timeout: Duration,
        cancel: &CancellationToken,
        live: &OutputSink,
    ) -> Result<ServerResult, RequestError> {
        let since = self.dropped.mark();
        let mut handle = self
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(RequestError::from)?;
        let id = handle.id.to_string();
        let token = handle.progress_token.clone();
        let routed = live.is_connected();
        if routed && let Ok(mut routes) = self.progress.lock() {
            routes.insert(token.clone(), (live.clone(), None));
        }
        if let Ok(mut notes) = self.notes.lock() {
            notes.insert(token.clone(), Vec::new());
        }
        let outcome = tokio::select! {
            biased;
            answer = &mut handle.rx => Outcome::Answer(Box::new(answer)),
            () = cancel.cancelled() => Outcome::Cancelled,
            () = self.closed.cancelled() => Outcome::Ended,
            bytes = self.dropped.wait(&id, since) => Outcome::TooLarge(bytes),
            () = self.asking.sleep(timeout) => Outcome::TimedOut,
        };
        if routed && let Ok(mut routes) = self.progress.lock() {
            routes.remove(&token);
        }
        let notes = self
            .notes
            .lock()
            .ok()
            .and_then(|mut n| n.remove(&token))
            .unwrap_or_default();
        self.settle(outcome, notes, handle, timeout).await
    }

    /// The result of a request whose wait ended with `outcome`: the answer (with the call's `notes` for the model),
    /// or the error, after telling the server with `notifications/cancelled` when we stopped waiting.
    async fn settle(
        &self,
        outcome: Outcome,
        notes: Vec<String>,
        handle: RequestHandle<RoleClient>,
        timeout: Duration,
    ) -> Result<ServerResult, RequestError> {
        match outcome {
            Outcome::Answer(answer) => match *answer {
                Ok(Ok(ServerResult::CallToolResult(mut result))) if !notes.is_empty() => {
                    let meta = result.meta.get_or_insert_with(Default::default);
                    meta.0.insert(NOTES_KEY.into(), serde_json::json!(notes));
                    Ok(ServerResult::CallToolResult(result))
                }
                Ok(Ok(result)) => Ok(result),
                Ok(Err(e)) => Err(RequestError::from(e)),
                Err(_) => Err(RequestError::Closed),
            },
            Outcome::Ended => match self.broken.lock().ok().and_then(|b| b.clone()) {
                // The server refused the request outright, so sending it again on a new session is safe.
                Some(message) => Err(RequestError::Send(format!(
                    "the server rejected the session: {message}"
                ))),
                None => Err(RequestError::Closed),
            },
            Outcome::TooLarge(bytes) => {
                let _ = tokio::time::timeout(CANCEL_SEND_TIMEOUT, handle.cancel(Some("reply too large".into()))).await;
                Err(RequestError::TooLarge(bytes))
            }
            Outcome::Cancelled | Outcome::TimedOut => {
                let cancelled = matches!(outcome, Outcome::Cancelled);
                let reason = if cancelled {
                    "cancelled by the user"
                } else {
                    "timed out"
                };
                let _ = tokio::time::timeout(CANCEL_SEND_TIMEOUT, handle.cancel(Some(reason.to_string()))).await;
                Err(if cancelled {
                    RequestError::Cancelled
                } else {
                    RequestError::Timeout(timeout)
                })
            }
        }
    }
}

/// How waiting for a request's answer ended.
enum Outcome {
    Answer(Box<Result<Result<ServerResult, ServiceError>, tokio::sync::oneshot::error::RecvError>>),
    Ended,
    Cancelled,
    TimedOut,
    TooLarge(usize),
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RequestError {
    Timeout(Duration),
    Cancelled,
    /// The request could not be handed to the server (an HTTP error, a broken pipe): worth one retry.
    Send(String),
    /// The connection ended while waiting for the answer.
    Closed,
    /// The server answered with a JSON-RPC error.
    Server(String),
    /// The answer was a message of this many bytes, past `MAX_REPLY_BYTES`, and was dropped.
    TooLarge(usize),
    Other(String),
}

impl From<ServiceError> for RequestError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::McpError(e) => RequestError::Server(format!("{} (code {})", e.message, e.code.0)),
            ServiceError::TransportSend(e) => RequestError::Send(error_chain(e.error.as_ref())),
            ServiceError::TransportClosed => RequestError::Closed,
            ServiceError::Timeout { timeout } => RequestError::Timeout(timeout),
            ServiceError::Cancelled { reason } => RequestError::Other(format!(
                "the server cancelled the request: {}",
                reason.unwrap_or_default()
            )),
            other => RequestError::Other(other.to_string()),
        }
    }
}

/// A start-up failure in words, without rmcp's transport type names.
fn init_error(error: &ClientInitializeError) -> String {
    match error {
        // A server that exits at once may be gone before the first request is written: that is the server closing
        // the connection too, whichever of the two tern saw first.
        ClientInitializeError::TransportError { error, context } if broken_pipe(error.error.as_ref()) => {
            format!("the server closed the connection during start-up ({context})")
        }
        ClientInitializeError::TransportError { error, context } => {
            format!("cannot {context}: {}", error_chain(error.error.as_ref()))
        }
        ClientInitializeError::ConnectionClosed(context) => {
            format!("the server closed the connection during start-up ({context})")
        }
        ClientInitializeError::JsonRpcError(e) => format!("the server refused to start the session: {}", e.message),
        other => format!("MCP start-up failed: {}", error_chain(other)),
    }
}

/// Whether an error, or one it was caused by, is a write to a pipe whose reader is gone.
fn broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// The configured headers as HTTP types, and the bearer token from its variable.
fn headers(config: &HttpConfig) -> Result<(HeaderMap, Option<String>), String> {
    let mut map = HeaderMap::new();
    for (name, value) in &config.headers {
        // Credentials for a remote server, whatever variable they came from, are masked like tern's own keys.
        if name.eq_ignore_ascii_case("authorization") || tern_secrets::is_secret_name(name.as_ref()) {
            tern_secrets::register(value);
            // `Bearer <token>`: the token may be echoed alone.
            if let Some((_, credential)) = value.split_once(' ') {
                tern_secrets::register(credential);
            }
        }
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("invalid header name {name:?}"))?;
        let value = HeaderValue::from_str(value).map_err(|_| format!("invalid value for header {name}"))?;
        map.insert(name, value);
    }
    let token = match &config.bearer_token_env {
        Some(var) => match tern_secrets::var(var) {
            Some(token) if !token.trim().is_empty() => {
                tern_secrets::register(&token);
                Some(token.trim().to_string())
            }
            _ => return Err(format!("environment variable {var} (bearerTokenEnvVar) is not set")),
        },
        None => None,
    };
    Ok((map, token))
}

/// The HTTP client all remote servers share, with the crypto provider the rest of tern uses.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    tern_http::client_builder()
        .connect_timeout(Duration::from_secs(10))
        // A redirect could carry the bearer token to another host.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {}", error_chain(&e)))
}

#[cfg(test)]
mod header_tests {
    use super::*;

    #[test]
    fn credentials_in_headers_are_masked_from_then_on() {
        let config = HttpConfig {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![
                ("Authorization".into(), "Bearer tern-unit-header-token".into()),
                ("X-Api-Key".into(), "tern-unit-api-key-value".into()),
                ("Accept".into(), "application/json-plain".into()),
            ],
            bearer_token_env: None,
        };
        let (map, token) = headers(&config).unwrap();
        assert_eq!((map.len(), token), (3, None));
        assert_eq!(
            tern_secrets::mask("tern-unit-header-token, tern-unit-api-key-value, application/json-plain"),
            "[redacted], [redacted], application/json-plain"
        );
    }
}
