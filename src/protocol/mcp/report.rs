//! What frontends tell the user about MCP servers as they start: a line for each server that failed or was not
//! started (the headless run's stderr, the TUI's notices), and the servers' states as JSON (stream-json). Frontends
//! feed it the manager's successive statuses; it says only what is new, so a server failing the same way on every
//! retry is reported once.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{ServerState, ServerStatus};

/// A server that could not be started, or was not started at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFailure {
    pub name: String,
    pub reason: String,
    /// Not started at all: its configuration cannot be used as written, or the project is not trusted.
    pub skipped: bool,
}

impl ServerFailure {
    /// One line for a person: the server and why.
    pub fn line(&self) -> String {
        let (name, reason) = (&self.name, &self.reason);
        if self.skipped {
            format!("MCP server {name:?} not started: {reason}")
        } else {
            format!("MCP server {name:?} failed to start: {reason}")
        }
    }
}

/// Follows the states of a session's servers and says what changed since the last look.
#[derive(Debug, Default)]
pub struct ServerWatch {
    /// Per server: the failure last told, or `None` once it was ready since.
    told: HashMap<String, Option<ServerFailure>>,
    json: HashMap<String, Value>,
    /// (server, problem) pairs told.
    problems: HashSet<(String, String)>,
}

impl ServerWatch {
    /// The failures in `statuses` not told yet: a server failing the same way on every retry is told once, and again
    /// only after it was ready in between. Other states say nothing (a disconnected server restarts on its next use).
    pub fn failures(&mut self, statuses: &[ServerStatus]) -> Vec<ServerFailure> {
        let mut news = Vec::new();
        for status in statuses {
            match &status.state {
                ServerState::Failed { reason } => {
                    let failure = ServerFailure {
                        name: status.name.clone(),
                        reason: reason.clone(),
                        skipped: status.skipped,
                    };
                    if self.told.get(&status.name).and_then(Option::as_ref) != Some(&failure) {
                        self.told.insert(status.name.clone(), Some(failure.clone()));
                        news.push(failure);
                    }
                }
                ServerState::Ready { .. } => {
                    self.told.insert(status.name.clone(), None);
                }
                _ => {}
            }
        }
        news
    }

    /// One line for each problem (a tool not offered, and why: a name that collides with another tool's, a schema no
    /// model can fill) not told yet, each told once.
    pub fn problems(&mut self, statuses: &[ServerStatus]) -> Vec<String> {
        let mut news = Vec::new();
        for status in statuses {
            for problem in &status.problems {
                if self.problems.insert((status.name.clone(), problem.clone())) {
                    news.push(format!("MCP server {:?}: {problem}", status.name));
                }
            }
        }
        news
    }

    /// The JSON of every server whose state or tools changed since the last call (all of them the first time).
    pub fn changed_json(&mut self, statuses: &[ServerStatus]) -> Vec<Value> {
        statuses
            .iter()
            .filter_map(|status| {
                let value = status_json(status);
                if self.json.get(&status.name) == Some(&value) {
                    return None;
                }
                self.json.insert(status.name.clone(), value.clone());
                Some(value)
            })
            .collect()
    }
}

/// A server as stream-json shows it: `{"name", "state", "transport", "tools": [...], "error"?}` where `state` is one
/// of `connecting`, `ready`, `failed`, `skipped`, `disabled`, `disconnected`.
pub(crate) fn status_json(status: &ServerStatus) -> Value {
    let (state, error) = match &status.state {
        ServerState::Disabled => ("disabled", None),
        ServerState::Connecting => ("connecting", None),
        ServerState::Ready { .. } => ("ready", None),
        ServerState::Disconnected { reason } => ("disconnected", Some(reason)),
        ServerState::Failed { reason } if status.skipped => ("skipped", Some(reason)),
        ServerState::Failed { reason } => ("failed", Some(reason)),
    };
    let mut value = json!({
        "name": status.name,
        "state": state,
        "transport": status.transport.to_string(),
        "tools": status.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
    });
    if let Some(error) = error {
        value["error"] = json!(error);
    }
    value
}

/// Servers, their state and their tools as plain text, one server per block.
pub fn render_statuses(statuses: &[ServerStatus]) -> String {
    render_with_logins(statuses, &[])
}

