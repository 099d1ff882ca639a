//! The provider fault suite: both wire formats against the scripted model over real HTTP on 127.0.0.1 when the
//! server misbehaves: it drops every second connection, sends keep-alives forever, or answers 200 with something that
//! is not an answer. Deadlines are short and configured; nothing here waits on the defaults.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::mock_llm::{DropAt, MockLlm, Reply};
use tern::protocol::Message;
use tern::provider::{
    ChatRequest, Completion, Provider, ProviderConfig, ProviderError, ProviderEvent, ProviderKind, RetryPolicy, build,
};
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];

fn config(kind: ProviderKind, mock: &MockLlm) -> ProviderConfig {
    let mut config = ProviderConfig::new(kind, "mock-model");
    config.base_url = match kind {
        ProviderKind::OpenAi => mock.openai_base_url(),
        ProviderKind::Anthropic => mock.anthropic_base_url(),
    };
    config.api_key = Some("sk-test".into());
    config.retry = RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        idle_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(2),
    };
    config
}

fn request() -> ChatRequest {
    ChatRequest {
        model: String::new(),
        system: "You are a test.".into(),
        messages: vec![Message::User {
            content: "Hello".into(),
            images: Vec::new(),
        }],
        tools: Vec::new(),
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

fn retry_count(events: &[ProviderEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, ProviderEvent::Retrying { .. }))
        .count()
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

#[tokio::test]
async fn every_second_connection_dropped_before_headers_or_mid_stream_still_answers() {
    for kind in KINDS {
        for at in [DropAt::BeforeHeaders, DropAt::MidStream, DropAt::Alternately] {
            let answers = ["First answer, in several words.", "Second ånswer 🦀 here.", "Third."];
            let mut script: Vec<Reply> = answers.iter().map(|a| Reply::text(*a)).collect();
            script.insert(1, Reply::tool("read_file", json!({"path": "a.txt"})));
            let mock = MockLlm::start(script).await;
            mock.drop_every_second_connection(at);
            let provider = build(&config(kind, &mock)).unwrap();
            let mut texts = Vec::new();
            for turn in 0..4 {
                let (result, events) = complete(provider.as_ref()).await;
                let completion = result.unwrap_or_else(|e| panic!("{kind} {at:?} turn {turn}: {e}"));
                assert_eq!(retry_count(&events), 1, "{kind} {at:?} turn {turn}");
                assert_eq!(shown_text(&events), completion.content);
                let first_retry = events
                    .iter()
                    .position(|e| matches!(e, ProviderEvent::Retrying { .. }))
                    .unwrap();
                let partial = events[..first_retry]
                    .iter()
                    .any(|e| matches!(e, ProviderEvent::TextDelta(_) | ProviderEvent::ToolCallStarted { .. }));
                let cut_mid_stream = at == DropAt::MidStream || (at == DropAt::Alternately && turn % 2 == 1);
                // Half of a one-word answer's events may hold no text yet; the first answer is long enough.
                if !cut_mid_stream || turn == 0 {
                    assert_eq!(
                        partial, cut_mid_stream,
                        "{kind} {at:?} turn {turn}: partial output before the retry"
                    );
                }
                if turn == 1 {
                    assert_eq!(completion.tool_calls.len(), 1);
                    assert_eq!(completion.tool_calls[0].arguments, json!({"path": "a.txt"}));
                } else {
                    texts.push(completion.content);
                }
            }
            assert_eq!(texts, answers, "{kind} {at:?}");
            assert_eq!(mock.request_count(), 8, "{kind} {at:?}");
        }
    }
}

#[tokio::test]
async fn keep_alives_forever_hit_the_deadline_and_are_retried_only_before_text() {
    for kind in KINDS {
        // Nothing streamed: the deadline is a transient failure, retried like the others.
        let mock = MockLlm::start(vec![Reply::KeepAlive(String::new()), Reply::KeepAlive(String::new())]).await;
        let mut config = config(kind, &mock);
        config.retry.max_attempts = 2;
        config.retry.idle_timeout = Duration::from_millis(300);
        config.retry.request_timeout = Duration::from_millis(700);
        let started = Instant::now();
        let (result, events) = complete(build(&config).unwrap().as_ref()).await;
        let elapsed = started.elapsed();
        let err = result.unwrap_err();
        match &err {
            ProviderError::RetriesExhausted { attempts: 2, last } => {
                assert!(matches!(**last, ProviderError::Deadline(_)), "{kind}: {last}");
            }
            other => panic!("{kind}: unexpected {other:?}"),
        }
        assert!(err.to_string().contains("0.7 s deadline"), "{err}");
        assert_eq!(retry_count(&events), 1);
        assert!(
            elapsed >= Duration::from_millis(1400) && elapsed < Duration::from_secs(10),
            "{kind}: {elapsed:?}"
        );

        // Text went out before the deadline: the same wait would likely end the same way, so it is not retried.
        let mock = MockLlm::start(vec![Reply::KeepAlive("A slow start".into()), Reply::text("unused")]).await;
        config.base_url = match kind {
            ProviderKind::OpenAi => mock.openai_base_url(),
            ProviderKind::Anthropic => mock.anthropic_base_url(),
        };
        let (result, events) = complete(build(&config).unwrap().as_ref()).await;
        let err = result.unwrap_err();
        assert!(matches!(err, ProviderError::Deadline(_)), "{kind}: {err:?}");
        assert_eq!((retry_count(&events), mock.request_count()), (0, 1));
        assert_eq!(shown_text(&events), "A slow start");
    }
}

#[tokio::test]
async fn a_200_body_that_is_not_an_answer_is_an_error_not_an_empty_answer() {
    let cases: [(&[u8], &str); 5] = [
        (
            b"<html><body>Welcome to the proxy</body></html>",
            "is not an event stream",
        ),
        (b"hello\nworld\n", "is not an event stream"),
        (b"", "is not an event stream"),
        (
            b"data: {\"unrelated\": true}\n\ndata: {\"also\": 1}\n\n",
            "its events are not",
        ),
        (
            b"data: [DONE]\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
            "before any answer began",
        ),
    ];
    for kind in KINDS {
        for (body, expected) in cases {
            let mock = MockLlm::start(vec![Reply::raw_stream(body), Reply::text("never reached")]).await;
            let (result, events) = complete(build(&config(kind, &mock)).unwrap().as_ref()).await;
            let err = result.unwrap_err();
            let message = err.to_string();
            assert!(matches!(err, ProviderError::Decode(_)), "{kind}: {err:?}");
            assert!(message.contains(expected), "{kind}: {message}");
            assert_eq!(
                (retry_count(&events), mock.request_count()),
                (0, 1),
                "{kind}: not retried"
            );
        }
        let mock = MockLlm::start(vec![Reply::RawBody {
            content_type: "text/html".into(),
            body: b"<html>Proxy login</html>".to_vec(),
        }])
        .await;
        let (result, _) = complete(build(&config(kind, &mock)).unwrap().as_ref()).await;
        let message = result.unwrap_err().to_string();
        assert!(message.contains("Proxy login"), "the body is quoted: {message}");
    }
}

#[tokio::test]
async fn a_stream_cut_after_some_events_is_still_a_retried_break() {
    for kind in KINDS {
        let mock = MockLlm::start(vec![
            Reply::DropMidStream("Part of it".into()),
            Reply::text("All of it."),
        ])
        .await;
        let (result, events) = complete(build(&config(kind, &mock)).unwrap().as_ref()).await;
        assert_eq!(result.unwrap().content, "All of it.", "{kind}");
        assert_eq!(retry_count(&events), 1);
        assert_eq!(shown_text(&events), "All of it.");
    }
}
