//! Starting a session: the agent of a new, resumed or demo session built from the settings (the provider, the
//! tools, the policy, the gate, the MCP servers, the session log), and what a frontend is told about it. This is the
//! composition the command line and the frontends share; nothing below it reads settings.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::config::Settings;
use crate::mcp::{self, McpManager};
use crate::protocol::{Event, Message};
use crate::session::{SessionLog, SessionMeta, ToolResultStore};
use crate::tools::exec::{ExecConfig, ExecTool};
use crate::tools::{PathPolicy, ToolRegistry};

use crate::agent::{AgentConfig, AgentHandle, approval, checkpoint, prompt, runner, spawn};

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
    Mcp(#[from] crate::mcp::McpConfigError),
}

/// Which session a start made or continued.
#[derive(Clone)]
pub struct SessionInfo {
    pub id: String,
    /// The conversation so far, for a frontend to show when the session has no recorded events (one written before
    /// events were recorded); empty otherwise.
    pub history: Vec<Message>,
    /// The transcript's recorded events with their Unix-ms times (empty for a new session), for a frontend to replay.
    pub events: Vec<(u64, Event)>,
    /// Where the log is, when it could be created.
    pub log_path: Option<PathBuf>,
    /// The MCP servers of the session, when any are configured.
    pub mcp: Option<Arc<McpManager>>,
    /// How long the first request waits for those still starting (from when they were started).
    pub mcp_wait: std::time::Duration,
    /// Configuration that was ignored or questionable, and a data directory that cannot be written, for the user to
    /// see.
    pub warnings: Vec<String>,
    /// What a resume did not bring back (a looser mode, "always" answers), for the user to see.
    pub notices: Vec<String>,
    /// What models cost, for a frontend to price the session's usage.
    pub prices: Arc<crate::models::Catalog>,
}

/// Everything a session needs from settings: the provider, the tools, the policy and the gate. `resume` continues the
/// session logged at that path, on the model it last used, with the "always" answers it recorded (each checked again
/// by the gate); its mode is not restored (the configured mode holds), and a notice says so.
pub fn config_for(
    settings: &Settings,
    workspace: &Path,
    resume: Option<&Path>,
) -> Result<(AgentConfig, SessionInfo), StartError> {
    let data_dir = crate::config::data_dir();
    // Old work-tree snapshots go in the background, whatever this session does.
    checkpoint::collect_in_background(data_dir.join("shadow"), settings.checkpoints);
    let mut warnings = Vec::new();
    let mut notices = Vec::new();
    let opened = match resume {
        Some(path) => resume_session(settings, workspace, path, &mut warnings, &mut notices)?,
        None => new_session(settings, workspace, &data_dir, &mut warnings)?,
    };
    let (mcp_setup, mcp_elicitations) = mcp::ClientSetup::session(workspace);
    let (
        StartedMcp {
            manager: mcp,
            wait: mcp_wait,
        },
        mcp_warnings,
    ) = start_mcp(settings, workspace, mcp_setup)?;
    warnings.extend(mcp_warnings);
    let sandbox = session_sandbox(settings, workspace, &mut warnings);
    warnings.extend(settings.warnings.iter().cloned());
    warnings.extend(
        settings
            .ignored
            .iter()
            .map(|f| format!("ignored {f} from an untrusted project ({})", crate::config::TRUST_HINT)),
    );
    let mut context = prompt::ContextSources::for_workspace(workspace);
    context.appended = settings.append_system_prompt.clone();
    let system_prompt = session_prompt(&context, mcp.as_ref(), &mut warnings);
    let (agents, agent_warnings) = crate::agent::subagent::agents::collect(&context);
    warnings.extend(agent_warnings);
    let Opened {
        provider,
        id: session_id,
        history,
        events,
        checkpoints,
        granted,
        log,
    } = opened;
    let results = session_results(&data_dir, &session_id, log.is_some(), &mut warnings);
    let history_events = events.len();
    let history_usage = last_usage(&events);
    let mut info = SessionInfo {
        id: session_id.clone(),
        // A session with recorded events replays those; only an older one (messages only) needs its prose copied.
        history: if events.is_empty() { history.clone() } else { Vec::new() },
        events,
        log_path: log.as_ref().map(|l| l.path().to_path_buf()),
        mcp: mcp.clone(),
        mcp_wait,
        warnings,
        notices,
        prices: settings.provider.catalog.clone(),
    };
    let policy = session_policy(settings, workspace, &results, &context)?;
    let mut gate = session_gate(settings, sandbox.is_some());
    // A resumed session's "always" answers hold again, each checked as a fresh one (deny rules still win).
    let (kept, dropped) = gate.restore(&granted, &policy);
    info.warnings.extend(dropped);
    if !kept.is_empty() {
        info.notices.push(format!(
            "\"always\" answers of the session hold again: {}",
            kept.join(", ")
        ));
    }
    let lsp = session_lsp(settings, sandbox.as_ref(), policy.root(), &mut info.warnings);
    let tools = session_tools(settings, sandbox);
    let config = AgentConfig::new(provider, tools, policy, gate, system_prompt, results)
        .with_max_iterations(settings.max_iterations)
        .with_context_window(settings.context_window)
        .with_catalog(settings.provider.catalog.clone())
        .with_reserve_tokens(settings.output_limit)
        .with_compaction(settings.compaction)
        .with_history(history)
        .with_history_events(history_events)
        .with_history_usage(history_usage)
        .with_history_checkpoints(checkpoints)
        .with_hooks(
            crate::hooks::Hooks::new(settings.hooks.clone(), &session_id, workspace)
                .with_transcript(info.log_path.as_deref())
                .with_env_allow(settings.env_allow.clone()),
        )
        .with_log(log)
        .with_subagents(settings.subagents)
        .with_agents(agents)
        .with_mcp_elicitations(mcp_elicitations)
        .with_mcp(mcp)
        .with_lsp(lsp)
        .with_rule_store(Arc::new(crate::config::rules::ConfigRules::new(workspace)));
    Ok((config, info))
}

