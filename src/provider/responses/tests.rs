use super::*;
use crate::{ProviderKind, ReasoningEffort};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

fn provider(model: &str, effort: Option<ReasoningEffort>) -> ResponsesProvider {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, model);
    config.base_url = "http://127.0.0.1:1/v1".into();
    config.thinking.effort = effort;
    ResponsesProvider::new(&config).unwrap()
}

fn tool_loop() -> Vec<Message> {
    vec![
        Message::User {
            content: "look".into(),
            images: vec![Image {
                media_type: "image/png".into(),
                data_base64: "iVBOR".into(),
            }],
        },
        Message::Assistant {
            content: "Reading.".into(),
            reasoning: Some(Reasoning {
                text: "**Plan** read it".into(),
                signature: None,
                blocks: vec![
                    ReasoningBlock::ResponsesReasoning {
                        id: "rs_1".into(),
                        summary: vec!["**Plan** read it".into()],
                        encrypted_content: Some("gAAAA-enc".into()),
                    },
                    // Without its encrypted content an item cannot be carried (store: false), so it is left out.
                    ReasoningBlock::ResponsesReasoning {
                        id: "rs_2".into(),
                        summary: Vec::new(),
                        encrypted_content: None,
                    },
                    // Another provider's thinking is never sent here.
                    ReasoningBlock::Thinking {
                        thinking: "x".into(),
                        signature: "sig".into(),
                    },
                ],
            }),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: json!({"path": "a.rs"}),
            }],
        },
        Message::Tool {
            call_id: "call_1".into(),
            name: "read_file".into(),
            content: "fn main() {}".into(),
            is_error: false,
            images: Vec::new(),
        },
    ]
}

/// The request shape of <https://platform.openai.com/docs/api-reference/responses/create>: `instructions`, `input`
/// items (`message` with `input_text`/`input_image`, `reasoning` with `encrypted_content`, `function_call` with
/// `call_id` and a JSON string of arguments, `function_call_output`), flat function tools, `store: false` with
/// `include: ["reasoning.encrypted_content"]`, and `reasoning: {effort, summary}`.
#[test]
fn request_body_of_a_tool_loop_on_a_reasoning_model() {
    let request = ChatRequest {
        model: String::new(),
        system: "sys".into(),
        messages: tool_loop(),
        tools: vec![ToolDefinition {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        }],
        max_tokens: Some(500),
    };
    let body = provider("gpt-5-mini", Some(ReasoningEffort::High)).body(&request);
    assert_eq!(
        body,
        json!({
            "model": "gpt-5-mini",
            "instructions": "sys",
            "stream": true,
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "reasoning": {"effort": "high", "summary": "auto"},
            "max_output_tokens": 500,
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "tools": [{"type": "function", "name": "read_file", "description": "Read a file",
                "parameters": {"type": "object"}, "strict": false}],
            "input": [
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "look"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBOR"},
                ]},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Plan** read it"}],
                    "encrypted_content": "gAAAA-enc"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
                {"type": "function_call", "call_id": "call_1", "name": "read_file",
                    "arguments": "{\"path\":\"a.rs\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "fn main() {}"},
            ],
        })
    );
    let bytes = provider("gpt-5-mini", Some(ReasoningEffort::High))
        .body_bytes(&request.prepared())
        .unwrap();
    assert_eq!(bytes.to_vec(), serde_json::to_vec(&body).unwrap());
}

#[test]
fn models_that_do_not_reason_are_not_asked_to() {
    let request = ChatRequest {
        model: String::new(),
        system: String::new(),
        messages: vec![Message::User {
            content: "hi".into(),
            images: Vec::new(),
        }],
        tools: Vec::new(),
        max_tokens: None,
    };
    // gpt-4.1 is known not to reason: the configured effort is kept away from it.
    let body = provider("gpt-4.1", Some(ReasoningEffort::Low)).body(&request);
    for key in ["reasoning", "include", "instructions", "tools", "max_output_tokens"] {
        assert!(body.get(key).is_none(), "{key}: {body}");
    }
    // A reasoning model gets a summary even without a configured effort; an unknown one with an effort gets both.
    let body = provider("o4-mini", None).body(&request);
    assert_eq!(body["reasoning"], json!({"summary": "auto"}));
    let body = provider("my-proxy-model", Some(ReasoningEffort::Minimal)).body(&request);
    assert_eq!(body["reasoning"], json!({"effort": "minimal", "summary": "auto"}));
    assert!(provider("my-proxy-model", None).body(&request).get("include").is_none());
}

fn send(stream: &mut ResponsesStream, tx: &UnboundedSender<ProviderEvent>, data: Value) -> Result<bool, ProviderError> {
    let event = SseEvent {
        event: String::new(),
        data: data.to_string(),
    };
    stream.on_event(event, &mut Outbox::new(tx))
}

fn drain(rx: &mut UnboundedReceiver<ProviderEvent>) -> Vec<ProviderEvent> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

