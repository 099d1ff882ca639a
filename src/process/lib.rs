//! How tern starts a child process, a command, a hook, a stdio MCP server or a language server alike: in a process
//! group of its own that dies with tern (`group`), with the environment it gets (an allowlist, no keys: `env`) and the
//! settings that keep git from running programs a repository's config names (`git_env`); a server spoken to over its
//! stdin and stdout, with its stderr logged (`server`). Where a program tern starts itself is looked up is
//! `tern_fs::search_path`'s.
//!
//! Must not: decide whether a child may run (the gate does), nor where (the sandbox does).

pub mod env;
pub mod git_env;
pub mod group;
pub mod server;
