//! The escape suite: one test module per class of door out of the sandbox or off the screen (issue "seal"). Each test
//! runs the attack for real (a socket server outside, a second pty, a planted hook fired by a real `git`, a concurrent
//! directory swap, fake credentials in a temp HOME, a hostile file name, an MCP server whose names collide) and checks
//! that nothing escapes or leaks, and that the ordinary workflow next to it still works.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// One `mod` line per class; each module keeps its own helpers.
mod support;

#[path = "escape/devices.rs"]
mod devices;
#[path = "escape/gitrepos.rs"]
mod gitrepos;
#[path = "escape/mcp.rs"]
mod mcp;
#[path = "escape/persistence.rs"]
mod persistence;
#[path = "escape/probes.rs"]
mod probes;
#[path = "escape/races.rs"]
mod races;
#[path = "escape/sandboxed.rs"]
mod sandboxed;
#[path = "escape/screen.rs"]
mod screen;
#[path = "escape/secrets.rs"]
mod secrets;
#[path = "escape/sockets.rs"]
mod sockets;
#[path = "escape/workflows.rs"]
mod workflows;