/// The events of <https://platform.openai.com/docs/api-reference/responses-streaming> for a reasoning model that
/// thinks (two summary parts), says something and calls two functions.
#[test]
fn assembles_reasoning_text_calls_and_usage() {
    let (tx, mut rx) = unbounded_channel();
    let mut s = ResponsesStream::default();
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 0,
            "part": {"type": "summary_text", "text": ""}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "**Plan**"}),
        json!({"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 1,
            "part": {"type": "summary_text", "text": ""}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "then act"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "**Plan**"}, {"type": "summary_text", "text": "then act"}],
            "encrypted_content": "gAAAA-enc"}}),
        json!({"type": "response.output_item.added", "output_index": 1,
            "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "On "}),
        json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": "it"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "message",
            "content": [{"type": "output_text", "text": "On it"}]}}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call",
            "id": "fc_1", "call_id": "call_a", "name": "grep", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{\"pattern\":"}),
        json!({"type": "response.output_item.added", "output_index": 3, "item": {"type": "function_call",
            "id": "fc_2", "call_id": "call_b", "name": "list_dir", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 2, "delta": " \"fn\"}"}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 3, "delta": "{\"pa"}),
        json!({"type": "response.function_call_arguments.done", "output_index": 3, "arguments": "{\"path\":\".\"}"}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": {"type": "function_call",
            "call_id": "call_a", "name": "grep", "arguments": "{\"pattern\": \"fn\"}"}}),
    ];
    for event in events {
        assert!(!send(&mut s, &tx, event).unwrap());
    }
    assert!(!s.is_complete() && s.has_message() && s.has_output());
    let done = json!({"type": "response.completed", "response": {"status": "completed", "usage": {
        "input_tokens": 120, "input_tokens_details": {"cached_tokens": 100},
        "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 150}}});
    assert!(send(&mut s, &tx, done).unwrap());
    let completion = s.finish();
    assert_eq!(completion.content, "On it");
    assert_eq!(
        completion.reasoning,
        Some(Reasoning {
            text: "**Plan**\n\nthen act".into(),
            signature: None,
            blocks: vec![ReasoningBlock::ResponsesReasoning {
                id: "rs_1".into(),
                summary: vec!["**Plan**".into(), "then act".into()],
                encrypted_content: Some("gAAAA-enc".into()),
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
            ("call_a", "grep", json!({"pattern": "fn"})),
            ("call_b", "list_dir", json!({"path": "."})),
        ]
    );
    assert_eq!(completion.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        completion.usage,
        Usage {
            input_tokens: 120,
            output_tokens: 30,
            cache_read_tokens: 100,
            cache_write_tokens: 0,
        }
    );
    let shown = drain(&mut rx);
    assert_eq!(
        shown,
        vec![
            ProviderEvent::ReasoningDelta("**Plan**".into()),
            ProviderEvent::ReasoningDelta("\n\n".into()),
            ProviderEvent::ReasoningDelta("then act".into()),
            ProviderEvent::TextDelta("On ".into()),
            ProviderEvent::TextDelta("it".into()),
            ProviderEvent::ToolCallStarted {
                index: 0,
                id: "call_a".into(),
                name: "grep".into()
            },
            ProviderEvent::ToolCallStarted {
                index: 1,
                id: "call_b".into(),
                name: "list_dir".into()
            },
        ]
    );
}

#[test]
fn a_final_item_without_deltas_still_gives_its_text() {
    let (tx, _rx) = unbounded_channel();
    let mut s = ResponsesStream::default();
    send(
        &mut s,
        &tx,
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message",
            "content": [{"type": "output_text", "text": "whole"}]}}),
    )
    .unwrap();
    send(&mut s, &tx, json!({"type": "response.completed", "response": {}})).unwrap();
    let completion = s.finish();
    assert_eq!((completion.content.as_str(), completion.reasoning), ("whole", None));
    assert_eq!(completion.finish_reason, FinishReason::Stop);
}

#[test]
fn incomplete_failed_and_error_events() {
    let (tx, _rx) = unbounded_channel();
    let mut s = ResponsesStream::default();
    send(
        &mut s,
        &tx,
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "cut"}),
    )
    .unwrap();
    let incomplete = json!({"type": "response.incomplete", "response": {"status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"}}});
    assert!(send(&mut s, &tx, incomplete).unwrap());
    assert_eq!(s.finish().finish_reason, FinishReason::Length);

    let mut s = ResponsesStream::default();
    let failed = json!({"type": "response.failed", "response": {"status": "failed",
        "error": {"code": "server_error", "message": "The model failed"}}});
    let err = send(&mut s, &tx, failed).unwrap_err();
    assert!(err.is_retryable(), "{err}");
    assert!(err.to_string().contains("The model failed"), "{err}");

    let mut s = ResponsesStream::default();
    let error = json!({"type": "error", "code": "context_length_exceeded",
        "message": "Your input exceeds the context window of this model."});
    match send(&mut s, &tx, error).unwrap_err() {
        ProviderError::Api { kind, .. } => assert_eq!(kind, "context_length_exceeded"),
        other => panic!("{other}"),
    }
    // Junk is skipped, and a stream of other events was never a response.
    let mut s = ResponsesStream::default();
    let junk = SseEvent {
        event: String::new(),
        data: "{not json".into(),
    };
    assert!(!s.on_event(junk, &mut Outbox::new(&tx)).unwrap());
    assert!(!s.has_message());
}
