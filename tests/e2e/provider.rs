//! The providers against the scripted model server over real HTTP on 127.0.0.1: streaming, tool calls, faults,
//! retries and cancellation; `provider/` holds the Responses API and the models that think.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mock_llm::{MockLlm, Reply};
use tern::protocol::ToolDefinition;
use tern::protocol::{FinishReason, Message, ToolCall, Usage};
use tern::provider::{
    ChatRequest, Completion, Provider, ProviderConfig, ProviderError, ProviderEvent, ProviderKind, RetryPolicy, build,
};
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];
const KEY: &str = "sk-test-do-not-leak";

fn config(kind: ProviderKind, mock: &MockLlm) -> ProviderConfig {
    ProviderConfig {
        kind,
        base_url: match kind {
            ProviderKind::OpenAi => mock.openai_base_url(),
            ProviderKind::Anthropic => mock.anthropic_base_url(),
        },
        api_key: Some(KEY.into()),
        model: "mock-model".into(),
        max_tokens: None,
        retry: RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(2),
            idle_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(2),
        },
        headers: Vec::new(),
        ..ProviderConfig::new(kind, "mock-model")
    }
}

fn provider(kind: ProviderKind, mock: &MockLlm) -> Arc<dyn Provider> {
    build(&config(kind, mock)).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: String::new(),
        system: "You are a test.".into(),
        messages: vec![Message::User {
            content: "Hello".into(),
            images: Vec::new(),
        }],
        tools: vec![ToolDefinition {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        max_tokens: None,
    }
}

async fn complete(provider: &dyn Provider) -> (Result<Completion, ProviderError>, Vec<ProviderEvent>) {
    let (tx, mut rx) = unbounded_channel();
    let result = provider
        .complete(&request().prepared(), &tx, &CancellationToken::new())
        .await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        events.push(event);
    }
    (result, events)
}

/// The text the consumer shows: deltas, with those of failed attempts discarded at each `Retrying`.
fn shown_text(events: &[ProviderEvent]) -> String {
    let mut text = String::new();
    for event in events {
        match event {
            ProviderEvent::TextDelta(t) => text.push_str(t),
            ProviderEvent::Retrying { .. } => text.clear(),
            _ => {}
        }
    }
    text
}

fn retries(events: &[ProviderEvent]) -> Vec<(u32, Duration, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Retrying {
                attempt, delay, reason, ..
            } => Some((*attempt, *delay, reason.clone())),
            _ => None,
        })
        .collect()
}

/// The usage the mock reports for a request body of `bytes` and an output of `chars` characters.
fn mock_usage(bytes: usize, chars: usize) -> Usage {
    let input = bytes.div_ceil(4) as u64;
    Usage {
        input_tokens: input,
        output_tokens: chars.div_ceil(4).max(1) as u64,
        cache_read_tokens: input / 2,
        cache_write_tokens: 0,
    }
}

