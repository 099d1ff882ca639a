//! The MCP servers of a session: connected concurrently in the background, watched (a server that dies is marked and
//! restarted on its next use; a list change refreshes its tools), and offered to the registry as a `ToolSource`.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rmcp::model::{ClientRequest, ServerResult};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::client::{Connection, RequestError, http_client};
use super::config::ServerConfig;
use super::elicit::ClientSetup;
use super::names::ItemKind;
use super::tool::{Catalog, McpTool, problems};
pub use tern_protocol::mcp::{ServerState, ServerStatus, ToolSummary};
use tern_tools::{Tool, ToolContext, ToolError, ToolSource};

mod control;
mod publish;
pub use control::ControlError;

/// How long a listing may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// Quiet time after a list-change notification before listing again, so a burst costs one refresh.
const REFRESH_DEBOUNCE: Duration = Duration::from_millis(250);
/// Items of one kind kept per server.
const MAX_LISTED: usize = 1000;
/// Retrying a server that failed: first after this long, doubling up to `RETRY_MAX`.
const RETRY_BASE: Duration = Duration::from_secs(10);
const RETRY_MAX: Duration = Duration::from_secs(300);
/// How long stdio servers get to exit on shutdown before they are killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// The servers of a session. Cheap to share: `Arc<McpManager>` is both the registry's tool source and what the UI
/// watches.
pub struct McpManager {
    inner: Arc<Inner>,
}

struct Inner {
    servers: Vec<Arc<Server>>,
    tools: RwLock<Vec<Arc<dyn Tool>>>,
    /// The instructions of the servers whose tools are offered, for the system prompt.
    instructions: RwLock<Arc<Vec<super::instructions::ServerInstructions>>>,
    status: watch::Sender<Vec<ServerStatus>>,
    /// `wait_ready` never waits past this.
    deadline: tokio::time::Instant,
    shutdown: CancellationToken,
    /// Held while publishing, so a slower rebuild never overwrites a newer one.
    publishing: Mutex<()>,
}

/// One configured server and its live state.
pub(crate) struct Server {
    pub config: ServerConfig,
    inner: Weak<Inner>,
    http: Result<reqwest::Client, String>,
    setup: ClientSetup,
    shutdown: CancellationToken,
    /// Serialises connection attempts so concurrent calls start one process, not several.
    connecting: tokio::sync::Mutex<()>,
    live: Mutex<Live>,
    /// `/mcp`'s switch for this session: `SWITCH_NONE` (as configured), `SWITCH_ON` or `SWITCH_OFF`.
    switch: AtomicU8,
}

const SWITCH_NONE: u8 = 0;
const SWITCH_ON: u8 = 1;
const SWITCH_OFF: u8 = 2;

#[derive(Default)]
struct Live {
    conn: Option<Arc<Connection>>,
    catalog: Catalog,
    state: Option<ServerState>,
    server_info: Option<String>,
    instructions: Option<String>,
    /// `instructions` as they go into the prompt.
    note: Option<super::instructions::ServerInstructions>,
    failures: u32,
    last_failure: Option<Instant>,
}

impl McpManager {
    /// Starts connecting every enabled server in the background and returns at once. Must be called inside a tokio
    /// runtime. `startup_timeout` bounds `wait_ready` (from now): how long a first request may wait for servers still
    /// starting. Each start is bounded by its server's own `ServerConfig::startup_timeout`, after which it has failed.
    pub fn start(servers: Vec<ServerConfig>, startup_timeout: Duration) -> Arc<Self> {
        Self::start_with(servers, startup_timeout, ClientSetup::default())
    }

