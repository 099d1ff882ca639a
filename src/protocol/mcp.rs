//! What a frontend is told of the session's MCP servers (`Event::McpServers`): each server's state and what it
//! offers. The MCP client itself lives below the agent; these are only its reports.

pub mod report;

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    Disabled,
    Connecting,
    /// Connected; the counts are what is offered after the server's filter.
    Ready {
        tools: usize,
        resources: usize,
        prompts: usize,
    },
    /// It was ready, then its connection ended; its tools stay offered and the next use starts it again.
    Disconnected {
        reason: String,
    },
    Failed {
        reason: String,
    },
}

/// One offered tool, for `/mcp` and `tern mcp list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSummary {
    pub name: String,
    pub original: String,
    pub kind: ItemKind,
    pub read_only: bool,
    /// The first line of the description.
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    pub name: String,
    pub transport: TransportKind,
    /// The command line or URL.
    pub target: String,
    /// The config file it came from.
    pub source: String,
    pub state: ServerState,
    /// The server was never started: its configuration cannot be used as written (an unset variable), or it comes
    /// from an untrusted project's `.mcp.json`. Its state is `Failed` with the reason.
    pub skipped: bool,
    /// How long one start may take (`startup_timeout_sec`).
    pub startup_timeout: Duration,
    pub tools: Vec<ToolSummary>,
    /// `name version` as the server reported it.
    pub server_info: Option<String>,
    /// What the server asks the model to know about using it.
    pub instructions: Option<String>,
    /// The process id of a running stdio server.
    pub pid: Option<u32>,
    /// What the server lists but tern does not offer, and why.
    pub problems: Vec<String>,
    /// The resources and URI templates it offers (after its filter), read through the generic resource tools.
    pub resources: Vec<ResourceSummary>,
    /// The prompts it offers (after its filter), the user's slash commands.
    pub prompts: Vec<PromptSummary>,
    /// Turned on or off for this session only (`/mcp`), whatever the config says.
    pub switched: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    Stdio,
    Http,
    Sse,
}

impl std::fmt::Display for TransportKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
            TransportKind::Sse => "sse",
        })
    }
}

/// What an MCP item is, which decides its name's infix and how it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    Tool,
    Resource,
    Prompt,
}

/// One prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptSummary {
    pub name: String,
    /// The first line of the description (or the title).
    pub description: String,
    pub arguments: Vec<PromptArgument>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArgument {
    pub name: String,
    pub required: bool,
}

impl PromptSummary {
    /// `/mcp__server__prompt` without the slash.
    pub fn command(&self, server: &str) -> String {
        format!("{COMMAND_PREFIX}{server}__{}", self.name)
    }

    /// The arguments as the slash popup shows them: `<city> [state]`.
    pub fn usage(&self) -> String {
        self.arguments
            .iter()
            .map(|a| {
                if a.required {
                    format!("<{}>", a.name)
                } else {
                    format!("[{}]", a.name)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The prefix of every prompt command.
pub const COMMAND_PREFIX: &str = "mcp__";

/// How the failure of a server that needs an OAuth login begins (`tern mcp login` gives it one).
pub const NEEDS_LOGIN: &str = "needs login: ";

/// Whether a server's failure reason says it needs a login.
pub fn is_needs_login(reason: &str) -> bool {
    reason.starts_with(NEEDS_LOGIN)
}

/// One resource (or URI template) a server offers, for the tools, `/mcp` and `@` in the composer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceSummary {
    /// The URI, or the URI template when `template`.
    pub uri: String,
    pub name: String,
    pub mime: Option<String>,
    pub size: Option<u64>,
    /// The first line of the description.
    pub description: String,
    pub template: bool,
}
