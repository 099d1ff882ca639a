//! The plan (`todo_write`) and custom slash commands, end to end with the real `tern` binary and the scripted model
//! over HTTP: the events a run streams, what the model reads back, the plan rebuilt from a recorded session, and
//! `tern run "/name args"` expanding a command file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

mod commands;

use serde_json::{Value, json};

use support::mock_llm::{MockLlm, Reply};
use support::tern::{Scratch, tool_results};
use tern::protocol::{Event, PlanStatus};

fn todos(items: &[(&str, &str)]) -> Value {
    json!({"todos": items.iter().map(|(c, s)| json!({"content": c, "status": s})).collect::<Vec<_>>()})
}

fn stream_events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A run that plans, fails one rewrite, and finishes its plan; in read-only mode, where nothing that writes may run.
async fn planned_run(sb: &Scratch) -> (MockLlm, Vec<Value>) {
    let mock = MockLlm::start(vec![
        Reply::tool(
            "todo_write",
            todos(&[("Read notes", "in_progress"), ("Summarise", "pending")]),
        ),
        Reply::tool(
            "todo_write",
            todos(&[("Read notes", "in_progress"), ("Summarise", "in_progress")]),
        ),
        Reply::tool(
            "todo_write",
            todos(&[("Read notes", "completed"), ("Summarise", "in_progress")]),
        ),
        Reply::text("All done."),
    ])
    .await;
    let out = sb
        .run(
            Some(&mock),
            &["run", "--mode", "read-only", "--output-format", "events", "plan it"],
        )
        .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (mock, stream_events(&out.stdout))
}

#[tokio::test(flavor = "multi_thread")]
async fn todo_write_streams_plan_events_and_the_model_reads_a_short_result() {
    let sb = Scratch::new();
    let (mock, events) = planned_run(&sb).await;
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    // Allowed without asking even in read-only mode; a plan event follows each saved list, none the refused one.
    assert!(!kinds.contains(&"approval_request"), "{kinds:?}");
    let plans: Vec<&Value> = events.iter().filter(|e| e["event"] == "plan_updated").collect();
    assert_eq!(plans.len(), 2, "{kinds:?}");
    assert_eq!(
        plans[0]["items"][0],
        json!({"content": "Read notes", "status": "in_progress"})
    );
    assert_eq!(
        plans[1]["items"][1],
        json!({"content": "Summarise", "status": "in_progress"})
    );
    let order: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| k.starts_with("tool_call") || *k == "plan_updated")
        .collect();
    assert_eq!(
        order,
        [
            "tool_call_begin",
            "tool_call_end",
            "plan_updated",
            "tool_call_begin",
            "tool_call_end",
            "tool_call_begin",
            "tool_call_end",
            "plan_updated"
        ]
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        tool_results(&requests[1]),
        ["Plan saved: 0/2 done. In progress: Read notes."]
    );
    let refused = &tool_results(&requests[2])[1];
    assert!(refused.contains("steps 1, 2 are all in_progress"), "{refused}");
    assert_eq!(
        tool_results(&requests[3])[2],
        "Plan saved: 1/2 done. In progress: Summarise."
    );
    // The model is told what the tool is for.
    let tools = requests[0]["tools"].as_array().unwrap();
    let todo = tools.iter().find(|t| t["function"]["name"] == "todo_write").unwrap();
    let description = todo["function"]["description"].as_str().unwrap();
    assert!(description.contains("WHOLE list"), "{description}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_session_rebuilds_the_plan_on_replay() {
    let sb = Scratch::new();
    let _ = planned_run(&sb).await;
    let workspace = std::fs::canonicalize(sb.work.path()).unwrap();
    let path = tern::session::list::latest(&sb.data().join("tern"), &workspace.display().to_string()).unwrap();
    let loaded = tern::session::log::load(&path).unwrap();
    let recorded: Vec<&Event> = loaded
        .events
        .iter()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, Event::PlanUpdated { .. }))
        .collect();
    assert_eq!(recorded.len(), 2);
    let mut state = tern::tui::state::AppState::new();
    state.replay(&loaded.messages, loaded.events);
    assert_eq!(state.plan.progress(), Some((1, 2)));
    assert_eq!(state.status.plan, Some((1, 2)));
    assert_eq!(state.plan.items()[1].status, PlanStatus::InProgress);
    // The one refused rewrite has a cell of its own; the saved ones are the pane.
    let failed = state.calls.iter().filter(|c| c.name == "todo_write").count();
    assert_eq!(failed, 3);
    let shown: Vec<_> = state
        .calls
        .iter()
        .filter(|c| state.cell_of_call(&c.call_id).is_some())
        .collect();
    assert_eq!(shown.len(), 1);
    assert!(shown[0].output.as_ref().unwrap().is_error);
}

#[tokio::test(flavor = "multi_thread")]
async fn text_output_prints_the_plan_on_stderr() {
    let sb = Scratch::new();
    let mock = MockLlm::start(vec![
        Reply::tool(
            "todo_write",
            todos(&[("Read notes", "in_progress"), ("Summarise", "pending")]),
        ),
        Reply::text("Done."),
    ])
    .await;
    let out = sb.run(Some(&mock), &["run", "plan it"]).await;
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Done.\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plan: 0/2 done\n  ◐ Read notes\n  ☐ Summarise\n"), "{err}");
    assert!(!err.contains("● todo_write"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_keeps_the_plan_for_the_model() {
    use std::time::Duration;
    use tern::protocol::{ApprovalMode, Op};
    let mock = MockLlm::start(vec![
        Reply::tool(
            "todo_write",
            todos(&[("Read notes", "completed"), ("Summarise", "in_progress")]),
        ),
        Reply::text("A1"),
        Reply::text("A2"),
        Reply::text("SUMMARY"),
        Reply::text("A3"),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, tern::provider::ProviderKind::OpenAi);
    let results = tern::session::ToolResultStore::new(store.path().join("results"));
    let config = support::agent::config(&provider, dir.path(), results, ApprovalMode::AutoEdit);
    let mut agent = tern::agent::spawn(config);
    let until = async |agent: &mut tern::agent::AgentHandle, done: fn(&Event) -> bool| loop {
        let event = tokio::time::timeout(Duration::from_secs(20), agent.events.recv())
            .await
            .unwrap()
            .unwrap();
        if done(&event) {
            return;
        }
    };
    let finished = |e: &Event| matches!(e, Event::TurnFinished { .. });
    for text in ["first", "second"] {
        agent.ops.send(Op::UserTurn { text: text.into() }).unwrap();
        until(&mut agent, finished).await;
    }
    agent.ops.send(Op::Compact { focus: None }).unwrap();
    until(
        &mut agent,
        |e| matches!(e, Event::Notice { text } if text.starts_with("compacted")),
    )
    .await;
    agent.ops.send(Op::UserTurn { text: "third".into() }).unwrap();
    until(&mut agent, finished).await;
    let last = mock.requests().pop().unwrap();
    let summary = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(summary.contains("SUMMARY"), "{summary}");
    assert!(
        summary.ends_with(
            "Your plan (todo_write) as you last saved it:\n- [completed] Read notes\n- [in_progress] Summarise"
        ),
        "{summary}"
    );
}
