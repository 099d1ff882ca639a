//! The MCP servers as `tern run` follows them: a stderr line for each server that fails or is not started (in every
//! format), the events' `session_started` with a `mcp_servers` array (name, state, tools) and their tools in its
//! `tools`, and a `mcp_server` line whenever a server's state or tools change after it. Nothing is printed before
//! `session_started`, which stays the first line of events; it waits for servers still starting as long as the
//! first request does (the session's start-up wait), which costs no time since the request waits for them anyway. All of it
//! comes from the agent's `Event::McpServers`.

use std::collections::VecDeque;
use std::io::Write;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::OutputFormat;
use tern_protocol::Event;
use tern_protocol::mcp::report::ServerWatch;
use tern_protocol::mcp::{ServerState, ServerStatus};

/// How long a wait for servers goes untold.
const PROGRESS_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// Sleeps until `at`, or forever when there is none.
async fn sleep_until_some(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The servers as the agent tells them (`Event::McpServers`).
pub(super) struct McpFollower {
    /// How long the first request waits for servers still starting.
    wait: std::time::Duration,
    /// The states last told; `None` before the first report.
    statuses: Option<Vec<ServerStatus>>,
    watch: ServerWatch,
    started: bool,
}

impl McpFollower {
    pub(super) fn new(wait: std::time::Duration) -> Self {
        Self {
            wait,
            statuses: None,
            watch: ServerWatch::default(),
            started: false,
        }
    }

    /// Takes the states the agent told. Once the session has started, what changed is printed.
    pub(super) fn told<O: Write, E: Write>(
        &mut self,
        statuses: Vec<ServerStatus>,
        format: OutputFormat,
        out: &mut O,
        err: &mut E,
    ) {
        self.statuses = Some(statuses);
        if self.started {
            self.report(format, out, err);
        }
    }

    /// Whether any server is told, and none of them is still connecting.
    fn settled(&self) -> bool {
        self.statuses
            .as_ref()
            .is_some_and(|all| all.iter().all(|s| s.state != ServerState::Connecting))
    }

    /// Waits, as the first request does, for the servers still starting (at most the session's wait), so
    /// `session_started` lists the tools of every server that starts in time. The agent's other events that come
    /// meanwhile are kept, in order, in `held` for after. A wait of more than a moment is told on `err`, with the
    /// servers it waits for.
    pub(super) async fn settle<E: Write>(
        &mut self,
        events: &mut UnboundedReceiver<Event>,
        held: &mut VecDeque<Event>,
        err: &mut E,
    ) {
        let start = tokio::time::Instant::now();
        let deadline = start + self.wait;
        let mut told = false;
        while !self.settled() {
            let tell_at = (!told).then_some(start + PROGRESS_AFTER);
            tokio::select! {
                event = events.recv() => match event {
                    Some(Event::McpServers { servers }) => self.statuses = Some(servers),
                    Some(other) => held.push_back(other),
                    None => break,
                },
                () = tokio::time::sleep_until(deadline) => break,
                () = sleep_until_some(tell_at) => {
                    told = true;
                    let waiting: Vec<&str> = self
                        .statuses
                        .iter()
                        .flatten()
                        .filter(|s| s.state == ServerState::Connecting)
                        .map(|s| s.name.as_str())
                        .collect();
                    let names = if waiting.is_empty() { "the servers".to_string() } else { waiting.join(", ") };
                    let left = deadline.saturating_duration_since(tokio::time::Instant::now()).as_secs_f64().ceil();
                    let _ = writeln!(err, "tern: waiting for MCP servers to start: {names} (up to {left} s more)");
                    let _ = err.flush();
                }
            }
        }
    }

    /// Prints `session_started` (events) with the servers' states and their tools among the session's, and the
    /// failures known so far.
    pub(super) fn start<O: Write, E: Write>(
        &mut self,
        event: &Event,
        session_id: Option<&str>,
        format: OutputFormat,
        out: &mut O,
        err: &mut E,
    ) {
        self.started = true;
        let statuses = self.statuses.clone().unwrap_or_default();
        let servers = self.watch.changed_json(&statuses);
        if format == OutputFormat::Events
            && let Ok(mut value) = serde_json::to_value(event)
        {
            // The agent listed the tools offered when it started; servers that became ready since add theirs.
            if let Some(tools) = value["tools"].as_array_mut() {
                for status in &statuses {
                    for tool in &status.tools {
                        let name = json!(tool.name);
                        if !tools.contains(&name) {
                            tools.push(name);
                        }
                    }
                }
            }
            value["mcp_servers"] = Value::Array(servers);
            value["session_id"] = json!(session_id);
            let _ = writeln!(out, "{value}");
            let _ = out.flush();
        }
        self.tell_failures(&statuses, err);
    }

    /// Prints what changed since the last look.
    fn report<O: Write, E: Write>(&mut self, format: OutputFormat, out: &mut O, err: &mut E) {
        let statuses = self.statuses.clone().unwrap_or_default();
        if format == OutputFormat::Events {
            for mut server in self.watch.changed_json(&statuses) {
                if let Some(map) = server.as_object_mut() {
                    map.insert("event".into(), json!("mcp_server"));
                }
                let _ = writeln!(out, "{server}");
            }
            let _ = out.flush();
        }
        self.tell_failures(&statuses, err);
    }

    fn tell_failures<E: Write>(&mut self, statuses: &[ServerStatus], err: &mut E) {
        for failure in self.watch.failures(statuses) {
            let _ = writeln!(err, "tern: {}", failure.line());
        }
        for problem in self.watch.problems(statuses) {
            let _ = writeln!(err, "tern: {problem}");
        }
    }
}
