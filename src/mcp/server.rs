//! One configured MCP server and its live state: connecting (one attempt at a time, bounded by its start-up
//! timeout), listing what it offers, watching the connection (a server that dies is marked and restarted on its next
//! use; a list change refreshes its lists), retrying a failed one less often the more it fails, and sending a call's
//! request. Every change is told to `changed`, which the manager gives (it rebuilds what the session offers).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ClientRequest, ServerResult};
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalog;
use crate::client::{Connection, RequestError};
use crate::config::ServerConfig;
use crate::elicit::ClientSetup;
use tern_protocol::mcp::ServerState;
use tern_tools::{ToolContext, ToolError};

/// How long a listing may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// Quiet time after a list-change notification before listing again, so a burst costs one refresh.
const REFRESH_DEBOUNCE: Duration = Duration::from_millis(250);
/// Items of one kind kept per server.
const MAX_LISTED: usize = 1000;
/// Retrying a server that failed: first after this long, doubling up to `RETRY_MAX`.
const RETRY_BASE: Duration = Duration::from_secs(10);
const RETRY_MAX: Duration = Duration::from_secs(300);
/// One configured server and its live state.
pub(crate) struct Server {
    pub config: ServerConfig,
    /// Called after every change of its state or lists.
    changed: Arc<dyn Fn() + Send + Sync>,
    http: Result<reqwest::Client, String>,
    setup: ClientSetup,
    shutdown: CancellationToken,
    /// Serialises connection attempts so concurrent calls start one process, not several.
    connecting: tokio::sync::Mutex<()>,
    pub(crate) live: Mutex<Live>,
    /// `/mcp`'s switch for this session: `SWITCH_NONE` (as configured), `SWITCH_ON` or `SWITCH_OFF`.
    pub(crate) switch: AtomicU8,
}

pub(crate) const SWITCH_NONE: u8 = 0;
pub(crate) const SWITCH_ON: u8 = 1;
pub(crate) const SWITCH_OFF: u8 = 2;

#[derive(Default)]
pub(crate) struct Live {
    pub conn: Option<Arc<Connection>>,
    pub catalog: Catalog,
    pub state: Option<ServerState>,
    pub server_info: Option<String>,
    pub instructions: Option<String>,
    /// `instructions` as they go into the prompt.
    pub note: Option<super::instructions::ServerInstructions>,
    pub failures: u32,
    pub last_failure: Option<Instant>,
}

impl Server {
    /// A server of `config`, not connected yet: connecting when enabled, else disabled. `changed` is told of every
    /// change.
    pub(crate) fn new(
        config: ServerConfig,
        http: Result<reqwest::Client, String>,
        setup: ClientSetup,
        shutdown: CancellationToken,
        changed: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let state = if config.enabled {
            ServerState::Connecting
        } else {
            ServerState::Disabled
        };
        Self {
            changed,
            http,
            setup,
            shutdown,
            connecting: tokio::sync::Mutex::new(()),
            switch: AtomicU8::new(SWITCH_NONE),
            live: Mutex::new(Live {
                state: Some(state),
                ..Live::default()
            }),
            config,
        }
    }

    /// Whether the server is in use: as configured, unless `/mcp` switched it for this session.
    pub(crate) fn is_on(&self) -> bool {
        match self.switch.load(Ordering::Relaxed) {
            SWITCH_ON => true,
            SWITCH_OFF => false,
            _ => self.config.enabled,
        }
    }

    /// What the server offers, as last listed.
    pub(crate) fn catalog(&self) -> Catalog {
        self.live.lock().map(|l| l.catalog.clone()).unwrap_or_default()
    }

    fn publish(&self) {
        (self.changed)();
    }

    pub(crate) fn set_state(&self, state: ServerState) {
        if let Ok(mut live) = self.live.lock() {
            live.state = Some(state);
        }
        self.publish();
    }

