//! Shared helpers for integration tests and benchmarks. Include with `mod support;` from a test file.
#![allow(dead_code)]

pub mod agent;
pub mod mock_llm;
pub mod tern;
pub mod tmux;
