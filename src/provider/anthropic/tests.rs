use super::*;
use crate::ProviderKind;
use crate::transport::{Outbox, StreamHandler};
use serde_json::json;
use tern_http::sse::SseEvent;
use tern_protocol::{FinishReason, ToolCall, Usage};
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
                ..Default::default()
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
                ..Default::default()
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
    stream.on_event(event, &mut Outbox::new(tx)).unwrap()
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
            signature: None,
            blocks: vec![ReasoningBlock::Thinking {
                thinking: "let me see".into(),
                signature: "EqQB".into()
            }],
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
    assert!(!s.on_event(junk, &mut Outbox::new(&tx)).unwrap());
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
    let err = s.on_event(error, &mut Outbox::new(&tx)).unwrap_err();
    assert!(err.is_retryable() && err.to_string().contains("Overloaded"), "{err}");
    assert!(s.finish().tool_calls.is_empty());
}

fn thinking_provider(model: &str, budget: Option<u32>, max_tokens: Option<u32>) -> AnthropicProvider {
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, model);
    config.max_tokens = max_tokens;
    config.thinking.budget = budget;
    AnthropicProvider::new(&config).unwrap()
}

fn ask(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: String::new(),
        system: String::new(),
        messages,
        tools: Vec::new(),
        max_tokens: None,
    }
}

fn user(text: &str) -> Message {
    Message::User {
        content: text.into(),
        images: Vec::new(),
    }
}

/// <https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking>: `"thinking": {"type": "enabled",
/// "budget_tokens": N}`, N at least 1,024, and `max_tokens` greater than N.
#[test]
fn thinking_is_requested_with_max_tokens_above_the_budget() {
    let body = thinking_provider("claude-sonnet-4-5", Some(10_000), None).body(&ask(vec![user("hi")]));
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 10_000}));
    assert_eq!(body["max_tokens"], json!(18_192));
    // A configured limit above the budget stays; a budget below the minimum is raised to it.
    let body = thinking_provider("claude-test", Some(100), Some(20_000)).body(&ask(vec![user("hi")]));
    assert_eq!(body["thinking"]["budget_tokens"], json!(1024));
    assert_eq!(body["max_tokens"], json!(20_000));
    // Within the model's output limit (claude-3-5-haiku cannot think at all; opus 4.1 answers at most 32,000).
    let body = thinking_provider("claude-opus-4-1", Some(40_000), None).body(&ask(vec![user("hi")]));
    assert_eq!(body["max_tokens"], json!(32_000));
    assert_eq!(body["thinking"]["budget_tokens"], json!(32_000 - 1024));
    let body = thinking_provider("claude-3-5-haiku", Some(4_000), None).body(&ask(vec![user("hi")]));
    assert!(
        body.get("thinking").is_none() && body["max_tokens"] == json!(8192),
        "{body}"
    );
    // Off unless configured.
    let body = thinking_provider("claude-sonnet-4-5", None, None).body(&ask(vec![user("hi")]));
    assert!(body.get("thinking").is_none(), "{body}");
}

#[test]
fn thinking_limits_leave_room_for_the_answer() {
    assert_eq!(thinking_limits(8192, None, Some(64_000)), (8192, None));
    assert_eq!(thinking_limits(8192, Some(2048), None), (8192, Some(2048)));
    // The answer keeps at least 1,024 tokens of room after the thinking.
    assert_eq!(thinking_limits(1000, Some(1500), None), (2500, Some(1476)));
    // No room for the smallest budget and an answer: no thinking, and the limit stays within the model's.
    assert_eq!(thinking_limits(8192, Some(4096), Some(2000)), (2000, None));
}

fn thinking_answer() -> Message {
    Message::Assistant {
        content: "Checking.".into(),
        reasoning: Some(Reasoning {
            text: "first\n\nsecond".into(),
            signature: None,
            blocks: vec![
                ReasoningBlock::Thinking {
                    thinking: "first".into(),
                    signature: "sig-1".into(),
                },
                ReasoningBlock::RedactedThinking {
                    data: "EmwKAhgB".into(),
                },
                ReasoningBlock::Thinking {
                    thinking: "second".into(),
                    signature: "sig-2".into(),
                },
                ReasoningBlock::ResponsesReasoning {
                    id: "rs_1".into(),
                    summary: Vec::new(),
                    encrypted_content: Some("not for anthropic".into()),
                },
            ],
        }),
        tool_calls: vec![call("t1", json!({"path": "x"}))],
    }
}

