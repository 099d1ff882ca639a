//! The full-screen UI of `tern`, `tern resume` and `tern --demo`: the session it starts with (configured, resumed or
//! the scripted demo), the MCP servers ended once it closes, and what is printed then.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use tern::config;
use tern::headless;
use tern::tui_host::{TuiHost, connection};

use super::{GlobalArgs, flag_layer, init_logging, runtime, settings};

/// The full-screen UI, on the configured model or (with `demo`) the scripted one in a temporary sample project.
pub(super) fn interactive(
    global: &GlobalArgs,
    workspace: &std::path::Path,
    resume: Option<PathBuf>,
    demo: bool,
    first_prompt: Option<String>,
) -> anyhow::Result<i32> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln_clean!("tern: the UI needs a terminal. For scripts, use: tern run \"PROMPT\"");
        return Ok(2);
    }
    let demo_dir = demo.then(demo_project).transpose()?;
    let _log = init_logging();
    let runtime = runtime()?;
    let summary = runtime.block_on(async {
        let mut signals = tern::tui::terminal::Signals::new().context("cannot install a signal handler")?;
        let (mut launch, host) = match &demo_dir {
            Some(dir) => launch_demo(dir)?,
            None => launch_configured(global, workspace, resume.as_deref())?,
        };
        launch.first_prompt = match demo {
            true => Some(tern::demo::FIRST_PROMPT.to_string()),
            false => first_prompt,
        };
        let mut summary = tern::tui::launch(launch, &mut signals).await?;
        stop_mcp(host.mcp(), &mut summary, &mut signals).await;
        anyhow::Ok(summary)
    });
    // Whatever is still running (a command the agent had no time to stop) is dropped here, which kills its process
    // group; blocking work gets a bounded moment instead of holding the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(farewell(summary?, demo))
}

/// A temporary directory holding the demo's sample project (in its `project` subdirectory).
fn demo_project() -> anyhow::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("tern-demo-")
        .tempdir()
        .context("cannot create the demo directory")?;
    let project = dir.path().join("project");
    std::fs::create_dir(&project).context("cannot create the demo directory")?;
    tern::demo::write_project(&project).context("cannot write the demo project")?;
    Ok(dir)
}

/// What the UI starts with, gathered here: the session's agent and record, the commands, the context files, the
/// trust prompt; and the host that starts the next session.
fn launch(
    host: Arc<TuiHost>,
    connection: tern::tui::Connection,
    mut session: tern::tui::Session,
    root: PathBuf,
    context_window: u64,
) -> tern::tui::Launch {
    let planted = !tern::agent::planted::withheld(&root).is_empty();
    let tui = config::tui::load(&root);
    let (notify, warning) = tui.notify();
    session.warnings.extend(warning);
    let (images, warning) = tui.images();
    session.warnings.extend(warning);
    tern::tui::Launch {
        connection,
        session,
        host,
        custom: tern::commands::CustomCommands::load(&root, &tern::tui::app::builtin_names(), planted),
        context_files: tern::tui_host::context_files(&root),
        agents: tern::tui_host::agents(&root),
        mouse: tui.mouse(),
        workspace: root,
        context_window,
        first_prompt: None,
        pending: None,
        trust: None,
        notify,
        images,
    }
}

/// Starts the scripted demo agent in the sample project of `dir`.
fn launch_demo(dir: &tempfile::TempDir) -> anyhow::Result<(tern::tui::Launch, Arc<TuiHost>)> {
    let root = std::fs::canonicalize(dir.path().join("project"))?;
    let (handle, info) = tern::host::start_demo(&root)?;
    let host = Arc::new(TuiHost::new(&root, None));
    let session = host.show(info);
    let launch = launch(host.clone(), connection(handle), session, root, 128_000);
    Ok((launch, host))
}

