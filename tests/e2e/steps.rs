//! Long turns end to end against the scripted model over real HTTP: a command's whole output kept on disk (the model
//! gets its head, its tail and the path), the repeat guard refusing only repeats that cannot help, and the requests of
//! a long turn staying what a fresh build of the whole body would be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use tern::agent::{AgentHandle, spawn};
use tern::protocol::{ApprovalMode, Event, Op, TurnEnd};
use tern::provider::ProviderKind;
use tern::session::ToolResultStore;

struct Harness {
    mock: MockLlm,
    agent: AgentHandle,
    dir: tempfile::TempDir,
    store: tempfile::TempDir,
}

async fn harness(script: Vec<Reply>, kind: ProviderKind) -> Harness {
    let mock = MockLlm::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "version 1\n").unwrap();
    let store = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, kind);
    let results = ToolResultStore::new(store.path().join("results"));
    let agent =
        spawn(support::agent::config(&provider, dir.path(), results, ApprovalMode::FullAuto).with_max_iterations(50));
    Harness {
        mock,
        agent,
        dir,
        store,
    }
}

impl Harness {
    async fn turn(&mut self, text: &str) -> Vec<Event> {
        self.agent.ops.send(Op::UserTurn { text: text.into() }).unwrap();
        let mut events = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(60), self.agent.events.recv())
                .await
                .expect("an event within 60 s")
                .expect("the agent is running");
            let done = matches!(event, Event::TurnFinished { .. });
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

fn ends(events: &[Event]) -> Vec<(String, bool, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd {
                output,
                full_output_path,
                ..
            } => Some((output.text.clone(), output.is_error, full_output_path.clone())),
            _ => None,
        })
        .collect()
}

fn finished(events: &[Event]) -> TurnEnd {
    events
        .iter()
        .find_map(|e| match e {
            Event::TurnFinished { reason } => Some(reason.clone()),
            _ => None,
        })
        .unwrap()
}

/// The last tool message the model received in request `n` (OpenAI format).
fn last_tool_result(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_command_output_is_kept_whole_and_the_model_gets_head_tail_and_path() {
    let script = vec![
        Reply::tool("exec", json!({"command": "seq 1 200000"})),
        Reply::text("counted"),
    ];
    let mut h = harness(script, ProviderKind::OpenAi).await;
    let events = h.turn("count").await;
    assert_eq!(finished(&events), TurnEnd::Completed);
    let (text, is_error, path) = ends(&events).remove(0);
    assert!(!is_error, "{text}");
    let path = path.expect("the whole output is kept");
    assert!(std::path::Path::new(&path).starts_with(h.store.path()), "{path}");
    let whole = std::fs::read_to_string(&path).unwrap();
    let expected: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(whole.len(), expected.len());
    assert!(whole == expected, "the stored file is the whole output");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    // The model: the head, the tail, the exit code and where the rest is.
    let seen = last_tool_result(&h.mock.requests()[1]);
    assert!(seen.starts_with("1\n2\n3\n"), "{}", &seen[..50]);
    assert!(seen.contains("\n200000\n") && seen.contains("Exit code: 0"), "{seen}");
    assert!(seen.contains(&path) && seen.contains("saved whole"), "{seen}");
    assert!(seen.len() < 17_000, "{}", seen.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stored_output_pages_with_read_file() {
    let script = vec![
        Reply::tool("exec", json!({"command": "seq 1 100000"})),
        Reply::text("ok"),
    ];
    let mut h = harness(script, ProviderKind::OpenAi).await;
    let events = h.turn("count").await;
    let path = ends(&events).remove(0).2.unwrap();
    h.mock.push(Reply::tool(
        "read_file",
        json!({"path": path, "offset": 54321, "limit": 2}),
    ));
    h.mock.push(Reply::text("read"));
    let events = h.turn("read the middle").await;
    let (text, is_error, _) = ends(&events).remove(0);
    assert!(!is_error && text.contains("54321") && text.contains("54322"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_test_command_runs_after_every_fix() {
    let test = || Reply::tool("exec", json!({"command": "cat notes.txt"}));
    let fix = |n: u32| {
        Reply::tool(
            "write_file",
            json!({"path": "notes.txt", "content": format!("version {n}\n")}),
        )
    };
    let script = vec![test(), fix(2), test(), fix(3), test(), test(), Reply::text("done")];
    let mut h = harness(script, ProviderKind::OpenAi).await;
    let events = h.turn("fix it").await;
    assert_eq!(finished(&events), TurnEnd::Completed);
    let outputs: Vec<String> = ends(&events).into_iter().map(|(text, _, _)| text).collect();
    assert_eq!(outputs.len(), 6);
    assert!(outputs[0].contains("version 1"));
    assert!(outputs[2].contains("version 2"));
    assert!(
        outputs[4].contains("version 3") && outputs[5].contains("version 3"),
        "{outputs:?}"
    );
    assert!(outputs.iter().all(|o| !o.contains("refused")), "{outputs:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_is_refused_only_while_nothing_changed() {
    let read = || Reply::tool("read_file", json!({"path": "notes.txt"}));
    let script = vec![
        read(),
        read(),
        read(),
        Reply::tool("exec", json!({"command": "echo 'version 2' > notes.txt"})),
        read(),
        read(),
        Reply::text("done"),
    ];
    let mut h = harness(script, ProviderKind::OpenAi).await;
    let events = h.turn("read").await;
    let outputs = ends(&events);
    assert!(
        outputs[2].1 && outputs[2].0.contains("nothing that could change"),
        "{:?}",
        outputs[2]
    );
    assert!(!outputs[4].1 && outputs[4].0.contains("version 2"), "{:?}", outputs[4]);
    assert!(!outputs[5].1, "{:?}", outputs[5]);
    assert!(h.dir.path().join("notes.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_turn_sends_every_message_and_answers_every_call() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let mut script: Vec<Reply> = (0..40)
            .map(|i| Reply::tool("list_dir", json!({"path": ".", "max_entries": 10 + i})))
            .collect();
        script.push(Reply::text("listed"));
        let mut h = harness(script, kind).await;
        let events = h.turn("list").await;
        assert_eq!(finished(&events), TurnEnd::Completed);
        let requests = h.mock.requests();
        assert_eq!(requests.len(), 41);
        for (n, request) in requests.iter().enumerate() {
            let messages = request["messages"].as_array().unwrap();
            let expected = match kind {
                // system, user, then an assistant message and a result per step
                ProviderKind::OpenAi => 2 + 2 * n,
                // user, then per step an assistant message and a user message holding the result
                ProviderKind::Anthropic => 1 + 2 * n,
            };
            assert_eq!(messages.len(), expected, "{kind} request {n}");
        }
    }
}
