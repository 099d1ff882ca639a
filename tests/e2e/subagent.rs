//! Subagents against the scripted model over real HTTP: the main agent and its subagents share one server, and each
//! subagent's replies are routed by its system prompt (which holds its task). Parallel waited-for subagents, one
//! whose command needs approval, interrupt, reports of background subagents, the concurrency limit, the transcripts
//! saved and reopened, and stream-json tagging.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod background;
use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use tern::agent::{AgentHandle, spawn};
use tern::config::SubagentSettings;
use tern::protocol::{ApprovalDecision, ApprovalMode, Event, Op, TurnEnd};
use tern::provider::ProviderKind;
use tern::session::{SessionLog, SessionMeta, ToolResultStore};

struct Harness {
    mock: MockLlm,
    agent: AgentHandle,
    dir: tempfile::TempDir,
    data: tempfile::TempDir,
}

async fn harness(script: Vec<Reply>, mode: ApprovalMode, max_concurrent: usize) -> Harness {
    let mock = MockLlm::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "the answer is 42\n").unwrap();
    let data = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, ProviderKind::OpenAi);
    let results = ToolResultStore::for_session(data.path(), "main");
    let log_path = SessionLog::path_for(data.path(), "main");
    let meta = SessionMeta::new("main", &dir.path().display().to_string(), "openai", "test-model");
    let agent = spawn(
        support::agent::config(&provider, dir.path(), results, mode)
            .with_log(Some(SessionLog::create(&log_path, &meta).unwrap()))
            .with_subagents(SubagentSettings {
                enabled: true,
                max_concurrent,
                max_iterations: 5,
            }),
    );
    Harness { mock, agent, dir, data }
}

impl Harness {
    fn send(&self, op: Op) {
        self.agent.ops.send(op).unwrap();
    }

    async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(20), self.agent.events.recv())
            .await
            .expect("an event within 20 s")
            .expect("the agent is running")
    }

    /// Events until `stop` says so (inclusive), answering every prompt with `decide`.
    async fn until(
        &mut self,
        mut decide: impl FnMut(&tern::protocol::ApprovalRequest) -> ApprovalDecision,
        mut stop: impl FnMut(&Event) -> bool,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            if let Some(request) = prompt(&event) {
                self.send(Op::Approve {
                    id: request.id,
                    decision: decide(request),
                });
            }
            let done = stop(&event);
            events.push(event);
            if done {
                return events;
            }
        }
    }

    async fn turn(&mut self, text: &str) -> Vec<Event> {
        self.send(Op::UserTurn { text: text.into() });
        self.until(|_| ApprovalDecision::Once, |e| matches!(e, Event::TurnFinished { .. }))
            .await
    }

    fn log_path(&self) -> std::path::PathBuf {
        SessionLog::path_for(self.data.path(), "main")
    }
}

/// An approval request, the main agent's or a subagent's.
fn prompt(event: &Event) -> Option<&tern::protocol::ApprovalRequest> {
    match event {
        Event::ApprovalRequest(r) => Some(r),
        Event::Subagent { inner, .. } => match &**inner {
            Event::ApprovalRequest(r) => Some(r),
            _ => None,
        },
        _ => None,
    }
}

fn spawn_call(task: &str, label: &str, wait: bool) -> (String, Value) {
    ("spawn".to_string(), json!({"task": task, "label": label, "wait": wait}))
}

fn finished(events: &[Event]) -> Vec<(String, TurnEnd, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::SubagentFinished { label, end, result, .. } => Some((label.clone(), end.clone(), result.clone())),
            _ => None,
        })
        .collect()
}

