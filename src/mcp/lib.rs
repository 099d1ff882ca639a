//! The MCP client: servers configured as Claude Code, Cursor or Claude Desktop configure them, reached over stdio,
//! streamable HTTP or legacy SSE (on rmcp), whose tools, resources and prompts become tern tools named
//! `mcp_{server}_{name}`.
//!
//! `load_servers` reads the configuration; `McpManager::start` connects every server in the background and is the
//! registry's `ToolSource`; `list_report` is `tern mcp list`. Nothing here blocks a caller for longer than the
//! start-up timeout, and no server process outlives the manager.

// OAuth for remote servers: `tern mcp login`, the token files, the bearer token on each connection.
pub mod auth;
mod catalog;
mod client;
pub mod config;
pub(crate) mod elicit;
mod manager;
pub mod names;
mod output;
mod oversize;
pub mod prompts;
pub mod resources;
mod sanitize;
mod server;
mod stdio;
mod tasks;
mod tool;
mod transport_sse;

// What servers say to the model (their instructions) and what the user is told about their start.
pub mod instructions;
pub use tern_protocol::mcp::report;

use std::fmt::Write as _;
use std::time::Duration;

pub use config::{
    DEFAULT_TOOL_TIMEOUT, HttpConfig, McpConfig, McpConfigError, ServerConfig, StdioConfig, Transport, TransportKind,
    load_servers,
};
pub use elicit::{ClientSetup, ElicitationInbox, ElicitationRequest};
pub use manager::{ControlError, McpManager, ServerState, ServerStatus, ToolSummary};
pub use names::ItemKind;
pub use prompts::PromptSummary;
pub use resources::ResourceSummary;

/// How much longer than the slowest server's `startup_timeout` `tern mcp list` waits before it gives up on it.
const LIST_MARGIN: Duration = Duration::from_secs(5);

/// Connects to every server and waits for each to be ready or to fail (each within its own `startup_timeout`), then
/// describes them and their tools, and the entries that could not be used, for `tern mcp list`. The servers are shut
/// down before it returns.
pub async fn list_report(config: McpConfig) -> String {
    let McpConfig { servers, errors, .. } = config;
    if servers.is_empty() && errors.is_empty() {
        return "No MCP servers are configured. Add [mcp_servers.NAME] to tern's config, or an `mcpServers` entry to \
                .mcp.json in the project."
            .to_string();
    }
    let limit = servers
        .iter()
        .filter(|s| s.enabled)
        .map(|s| s.startup_timeout)
        .max()
        .unwrap_or_default()
        + LIST_MARGIN;
    // The same capabilities as a session (servers list tools by what the client declares), with no one to answer.
    let workspace = std::env::current_dir().unwrap_or_default();
    let manager = McpManager::start_with(servers, Duration::ZERO, ClientSetup::listing(&workspace));
    manager.wait_settled(limit).await;
    let statuses: Vec<ServerStatus> = manager
        .statuses()
        .into_iter()
        .map(|mut status| {
            if status.state == ServerState::Connecting {
                status.state = ServerState::Failed {
                    reason: format!("still starting after {} s; gave up waiting", limit.as_secs()),
                };
            }
            status
        })
        .collect();
    manager.shutdown().await;
    let logins: Vec<Option<bool>> = statuses.iter().map(auth::logged_in).collect();
    let mut report = tern_protocol::mcp::report::render_with_logins(&statuses, &logins);
    for error in &errors {
        if !report.is_empty() {
            report.push('\n');
        }
        let name = error.server.as_deref().unwrap_or("(the whole file)");
        let _ = writeln!(report, "{name}  (not loaded: invalid configuration)");
        let _ = writeln!(report, "  error:  {error}");
    }
    report
}
