use super::*;
use crate::provider::ProviderKind;
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

fn provider(max_tokens: Option<u32>) -> AnthropicProvider {
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "claude-test");
    config.max_tokens = max_tokens;
    AnthropicProvider::new(&config).unwrap()
}

fn image() -> Image {
    Image {
        media_type: "image/jpeg".into(),
        data_base64: "/9j/".into(),
    }
}

fn call(id: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "read_file".into(),
        arguments,
    }
}

fn result(call_id: &str, content: &str, is_error: bool, images: Vec<Image>) -> Message {
    Message::Tool {
        call_id: call_id.into(),
        name: "read_file".into(),
        content: content.into(),
        is_error,
        images,
    }
}

#[test]
fn request_body_with_caching_tools_and_defaults() {
    let tools = vec![
        ToolDefinition {
            name: "a".into(),
            description: "first".into(),
            parameters: json!({"type": "object"}),
        },
        ToolDefinition {
            name: "b".into(),
            description: "second".into(),
            parameters: json!({"type": "object"}),
        },
    ];
    let request = ChatRequest {
        model: String::new(),
        system: "sys".into(),
        messages: vec![Message::User {
            content: "hi".into(),
            images: Vec::new(),
        }],
        tools,
        max_tokens: None,
    };
    let body = provider(None).body(&request);
    assert_eq!(
        body,
        json!({
            "model": "claude-test",
            "max_tokens": 8192,
            "stream": true,
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}},
            ]}],
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "tools": [
                {"name": "a", "description": "first", "input_schema": {"type": "object"}},
                {"name": "b", "description": "second", "input_schema": {"type": "object"},
                 "cache_control": {"type": "ephemeral"}},
            ],
        })
    );
    let bare = ChatRequest {
        system: String::new(),
        tools: Vec::new(),
        ..request
    };
    let body = provider(Some(1000)).body(&bare);
    assert_eq!(body["max_tokens"], json!(1000));
    assert!(body.get("system").is_none() && body.get("tools").is_none());
}

#[test]
fn conversation_alternates_and_results_come_first() {
    let conversation = vec![
        Message::User {
            content: "see".into(),
            images: vec![image()],
        },
        Message::Assistant {
            content: "Reading.".into(),
            reasoning: Some(Reasoning {
                text: "plan".into(),
                signature: Some("sig".into()),
            }),
            tool_calls: vec![
                call("t1", json!({"path": "x"})),
                call("t2", Value::String("{broken".into())),
            ],
        },
        result("t1", "text", false, vec![image()]),
        result("t2", "Error: bad JSON", true, Vec::new()),
        Message::User {
            content: "also this".into(),
            images: Vec::new(),
        },
        // An empty assistant message (an interrupted reply) is left out; the two user messages around it merge.
        Message::Assistant {
            content: " ".into(),
            reasoning: Some(Reasoning {
                text: "unsigned".into(),
                signature: None,
            }),
            tool_calls: Vec::new(),
        },
        Message::User {
            content: "hello?".into(),
            images: Vec::new(),
        },
    ];
    assert_eq!(
        Value::Array(messages(&conversation)),
        json!([
            {"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}},
                {"type": "text", "text": "see"},
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "x"}},
                {"type": "tool_use", "id": "t2", "name": "read_file", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [
                    {"type": "text", "text": "text"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}},
                ]},
                {"type": "tool_result", "tool_use_id": "t2", "content": "Error: bad JSON", "is_error": true},
                {"type": "text", "text": "also this"},
                {"type": "text", "text": "hello?", "cache_control": {"type": "ephemeral"}},
            ]},
        ])
    );
}

#[test]
fn a_user_note_before_results_is_moved_after_them() {
    let conversation = vec![
        Message::Assistant {
            content: String::new(),
            reasoning: None,
            tool_calls: vec![call("t1", json!({}))],
        },
        Message::User {
            content: "note".into(),
            images: Vec::new(),
        },
        result("t1", "", false, Vec::new()),
    ];
    let out = messages(&conversation);
    assert_eq!(
        out[1]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "t1"},
            {"type": "text", "text": "note", "cache_control": {"type": "ephemeral"}},
        ])
    );
}

