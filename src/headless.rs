//! `tern run`: the non-interactive frontend. It sends one prompt, prints what the agent does, and exits with a code
//! scripts can rely on: 0 done, 1 error, 130 interrupted, 128+N after signal N (SIGTERM, SIGHUP, SIGQUIT). With no
//! terminal to ask, calls that need approval are denied, and the model is told why. MCP servers that fail or are not
//! started are told on stderr as they do (`mcp`).

mod mcp;

use std::io::Write;
use std::sync::Arc;

use serde_json::json;

use crate::agent::runner::AgentHandle;
use crate::protocol::{
    ApprovalDecision, ElicitationAnswer, Event, Op, PlanItem, PlanStatus, ToolOutput, TurnEnd, Usage,
};
use crate::secrets::MaskingWriter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// The answer on stdout as it streams; tool activity and notices on stderr.
    #[default]
    Text,
    /// One JSON object on stdout at the end.
    Json,
    /// Every event as one JSON object per line on stdout.
    StreamJson,
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

/// What the model reads when a call needed approval in a run nobody can answer.
pub const NO_TERMINAL_FEEDBACK: &str = "This is a non-interactive run (tern run) and nobody can approve this call, so \
     it was not run. It needs `--mode full-auto` or an allow rule in the config ([approval] allow = [\"...\"]). \
     Continue without it if you can, and mention what was not run.";

/// Why a headless run declines an MCP server's request for input (the model reads it in the call's result).
pub const NO_TERMINAL_ELICITATION: &str = "this is a non-interactive run (tern run) and nobody can answer";

/// Drives one turn to its end and prints it. `Stop::Interrupt` (SIGINT) stops the turn cleanly; `Stop::Terminate`
/// also shuts the agent down and waits for it (so running commands end their process groups) before returning
/// 128 + the signal. Any second stop while stopping returns at once.
pub async fn run<O: Write, E: Write>(
    handle: AgentHandle,
    prompt: String,
    format: OutputFormat,
    stops: &mut tokio::sync::mpsc::UnboundedReceiver<Stop>,
    out: &mut O,
    err: &mut E,
) -> i32 {
    run_session(handle, None, prompt, format, stops, out, err).await
}