/// The session a start opens, new or resumed: its provider, its id, what it has recorded so far and its log.
struct Opened {
    provider: Arc<dyn crate::provider::Provider>,
    id: String,
    history: Vec<Message>,
    events: Vec<(u64, Event)>,
    checkpoints: Vec<crate::session::checkpoint::TurnCheckpoint>,
    /// The "always for this session" rules a resumed session was given (empty for a new one).
    granted: Vec<crate::session::log::Granted>,
    /// `None` when the log cannot be written (a warning says so).
    log: Option<SessionLog>,
}

/// Opens the session logged at `path` again, on the model it last used when the provider is the same, with what a
/// resume does not bring back in `notices` and a log that cannot be appended to in `warnings`.
fn resume_session(
    settings: &Settings,
    workspace: &Path,
    path: &Path,
    warnings: &mut Vec<String>,
    notices: &mut Vec<String>,
) -> Result<Opened, StartError> {
    let loaded = crate::session::log::load(path).map_err(|source| StartError::Resume {
        path: path.display().to_string(),
        source,
    })?;
    let mut provider_config = settings.provider.clone();
    if loaded.meta.provider == provider_config.kind.as_str() {
        provider_config.model = loaded.model().to_string();
    }
    let provider = crate::provider::build(&provider_config)?;
    notices.extend(unrestored(&loaded, settings.mode));
    let log = match SessionLog::append_to(path) {
        Ok(log) => Some(log),
        Err(e) => {
            warnings.push(unwritable(path, &e));
            None
        }
    };
    let (checkpoints, notice) = checkpoint::restorable(&loaded.meta, loaded.checkpoints, path, workspace);
    notices.extend(notice);
    Ok(Opened {
        provider,
        id: loaded.meta.id,
        history: loaded.messages,
        events: loaded.events,
        checkpoints,
        granted: loaded.granted,
        log,
    })
}