/// The tool results of the main agent's last request, in order.
fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn system_of(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn waited_subagents_run_in_parallel_and_report_in_call_order() {
    let mut h = harness(
        vec![
            Reply::ToolCalls(vec![
                spawn_call("TASK-A: read notes.txt", "reader", true),
                spawn_call("TASK-B: say hello", "greeter", true),
            ]),
            // A answers late: B finishes first, yet A's report comes first, in call order.
            Reply::for_system("TASK-A", Reply::tool("read_file", json!({"path": "notes.txt"}))),
            Reply::for_system(
                "TASK-A",
                Reply::delayed(Duration::from_millis(400), Reply::text("A: it says 42")),
            ),
            Reply::for_system("TASK-B", Reply::text("B: hello")),
            Reply::text("Both done."),
        ],
        ApprovalMode::AutoEdit,
        3,
    )
    .await;
    let events = h.turn("split the work").await;
    assert!(matches!(
        events.last(),
        Some(Event::TurnFinished {
            reason: TurnEnd::Completed
        })
    ));
    let done = finished(&events);
    assert_eq!(
        done.iter().map(|(l, ..)| l.as_str()).collect::<Vec<_>>(),
        ["greeter", "reader"],
        "B ends while A still works: they ran at once"
    );
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 5);
    let last = requests.last().unwrap();
    let results = tool_results(last);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains("'reader'") && results[0].contains("A: it says 42"),
        "{results:?}"
    );
    assert!(
        results[1].contains("'greeter'") && results[1].contains("B: hello"),
        "{results:?}"
    );
    // The main agent is offered spawn; its subagents are not, and their prompts hold their tasks.
    assert!(tool_names(&requests[0]).contains(&"spawn".to_string()));
    for body in &requests[1..4] {
        assert!(system_of(body).contains("# Subagent"), "{}", system_of(body));
        let names = tool_names(body);
        assert!(!names.contains(&"spawn".to_string()) && names.contains(&"read_file".to_string()));
    }
    // The subagent's read shows in the main stream, tagged.
    assert!(events.iter().any(|e| matches!(e, Event::Subagent { label, inner, .. }
        if label == "reader" && matches!(&**inner, Event::ToolCallEnd { name, output, .. }
            if name == "read_file" && output.text.contains("42")))));
}

#[tokio::test]
async fn a_subagents_command_asks_the_user_labelled_and_runs_when_approved() {
    let mut h = harness(
        vec![
            Reply::tool(
                "spawn",
                json!({"task": "TASK-X: make the marker", "label": "maker", "wait": true}),
            ),
            Reply::for_system(
                "TASK-X",
                Reply::tool("exec", json!({"command": "touch marker && echo made"})),
            ),
            Reply::for_system("TASK-X", Reply::text("made the marker")),
            Reply::text("ok"),
        ],
        ApprovalMode::AutoEdit,
        3,
    )
    .await;
    h.send(Op::UserTurn { text: "go".into() });
    let mut asked = Vec::new();
    let events = h
        .until(
            |r| {
                asked.push(r.clone());
                ApprovalDecision::Once
            },
            |e| matches!(e, Event::TurnFinished { .. }),
        )
        .await;
    assert!(h.dir.path().join("marker").exists(), "the approved command ran");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].command, "touch marker && echo made");
    // The prompt came tagged with the subagent, and the answer reached it.
    let labelled = events.iter().any(|e| {
        matches!(e, Event::Subagent { label, inner, .. }
        if label == "maker" && matches!(&**inner, Event::ApprovalRequest(r) if r.id == asked[0].id))
    });
    assert!(labelled);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ApprovalDecided { id, .. } if *id == asked[0].id))
    );
    let results = tool_results(h.mock.requests().last().unwrap());
    assert!(results[0].contains("made the marker"), "{results:?}");
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[tokio::test]
async fn an_interrupt_stops_the_turn_and_its_subagents_with_their_commands() {
    let mut h = harness(
        vec![
            Reply::tool(
                "spawn",
                json!({"task": "TASK-S: wait a while", "label": "sleeper", "wait": true}),
            ),
            Reply::for_system(
                "TASK-S",
                Reply::tool(
                    "exec",
                    json!({"command": "sh -c 'echo $$ > sleeper.pid; exec sleep 30'"}),
                ),
            ),
        ],
        ApprovalMode::FullAuto,
        3,
    )
    .await;
    h.send(Op::UserTurn { text: "go".into() });
    let pid_file = h.dir.path().join("sleeper.pid");
    let events = h
        .until(
            |_| ApprovalDecision::Once,
            |e| {
                matches!(e, Event::Subagent { inner, .. }
            if matches!(&**inner, Event::ToolCallBegin { name, .. } if name == "exec"))
            },
        )
        .await;
    assert!(!events.is_empty());
    let pid = wait_for_pid(&pid_file).await;
    assert!(alive(pid));
    h.send(Op::Interrupt);
    let events = h
        .until(|_| ApprovalDecision::Once, |e| matches!(e, Event::TurnFinished { .. }))
        .await;
    assert!(matches!(
        events.last(),
        Some(Event::TurnFinished {
            reason: TurnEnd::Interrupted
        })
    ));
    let done = finished(&events);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].1, TurnEnd::Interrupted);
    // No orphan: the command's process is gone once the turn has ended.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while alive(pid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(pid), "the subagent's command outlived the interrupt");
}