/// `run` for a session with MCP servers (`SessionInfo::mcp`): their failures go to stderr as they happen, and
/// stream-json shows their states.
pub async fn run_session<O: Write, E: Write>(
    mut handle: AgentHandle,
    mcp: Option<Arc<crate::tools::mcp::McpManager>>,
    prompt: String,
    format: OutputFormat,
    stops: &mut tokio::sync::mpsc::UnboundedReceiver<Stop>,
    out: &mut O,
    err: &mut E,
) -> i32 {
    // Whatever reaches stdout or stderr (text, json, stream-json) is masked: a tool result may show a key.
    let (out, err) = (&mut MaskingWriter::new(out), &mut MaskingWriter::new(err));
    let mut servers = mcp.map(mcp::McpFollower::new);
    let _ = handle.ops.send(Op::UserTurn { text: prompt });
    let mut printer = Printer::new(format);
    let mut background = Background::default();
    let mut end: Option<TurnEnd> = None;
    let mut interrupted = false;
    let mut terminated: Option<i32> = None;
    loop {
        let event = tokio::select! {
            event = handle.events.recv() => event,
            () = mcp::McpFollower::changed(&mut servers) => {
                if let Some(servers) = servers.as_mut() {
                    servers.report(format, out, err);
                }
                continue;
            }
            Some(stop) = stops.recv() => {
                let again = interrupted || terminated.is_some();
                match stop {
                    Stop::Interrupt if again => {
                        let _ = writeln!(err, "\ntern: interrupted again; exiting now");
                        return terminated.map_or(EXIT_INTERRUPTED, signal_exit_code);
                    }
                    Stop::Terminate { signal } if again => {
                        let _ = writeln!(err, "\ntern: {} while stopping; exiting now", signal_name(signal));
                        return signal_exit_code(terminated.unwrap_or(signal));
                    }
                    Stop::Interrupt => {
                        interrupted = true;
                        let _ = writeln!(err, "\ntern: interrupting (press Ctrl+C again to quit at once)");
                        let _ = handle.ops.send(Op::Interrupt);
                        // The turn is over and only background subagents were left: their reports will not come.
                        if end.is_some() {
                            let _ = handle.ops.send(Op::Shutdown);
                        }
                    }
                    Stop::Terminate { signal } => {
                        terminated = Some(signal);
                        let _ = writeln!(err, "\ntern: {}; stopping", signal_name(signal));
                        let _ = handle.ops.send(Op::Interrupt);
                        let _ = handle.ops.send(Op::Shutdown);
                    }
                }
                continue;
            }
        };
        let Some(event) = event else { break };
        background.track(&event);
        if let Some(request) = approval_request(&event) {
            let _ = handle.ops.send(Op::Approve {
                id: request.id,
                decision: ApprovalDecision::Deny {
                    feedback: Some(NO_TERMINAL_FEEDBACK.to_string()),
                },
            });
        }
        if let Event::Elicitation { id, .. } = &event {
            let _ = handle.ops.send(Op::Elicit {
                id: *id,
                answer: ElicitationAnswer::Decline {
                    reason: Some(NO_TERMINAL_ELICITATION.to_string()),
                },
            });
        }
        if let Event::TurnFinished { reason } = &event {
            end = Some(reason.clone());
            // A subagent started without waiting reports in a turn of its own: the run ends after that one.
            if background.outstanding == 0 || *reason == TurnEnd::Interrupted || interrupted {
                let _ = handle.ops.send(Op::Shutdown);
            }
        }
        let done = matches!(event, Event::ShutdownComplete);
        match (&event, servers.as_mut()) {
            (Event::SessionStarted { .. }, Some(servers)) => {
                if format == OutputFormat::StreamJson {
                    servers.settle().await;
                }
                servers.start(&event, format, out, err);
            }
            _ => printer.print(&event, out, err),
        }
        if done {
            break;
        }
    }
    printer.finish(end.as_ref(), out);
    let _ = out.flush();
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
fn approval_request(event: &Event) -> Option<&crate::protocol::ApprovalRequest> {
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

/// Turns events into output for one format.
struct Printer {
    format: OutputFormat,
    /// The text of the last assistant message (the answer, for json).
    answer: String,
    /// Whether the text on stdout ends mid-line.
    open_line: bool,
    /// The current assistant message as far as it is on stdout (text format).
    shown: String,
    /// After a retry: the new attempt's text so far, while it only repeats what `shown` already holds.
    replaying: Option<String>,
    usage: Usage,
    /// What subagents used, part of the session's totals.
    subagent_usage: Usage,
    calls: Vec<serde_json::Value>,
    errors: Vec<String>,
    /// The model's plan as last printed (`todo_write`); `None` before it has one.
    plan: Option<Vec<PlanItem>>,
}

impl Printer {
    fn new(format: OutputFormat) -> Self {
        Self {
            format,
            answer: String::new(),
            open_line: false,
            shown: String::new(),
            replaying: None,
            usage: Usage::default(),
            subagent_usage: Usage::default(),
            calls: Vec::new(),
            errors: Vec::new(),
            plan: None,
        }
    }

    fn print<O: Write, E: Write>(&mut self, event: &Event, out: &mut O, err: &mut E) {
        match event {
            Event::AssistantMessage { text, .. } => self.answer = text.clone(),
            Event::TokenUsage { total, .. } => self.usage = *total,
            Event::Subagent { inner, .. } => {
                if let Event::TokenUsage { last, .. } = &**inner {
                    add_usage(&mut self.subagent_usage, last);
                }
            }
            Event::Error { message } => self.errors.push(message.clone()),
            Event::PlanUpdated { items } if self.plan.as_ref() != Some(items) => {
                self.plan = Some(items.clone());
                if self.format != OutputFormat::StreamJson {
                    let _ = write!(err, "{}", plan_text(items));
                }
            }
            Event::ToolCallEnd {
                call_id,
                name,
                output,
                duration_ms,
                ..
            } => self.calls.push(json!({
                "call_id": call_id, "name": name, "is_error": output.is_error, "duration_ms": duration_ms,
            })),
            _ => {}
        }
        match self.format {
            OutputFormat::StreamJson => {
                if let Ok(line) = serde_json::to_string(event) {
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                }
            }
            OutputFormat::Json => self.print_progress(event, err),
            OutputFormat::Text => self.print_text(event, out, err),
        }
    }

    /// Text output streams the answer, and stdout cannot take back what a failed attempt printed. After a retry
    /// (`Event::Retrying`), the new attempt's text is therefore matched against what is already shown: as long as it
    /// repeats it, nothing is printed, and once it goes further only the new part is. Should the new attempt say
    /// something else, stdout gets a line break and the new answer in full, and stderr says why.
    fn print_text<O: Write, E: Write>(&mut self, event: &Event, out: &mut O, err: &mut E) {
        match event {
            Event::AssistantDelta { text } => self.print_delta(text, out, err),
            Event::AssistantMessage { text, .. } => {
                if self.replaying.is_some() && *text != self.shown {
                    // The new attempt ended short of what the failed one had shown.
                    self.restart(text, out, err);
                }
                if !text.is_empty() && self.open_line {
                    let _ = writeln!(out);
                    self.open_line = false;
                }
                self.shown.clear();
                self.replaying = None;
            }
            Event::Retrying { .. } => {
                if !self.shown.is_empty() {
                    self.replaying = Some(String::new());
                }
                // The notice goes to stderr on a line of its own; stdout keeps only the answer.
                if self.open_line {
                    let _ = writeln!(err);
                }
                self.print_progress(event, err);
            }
            Event::ToolCallBegin { .. } if self.open_line => {
                let _ = writeln!(out);
                let _ = out.flush();
                self.open_line = false;
                self.print_progress(event, err);
            }
            _ => self.print_progress(event, err),
        }
    }

    fn print_delta<O: Write, E: Write>(&mut self, text: &str, out: &mut O, err: &mut E) {
        let new = match self.replaying.take() {
            None => text.to_string(),
            Some(mut fresh) => {
                fresh.push_str(text);
                if self.shown.starts_with(&fresh) {
                    self.replaying = Some(fresh);
                    return;
                }
                match fresh.strip_prefix(self.shown.as_str()) {
                    Some(rest) => rest.to_string(),
                    None => {
                        self.restart(&fresh, out, err);
                        return;
                    }
                }
            }
        };
        self.write_answer(&new, out);
    }

    /// The retried answer differs from the text already on stdout: start it afresh on a new line.
    fn restart<O: Write, E: Write>(&mut self, text: &str, out: &mut O, err: &mut E) {
        self.replaying = None;
        if self.open_line {
            let _ = writeln!(out);
            self.open_line = false;
        }
        let _ = writeln!(
            err,
            "tern: the retried answer differs from the partial one printed before it; here it is in full"
        );
        self.shown.clear();
        self.write_answer(text, out);
    }

    fn write_answer<O: Write>(&mut self, text: &str, out: &mut O) {
        if text.is_empty() {
            return;
        }
        let _ = write!(out, "{text}");
        let _ = out.flush();
        self.shown.push_str(text);
        self.open_line = !text.ends_with('\n');
    }

    /// Tool activity, notices and errors, on stderr; a subagent's prefixed with its label.
    fn print_progress<E: Write>(&self, event: &Event, err: &mut E) {
        if let Some(line) = subagent_line(event) {
            let _ = writeln!(err, "{line}");
            return;
        }
        if let Event::Subagent { label, inner, .. } = event {
            let mut line = Vec::new();
            self.print_progress(inner, &mut line);
            for line in String::from_utf8_lossy(&line).lines() {
                let _ = writeln!(err, "[{label}] {}", line.trim_start());
            }
            return;
        }
        let line = match event {
            // The plan is printed whole when it changes; its calls only when one fails.
            Event::ToolCallBegin { name, .. } if name == PLAN_TOOL => return,
            Event::ToolCallEnd {
                name,
                output,
                duration_ms,
                ..
            } if name == PLAN_TOOL => {
                if !output.is_error {
                    return;
                }
                format!("● {name}\n{}", summary_line(output, *duration_ms))
            }
            Event::ToolCallBegin { name, args, .. } => format!("● {name} {}", key_argument(args)),
            Event::ToolCallEnd {
                output, duration_ms, ..
            } => summary_line(output, *duration_ms),
            Event::ApprovalRequest(r) => format!("  ✗ not run (needs approval: {}): {}", r.reason, r.command),
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => format!(
                "tern: {reason}; retrying in {:.1}s ({attempt}/{max_attempts})",
                *delay_ms as f64 / 1000.0
            ),
            Event::Notice { text } => format!("tern: {text}"),
            Event::Error { message } => format!("tern: error: {message}"),
            Event::Elicitation { server, message, .. } => format!(
                "tern: MCP server {server} asked for input ({}); declined: nobody can answer in tern run",
                message
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(200)
                    .collect::<String>()
            ),
            Event::TurnFinished {
                reason: TurnEnd::Interrupted,
            } => "tern: interrupted".to_string(),
            Event::TurnFinished {
                reason: TurnEnd::Aborted,
            } => "tern: turn aborted".to_string(),
            _ => return,
        };
        let _ = writeln!(err, "{line}");
    }

    fn finish<O: Write>(&mut self, end: Option<&TurnEnd>, out: &mut O) {
        match self.format {
            OutputFormat::Text if self.open_line => {
                let _ = writeln!(out);
            }
            OutputFormat::Json => {
                let (reason, error) = match end {
                    Some(TurnEnd::Error { message }) => ("error", Some(message.clone())),
                    Some(TurnEnd::Completed) => ("completed", None),
                    Some(TurnEnd::Interrupted) => ("interrupted", None),
                    Some(TurnEnd::Aborted) => ("aborted", None),
                    Some(TurnEnd::IterationLimit) => ("iteration_limit", None),
                    None => ("error", Some("the agent stopped unexpectedly".to_string())),
                };
                let value = json!({
                    "result": self.answer,
                    "reason": reason,
                    "error": error,
                    "is_error": !matches!(end, Some(TurnEnd::Completed | TurnEnd::IterationLimit)),
                    "usage": total_usage(&self.usage, &self.subagent_usage),
                    "tool_calls": self.calls,
                    "errors": self.errors,
                });
                let mut value = value;
                if let Some(plan) = &self.plan {
                    value["plan"] = json!(plan);
                }
                let _ = writeln!(out, "{value}");
            }
            _ => {}
        }
    }
}

/// The lines for a subagent's start and end.
fn subagent_line(event: &Event) -> Option<String> {
    match event {
        Event::SubagentStarted { label, task, wait, .. } => {
            let task: String = task.lines().next().unwrap_or_default().chars().take(120).collect();
            let how = if *wait { "" } else { " in the background" };
            Some(format!("[{label}] started{how}: {task}"))
        }
        Event::SubagentFinished {
            label,
            end,
            steps,
            elapsed_ms,
            ..
        } => {
            let how = match end {
                TurnEnd::Completed => "done".to_string(),
                TurnEnd::IterationLimit => "done at its iteration limit".to_string(),
                TurnEnd::Interrupted => "interrupted".to_string(),
                TurnEnd::Aborted => "aborted".to_string(),
                TurnEnd::Error { message } => format!("failed: {message}"),
            };
            Some(format!(
                "[{label}] {how} ({steps} steps, {:.1}s)",
                *elapsed_ms as f64 / 1000.0
            ))
        }
        _ => None,
    }
}

fn add_usage(total: &mut Usage, more: &Usage) {
    total.input_tokens += more.input_tokens;
    total.output_tokens += more.output_tokens;
    total.cache_read_tokens += more.cache_read_tokens;
    total.cache_write_tokens += more.cache_write_tokens;
}

fn total_usage(main: &Usage, subagents: &Usage) -> Usage {
    let mut total = *main;
    add_usage(&mut total, subagents);
    total
}

/// The argument that says most about a call: the command, path or pattern.
pub fn key_argument(args: &serde_json::Value) -> String {
    let args = match args {
        serde_json::Value::String(s) => serde_json::from_str(s).unwrap_or(serde_json::Value::Null),
        other => other.clone(),
    };
    for key in ["command", "pattern", "query", "glob", "path", "url"] {
        if let Some(v) = args.get(key).and_then(|v| v.as_str()) {
            let one_line: String = v.split('\n').next().unwrap_or("").chars().take(120).collect();
            return one_line;
        }
    }
    String::new()
}

/// The tool whose calls the plan stands for.
const PLAN_TOOL: &str = "todo_write";

/// The plan, compactly: a title with the progress, then one line a step.
pub fn plan_text(items: &[PlanItem]) -> String {
    if items.is_empty() {
        return "plan: cleared\n".to_string();
    }
    let (done, total) = crate::protocol::plan_progress(items);
    let mut text = format!("plan: {done}/{total} done\n");
    for item in items {
        let mark = match item.status {
            PlanStatus::Completed => "☑",
            PlanStatus::InProgress => "◐",
            PlanStatus::Pending => "☐",
        };
        text.push_str(&format!("  {mark} {}\n", item.content));
    }
    text
}

fn summary_line(output: &ToolOutput, duration_ms: u64) -> String {
    let first = output
        .text
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(160)
        .collect::<String>();
    let mark = if output.is_error { "✗" } else { "✓" };
    format!("  {mark} {first} ({:.1}s)", duration_ms as f64 / 1000.0)
}

#[cfg(test)]
mod test_stops;
#[cfg(test)]
mod tests;
