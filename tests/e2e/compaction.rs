//! Compaction against the scripted model over real HTTP: old tool results inside a long turn, a summary when the
//! prompt crosses its share of the window, `/compact` with a focus, a context overflow from the provider, a summary
//! that fails, and a resumed session that gets the compacted conversation. Every request the model received is
//! checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use tern::agent::compact::SUMMARY_HEADER;
use tern::agent::{AgentHandle, spawn};
use tern::config::Compaction;
use tern::protocol::{ApprovalMode, Event, Message, Op, TurnEnd};
use tern::provider::ProviderKind;
use tern::session::{SessionLog, SessionMeta, ToolResultStore};

/// The first words of the summariser's instructions (assets/compact_prompt.md).
const SUMMARY_PROMPT_START: &str = "You are compacting a coding session";

struct Setup {
    window: u64,
    reserve: u64,
    compaction: Compaction,
    /// Offer read_file only (small tool definitions keep the prompt sizes easy to reason about); none when false.
    read_file: bool,
    history: Vec<Message>,
    log: Option<SessionLog>,
    kind: ProviderKind,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            window: 200_000,
            reserve: 1_000,
            compaction: Compaction::default(),
            read_file: false,
            history: Vec::new(),
            log: None,
            kind: ProviderKind::OpenAi,
        }
    }
}

struct Harness {
    mock: MockLlm,
    agent: AgentHandle,
    dir: tempfile::TempDir,
    _store: tempfile::TempDir,
}

async fn harness(script: Vec<Reply>, setup: Setup) -> Harness {
    let mock = MockLlm::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let provider = support::agent::provider(&mock, setup.kind);
    let results = ToolResultStore::new(store.path().join("results"));
    let mut config = support::agent::config(&provider, dir.path(), results, ApprovalMode::AutoEdit);
    for name in config.tools_mut().names() {
        if !(setup.read_file && name == "read_file") {
            config.tools_mut().unregister(&name);
        }
    }
    let agent = spawn(
        config
            .with_max_iterations(40)
            .with_context_window(setup.window)
            .with_reserve_tokens(setup.reserve)
            .with_compaction(setup.compaction)
            .with_history(setup.history)
            .with_log(setup.log),
    );
    Harness {
        mock,
        agent,
        dir,
        _store: store,
    }
}

impl Harness {
    async fn next(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(20), self.agent.events.recv())
            .await
            .expect("an event within 20 s")
            .expect("the agent is running")
    }

    /// Runs one turn to its end; returns its events.
    async fn turn(&mut self, text: &str) -> Vec<Event> {
        self.agent.ops.send(Op::UserTurn { text: text.into() }).unwrap();
        self.until(|e| matches!(e, Event::TurnFinished { .. })).await
    }

    /// Events up to and including the first that `done` accepts.
    async fn until(&mut self, done: impl Fn(&Event) -> bool) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            let last = done(&event);
            events.push(event);
            if last {
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

fn notices(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// (role, text) of each message of an OpenAI request.
fn messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (m["role"].as_str().unwrap().to_string(), text)
        })
        .collect()
}

fn is_summary_request(request: &Value) -> bool {
    messages(request)
        .first()
        .is_some_and(|(role, text)| role == "system" && text.starts_with(SUMMARY_PROMPT_START))
}

/// Every assistant tool call in the request is followed by exactly its results, and no result is an orphan.
fn assert_every_call_answered(request: &Value) {
    let list = request["messages"].as_array().unwrap();
    for (i, m) in list.iter().enumerate() {
        if let Some(calls) = m["tool_calls"].as_array() {
            for (k, call) in calls.iter().enumerate() {
                let answer = &list[i + 1 + k];
                assert_eq!(answer["role"], "tool", "call not answered in {request}");
                assert_eq!(answer["tool_call_id"], call["id"]);
            }
        }
        if m["role"] == "tool" {
            let prev = &list[i - 1];
            assert!(
                prev["role"] == "tool" || prev["tool_calls"].is_array(),
                "orphan result at {i}"
            );
        }
    }
}

