//! What tern declares and how it reads results, against a scripted Node server (caps_server.js) and server-everything:
//! a schema providers reject reaches the model sanitised, text plus structuredContent reaches it once, blobs are
//! decoded or described, a task-only tool is not offered, the workspace is the root, and a request for input is
//! answered (in process) or declined (in `tern run`, with a note the model reads).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tern::mcp::{ClientSetup, ServerState};
use tern::protocol::ElicitationAnswer;

use crate::mcp::harness::*;
use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{command, model_flags, output, tool_results};

const CAPS: &str = include_str!("caps_server.js");

pub fn node_available() -> bool {
    let found = std::process::Command::new("node").arg("--version").output().is_ok();
    if !found && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("node is needed by the MCP tests");
    }
    found
}

/// The fixture's `mcpServers` config, its script written into `dir`.
fn caps_config(dir: &Path) -> String {
    let script = dir.join("caps_server.js");
    std::fs::write(&script, CAPS).unwrap();
    json!({"mcpServers": {"fx": {"command": "node", "args": [script]}}}).to_string()
}

/// A session like an agent's: roots and elicitation declared, requests for input arriving in the returned inbox.
async fn session_with_caps(json: &str, workspace: &Path) -> (Session, tern::mcp::ElicitationInbox) {
    let (setup, inbox) = ClientSetup::session(workspace);
    (session_with(json, setup).await, inbox)
}

