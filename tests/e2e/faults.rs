//! Fault suites for the real `tern` binary (scripted model over real HTTP on 127.0.0.1, real processes, real
//! terminals through tmux): signals during commands and streams, then resume; a full disk under the workspace and
//! the session; an MCP server that crashes mid-call; a panic in a view. Each case is bounded in time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub(crate) mod common;
mod disk;
mod mcp;
mod modes;
mod panic;
mod signals;