    /// `start`, declaring to every server what `setup` offers (roots, elicitation).
    pub fn start_with(servers: Vec<ServerConfig>, startup_timeout: Duration, setup: ClientSetup) -> Arc<Self> {
        let http = http_client();
        let shutdown = CancellationToken::new();
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| Inner {
            servers: servers
                .into_iter()
                .map(|config| {
                    Arc::new(Server {
                        inner: weak.clone(),
                        http: http.clone(),
                        setup: setup.clone(),
                        shutdown: shutdown.clone(),
                        connecting: tokio::sync::Mutex::new(()),
                        switch: AtomicU8::new(SWITCH_NONE),
                        live: Mutex::new(Live {
                            state: Some(if config.enabled {
                                ServerState::Connecting
                            } else {
                                ServerState::Disabled
                            }),
                            ..Live::default()
                        }),
                        config,
                    })
                })
                .collect(),
            tools: RwLock::new(Vec::new()),
            instructions: RwLock::default(),
            status: watch::Sender::new(Vec::new()),
            deadline: tokio::time::Instant::now() + startup_timeout,
            shutdown: shutdown.clone(),
            publishing: Mutex::new(()),
        });
        inner.publish();
        for server in inner.servers.iter().filter(|s| s.config.enabled) {
            let server = Arc::clone(server);
            tokio::spawn(async move {
                let _ = server.connect().await;
            });
        }
        Arc::new(Self { inner })
    }

    /// Every server's state now, in configuration order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.inner.status.borrow().clone()
    }

    /// Changes to `statuses()`, for views that follow them.
    pub fn subscribe(&self) -> watch::Receiver<Vec<ServerStatus>> {
        self.inner.status.subscribe()
    }

    /// The instructions of the servers whose tools are offered now, in configuration order, for the system prompt.
    pub fn instructions(&self) -> Arc<Vec<super::instructions::ServerInstructions>> {
        self.inner
            .instructions
            .read()
            .map(|i| Arc::clone(&i))
            .unwrap_or_default()
    }

    /// Waits until no server is connecting any more, but not past the wait given to `start` (counted from then).
    pub async fn wait_started(&self) {
        let remaining = self
            .inner
            .deadline
            .saturating_duration_since(tokio::time::Instant::now());
        self.wait_settled(remaining).await;
    }

    /// Waits until no server is connecting any more (each start ends, ready or failed, within its own
    /// `startup_timeout`), but not past `limit`; unlike `wait_ready` it starts no retries. For `tern mcp list`.
    pub(crate) async fn wait_settled(&self, limit: Duration) {
        let mut rx = self.inner.status.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        while rx
            .borrow_and_update()
            .iter()
            .any(|s| s.state == ServerState::Connecting)
        {
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { break },
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
    }

    /// Ends every server: stdio servers get a moment to exit after their input closes, then their process groups are
    /// killed. Tools stop being offered.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let conns: Vec<Arc<Connection>> = self.inner.servers.iter().filter_map(|s| s.take_connection()).collect();
        futures_util::future::join_all(conns.iter().map(|c| c.shutdown(SHUTDOWN_GRACE))).await;
        self.inner.publish();
    }

    /// Kills every server's process group now, without waiting (a second signal while shutting down).
    pub fn kill_now(&self) {
        self.inner.shutdown.cancel();
        for server in &self.inner.servers {
            if let Some(conn) = server.take_connection() {
                conn.kill();
            }
        }
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        self.kill_now();
    }
}

#[async_trait]
impl ToolSource for McpManager {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        if self.inner.shutdown.is_cancelled() {
            return Vec::new();
        }
        self.inner.tools.read().map(|t| t.clone()).unwrap_or_default()
    }

    async fn wait_ready(&self) {
        self.wait_started().await;
        // Servers that failed get another chance in the background, less often the more they fail.
        for server in &self.inner.servers {
            if server.due_for_retry() {
                let server = Arc::clone(server);
                tokio::spawn(async move {
                    let _ = server.connect().await;
                });
            }
        }
    }
}

