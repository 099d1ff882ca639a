//! What servers say reaches the model and the user, and a slow server does not hold the session up: instructions in
//! the system prompt (server-everything over stdio and streamable HTTP, and a scripted server that becomes ready
//! when the test says so), failures and skips on `tern run`'s stderr and in stream-json, `tern mcp list` without a
//! model provider, and the per-server `startup_timeout_sec` and `tool_timeout_sec`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tern::agent::approval::ApprovalGate;
use tern::agent::prompt::SystemPrompt;
use tern::agent::{AgentConfig, AgentHandle, spawn};
use tern::mcp::{McpManager, ServerState, ServerStatus};
use tern::protocol::{ApprovalMode, Event, Op};
use tern::provider::{ProviderConfig, ProviderKind};
use tern::session::ToolResultStore;
use tern::tools::{PathPolicy, ToolRegistry};

use crate::mcp::harness::*;
use crate::support::mock_llm::{MockLlm, Reply};
use crate::support::tern::Scratch;

const SERVER: &str = include_str!("startup_server.js");

/// The scripted server written into `dir`, as a config entry: ready once `gate` exists (at once without one).
fn scripted(dir: &Path, gate: Option<&Path>, instructions: &str, extra: Value) -> Value {
    let script = dir.join("startup_server.js");
    std::fs::write(&script, SERVER).unwrap();
    let mut env = json!({"INSTRUCTIONS": instructions});
    if let Some(gate) = gate {
        env["GATE"] = json!(gate);
    }
    let mut entry = json!({"command": "node", "args": [script], "env": env});
    entry
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    entry
}

struct Agent {
    handle: AgentHandle,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

/// A runner on the scripted model whose prompt ends with the servers' instructions, as `agent::config_for` builds it.
fn agent(mock: &MockLlm, manager: &Arc<McpManager>) -> Agent {
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let mut provider = ProviderConfig::new(ProviderKind::OpenAi, "test-model");
    provider.base_url = mock.openai_base_url();
    provider.api_key = Some("test-key".into());
    let results = ToolResultStore::new(store.path().join("results"));
    results.ensure_dir().unwrap();
    let tools = ToolRegistry::with_builtins();
    let policy = PathPolicy::new(dir.path()).unwrap().allow_read_root(results.dir());
    let handle = spawn(
        AgentConfig::new(
            tern::provider::build(&provider).unwrap(),
            tools,
            policy,
            ApprovalGate::new(ApprovalMode::AutoEdit, vec![], vec![]),
            SystemPrompt::fixed("You are a test.").with_mcp(manager.clone()),
            results,
        )
        .with_max_iterations(5)
        .with_mcp(Some(manager.clone())),
    );
    Agent {
        handle,
        _dirs: (dir, store),
    }
}

impl Agent {
    async fn turn(&mut self, text: &str) {
        self.handle.ops.send(Op::UserTurn { text: text.into() }).unwrap();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(30), self.handle.events.recv())
                .await
                .unwrap()
                .unwrap();
            if let Event::TurnFinished { reason } = event {
                assert_eq!(reason, tern::protocol::TurnEnd::Completed);
                return;
            }
        }
    }
}

fn system(request: &Value) -> String {
    request["messages"][0]["content"].as_str().unwrap().to_string()
}

fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

