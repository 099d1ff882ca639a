//! Managing servers from the command line and the UI against the real server-everything: `tern mcp add`, `get` and
//! `remove` on a user config of the test's own (comments kept, keys not echoed); resources through the generic tools,
//! a prompt as the user's turn, and `/mcp`'s switch and reconnect, through the real runner and the scripted model.

use std::time::Duration;

use serde_json::{Value, json};
use tern::agent::spawn;
use tern::mcp::{McpManager, ServerState};
use tern::protocol::{ApprovalMode, Event, McpAction, Op};
use tern::provider::ProviderKind;
use tern::session::ToolResultStore;

use crate::mcp::harness::{STARTUP, everything, servers, stdio_everything};
use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::Scratch;

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_get_remove_round_trip_keeps_the_users_comments() {
    let Some(js) = everything() else { return };
    let s = Scratch::new();
    let config = s.home.path().join("config/tern/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let original = "# my own settings\nmax_iterations = 30 # enough\n";
    std::fs::write(&config, original).unwrap();
    let js = js.display().to_string();

    let add = [
        "mcp",
        "add",
        "every",
        "--env",
        "DEBUG=1",
        "--env",
        "EVERY_API_KEY=sk-test-0123456789",
        "--",
        "node",
        &js,
        "stdio",
    ];
    let out = s.run(None, &add).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("Added MCP server \"every\" to the user config"),
        "{stdout}"
    );
    assert!(
        stdout.contains("DEBUG=1") && stdout.contains("EVERY_API_KEY=(hidden)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("sk-test") && !stderr.contains("sk-test"),
        "{stdout}{stderr}"
    );
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.starts_with(original), "{written}");
    assert!(written.contains("[mcp_servers.every]"), "{written}");

    // The same name again is refused and the file is left alone.
    let out = s.run(None, &add).await;
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), written);

    let out = s.run(None, &["mcp", "get", "every"]).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.starts_with("every  (stdio: node "), "{stdout}");
    assert!(stdout.contains(&format!("from:   {}", config.display())), "{stdout}");
    assert!(stdout.contains("status: ready:"), "{stdout}");
    assert!(stdout.contains("mcp_every_echo"), "{stdout}");
    assert!(stdout.contains("EVERY_API_KEY=(hidden)"), "{stdout}");
    assert!(!stdout.contains("sk-test"), "{stdout}");

    let out = s.run(None, &["mcp", "get", "other"]).await;
    assert!(!out.status.success());
    assert!(text(&out).1.contains("no MCP server named \"other\""));

    let out = s.run(None, &["mcp", "remove", "every"]).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    let out = s.run(None, &["mcp", "remove", "every"]).await;
    assert!(!out.status.success());
    assert!(text(&out).1.contains("no MCP server named \"every\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_servers_and_project_scope() {
    let s = Scratch::new();
    let out = s
        .run(
            None,
            &[
                "mcp",
                "add",
                "--scope",
                "project",
                "docs",
                "--url",
                "http://127.0.0.1:9/sse",
                "--transport",
                "sse",
                "--header",
                "Authorization=Bearer abc",
            ],
        )
        .await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("Authorization=(hidden)") && !stdout.contains("abc"),
        "{stdout}"
    );
    assert!(stderr.contains("not trusted"), "{stderr}");
    let project = s.work.path().join(".tern/config.toml");
    let written = std::fs::read_to_string(&project).unwrap();
    assert!(
        written.contains("type = \"sse\"") && written.contains("url = \"http://127.0.0.1:9/sse\""),
        "{written}"
    );

    for (args, expected) in [
        (&["mcp", "add", "bad name", "--", "x"][..], "invalid server name"),
        (
            &["mcp", "add", "w", "--url", "ftp://example.com"][..],
            "unsupported scheme",
        ),
        (&["mcp", "add", "e", "--env", "NOEQUALS", "--", "x"][..], "KEY=VALUE"),
    ] {
        let out = s.run(None, args).await;
        assert!(!out.status.success(), "{args:?}");
        assert!(text(&out).1.contains(expected), "{args:?}: {}", text(&out).1);
    }
    // Without --scope, remove finds the file that defines it.
    let out = s.run(None, &["mcp", "remove", "docs"]).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("project config"), "{stdout}");
    assert!(!std::fs::read_to_string(&project).unwrap().contains("docs"));
}

/// Waits for the turn to end, failing on any approval request (everything here only reads).
async fn finish_turn(events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("the turn ended in time")
            .expect("the agent is running");
        if let Event::ApprovalRequest(r) = &event {
            panic!("nothing here needs approval: {r:?}");
        }
        let done = matches!(event, Event::TurnFinished { .. });
        seen.push(event);
        if done {
            return seen;
        }
    }
}

fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn last_user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