/// Opens a new session with a fresh id and its log under `data_dir`, with a log that cannot be created in
/// `warnings`.
fn new_session(
    settings: &Settings,
    workspace: &Path,
    data_dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<Opened, StartError> {
    let provider = crate::provider::build(&settings.provider)?;
    let id = crate::session::new_session_id();
    let meta = SessionMeta {
        id: id.clone(),
        workspace: workspace.display().to_string(),
        provider: provider.name().to_string(),
        model: provider.model().to_string(),
        forked_from: None,
        forked_messages: None,
    };
    let path = SessionLog::path_for(data_dir, &id);
    let log = match SessionLog::create(&path, &meta) {
        Ok(log) => Some(log),
        Err(e) => {
            warnings.push(unwritable(&path, &e));
            None
        }
    };
    Ok(Opened {
        provider,
        id,
        history: Vec::new(),
        events: Vec::new(),
        checkpoints: Vec::new(),
        granted: Vec::new(),
        log,
    })
}

/// The session's OS sandbox (see `exec_sandbox`), told the workspace's secret files to hide when the settings say so.
fn session_sandbox(
    settings: &Settings,
    workspace: &Path,
    warnings: &mut Vec<String>,
) -> Option<crate::sandbox::SandboxPolicy> {
    let mut sandbox = exec_sandbox(&settings.sandbox, &settings.write_roots, workspace, warnings);
    // The workspace's .env files and keys, found off the start-up path; the first command waits for the walk.
    if let Some(policy) = sandbox.as_mut().filter(|_| settings.sandbox.hide_workspace_secrets) {
        let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        policy.secret_files = crate::secrets::files::WorkspaceSecrets::find(&root);
    }
    sandbox
}

/// The session's language servers, run in the session's OS sandbox as commands are: none without one (a warning says
/// so when a server is installed), or when `[lsp]` turns them off.
fn session_lsp(
    settings: &Settings,
    sandbox: Option<&crate::sandbox::SandboxPolicy>,
    root: &Path,
    warnings: &mut Vec<String>,
) -> Option<Arc<crate::lsp::Servers>> {
    let lsp = settings.lsp.clone()?;
    let Some(sandbox) = sandbox else {
        if crate::lsp::any_installed(&lsp) {
            warnings.push(
                "language servers do not start without the OS sandbox (they run the project's code): edits get no \
                 diagnostics"
                    .into(),
            );
        }
        return None;
    };
    Some(Arc::new(crate::lsp::Servers::new(
        lsp,
        sandbox.clone(),
        root.to_path_buf(),
    )))
}

/// The system prompt from the workspace's context files and the MCP servers' instructions, with its warnings added to
/// `warnings`.
fn session_prompt(
    context: &prompt::ContextSources,
    mcp: Option<&Arc<McpManager>>,
    warnings: &mut Vec<String>,
) -> prompt::SystemPrompt {
    let mut system_prompt = prompt::SystemPrompt::build(context);
    if let Some(manager) = mcp {
        // The servers' instructions join the prompt as each server becomes ready.
        system_prompt = system_prompt.with_mcp(Arc::clone(manager));
    }
    warnings.extend(system_prompt.warnings.iter().cloned());
    system_prompt
}

/// Where the session's large tool results are kept. A data directory that cannot be written is told in `warnings`
/// when the log could be (otherwise its warning already says so).
fn session_results(data_dir: &Path, session_id: &str, logged: bool, warnings: &mut Vec<String>) -> ToolResultStore {
    let results = ToolResultStore::for_session(data_dir, session_id);
    // A read-only or full data directory costs the session its log and its stored results, not the session: large
    // results then go to the model as head and tail.
    if let Err(e) = results.ensure_dir()
        && logged
    {
        warnings.push(unwritable(results.dir(), &e));
    }
    results
}

/// The token totals a resumed session left off at (the last recorded usage), zero for a new one.
fn last_usage(events: &[(u64, Event)]) -> crate::protocol::Usage {
    events
        .iter()
        .rev()
        .find_map(|(_, e)| match e {
            crate::protocol::Event::TokenUsage { total, .. } => Some(*total),
            _ => None,
        })
        .unwrap_or_default()
}

/// Where the session's tools may read and write: the workspace, the stored results, the user's skills and the
/// configured write roots, with the credential stores hidden.
fn session_policy(
    settings: &Settings,
    workspace: &Path,
    results: &ToolResultStore,
    context: &prompt::ContextSources,
) -> Result<PathPolicy, StartError> {
    let mut policy = PathPolicy::new(workspace)?
        .allow_read_root(results.dir())
        .hide_stores(settings.sandbox.credential_stores());
    // The model reads the user's skills on demand (they are listed in the prompt with their paths).
    for skills in context.user_skills_dirs() {
        policy = policy.allow_read_root(skills);
    }
    for root in &settings.write_roots {
        policy = policy.allow_write_root(root);
    }
    Ok(policy)
}

/// The approval gate of the configured mode and rules, told whether commands run in the OS sandbox.
fn session_gate(settings: &Settings, sandboxed: bool) -> approval::ApprovalGate {
    let mut gate = approval::ApprovalGate::new(settings.mode, settings.allow.clone(), settings.deny.clone());
    gate.set_sandboxed(sandboxed);
    gate
}

/// The session's tools: the built-in ones, `exec` in `sandbox` with the configured timeout and environment, and the
/// configured web tools.
fn session_tools(settings: &Settings, sandbox: Option<crate::sandbox::SandboxPolicy>) -> ToolRegistry {
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(ExecTool::new(ExecConfig {
        default_timeout: settings.exec_timeout,
        env_allow: settings.env_allow.clone(),
        sandbox,
        ..ExecConfig::default()
    })));
    for tool in crate::tools::web::tools(&settings.web, crate::secrets::var) {
        tools.register(tool);
    }
    tools
}