async fn wait_for_pid(path: &Path) -> i32 {
    for _ in 0..500 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the command never wrote its pid");
}

#[tokio::test]
async fn past_the_limit_a_subagent_waits_for_a_slot_and_says_so() {
    let mut h = harness(
        vec![
            Reply::ToolCalls(vec![
                spawn_call("TASK-1: first", "one", true),
                spawn_call("TASK-2: second", "two", true),
            ]),
            Reply::for_system(
                "TASK-1",
                Reply::delayed(Duration::from_millis(200), Reply::text("first done")),
            ),
            Reply::for_system("TASK-2", Reply::text("second done")),
            Reply::text("ok"),
        ],
        ApprovalMode::AutoEdit,
        1,
    )
    .await;
    let events = h.turn("two at once").await;
    let waiting = events.iter().any(|e| {
        matches!(e, Event::Subagent { inner, .. }
        if matches!(&**inner, Event::Notice { text } if text.starts_with("waiting:")))
    });
    assert!(waiting, "the second said it waits");
    let done = finished(&events);
    assert_eq!(done.len(), 2);
    // One at a time: the second's only request came after the first had its answer.
    let requests = h.mock.requests();
    let first = requests.iter().position(|b| system_of(b).contains("TASK-1")).unwrap();
    let second = requests.iter().position(|b| system_of(b).contains("TASK-2")).unwrap();
    assert!(first < second);
    assert_eq!(done[0].0, "one");
}

#[tokio::test]
async fn transcripts_are_saved_next_to_the_session_and_reopen_after_a_resume() {
    let mut h = harness(
        vec![
            Reply::tool(
                "spawn",
                json!({"task": "TASK-T: read notes.txt", "label": "notes", "wait": true}),
            ),
            Reply::for_system("TASK-T", Reply::tool("read_file", json!({"path": "notes.txt"}))),
            Reply::for_system("TASK-T", Reply::text("The notes say 42.")),
            Reply::text("It is 42."),
        ],
        ApprovalMode::AutoEdit,
        3,
    )
    .await;
    let events = h.turn("what do the notes say?").await;
    let transcript = events
        .iter()
        .find_map(|e| match e {
            Event::SubagentStarted { transcript, .. } => transcript.clone(),
            _ => None,
        })
        .expect("a transcript path");
    assert!(transcript.starts_with(&h.log_path().parent().unwrap().display().to_string()));
    h.send(Op::Shutdown);
    while !matches!(h.next().await, Event::ShutdownComplete) {}

    // The subagent's own log: its conversation and what it showed.
    let sub = tern::session::log::load(Path::new(&transcript)).unwrap();
    assert!(matches!(&sub.messages[0], tern::protocol::Message::User { content, .. } if content.contains("TASK-T")));
    assert!(
        sub.messages
            .iter()
            .any(|m| matches!(m, tern::protocol::Message::Tool { name, .. } if name == "read_file"))
    );
    assert!(
        sub.events
            .iter()
            .any(|(_, e)| matches!(e, Event::ToolCallEnd { name, .. } if name == "read_file"))
    );

    // The main log: where the transcript is, how it ended, its tokens; a resumed TUI shows the pane.
    let main = tern::session::log::load(&h.log_path()).unwrap();
    let mut state = tern::tui::state::AppState::new();
    state.replay(&main.messages, main.events);
    let pane = state
        .cells
        .iter()
        .find_map(|c| match &c.kind {
            tern::tui::state::CellKind::Subagent(p) => Some(p.clone()),
            _ => None,
        })
        .expect("the subagent's pane");
    assert_eq!(pane.label, "notes");
    assert_eq!(pane.status, tern::tui::state::subagents::SubagentStatus::Done);
    assert_eq!(pane.steps, 2);
    assert!(pane.result.as_deref().unwrap_or_default().contains("42"));
    assert!(state.status.subagent_usage.input_tokens > 0);
    // As the UI opens it: a resumed session reads the subagent's own log through the session host.
    let host = tern::tui_host::TuiHost::new(&std::env::temp_dir(), None);
    let opened = state
        .subagent_transcript(&pane.id, |path| tern::tui::Host::transcript(&host, path))
        .expect("opens");
    assert!(opened.cells.iter().any(|c| matches!(&c.kind,
        tern::tui::state::CellKind::Assistant { text, .. } if text.contains("The notes say 42."))));
}

