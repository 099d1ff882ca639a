//! MCP servers that fail or are not started show as warnings, each once, on the app harness of `app.rs`.

use std::time::Duration;

use super::*;
use crate::state::{CellKind, Level};
use tern_protocol::McpAction;
use tern_protocol::mcp::{ServerState, ServerStatus, TransportKind};

pub(super) fn server(name: &str, state: ServerState, skipped: bool) -> ServerStatus {
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
    // As the agent tells them: the first report, then a change.
    h.event(Event::McpServers {
        servers: vec![
            server("proj", failed("the project is not trusted"), true),
            server("slow", ServerState::Connecting, false),
        ],
    });
    assert_eq!(
        warnings(&h.app),
        ["MCP server \"proj\" not started: the project is not trusted"]
    );
    let failed_both = vec![
        server("proj", failed("the project is not trusted"), true),
        server("slow", failed("did not start within 10 s"), false),
    ];
    h.event(Event::McpServers {
        servers: failed_both.clone(),
    });
    h.event(Event::McpServers { servers: failed_both });
    assert_eq!(
        warnings(&h.app),
        [
            "MCP server \"proj\" not started: the project is not trusted",
            "MCP server \"slow\" failed to start: did not start within 10 s",
        ]
    );
}

/// A ready server with tools, resources and prompts, and a failed one.
fn two_servers() -> Vec<ServerStatus> {
    use tern_protocol::mcp::{ItemKind, PromptArgument, PromptSummary, ResourceSummary, ToolSummary};
    let mut every = server(
        "everything",
        ServerState::Ready {
            tools: 2,
            resources: 1,
            prompts: 1,
        },
        false,
    );
    every.tools = [
        ("echo", "Echoes back the input string", true),
        ("add", "Adds two numbers", false),
    ]
    .map(|(name, summary, read_only)| ToolSummary {
        name: format!("mcp_everything_{name}"),
        original: name.into(),
        kind: ItemKind::Tool,
        read_only,
        summary: summary.into(),
    })
    .to_vec();
    every.resources = vec![ResourceSummary {
        uri: "demo://docs/readme.md".into(),
        name: "readme.md".into(),
        mime: Some("text/markdown".into()),
        size: None,
        description: String::new(),
        template: false,
    }];
    every.prompts = vec![PromptSummary {
        name: "args-prompt".into(),
        description: "A prompt with arguments".into(),
        arguments: vec![
            PromptArgument {
                name: "city".into(),
                required: true,
            },
            PromptArgument {
                name: "state".into(),
                required: false,
            },
        ],
    }];
    let ghost = server(
        "ghost",
        ServerState::Failed {
            reason: "command not found: ghost-server".into(),
        },
        false,
    );
    vec![every, ghost]
}

#[test]
fn the_mcp_view_selects_a_server_and_asks_the_agent_to_act_on_it() {
    let mut h = harness();
    h.event(Event::McpServers { servers: two_servers() });
    h.app.command("mcp", "");
    insta::assert_snapshot!("mcp_view_80x24", h.screen(80, 24));
    h.press(key(KeyCode::Down));
    insta::assert_snapshot!("mcp_view_second_120x40", h.screen(120, 40));
    h.keys("r");
    h.press(key(KeyCode::Up));
    h.keys("de");
    let actions: Vec<(String, McpAction)> = h
        .sent()
        .into_iter()
        .filter_map(|op| match op {
            Op::McpServer { name, action } => Some((name, action)),
            _ => None,
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("ghost".to_string(), McpAction::Reconnect),
            ("everything".to_string(), McpAction::Disable),
            ("everything".to_string(), McpAction::Enable),
        ]
    );
    // Enter lists the selected server's tools with their descriptions; Esc goes back, q closes.
    h.press(key(KeyCode::Enter));
    let tools = h.screen(80, 24);
    assert!(tools.contains("everything: 2 tools"), "{tools}");
    assert!(
        tools.contains("mcp_everything_echo") && tools.contains("Echoes back the input string"),
        "{tools}"
    );
    h.press(key(KeyCode::Esc));
    assert!(h.screen(80, 24).contains("› everything"));
    h.keys("q");
    assert!(h.app.layers.is_empty());
}

#[test]
fn a_prompt_of_a_ready_server_is_a_slash_command_with_arguments() {
    let mut h = harness();
    h.event(Event::McpServers { servers: two_servers() });
    // The popup offers it with its arguments.
    h.keys("/mcp__ev");
    let popup = h.screen(100, 20);
    assert!(
        popup.contains("/mcp__everything__args-prompt") && popup.contains("<city> [state]"),
        "{popup}"
    );
    h.app.composer.set_text("");
    h.app.command("mcp__everything__args-prompt", "\"New York\" state=NY");
    let sent = h.sent();
    let Some(Op::McpPrompt {
        server,
        prompt,
        arguments,
    }) = sent.last()
    else {
        panic!("{sent:?}")
    };
    assert_eq!((server.as_str(), prompt.as_str()), ("everything", "args-prompt"));
    assert_eq!(arguments["city"], "New York");
    assert_eq!(arguments["state"], "NY");
    // A missing required argument is said, and nothing is sent.
    h.app.command("mcp__everything__args-prompt", "");
    assert!(h.sent().is_empty());
    assert!(h.screen(100, 20).contains("missing city"));
}