/// The warning for a data directory tern cannot write.
fn unwritable(path: &Path, e: &std::io::Error) -> String {
    format!(
        "cannot write {}: {e}; this session goes on in memory only (it will not be resumable, and large results are \
         shown head and tail instead of being kept on disk)",
        path.display()
    )
}

/// What a resumed session does not bring back, so the user is not surprised: it starts in the configured mode
/// whatever the recorded session had, and a session recorded before "always" rules were logged has none of them.
fn unrestored(loaded: &crate::session::log::Loaded, configured: crate::protocol::ApprovalMode) -> Vec<String> {
    let mut notices = Vec::new();
    if let Some(mode) = loaded.mode().filter(|m| *m != configured) {
        notices.push(format!(
            "the session was in mode {mode}; it resumes in {configured}, as configured (/mode to change it)"
        ));
    }
    match loaded.always_rules() {
        _ if !loaded.granted.is_empty() => {}
        0 => {}
        n => notices.push(format!(
            "{n} \"always\" answer{} of the session {} not carried over: those commands ask again",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
        )),
    }
    notices
}

/// The OS sandbox under the gate. Where it cannot run, commands run unconfined, the gate asks before each, and a
/// warning says so once. The git repositories under `workspace` are found on a thread of their own, off the way of
/// the first command.
fn exec_sandbox(
    settings: &crate::config::SandboxSettings,
    write_roots: &[PathBuf],
    workspace: &Path,
    warnings: &mut Vec<String>,
) -> Option<crate::sandbox::SandboxPolicy> {
    // Commands may write these (in the sandbox or not): no program tern starts itself is looked up in them.
    tern_fs::search_path::guard(
        &[
            &[workspace.to_path_buf()],
            write_roots,
            settings.writable_roots.as_slice(),
        ]
        .concat(),
    );
    let sandbox = crate::sandbox::SandboxPolicy::from_settings(settings, write_roots).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "cannot find tern's own executable to launch the sandbox");
        None
    });
    match &sandbox {
        None => warnings.extend(crate::sandbox::notice(settings)),
        Some(policy) => {
            warnings.extend(policy.unix_sockets_notice());
            let (policy, workspace) = (policy.clone(), workspace.to_path_buf());
            std::thread::spawn(move || policy.prepare(&workspace));
        }
    }
    sandbox
}

/// How long a session's first request waits for MCP servers still starting (from when they were started): a local
/// server is ready in well under this, and a slow or hanging one costs no more than this once. A server that is
/// later ready brings its tools and instructions to the next request.
pub const MCP_STARTUP: std::time::Duration = std::time::Duration::from_secs(2);

