//! The full-screen UI of `tern`, `tern resume` and `tern --demo`: the session it starts with (configured, resumed or
//! the scripted demo), the MCP servers ended once it closes, and what is printed then.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use tern::config;
use tern::headless;

use super::{GlobalArgs, flag_layer, init_logging, runtime, settings};

/// The full-screen UI, on the configured model or (with `demo`) the scripted one in a temporary sample project.
pub(super) fn interactive(
    global: &GlobalArgs,
    workspace: &std::path::Path,
    resume: Option<PathBuf>,
    demo: bool,
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
        let Launch {
            handle,
            mut session,
            context_window,
            root,
            start,
            pending,
            trust,
        } = match &demo_dir {
            Some(dir) => launch_demo(dir)?,
            None => launch_configured(global, workspace, resume.as_deref())?,
        };
        let first = demo.then(|| tern::demo::FIRST_PROMPT.to_string());
        let mut summary = tern::tui::launch(
            handle,
            root,
            context_window,
            first,
            tern::tui::terminal::Sessions {
                session: &mut session,
                start,
                pending,
                trust,
            },
            &mut signals,
        )
        .await?;
        stop_mcp(&session, &mut summary, &mut signals).await;
        anyhow::Ok((summary, session))
    });
    // Whatever is still running (a command the agent had no time to stop) is dropped here, which kills its process
    // group; blocking work gets a bounded moment instead of holding the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    let (summary, session) = summary?;
    Ok(farewell(summary, &session, demo))
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

/// What the UI starts with: the session's agent and record, and what the UI needs to go on from them.
struct Launch {
    handle: tern::agent::AgentHandle,
    session: tern::host::SessionInfo,
    context_window: u64,
    /// The directory the session works in.
    root: PathBuf,
    /// How `/resume`, `/fork` and a reload start the next session; `None` for the demo.
    start: Option<tern::tui::switch::StartSession>,
    /// A resume whose log is still loading.
    pending: Option<tern::tui::terminal::Pending>,
    /// The project's configuration, waiting to be trusted.
    trust: Option<tern::tui::state::trust::TrustOffer>,
}

/// Starts the scripted demo agent in the sample project of `dir`.
fn launch_demo(dir: &tempfile::TempDir) -> anyhow::Result<Launch> {
    let root = std::fs::canonicalize(dir.path().join("project"))?;
    let (handle, session) = tern::host::start_demo(&root)?;
    Ok(Launch {
        handle,
        session,
        context_window: 128_000,
        root,
        start: None,
        pending: None,
        trust: None,
    })
}

/// Starts a new session, or resumes the one logged at `resume`, on the configured model.
fn launch_configured(
    global: &GlobalArgs,
    workspace: &std::path::Path,
    resume: Option<&std::path::Path>,
) -> anyhow::Result<Launch> {
    let settings = settings(global, workspace, None)?;
    let trust = tern::tui::state::trust::offer(&settings, workspace);
    let mut pending = None;
    // A long session shows its last turns at once and the rest when its log is loaded.
    let (handle, session) = match resume.map(preview).transpose()?.flatten() {
        Some((path, mut session)) => {
            session.prices = settings.provider.catalog.clone();
            let deferred = tern::host::start_deferred(settings.clone(), workspace.to_path_buf(), path);
            pending = Some(tern::tui::terminal::Pending {
                ready: deferred.ready,
                go: Some(deferred.go),
            });
            (deferred.handle, session)
        }
        None => tern::host::start(&settings, workspace, resume)?,
    };
    let dir = workspace.to_path_buf();
    // `/resume`, `/fork` and a reload after trusting the project start the next session from the configuration as
    // it is then.
    let flags = flag_layer(global);
    let start: tern::tui::switch::StartSession = Box::new(move |path| {
        let settings = config::settings(&dir, flags.clone()).map_err(|e| e.to_string())?;
        tern::host::start(&settings, &dir, Some(path)).map_err(|e| e.to_string())
    });
    Ok(Launch {
        handle,
        session,
        context_window: settings.context_window,
        root: workspace.to_path_buf(),
        start: Some(start),
        pending,
        trust,
    })
}

/// Ends the session's MCP servers once the UI is closed: at once after a second signal, or asked to exit (a signal
/// meanwhile kills them at once, and is kept in `summary`).
async fn stop_mcp(
    session: &tern::host::SessionInfo,
    summary: &mut tern::tui::terminal::Summary,
    signals: &mut tern::tui::terminal::Signals,
) {
    let Some(mcp) = &session.mcp else {
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
fn farewell(summary: tern::tui::terminal::Summary, session: &tern::host::SessionInfo, demo: bool) -> i32 {
    if let Some((question, answer)) = summary.last_exchange {
        println_clean!("› {}\n", question.trim());
        if !answer.trim().is_empty() {
            println_clean!("{}\n", answer.trim());
        }
    }
    if demo {
        println_clean!("That was the tern demo (its temporary project is gone). Run `tern` in a repository to start.");
    } else if session.log_path.is_some() {
        println_clean!(
            "Session {} saved. Resume it with: tern resume {}",
            session.id,
            session.id
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
        warnings: Vec::new(),
        notices: Vec::new(),
        prices: std::sync::Arc::new(tern::models::Catalog::builtin().clone()),
    };
    Ok(Some((path.to_path_buf(), session)))
}
