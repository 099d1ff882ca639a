//! MCP servers that fail: one that crashes in the middle of a call (the call gets an error result, the turn goes on,
//! tern exits 0), and one still working when tern gets SIGTERM (its whole process group ends before tern exits).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::faults::common::*;
use crate::support::mock_llm::{MockLlm, Reply};

/// Writes an `mcpServers` file that starts `mcp_server.js` in `mode` and returns its path.
fn server_config(sb: &Sandbox, mode: &str) -> PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/faults/mcp_server.js");
    let config = json!({"mcpServers": {"faulty": {
        "command": "node",
        "args": [script, mode, sb.home.path()],
    }}});
    let path = sb.home.path().join("mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_crashes_mid_call_gives_an_error_result_and_the_turn_goes_on() {
    let mock = MockLlm::start(vec![
        Reply::tool("mcp_faulty_work", json!({})),
        Reply::text("The server failed; carrying on."),
    ])
    .await;
    let sb = sandbox();
    let config = server_config(&sb, "crash");
    let child = sb
        .command(
            Some(&mock),
            &[
                "run",
                "--mode",
                "full-auto",
                "--mcp-config",
                config.to_str().unwrap(),
                "use the server",
            ],
        )
        .spawn()
        .unwrap();
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("tern finishes")
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "The server failed; carrying on.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the turn went on after the failed call");
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("disconnected") && results[0].contains("exited with status 3"),
        "the error says what happened: {}",
        results[0]
    );
    assert!(
        text(&out.stderr).contains("✗"),
        "the call is shown as failed: {}",
        text(&out.stderr)
    );
    let server = read_pid(&sb.home.path().join("server.pid")).await;
    assert!(!alive(server));
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_a_server_call_ends_the_servers_process_group() {
    let mock = MockLlm::start(vec![Reply::tool("mcp_faulty_work", json!({})), Reply::text("unused")]).await;
    let sb = sandbox();
    let config = server_config(&sb, "hang");
    let child = sb
        .command(
            Some(&mock),
            &[
                "run",
                "--mode",
                "full-auto",
                "--mcp-config",
                config.to_str().unwrap(),
                "use the server",
            ],
        )
        .spawn()
        .unwrap();
    let tern = child.id().unwrap() as i32;
    let server = read_pid(&sb.home.path().join("server.pid")).await;
    let worker = read_pid(&sb.home.path().join("child.pid")).await;
    assert!(alive(server) && alive(worker));
    signal(tern, libc::SIGTERM);
    let out = tokio::time::timeout(Duration::from_secs(15), child.wait_with_output())
        .await
        .expect("tern exits promptly after SIGTERM")
        .unwrap();
    assert_eq!(out.status.code(), Some(143), "stderr: {}", text(&out.stderr));
    assert_eq!(
        survivors(&[server, worker], Duration::from_millis(200)).await,
        Vec::<i32>::new(),
        "server processes left"
    );
    let (_, log) = sb.session();
    session_lines(&log);
}
