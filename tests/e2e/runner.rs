//! The agent runner against the scripted model over real HTTP: Ops in, Events out, and every request the model
//! received checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approve;
mod road;
use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use tern::agent::{AgentHandle, spawn};
use tern::protocol::{ApprovalDecision, ApprovalMode, Event, Op, TurnEnd};
use tern::provider::ProviderKind;
use tern::session::ToolResultStore;
use tern::tools::Tool;

struct Harness {
    mock: MockLlm,
    agent: AgentHandle,
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

async fn harness(script: Vec<Reply>, mode: ApprovalMode, kind: ProviderKind, max_iterations: u32) -> Harness {
    harness_with(script, mode, kind, max_iterations, Vec::new()).await
}

/// The harness with `extra` tools registered next to the built-ins and exec.
async fn harness_with(
    script: Vec<Reply>,
    mode: ApprovalMode,
    kind: ProviderKind,
    max_iterations: u32,
    extra: Vec<Arc<dyn Tool>>,
) -> Harness {
    let mock = MockLlm::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello world\nsecond line\n").unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "fn hello() {}\n").unwrap();
    let store = tempfile::tempdir().unwrap();
    let mut provider = support::agent::provider(&mock, kind);
    provider.retry.max_attempts = 3;
    let results = ToolResultStore::new(store.path().join("results"));
    let mut config = support::agent::config(&provider, dir.path(), results, mode);
    for tool in extra {
        config.tools_mut().register(tool);
    }
    let agent = spawn(config.with_max_iterations(max_iterations));
    Harness {
        mock,
        agent,
        dir,
        store,
    }
}

async fn openai(script: Vec<Reply>, mode: ApprovalMode) -> Harness {
    harness(script, mode, ProviderKind::OpenAi, 20).await
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

    /// Runs one turn to its end, answering approvals with `decide`; returns every event of the turn.
    async fn turn(
        &mut self,
        text: &str,
        mut decide: impl FnMut(&tern::protocol::ApprovalRequest) -> ApprovalDecision,
    ) -> Vec<Event> {
        self.send(Op::UserTurn { text: text.into() });
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            if let Event::ApprovalRequest(r) = &event {
                self.send(Op::Approve {
                    id: r.id,
                    decision: decide(r),
                });
            }
            let done = matches!(event, Event::TurnFinished { .. });
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

fn end_of(events: &[Event]) -> TurnEnd {
    events
        .iter()
        .find_map(|e| match e {
            Event::TurnFinished { reason } => Some(reason.clone()),
            _ => None,
        })
        .unwrap()
}

fn tool_results(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| m["content"].to_string()),
            )
        })
        .collect()
}

