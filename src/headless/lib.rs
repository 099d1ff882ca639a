//! `tern run`: the non-interactive frontend. It sends one prompt, prints what the agent does, and exits with a code
//! scripts can rely on: 0 done, 1 error, 130 interrupted, 128+N after signal N (SIGTERM, SIGHUP, SIGQUIT). With no
//! terminal to ask, calls that need approval are denied, and the model is told why. MCP servers that fail or are not
//! started are told on stderr as they do (`mcp`).

mod claude_stream;
mod mcp;
mod order;
mod printer;
mod progress;

use std::io::Write;

use printer::Printer;
pub use progress::plan_text;
use tern_protocol::{ApprovalDecision, ElicitationAnswer, Event, Op, TurnEnd};
#[cfg(test)]
use tern_protocol::{PlanItem, PlanStatus, ToolOutput};
use tern_secrets::MaskingWriter;
use tern_text::{CleanWriter, Stream};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// The answer on stdout as it streams; tool activity and notices on stderr.
    #[default]
    Text,
    /// One JSON object on stdout at the end.
    Json,
    /// tern's events, one JSON object per line on stdout.
    Events,
    /// Claude Code's stream (`--output-format stream-json`): `system` init, `assistant` and `user` messages, and
    /// the `result`, one JSON object per line, for tools that read Claude Code's stream.
    ClaudeStream,
}

pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR: i32 = 1;
pub const EXIT_INTERRUPTED: i32 = 130;

/// What the frontend's signal handlers ask of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Ctrl+C (SIGINT): stop the turn and finish normally (exit 130).
    Interrupt,
    /// SIGTERM, SIGHUP or SIGQUIT: stop the turn, shut the agent down (its commands' process groups end with it) and
    /// exit with 128 + `signal`.
    Terminate { signal: i32 },
}

/// The exit code for a run ended by signal `signal` (the shell's convention).
pub fn signal_exit_code(signal: i32) -> i32 {
    128 + signal
}

/// A signal's usual name, for messages.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGINT => "SIGINT",
        _ => "a signal",
    }
}

/// The session a run talks to: where its ops go and where its events come from. The composition root connects it
/// to an agent; this crate knows only the protocol.
pub struct Session {
    pub ops: UnboundedSender<Op>,
    pub events: UnboundedReceiver<Event>,
    /// What the model's tokens cost, for json's `total_cost_usd`; `None`: unknown.
    pub prices: Option<std::sync::Arc<dyn tern_protocol::Prices>>,
}

/// How a headless run names itself when it refuses a call nobody can approve (`ApprovalDecision::Unattended`).
pub const FRONTEND: &str = "tern run";

/// Why a headless run declines an MCP server's request for input (the model reads it in the call's result).
pub const NO_TERMINAL_ELICITATION: &str = "this is a non-interactive run (tern run) and nobody can answer";

/// Drives one turn to its end and prints it. `Stop::Interrupt` (SIGINT) stops the turn cleanly; `Stop::Terminate`
/// also shuts the agent down and waits for it (so running commands end their process groups) before returning
/// 128 + the signal. Any second stop while stopping returns at once.
pub async fn run<O: Write, E: Write>(
    handle: Session,
    prompt: String,
    format: OutputFormat,
    stops: &mut tokio::sync::mpsc::UnboundedReceiver<Stop>,
    out: &mut O,
    err: &mut E,
) -> i32 {
    run_session(
        handle,
        None,
        None,
        Op::UserTurn { text: prompt },
        format,
        stops,
        out,
        err,
    )
    .await
}

/// `run` for a session with MCP servers (`mcp_wait`: how long the first request waits for them to start): their
/// failures go to stderr as they happen, and the events format shows their states. `session_id` (a session with a
/// log) goes into json's object, the events' `session_started` and `result`, and every stream-json line, for
/// `tern resume` and `tern run --resume`.
#[allow(clippy::too_many_arguments)]
pub async fn run_session<O: Write, E: Write>(
    mut handle: Session,
    mcp_wait: Option<std::time::Duration>,
    session_id: Option<String>,
    first: Op,
    format: OutputFormat,
    stops: &mut tokio::sync::mpsc::UnboundedReceiver<Stop>,
    out: &mut O,
    err: &mut E,
) -> i32 {
    // Whatever reaches stdout or stderr (text, json, events, stream-json) is masked: a tool result may show a key. It is
    // cleaned too: a model's answer, a tool's name or output or a file name may carry escape sequences.
    let stdout_kind = match format {
        OutputFormat::Text => Stream::Text,
        OutputFormat::Json | OutputFormat::Events | OutputFormat::ClaudeStream => Stream::Json,
    };
    let out = &mut CleanWriter::new(MaskingWriter::new(out), stdout_kind);
    let err = &mut CleanWriter::new(MaskingWriter::new(err), Stream::Text);
    let mut servers = mcp_wait.map(mcp::McpFollower::new);
    // Events taken while `session_started` waited for the servers, handled after it.
    let mut held: std::collections::VecDeque<Event> = std::collections::VecDeque::new();
    let _ = handle.ops.send(first);
    let mut printer = Printer::new(format, session_id).with_prices(handle.prices.take());
    let mut background = Background::default();
    let mut end: Option<TurnEnd> = None;
    let mut stopping = Stopping::default();
    loop {
        let event = if let Some(event) = held.pop_front() {
            Some(event)
        } else {
            tokio::select! {
                event = handle.events.recv() => event,
                Some(stop) = stops.recv() => {
                    if let Some(code) = stopping.stop(stop, end.is_some(), &handle.ops, err) {
                        return code;
                    }
                    continue;
                }
            }
        };
        let Some(event) = event else { break };
        background.track(&event);
        if let Event::SessionStarted { model, .. } = &event {
            printer.model = Some(model.clone());
        }
        answer_unattended(&event, &handle.ops);
        if let Event::TurnFinished { reason } = &event {
            end = Some(reason.clone());
            // A subagent started without waiting reports in a turn of its own: the run ends after that one.
            if background.outstanding == 0 || *reason == TurnEnd::Interrupted || stopping.interrupted {
                let _ = handle.ops.send(Op::Shutdown);
            }
        }
        let done = matches!(event, Event::ShutdownComplete);
        match (event, servers.as_mut()) {
            (event @ Event::SessionStarted { .. }, Some(servers)) => {
                servers.settle(&mut handle.events, &mut held, err).await;
                servers.start(&event, printer.session_id(), format, out, err);
                if format == OutputFormat::ClaudeStream {
                    printer.print(&event, out, err);
                }
            }
            (Event::McpServers { servers: told }, Some(servers)) => servers.told(told, format, out, err),
            (Event::McpServers { .. }, None) => {}
            (event, _) => printer.print(&event, out, err),
        }
        if done {
            break;
        }
    }
    printer.finish(end.as_ref(), out, err);
    let _ = out.flush();
    exit_code(stopping.terminated, end.as_ref())
}

