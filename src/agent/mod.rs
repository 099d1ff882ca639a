//! The agent: the runner (one background task per session, Ops in, Events out), the turn loop, tool-call scheduling,
//! the approval gate, and the context sent to the model. It never imports a terminal library.

pub mod approval;
mod calls;
pub mod checkpoint;
pub mod compact;
pub mod context;
pub(crate) mod conversation;
pub mod memory;
pub mod prompt;
pub mod runner;
mod turn;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Settings;
use crate::protocol::Message;
use crate::session::{SessionLog, SessionMeta, ToolResultStore};
use crate::tools::exec::{ExecConfig, ExecTool};
use crate::tools::mcp::{self, McpManager};
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
    #[error("cannot resume {path}: {source}")]
    Resume { path: String, source: std::io::Error },
    #[error(transparent)]
    Mcp(#[from] crate::tools::mcp::McpConfigError),
}

/// Which session a start made or continued.
#[derive(Clone)]
pub struct SessionInfo {
    pub id: String,
    /// The conversation so far (empty for a new session), for a frontend to show.
    pub history: Vec<Message>,
    /// Where the log is, when it could be created.
    pub log_path: Option<PathBuf>,
    /// The MCP servers of the session, when any are configured.
    pub mcp: Option<Arc<McpManager>>,
    /// Configuration that was ignored or questionable, for the user to see.
    pub warnings: Vec<String>,
}

/// Everything a session needs from settings: the provider, the tools, the policy and the gate. `resume` continues the
/// session logged at that path.
pub fn config_for(
    settings: &Settings,
    workspace: &Path,
    resume: Option<&Path>,
) -> Result<(AgentConfig, SessionInfo), StartError> {
    let provider = crate::provider::build(&settings.provider)?;
    let data_dir = crate::config::data_dir();
    let (session_id, history, history_events, log) = match resume {
        Some(path) => {
            let loaded = crate::session::log::load(path).map_err(|source| StartError::Resume {
                path: path.display().to_string(),
                source,
            })?;
            let events = loaded.events.len();
            (
                loaded.meta.id,
                loaded.messages,
                events,
                SessionLog::append_to(path).ok(),
            )
        }
        None => {
            let id = crate::session::new_session_id();
            let meta = SessionMeta {
                id: id.clone(),
                workspace: workspace.display().to_string(),
                provider: provider.name().to_string(),
                model: provider.model().to_string(),
            };
            let log = match SessionLog::create(&SessionLog::path_for(&data_dir, &id), &meta) {
                Ok(log) => Some(log),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot create the session log; this session will not be resumable");
                    None
                }
            };
            (id, Vec::new(), 0, log)
        }
    };
    let (mcp, mut warnings) = start_mcp(settings, workspace)?;
    let sandbox = exec_sandbox(&settings.sandbox, &settings.write_roots, &mut warnings);
    warnings.extend(
        settings
            .ignored
            .iter()
            .map(|f| format!("ignored {f} from an untrusted project ({})", crate::config::TRUST_HINT)),
    );
    let context = prompt::ContextSources::for_workspace(workspace);
    let system_prompt = prompt::SystemPrompt::build(&context);
    warnings.extend(system_prompt.warnings.iter().cloned());
    let info = SessionInfo {
        id: session_id.clone(),
        history: history.clone(),
        log_path: log.as_ref().map(|l| l.path().to_path_buf()),
        mcp: mcp.clone(),
        warnings,
    };
    let results = ToolResultStore::for_session(&data_dir, &session_id);
    results.ensure_dir().map_err(|source| StartError::SessionDir {
        path: results.dir().display().to_string(),
        source,
    })?;
    let mut policy = PathPolicy::new(workspace)?.allow_read_root(results.dir());
    // The model reads the user's skills on demand (they are listed in the prompt with their paths).
    if let Some(skills) = context.user_skills_dir() {
        policy = policy.allow_read_root(skills);
    }
    for root in &settings.write_roots {
        policy = policy.allow_write_root(root);
    }
    let mut gate = approval::ApprovalGate::new(settings.mode, settings.allow.clone(), settings.deny.clone());
    gate.set_sandboxed(sandbox.is_some());
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(ExecTool::new(ExecConfig {
        default_timeout: settings.exec_timeout,
        env_allow: settings.env_allow.clone(),
        sandbox,
        ..ExecConfig::default()
    })));
    if let Some(manager) = mcp {
        tools.add_source(manager);
    }
    let config = AgentConfig {
        provider,
        tools,
        gate,
        system_prompt,
        policy,
        max_iterations: settings.max_iterations,
        context_window: settings.context_window,
        reserve_tokens: settings.output_limit,
        compaction: settings.compaction,
        results,
        history,
        history_events,
        log,
    };
    Ok((config, info))
}