async fn wait_until(manager: &McpManager, what: &str, cond: impl Fn(&[ServerStatus]) -> bool) {
    let mut rx = manager.subscribe();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond(&rx.borrow_and_update()) {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {:#?}",
            manager.statuses()
        );
        let _ = tokio::time::timeout(Duration::from_millis(200), rx.changed()).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn instructions_from_stdio_and_http_servers_are_in_the_first_request() {
    let Some(js) = everything() else { return };
    let http = HttpServer::start(&js, "streamableHttp").await;
    let config = json!({"mcpServers": {
        "local": {"command": "node", "args": [js, "stdio"]},
        "remote": {"type": "http", "url": format!("http://127.0.0.1:{}/mcp", http.port)},
    }});
    let manager = McpManager::start(servers(&config.to_string()), STARTUP);
    let mock = MockLlm::start(vec![Reply::text("Done.")]).await;
    let mut agent = agent(&mock, &manager);
    agent.turn("hello").await;
    let request = &mock.requests()[0];
    let system = system(request);
    assert!(
        system.starts_with("You are a test.\n# MCP server instructions\n"),
        "{system}"
    );
    assert_eq!(system.matches("# MCP server instructions").count(), 1);
    for name in ["local", "remote"] {
        let heading = format!("## From MCP server {name:?} (the server's text, not the user's)\n");
        let at = system.find(&heading).unwrap_or_else(|| panic!("{name}: {system}"));
        let fenced = &system[at + heading.len()..];
        assert!(
            fenced.starts_with(&format!(
                "<mcp-server-instructions server={name:?}>\n# Everything Server – Server Instructions"
            )),
            "{fenced}"
        );
    }
    assert!(offered(request).contains(&"mcp_remote_echo".to_string()));
    agent.handle.ops.send(Op::Shutdown).unwrap();
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_server_does_not_hold_up_the_first_request_and_joins_when_ready() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("open");
    let entry = scripted(
        dir.path(),
        Some(&gate),
        "Call ping before anything else.",
        json!({"startup_timeout_sec": 120}),
    );
    let manager = McpManager::start(
        servers(&json!({"mcpServers": {"slow": entry}}).to_string()),
        tern::host::MCP_STARTUP,
    );
    let mock = MockLlm::start(vec![Reply::text("first"), Reply::text("second")]).await;
    let mut agent = agent(&mock, &manager);
    agent.turn("one").await;
    // The server cannot be ready before the gate opens: the first request went out without it.
    assert_eq!(manager.statuses()[0].state, ServerState::Connecting);
    let first = &mock.requests()[0];
    assert!(
        !offered(first).iter().any(|t| t.starts_with("mcp_slow")),
        "{:?}",
        offered(first)
    );
    assert_eq!(system(first), "You are a test.");

    std::fs::write(&gate, "").unwrap();
    wait_until(&manager, "the slow server", |s| {
        matches!(s[0].state, ServerState::Ready { .. })
    })
    .await;
    agent.turn("two").await;
    let second = &mock.requests()[1];
    assert!(
        offered(second).contains(&"mcp_slow_ping".to_string()),
        "{:?}",
        offered(second)
    );
    let system = system(second);
    assert!(
        system.contains(
            "## From MCP server \"slow\" (the server's text, not the user's)\n<mcp-server-instructions \
             server=\"slow\">\nCall ping before anything else.\n</mcp-server-instructions>\n"
        ),
        "{system}"
    );
    agent.handle.ops.send(Op::Shutdown).unwrap();
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn startup_and_tool_timeouts_are_per_server() {
    let Some(js) = everything() else { return };
    let dir = tempfile::tempdir().unwrap();
    let never = dir.path().join("never");
    let config = json!({"mcpServers": {
        "stuck": scripted(dir.path(), Some(&never), "", json!({"startup_timeout_sec": 1})),
        "everything": {"command": "node", "args": [js, "stdio"], "tool_timeout_sec": 1},
    }});
    let s = session(&config.to_string()).await;
    let ServerState::Failed { reason } = s.status("stuck").state else {
        panic!("{:#?}", s.status("stuck"))
    };
    assert_eq!(
        reason,
        "did not start within 1 s (the server's startup_timeout_sec); it is tried again later"
    );
    let out = s
        .call(
            "mcp_everything_trigger-long-running-operation",
            json!({"duration": 10, "steps": 10}),
        )
        .await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("did not finish `trigger-long-running-operation` within 1 s"),
        "{}",
        out.text
    );
    s.manager.shutdown().await;
}

/// A workspace with an untrusted project's `.mcp.json`, and a `--mcp-config` file with a missing command, a server
/// that exits at once, a broken entry and server-everything.
fn broken_setup(scratch: &Scratch, js: &Path) -> std::path::PathBuf {
    let project = json!({"mcpServers": {"project": scripted(scratch.work.path(), None, "", json!({}))}});
    std::fs::write(scratch.work.path().join(".mcp.json"), project.to_string()).unwrap();
    let extra = scratch.home.path().join("servers.json");
    let config = json!({"mcpServers": {
        "ghost": {"command": "tern-no-such-mcp-server-xyz"},
        "crashy": {"command": "node", "args": ["-e", "process.exit(3)"]},
        "broken": {"type": "carrier-pigeon"},
        "everything": {"command": "node", "args": [js, "stdio"]},
    }});
    std::fs::write(&extra, config.to_string()).unwrap();
    extra
}

#[tokio::test(flavor = "multi_thread")]
async fn tern_run_tells_each_failure_and_skip_on_stderr_while_the_others_work() {
    let Some(js) = everything() else { return };
    let scratch = Scratch::new();
    let extra = broken_setup(&scratch, &js);
    // The scripted model answers the first request late, so server-everything is surely up when its tool is called.
    let mock = MockLlm::start(vec![
        Reply::delayed(
            Duration::from_secs(4),
            Reply::tool("mcp_everything_echo", json!({"message": "still works"})),
        ),
        Reply::text("Done."),
    ])
    .await;
    let extra = extra.display().to_string();
    let args = ["run", "--mcp-config", &extra, "--output-format", "events", "go"];
    let out = scratch.run(Some(&mock), &args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    let one = |prefix: &str| {
        let found: Vec<&&str> = lines.iter().filter(|l| l.starts_with(prefix)).collect();
        assert_eq!(found.len(), 1, "{prefix}: {stderr}");
        found[0].to_string()
    };
    one("tern: MCP server \"ghost\" failed to start: command not found: tern-no-such-mcp-server-xyz");
    one("tern: MCP server \"crashy\" failed to start: the server closed the connection during start-up");
    assert!(
        one("tern: MCP server \"project\" not started: ").contains("defined by the project's .mcp.json"),
        "{stderr}"
    );
    let broken: Vec<&&str> = lines.iter().filter(|l| l.contains("\"broken\"")).collect();
    assert_eq!(broken.len(), 1, "{stderr}");
    assert!(
        broken[0].starts_with("tern: warning: ")
            && broken[0].contains("MCP server \"broken\": field `type`: unknown transport")
            && broken[0].ends_with("this MCP server is left out"),
        "{stderr}"
    );
    // The working server is named only for a tool it cannot offer (a problem stderr now tells), never as failing.
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains("\"everything\"") && !l.contains("is not offered")),
        "{stderr}"
    );

    // stream-json: session_started lists every server; later lines bring their changes.
    let events: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events[0]["event"], "session_started");
    let mut last = std::collections::BTreeMap::new();
    for server in events[0]["mcp_servers"].as_array().unwrap() {
        last.insert(server["name"].as_str().unwrap().to_string(), server.clone());
    }
    assert_eq!(
        last.keys().cloned().collect::<Vec<_>>(),
        ["crashy", "everything", "ghost", "project"]
    );
    assert_eq!(last["project"]["state"], "skipped");
    // The tools of the servers ready by then are among the session's.
    let tools = events[0]["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("read_file")));
    for server in last.values() {
        for tool in server["tools"].as_array().unwrap() {
            assert!(tools.contains(tool), "{tool} missing from {tools:?}");
        }
    }
    for update in events.iter().filter(|e| e["event"] == "mcp_server") {
        last.insert(update["name"].as_str().unwrap().to_string(), update.clone());
    }
    assert_eq!(last["ghost"]["state"], "failed");
    assert_eq!(last["crashy"]["state"], "failed");
    assert_eq!(last["everything"]["state"], "ready");
    assert!(
        last["everything"]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp_everything_echo"))
    );
    let result = crate::support::tern::tool_results(&mock.requests()[1]);
    assert_eq!(result, ["Echo: still works"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_list_needs_no_provider_and_shows_final_states() {
    let Some(js) = everything() else { return };
    let scratch = Scratch::new();
    let extra = broken_setup(&scratch, &js);
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&extra).unwrap()).unwrap();
    let never = scratch.home.path().join("never");
    config["mcpServers"]["stuck"] = scripted(scratch.home.path(), Some(&never), "", json!({"startup_timeout_sec": 1}));
    std::fs::write(&extra, config.to_string()).unwrap();
    // No provider flag, no key, no Ollama: listing servers needs none of them.
    let out = scratch
        .run(None, &["mcp", "list", "--mcp-config", &extra.display().to_string()])
        .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let block = |name: &str| {
        let at = stdout
            .find(&format!("\n{name}  ("))
            .or_else(|| stdout.starts_with(&format!("{name}  (")).then_some(0))
            .unwrap_or_else(|| panic!("{name}: {stdout}"));
        stdout[at..].trim_start().split("\n\n").next().unwrap().to_string()
    };
    assert!(block("everything").contains("  status: ready: "), "{stdout}");
    assert!(
        block("ghost").contains("  status: failed: command not found: tern-no-such-mcp-server-xyz"),
        "{stdout}"
    );
    assert!(
        block("crashy").contains("  status: failed: the server closed"),
        "{stdout}"
    );
    assert!(
        block("stuck").contains("  status: failed: did not start within 1 s"),
        "{stdout}"
    );
    assert!(
        block("project").contains("  status: not started: defined by the project's .mcp.json"),
        "{stdout}"
    );
    assert!(
        block("broken").starts_with("broken  (not loaded: invalid configuration)\n  error:  "),
        "{stdout}"
    );
    assert!(!stdout.contains("still connecting"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rebuilt_prompt_keeps_context_files_and_the_servers_instructions() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("open");
    let long = "Prefer ping. ".repeat(400);
    let entry = scripted(dir.path(), Some(&gate), &long, json!({}));
    let manager = McpManager::start(
        servers(&json!({"mcpServers": {"fx": entry}}).to_string()),
        Duration::ZERO,
    );
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("AGENTS.md"), "Run the tests.\n").unwrap();
    let sources = tern::agent::prompt::ContextSources {
        workspace: work.path().to_path_buf(),
        user_dir: None,
        claude_dir: None,
        appended: None,
    };
    let prompt = SystemPrompt::build(&sources).with_mcp(manager.clone());
    assert!(!prompt.mcp_changed() && !prompt.text.contains("MCP server instructions"));

    std::fs::write(&gate, "").unwrap();
    wait_until(&manager, "the server", |s| {
        matches!(s[0].state, ServerState::Ready { .. })
    })
    .await;
    assert!(prompt.mcp_changed());
    // Before each turn the prompt is rebuilt from its files; the servers' section comes back with it.
    let rebuilt = prompt.rebuilt();
    assert!(!rebuilt.mcp_changed());
    let agents = rebuilt.text.find("Run the tests.").unwrap();
    let mcp = rebuilt.text.find("# MCP server instructions").unwrap();
    assert!(agents < mcp);
    assert!(
        rebuilt
            .text
            .contains("[… cut: the server sent more; the first 4000 characters are kept]")
    );
    assert_eq!(rebuilt.parts.iter().map(|p| p.chars).sum::<usize>(), rebuilt.text.len());
    assert_eq!(rebuilt.parts.last().unwrap().label, "MCP instructions: fx, cut");
    // Renewing only the servers' section gives the same prompt.
    assert_eq!(prompt.with_current_mcp().text, rebuilt.text);
    manager.shutdown().await;
    // A server that is gone takes its instructions with it.
    assert!(rebuilt.mcp_changed());
    assert!(!rebuilt.with_current_mcp().text.contains("MCP server instructions"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tui_warns_of_servers_that_fail_before_and_after_it_opens() {
    if !crate::support::tmux::tmux_available() {
        return;
    }
    let scratch = Scratch::new();
    let never = scratch.home.path().join("never");
    let config = json!({"mcpServers": {
        "ghost": {"command": "tern-no-such-mcp-server-xyz"},
        // Fails only after a second, when the screen is surely up.
        "stuck": scripted(scratch.home.path(), Some(&never), "", json!({"startup_timeout_sec": 1})),
    }});
    let extra = scratch.home.path().join("servers.json");
    std::fs::write(&extra, config.to_string()).unwrap();
    let mock = MockLlm::start(vec![]).await;
    let command = format!(
        "cd {work} && HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/config OPENAI_API_KEY=k {bin} \
         --provider openai --base-url {url} --model scripted --mcp-config {extra}; sleep 30",
        work = scratch.work.path().display(),
        home = scratch.home.path().display(),
        bin = crate::support::tern::BIN,
        url = mock.openai_base_url(),
        extra = extra.display(),
    );
    let tmux = crate::support::tmux::Tmux::start("mcp-notices", (140, 30), &command);
    tmux.wait_for("Ask tern").await;
    tmux.wait_for("MCP server \"ghost\" failed to start: command not found")
        .await;
    let screen = tmux
        .wait_for("MCP server \"stuck\" failed to start: did not start within 1 s")
        .await;
    assert_eq!(screen.matches("MCP server \"ghost\"").count(), 1, "{screen}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
}

/// A stdio server is started in a process group of its own that dies with tern: killed outright (SIGKILL, so tern
/// cannot end the group itself), tern leaves no server behind.
#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_dies_with_a_killed_tern() {
    let scratch = Scratch::new();
    let pidfile = scratch.home.path().join("server.pid");
    let config = scratch.home.path().join("servers.json");
    let script = format!("echo $$ > '{}'; exec sleep 60", pidfile.display());
    let servers = json!({"mcpServers": {"sleeper": {"command": "sh", "args": ["-c", script]}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    // The model answers late: tern is surely still running when it is killed.
    let mock = MockLlm::start(vec![Reply::delayed(Duration::from_secs(30), Reply::text("late"))]).await;
    let config = config.display().to_string();
    let mut tern = scratch
        .command(Some(&mock), &["run", "--mcp-config", &config, "go"])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    let server: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the server did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(alive(server));
    tern.start_kill().unwrap();
    tern.wait().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(server) {
        assert!(Instant::now() < deadline, "the MCP server outlived tern's SIGKILL");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `tern run` waits for a server as long as its own start-up may take, saying so on stderr: a server that needs a
/// few seconds (a Python or npx server) is there for the run's first and only turn, not "Tool not found".
#[tokio::test(flavor = "multi_thread")]
async fn tern_run_waits_for_a_slow_server_and_says_so() {
    let Some(js) = everything() else { return };
    let scratch = Scratch::new();
    let config = scratch.home.path().join("servers.json");
    let slow = format!("sleep 3; exec node '{}' stdio", js.display());
    let servers = json!({"mcpServers": {"slow": {"command": "sh", "args": ["-c", slow]}}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mock = MockLlm::start(vec![
        Reply::tool("mcp_slow_echo", json!({"message": "made it"})),
        Reply::text("Done."),
    ])
    .await;
    let config = config.display().to_string();
    let out = scratch
        .run(
            Some(&mock),
            &["run", "--mode", "full-auto", "--mcp-config", &config, "go"],
        )
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("tern: waiting for MCP servers to start: slow (up to"),
        "{stderr}"
    );
    let result = crate::support::tern::tool_results(&mock.requests()[1]).pop().unwrap();
    assert!(result.contains("made it"), "{result}");
    assert!(offered(&mock.requests()[0]).iter().any(|t| t == "mcp_slow_echo"));
}
