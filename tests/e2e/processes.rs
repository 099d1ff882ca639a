//! Live processes end to end: `tern run` (the real binary, in its OS sandbox unless a test turns it off) against the
//! scripted model, which starts processes with `exec` and `background: true`, polls them with `process_output`, types
//! into them with `process_input` and stops them with `process_stop`; and the sandbox's hold on a background process
//! through `ExecTool` with the built launcher.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use support::tern::{Scratch, tool_results};
use tern::sandbox::SandboxPolicy;
use tern::tools::exec::{ExecConfig, ExecTool};
use tern::tools::processes::{ProcessTable, Starter};
use tern::tools::{PathPolicy, Tool, ToolContext};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn background(command: &str) -> Reply {
    Reply::tool("exec", json!({ "command": command, "background": true }))
}

/// The text of every message of a request, in order (tool results and user messages alike).
fn contents(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Processes on the whole machine running `program` with `marker` in their command line, zombies left out.
fn running(program: &str, marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| s.rfind(')').is_some_and(|i| s[i + 1..].trim_start().starts_with('Z')))
            .unwrap_or(true);
        if cmdline.starts_with(&format!("{program} ")) && cmdline.contains(marker) && !zombie {
            found.push(cmdline);
        }
    }
    found
}

fn marker() -> String {
    format!("{}.{}", 1000 + fastrand::u32(..100_000), std::process::id())
}