/// The OS sandbox under the gate. Where it cannot run, commands run unconfined, the gate asks before each, and a
/// warning says so once.
fn exec_sandbox(
    settings: &crate::config::SandboxSettings,
    write_roots: &[PathBuf],
    warnings: &mut Vec<String>,
) -> Option<crate::sandbox::SandboxPolicy> {
    let sandbox = crate::sandbox::SandboxPolicy::from_settings(settings, write_roots).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "cannot find tern's own executable to launch the sandbox");
        None
    });
    if sandbox.is_none() {
        warnings.extend(crate::sandbox::notice(settings));
    }
    sandbox
}

/// How long a session waits for MCP servers before its first request.
pub const MCP_STARTUP: std::time::Duration = std::time::Duration::from_secs(10);

/// The configured MCP servers, started in the background. A project's own `.mcp.json` servers start only when the
/// project is trusted: a cloned repository must not run programs just by being opened.
pub fn mcp_servers(settings: &Settings, workspace: &Path) -> Result<mcp::McpConfig, StartError> {
    let label = settings
        .sources
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    let mut config = mcp::load_servers(&settings.mcp_servers, &label, workspace, settings.mcp_config.as_deref())?;
    if !settings.project_trusted {
        let project = workspace.join(".mcp.json").display().to_string();
        for server in config.servers.iter_mut().filter(|s| s.source == project) {
            server.problem = Some(format!(
                "defined by the project's .mcp.json, so not started until you trust the project: {}",
                crate::config::TRUST_HINT
            ));
        }
    }
    Ok(config)
}

fn start_mcp(settings: &Settings, workspace: &Path) -> Result<(Option<Arc<McpManager>>, Vec<String>), StartError> {
    let config = mcp_servers(settings, workspace)?;
    if config.servers.is_empty() {
        return Ok((None, config.warnings));
    }
    Ok((Some(McpManager::start(config.servers, MCP_STARTUP)), config.warnings))
}

/// Starts a session's agent task from settings.
pub fn start(
    settings: &Settings,
    workspace: &Path,
    resume: Option<&Path>,
) -> Result<(AgentHandle, SessionInfo), StartError> {
    let (config, info) = config_for(settings, workspace, resume)?;
    Ok((spawn(config), info))
}

/// Starts the scripted demo agent in `root` (a temporary copy of the sample project). Its large results go to a
/// sibling `results` directory inside the same temporary directory, so nothing outside it is touched.
pub fn start_demo(root: &Path) -> Result<(AgentHandle, SessionInfo), StartError> {
    let results_dir = root.parent().unwrap_or(root).join("results");
    let results = ToolResultStore::new(&results_dir);
    results.ensure_dir().map_err(|source| StartError::SessionDir {
        path: results_dir.display().to_string(),
        source,
    })?;
    let policy = PathPolicy::new(root)?.allow_read_root(results.dir());
    let mut warnings = Vec::new();
    let sandbox = exec_sandbox(&crate::config::SandboxSettings::default(), &[], &mut warnings);
    let mut gate = approval::ApprovalGate::new(approval::ApprovalMode::AutoEdit, Vec::new(), Vec::new());
    gate.set_sandboxed(sandbox.is_some());
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(ExecTool::new(ExecConfig {
        sandbox,
        ..ExecConfig::default()
    })));
    let config = AgentConfig {
        provider: Arc::new(crate::demo::DemoProvider::new(std::time::Duration::from_millis(40))),
        tools,
        gate,
        system_prompt: prompt::system_prompt(policy.root()).into(),
        policy,
        max_iterations: 20,
        context_window: 128_000,
        reserve_tokens: 8_192,
        compaction: crate::config::Compaction::default(),
        results,
        history: Vec::new(),
        history_events: 0,
        log: None,
    };
    let info = SessionInfo {
        id: "demo".into(),
        history: Vec::new(),
        log_path: None,
        mcp: None,
        warnings,
    };
    Ok((spawn(config), info))
}
