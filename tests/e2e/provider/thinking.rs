//! Models that think, over real HTTP against the scripted model: Anthropic extended thinking through an agent's
//! tool-use loop and a resumed session, OpenAI `reasoning_effort`, and the two failures that must not reach (or keep
//! reaching) the network: no key for a public endpoint, and a host name that does not resolve.

use std::time::Duration;

use serde_json::{Value, json};
use tern::agent::spawn;
use tern::protocol::{ApprovalMode, Event, Message, Op, ReasoningBlock};
use tern::provider::{ProviderError, ProviderKind, ReasoningEffort, build};
use tern::session::{SessionLog, SessionMeta, ToolResultStore};

use super::{complete, config};
use crate::support;
use crate::support::mock_llm::{MockLlm, Reply};

/// Runs one user turn to its end and returns its events.
pub(super) async fn turn(agent: &mut tern::agent::AgentHandle, text: &str) -> Vec<Event> {
    agent.ops.send(Op::UserTurn { text: text.into() }).unwrap();
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), agent.events.recv())
            .await
            .expect("an event within 20 s")
            .expect("the agent is running");
        let done = matches!(event, Event::TurnFinished { .. });
        events.push(event);
        if done {
            return events;
        }
    }
}

pub(super) fn reasoning_shown(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ReasoningDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The request shapes of <https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking>: `thinking` with
/// `budget_tokens` below `max_tokens` on every request, and in the request that carries the tool result the
/// assistant message starting with its unmodified, signed thinking block. The blocks are recorded in the session
/// log and a resumed session sends them again.
#[tokio::test]
async fn anthropic_thinking_blocks_survive_the_tool_loop_and_a_resume() {
    let mock = MockLlm::start(vec![
        Reply::ReasoningAndToolCalls(
            "I should read hello.txt first.".into(),
            vec![("read_file".into(), json!({"path": "hello.txt"}))],
        ),
        Reply::Reasoning {
            reasoning: "It greets the world.".into(),
            text: "It says hello world.".into(),
        },
        Reply::text("Still here."),
    ])
    .await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("hello.txt"), "hello world\n").unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut provider = support::agent::provider(&mock, ProviderKind::Anthropic);
    provider.thinking.budget = Some(2048);
    let path = SessionLog::path_for(data.path(), "s1");
    let meta = SessionMeta {
        id: "s1".into(),
        workspace: work.path().display().to_string(),
        provider: "anthropic".into(),
        model: "test-model".into(),
        forked_from: None,
        forked_messages: None,
    };
    let results = || ToolResultStore::new(data.path().join("results"));
    let mut agent = spawn(
        support::agent::config(&provider, work.path(), results(), ApprovalMode::AutoEdit)
            .with_log(Some(SessionLog::create(&path, &meta).unwrap())),
    );
    let events = turn(&mut agent, "What does hello.txt say?").await;
    assert_eq!(
        reasoning_shown(&events),
        "I should read hello.txt first.It greets the world."
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for body in &requests {
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
        assert!(body["max_tokens"].as_u64().unwrap() > 2048, "{}", body["max_tokens"]);
        assert!(body.get("temperature").is_none() && body.get("top_p").is_none());
    }
    let assistant = &requests[1]["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "I should read hello.txt first.", "signature": "mock-signature"})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    assert_eq!(requests[1]["messages"][2]["content"][0]["type"], "tool_result");
    drop(agent);

    // The session log holds the blocks; a session resumed from it sends them again.
    let loaded = tern::session::log::load(&path).unwrap();
    let kept: Vec<&ReasoningBlock> = loaded
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { reasoning: Some(r), .. } => Some(r.blocks.iter()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(
        kept,
        vec![
            &ReasoningBlock::Thinking {
                thinking: "I should read hello.txt first.".into(),
                signature: "mock-signature".into()
            },
            &ReasoningBlock::Thinking {
                thinking: "It greets the world.".into(),
                signature: "mock-signature".into()
            },
        ]
    );
    let mut resumed = spawn(
        support::agent::config(&provider, work.path(), results(), ApprovalMode::AutoEdit)
            .with_history(loaded.messages.clone()),
    );
    turn(&mut resumed, "Anything else?").await;
    let body = mock.requests().pop().unwrap();
    let thinking: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "thinking")
        .collect();
    assert_eq!(thinking.len(), 2, "{body}");
}

/// `reasoning_effort` as <https://platform.openai.com/docs/api-reference/chat/create> documents it: a string, sent to
/// reasoning models only (gpt-4.1 refuses it).
#[tokio::test]
async fn reasoning_effort_goes_to_openai_reasoning_models_only() {
    let mock = MockLlm::start(vec![Reply::text("a"), Reply::text("b"), Reply::text("c")]).await;
    for (model, expected) in [
        ("o4-mini", Some("high")),
        ("gpt-4.1", None),
        ("local-model", Some("high")),
    ] {
        let mut cfg = config(ProviderKind::OpenAi, &mock);
        cfg.model = model.into();
        cfg.thinking.effort = Some(ReasoningEffort::High);
        let (result, _) = complete(build(&cfg).unwrap().as_ref()).await;
        result.unwrap();
        let body = mock.requests().pop().unwrap();
        assert_eq!(body["model"], model);
        assert_eq!(
            body.get("reasoning_effort").and_then(Value::as_str),
            expected,
            "{model}"
        );
    }
}

#[tokio::test]
async fn a_host_that_does_not_resolve_fails_at_once() {
    let mock = MockLlm::start(vec![]).await;
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let mut cfg = config(kind, &mock);
        // `.invalid` never resolves (RFC 2606).
        cfg.base_url = "http://tern-test-host.invalid/v1".into();
        let (result, events) = complete(build(&cfg).unwrap().as_ref()).await;
        let err = result.unwrap_err();
        assert!(matches!(err, ProviderError::Dns(_)), "{err:?}");
        assert!(err.to_string().contains("cannot resolve"), "{err}");
        assert!(events.is_empty(), "no retry was announced: {events:?}");
    }
    assert_eq!(mock.request_count(), 0);
}

#[tokio::test]
async fn no_key_for_a_public_endpoint_stops_before_any_request() {
    let scratch = support::tern::Scratch::new();
    for (provider, variable) in [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")] {
        let out = scratch.run(None, &["--provider", provider, "run", "hi"]).await;
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "no API key: set {variable} or api_key in config, or use --demo"
            )),
            "{err}"
        );
        assert!(!err.contains("attempt"), "nothing was retried: {err}");
    }
}

