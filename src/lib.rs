//! tern: a full-screen terminal coding assistant. This root crate is the composition root: it loads the
//! configuration, starts sessions from it (`host`), and holds the frontends and the command line. The layers below it
//! are crates of their own (src/ARCHITECTURE.md), re-exported here under their old module names.

pub mod clipboard;
pub mod config;
pub mod demo;

pub mod acp_host;
pub mod host;
pub mod tui_host;

pub use tern_acp as acp;
pub use tern_agent as agent;
pub use tern_agent::hooks;
pub use tern_commands as commands;
pub use tern_headless as headless;
pub use tern_lsp as lsp;
pub use tern_mcp as mcp;
pub use tern_process as process;
pub use tern_protocol as protocol;
pub use tern_provider as provider;
pub use tern_provider::models;
pub use tern_sandbox as sandbox;
pub use tern_secrets as secrets;
pub use tern_session as session;
pub use tern_text as terminal_text;
pub use tern_text::units;
pub use tern_tools as tools;
pub use tern_tui as tui;

#[cfg(test)]
mod tests;
