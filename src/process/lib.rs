//! How tern starts a child process, a command, a hook or a stdio MCP server alike: in a process group of its own that
//! dies with tern (`group`), with the environment it gets (an allowlist, no keys: `env`) and the settings that keep
//! git from running programs a repository's config names (`git_env`).
//!
//! Must not: decide whether a child may run (the gate does), nor where (the sandbox does).

pub mod env;
pub mod git_env;
pub mod group;