/// The configured MCP servers. A project's own `.mcp.json` servers start only when the project is trusted: a cloned
/// repository must not run programs just by being opened. Broken entries are left out and listed in `errors`.
pub fn mcp_servers(settings: &Settings, workspace: &Path) -> Result<mcp::McpConfig, StartError> {
    mcp_servers_from(
        &settings.mcp_servers,
        &settings.sources,
        settings.mcp_config.as_deref(),
        settings.project_trusted,
        workspace,
    )
}

/// The configured MCP servers from the merged configuration files, without resolving a model provider (`tern mcp
/// list` needs none).
pub fn mcp_servers_of(layers: &crate::config::Layers, workspace: &Path) -> Result<mcp::McpConfig, StartError> {
    mcp_servers_from(
        &layers.file.mcp_servers,
        &layers.sources,
        layers.file.mcp_config.as_deref(),
        layers.project_trusted,
        workspace,
    )
}

fn mcp_servers_from(
    table: &toml::Table,
    sources: &[PathBuf],
    extra: Option<&Path>,
    trusted: bool,
    workspace: &Path,
) -> Result<mcp::McpConfig, StartError> {
    let label = sources
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    let mut config = mcp::load_servers(table, &label, workspace, extra)?;
    if !trusted {
        let projects: Vec<String> = tern_fs::places::project_dirs(workspace)
            .iter()
            .map(|dir| dir.join(".mcp.json").display().to_string())
            .collect();
        for server in config.servers.iter_mut().filter(|s| projects.contains(&s.source)) {
            server.problem = Some(format!(
                "defined by the project's .mcp.json, and the project is not trusted: {}",
                crate::config::TRUST_HINT
            ));
        }
    }
    Ok(config)
}

/// The session's MCP servers, started in the background, and what to tell the user about their configuration (one
/// line per warning, and per entry left out).
/// A session's MCP servers, started, and how long its first request waits for them.
struct StartedMcp {
    manager: Option<Arc<McpManager>>,
    wait: std::time::Duration,
}

fn start_mcp(
    settings: &Settings,
    workspace: &Path,
    setup: mcp::ClientSetup,
) -> Result<(StartedMcp, Vec<String>), StartError> {
    let config = mcp_servers(settings, workspace)?;
    let mut warnings = config.warnings;
    warnings.extend(config.errors.iter().map(|e| match &e.server {
        Some(_) => format!("{e}; this MCP server is left out"),
        None => format!("{e}; the MCP servers of this file are left out"),
    }));
    if config.servers.is_empty() {
        let none = StartedMcp {
            manager: None,
            wait: MCP_STARTUP,
        };
        return Ok((none, warnings));
    }
    // `tern run` waits for each server as long as its own start-up may take: one missing at the first request is
    // missing from the whole run. The UI shows the servers' states and waits only briefly.
    let wait = match settings.wait_for_mcp_servers {
        true => config
            .servers
            .iter()
            .filter(|s| s.enabled)
            .map(|s| s.startup_timeout)
            .max()
            .unwrap_or(MCP_STARTUP)
            .max(MCP_STARTUP),
        false => MCP_STARTUP,
    };
    let manager = Some(McpManager::start_with(config.servers, wait, setup));
    Ok((StartedMcp { manager, wait }, warnings))
}

/// The log of session `id` (a unique prefix is enough), which must belong to `workspace`: its tools would otherwise
/// work on another directory than the conversation was about.
pub fn session_by_id(id: &str, workspace: &std::path::Path) -> anyhow::Result<PathBuf> {
    let path = crate::session::list::find(&crate::config::data_dir(), id)?;
    let meta = crate::session::log::read_meta(&path).with_context(|| format!("cannot read {}", path.display()))?;
    if std::path::Path::new(&meta.workspace) != workspace {
        anyhow::bail!(
            "session {} belongs to {}; resume it there: tern -C {} resume {}",
            meta.id,
            meta.workspace,
            meta.workspace,
            meta.id
        );
    }
    Ok(path)
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

/// Starts resuming the session logged at `path` without waiting for it: the handle takes ops at once (they wait in
/// its channel); the log is loaded once `go` is sent (or dropped), and `ready` then brings the session's record as
/// the agent starts. For a day's session the load takes tens of milliseconds, which the first frame need not wait for
/// (nor share the CPU with).
pub fn start_deferred(settings: Settings, workspace: PathBuf, path: PathBuf) -> DeferredStart {
    let (op_tx, op_rx) = tokio::sync::mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = tokio::sync::mpsc::unbounded_channel();
    let (ready_tx, ready) = tokio::sync::oneshot::channel();
    let (go, go_rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = go_rx.await;
        let started = tokio::task::spawn_blocking(move || config_for(&settings, &workspace, Some(&path))).await;
        match started {
            Ok(Ok((config, info))) => {
                let _ = ready_tx.send(Ok(info));
                runner::run(config, op_rx, ev_tx).await;
            }
            Ok(Err(e)) => {
                let _ = ready_tx.send(Err(e.to_string()));
            }
            // A panic while loading is the agent's panic: the frontend learns of it from the task.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => {
                let _ = ready_tx.send(Err("the session load was cancelled".to_string()));
            }
        }
    });
    DeferredStart {
        handle: AgentHandle {
            ops: op_tx,
            events: ev_rx,
            task,
        },
        ready,
        go,
    }
}

