//! MCP servers that fail or are not started show as warnings, each once, on the app harness of `app.rs`.

use std::time::Duration;

use super::*;
use crate::tools::mcp::{ServerState, ServerStatus, TransportKind};
use crate::tui::state::{CellKind, Level};

fn server(name: &str, state: ServerState, skipped: bool) -> ServerStatus {
    ServerStatus {
        name: name.into(),
        transport: TransportKind::Stdio,
        target: name.into(),
        source: "test.json".into(),
        state,
        tools: Vec::new(),
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

fn warnings(app: &App) -> Vec<String> {
    app.state
        .cells
        .iter()
        .filter_map(|c| match &c.kind {
            CellKind::Notice {
                text,
                level: Level::Warning,
            } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn failed_and_skipped_servers_are_warned_about_once() {
    let mut h = harness();
    let failed = |reason: &str| ServerState::Failed { reason: reason.into() };
    let (tx, rx) = tokio::sync::watch::channel(vec![
        server("proj", failed("the project is not trusted"), true),
        server("slow", ServerState::Connecting, false),
    ]);
    h.app.mcp = Some(rx);
    h.app.mcp_changed();
    assert_eq!(
        warnings(&h.app),
        ["MCP server \"proj\" not started: the project is not trusted"]
    );
    tx.send_replace(vec![
        server("proj", failed("the project is not trusted"), true),
        server("slow", failed("did not start within 10 s"), false),
    ]);
    h.app.mcp_changed();
    h.app.mcp_changed();
    assert_eq!(
        warnings(&h.app),
        [
            "MCP server \"proj\" not started: the project is not trusted",
            "MCP server \"slow\" failed to start: did not start within 10 s",
        ]
    );
}
