//! The escape suite: one test module per class of door out of the sandbox or off the screen (issue "seal"). Each test
//! runs the attack for real (a socket server outside, a second pty, a planted hook fired by a real `git`, a concurrent
//! directory swap, fake credentials in a temp HOME, a hostile file name, an MCP server whose names collide) and checks
//! that nothing escapes or leaks, and that the ordinary workflow next to it still works.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// One `mod` line per class; each module keeps its own helpers.

mod devices;
mod gitrepos;
mod mcp;
mod persistence;
mod probes;
mod races;
mod sandboxed;
mod screen;
mod secrets;
mod sockets;
mod workflows;