/// A resume under way (see `start_deferred`).
pub struct DeferredStart {
    pub handle: AgentHandle,
    /// The session's record once loaded, or why it could not be.
    pub ready: tokio::sync::oneshot::Receiver<Result<SessionInfo, String>>,
    /// Sent when the first frame is drawn: the load begins.
    pub go: tokio::sync::oneshot::Sender<()>,
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
    let sandbox = exec_sandbox(&crate::config::SandboxSettings::default(), &[], root, &mut warnings);
    let mut gate = approval::ApprovalGate::new(approval::ApprovalMode::AutoEdit, Vec::new(), Vec::new());
    gate.set_sandboxed(sandbox.is_some());
    let mut tools = ToolRegistry::with_builtins();
    tools.register(Arc::new(ExecTool::new(ExecConfig {
        sandbox,
        ..ExecConfig::default()
    })));
    let system_prompt = prompt::system_prompt(policy.root()).into();
    let config = AgentConfig::new(
        Arc::new(crate::demo::DemoProvider::new(std::time::Duration::from_millis(40))),
        tools,
        policy,
        gate,
        system_prompt,
        results,
    )
    .with_context_window(128_000)
    .with_reserve_tokens(8_192);
    let info = SessionInfo {
        id: "demo".into(),
        history: Vec::new(),
        events: Vec::new(),
        log_path: None,
        mcp: None,
        mcp_wait: MCP_STARTUP,
        warnings,
        notices: Vec::new(),
        prices: Arc::new(crate::models::Catalog::builtin().clone()),
    };
    Ok((spawn(config), info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ApprovalDecision, ApprovalMode};
    use crate::session::log::Loaded;

    fn loaded(events: Vec<Event>) -> Loaded {
        Loaded {
            meta: SessionMeta {
                id: "s".into(),
                workspace: "/w".into(),
                provider: "openai".into(),
                model: "m".into(),
                forked_from: None,
                forked_messages: None,
            },
            messages: Vec::new(),
            events: events.into_iter().map(|e| (0, e)).collect(),
            checkpoints: Vec::new(),
            granted: Vec::new(),
        }
    }

    #[test]
    fn a_resume_says_what_it_did_not_restore() {
        let always = |id| Event::ApprovalDecided {
            id,
            decision: ApprovalDecision::Always,
        };
        let session = loaded(vec![
            Event::ModeChanged {
                mode: ApprovalMode::FullAuto,
            },
            always(1),
            always(2),
            Event::ModelChanged { model: "big".into() },
        ]);
        assert_eq!(session.model(), "big");
        let notices = unrestored(&session, ApprovalMode::AutoEdit);
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices[0].contains("was in mode full-auto") && notices[0].contains("resumes in auto-edit"));
        assert!(notices[1].starts_with("2 \"always\" answers"));
        // Nothing to say when the session kept the configured mode and gave no "always".
        let quiet = loaded(vec![Event::ModeChanged {
            mode: ApprovalMode::AutoEdit,
        }]);
        assert!(unrestored(&quiet, ApprovalMode::AutoEdit).is_empty());
        assert_eq!(quiet.model(), "m");
    }
}