#[tokio::test(flavor = "multi_thread")]
async fn roots_elicitation_and_task_only_tools_with_the_fixture() {
    if !node_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("my work");
    std::fs::create_dir(&workspace).unwrap();
    let (s, mut inbox) = session_with_caps(&caps_config(dir.path()), &workspace).await;

    let caps: Value = serde_json::from_str(&s.ok("mcp_fx_caps", json!({})).await).unwrap();
    assert_eq!(caps["roots"], json!({}));
    assert_eq!(caps["elicitation"], json!({"form": {}}));
    let roots: Value = serde_json::from_str(&s.ok("mcp_fx_roots", json!({})).await).unwrap();
    let uri = format!("file://{}", workspace.display()).replace(' ', "%20");
    assert_eq!(roots["roots"], json!([{"uri": uri, "name": "my work"}]));

    // The task-only tool is not offered, and the status says why.
    let status = s.status("fx");
    assert!(!s.registry.names().contains(&"mcp_fx_research".to_string()));
    assert_eq!(
        status.problems,
        ["tool `research` is not offered: it can only run as a task, which tern does not support"]
    );
    assert!(
        matches!(status.state, ServerState::Ready { tools: 7, .. }),
        "{status:?}"
    );
    let report = tern::mcp::list_report(tern::mcp::McpConfig {
        servers: servers(&caps_config(dir.path())),
        ..Default::default()
    })
    .await;
    assert!(
        report.contains(
            "  problem: tool `research` is not offered: it can only run as a task, which tern does not support"
        ),
        "{report}"
    );

    // A request for input reaches the inbox and the answer reaches the server.
    let s = std::sync::Arc::new(s);
    let asking = {
        let s = std::sync::Arc::clone(&s);
        tokio::spawn(async move { s.ok("mcp_fx_ask", json!({})).await })
    };
    let request = tokio::time::timeout(Duration::from_secs(10), inbox.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (request.server.as_str(), request.message.as_str()),
        ("fx", "Who are you?")
    );
    assert_eq!(request.schema["required"], json!(["name"]));
    let mut content = serde_json::Map::new();
    content.insert("name".into(), json!("Ada"));
    request.reply.send(ElicitationAnswer::Accept { content }).unwrap();
    let answer = asking.await.unwrap();
    assert_eq!(answer, "answer: {\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}");

    // Declined: the server hears "decline", the model reads why.
    let asking = {
        let s = std::sync::Arc::clone(&s);
        tokio::spawn(async move { s.ok("mcp_fx_ask", json!({})).await })
    };
    let request = inbox.recv().await.unwrap();
    request
        .reply
        .send(ElicitationAnswer::Decline {
            reason: Some("nobody is there".into()),
        })
        .unwrap();
    assert_eq!(
        asking.await.unwrap(),
        "answer: {\"action\":\"decline\"}\n[tern: MCP server `fx` asked the user for input (\"Who are you?\"); tern \
         declined: nobody is there]"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn server_everything_lists_the_workspace_root_and_offers_elicitation() {
    let Some(js) = everything() else { return };
    let workspace = tempfile::tempdir().unwrap();
    let (s, mut inbox) = session_with_caps(&stdio_everything(&js, json!({})), workspace.path()).await;
    // Tools that depend on the client's capabilities are registered after the handshake and join on the list change.
    s.wait_for("the capability tools", |st| {
        st[0].tools.iter().any(|t| t.original == "trigger-elicitation-request")
            && st[0].tools.iter().any(|t| t.original == "get-roots-list")
    })
    .await;
    let roots = s.ok("mcp_everything_get-roots-list", json!({})).await;
    let uri = format!("file://{}", workspace.path().display());
    assert!(
        roots.contains("Current MCP Roots (1 total)") && roots.contains(&uri),
        "{roots}"
    );

    // simulate-research-query requires tasks: listed as a problem, not offered.
    let status = s.status("everything");
    assert!(!status.tools.iter().any(|t| t.original == "simulate-research-query"));
    assert!(
        status
            .problems
            .iter()
            .any(|p| p.starts_with("tool `simulate-research-query` is not offered: it can only run as a task")),
        "{:?}",
        status.problems
    );

    let s = std::sync::Arc::new(s);
    let asking = {
        let s = std::sync::Arc::clone(&s);
        tokio::spawn(async move { s.ok("mcp_everything_trigger-elicitation-request", json!({})).await })
    };
    let request = tokio::time::timeout(Duration::from_secs(10), inbox.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(request.schema["properties"]["name"].is_object(), "{}", request.schema);
    let mut content = serde_json::Map::new();
    content.insert("name".into(), json!("Ada Lovelace"));
    content.insert("check".into(), json!(true));
    request.reply.send(ElicitationAnswer::Accept { content }).unwrap();
    let answer = asking.await.unwrap();
    assert!(
        answer.contains("- Name: Ada Lovelace") && answer.contains("- Agreed to terms: true"),
        "{answer}"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tern_run_sends_sane_schemas_single_results_and_declines_requests_for_input() {
    if !node_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![
            ("mcp_fx_weather".into(), json!({})),
            ("mcp_fx_read".into(), json!({})),
            ("mcp_fx_blobs".into(), json!({})),
            ("mcp_fx_ask".into(), json!({})),
        ]),
        Reply::text("All read."),
    ])
    .await;
    let scratch = crate::support::tern::Scratch::new();
    let config = scratch.home.path().join("mcp.json");
    std::fs::write(&config, caps_config(scratch.home.path())).unwrap();
    let mut cmd = command(scratch.work.path(), scratch.home.path());
    cmd.env("OPENAI_API_KEY", "k")
        .args(model_flags(&mock))
        .args(["--mode", "full-auto", "--mcp-config"])
        .arg(&config)
        .args(["run", "read everything"]);
    let out = output(cmd, Duration::from_secs(60)).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("tern: MCP server fx asked for input (Who are you?); declined: nobody can answer in tern run"),
        "{stderr}"
    );

    let requests = mock.requests();
    let tools = requests[0]["tools"].as_array().unwrap();
    let offered = |name: &str| tools.iter().find(|t| t["function"]["name"] == name).cloned();
    assert_eq!(
        offered("mcp_fx_bad_schema").unwrap()["function"]["parameters"],
        json!({"type": "object", "properties": {
            "path": {"type": "string"}, "tags": {"type": "array", "items": {}}, "url": {"type": "string"}}})
    );
    assert!(offered("mcp_fx_research").is_none());

    let results = tool_results(&requests[1]);
    let file = "line of the file\n".repeat(200);
    assert_eq!(results[0], "{\"temperature\":21,\"conditions\":\"Sunny\"}");
    assert_eq!(results[1], file, "the file arrives once");
    assert_eq!(
        results[2],
        "[resource fx://notes.txt]\nhello from a blob\n[binary resource fx://notes.gz: application/gzip, 8 bytes; not \
         shown]"
    );
    assert_eq!(
        results[3],
        "answer: {\"action\":\"decline\"}\n[tern: MCP server `fx` asked the user for input (\"Who are you?\"); tern \
         declined: this is a non-interactive run (tern run) and nobody can answer]"
    );
}

/// A Notification hook hears of a server's request for input (`elicitation_dialog`), as of an approval that waits;
/// the request goes on without waiting for it (`tern run` declines it).
#[tokio::test(flavor = "multi_thread")]
async fn a_request_for_input_is_told_to_the_notification_hooks() {
    if !node_available() {
        return;
    }
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![("mcp_fx_ask".into(), json!({}))]),
        Reply::text("Asked."),
    ])
    .await;
    let scratch = crate::support::tern::Scratch::new();
    let config = scratch.home.path().join("mcp.json");
    std::fs::write(&config, caps_config(scratch.home.path())).unwrap();
    let tern_config = scratch.home.path().join("config/tern");
    std::fs::create_dir_all(&tern_config).unwrap();
    std::fs::write(
        tern_config.join("config.toml"),
        "[[hooks.Notification]]\nmatcher = \"elicitation_dialog\"\n\
         command = \"cat >> notified.jsonl; echo >> notified.jsonl\"\n",
    )
    .unwrap();
    let mut cmd = command(scratch.work.path(), scratch.home.path());
    cmd.env("OPENAI_API_KEY", "k")
        .args(model_flags(&mock))
        .args(["--mode", "full-auto", "--mcp-config"])
        .arg(&config)
        .args(["run", "ask me"]);
    let out = output(cmd, Duration::from_secs(60)).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let path = scratch.work.path().join("notified.jsonl");
    let mut text = String::new();
    for _ in 0..100 {
        text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.ends_with('\n') {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let told: Value = serde_json::from_str(text.lines().next().expect("the hook ran")).unwrap();
    assert_eq!(told["hook_event_name"], "Notification");
    assert_eq!(told["notification_type"], "elicitation_dialog");
    assert_eq!(told["message"], "MCP server fx asks for your input: Who are you?");
}
