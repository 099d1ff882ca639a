//! The MCP client against real servers: `@modelcontextprotocol/server-everything` over stdio, streamable HTTP and
//! legacy SSE (installed by `.ci/install-mcp-servers`), plus a small scripted Node server for the hostile cases
//! (colliding and overlong names, odd schemas, a notification flood, list changes). Calls go through the registry as
//! the runner makes them, and one turn goes through the real runner against the scripted model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

#[path = "mcp/caps.rs"]
mod caps;
#[path = "mcp/caps_terminal.rs"]
mod caps_terminal;
#[path = "mcp/everything.rs"]
mod everything;
#[path = "mcp/harness.rs"]
mod harness;
#[path = "mcp/hostile.rs"]
mod hostile;
#[path = "mcp/manage.rs"]
mod manage;
#[path = "mcp/oauth.rs"]
mod oauth;
#[path = "mcp/startup.rs"]
mod startup;