#[tokio::test]
async fn stream_json_tags_subagent_events_and_text_output_prefixes_them() {
    for format in [tern::headless::OutputFormat::Events, tern::headless::OutputFormat::Text] {
        let h = harness(
            vec![
                Reply::tool(
                    "spawn",
                    json!({"task": "TASK-J: list", "label": "lister", "wait": true}),
                ),
                Reply::for_system("TASK-J", Reply::tool("list_dir", json!({"path": "."}))),
                Reply::for_system("TASK-J", Reply::text("one file")),
                Reply::text("done"),
            ],
            ApprovalMode::AutoEdit,
            3,
        )
        .await;
        let (_stop_tx, mut stops) = tokio::sync::mpsc::unbounded_channel();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let session = tern::headless::Session {
            ops: h.agent.ops,
            events: h.agent.events,
            prices: None,
        };
        let code = tern::headless::run(session, "go".into(), format, &mut stops, &mut out, &mut err).await;
        assert_eq!(code, 0);
        let (out, err) = (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap());
        match format {
            tern::headless::OutputFormat::Events => {
                let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
                let tagged = lines.iter().find(|l| {
                    l["event"] == "subagent" && l["label"] == "lister" && l["inner"]["event"] == "tool_call_begin"
                });
                assert!(tagged.is_some(), "{out}");
                assert!(
                    lines
                        .iter()
                        .any(|l| l["event"] == "subagent_finished" && l["result"] == "one file")
                );
            }
            _ => {
                assert!(err.contains("[lister] ● list_dir"), "{err}");
                assert!(err.contains("[lister] done"), "{err}");
                assert!(out.contains("done"));
            }
        }
    }
}

mod terminal;

/// The user's SubagentStop hooks run when a subagent has answered, told its type as Claude Code tells it, and one
/// that blocks keeps the subagent going with its reason; the report is the subagent's last answer.
#[tokio::test]
async fn a_subagent_stop_hook_keeps_the_subagent_going_once() {
    use tern::agent::hooks::{Hook, HookEvent, Hooks};
    let mock = MockLlm::start(vec![
        Reply::ToolCalls(vec![spawn_call("TASK-S: greet", "greeter", true)]),
        Reply::for_system("TASK-S", Reply::text("hello")),
        Reply::for_system("TASK-S", Reply::text("hello and BYE")),
        Reply::text("Done."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, ProviderKind::OpenAi);
    let results = ToolResultStore::for_session(data.path(), "main");
    let once = r#"cat > stop-input.json; if [ -f once ]; then exit 0; fi; touch once; echo '{"decision":"block","reason":"also say BYE"}'"#;
    let hook = Hook::new(
        HookEvent::SubagentStop,
        Some("general-purpose"),
        once,
        Duration::from_secs(10),
    )
    .unwrap();
    let agent = spawn(
        support::agent::config(&provider, dir.path(), results, ApprovalMode::AutoEdit)
            .with_hooks(Hooks::new(vec![hook], "main", dir.path()))
            .with_subagents(SubagentSettings {
                enabled: true,
                max_concurrent: 2,
                max_iterations: 5,
            }),
    );
    let mut h = Harness { mock, agent, dir, data };
    let events = h.turn("greet").await;
    assert!(matches!(
        events.last(),
        Some(Event::TurnFinished {
            reason: TurnEnd::Completed
        })
    ));
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 4, "the subagent was asked once more");
    let again = requests[2].to_string();
    assert!(again.contains("also say BYE"), "{again}");
    let report = tool_results(&requests[3]).pop().unwrap();
    assert!(report.contains("hello and BYE"), "{report}");
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(h.dir.path().join("stop-input.json")).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "SubagentStop");
    assert_eq!(input["agent_type"], "general-purpose");
    assert_eq!(
        input["stop_hook_active"], true,
        "the second run is one the hook asked for"
    );
}
