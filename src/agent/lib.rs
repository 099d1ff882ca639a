//! The agent: the runner (one background task per session, Ops in, Events out), the turn loop, tool-call scheduling,
//! the approval gate, and the context sent to the model. It never imports a terminal library.

pub mod approval;
mod calls;
pub mod checkpoint;
pub mod compact;
pub mod context;
pub(crate) mod conversation;
pub mod hooks;
pub mod memory;
pub mod planted;
pub mod prompt;
pub(crate) mod review;
pub mod runner;
mod session;
mod shared;
pub mod subagent;

pub use runner::{AgentConfig, AgentHandle, spawn};

/// A project's Claude Code settings files, relative to the workspace: their hooks run outside the sandbox once the
/// project is trusted, so the edit tools ask before writing them and a command that writes them is reported.
pub const CLAUDE_SETTINGS: [&str; 2] = [".claude/settings.json", ".claude/settings.local.json"];