    /// The server's instructions while its tools are offered (ready, reconnecting, or disconnected and restarting on
    /// its next use).
    pub(crate) fn offered_note(&self) -> Option<crate::instructions::ServerInstructions> {
        if !self.is_on() {
            return None;
        }
        let live = self.live.lock().ok()?;
        // A server reconnecting keeps the note of its last connection, so the prompt does not flicker.
        match live.state {
            Some(ServerState::Failed { .. } | ServerState::Disabled) | None => None,
            _ => live.note.clone(),
        }
    }

    pub(crate) fn take_connection(&self) -> Option<Arc<Connection>> {
        self.live.lock().ok().and_then(|mut l| l.conn.take())
    }

    pub(crate) fn due_for_retry(&self) -> bool {
        if !self.is_on() || self.shutdown.is_cancelled() || self.config.problem.is_some() {
            return false;
        }
        let Ok(live) = self.live.lock() else { return false };
        if !matches!(live.state, Some(ServerState::Failed { .. })) || live.conn.is_some() {
            return false;
        }
        // A server that wants a login keeps refusing until there is one: tried again only once one was saved.
        if let Some(ServerState::Failed { reason }) = &live.state
            && crate::auth::is_needs_login(reason)
        {
            return live
                .last_failure
                .is_some_and(|failed| crate::auth::login_saved_since(&self.config, failed));
        }
        let wait = RETRY_BASE
            .saturating_mul(1 << live.failures.saturating_sub(1).min(5))
            .min(RETRY_MAX);
        live.last_failure.is_none_or(|t| t.elapsed() >= wait)
    }

    /// The live connection, connecting first when there is none (or it died).
    async fn connection(self: &Arc<Self>, cancel: &CancellationToken) -> Result<Arc<Connection>, ToolError> {
        if let Some(conn) = self
            .live
            .lock()
            .ok()
            .and_then(|l| l.conn.clone())
            .filter(|c| c.is_alive())
        {
            return Ok(conn);
        }
        // In its own task: an interrupted call must not leave a half-started server behind.
        let server = Arc::clone(self);
        let connecting = tokio::spawn(async move { server.connect().await });
        tokio::select! {
            conn = connecting => match conn {
                Ok(result) => result.map_err(|reason| {
                    ToolError::Failed(format!("MCP server {:?} is not available: {reason}", self.config.name))
                }),
                Err(e) => Err(ToolError::Failed(format!("connecting to MCP server {:?} failed: {e}", self.config.name))),
            },
            () = cancel.cancelled() => Err(ToolError::Cancelled),
        }
    }

    /// Connects (unless another caller just did), lists what the server offers, and starts watching it.
    pub(crate) async fn connect(self: &Arc<Self>) -> Result<Arc<Connection>, String> {
        let _one_at_a_time = self.connecting.lock().await;
        if self.shutdown.is_cancelled() {
            return Err("tern is shutting down".to_string());
        }
        if let Some(conn) = self
            .live
            .lock()
            .ok()
            .and_then(|l| l.conn.clone())
            .filter(|c| c.is_alive())
        {
            return Ok(conn);
        }
        if let Some(stale) = self.take_connection() {
            stale.kill();
        }
        self.set_state(ServerState::Connecting);
        let attempt = async {
            let http = self.http.clone()?;
            let conn = Connection::open(&self.config, &http, &self.setup).await?;
            let catalog = list(&self.config.name, &conn).await?;
            Ok::<_, String>((conn, catalog))
        };
        let limit = self.config.startup_timeout;
        let result = tokio::select! {
            result = tokio::time::timeout(limit, attempt) => {
                result.unwrap_or_else(|_| Err(format!(
                    "did not start within {} (the server's startup_timeout_sec); it is tried again later",
                    seconds(limit)
                )))
            }
            () = self.shutdown.cancelled() => Err("tern is shutting down".to_string()),
        };
        match result {
            Ok((conn, _)) if self.shutdown.is_cancelled() => {
                conn.kill();
                Err("tern is shutting down".to_string())
            }
            Ok((conn, catalog)) => {
                let conn = Arc::new(conn);
                let (server_info, instructions) = conn.server_info();
                tracing::info!(server = %self.config.name, info = ?server_info, tools = catalog.tools.len(), "MCP server ready");
                if let Ok(mut live) = self.live.lock() {
                    live.conn = Some(Arc::clone(&conn));
                    live.catalog = catalog;
                    live.state = Some(ServerState::Ready {
                        tools: 0,
                        resources: 0,
                        prompts: 0,
                    });
                    live.server_info = server_info;
                    live.note = instructions
                        .as_deref()
                        .and_then(|text| crate::instructions::ServerInstructions::capture(&self.config.name, text));
                    live.instructions = instructions;
                    live.failures = 0;
                    live.last_failure = None;
                }
                self.publish();
                self.watch(&conn);
                Ok(conn)
            }
            Err(reason) => {
                tracing::warn!(server = %self.config.name, %reason, "MCP server failed to start");
                if let Ok(mut live) = self.live.lock() {
                    live.failures = live.failures.saturating_add(1);
                    live.last_failure = Some(Instant::now());
                    live.state = Some(ServerState::Failed { reason: reason.clone() });
                }
                self.publish();
                Err(reason)
            }
        }
    }