fn tool_names(request: &Value) -> Vec<String> {
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

/// Every assistant tool call in the request is followed by exactly one result, in call order.
fn assert_every_call_answered(request: &Value) {
    let messages = request["messages"].as_array().unwrap();
    for (i, m) in messages.iter().enumerate() {
        if let Some(calls) = m["tool_calls"].as_array() {
            let ids: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
            let answers: Vec<&str> = messages[i + 1..i + 1 + ids.len()]
                .iter()
                .map(|r| {
                    assert_eq!(r["role"], "tool", "call not answered in {request}");
                    r["tool_call_id"].as_str().unwrap()
                })
                .collect();
            assert_eq!(ids, answers);
        }
    }
    for (i, m) in messages.iter().enumerate() {
        if m["role"] == "tool" {
            let prev = &messages[i - 1];
            assert!(
                prev["role"] == "tool" || prev["tool_calls"].is_array(),
                "orphan result at {i}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn text_turn_streams_and_completes() {
    let mut h = openai(vec![Reply::text("Hello there, friend.")], ApprovalMode::AutoEdit).await;
    let first = h.next().await;
    assert!(matches!(first, Event::SessionStarted { ref model, .. } if model == "test-model"));
    let events = h.turn("hi", |_| ApprovalDecision::Once).await;
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            Event::AssistantDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Hello there, friend.");
    assert!(events.iter().any(|e| matches!(e, Event::TokenUsage { .. })));
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let req = &h.mock.requests()[0];
    assert_eq!(req["messages"][0]["role"], "system");
    assert_eq!(req["messages"][1]["content"], "hi");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fast_stream_reaches_the_frontend_whole_in_batches_not_a_delta_per_token() {
    // 1,500 word pieces at 2,000 a second: the first quarter second token by token, the rest in frame-sized batches.
    let text: String = (0..1_500).map(|i| format!("w{i} ")).collect();
    let mut h = openai(vec![Reply::paced(text.clone(), 2_000)], ApprovalMode::AutoEdit).await;
    h.next().await;
    let events = h.turn("talk", |_| ApprovalDecision::Once).await;
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::AssistantDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.concat(), text, "nothing lost, nothing reordered");
    assert!(
        deltas.len() < 1_500 / 2,
        "{} delta events for 1,500 pieces: the stream was passed on token by token",
        deltas.len()
    );
    assert_eq!(end_of(&events), TurnEnd::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn parallel_reads_answered_in_call_order_with_sorted_stable_tools() {
    let script = vec![
        Reply::ToolCalls(vec![
            ("read_file".into(), json!({"path": "hello.txt"})),
            ("grep".into(), json!({"pattern": "hello", "path": "."})),
            ("list_dir".into(), json!({})),
        ]),
        Reply::text("Found it."),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let events = h.turn("look", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let begins = events
        .iter()
        .filter(|e| matches!(e, Event::ToolCallBegin { .. }))
        .count();
    let ends = events.iter().filter(|e| matches!(e, Event::ToolCallEnd { .. })).count();
    assert_eq!((begins, ends), (3, 3));
    let reqs = h.mock.requests();
    assert_eq!(reqs.len(), 2);
    let results = tool_results(&reqs[1]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
    assert!(results[0].1.contains("1| hello world"), "{}", results[0].1);
    assert!(results[1].1.contains("hello.txt"), "{}", results[1].1);
    assert_every_call_answered(&reqs[1]);
    let names = tool_names(&reqs[0]);
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(names.contains(&"exec".to_string()) && names.contains(&"edit_file".to_string()));
    assert_eq!(
        reqs[0]["tools"], reqs[1]["tools"],
        "tool definitions must be identical across requests"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_asks_and_runs_once_approved() {
    let script = vec![
        Reply::tool("exec", json!({"command": "expr approved-output"})),
        Reply::text("Done."),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let mut asked = Vec::new();
    let events = h
        .turn("run it", |r| {
            asked.push(r.clone());
            ApprovalDecision::Once
        })
        .await;
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].command, "expr approved-output");
    assert_eq!(asked[0].cwd, h.dir.path().canonicalize().unwrap().display().to_string());
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let results = tool_results(&h.mock.requests()[1]);
    assert!(results[0].1.contains("approved-output"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_with_feedback_reaches_the_model() {
    let script = vec![
        Reply::tool("exec", json!({"command": "rm -rf build"})),
        Reply::text("OK, I won't."),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let events = h
        .turn("clean", |_| ApprovalDecision::Deny {
            feedback: Some("keep the build dir".into()),
        })
        .await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let end = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallEnd { output, .. } => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(end.is_error);
    let results = tool_results(&h.mock.requests()[1]);
    assert!(results[0].1.contains("keep the build dir"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn always_adds_a_session_rule() {
    let script = vec![
        Reply::tool("exec", json!({"command": "expr one"})),
        Reply::tool("exec", json!({"command": "expr two"})),
        Reply::text("Both ran."),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let mut asked = 0;
    let events = h
        .turn("echo twice", |r| {
            asked += 1;
            assert_eq!(r.proposed_rules, ["expr"]);
            ApprovalDecision::Always
        })
        .await;
    assert_eq!(asked, 1, "the second expr is covered by the session rule");
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert!(tool_results(&h.mock.requests()[2])[1].1.contains("two"));
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_ends_the_turn_and_next_turn_is_valid() {
    let script = vec![
        Reply::ToolCalls(vec![
            ("exec".into(), json!({"command": "expr a"})),
            ("exec".into(), json!({"command": "expr b"})),
        ]),
        Reply::text("Next answer."),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let events = h.turn("go", |_| ApprovalDecision::Abort).await;
    assert_eq!(end_of(&events), TurnEnd::Aborted);
    let ends = events.iter().filter(|e| matches!(e, Event::ToolCallEnd { .. })).count();
    assert_eq!(ends, 2, "both calls closed");
    let events = h.turn("again", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let reqs = h.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_every_call_answered(&reqs[1]);
    assert_eq!(tool_results(&reqs[1]).len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupt_stops_a_running_command_and_keeps_history_valid() {
    let marker = format!("tern-interrupt-{}", std::process::id());
    let script = vec![
        Reply::tool("exec", json!({"command": format!("echo started; sleep 30 # {marker}")})),
        Reply::text("After interrupt."),
    ];
    let mut h = openai(script, ApprovalMode::FullAuto).await;
    h.send(Op::UserTurn { text: "run".into() });
    loop {
        if let Event::ToolOutputDelta { chunk, .. } = h.next().await
            && chunk.contains("started")
        {
            break;
        }
    }
    let t = Instant::now();
    h.send(Op::Interrupt);
    let end = loop {
        if let Event::TurnFinished { reason } = h.next().await {
            break reason;
        }
    };
    assert_eq!(end, TurnEnd::Interrupted);
    assert!(t.elapsed() < Duration::from_secs(5), "interrupt took {:?}", t.elapsed());
    let ps = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .unwrap();
    assert!(
        ps.stdout.is_empty(),
        "process left running: {}",
        String::from_utf8_lossy(&ps.stdout)
    );
    let events = h.turn("and now?", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let reqs = h.mock.requests();
    assert_every_call_answered(&reqs[1]);
    let results = tool_results(&reqs[1]);
    assert!(results[0].1.to_lowercase().contains("interrupt"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn interrupt_during_a_stalled_stream() {
    let mut h = openai(
        vec![Reply::Stall("Thinking about".into()), Reply::text("Fresh.")],
        ApprovalMode::AutoEdit,
    )
    .await;
    h.send(Op::UserTurn { text: "hi".into() });
    // Interrupt once everything the stalled stream sends has arrived.
    let mut seen = String::new();
    while seen != "Thinking about" {
        if let Event::AssistantDelta { text } = h.next().await {
            seen.push_str(&text);
        }
    }
    h.send(Op::Interrupt);
    let end = loop {
        if let Event::TurnFinished { reason } = h.next().await {
            break reason;
        }
    };
    assert_eq!(end, TurnEnd::Interrupted);
    let events = h.turn("again", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let second = &h.mock.requests()[1];
    let text = second.to_string();
    assert!(
        text.contains("Thinking about") && text.contains("interrupted"),
        "{text}"
    );
}

/// A grep whose content output is ~100 KB: over the inline limit.
fn big_grep() -> Reply {
    Reply::tool(
        "grep",
        json!({"pattern": "needle", "path": "big.txt", "output_mode": "content", "head_limit": 1000}),
    )
}

fn write_big_file(h: &Harness) {
    let text: String = (0..1000)
        .map(|i| format!("needle line {i} {}\n", "x".repeat(90)))
        .collect();
    std::fs::write(h.dir.path().join("big.txt"), text).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn large_results_are_stored_and_previewed() {
    let script = vec![big_grep(), Reply::text("Long.")];
    let mut h = openai(script, ApprovalMode::FullAuto).await;
    write_big_file(&h);
    let events = h.turn("count", |_| ApprovalDecision::Once).await;
    let path = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallEnd { full_output_path, .. } => full_output_path.clone(),
            _ => None,
        })
        .expect("stored");
    assert!(Path::new(&path).starts_with(h.store.path()));
    let full = std::fs::read_to_string(&path).unwrap();
    assert!(full.contains("needle line 999 "), "{}", &full[..200]);
    let results = tool_results(&h.mock.requests()[1]);
    assert!(results[0].1.len() < 2_000, "preview only: {}", results[0].1.len());
    assert!(results[0].1.contains(&path));
}

#[tokio::test(flavor = "multi_thread")]
async fn stored_results_can_be_read_back() {
    let mut h = openai(vec![big_grep(), Reply::text("ok")], ApprovalMode::FullAuto).await;
    write_big_file(&h);
    let events = h.turn("count", |_| ApprovalDecision::Once).await;
    let path = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallEnd { full_output_path, .. } => full_output_path.clone(),
            _ => None,
        })
        .unwrap();
    h.mock.push(Reply::tool(
        "read_file",
        json!({"path": path, "offset": 990, "limit": 3}),
    ));
    h.mock.push(Reply::text("read"));
    let events = h.turn("read it", |_| ApprovalDecision::Once).await;
    let out = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallEnd { output, .. } => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("needle line 989 "), "{}", out.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_call_a_third_time_is_refused() {
    let call = || Reply::tool("read_file", json!({"path": "hello.txt"}));
    let mut h = openai(
        vec![call(), call(), call(), Reply::text("stop")],
        ApprovalMode::AutoEdit,
    )
    .await;
    let events = h.turn("loop", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let last = tool_results(&h.mock.requests()[3]);
    assert!(last[2].1.contains("already made 2 times"), "{last:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn iteration_limit_asks_for_a_summary_without_tools() {
    let script = vec![
        Reply::tool("list_dir", json!({"path": "."})),
        Reply::tool("list_dir", json!({"path": "src"})),
        Reply::text("Summary: listed things."),
    ];
    let mut h = harness(script, ApprovalMode::AutoEdit, ProviderKind::OpenAi, 2).await;
    let events = h.turn("explore", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::IterationLimit);
    let reqs = h.mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(tool_names(&reqs[2]).is_empty(), "the summary request offers no tools");
    assert!(reqs[2].to_string().contains("tool-call limit"));
}

#[tokio::test(flavor = "multi_thread")]
async fn length_is_continued_and_empty_reply_retried() {
    let script = vec![
        Reply::Length("Part one".into()),
        Reply::Empty,
        Reply::text(" part two."),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let events = h.turn("write", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let reqs = h.mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[1].to_string().contains("cut off by the output limit"));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Notice { text } if text.contains("empty reply")))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_arguments_and_unknown_tools_become_results() {
    let script = vec![
        Reply::RawToolArgs("read_file".into(), "{\"path\": \"hello.txt\"".into()),
        Reply::tool("reed_file", json!({"path": "hello.txt"})),
        Reply::text("done"),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let events = h.turn("go", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let reqs = h.mock.requests();
    let first = tool_results(&reqs[1]);
    assert!(first[0].1.contains("not valid JSON"), "{first:?}");
    let second = tool_results(&reqs[2]);
    assert!(second[1].1.contains("Did you mean 'read_file'"), "{second:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_errors_end_the_turn_cleanly() {
    let script = vec![Reply::status(401, "bad key"), Reply::text("recovered")];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let events = h.turn("hi", |_| ApprovalDecision::Once).await;
    assert!(matches!(end_of(&events), TurnEnd::Error { .. }));
    assert!(events.iter().any(|e| matches!(e, Event::Error { .. })));
    let events = h.turn("hi again", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let second = &h.mock.requests()[1];
    let users = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 2, "the failed turn's message is kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn retries_are_reported() {
    let script = vec![Reply::rate_limited(0), Reply::text("after retry")];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let events = h.turn("hi", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert!(events.iter().any(|e| matches!(e, Event::Retrying { attempt: 2, .. })));
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_mode_refuses_edits() {
    let script = vec![
        Reply::tool("write_file", json!({"path": "new.txt", "content": "x"})),
        Reply::text("couldn't"),
    ];
    let mut h = openai(script, ApprovalMode::ReadOnly).await;
    let events = h.turn("write", |_| panic!("read-only never asks")).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert!(!h.dir.path().join("new.txt").exists());
    assert!(tool_results(&h.mock.requests()[1])[0].1.contains("read-only"));
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_apply_in_auto_edit_and_carry_a_diff() {
    let script = vec![
        Reply::tool(
            "edit_file",
            json!({"path": "hello.txt", "old_text": "second line", "new_text": "2nd line"}),
        ),
        Reply::text("edited"),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    let events = h.turn("edit", |_| panic!("auto-edit does not ask for edits")).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("hello.txt")).unwrap(),
        "hello world\n2nd line\n"
    );
    let diff = events.iter().find_map(|e| match e {
        Event::ToolCallEnd { output, .. } => Some(output.details.clone()),
        _ => None,
    });
    assert!(
        matches!(diff, Some(tern::protocol::ToolDetails::Diffs { .. })),
        "{diff:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn anthropic_wire_runs_a_tool_turn() {
    let script = vec![
        Reply::tool("read_file", json!({"path": "hello.txt"})),
        Reply::text("It says hello."),
    ];
    let mut h = harness(script, ApprovalMode::AutoEdit, ProviderKind::Anthropic, 10).await;
    let events = h.turn("read", |_| ApprovalDecision::Once).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let reqs = h.mock.recorded();
    assert_eq!(reqs[0].path, "/v1/messages");
    let second = &reqs[1].body;
    let last_user = second["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_user["role"], "user");
    assert_eq!(last_user["content"][0]["type"], "tool_result");
    assert!(last_user["content"][0].to_string().contains("hello world"));
}

#[tokio::test(flavor = "multi_thread")]
async fn queued_message_runs_as_next_turn() {
    let script = vec![
        Reply::delayed(Duration::from_millis(300), Reply::text("first")),
        Reply::text("second"),
    ];
    let mut h = openai(script, ApprovalMode::AutoEdit).await;
    h.send(Op::UserTurn { text: "one".into() });
    h.send(Op::UserTurn { text: "two".into() });
    let mut finished = 0;
    while finished < 2 {
        if let Event::TurnFinished { reason } = h.next().await {
            assert_eq!(reason, TurnEnd::Completed);
            finished += 1;
        }
    }
    let reqs = h.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].to_string().contains("\"two\""));
}
