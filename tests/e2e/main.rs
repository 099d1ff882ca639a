//! The end-to-end tests: the real `tern` binary and library against a scripted model over real HTTP on 127.0.0.1,
//! real processes, real MCP servers and a real terminal through tmux. One test binary (one link of the library),
//! one module per suite; `cargo test --test e2e <suite>::` runs one suite, e.g. `cargo test --test e2e tui_e2e::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod acp;
mod claude_project;
mod commands_e2e;
mod compaction;
mod compat_cli;
mod conformance;
mod escape;
mod export;
mod faults;
mod gate_differential;
mod gate_parser_props;
mod headless;
mod hooks;
mod hostile;
mod images;
mod lsp;
mod mcp;
mod memory;
mod notify;
mod path_policy;
mod plan;
mod processes;
mod provider;
mod provider_faults;
mod resume;
mod review;
mod runner;
mod sandbox;
mod secrets;
mod steps;
mod subagent;
mod tui_e2e;
mod undo;
mod web;