    /// Watches a new connection: marks the server when it ends, refreshes the lists when they change. The tasks hold
    /// no strong reference, so dropping the manager still ends the server.
    pub(crate) fn watch(self: &Arc<Self>, conn: &Arc<Connection>) {
        let weak_server = Arc::downgrade(self);
        let weak_conn = Arc::downgrade(conn);
        let closed = conn.closed_token();
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = closed.cancelled() => {}
                () = shutdown.cancelled() => return,
            }
            let (Some(server), Some(conn)) = (weak_server.upgrade(), weak_conn.upgrade()) else {
                return;
            };
            server.forget(&conn).await;
        });
        let weak_server = Arc::downgrade(self);
        let weak_conn = Arc::downgrade(conn);
        let changed = Arc::clone(&conn.changed);
        let closed = conn.closed_token();
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = changed.notified() => {}
                    () = closed.cancelled() => return,
                    () = shutdown.cancelled() => return,
                }
                tokio::time::sleep(REFRESH_DEBOUNCE).await;
                let (Some(server), Some(conn)) = (weak_server.upgrade(), weak_conn.upgrade()) else {
                    return;
                };
                match list(&server.config.name, &conn).await {
                    Ok(catalog) => {
                        if let Ok(mut live) = server.live.lock() {
                            live.catalog = catalog;
                        }
                        tracing::info!(server = %server.config.name, "MCP server lists refreshed");
                        server.publish();
                    }
                    Err(reason) => tracing::warn!(server = %server.config.name, %reason, "MCP list refresh failed"),
                }
            }
        });
    }

    /// Drops a connection that ended or broke (if it is still the current one) and says why in the status.
    pub(crate) async fn forget(&self, conn: &Arc<Connection>) {
        let reason = conn.describe_end().await;
        let current = self
            .live
            .lock()
            .ok()
            .is_some_and(|l| l.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)));
        if !current {
            return;
        }
        tracing::warn!(server = %self.config.name, %reason, "MCP server disconnected");
        if let Some(old) = self.take_connection() {
            old.kill();
        }
        self.set_state(ServerState::Disconnected {
            reason: format!("{reason}; it restarts on its next use"),
        });
    }

    /// Sends a request for the call `what`, reconnecting first if the server died, retrying once if the request could
    /// not be delivered. Every failure is a message for the model.
    pub(crate) async fn call(
        self: &Arc<Self>,
        request: ClientRequest,
        what: &str,
        ctx: &ToolContext,
    ) -> Result<ServerResult, ToolError> {
        let name = &self.config.name;
        let mut retried = false;
        let (conn, error) = loop {
            let conn = self.connection(&ctx.cancel).await?;
            match conn
                .request(request.clone(), self.config.tool_timeout, &ctx.cancel, &ctx.output)
                .await
            {
                Ok(result) => return Ok(result),
                Err(RequestError::Send(message)) if !retried => {
                    tracing::warn!(server = %name, %message, "MCP request not delivered; retrying once");
                    retried = true;
                    if !conn.is_alive() {
                        self.forget(&conn).await;
                    }
                }
                Err(error) => break (conn, error),
            }
        };
        Err(match error {
            RequestError::Send(message) => {
                self.forget(&conn).await;
                ToolError::Failed(format!("could not reach MCP server {name:?} (tried twice): {message}"))
            }
            RequestError::Closed => {
                let why = conn.describe_end().await;
                self.forget(&conn).await;
                ToolError::Failed(format!(
                    "MCP server {name:?} disconnected during `{what}`: {why}. It restarts on its next use."
                ))
            }
            RequestError::Timeout(after) => ToolError::Failed(format!(
                "MCP server {name:?} did not finish `{what}` within {} and the call was cancelled; if it needs \
                 longer, raise the server's tool_timeout_sec (toolTimeout)",
                seconds(after)
            )),
            RequestError::Cancelled => ToolError::Cancelled,
            RequestError::TooLarge(bytes) => ToolError::Failed(format!(
                "MCP server {name:?}: the server's reply to `{what}` passed {} MB (it was {} MB) and was dropped; \
                 ask it for less at a time",
                crate::oversize::MAX_REPLY_BYTES / (1024 * 1024),
                crate::oversize::megabytes(bytes)
            )),
            RequestError::Server(message) => {
                ToolError::Failed(format!("MCP server {name:?} rejected `{what}`: {message}"))
            }
            RequestError::Other(message) => ToolError::Failed(format!("MCP server {name:?}, `{what}`: {message}")),
        })
    }
}