#[tokio::test]
async fn text_reasoning_and_usage_stream_in_both_formats() {
    for kind in KINDS {
        let reasoning = "Thinking about ünïcode 🙂 carefully.";
        let text = "Hello wörld — a reply in 🦀 several words.";
        let mock = MockLlm::start(vec![Reply::Reasoning {
            reasoning: reasoning.into(),
            text: text.into(),
        }])
        .await;
        let (result, events) = complete(provider(kind, &mock).as_ref()).await;
        let completion = result.unwrap();
        assert_eq!(completion.content, text, "{kind}");
        assert_eq!(completion.reasoning.as_ref().unwrap().text, reasoning, "{kind}");
        assert_eq!(completion.finish_reason, FinishReason::Stop);
        let text_deltas = events
            .iter()
            .filter(|e| matches!(e, ProviderEvent::TextDelta(_)))
            .count();
        assert!(text_deltas >= 5, "{kind}: streamed in pieces, got {text_deltas}");
        assert_eq!(shown_text(&events), text);
        let reasoning_shown: String = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::ReasoningDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(reasoning_shown, reasoning);
        let recorded = mock.recorded();
        assert_eq!(recorded.len(), 1);
        let chars = reasoning.chars().count() + text.chars().count();
        assert_eq!(completion.usage, mock_usage(recorded[0].body_bytes, chars), "{kind}");
        match kind {
            ProviderKind::OpenAi => {
                assert_eq!(completion.reasoning.unwrap().signature, None);
                assert_eq!(recorded[0].path, "/v1/chat/completions");
                assert_eq!(
                    recorded[0].header("authorization"),
                    Some(format!("Bearer {KEY}").as_str())
                );
                let body = &recorded[0].body;
                assert_eq!(body["stream"], json!(true));
                assert_eq!(
                    body["messages"][0],
                    json!({"role": "system", "content": "You are a test."})
                );
                assert_eq!(body["tools"][0]["function"]["name"], json!("read_file"));
            }
            ProviderKind::Anthropic => {
                assert!(matches!(
                    completion.reasoning.unwrap().blocks.as_slice(),
                    [tern::protocol::ReasoningBlock::Thinking { signature, .. }] if signature == "mock-signature"
                ));
                assert_eq!(recorded[0].path, "/v1/messages");
                assert_eq!(recorded[0].header("x-api-key"), Some(KEY));
                assert_eq!(recorded[0].header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(recorded[0].header("authorization"), None);
                let body = &recorded[0].body;
                assert_eq!(body["max_tokens"], json!(8192));
                assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
                assert_eq!(body["tools"][0]["cache_control"], json!({"type": "ephemeral"}));
            }
        }
    }
}

#[tokio::test]
async fn parallel_tool_calls_with_split_arguments() {
    for kind in KINDS {
        let calls = vec![
            ("read_file".to_string(), json!({"path": "src/main.rs", "offset": 10})),
            ("grep".to_string(), json!({"pattern": "fn main", "glob": "*.rs"})),
            ("list_dir".to_string(), json!({})),
        ];
        let mock = MockLlm::start(vec![
            Reply::TextAndToolCalls("Let me look.".into(), calls.clone()),
            Reply::tool("read_file", json!({"path": "ä.txt"})),
        ])
        .await;
        let provider = provider(kind, &mock);
        let (result, events) = complete(provider.as_ref()).await;
        let completion = result.unwrap();
        assert_eq!(completion.content, "Let me look.");
        assert_eq!(completion.finish_reason, FinishReason::ToolCalls, "{kind}");
        let expected: Vec<ToolCall> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| ToolCall {
                id: format!("call_{}", i + 1),
                name: name.clone(),
                arguments: args.clone(),
            })
            .collect();
        assert_eq!(completion.tool_calls, expected, "{kind}");
        let started: Vec<(usize, String, String)> = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::ToolCallStarted { index, id, name } => Some((*index, id.clone(), name.clone())),
                _ => None,
            })
            .collect();
        let expected_started: Vec<(usize, String, String)> = expected
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.id.clone(), c.name.clone()))
            .collect();
        assert_eq!(started, expected_started, "{kind}");

        let (result, _) = complete(provider.as_ref()).await;
        let second = result.unwrap();
        assert_eq!(second.tool_calls[0].id, "call_4");
        assert_eq!(second.tool_calls[0].arguments, json!({"path": "ä.txt"}));
    }
}