/// The cells the TUI shows for one turn: (kind, text, folded) with tool calls as their names.
fn cells_of(events: Vec<Event>) -> Vec<(String, String, bool)> {
    use tern::tui::state::{AppState, CellKind};
    let mut state = AppState::new();
    for event in events {
        state.apply(event);
    }
    state
        .cells
        .iter()
        .map(|cell| match &cell.kind {
            CellKind::User(text) => ("user".into(), text.clone(), false),
            CellKind::Assistant { text, .. } => ("assistant".into(), text.clone(), false),
            CellKind::Reasoning { text, expanded, .. } => ("reasoning".into(), text.clone(), !expanded),
            CellKind::Tools(calls) => {
                let names: Vec<&str> = calls.iter().map(|&i| state.calls[i].name.as_str()).collect();
                ("tools".into(), names.join(","), false)
            }
            other => ("other".into(), format!("{other:?}"), false),
        })
        .collect()
}

/// Reasoning shows the same, folded, whichever API it came from: Chat Completions' `reasoning_content`, Anthropic's
/// thinking blocks, or a Responses reasoning summary.
#[tokio::test]
async fn reasoning_is_shown_alike_from_every_wire_format() {
    let mut shown = Vec::new();
    for (kind, wire_api) in [
        (ProviderKind::OpenAi, tern::provider::WireApi::Chat),
        (ProviderKind::OpenAi, tern::provider::WireApi::Responses),
        (ProviderKind::Anthropic, tern::provider::WireApi::Chat),
    ] {
        let mock = MockLlm::start(vec![
            Reply::ReasoningAndToolCalls(
                "Look at the file.".into(),
                vec![("read_file".into(), json!({"path": "hello.txt"}))],
            ),
            Reply::Reasoning {
                reasoning: "It greets.".into(),
                text: "It says hello.".into(),
            },
        ])
        .await;
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("hello.txt"), "hello world\n").unwrap();
        let store = tempfile::tempdir().unwrap();
        let mut provider = support::agent::provider(&mock, kind);
        provider.wire_api = wire_api;
        provider.thinking.budget = Some(1024);
        let results = ToolResultStore::new(store.path().join("results"));
        let mut agent = spawn(support::agent::config(
            &provider,
            work.path(),
            results,
            ApprovalMode::AutoEdit,
        ));
        let events = turn(&mut agent, "What does it say?").await;
        shown.push((kind, wire_api, cells_of(events)));
    }
    let (_, _, first) = &shown[0];
    assert!(
        first
            .iter()
            .filter(|(kind, ..)| kind == "reasoning")
            .map(|(_, text, folded)| (text.as_str(), *folded))
            .eq([("Look at the file.", true), ("It greets.", true)]),
        "{first:?}"
    );
    for (kind, wire_api, cells) in &shown[1..] {
        assert_eq!(cells, first, "{kind} {wire_api:?}");
    }
}