fn seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.1} s")
    }
}

/// Lists everything the server says it offers. Tools must list; resources and prompts that fail to list are logged
/// and left out, so one broken feature does not cost the server.
async fn list(server: &str, conn: &Connection) -> Result<Catalog, String> {
    let peer = conn.peer();
    let capabilities = peer.peer_info().map(|i| i.capabilities.clone()).unwrap_or_default();
    let mut catalog = Catalog::default();
    if capabilities.tools.is_some() {
        catalog.tools = bounded("tools/list", peer.list_all_tools()).await?;
        catalog.task_only = conn.task_only_tools();
    }
    if capabilities.resources.is_some() {
        match bounded("resources/list", peer.list_all_resources()).await {
            Ok(resources) => catalog.resources = resources,
            Err(reason) => tracing::warn!(server, %reason, "MCP resources not listed"),
        }
        match bounded("resources/templates/list", peer.list_all_resource_templates()).await {
            Ok(templates) => catalog.templates = templates,
            Err(reason) => tracing::warn!(server, %reason, "MCP resource templates not listed"),
        }
    }
    if capabilities.prompts.is_some() {
        match bounded("prompts/list", peer.list_all_prompts()).await {
            Ok(prompts) => catalog.prompts = prompts,
            Err(reason) => tracing::warn!(server, %reason, "MCP prompts not listed"),
        }
    }
    catalog.tools.truncate(MAX_LISTED);
    catalog.resources.truncate(MAX_LISTED);
    catalog.templates.truncate(MAX_LISTED);
    catalog.prompts.truncate(MAX_LISTED);
    Ok(catalog)
}

async fn bounded<T>(what: &str, listing: impl Future<Output = Result<T, rmcp::ServiceError>>) -> Result<T, String> {
    match tokio::time::timeout(LIST_TIMEOUT, listing).await {
        Ok(Ok(items)) => Ok(items),
        Ok(Err(e)) => Err(format!("{what} failed: {e}")),
        Err(_) => Err(format!("{what} did not answer within {} s", LIST_TIMEOUT.as_secs())),
    }
}
