//! The MCP client against real servers: `@modelcontextprotocol/server-everything` over stdio, streamable HTTP and
//! legacy SSE (installed by `.ci/install-mcp-servers`), plus a small scripted Node server for the hostile cases
//! (colliding and overlong names, odd schemas, a notification flood, list changes). Calls go through the registry as
//! the runner makes them, and one turn goes through the real runner against the scripted model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod caps;
mod caps_terminal;
mod everything;
pub(crate) mod harness;
mod hostile;
mod manage;
mod oauth;
pub(crate) mod oauth_server;
mod startup;
