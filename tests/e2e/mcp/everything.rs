//! server-everything over stdio, streamable HTTP and legacy SSE, through the registry and through a real turn; a
//! killed server, a timeout, a missing command, remote headers, the tool filters and `tern mcp list`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tern::agent::approval::ApprovalGate;
use tern::agent::{AgentConfig, spawn};
use tern::mcp::{McpConfig, McpManager, ServerState, list_report};
use tern::protocol::{ApprovalMode, Event, Op, ToolCall};
use tern::provider::{ProviderConfig, ProviderKind};
use tern::session::ToolResultStore;
use tern::tools::{OutputSink, PathPolicy, ToolContext, ToolRegistry, ToolSource};

use crate::mcp::harness::*;
use crate::support::mock_llm::{MockLlm, Reply};

/// The same checks over every transport: tools, a resource, a resource template, a prompt, an image.
async fn exercise(s: &Session) {
    let status = s.status("everything");
    let ServerState::Ready {
        tools,
        resources,
        prompts,
    } = status.state
    else {
        panic!("not ready: {status:#?}");
    };
    assert!(tools >= 10 && resources >= 7 && prompts >= 3, "{status:#?}");
    assert!(status.server_info.unwrap().contains("everything"));

    assert_eq!(s.ok("mcp_everything_echo", json!({"message": "hi"})).await, "Echo: hi");
    // A model's "2" is cast to the number the schema asks for.
    assert_eq!(
        s.ok("mcp_everything_get-sum", json!({"a": "2", "b": 3})).await,
        "The sum of 2 and 3 is 5."
    );
    // Resources through the two generic tools, not one tool each; prompts are the user's, not the model's.
    let listed = s.ok("mcp_list_resources", json!({})).await;
    assert!(
        listed.contains("demo://resource/static/document/architecture.md") && listed.contains("URI template"),
        "{listed}"
    );
    let doc = s
        .ok(
            "mcp_read_resource",
            json!({"server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
        )
        .await;
    assert!(doc.len() > 200 && doc.contains("Architecture"), "{doc}");
    let dynamic = s
        .ok(
            "mcp_read_resource",
            json!({"server": "everything", "uri": "demo://resource/dynamic/text/3"}),
        )
        .await;
    assert!(dynamic.contains('3'), "{dynamic}");
    let names = s.registry.names();
    assert!(
        !names.iter().any(|n| n.contains("_resource_") || n.contains("_prompt_")),
        "{names:?}"
    );
    let image = s.call("mcp_everything_get-tiny-image", json!({})).await;
    assert_eq!(image.images.len(), 1, "{}", image.text);
    assert_eq!(image.images[0].media_type, "image/png");

    let tool = |n: &str| s.registry.get(n).unwrap();
    assert!(tool("mcp_everything_echo").read_only(), "readOnlyHint is honoured");
    assert!(!tool("mcp_everything_toggle-simulated-logging").read_only());
    assert!(tool("mcp_list_resources").read_only() && tool("mcp_read_resource").concurrency_safe());
    let missing = s.call("mcp_everything_get-sum", json!({"a": 1})).await;
    assert!(
        missing.is_error && missing.text.contains("missing required b"),
        "schema checked: {}",
        missing.text
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_server_everything() {
    let Some(js) = everything() else { return };
    let s = session(&stdio_everything(&js, json!({}))).await;
    exercise(&s).await;

    // Progress reaches the call's live output.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = ToolContext {
        output: OutputSink::new(tx),
        ..s.ctx.clone()
    };
    let call = ToolCall {
        id: "p".into(),
        name: "mcp_everything_trigger-long-running-operation".into(),
        arguments: json!({"duration": 1, "steps": 2}),
    };
    let out = s.registry.run(&call, &ctx).await;
    assert!(!out.is_error, "{}", out.text);
    let mut live = String::new();
    while let Ok(chunk) = rx.try_recv() {
        live.push_str(&chunk);
    }
    // Progress is throttled and the last notification may race the result: at least one must show.
    assert!(live.contains("progress 1/2") || live.contains("progress 2/2"), "{live}");

    let pid = s.status("everything").pid.unwrap();
    s.manager.shutdown().await;
    assert!(!alive(pid), "the server process ended with the session");
    assert!(s.manager.tools().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_server_everything() {
    let Some(js) = everything() else { return };
    let server = HttpServer::start(&js, "streamableHttp").await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let s = session(&json!({"mcpServers": {"everything": {"url": url}}}).to_string()).await;
    assert_eq!(s.status("everything").transport.to_string(), "http");
    exercise(&s).await;

    // The server restarts (its sessions are gone): the next call still gets through.
    let port = server.port;
    drop(server);
    let _server = HttpServer::start_on(&js, "streamableHttp", port).await;
    assert_eq!(
        s.ok("mcp_everything_echo", json!({"message": "after restart"})).await,
        "Echo: after restart"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_sse_server_everything() {
    let Some(js) = everything() else { return };
    let server = HttpServer::start(&js, "sse").await;
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let s = session(&json!({"mcpServers": {"everything": {"url": url}}}).to_string()).await;
    assert_eq!(s.status("everything").transport.to_string(), "sse");
    exercise(&s).await;

    // The server restarts: its stream ends, the server is marked, and the next call opens a new stream.
    let port = server.port;
    drop(server);
    s.wait_for("the stream to end", |st| {
        matches!(st[0].state, ServerState::Disconnected { .. })
    })
    .await;
    let _server = HttpServer::start_on(&js, "sse", port).await;
    assert_eq!(
        s.ok("mcp_everything_echo", json!({"message": "after restart"})).await,
        "Echo: after restart"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scripted_model_turn_calls_an_mcp_tool() {
    let Some(js) = everything() else { return };
    let manager = McpManager::start(servers(&stdio_everything(&js, json!({}))), STARTUP);
    let mock = MockLlm::start(vec![
        Reply::tool("mcp_everything_echo", json!({"message": "from the model"})),
        Reply::text("Done."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let mut provider = ProviderConfig::new(ProviderKind::OpenAi, "test-model");
    provider.base_url = mock.openai_base_url();
    provider.api_key = Some("test-key".into());
    let results = ToolResultStore::new(store.path().join("results"));
    results.ensure_dir().unwrap();
    let tools = ToolRegistry::with_builtins();
    let policy = PathPolicy::new(dir.path()).unwrap().allow_read_root(results.dir());
    let mut agent = spawn(
        AgentConfig::new(
            tern::provider::build(&provider).unwrap(),
            tools,
            policy,
            ApprovalGate::new(ApprovalMode::AutoEdit, vec![], vec![]),
            "You are a test.".into(),
            results,
        )
        .with_max_iterations(5)
        .with_mcp(Some(manager.clone())),
    );
    agent
        .ops
        .send(Op::UserTurn {
            text: "echo something".into(),
        })
        .unwrap();
    let mut ended = None;
    while ended.is_none() {
        let event = tokio::time::timeout(Duration::from_secs(30), agent.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            Event::ApprovalRequest(r) => panic!("a readOnlyHint tool must not ask in auto-edit mode: {r:?}"),
            Event::ToolCallEnd { output, .. } => ended = Some(output),
            _ => {}
        }
    }
    assert!(mock.wait_for_requests(2, Duration::from_secs(20)).await);
    let requests = mock.requests();
    let second = &requests[1];
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"mcp_everything_echo") && offered.contains(&"read_file"),
        "{offered:?}"
    );
    let result = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(result["content"], "Echo: from the model");
    assert_eq!(ended.unwrap().text, "Echo: from the model");
    agent.ops.send(Op::Shutdown).unwrap();
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_server_fails_the_call_and_restarts_on_next_use() {
    let Some(js) = everything() else { return };
    let s = Arc::new(session(&stdio_everything(&js, json!({}))).await);
    let first = s.status("everything").pid.unwrap();

    // Killed in the middle of a call: that call fails, saying so.
    let running = {
        let s = Arc::clone(&s);
        tokio::spawn(async move {
            s.call(
                "mcp_everything_trigger-long-running-operation",
                json!({"duration": 10, "steps": 10}),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(700)).await;
    kill(first);
    let out = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .unwrap()
        .unwrap();
    assert!(out.is_error && out.text.contains("disconnected"), "{}", out.text);
    s.wait_for("disconnected", |st| {
        matches!(st[0].state, ServerState::Disconnected { .. })
    })
    .await;
    let ServerState::Disconnected { reason } = s.status("everything").state else {
        unreachable!()
    };
    assert!(
        reason.contains("signal 9") && reason.contains("restarts on its next use"),
        "{reason}"
    );

    // The next use starts it again.
    assert_eq!(
        s.ok("mcp_everything_echo", json!({"message": "back"})).await,
        "Echo: back"
    );
    let second = s.status("everything").pid.unwrap();
    assert_ne!(first, second);
    assert!(matches!(s.status("everything").state, ServerState::Ready { .. }));

    // Killed while idle: noticed, and the next call just works.
    kill(second);
    s.wait_for("disconnected again", |st| {
        matches!(st[0].state, ServerState::Disconnected { .. })
    })
    .await;
    assert_eq!(
        s.ok("mcp_everything_echo", json!({"message": "again"})).await,
        "Echo: again"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_past_its_timeout_is_cancelled_and_the_server_keeps_working() {
    let Some(js) = everything() else { return };
    let s = session(&stdio_everything(&js, json!({"toolTimeout": 1}))).await;
    let pid = s.status("everything").pid.unwrap();
    let started = Instant::now();
    let out = s
        .call(
            "mcp_everything_trigger-long-running-operation",
            json!({"duration": 5, "steps": 5}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("did not finish `trigger-long-running-operation` within 1 s"),
        "{}",
        out.text
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        s.ok("mcp_everything_echo", json!({"message": "still here"})).await,
        "Echo: still here"
    );
    assert_eq!(s.status("everything").pid, Some(pid), "no restart was needed");

    // The user interrupting a call cancels it at once.
    s.ctx.cancel.cancel();
    let out = s
        .call(
            "mcp_everything_trigger-long-running-operation",
            json!({"duration": 5, "steps": 5}),
        )
        .await;
    assert!(out.is_error && out.text.contains("interrupted"), "{}", out.text);
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_command_fails_alone() {
    let Some(js) = everything() else { return };
    let config = json!({"mcpServers": {
        "ghost": {"command": "tern-no-such-mcp-server-xyz", "args": ["--stdio"]},
        "everything": {"command": "node", "args": [js, "stdio"]},
        "off": {"command": "tern-no-such-mcp-server-xyz", "enabled": false},
        "crashy": {"command": "node", "args": ["-e", "console.error('bad token'); process.exit(3)"]},
        "unset": {"url": "${TERN_TEST_UNSET_VARIABLE}/mcp"},
    }});
    let started = Instant::now();
    let s = session(&config.to_string()).await;
    assert!(started.elapsed() < Duration::from_secs(15));
    let ghost = s.status("ghost");
    assert_eq!(
        ghost.state,
        ServerState::Failed {
            reason: "command not found: tern-no-such-mcp-server-xyz (is it installed and on PATH?)".into()
        }
    );
    assert!(ghost.tools.is_empty());
    assert_eq!(s.status("off").state, ServerState::Disabled);
    let ServerState::Failed { reason } = s.status("crashy").state else {
        panic!("{:#?}", s.status("crashy"))
    };
    assert!(
        reason.starts_with("the server closed the connection during start-up")
            && reason.ends_with("(the server exited with status 3; stderr: bad token)"),
        "{reason}"
    );
    assert_eq!(
        s.status("unset").state,
        ServerState::Failed {
            reason: "environment variable TERN_TEST_UNSET_VARIABLE is not set (used in `url`)".into()
        }
    );
    assert!(matches!(s.status("everything").state, ServerState::Ready { .. }));
    assert!(
        s.registry
            .names()
            .iter()
            .all(|n| n.starts_with("mcp_everything_") || n.ends_with("_resource") || n.ends_with("_resources"))
    );
    assert!(matches!(s.status("everything").state, ServerState::Ready { .. }));
    assert_eq!(
        s.ok("mcp_everything_echo", json!({"message": "fine"})).await,
        "Echo: fine"
    );

    let report = tern::protocol::mcp::report::render_statuses(&s.manager.statuses());
    assert!(
        report.contains("ghost  (stdio: tern-no-such-mcp-server-xyz --stdio)"),
        "{report}"
    );
    assert!(report.contains("status: failed: command not found"), "{report}");
    assert!(report.contains("status: disabled"), "{report}");
    assert!(
        report.contains("    mcp_everything_echo (read-only): Echoes back the input"),
        "{report}"
    );

    // Dropping the session without a shutdown still ends the server.
    let pid = s.status("everything").pid.unwrap();
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(3);
    while alive(pid) {
        assert!(Instant::now() < deadline, "server {pid} outlived its manager");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn headers_and_the_bearer_token_reach_remote_servers() {
    let (port, heads) = recorder().await;
    let token = std::env::var("CARGO_PKG_NAME").expect("cargo sets CARGO_PKG_NAME for tests");
    let server = |path: &str| {
        json!({"url": format!("http://127.0.0.1:{port}{path}"), "headers": {"X-Team": "blue"},
            "bearerTokenEnvVar": "CARGO_PKG_NAME"})
    };
    let config = json!({"mcpServers": {
        "streamable": server("/mcp"),
        "legacy": server("/sse"),
        "keyless": {"url": format!("http://127.0.0.1:{port}/mcp"), "bearerTokenEnvVar": "TERN_TEST_UNSET_TOKEN"},
    }});
    let s = session(&config.to_string()).await;
    for name in ["streamable", "legacy"] {
        let ServerState::Failed { reason } = s.status(name).state else {
            panic!("{:#?}", s.status(name))
        };
        assert!(reason.contains("401"), "{name}: {reason}");
    }
    assert_eq!(
        s.status("keyless").state,
        ServerState::Failed {
            reason: "environment variable TERN_TEST_UNSET_TOKEN (bearerTokenEnvVar) is not set".into()
        }
    );
    let heads = heads.lock().unwrap().clone();
    for start in ["post /mcp ", "get /sse "] {
        let head = heads
            .iter()
            .find(|h| h.starts_with(start))
            .unwrap_or_else(|| panic!("no {start}: {heads:?}"));
        assert!(head.contains("x-team: blue"), "{head}");
        assert!(head.contains(&format!("authorization: bearer {token}")), "{head}");
    }
    assert_eq!(
        heads.len(),
        2,
        "one request each, no request for the keyless server: {heads:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn enabled_and_disabled_tools_filter_tools_resources_and_prompts() {
    let Some(js) = everything() else { return };
    let enabled = json!({"enabledTools": ["echo", "architecture.md", "mcp_everything_prompt_simple-prompt", "get-*"],
        "disabledTools": ["get-env", "demo://resource/static/document/*"]});
    let s = session(&stdio_everything(&js, enabled)).await;
    let names = s.registry.names();
    assert!(names.contains(&"mcp_everything_echo".to_string()), "{names:?}");
    assert!(names.contains(&"mcp_everything_get-sum".to_string()), "{names:?}");
    assert!(
        !names.contains(&"mcp_everything_get-env".to_string()),
        "disabled wins: {names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n == "mcp_list_resources" || n == "mcp_read_resource"),
        "resources matched by URI are disabled, so no resource tools: {names:?}"
    );
    assert!(
        !names.iter().any(|n| n.contains("args-prompt") || n.contains("toggle")),
        "{names:?}"
    );
    let ServerState::Ready { resources, prompts, .. } = s.status("everything").state else {
        panic!()
    };
    assert_eq!((resources, prompts), (0, 1));
    let status = s.status("everything");
    assert_eq!(status.prompts.len(), 1);
    assert_eq!(status.prompts[0].name, "simple-prompt");
    let out = s.call("mcp_everything_get-env", json!({})).await;
    assert!(out.is_error && out.text.contains("not found"), "{}", out.text);
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_report_connects_prints_and_shuts_down() {
    let Some(js) = everything() else { return };
    let report = list_report(McpConfig {
        servers: servers(&stdio_everything(&js, json!({}))),
        ..McpConfig::default()
    })
    .await;
    assert!(report.starts_with("everything  (stdio: node "), "{report}");
    assert!(report.contains("status: ready: "), "{report}");
    assert!(report.contains("    mcp_everything_get-sum (read-only): "), "{report}");
    assert!(
        list_report(McpConfig::default())
            .await
            .starts_with("No MCP servers are configured.")
    );
}
