use super::*;
use crate::ProviderKind;
use serde_json::json;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

fn provider(base_url: &str, max_tokens: Option<u32>) -> OpenAiProvider {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "gpt-test");
    config.base_url = base_url.into();
    config.max_tokens = max_tokens;
    OpenAiProvider::new(&config).unwrap()
}

fn request(messages: Vec<Message>, tools: Vec<ToolDefinition>) -> ChatRequest {
    ChatRequest {
        model: String::new(),
        system: "be brief".into(),
        messages,
        tools,
        max_tokens: None,
    }
}

fn image() -> Image {
    Image {
        media_type: "image/png".into(),
        data_base64: "iVBOR".into(),
    }
}

fn tool_result(call_id: &str, content: &str, images: Vec<Image>) -> Message {
    Message::Tool {
        call_id: call_id.into(),
        name: "read_file".into(),
        content: content.into(),
        is_error: false,
        images,
    }
}

#[test]
fn request_body_maps_every_message_kind() {
    let conversation = vec![
        Message::User {
            content: "look".into(),
            images: vec![image()],
        },
        Message::Assistant {
            content: String::new(),
            reasoning: Some(Reasoning {
                text: "hmm".into(),
                signature: None,
                ..Default::default()
            }),
            tool_calls: vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "a.png"}),
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "grep".into(),
                    arguments: Value::String("{not json".into()),
                },
            ],
        },
        tool_result("call_1", "an image", vec![image()]),
        tool_result("call_2", "Error: invalid JSON", Vec::new()),
        Message::Assistant {
            content: "done".into(),
            reasoning: None,
            tool_calls: Vec::new(),
        },
    ];
    let tools = vec![ToolDefinition {
        name: "grep".into(),
        description: "search".into(),
        parameters: json!({"type": "object"}),
    }];
    let body = provider("http://localhost:1/v1", None).body(&request(conversation, tools));
    assert_eq!(
        body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
                ]},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.png\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "grep", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "an image"},
                {"role": "tool", "tool_call_id": "call_2", "content": "Error: invalid JSON"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Image(s) returned by read_file (call_1):"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
                ]},
                {"role": "assistant", "content": "done"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {"name": "grep", "description": "search", "parameters": {"type": "object"}}}],
        })
    );
}

#[test]
fn output_limit_field_depends_on_the_server() {
    let plain = request(vec![], vec![]);
    let local = provider("http://127.0.0.1:11434/v1", Some(100)).body(&plain);
    assert_eq!(local["max_tokens"], json!(100));
    assert!(local.get("tools").is_none() && local.get("max_completion_tokens").is_none());
    let openai = provider("https://api.openai.com/v1", Some(100)).body(&plain);
    assert_eq!(openai["max_completion_tokens"], json!(100));
    let explicit = ChatRequest {
        model: "other".into(),
        max_tokens: Some(7),
        system: String::new(),
        ..plain
    };
    let body = provider("http://h/v1", Some(100)).body(&explicit);
    assert_eq!(
        (body["model"].clone(), body["max_tokens"].clone()),
        (json!("other"), json!(7))
    );
    assert_eq!(body["messages"], json!([]), "no empty system message");
}

fn feed(stream: &mut OpenAiStream, tx: &UnboundedSender<ProviderEvent>, chunks: &[Value]) -> bool {
    chunks.iter().any(|chunk| {
        let event = SseEvent {
            event: String::new(),
            data: chunk.to_string(),
        };
        stream.on_event(event, &mut Outbox::new(tx)).unwrap()
    })
}

fn drain(rx: &mut UnboundedReceiver<ProviderEvent>) -> Vec<ProviderEvent> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

fn delta(delta: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

#[test]
fn assembles_text_reasoning_tool_calls_and_usage() {
    let (tx, mut rx) = unbounded_channel();
    let mut stream = OpenAiStream::default();
    let chunks = [
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"reasoning_content": "think "})),
        delta(json!({"reasoning": "more"})),
        delta(json!({"content": "Hel"})),
        delta(json!({"content": "lo"})),
        delta(json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
            "function": {"name": "read_file", "arguments": ""}}]})),
        delta(json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
            "function": {"name": "grep", "arguments": "{\"pat"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": "}}]})),
        delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "tern\": \"x\"}"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.rs\"}"}}]})),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30,
            "prompt_tokens_details": {"cached_tokens": 20}}}),
    ];
    assert!(!feed(&mut stream, &tx, &chunks));
    assert!(stream.is_complete());
    let done = SseEvent {
        event: String::new(),
        data: "[DONE]".into(),
    };
    assert!(stream.on_event(done, &mut Outbox::new(&tx)).unwrap());
    let completion = stream.finish();
    assert_eq!(completion.content, "Hello");
    assert_eq!(completion.reasoning.map(|r| r.text).as_deref(), Some("think more"));
    assert_eq!(
        completion.tool_calls,
        vec![
            ToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: json!({"path": "a.rs"})
            },
            ToolCall {
                id: "call_b".into(),
                name: "grep".into(),
                arguments: json!({"pattern": "x"})
            },
        ]
    );
    assert_eq!(completion.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        completion.usage,
        Usage {
            input_tokens: 120,
            output_tokens: 30,
            cache_read_tokens: 20,
            cache_write_tokens: 0
        }
    );
    assert_eq!(
        drain(&mut rx),
        vec![
            ProviderEvent::ReasoningDelta("think ".into()),
            ProviderEvent::ReasoningDelta("more".into()),
            ProviderEvent::TextDelta("Hel".into()),
            ProviderEvent::TextDelta("lo".into()),
            ProviderEvent::ToolCallStarted {
                index: 0,
                id: "call_a".into(),
                name: "read_file".into()
            },
            ProviderEvent::ToolCallStarted {
                index: 1,
                id: "call_b".into(),
                name: "grep".into()
            },
        ]
    );
}