/// Starts a new session, or resumes the one logged at `resume`, on the configured model.
fn launch_configured(
    global: &GlobalArgs,
    workspace: &std::path::Path,
    resume: Option<&std::path::Path>,
) -> anyhow::Result<(tern::tui::Launch, Arc<TuiHost>)> {
    let settings = settings(global, workspace, None)?;
    let trust = config::offer::offer(&settings, workspace);
    // `/resume`, `/fork` and a reload after trusting the project start the next session from the configuration as
    // it is then.
    let (dir, flags) = (workspace.to_path_buf(), flag_layer(global));
    let read: tern::tui_host::ReadSettings =
        Box::new(move || config::settings(&dir, flags.clone()).map_err(|e| e.to_string()));
    let host = Arc::new(TuiHost::new(workspace, Some(read)));
    let mut pending = None;
    // A long session shows its last turns at once and the rest when its log is loaded.
    let (handle, session) = match resume.map(preview).transpose()?.flatten() {
        Some((path, mut session)) => {
            session.prices = settings.provider.catalog.clone();
            let deferred = tern::host::start_deferred(settings.clone(), workspace.to_path_buf(), path);
            let (ready, loaded) = tokio::sync::oneshot::channel();
            let shown = host.clone();
            tokio::spawn(async move {
                if let Ok(record) = deferred.ready.await {
                    let _ = ready.send(record.map(|info| shown.show(info)));
                }
            });
            pending = Some(tern::tui::terminal::Pending {
                ready: loaded,
                go: Some(deferred.go),
            });
            (deferred.handle, host.show(session))
        }
        None => {
            let (handle, info) = tern::host::start(&settings, workspace, resume)?;
            (handle, host.show(info))
        }
    };
    let mut launch = launch(
        host.clone(),
        connection(handle),
        session,
        workspace.to_path_buf(),
        settings.context_window,
    );
    launch.pending = pending;
    launch.trust = trust;
    launch
        .custom
        .grant(settings.project_trusted, config::claude::tool_rule_allowed);
    Ok((launch, host))
}

/// Ends the session's MCP servers once the UI is closed: at once after a second signal, or asked to exit (a signal
/// meanwhile kills them at once, and is kept in `summary`).
async fn stop_mcp(
    mcp: Option<Arc<tern::mcp::McpManager>>,
    summary: &mut tern::tui::terminal::Summary,
    signals: &mut tern::tui::terminal::Signals,
) {
    let Some(mcp) = mcp else {
        return;
    };
    if summary.at_once {
        mcp.kill_now();
    } else {
        // A signal while the servers are asked to exit kills them at once.
        tokio::select! {
            () = mcp.shutdown() => {}
            signal = signals.next() => {
                summary.signal.get_or_insert(signal);
                mcp.kill_now();
            }
        }
    }
}

/// Prints the last exchange and where the session was saved once the UI has closed, and returns the exit code.
fn farewell(summary: tern::tui::terminal::Summary, demo: bool) -> i32 {
    if let Some((question, answer)) = summary.last_exchange {
        println_clean!("› {}\n", question.trim());
        if !answer.trim().is_empty() {
            println_clean!("{}\n", answer.trim());
        }
    }
    if demo {
        println_clean!("That was the tern demo (its temporary project is gone). Run `tern` in a repository to start.");
    } else if let Some(path) = &summary.log_path
        && !tern::session::list::discard_if_empty(path)
    {
        println_clean!(
            "Session {} saved. Resume it with: tern resume {}",
            summary.session_id,
            summary.session_id
        );
    }
    if summary.agent_panicked {
        eprintln_clean!("tern: stopped after an internal error (shown above); the session was saved up to it");
        return 101;
    }
    summary.signal.map_or(0, headless::signal_exit_code)
}

/// The last turns of the long session logged at `path`, to show while the whole of it loads; `None` for a short one
/// (it is loaded before the first frame).
fn preview(path: &std::path::Path) -> anyhow::Result<Option<(PathBuf, tern::host::SessionInfo)>> {
    let cannot = || format!("cannot resume {}", path.display());
    let Some(events) = tern::session::tail::events(path).with_context(cannot)? else {
        return Ok(None);
    };
    let meta = tern::session::log::read_meta(path).with_context(cannot)?;
    let session = tern::host::SessionInfo {
        id: meta.id,
        history: Vec::new(),
        events,
        log_path: Some(path.to_path_buf()),
        mcp: None,
        mcp_wait: tern::host::MCP_STARTUP,
        warnings: Vec::new(),
        notices: Vec::new(),
        prices: std::sync::Arc::new(tern::models::Catalog::builtin().clone()),
    };
    Ok(Some((path.to_path_buf(), session)))
}
