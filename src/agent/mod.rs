//! The agent: the runner (one background task per session, Ops in, Events out), the turn loop, tool-call scheduling,
//! the approval gate, and the context sent to the model. It never imports a terminal library.

pub mod approval;
mod calls;
pub mod context;
pub mod prompt;
pub mod runner;
mod turn;

use std::path::Path;
use std::sync::Arc;

use crate::config::Settings;
use crate::session::ToolResultStore;
use crate::tools::exec::{ExecConfig, ExecTool};
use crate::tools::{PathPolicy, ToolRegistry};

pub use runner::{AgentConfig, AgentHandle, spawn};

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Provider(#[from] crate::provider::ProviderError),
    #[error("workspace: {0}")]
    Workspace(#[from] crate::tools::PathError),
    #[error("cannot create the session directory {path}: {source}")]
    SessionDir { path: String, source: std::io::Error },
}

/// Everything a session needs from settings: the provider, the tools, the policy and the gate.
pub fn config_for(settings: &Settings, workspace: &Path) -> Result<AgentConfig, StartError> {
    let provider = crate::provider::build(&settings.provider)?;
    let session_id = crate::session::new_session_id();
    let results = ToolResultStore::for_session(&crate::config::data_dir(), &session_id);
    results.ensure_dir().map_err(|source| StartError::SessionDir {
        path: results.dir().display().to_string(),
        source,
    })?;
    let mut policy = PathPolicy::new(workspace)?.allow_read_root(results.dir());
    for root in &settings.write_roots {
        policy = policy.allow_write_root(root);
    }
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(ExecTool::new(ExecConfig {
        default_timeout: settings.exec_timeout,
        env_allow: settings.env_allow.clone(),
        ..ExecConfig::default()
    })));
    Ok(AgentConfig {
        provider,
        tools,
        gate: approval::ApprovalGate::new(settings.mode, settings.allow.clone(), settings.deny.clone()),
        system_prompt: prompt::system_prompt(policy.root()),
        policy,
        max_iterations: settings.max_iterations,
        context_window: settings.context_window,
        reserve_tokens: u64::from(settings.provider.max_tokens.unwrap_or(8_192)),
        results,
        history: Vec::new(),
    })
}

/// Starts a session's agent task from settings.
pub fn start(settings: &Settings, workspace: &Path) -> Result<AgentHandle, StartError> {
    Ok(spawn(config_for(settings, workspace)?))
}
