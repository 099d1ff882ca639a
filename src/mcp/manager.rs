//! The MCP servers of a session: connected concurrently in the background, watched (a server that dies is marked and
//! restarted on its next use; a list change refreshes its tools), and offered to the registry as a `ToolSource`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::client::{Connection, http_client};
use super::config::ServerConfig;
use super::elicit::ClientSetup;
use super::names::ItemKind;
use super::server::{SWITCH_OFF, SWITCH_ON, Server};
use super::tool::{McpTool, problems};
pub use tern_protocol::mcp::{ServerState, ServerStatus, ToolSummary};
use tern_tools::{Tool, ToolSource};

mod control;
mod publish;
pub use control::ControlError;

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
                    let weak = weak.clone();
                    let changed = Arc::new(move || {
                        if let Some(inner) = weak.upgrade() {
                            inner.publish();
                        }
                    });
                    Arc::new(Server::new(
                        config,
                        http.clone(),
                        setup.clone(),
                        shutdown.clone(),
                        changed,
                    ))
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
                    crate::resources::offered(&self.config, &l.catalog),
                    crate::prompts::offered(&self.config, &l.catalog),
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
}
