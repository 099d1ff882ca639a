//! A scripted Node MCP server (fixture_server.js) for what server-everything cannot do: names that collide or run
//! long, schemas with `$ref`, `anyOf` and no `type`, a tool list that changes, a tool that never answers, and a flood
//! of notifications.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tern::mcp::ServerState;
use tern::protocol::ToolCall;
use tern::tools::ToolContext;

use crate::mcp::harness::*;

const FIXTURE: &str = include_str!("fixture_server.js");

fn fixture(dir: &Path, flood: bool) -> String {
    let script = dir.join("fixture.js");
    std::fs::write(&script, FIXTURE).unwrap();
    let env = json!({"FLOOD": if flood { "1" } else { "0" }});
    json!({"mcpServers": {"fx": {"command": "node", "args": [script], "env": env, "toolTimeout": 1}}}).to_string()
}

fn node_available() -> bool {
    let found = std::process::Command::new("node").arg("--version").output().is_ok();
    if !found && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("node is needed by the MCP tests");
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn colliding_and_long_names_odd_schemas_and_list_changes() {
    if !node_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = session(&fixture(dir.path(), false)).await;
    let names = s.registry.names();
    // `a.b`, `a_b` and `a b` all sanitise to `a_b`: the one that needed no change keeps it; the others are not
    // offered (never renamed past a rule written for the name), and the server says so, naming both tools.
    assert_eq!(s.ok("mcp_fx_a_b", json!({})).await, "called a_b with {}");
    assert!(!names.iter().any(|n| n.starts_with("mcp_fx_a_b_")), "{names:?}");
    let problems = s.status("fx").problems;
    for other in ["a b", "a.b"] {
        let expected =
            format!("tool `{other}` is not offered: its name `mcp_fx_a_b` collides with tool `a_b` of server `fx`");
        assert!(problems.iter().any(|p| p.starts_with(&expected)), "{problems:?}");
    }
    // Long names are cut to 64 with a hash of the full name, so the two stay apart.
    let long: Vec<&String> = names.iter().filter(|n| n.starts_with("mcp_fx_xxxx")).collect();
    assert_eq!(long.len(), 2, "{names:?}");
    assert!(long.iter().all(|n| n.len() == 64) && long[0] != long[1], "{long:?}");
    let mut answers = vec![s.ok(long[0], json!({})).await, s.ok(long[1], json!({})).await];
    answers.sort();
    assert_eq!(
        answers,
        [
            format!("called {}_one with {{}}", "x".repeat(70)),
            format!("called {}_two with {{}}", "x".repeat(70))
        ]
    );
    // Schemas: `$ref` + `anyOf` are validated and cast, a missing type is taken as an object, a non-object is left out.
    assert_eq!(
        s.ok("mcp_fx_refs", json!({"p": "7"})).await,
        "called refs with {\"p\":7}"
    );
    assert_eq!(
        s.ok("mcp_fx_refs", json!({"p": null})).await,
        "called refs with {\"p\":null}"
    );
    assert!(s.call("mcp_fx_refs", json!({"p": "seven"})).await.is_error);
    assert_eq!(
        s.ok("mcp_fx_untyped", json!({"n": 4})).await,
        "called untyped with {\"n\":4}"
    );
    assert!(!names.contains(&"mcp_fx_not_an_object".to_string()));
    // isError results are errors, with the server's text.
    let out = s.call("mcp_fx_fail", json!({})).await;
    assert!(out.is_error);
    assert_eq!(out.text, "it broke");
    // A call past its timeout, and one the user interrupts, are both cancelled on the server too.
    let started = Instant::now();
    let out = s.call("mcp_fx_slow", json!({})).await;
    assert!(out.is_error && out.text.contains("within 1 s"), "{}", out.text);
    assert!(started.elapsed() < Duration::from_secs(3));
    let ctx = ToolContext {
        cancel: tokio_util::sync::CancellationToken::new(),
        ..s.ctx.clone()
    };
    let interrupt = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        interrupt.cancel();
    });
    let call = ToolCall {
        id: "c2".into(),
        name: "mcp_fx_slow".into(),
        arguments: json!({}),
    };
    let out = s.registry.run(&call, &ctx).await;
    assert!(out.is_error && out.text.contains("interrupted"), "{}", out.text);
    let stats: Value = serde_json::from_str(&s.ok("mcp_fx_stats", json!({})).await).unwrap();
    assert_eq!(stats["cancelled"], json!(["timed out", "cancelled by the user"]));

    // A tool that appears later is offered once the server says its list changed.
    assert!(s.registry.get("mcp_fx_extra").is_none());
    s.ok("mcp_fx_add_tool", json!({})).await;
    s.wait_for("the new tool", |st| {
        st[0].tools.iter().any(|t| t.name == "mcp_fx_extra")
    })
    .await;
    assert_eq!(s.ok("mcp_fx_extra", json!({})).await, "called extra with {}");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_flooding_notifications_does_not_stall_calls() {
    if !node_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = session(&fixture(dir.path(), true)).await;
    assert!(
        matches!(s.status("fx").state, ServerState::Ready { .. }),
        "{:#?}",
        s.status("fx")
    );
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    // Calls spread over a second and a half of flooding.
    for _ in 0..15 {
        let t = Instant::now();
        s.ok("mcp_fx_a_b", json!({})).await;
        slowest = slowest.max(t.elapsed());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        slowest < Duration::from_secs(2),
        "a call took {slowest:?} under the flood"
    );
    // Thousands of list_changed notifications arrived; the tool list was fetched only a few times.
    let stats: Value = serde_json::from_str(&s.ok("mcp_fx_stats", json!({})).await).unwrap();
    let lists = stats["lists"].as_u64().unwrap();
    assert!(stats["noise"].as_u64().unwrap() > 3000, "the server flooded: {stats}");
    let budget = 2 + started.elapsed().as_millis() as u64 / 200;
    assert!(lists <= budget, "{lists} listings in {:?}", started.elapsed());
    s.manager.shutdown().await;
}