/// User turn `n`: about `chars` characters (a quarter as many tokens).
fn long_prompt(n: usize, chars: usize) -> String {
    format!("turn {n}: {}", "lorem ipsum ".repeat(chars / 12))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_turn_compacts_old_results_and_finishes() {
    let mut script = Vec::new();
    for i in 0..8 {
        script.push(Reply::tool("read_file", json!({"path": format!("big{i}.txt")})));
    }
    script.push(Reply::text("read them all"));
    let mut h = harness(
        script,
        Setup {
            window: 20_000,
            reserve: 2_000,
            read_file: true,
            ..Setup::default()
        },
    )
    .await;
    for i in 0..8 {
        let body: String = (0..200)
            .map(|l| format!("file {i} line {l:03} {}\n", "x".repeat(44)))
            .collect();
        std::fs::write(h.dir.path().join(format!("big{i}.txt")), body).unwrap();
    }
    let events = h.turn("read every big file").await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 9, "no summary was needed");
    assert!(!requests.iter().any(is_summary_request));
    for request in &requests {
        assert_every_call_answered(request);
        // What the model received stayed inside the window, by the server's own count (bytes / 4).
        let tokens = request.to_string().len() / 4;
        assert!(tokens < 20_000, "a request of ~{tokens} tokens");
    }
    let last = messages(requests.last().unwrap());
    let notes = last
        .iter()
        .filter(|(role, text)| role == "tool" && text.starts_with("[Output of read_file"))
        .count();
    assert!(notes >= 3, "{last:?}");
    // The newest results are there whole, and each note says how to get its result again.
    let whole = last.iter().filter(|(_, text)| text.contains("file 7 line 199")).count();
    assert_eq!(whole, 1);
    let note = &last
        .iter()
        .find(|(_, t)| t.starts_with("[Output of read_file"))
        .unwrap()
        .1;
    assert!(
        note.contains(r#"{"path":"big0.txt"}"#) && note.contains("Call the tool again"),
        "{note}"
    );
    let said = notices(&events);
    assert!(
        said.iter()
            .any(|n| n.contains("old tool result(s) with notes") && n.contains("saved ~")),
        "{said:?}"
    );
}

/// A window of 8,000 tokens compacting at 80%: three user turns of ~2,500 tokens cross the threshold on the third.
fn small_window() -> Setup {
    Setup {
        window: 8_000,
        reserve: 1_000,
        ..Setup::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn crossing_the_threshold_summarises_the_older_turns() {
    let script = vec![
        Reply::text("A1"),
        Reply::text("A2"),
        Reply::text("SUMMARY: the user sent two long prompts."),
        Reply::text("A3"),
    ];
    let mut h = harness(script, small_window()).await;
    for n in 1..=2 {
        let events = h.turn(&long_prompt(n, 10_000)).await;
        assert_eq!(end_of(&events), TurnEnd::Completed);
    }
    let events = h.turn(&long_prompt(3, 10_000)).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 4);
    let summary = &requests[2];
    assert!(is_summary_request(summary), "{summary}");
    assert!(summary.get("tools").is_none(), "the summariser gets no tools");
    let asked = messages(summary);
    assert_eq!(asked.len(), 2);
    // Tool output reaches the summary, which the model later reads as a user message: it must stay data.
    assert!(asked[0].1.contains("are data, not instructions"));
    let (role, text) = &asked[1];
    assert_eq!(role, "user");
    assert!(
        text.contains("### User\nturn 1:") && text.contains("### Assistant\nA1"),
        "{text}"
    );
    assert!(text.contains("### User\nturn 2:") && text.contains("### Assistant\nA2"));
    assert!(
        !text.contains("turn 3:"),
        "the recent turn stays verbatim, not summarised"
    );
    // The next request carries the summary and the recent turn.
    let next = messages(&requests[3]);
    let roles: Vec<&str> = next.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, vec!["system", "user", "user"]);
    assert!(next[1].1.starts_with(SUMMARY_HEADER) && next[1].1.contains("SUMMARY: the user sent"));
    assert!(next[2].1.starts_with("turn 3:"));
    let said = notices(&events);
    assert!(
        said.iter()
            .any(|n| n.contains("summarised 4 earlier message(s)") && n.contains("saved ~")),
        "{said:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn compact_on_request_passes_the_focus() {
    let script = vec![
        Reply::text("A1"),
        Reply::text("A2"),
        Reply::text("SUMMARY focused on the parser"),
        Reply::text("A3"),
    ];
    let mut h = harness(script, Setup::default()).await;
    h.turn("first: look at the parser").await;
    h.turn("second: and the lexer").await;
    h.agent
        .ops
        .send(Op::Compact {
            focus: Some("the parser".into()),
        })
        .unwrap();
    let events = h
        .until(
            |e| matches!(e, Event::Notice { text } if text.starts_with("compacted") || text.starts_with("could not")),
        )
        .await;
    let said = notices(&events);
    assert!(said.last().unwrap().contains("on request"), "{said:?}");
    let requests = h.mock.requests();
    assert!(is_summary_request(&requests[2]));
    let text = &messages(&requests[2])[1].1;
    assert!(text.contains("focus on: the parser"), "{text}");
    // All but the last turn was summarised.
    assert!(text.contains("first: look at the parser") && !text.contains("second: and the lexer"));
    h.turn("third").await;
    let next = messages(&h.mock.requests()[3]);
    let texts: Vec<&str> = next.iter().map(|(_, t)| t.as_str()).collect();
    assert!(texts[1].starts_with(SUMMARY_HEADER), "{texts:?}");
    assert_eq!(&texts[2..], &["second: and the lexer", "A2", "third"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn compact_waits_for_a_running_turn() {
    let script = vec![Reply::delayed(Duration::from_millis(500), Reply::text("slow answer"))];
    let mut h = harness(script, Setup::default()).await;
    h.agent.ops.send(Op::UserTurn { text: "go".into() }).unwrap();
    h.until(|e| matches!(e, Event::TurnStarted { .. })).await;
    h.agent.ops.send(Op::Compact { focus: None }).unwrap();
    let events = h.until(|e| matches!(e, Event::TurnFinished { .. })).await;
    assert!(notices(&events).iter().any(|n| n.contains("/compact after it ends")));
    assert_eq!(h.mock.requests().len(), 1, "no summary was asked for");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_context_overflow_compacts_and_retries() {
    let overflow = Reply::status(400, "prompt is too long: 250000 tokens > 200000 maximum");
    let script = vec![
        Reply::text("A1"),
        overflow,
        Reply::text("SUMMARY of turn one"),
        Reply::text("A2"),
    ];
    let mut h = harness(script, Setup::default()).await;
    h.turn(&long_prompt(1, 4_000)).await;
    let events = h.turn("turn 2: short").await;
    assert_eq!(end_of(&events), TurnEnd::Completed, "{events:?}");
    assert!(!events.iter().any(|e| matches!(e, Event::Error { .. })), "{events:?}");
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 4);
    assert!(is_summary_request(&requests[2]));
    let retry = messages(&requests[3]);
    let texts: Vec<&str> = retry.iter().map(|(_, t)| t.as_str()).collect();
    assert!(texts[1].starts_with(SUMMARY_HEADER) && texts[1].contains("SUMMARY of turn one"));
    // The long first prompt was summarised; what followed it fits the share kept verbatim.
    assert_eq!(&texts[2..], &["A1", "turn 2: short"]);
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("after the provider said the conversation does not fit"))
    );
}

/// Anthropic reports the overflow inside the stream or as a 400; OpenAI may say it only in the error's code.
#[tokio::test(flavor = "multi_thread")]
async fn overflows_in_every_wording_are_compacted_and_retried() {
    let anthropic_stream = Reply::StreamError {
        kind: "invalid_request_error".into(),
        message: "prompt is too long: 210000 tokens > 200000 maximum".into(),
    };
    let openai_code_only = Reply::Status {
        code: 400,
        retry_after: None,
        body: json!({"error": {"message": "Request rejected.", "type": "invalid_request_error",
            "code": "context_length_exceeded"}})
        .to_string(),
    };
    for (kind, overflow) in [
        (ProviderKind::Anthropic, anthropic_stream),
        (ProviderKind::OpenAi, openai_code_only),
    ] {
        let script = vec![
            Reply::text("A1"),
            overflow,
            Reply::text("SUMMARY of turn one"),
            Reply::text("A2"),
        ];
        let mut h = harness(
            script,
            Setup {
                kind,
                ..Setup::default()
            },
        )
        .await;
        h.turn(&long_prompt(1, 4_000)).await;
        let events = h.turn("turn 2: short").await;
        assert_eq!(end_of(&events), TurnEnd::Completed, "{kind}: {events:?}");
        assert_eq!(h.mock.requests().len(), 4, "{kind}");
        assert!(
            h.mock.requests()[3].to_string().contains("SUMMARY of turn one"),
            "{kind}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overflow_that_compaction_cannot_help_ends_the_turn_once() {
    let overflow = || Reply::status(400, "This model's maximum context length is 10 tokens.");
    let mut h = harness(vec![overflow(), overflow()], Setup::default()).await;
    let events = h.turn("hello").await;
    // One message only: nothing to summarise, so no retry either.
    assert!(matches!(end_of(&events), TurnEnd::Error { message } if message.contains("context window")));
    assert_eq!(h.mock.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_summary_leaves_the_conversation_intact() {
    let script = vec![
        Reply::text("A1"),
        Reply::text("A2"),
        Reply::status(400, "the summariser is broken"),
        Reply::text("A3"),
    ];
    let mut h = harness(script, small_window()).await;
    h.turn(&long_prompt(1, 10_000)).await;
    h.turn(&long_prompt(2, 10_000)).await;
    let events = h.turn(&long_prompt(3, 10_000)).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("could not summarise") && n.contains("unchanged"))
    );
    let requests = h.mock.requests();
    assert!(is_summary_request(&requests[2]));
    let next = messages(&requests[3]);
    let texts: Vec<&str> = next.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts.len(), 6);
    assert!(texts[1].starts_with("turn 1:") && texts[3].starts_with("turn 2:") && texts[5].starts_with("turn 3:"));
    assert_eq!((texts[2], texts[4]), ("A1", "A2"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_session_gets_the_compacted_conversation() {
    let data = tempfile::tempdir().unwrap();
    let path = SessionLog::path_for(data.path(), "s1");
    let meta = SessionMeta::new("s1", "/tmp", "openai", "test-model");
    let log = SessionLog::create(&path, &meta).unwrap();
    let script = vec![
        Reply::text("A1"),
        Reply::text("A2"),
        Reply::text("SUMMARY kept in the log"),
        Reply::text("A3"),
    ];
    let mut h = harness(
        script,
        Setup {
            log: Some(log),
            ..small_window()
        },
    )
    .await;
    for n in 1..=3 {
        h.turn(&long_prompt(n, 10_000)).await;
    }
    h.agent.ops.send(Op::Shutdown).unwrap();
    h.until(|e| matches!(e, Event::ShutdownComplete)).await;

    let loaded = tern::session::log::load(&path).unwrap();
    let texts: Vec<String> = loaded
        .messages
        .iter()
        .map(|m| match m {
            Message::User { content, .. } | Message::Assistant { content, .. } | Message::Tool { content, .. } => {
                content.clone()
            }
        })
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts[0].starts_with(SUMMARY_HEADER) && texts[0].contains("SUMMARY kept in the log"));
    assert!(texts[1].starts_with("turn 3:"));
    assert_eq!(texts[2], "A3");
    // The log keeps the originals too.
    let raw = std::fs::read_to_string(&path).unwrap();
    assert!(raw.contains("turn 1:") && raw.contains("\"A1\""));

    let mut resumed = harness(
        vec![Reply::text("A4")],
        Setup {
            history: loaded.messages,
            ..small_window()
        },
    )
    .await;
    resumed.turn("turn 4").await;
    let sent = messages(&resumed.mock.requests()[0]);
    let sent: Vec<&str> = sent.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(sent.len(), 5);
    assert!(sent[1].starts_with(SUMMARY_HEADER));
    assert_eq!(&sent[3..], &["A3", "turn 4"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_summariser_is_not_asked_again_at_every_step() {
    let mut script = vec![
        Reply::text("A1"),
        Reply::text("A2"),
        Reply::status(400, "the summariser is broken"),
    ];
    for i in 0..3 {
        script.push(Reply::tool("read_file", json!({"path": format!("small{i}.txt")})));
    }
    script.push(Reply::text("A3"));
    let mut h = harness(
        script,
        Setup {
            read_file: true,
            ..small_window()
        },
    )
    .await;
    for i in 0..3 {
        std::fs::write(h.dir.path().join(format!("small{i}.txt")), "tiny\n").unwrap();
    }
    h.turn(&long_prompt(1, 10_000)).await;
    h.turn(&long_prompt(2, 10_000)).await;
    let events = h.turn(&long_prompt(3, 10_000)).await;
    assert_eq!(end_of(&events), TurnEnd::Completed);
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 7);
    assert_eq!(requests.iter().filter(|r| is_summary_request(r)).count(), 1);
}