#[tokio::test]
async fn a_dev_server_is_started_polled_fetched_and_stopped() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/notes.txt");
    let mock = MockLlm::start(vec![
        background(&format!("python3 -m http.server {port} --bind 127.0.0.1")),
        Reply::tool("process_output", json!({"id": "p1", "wait": 10})),
        Reply::tool("exec", json!({ "command": format!("curl -s {url}") })),
        Reply::tool("process_stop", json!({"id": "p1"})),
        Reply::tool("exec", json!({ "command": format!("curl -s {url} || echo gone: $?") })),
        Reply::tool("process_output", json!({})),
        Reply::text("The server served notes.txt and is stopped."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb
        .run(Some(&mock), &["run", "--mode", "full-auto", "serve the notes"])
        .await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    let requests = mock.requests();
    let results = tool_results(&requests[6]);
    assert!(results[0].contains("Started process p1"), "{}", results[0]);
    let polled = format!("{}{}", results[0], results[1]);
    assert!(
        polled.contains(&format!("port {port}")),
        "the server said it listens: {polled}"
    );
    assert!(
        results[2].contains("alpha\nbeta"),
        "the server answered: {}",
        results[2]
    );
    assert!(results[3].contains("p1 was stopped by the model"), "{}", results[3]);
    assert!(
        results[4].contains("gone: 7"),
        "nothing listens any more: {}",
        results[4]
    );
    assert!(
        results[5].contains("p1: was stopped by the model: python3 -m http.server"),
        "{}",
        results[5]
    );
    assert!(
        err.contains("tern: process p1 started: python3 -m http.server"),
        "{err}"
    );
    assert!(err.contains("tern: process p1 was stopped by the model"), "{err}");
}

#[tokio::test]
async fn an_interactive_program_on_a_terminal_is_answered() {
    let mock = MockLlm::start(vec![
        // Its own terminal is its controlling terminal: /dev/tty opens.
        background(
            "[ -t 0 ] && echo on a terminal > /dev/tty; read -p 'Your name? ' name; echo \"Hello, $name!\"; sleep 30",
        ),
        Reply::tool(
            "process_input",
            json!({"id": "p1", "text": "Ada", "keys": ["Enter"], "wait": 5}),
        ),
        Reply::tool("process_output", json!({"id": "p1"})),
        Reply::text("It greeted Ada."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb
        .run(Some(&mock), &["run", "--mode", "full-auto", "answer the prompt"])
        .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let results = tool_results(&mock.requests()[3]);
    assert!(
        results[0].contains("on a terminal") && results[0].contains("Your name?"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("Sent 4 bytes to p1"), "{}", results[1]);
    assert!(results[1].contains("Hello, Ada!"), "{}", results[1]);
    assert!(
        results[2].contains("(no new output)") && results[2].contains("still running"),
        "{}",
        results[2]
    );
}

#[tokio::test]
async fn the_model_is_told_of_an_exit_at_its_next_request() {
    let mock = MockLlm::start(vec![
        background("sleep 2; echo finishing up; exit 4"),
        Reply::tool("exec", json!({"command": "sleep 4"})),
        Reply::text("It exited."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb
        .run(Some(&mock), &["run", "--mode", "full-auto", "wait for it"])
        .await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    let requests = mock.requests();
    let told = |request: &Value| {
        contents(request)
            .iter()
            .any(|c| c.contains("[Process p1 (`sleep 2; echo finishing up; exit 4`) exited with code 4."))
    };
    assert!(!told(&requests[1]), "it still ran at the second request");
    let last = contents(&requests[2]);
    let note = last.last().unwrap();
    assert!(told(&requests[2]) && note.contains("  finishing up"), "{last:?}");
    assert!(err.contains("tern: process p1 exited with code 4"), "{err}");
}

/// `tern run` with a process left running in the sandbox: it is gone once the run ends. It is a pipeline of `sleep`s
/// whose first is bash's child (not tied to tern's life as bash is), so nothing but tern's end of it stops it.
#[tokio::test]
async fn a_process_left_running_ends_with_the_run() {
    let marker = marker();
    let mock = MockLlm::start(vec![
        background(&format!("sleep {marker} | sleep {marker}")),
        Reply::tool("process_output", json!({})),
        Reply::text("Left it running."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb.run(Some(&mock), &["run", "--mode", "full-auto", "start it"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    let listed = tool_results(&mock.requests()[2]);
    assert!(
        listed[1].contains(&format!("p1: running: sleep {marker}")),
        "{listed:?}"
    );
    assert!(
        err.contains("tern: process p1 was stopped by the session's end"),
        "{err}"
    );
    let left = running("sleep", &marker);
    assert!(left.is_empty(), "outlived tern run: {left:?}");
}

#[tokio::test]
async fn input_asks_and_is_refused_unattended_while_reading_and_stopping_do_not() {
    let mock = MockLlm::start(vec![
        // `cat` is on the read-only list: it starts unasked.
        Reply::tool("exec", json!({"command": "cat", "background": true, "tty": false})),
        Reply::tool(
            "process_input",
            json!({"id": "p1", "text": "rm -rf ~", "keys": ["Enter"]}),
        ),
        Reply::tool("process_output", json!({"id": "p1", "wait": 1})),
        Reply::tool("process_stop", json!({"id": "p1"})),
        Reply::text("Could not type into it."),
    ])
    .await;
    let sb = Scratch::new();
    let out = sb.run(Some(&mock), &["run", "type into it"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    let results = tool_results(&mock.requests()[4]);
    assert!(results[0].contains("Started process p1 (on pipes"), "{}", results[0]);
    assert!(
        results[1].contains("no one to approve this call in `tern run`")
            && results[1].contains("types into a running process")
            && results[1].contains("full-auto"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("(no new output)") && results[2].contains("still running"),
        "nothing was typed: {}",
        results[2]
    );
    assert!(results[3].contains("p1 was stopped by the model"), "{}", results[3]);
}

/// A workspace, a table and the context `exec` starts processes in.
fn workspace(table: &ProcessTable) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(PathPolicy::new(dir.path()).unwrap());
    ctx.processes = Some(Starter {
        table: table.clone(),
        call_id: "c1".into(),
    });
    (dir, ctx)
}

/// A background process in the sandbox of `policy` writes only in the workspace, and its terminal is its own.
async fn sandboxed_background_process(policy: SandboxPolicy) {
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = outside.path().join("escaped");
    let table = ProcessTable::new();
    let (dir, ctx) = workspace(&table);
    let exec = ExecTool::new(ExecConfig {
        sandbox: Some(policy),
        ..ExecConfig::default()
    });
    let command = format!(
        "echo hi > /dev/tty && echo inside > in-workspace && echo wrote-inside; echo out > '{}' || echo refused; \
         sleep 30",
        target.display()
    );
    let out = exec
        .execute(json!({"command": command, "background": true}), &ctx)
        .await
        .unwrap();
    assert!(
        out.text
            .contains("Started process p1 (on a 120x40 terminal, in the sandbox)"),
        "{}",
        out.text
    );
    let output = tern::tools::processes::ProcessOutputTool::new(table.clone());
    let mut seen = out.text.clone();
    for _ in 0..10 {
        if seen.contains("refused") {
            break;
        }
        let more = output.execute(json!({"id": "p1", "wait": 1}), &ctx).await.unwrap();
        seen.push_str(&more.text);
    }
    assert!(seen.contains("hi\n"), "/dev/tty is its terminal: {seen}");
    assert!(
        seen.contains("wrote-inside") && seen.contains("Permission denied") && seen.contains("refused"),
        "{seen}"
    );
    assert!(dir.path().join("in-workspace").is_file());
    assert!(!target.exists(), "it wrote outside the workspace");
    table.stop_all("the test's end").await;
}

#[tokio::test]
async fn a_background_process_started_by_the_sandbox_holder_is_held_by_the_sandbox() {
    sandboxed_background_process(SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern-sandbox"))).await;
}

#[tokio::test]
async fn a_background_process_with_the_network_runs_under_a_launcher_of_its_own_in_the_sandbox() {
    // A command that keeps tern's network is not the holder's: tern spawns its launcher.
    let mut policy = SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern-sandbox"));
    policy.network = true;
    sandboxed_background_process(policy).await;
}

/// The agent in this process (the real runner, tools and provider; `exec` without a sandbox unless started with one)
/// on `script`, in full-auto mode unless started in another.
struct Agent {
    mock: MockLlm,
    handle: tern::agent::AgentHandle,
    _dir: tempfile::TempDir,
    _store: tempfile::TempDir,
}

impl Agent {
    async fn start(script: Vec<Reply>) -> Self {
        Self::start_in(script, tern::protocol::ApprovalMode::FullAuto, false).await
    }

    /// In `mode`, with `exec` in the OS sandbox (the built launcher) when `sandboxed`.
    async fn start_in(script: Vec<Reply>, mode: tern::protocol::ApprovalMode, sandboxed: bool) -> Self {
        let mock = MockLlm::start(script).await;
        let dir = tempfile::tempdir().unwrap();
        let store = tempfile::tempdir().unwrap();
        let provider = support::agent::provider(&mock, tern::provider::ProviderKind::OpenAi);
        let results = tern::session::ToolResultStore::new(store.path().join("results"));
        let mut config = support::agent::config(&provider, dir.path(), results, mode);
        if sandboxed {
            config
                .tools_mut()
                .register(std::sync::Arc::new(ExecTool::new(ExecConfig {
                    sandbox: Some(SandboxPolicy::with_launcher(env!("CARGO_BIN_EXE_tern-sandbox"))),
                    ..ExecConfig::default()
                })));
        }
        Self {
            mock,
            handle: tern::agent::spawn(config),
            _dir: dir,
            _store: store,
        }
    }

    fn send(&self, op: tern::protocol::Op) {
        self.handle.ops.send(op).unwrap();
    }

    /// Events until one `until` accepts (that one included), at most 20 s.
    async fn until(&mut self, mut until: impl FnMut(&tern::protocol::Event) -> bool) -> Vec<tern::protocol::Event> {
        let mut seen = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(20), self.handle.events.recv())
                .await
                .unwrap_or_else(|_| panic!("no such event within 20 s; saw {seen:#?}"))
                .expect("the agent runs");
            let done = until(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }
}

/// What the frontends were shown of process `id`'s output in `events`, joined.
fn shown(events: &[tern::protocol::Event], id: &str) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            tern::protocol::Event::ProcessOutput { id: of, chunk } if of == id => Some(chunk.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_user_types_into_resizes_and_stops_a_process_and_the_session_end_kills_the_rest() {
    use tern::protocol::process::ProcessEnd;
    use tern::protocol::{Event, Op};
    let marker = marker();
    let mut agent = Agent::start(vec![
        background("read -p 'Size? ' x; stty size; read -p 'Name? ' n; echo \"Hi $n\"; sleep 30"),
        background(&format!("sleep {marker} & sleep {marker}; wait")),
        Reply::text("Both run."),
    ])
    .await;
    agent.send(Op::UserTurn {
        text: "start them".into(),
    });
    let events = agent.until(|e| matches!(e, Event::TurnFinished { .. })).await;
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ProcessStarted { process } => Some(process.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started.len(), 2, "{events:#?}");
    assert_eq!((started[0].id.as_str(), started[0].pty), ("p1", true));
    assert_eq!((started[0].cols, started[0].rows), (120, 40));
    assert!(!started[0].call_id.is_empty());
    assert!(shown(&events, "p1").contains("Size? "), "{events:#?}");
    assert_eq!(running("sleep", &marker).len(), 2, "the background sleeps run");

    agent.send(Op::ProcessResize {
        id: "p1".into(),
        cols: 80,
        rows: 20,
    });
    agent.send(Op::ProcessInput {
        id: "p1".into(),
        data: "\r".into(),
    });
    let events = agent
        .until(|e| matches!(e, Event::ProcessOutput { chunk, .. } if chunk.contains("Name? ")))
        .await;
    assert!(
        shown(&events, "p1").contains("20 80"),
        "the terminal took the new size: {events:#?}"
    );
    agent.send(Op::ProcessInput {
        id: "p1".into(),
        data: "Bo\r".into(),
    });
    let events = agent
        .until(|e| matches!(e, Event::ProcessOutput { chunk, .. } if chunk.contains("Hi Bo")))
        .await;
    assert!(
        shown(&events, "p1").contains("Bo"),
        "the terminal echoed the keys: {events:#?}"
    );

    agent.send(Op::ProcessStop { id: "p1".into() });
    let events = agent.until(|e| matches!(e, Event::ProcessExited { .. })).await;
    let Some(Event::ProcessExited { id, end }) = events.last() else {
        unreachable!()
    };
    assert_eq!(
        (id.as_str(), end),
        ("p1", &ProcessEnd::Stopped { by: "the user".into() })
    );

    agent.send(Op::Shutdown);
    let events = agent.until(|e| matches!(e, Event::ShutdownComplete)).await;
    assert!(
        events.iter().any(
            |e| matches!(e, Event::ProcessExited { id, end: ProcessEnd::Stopped { by } }
            if id == "p2" && by == "the session's end")
        ),
        "{events:#?}"
    );
    let left = running("sleep", &marker);
    assert!(left.is_empty(), "outlived the session: {left:?}");
    assert_eq!(agent.mock.requests().len(), 3);
}

#[tokio::test]
async fn a_new_conversation_stops_the_old_ones_processes() {
    use tern::protocol::process::ProcessEnd;
    use tern::protocol::{Event, Op};
    let mut agent = Agent::start(vec![background("sleep 60"), Reply::text("Started.")]).await;
    agent.send(Op::UserTurn {
        text: "start it".into(),
    });
    agent.until(|e| matches!(e, Event::TurnFinished { .. })).await;
    agent.send(Op::NewConversation);
    let events = agent.until(|e| matches!(e, Event::ProcessExited { .. })).await;
    assert!(
        matches!(events.last(), Some(Event::ProcessExited { end: ProcessEnd::Stopped { by }, .. })
        if by == "a new conversation")
    );
}

#[tokio::test]
async fn the_prompt_shows_the_process_and_every_byte_and_always_means_this_process() {
    use tern::protocol::{ApprovalDecision, Event, Op};
    let mut agent = Agent::start_in(
        vec![
            // `cat` is on the read-only list: it starts unasked.
            Reply::tool("exec", json!({"command": "cat", "background": true, "tty": false})),
            Reply::tool(
                "process_input",
                json!({"id": "p1", "text": "one\u{200b}", "keys": ["Enter"]}),
            ),
            Reply::tool("process_input", json!({"id": "p1", "text": "two", "keys": ["Enter"]})),
            Reply::text("Typed twice."),
        ],
        tern::protocol::ApprovalMode::Ask,
        true,
    )
    .await;
    agent.send(Op::UserTurn { text: "type".into() });
    let events = agent.until(|e| matches!(e, Event::ApprovalRequest(_))).await;
    let Some(Event::ApprovalRequest(request)) = events.last() else {
        unreachable!()
    };
    assert_eq!(request.tool, "process_input");
    assert_eq!(request.command, "process_input p1 (`cat`): one\\u{200b}\u{240d}");
    assert_eq!(request.always_input.as_deref(), Some("p1"), "always is offered for p1");
    assert!(request.proposed_rules.is_empty(), "and no rule to save");
    assert!(
        request.reason.contains("types into a running process"),
        "{}",
        request.reason
    );
    agent.send(Op::Approve {
        id: request.id,
        decision: ApprovalDecision::Always,
    });
    let events = agent.until(|e| matches!(e, Event::TurnFinished { .. })).await;
    let asked = events.iter().filter(|e| matches!(e, Event::ApprovalRequest(_))).count();
    assert_eq!(asked, 0, "the second input to p1 ran unasked: {events:#?}");
    let results = tool_results(&agent.mock.requests()[3]);
    assert!(
        results[1].contains("one\u{200b}\n"),
        "cat echoed the first line: {}",
        results[1]
    );
    assert!(results[2].contains("two\n"), "{}", results[2]);
    agent.send(Op::Shutdown);
    agent.until(|e| matches!(e, Event::ShutdownComplete)).await;
}