/// `render_statuses`, with a `login:` line for each remote server whose entry in `logins` (same order) says whether
/// it has a stored OAuth login.
pub fn render_with_logins(statuses: &[ServerStatus], logins: &[Option<bool>]) -> String {
    let mut out = String::new();
    for (i, status) in statuses.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{}  ({}: {})", status.name, status.transport, status.target);
        let _ = writeln!(out, "  from:   {}", status.source);
        let state = match &status.state {
            ServerState::Disabled if status.switched == Some(false) => "turned off for this session".to_string(),
            ServerState::Disabled => "disabled".to_string(),
            ServerState::Connecting => "still connecting".to_string(),
            ServerState::Ready {
                tools,
                resources,
                prompts,
            } => {
                format!(
                    "ready: {}, {}, {}",
                    count(*tools, "tool"),
                    count(*resources, "resource"),
                    count(*prompts, "prompt")
                )
            }
            ServerState::Disconnected { reason } => format!("disconnected: {reason}"),
            ServerState::Failed { reason } if status.skipped => format!("not started: {reason}"),
            ServerState::Failed { reason } if super::is_needs_login(reason) => reason.clone(),
            ServerState::Failed { reason } => format!("failed: {reason}"),
        };
        let _ = writeln!(out, "  status: {state}");
        // Whether a server needs a login shows in its status; that it has one (still accepted) shows here.
        let refused = matches!(&status.state, ServerState::Failed { reason } if super::is_needs_login(reason));
        if logins.get(i).copied().flatten() == Some(true) && !refused {
            let _ = writeln!(
                out,
                "  login:  logged in (OAuth; `tern mcp logout {}` forgets it)",
                status.name
            );
        }
        if let Some(info) = &status.server_info {
            let _ = writeln!(out, "  server: {info}");
        }
        for tool in &status.tools {
            let flags = if tool.read_only { " (read-only)" } else { "" };
            let summary = if tool.summary.is_empty() {
                String::new()
            } else {
                format!(": {}", tool.summary)
            };
            let _ = writeln!(out, "    {}{flags}{summary}", tool.name);
        }
        for resource in &status.resources {
            let kind = if resource.template { "template" } else { "resource" };
            let _ = writeln!(out, "    {kind} {}  ({})", resource.uri, resource.name);
        }
        for prompt in &status.prompts {
            let usage = prompt.usage();
            let space = if usage.is_empty() { "" } else { " " };
            let _ = writeln!(out, "    /{}{space}{usage}", prompt.command(&status.name));
        }
        for problem in &status.problems {
            let _ = writeln!(out, "  problem: {problem}");
        }
    }
    out
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::mcp::{ItemKind, ToolSummary, TransportKind};

    fn status(name: &str, state: ServerState, skipped: bool, tools: &[&str]) -> ServerStatus {
        ServerStatus {
            name: name.into(),
            transport: TransportKind::Stdio,
            target: "x".into(),
            source: "test.json".into(),
            state,
            tools: tools
                .iter()
                .map(|t| ToolSummary {
                    name: t.to_string(),
                    original: t.to_string(),
                    kind: ItemKind::Tool,
                    read_only: false,
                    summary: String::new(),
                })
                .collect(),
            server_info: None,
            instructions: None,
            pid: None,
            skipped,
            startup_timeout: Duration::from_secs(10),
            problems: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            switched: None,
        }
    }

    fn failed(reason: &str) -> ServerState {
        ServerState::Failed { reason: reason.into() }
    }

    fn ready() -> ServerState {
        ServerState::Ready {
            tools: 1,
            resources: 0,
            prompts: 0,
        }
    }

    #[test]
    fn each_failure_is_told_once_and_skips_say_so() {
        let mut watch = ServerWatch::default();
        let lines = |news: Vec<ServerFailure>| news.iter().map(ServerFailure::line).collect::<Vec<_>>();
        let start = [
            status("a", ServerState::Connecting, false, &[]),
            status("b", failed("untrusted"), true, &[]),
        ];
        assert_eq!(
            lines(watch.failures(&start)),
            ["MCP server \"b\" not started: untrusted"]
        );
        assert!(watch.failures(&start).is_empty());
        let later = [
            status("a", failed("command not found: x"), false, &[]),
            status("b", failed("untrusted"), true, &[]),
        ];
        assert_eq!(
            lines(watch.failures(&later)),
            ["MCP server \"a\" failed to start: command not found: x"]
        );
        assert!(
            watch.failures(&later).is_empty(),
            "a retry failing the same way says nothing"
        );
        assert!(watch.failures(&[status("a", ready(), false, &["mcp_a_t"])]).is_empty());
        assert_eq!(
            lines(watch.failures(&later)).len(),
            1,
            "failing again after it was ready is news"
        );
    }

    #[test]
    fn json_names_state_tools_and_error_and_only_changes_repeat() {
        let mut watch = ServerWatch::default();
        let all = [
            status("a", ready(), false, &["mcp_a_t"]),
            status("b", failed("untrusted"), true, &[]),
            status("c", ServerState::Connecting, false, &[]),
        ];
        let first = watch.changed_json(&all);
        assert_eq!(
            first,
            [
                json!({"name": "a", "state": "ready", "transport": "stdio", "tools": ["mcp_a_t"]}),
                json!({"name": "b", "state": "skipped", "transport": "stdio", "tools": [], "error": "untrusted"}),
                json!({"name": "c", "state": "connecting", "transport": "stdio", "tools": []}),
            ]
        );
        assert!(watch.changed_json(&all).is_empty());
        let c_up = [status("c", failed("boom"), false, &[])];
        assert_eq!(watch.changed_json(&c_up)[0]["state"], "failed");
    }
}