fn send(stream: &mut AnthropicStream, tx: &UnboundedSender<ProviderEvent>, data: Value) -> bool {
    let event = SseEvent {
        event: data["type"].as_str().unwrap_or_default().to_string(),
        data: data.to_string(),
    };
    stream.on_event(event, tx).unwrap()
}

fn drain(rx: &mut UnboundedReceiver<ProviderEvent>) -> Vec<ProviderEvent> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

#[test]
fn assembles_thinking_text_tools_and_usage() {
    let (tx, mut rx) = unbounded_channel();
    let mut s = AnthropicStream::default();
    let events = [
        json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 100,
            "cache_read_input_tokens": 20, "cache_creation_input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "let me "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "see"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQB"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "On it"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1",
            "name": "grep", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"pattern\":"}}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_2",
            "name": "list_dir", "input": {"path": "."}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": " \"fn\"}"}}),
        json!({"type": "content_block_start", "index": 4, "content_block": {"type": "tool_use", "id": "toolu_3",
            "name": "edit", "input": {}}}),
        json!({"type": "content_block_delta", "index": 4, "delta": {"type": "input_json_delta", "partial_json": "{\"x\": tru"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}}),
    ];
    for event in events {
        assert!(!send(&mut s, &tx, event));
    }
    assert!(s.is_complete());
    assert!(send(&mut s, &tx, json!({"type": "message_stop"})));
    let completion = s.finish();
    assert_eq!(completion.content, "On it");
    assert_eq!(
        completion.reasoning,
        Some(Reasoning {
            text: "let me see".into(),
            signature: Some("EqQB".into())
        })
    );
    let calls: Vec<(&str, &str, Value)> = completion
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("toolu_1", "grep", json!({"pattern": "fn"})),
            ("toolu_2", "list_dir", json!({"path": "."})),
            ("toolu_3", "edit", Value::String("{\"x\": tru".into())),
        ]
    );
    assert_eq!(completion.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        completion.usage,
        Usage {
            input_tokens: 125,
            output_tokens: 42,
            cache_read_tokens: 20,
            cache_write_tokens: 5
        }
    );
    let events = drain(&mut rx);
    assert_eq!(
        events,
        vec![
            ProviderEvent::ReasoningDelta("let me ".into()),
            ProviderEvent::ReasoningDelta("see".into()),
            ProviderEvent::TextDelta("On it".into()),
            ProviderEvent::ToolCallStarted {
                index: 0,
                id: "toolu_1".into(),
                name: "grep".into()
            },
            ProviderEvent::ToolCallStarted {
                index: 1,
                id: "toolu_2".into(),
                name: "list_dir".into()
            },
            ProviderEvent::ToolCallStarted {
                index: 2,
                id: "toolu_3".into(),
                name: "edit".into()
            },
        ]
    );
}

#[test]
fn stop_reasons_errors_and_junk() {
    let stop = |reason: &str| {
        let (tx, _rx) = unbounded_channel();
        let mut s = AnthropicStream::default();
        send(
            &mut s,
            &tx,
            json!({"type": "message_delta", "delta": {"stop_reason": reason}}),
        );
        s.finish().finish_reason
    };
    assert_eq!(stop("end_turn"), FinishReason::Stop);
    assert_eq!(stop("max_tokens"), FinishReason::Length);
    assert_eq!(stop("refusal"), FinishReason::ContentFilter);
    assert_eq!(stop("pause_turn"), FinishReason::Other("pause_turn".into()));

    let (tx, mut rx) = unbounded_channel();
    let mut s = AnthropicStream::default();
    assert!(!s.is_complete());
    let junk = SseEvent {
        event: "mystery".into(),
        data: "{nope".into(),
    };
    assert!(!s.on_event(junk, &tx).unwrap());
    assert!(!send(&mut s, &tx, json!({"type": "future_event", "x": 1})));
    // A nameless tool_use is dropped.
    send(
        &mut s,
        &tx,
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t"}}),
    );
    assert!(drain(&mut rx).is_empty());
    let error = SseEvent {
        event: "error".into(),
        data: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
    };
    let err = s.on_event(error, &tx).unwrap_err();
    assert!(err.is_retryable() && err.to_string().contains("Overloaded"), "{err}");
    assert!(s.finish().tool_calls.is_empty());
}