impl Server {
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
        if let Some(inner) = self.inner.upgrade() {
            inner.publish();
        }
    }

    fn set_state(&self, state: ServerState) {
        if let Ok(mut live) = self.live.lock() {
            live.state = Some(state);
        }
        self.publish();
    }

    /// The server's instructions while its tools are offered (ready, reconnecting, or disconnected and restarting on
    /// its next use).
    fn offered_note(&self) -> Option<super::instructions::ServerInstructions> {
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

    fn take_connection(&self) -> Option<Arc<Connection>> {
        self.live.lock().ok().and_then(|mut l| l.conn.take())
    }

    fn status(&self, tools: &[&Arc<McpTool>], clashes: Vec<String>, shut_down: bool) -> ServerStatus {
        let live = self.live.lock().ok();
        let mut state = live
            .as_ref()
            .and_then(|l| l.state.clone())
            .unwrap_or(ServerState::Connecting);
        let count = |kind| tools.iter().filter(|t| t.item.kind == kind).count();
        let (resources, prompts) = live
            .as_ref()
            .map(|l| {
                (
                    super::resources::offered(&self.config, &l.catalog),
                    super::prompts::offered(&self.config, &l.catalog),
                )
            })
            .unwrap_or_default();
        if let ServerState::Ready { .. } = state {
            state = ServerState::Ready {
                tools: count(ItemKind::Tool),
                resources: resources.len(),
                prompts: prompts.len(),
            };
        }
        if shut_down && matches!(state, ServerState::Ready { .. } | ServerState::Connecting) {
            state = ServerState::Disconnected {
                reason: "tern shut the server down".into(),
            };
        }
        ServerStatus {
            name: self.config.name.clone(),
            transport: self.config.transport.kind(),
            target: self.config.transport.target(),
            source: self.config.source.clone(),
            state,
            skipped: self.config.problem.is_some(),
            startup_timeout: self.config.startup_timeout,
            tools: tools
                .iter()
                .map(|t| ToolSummary {
                    name: t.name.clone(),
                    original: t.item.original.clone(),
                    kind: t.item.kind,
                    read_only: t.item.read_only,
                    summary: t.item.description.lines().next().unwrap_or_default().to_string(),
                })
                .collect(),
            server_info: live.as_ref().and_then(|l| l.server_info.clone()),
            instructions: live.as_ref().and_then(|l| l.instructions.clone()),
            pid: live.as_ref().and_then(|l| l.conn.as_ref()).and_then(|c| c.pid()),
            problems: live
                .as_ref()
                .map(|l| problems(&self.config, &l.catalog))
                .unwrap_or_default()
                .into_iter()
                .chain(clashes)
                .collect(),
            resources,
            prompts,
            switched: match self.switch.load(Ordering::Relaxed) {
                SWITCH_ON => Some(true),
                SWITCH_OFF => Some(false),
                _ => None,
            },
        }
    }

    fn due_for_retry(&self) -> bool {
        if !self.is_on() || self.shutdown.is_cancelled() || self.config.problem.is_some() {
            return false;
        }
        let Ok(live) = self.live.lock() else { return false };
        if !matches!(live.state, Some(ServerState::Failed { .. })) || live.conn.is_some() {
            return false;
        }
        // A server that wants a login keeps refusing until there is one: tried again only once one was saved.
        if let Some(ServerState::Failed { reason }) = &live.state
            && super::auth::is_needs_login(reason)
        {
            return live
                .last_failure
                .is_some_and(|failed| super::auth::login_saved_since(&self.config, failed));
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
    async fn connect(self: &Arc<Self>) -> Result<Arc<Connection>, String> {
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
                        .and_then(|text| super::instructions::ServerInstructions::capture(&self.config.name, text));
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
    fn watch(self: &Arc<Self>, conn: &Arc<Connection>) {
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
    async fn forget(&self, conn: &Arc<Connection>) {
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
                super::oversize::MAX_REPLY_BYTES / (1024 * 1024),
                super::oversize::megabytes(bytes)
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