async fn wait_for(manager: &McpManager, what: &str, ok: impl Fn(&tern::mcp::ServerStatus) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !ok(&manager.statuses()[0]) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: {:#?}",
            manager.statuses()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_prompts_and_the_session_switch_through_the_runner() {
    let Some(js) = everything() else { return };
    let manager = McpManager::start(servers(&stdio_everything(&js, json!({}))), STARTUP);
    let mock = MockLlm::start(vec![
        Reply::tool("mcp_list_resources", json!({"server": "everything"})),
        Reply::tool(
            "mcp_read_resource",
            json!({"server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
        ),
        Reply::text("Read it."),
        Reply::text("Answered the prompt."),
        Reply::text("No MCP tools now."),
        Reply::text("They are back."),
        Reply::text("Summarised."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let config = crate::support::agent::config(
        &crate::support::agent::provider(&mock, ProviderKind::OpenAi),
        work.path(),
        ToolResultStore::new(store.path().join("results")),
        ApprovalMode::AutoEdit,
    );
    let mut agent = spawn(config.with_mcp(Some(manager.clone())));

    // Resources: listed and read through the two generic tools; no tool per resource or prompt is offered.
    agent
        .ops
        .send(Op::UserTurn {
            text: "read the docs".into(),
        })
        .unwrap();
    finish_turn(&mut agent.events).await;
    let requests = mock.requests();
    let tools = offered(&requests[0]);
    assert!(
        tools.contains(&"mcp_list_resources".to_string()) && tools.contains(&"mcp_read_resource".to_string()),
        "{tools:?}"
    );
    assert!(
        !tools.iter().any(|t| t.contains("_resource_") || t.contains("_prompt_")),
        "{tools:?}"
    );
    let results = crate::support::tern::tool_results(&requests[2]);
    assert!(
        results[0].contains("demo://resource/static/document/architecture.md"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("Architecture"), "{}", results[1]);

    // A prompt, fetched with its arguments, is the user's turn.
    let arguments = json!({"city": "Paris", "state": "TX"}).as_object().unwrap().clone();
    agent
        .ops
        .send(Op::McpPrompt {
            server: "everything".into(),
            prompt: "args-prompt".into(),
            arguments,
        })
        .unwrap();
    let events = finish_turn(&mut agent.events).await;
    let started = events.iter().find_map(|e| match e {
        Event::TurnStarted { text, .. } => Some(text.clone()),
        _ => None,
    });
    assert!(started.as_deref().is_some_and(|t| t.contains("Paris")), "{events:?}");
    let requests = mock.requests();
    assert!(last_user_text(&requests[3]).contains("Paris"), "{}", requests[3]);

    // Turned off for the session: the next request offers none of its tools.
    agent
        .ops
        .send(Op::McpServer {
            name: "everything".into(),
            action: McpAction::Disable,
        })
        .unwrap();
    wait_for(&manager, "turned off", |s| s.state == ServerState::Disabled).await;
    agent
        .ops
        .send(Op::UserTurn {
            text: "anything?".into(),
        })
        .unwrap();
    let events = finish_turn(&mut agent.events).await;
    // The frontends were told, through the agent's events, not by watching the manager.
    assert!(
        events.iter().any(|e| matches!(e, Event::McpServers { servers }
            if servers.iter().any(|s| s.name == "everything" && s.state == ServerState::Disabled))),
        "{events:?}"
    );
    let tools = offered(&mock.requests()[4]);
    assert!(!tools.iter().any(|t| t.starts_with("mcp_")), "{tools:?}");
    assert!(tools.contains(&"read_file".to_string()), "{tools:?}");

    // On again: it connects and its tools come back.
    agent
        .ops
        .send(Op::McpServer {
            name: "everything".into(),
            action: McpAction::Enable,
        })
        .unwrap();
    wait_for(&manager, "back on", |s| matches!(s.state, ServerState::Ready { .. })).await;
    agent
        .ops
        .send(Op::UserTurn {
            text: "and now?".into(),
        })
        .unwrap();
    finish_turn(&mut agent.events).await;
    let tools = offered(&mock.requests()[5]);
    assert!(tools.contains(&"mcp_everything_echo".to_string()), "{tools:?}");

    // Reconnect: a new server process, ready again.
    let before = manager.statuses()[0].pid.unwrap();
    agent
        .ops
        .send(Op::McpServer {
            name: "everything".into(),
            action: McpAction::Reconnect,
        })
        .unwrap();
    wait_for(&manager, "reconnected", |s| {
        matches!(s.state, ServerState::Ready { .. }) && s.pid.is_some_and(|p| p != before)
    })
    .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while crate::mcp::harness::alive(before) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the old process {before} outlived the reconnect"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // `@server:uri` (as the composer's `@` popup writes it) attaches the resource's text to the message.
    let mention = "@everything:demo://resource/static/document/architecture.md";
    agent
        .ops
        .send(Op::UserTurn {
            text: format!("summarise {mention} please"),
        })
        .unwrap();
    finish_turn(&mut agent.events).await;
    let sent = last_user_text(&mock.requests()[6]);
    assert!(
        sent.contains(&format!("<attachment source=\\\"{mention}\\\">")) && sent.contains("Architecture"),
        "{sent}"
    );
    // The session's end ends its servers: the agent does it before it says it has shut down.
    let pid = manager.statuses()[0].pid.unwrap();
    agent.ops.send(Op::Shutdown).unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), agent.events.recv())
            .await
            .expect("the agent shut down in time")
            .expect("the agent says it has shut down");
        if matches!(event, Event::ShutdownComplete) {
            break;
        }
    }
    assert!(
        !crate::mcp::harness::alive(pid),
        "the server {pid} outlived the session"
    );
}