#[test]
fn quirky_servers_tool_calls() {
    let (tx, _rx) = unbounded_channel();
    let mut stream = OpenAiStream::default();
    let chunks = [
        // No id, name repeated in every delta, invalid JSON.
        delta(json!({"tool_calls": [{"index": 0, "function": {"name": "edit", "arguments": "{\"a\":"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"name": "edit", "arguments": " oops"}}]})),
        // A second call under the same index with a new id, arguments as an object.
        delta(json!({"tool_calls": [{"index": 0, "id": "x2", "function": {"name": "ls", "arguments": {"d": 1}}}]})),
        // A call that never gets a name is dropped.
        delta(json!({"tool_calls": [{"index": 5, "id": "x3", "function": {"arguments": "{}"}}]})),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ];
    feed(&mut stream, &tx, &chunks);
    let completion = stream.finish();
    assert_eq!(completion.tool_calls.len(), 2);
    let first = &completion.tool_calls[0];
    assert!(
        first.id.starts_with("call_") && first.id.len() > 5,
        "generated id {}",
        first.id
    );
    assert_eq!(
        (first.name.as_str(), &first.arguments),
        ("edit", &Value::String("{\"a\": oops".into()))
    );
    assert_eq!(completion.tool_calls[1].id, "x2");
    assert_eq!(completion.tool_calls[1].arguments, json!({"d": 1}));
    assert_eq!(
        completion.finish_reason,
        FinishReason::ToolCalls,
        "\"stop\" with calls means tool calls"
    );
}

#[test]
fn finish_reasons_and_completeness() {
    let finish = |reason: Option<&str>| {
        let (tx, _rx) = unbounded_channel();
        let mut stream = OpenAiStream::default();
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": reason}]});
        feed(&mut stream, &tx, &[chunk]);
        (stream.is_complete(), stream.finish().finish_reason)
    };
    assert_eq!(finish(Some("stop")), (true, FinishReason::Stop));
    assert_eq!(finish(Some("length")), (true, FinishReason::Length));
    assert_eq!(finish(Some("content_filter")), (true, FinishReason::ContentFilter));
    assert_eq!(finish(Some("weird")), (true, FinishReason::Other("weird".into())));
    assert_eq!(finish(None), (false, FinishReason::Stop));
}

#[test]
fn error_chunks_fail_and_junk_is_skipped() {
    let (tx, mut rx) = unbounded_channel();
    let mut stream = OpenAiStream::default();
    let junk = SseEvent {
        event: String::new(),
        data: "{not json".into(),
    };
    assert!(!stream.on_event(junk, &mut Outbox::new(&tx)).unwrap());
    assert!(!feed(
        &mut stream,
        &tx,
        &[
            json!({"object": "keepalive"}),
            json!({"choices": [{"index": 1, "delta": {"content": "other choice"}}]})
        ]
    ));
    assert!(drain(&mut rx).is_empty());
    let error = SseEvent {
        event: String::new(),
        data: json!({"error": {"message": "model overloaded", "type": "server_error"}}).to_string(),
    };
    match stream.on_event(error, &mut Outbox::new(&tx)) {
        Err(e @ ProviderError::Api { .. }) => {
            assert!(e.is_retryable());
            assert!(e.to_string().contains("model overloaded"));
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// Text chunks are read without a `Value` tree (`TextChunk`); each must have the same effect as when read as a `Value`,
/// which a second choice (not ours) forces.
#[test]
fn text_chunks_read_the_fast_way_do_what_the_value_way_does() {
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"content": "plain"}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "q\"uote \\ back\nnew é 日本"}}]}),
        json!({"choices": [{"delta": {"content": "no index"}}], "usage": null, "error": null}),
        json!({"choices": [{"index": 0, "delta": {"content": ""}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": null, "role": "assistant"}}]}),
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "think", "reasoning": "other"}}]}),
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "", "reasoning": "other"}}]}),
        json!({"choices": [{"index": 0, "delta": {"reasoning": "only reasoning", "content": "and text"}}]}),
        json!({"choices": [{"index": 0, "finish_reason": "stop"}], "id": "x", "model": "m"}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
    ];
    for chunk in chunks {
        let (tx_fast, mut rx_fast) = unbounded_channel();
        let (tx_probe, _rx_probe) = unbounded_channel();
        assert!(
            OpenAiStream::default()
                .on_text_chunk(&chunk.to_string(), &mut Outbox::new(&tx_probe))
                .unwrap(),
            "read the fast way: {chunk}"
        );
        let mut fast = OpenAiStream::default();
        feed(&mut fast, &tx_fast, std::slice::from_ref(&chunk));
        let mut slow_chunk = chunk.clone();
        slow_chunk["choices"]
            .as_array_mut()
            .unwrap()
            .push(json!({"index": 1, "delta": {"content": "not ours"}, "finish_reason": "stop"}));
        let (tx_slow, mut rx_slow) = unbounded_channel();
        let mut slow = OpenAiStream::default();
        feed(&mut slow, &tx_slow, &[slow_chunk]);
        assert_eq!(
            format!("{:?}", drain(&mut rx_fast)),
            format!("{:?}", drain(&mut rx_slow)),
            "{chunk}"
        );
        assert_eq!(
            (&fast.content, &fast.reasoning, &fast.finish_reason, fast.seen_chunk),
            (&slow.content, &slow.reasoning, &slow.finish_reason, slow.seen_chunk),
            "{chunk}"
        );
    }
}