#[tokio::test]
async fn invalid_argument_json_is_kept_raw() {
    for kind in KINDS {
        let raw = r#"{"path": "a.rs", "line": 3"#;
        let mock = MockLlm::start(vec![Reply::RawToolArgs("read_file".into(), raw.into())]).await;
        let (result, _) = complete(provider(kind, &mock).as_ref()).await;
        let completion = result.unwrap();
        assert_eq!(completion.tool_calls.len(), 1);
        assert_eq!(completion.tool_calls[0].arguments, Value::String(raw.into()), "{kind}");
    }
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_then_succeeds() {
    let mock = MockLlm::start(vec![Reply::rate_limited(1), Reply::text("after the wait")]).await;
    let started = Instant::now();
    let (result, events) = complete(provider(ProviderKind::OpenAi, &mock).as_ref()).await;
    assert_eq!(result.unwrap().content, "after the wait");
    let retries = retries(&events);
    assert_eq!(retries.len(), 1);
    let (attempt, delay, reason) = &retries[0];
    assert_eq!((*attempt, *delay), (2, Duration::from_secs(1)));
    assert!(
        reason.contains("429") && reason.contains("Rate limit reached"),
        "{reason}"
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(mock.request_count(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff() {
    for kind in KINDS {
        let mock = MockLlm::start(vec![
            Reply::status(500, "internal boom"),
            Reply::status(529, "Overloaded"),
            Reply::text("recovered"),
        ])
        .await;
        let (result, events) = complete(provider(kind, &mock).as_ref()).await;
        assert_eq!(result.unwrap().content, "recovered", "{kind}");
        let retries = retries(&events);
        assert_eq!(retries.iter().map(|r| r.0).collect::<Vec<_>>(), vec![2, 3]);
        assert!(retries[0].2.contains("internal boom"));
        // Full jitter within base 10 ms doubling: at most 10 ms, then 20 ms.
        assert!(retries[0].1 <= Duration::from_millis(10) && retries[1].1 <= Duration::from_millis(20));
        // Every attempt sends the same request.
        let bodies = mock.requests();
        assert_eq!(bodies.len(), 3);
        assert!(bodies.iter().all(|b| *b == bodies[0]));
    }
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_says_how_to_set_the_key() {
    for (kind, env) in [
        (ProviderKind::OpenAi, "OPENAI_API_KEY"),
        (ProviderKind::Anthropic, "ANTHROPIC_API_KEY"),
    ] {
        let mock = MockLlm::start(vec![Reply::status(401, "invalid x-api-key"), Reply::text("never")]).await;
        let (result, events) = complete(provider(kind, &mock).as_ref()).await;
        let err = result.unwrap_err();
        assert!(matches!(err, ProviderError::Http { status: 401, .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains("invalid x-api-key") && message.contains(env),
            "{message}"
        );
        assert!(!message.contains(KEY) && !format!("{err:?}").contains(KEY));
        assert!(retries(&events).is_empty());
        assert_eq!(mock.request_count(), 1);
    }
}

#[tokio::test]
async fn other_client_errors_are_not_retried() {
    let mock = MockLlm::start(vec![Reply::status(400, "messages: field required")]).await;
    let (result, _) = complete(provider(ProviderKind::Anthropic, &mock).as_ref()).await;
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("HTTP 400") && message.contains("messages: field required"),
        "{message}"
    );
    assert_eq!(mock.request_count(), 1);

    let mock = MockLlm::start(vec![Reply::status(404, "model not found")]).await;
    let (result, _) = complete(provider(ProviderKind::OpenAi, &mock).as_ref()).await;
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("model not found") && message.contains("mock-model"),
        "{message}"
    );
    assert_eq!(mock.request_count(), 1);
}

#[tokio::test]
async fn a_dropped_connection_is_retried_and_partial_text_discarded() {
    for kind in KINDS {
        let mock = MockLlm::start(vec![
            Reply::DropMidStream("This answer will be cut".into()),
            Reply::text("The full answer."),
        ])
        .await;
        let (result, events) = complete(provider(kind, &mock).as_ref()).await;
        assert_eq!(result.unwrap().content, "The full answer.", "{kind}");
        let retries = retries(&events);
        assert_eq!(retries.len(), 1, "{kind}");
        assert!(retries[0].2.contains("stream"), "{}", retries[0].2);
        // The cut attempt did deliver text before the Retrying event, which the consumer discards.
        let first_retry = events
            .iter()
            .position(|e| matches!(e, ProviderEvent::Retrying { .. }))
            .unwrap();
        assert!(
            events[..first_retry]
                .iter()
                .any(|e| matches!(e, ProviderEvent::TextDelta(_)))
        );
        assert_eq!(shown_text(&events), "The full answer.");
    }
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout_and_is_retried() {
    for kind in KINDS {
        let mock = MockLlm::start(vec![Reply::Stall("Hmm".into()), Reply::text("Unstuck.")]).await;
        let mut config = config(kind, &mock);
        config.retry.idle_timeout = Duration::from_millis(300);
        let started = Instant::now();
        let (result, events) = complete(build(&config).unwrap().as_ref()).await;
        assert_eq!(result.unwrap().content, "Unstuck.", "{kind}");
        let retries = retries(&events);
        assert_eq!(retries.len(), 1);
        assert!(retries[0].2.contains("idle timeout"), "{}", retries[0].2);
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(3),
            "{elapsed:?}"
        );
    }
}

#[tokio::test]
async fn a_server_that_never_answers_is_stalled_too() {
    let mock = MockLlm::start(vec![
        Reply::delayed(Duration::from_secs(30), Reply::text("too late")),
        Reply::delayed(Duration::from_millis(50), Reply::text("in time")),
    ])
    .await;
    let mut config = config(ProviderKind::OpenAi, &mock);
    config.retry.idle_timeout = Duration::from_millis(300);
    let (result, events) = complete(build(&config).unwrap().as_ref()).await;
    assert_eq!(result.unwrap().content, "in time");
    assert_eq!(retries(&events).len(), 1);
}

#[tokio::test]
async fn garbage_in_the_stream_is_ignored() {
    for kind in KINDS {
        let text = "Still a clean ånswer.";
        let mock = MockLlm::start(vec![Reply::Garbage(text.into())]).await;
        let (result, events) = complete(provider(kind, &mock).as_ref()).await;
        let completion = result.unwrap();
        assert_eq!(completion.content, text, "{kind}");
        assert_eq!(completion.finish_reason, FinishReason::Stop);
        assert!(retries(&events).is_empty());
        assert_eq!(completion.usage.output_tokens, text.chars().count().div_ceil(4) as u64);
    }
}

#[tokio::test]
async fn retries_run_out() {
    for kind in KINDS {
        let mock = MockLlm::start(vec![
            Reply::status(503, "unavailable"),
            Reply::status(503, "unavailable"),
            Reply::status(503, "still unavailable"),
            Reply::text("never reached"),
        ])
        .await;
        let mut config = config(kind, &mock);
        config.retry.max_attempts = 3;
        let (result, events) = complete(build(&config).unwrap().as_ref()).await;
        match result.unwrap_err() {
            ProviderError::RetriesExhausted { attempts, last } => {
                assert_eq!(attempts, 3);
                assert!(last.to_string().contains("still unavailable"));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(retries(&events).len(), 2);
        assert_eq!(mock.request_count(), 3);
    }
}

#[tokio::test]
async fn stream_error_events_overloaded_retried_invalid_not() {
    for kind in KINDS {
        let mock = MockLlm::start(vec![
            Reply::StreamError {
                kind: "overloaded_error".into(),
                message: "Overloaded".into(),
            },
            Reply::text("fine now"),
            Reply::StreamError {
                kind: "invalid_request_error".into(),
                message: "prompt is too long".into(),
            },
        ])
        .await;
        let provider = provider(kind, &mock);
        let (result, events) = complete(provider.as_ref()).await;
        assert_eq!(result.unwrap().content, "fine now", "{kind}");
        assert_eq!(retries(&events).len(), 1);
        let (result, _) = complete(provider.as_ref()).await;
        let message = result.unwrap_err().to_string();
        assert!(message.contains("prompt is too long"), "{message}");
        assert_eq!(mock.request_count(), 3);
    }
}

#[tokio::test]
async fn cancellation_during_a_stall_returns_at_once() {
    for kind in KINDS {
        let mock = MockLlm::start(vec![Reply::Stall("Working on".into())]).await;
        let mut config = config(kind, &mock);
        config.retry.idle_timeout = Duration::from_secs(60);
        let provider = build(&config).unwrap();
        let (tx, mut rx) = unbounded_channel();
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        let task = tokio::spawn(async move { provider.complete(&request().prepared(), &tx, &trigger).await });
        // Cancel once the stall has begun: the first text arrived.
        loop {
            if let Some(ProviderEvent::TextDelta(_)) = rx.recv().await {
                break;
            }
        }
        let started = Instant::now();
        cancel.cancel();
        let result = tokio::time::timeout(Duration::from_secs(2), task)
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(result, Err(ProviderError::Cancelled)), "{result:?}");
        assert!(started.elapsed() < Duration::from_millis(500));
    }
}

#[tokio::test]
async fn cancellation_during_a_backoff_pause_returns_at_once() {
    let mock = MockLlm::start(vec![Reply::rate_limited(30)]).await;
    let mut config = config(ProviderKind::Anthropic, &mock);
    config.retry.max_delay = Duration::from_secs(60);
    let provider = build(&config).unwrap();
    let (tx, mut rx) = unbounded_channel();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let task = tokio::spawn(async move { provider.complete(&request().prepared(), &tx, &trigger).await });
    match rx.recv().await {
        Some(ProviderEvent::Retrying { delay, .. }) => assert_eq!(delay, Duration::from_secs(30)),
        other => panic!("unexpected {other:?}"),
    }
    let started = Instant::now();
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(result, Err(ProviderError::Cancelled)));
    assert!(started.elapsed() < Duration::from_millis(500));
}

#[tokio::test]
async fn length_and_empty_replies() {
    for kind in KINDS {
        let mock = MockLlm::start(vec![Reply::Length("cut off mid".into()), Reply::Empty]).await;
        let provider = provider(kind, &mock);
        let (result, _) = complete(provider.as_ref()).await;
        let completion = result.unwrap();
        assert_eq!(
            (completion.content.as_str(), completion.finish_reason),
            ("cut off mid", FinishReason::Length)
        );
        let (result, events) = complete(provider.as_ref()).await;
        let completion = result.unwrap();
        assert!(completion.content.is_empty() && completion.tool_calls.is_empty() && completion.reasoning.is_none());
        assert_eq!(completion.finish_reason, FinishReason::Stop);
        assert!(events.is_empty(), "{kind}: {events:?}");
    }
}

#[tokio::test]
async fn an_exhausted_script_answers_readably_and_more_turns_can_be_pushed() {
    let mock = MockLlm::start(Vec::new()).await;
    let provider = provider(ProviderKind::OpenAi, &mock);
    let (result, _) = complete(provider.as_ref()).await;
    assert_eq!(result.unwrap().content, "(script exhausted)");
    mock.push(Reply::text("pushed later"));
    let (result, _) = complete(provider.as_ref()).await;
    assert_eq!(result.unwrap().content, "pushed later");
    assert_eq!(mock.remaining(), 0);
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error() {
    // Bind and close a port so nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "m");
    config.base_url = format!("http://127.0.0.1:{port}/v1");
    config.retry.max_attempts = 2;
    config.retry.base_delay = Duration::from_millis(1);
    let (result, events) = complete(build(&config).unwrap().as_ref()).await;
    match result.unwrap_err() {
        ProviderError::RetriesExhausted { last, .. } => {
            assert!(matches!(*last, ProviderError::Connect(_)), "{last:?}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(retries(&events).len(), 1);
}

#[test]
fn the_standalone_server_serves_synchronous_callers() {
    let mock = MockLlm::start_standalone(vec![Reply::text("from another thread")]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let provider = provider(ProviderKind::Anthropic, &mock);
    let (result, _) = runtime.block_on(complete(provider.as_ref()));
    assert_eq!(result.unwrap().content, "from another thread");
    assert_eq!(mock.request_count(), 1);
}

mod responses;
mod thinking;
