//! The MCP servers as `tern run` follows them: a stderr line for each server that fails or is not started (in every
//! format), stream-json's `session_started` with a `mcp_servers` array (name, state, tools) and their tools in its
//! `tools`, and a `mcp_server` line whenever a server's state or tools change after it. Nothing is printed before
//! `session_started`, which stays the first line of stream-json; it waits for servers still starting as long as the
//! first request does (`host::MCP_STARTUP`), which costs no time since the request waits for them anyway.

use std::io::Write;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::watch;

use super::OutputFormat;
use crate::protocol::Event;
use crate::tools::mcp::report::ServerWatch;
use crate::tools::mcp::{McpManager, ServerStatus};

pub(super) struct McpFollower {
    rx: watch::Receiver<Vec<ServerStatus>>,
    watch: ServerWatch,
    started: bool,
    manager: Arc<McpManager>,
}

impl McpFollower {
    pub(super) fn new(manager: Arc<McpManager>) -> Self {
        Self {
            rx: manager.subscribe(),
            watch: ServerWatch::default(),
            started: false,
            manager,
        }
    }

    /// Waits for the servers to change once the session has started; forever before that or when they are gone.
    pub(super) async fn changed(follower: &mut Option<Self>) {
        match follower {
            Some(f) if f.started => {
                if f.rx.changed().await.is_err() {
                    *follower = None;
                }
            }
            _ => std::future::pending().await,
        }
    }

    /// Waits, as the first request does, for the servers still starting (at most the session's start-up wait), so
    /// `session_started` lists the tools of every server that starts in time.
    pub(super) async fn settle(&self) {
        self.manager.wait_started().await;
    }

    /// Prints `session_started` (stream-json) with the servers' states and their tools among the session's, and the
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
        let statuses = self.rx.borrow_and_update().clone();
        let servers = self.watch.changed_json(&statuses);
        if format == OutputFormat::StreamJson
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
    pub(super) fn report<O: Write, E: Write>(&mut self, format: OutputFormat, out: &mut O, err: &mut E) {
        let statuses = self.rx.borrow_and_update().clone();
        if format == OutputFormat::StreamJson {
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
