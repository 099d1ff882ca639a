//! Fault suites for the real `tern` binary (scripted model over real HTTP on 127.0.0.1, real processes, real
//! terminals through tmux): signals during commands and streams, then resume; a full disk under the workspace and
//! the session; an MCP server that crashes mid-call; a panic in a view. Each case is bounded in time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

#[path = "faults/common.rs"]
mod common;
#[path = "faults/disk.rs"]
mod disk;
#[path = "faults/mcp.rs"]
mod mcp;
#[path = "faults/modes.rs"]
mod modes;
#[path = "faults/panic.rs"]
mod panic;
#[path = "faults/signals.rs"]
mod signals;
