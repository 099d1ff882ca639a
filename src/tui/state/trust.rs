//! The project trust offer: what the UI asks at start when a workspace has its own configuration that is not trusted
//! (the host finds it: `tern::config::offer`), and where trust is written (by the host, `Host::trust`).

use std::path::PathBuf;

/// What the trust prompt shows and where trust is written.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustOffer {
    pub workspace: PathBuf,
    /// The user's config file, where `trusted_projects` is kept.
    pub user_config: PathBuf,
    /// The project's own files found, relative to the workspace.
    pub files: Vec<String>,
    /// The MCP servers that would start: (name, command line or URL as written in the file, unexpanded).
    pub servers: Vec<(String, String)>,
    /// What else would change, one line each (allow rules, hooks, mode, sandbox ...).
    pub changes: Vec<String>,
    /// The digest of the project's files, taken before they were read for the prompt: trust is bound to it.
    pub digest: String,
}
