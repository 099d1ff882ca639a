//! Live processes: `exec` with `background: true` starts a command that keeps running after its call returns, and
//! the model reads its output (`process_output`), types into it (`process_input`) and stops it (`process_stop`).
//!
//! A process starts exactly as `exec` starts a command (the same child environment, the same sandbox launch, its own
//! process group that dies with tern), on a pseudo-terminal tern opens (`tty`, the default) or on pipes. The session's
//! `ProcessTable` (owned by the agent, shared with its subagents) keeps each one's last `RING_BYTES` of output for the
//! model, tells the frontends of it (`Event::ProcessStarted`, `ProcessOutput`, `ProcessExited`), and notes each exit
//! the model did not cause for its next request. Everything still running ends with the session.
//!
//! Whether a call may run is the approval gate's business: input to a process says so in its effects
//! (`Effects::input`), so the gate asks where a command would.

mod keys;
mod launch;
pub(crate) use launch::Spec;
mod pump;
mod ring;
mod screen;
mod table;
#[cfg(test)]
mod tests;
mod tools;

use std::sync::Arc;
use std::time::Duration;

pub use table::{Emit, ProcessTable};
pub use tools::{ProcessInputTool, ProcessOutputTool, ProcessStopTool};

use tern_process::group::Group;
use tern_protocol::process::{ProcessEnd, ProcessInfo};
use tern_protocol::{Event, ToolDetails, ToolOutput};

/// Output kept per process for the model; older output is dropped (and counted).
const RING_BYTES: usize = 1024 * 1024;
/// Processes that may run at once in a session.
const MAX_LIVE: usize = 8;
/// How long `exec` waits for a new process's first output (or its exit) before it returns, and the quiet after its
/// output that ends the wait sooner.
const FIRST_WAIT: Duration = Duration::from_millis(1500);
const FIRST_QUIET: Duration = Duration::from_millis(300);
/// The terminal size a process starts with.
pub const DEFAULT_COLS: u16 = 120;
pub const DEFAULT_ROWS: u16 = 40;
/// The most output one read returns to the model (its end is kept).
const READ_CHARS: usize = 12_000;
/// Who stopped a process the model stopped (`ProcessEnd::Stopped::by`).
pub(crate) const BY_MODEL: &str = "the model";

/// The session's table and the call that starts a process, as a tool's context carries them.
#[derive(Clone)]
pub struct Starter {
    pub table: ProcessTable,
    pub call_id: String,
}

/// The tools the model uses on live processes, over `table`.
pub fn tools(table: &ProcessTable) -> Vec<Arc<dyn crate::Tool>> {
    vec![
        Arc::new(ProcessOutputTool::new(table.clone())),
        Arc::new(ProcessInputTool::new(table.clone())),
        Arc::new(ProcessStopTool::new(table.clone())),
    ]
}

/// Starts `spec` as a live process of `starter`'s table and returns what the model gets: its id, its first output and
/// how to go on.
pub(crate) async fn start(spec: &Spec<'_>, starter: &Starter) -> ToolOutput {
    let Starter { table, call_id } = starter;
    let id = match table.reserve() {
        Ok(id) => id,
        Err(why) => return ToolOutput::error(format!("Error: not started: {why}.")),
    };
    let began = std::time::Instant::now();
    let started = match launch::start(spec).await {
        Ok(started) => started,
        Err(e) => return ToolOutput::error(format!("Error: could not start the process: {e}")),
    };
    let info = ProcessInfo {
        id: id.clone(),
        call_id: call_id.clone(),
        command: spec.command.to_string(),
        pty: spec.tty.is_some(),
        cols: spec.tty.map_or(DEFAULT_COLS, |(cols, _)| cols),
        rows: spec.tty.map_or(DEFAULT_ROWS, |(_, rows)| rows),
    };
    let group = u32::try_from(started.pid).ok().and_then(Group::led_by);
    let live = Arc::new(table::Live::new(
        info.clone(),
        spec.sandbox.is_none(),
        group,
        started.input,
    ));
    table.add(Arc::clone(&live));
    table.emit(Event::ProcessStarted { process: info });
    tokio::spawn(pump::pump(
        table.downgrade(),
        Arc::clone(&live),
        started.child,
        started.output,
        group,
    ));
    live.settle(FIRST_WAIT, FIRST_QUIET).await;
    let (shown, end) = tools::read(table, &live);
    let details = ToolDetails::Exec {
        exit_code: match &end {
            Some(ProcessEnd::Exited { code }) => Some(*code),
            _ => None,
        },
        duration_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
        timed_out: false,
        sandboxed: spec.sandbox.is_some(),
        new_git_repos: Vec::new(),
        // Still running: its end comes as `ProcessExited`; one that already ended is reported by its exit code.
        background: end.is_none().then(|| id.clone()),
    };
    first_report(&id, spec, &shown, end.as_ref()).with_details(details)
}

/// What `exec` returns for a new process: its id and how it runs, its first output, and how to go on; or, when it
/// already ended, how (an error unless it exited with 0).
fn first_report(id: &str, spec: &Spec<'_>, shown: &str, end: Option<&ProcessEnd>) -> ToolOutput {
    if let Some(end) = end {
        let text = format!(
            "Process {id} started and {} already. Its output:\n{shown}",
            table::describe_end(end)
        );
        return match end {
            ProcessEnd::Exited { code: 0 } => ToolOutput::text(text),
            _ => ToolOutput::error(text),
        };
    }
    let terminal = match spec.tty {
        Some((cols, rows)) => format!("on a {cols}x{rows} terminal"),
        None => "on pipes".to_string(),
    };
    let sandbox = if spec.sandbox.is_some() { ", in the sandbox" } else { "" };
    ToolOutput::text(format!(
        "Started process {id} ({terminal}{sandbox}). Its output so far:\n{shown}\nIt keeps running. process_output \
         {{\"id\": \"{id}\", \"wait\": 5}} reads what it prints next (waiting up to 5 s for it); process_input types \
         into it (text and keys such as Enter or Ctrl+C); process_stop ends it and everything it started. You are \
         told when it exits; it ends with the session."
    ))
}