/// What the frontend's signal handlers have asked of a run so far.
#[derive(Default)]
struct Stopping {
    /// Ctrl+C stopped the turn.
    interrupted: bool,
    /// The signal that is ending the run.
    terminated: Option<i32>,
}

impl Stopping {
    /// Acts on `stop`: a first one interrupts the turn (a signal, or a Ctrl+C once the turn is over, also shuts the
    /// agent down); a second one while stopping ends the run at once, and its exit code is returned.
    fn stop(
        &mut self,
        stop: Stop,
        turn_over: bool,
        ops: &tokio::sync::mpsc::UnboundedSender<Op>,
        err: &mut impl Write,
    ) -> Option<i32> {
        let again = self.interrupted || self.terminated.is_some();
        match stop {
            Stop::Interrupt if again => {
                let _ = writeln!(err, "\ntern: interrupted again; exiting now");
                return Some(self.terminated.map_or(EXIT_INTERRUPTED, signal_exit_code));
            }
            Stop::Terminate { signal } if again => {
                let _ = writeln!(err, "\ntern: {} while stopping; exiting now", signal_name(signal));
                return Some(signal_exit_code(self.terminated.unwrap_or(signal)));
            }
            Stop::Interrupt => {
                self.interrupted = true;
                let _ = writeln!(err, "\ntern: interrupting (press Ctrl+C again to quit at once)");
                let _ = ops.send(Op::Interrupt);
                // The turn is over and only background subagents were left: their reports will not come.
                if turn_over {
                    let _ = ops.send(Op::Shutdown);
                }
            }
            Stop::Terminate { signal } => {
                self.terminated = Some(signal);
                let _ = writeln!(err, "\ntern: {}; stopping", signal_name(signal));
                let _ = ops.send(Op::Interrupt);
                let _ = ops.send(Op::Shutdown);
            }
        }
        None
    }
}

/// Answers what only a user could: a call waiting for approval is refused as unattended, and an MCP server's request
/// for input is declined.
fn answer_unattended(event: &Event, ops: &tokio::sync::mpsc::UnboundedSender<Op>) {
    if let Some(request) = approval_request(event) {
        // Nobody can answer: the agent words the refusal by what asked, and says what would let it run.
        let _ = ops.send(Op::Approve {
            id: request.id,
            decision: ApprovalDecision::Unattended {
                frontend: FRONTEND.to_string(),
            },
        });
    }
    if let Event::Elicitation { id, .. } = event {
        let _ = ops.send(Op::Elicit {
            id: *id,
            answer: ElicitationAnswer::Decline {
                reason: Some(NO_TERMINAL_ELICITATION.to_string()),
            },
        });
    }
}

/// The exit code of a run that ended with `end`, or that the signal `terminated` ended.
fn exit_code(terminated: Option<i32>, end: Option<&TurnEnd>) -> i32 {
    if let Some(signal) = terminated {
        return signal_exit_code(signal);
    }
    match end {
        Some(TurnEnd::Completed | TurnEnd::IterationLimit) => EXIT_OK,
        Some(TurnEnd::Interrupted) => EXIT_INTERRUPTED,
        Some(TurnEnd::Aborted | TurnEnd::Error { .. }) | None => EXIT_ERROR,
    }
}

/// A prompt to answer: the main agent's, or one of its subagents'.
fn approval_request(event: &Event) -> Option<&tern_protocol::ApprovalRequest> {
    match event {
        Event::ApprovalRequest(request) => Some(request),
        Event::Subagent { inner, .. } => approval_request(inner),
        _ => None,
    }
}

/// Subagents started without waiting whose reports the main agent has not had yet.
#[derive(Default)]
struct Background {
    outstanding: usize,
}

impl Background {
    fn track(&mut self, event: &Event) {
        match event {
            Event::SubagentStarted { wait: false, .. } => self.outstanding += 1,
            Event::SubagentDelivered { .. } => self.outstanding = self.outstanding.saturating_sub(1),
            _ => {}
        }
    }
}

#[cfg(test)]
mod stops_tests;
#[cfg(test)]
mod tests;