/// "During tool use, you must pass thinking blocks back to the API for the last assistant message ... the complete
/// unmodified block": every thinking and redacted block goes back first, in order, with its signature.
#[test]
fn thinking_blocks_go_back_unchanged_in_the_tool_loop() {
    let request = ask(vec![
        user("go"),
        thinking_answer(),
        result("t1", "contents", false, Vec::new()),
    ]);
    let body = thinking_provider("claude-sonnet-4-5", Some(2048), None).body(&request);
    assert_eq!(body["thinking"]["budget_tokens"], json!(2048));
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "first", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "EmwKAhgB"},
            {"type": "thinking", "thinking": "second", "signature": "sig-2"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "x"}},
        ]})
    );
}

/// "When thinking is enabled, a final assistant message must start with a thinking block": a tool loop whose calls
/// were made without thinking continues without it; the next user turn thinks again.
#[test]
fn a_tool_loop_begun_without_thinking_continues_without_it() {
    let unsigned = Message::Assistant {
        content: String::new(),
        reasoning: Some(Reasoning::text("unsigned, from elsewhere")),
        tool_calls: vec![call("t1", json!({}))],
    };
    let mut conversation = vec![user("go"), unsigned.clone(), result("t1", "ok", false, Vec::new())];
    let provider = thinking_provider("claude-sonnet-4-5", Some(2048), None);
    assert!(provider.body(&ask(conversation.clone())).get("thinking").is_none());
    // Later steps of that turn stay without it, even after a user note among the results.
    conversation.extend([
        user("[a note]"),
        unsigned.clone(),
        result("t1", "ok", false, Vec::new()),
    ]);
    assert!(provider.body(&ask(conversation.clone())).get("thinking").is_none());
    conversation.extend([
        Message::Assistant {
            content: "Done.".into(),
            reasoning: None,
            tool_calls: Vec::new(),
        },
        user("and now?"),
    ]);
    assert!(provider.body(&ask(conversation.clone())).get("thinking").is_some());
    // A session recorded before blocks existed kept one signed block as text and signature.
    let legacy = Message::Assistant {
        content: String::new(),
        reasoning: Some(Reasoning {
            text: "old".into(),
            signature: Some("old-sig".into()),
            blocks: Vec::new(),
        }),
        tool_calls: vec![call("t2", json!({}))],
    };
    conversation.extend([legacy, result("t2", "ok", false, Vec::new())]);
    let body = provider.body(&ask(conversation.clone()));
    assert!(body.get("thinking").is_some());
    let last_assistant = &body["messages"][7]["content"][0];
    assert_eq!(
        *last_assistant,
        json!({"type": "thinking", "thinking": "old", "signature": "old-sig"})
    );
}

/// Without interleaved thinking the model thinks once per turn: the later steps of a tool loop have no thinking
/// block of their own, and thinking stays on for the whole turn.
#[test]
fn a_turn_that_began_with_thinking_keeps_it_for_every_step() {
    let unthinking_step = Message::Assistant {
        content: String::new(),
        reasoning: None,
        tool_calls: vec![call("t2", json!({}))],
    };
    let conversation = vec![
        user("go"),
        thinking_answer(),
        result("t1", "ok", false, Vec::new()),
        unthinking_step,
        result("t2", "ok", false, Vec::new()),
    ];
    let body = thinking_provider("claude-sonnet-4-5", Some(2048), None).body(&ask(conversation));
    assert_eq!(body["thinking"]["budget_tokens"], json!(2048));
}

#[test]
fn redacted_and_several_thinking_blocks_are_kept_in_order() {
    let (tx, mut rx) = unbounded_channel();
    let mut s = AnthropicStream::default();
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "one"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s1"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking",
            "data": "EmwKAhgB"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "thinking_delta", "thinking": "two"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "signature_delta", "signature": "s2"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
    ];
    for event in events {
        send(&mut s, &tx, event);
    }
    let reasoning = s.finish().reasoning.unwrap();
    assert_eq!(reasoning.text, "one\n\ntwo");
    assert_eq!(
        reasoning.blocks,
        vec![
            ReasoningBlock::Thinking {
                thinking: "one".into(),
                signature: "s1".into()
            },
            ReasoningBlock::RedactedThinking {
                data: "EmwKAhgB".into()
            },
            ReasoningBlock::Thinking {
                thinking: "two".into(),
                signature: "s2".into()
            },
        ]
    );
    let shown: String = drain(&mut rx)
        .into_iter()
        .filter_map(|e| match e {
            ProviderEvent::ReasoningDelta(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(shown, "one\n\ntwo");
}
