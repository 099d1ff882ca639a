//! How the scripted server writes an answer in each wire format: OpenAI chunks, Responses events or Anthropic
//! events, text split into words, tool arguments into pieces, junk interleaved for `Reply::Garbage`.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::{Format, Reply, Shared};

/// What a normal answer consists of, independent of the wire format.
pub(super) struct Answer {
    reasoning: String,
    text: String,
    /// (name, raw argument text)
    calls: Vec<(String, String)>,
    /// "stop", "length" or "tool_calls".
    finish: &'static str,
}

impl Answer {
    pub(super) fn text(text: String, finish: &'static str) -> Self {
        Answer {
            reasoning: String::new(),
            text,
            calls: Vec::new(),
            finish,
        }
    }

    fn with_calls(text: String, calls: Vec<(String, Value)>) -> Self {
        let calls = calls.into_iter().map(|(name, args)| (name, args.to_string())).collect();
        Answer {
            calls,
            ..Answer::text(text, "tool_calls")
        }
    }

    fn output_tokens(&self) -> u64 {
        let chars = self.reasoning.chars().count()
            + self.text.chars().count()
            + self
                .calls
                .iter()
                .map(|(n, a)| n.len() + a.chars().count())
                .sum::<usize>();
        chars.div_ceil(4).max(1) as u64
    }
}

/// Rendered SSE events; `events[..content_end]` is the content without the finish.
pub(super) struct Stream {
    pub(super) events: Vec<String>,
    pub(super) content_end: usize,
}

pub(super) struct Render<'a> {
    pub(super) format: Format,
    pub(super) model: String,
    pub(super) prompt_tokens: u64,
    pub(super) shared: &'a Shared,
}

impl Render<'_> {
    pub(super) fn render(&self, reply: Reply) -> Vec<String> {
        let answer = match reply {
            Reply::Text(text) => Answer::text(text, "stop"),
            Reply::Reasoning { reasoning, text } => Answer {
                reasoning,
                ..Answer::text(text, "stop")
            },
            Reply::ToolCalls(calls) => Answer::with_calls(String::new(), calls),
            Reply::ReasoningAndToolCalls(reasoning, calls) => Answer {
                reasoning,
                ..Answer::with_calls(String::new(), calls)
            },
            Reply::TextAndToolCalls(text, calls) => Answer::with_calls(text, calls),
            Reply::RawToolArgs(name, raw) => Answer {
                calls: vec![(name, raw)],
                ..Answer::text(String::new(), "tool_calls")
            },
            Reply::Length(text) => Answer::text(text, "length"),
            Reply::Empty => Answer::text(String::new(), "stop"),
            Reply::StreamError { kind, message } => return self.error_event(&kind, &message),
            Reply::Garbage(text) => return with_garbage(self.answer(Answer::text(text, "stop")).events),
            // Handled by the caller; rendered as plain text if they ever get here.
            Reply::Status { body, .. } => Answer::text(body, "stop"),
            Reply::DropMidStream(text) | Reply::Stall(text) | Reply::Paced { text, .. } | Reply::KeepAlive(text) => {
                Answer::text(text, "stop")
            }
            Reply::RawBody { body, .. } => Answer::text(String::from_utf8_lossy(&body).into_owned(), "stop"),
            Reply::Delay(_, inner) | Reply::ForSystem(_, inner) => return self.render(*inner),
        };
        self.answer(answer).events
    }

    fn next_call_id(&self) -> String {
        format!("call_{}", self.shared.next_call_id.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn usage(&self, answer: &Answer) -> (u64, u64, u64) {
        (self.prompt_tokens, self.prompt_tokens / 2, answer.output_tokens())
    }

    pub(super) fn answer(&self, answer: Answer) -> Stream {
        match self.format {
            Format::OpenAi => self.openai(answer),
            Format::Anthropic => self.anthropic(answer),
            Format::Responses => self.responses(answer),
        }
    }

    /// The events of <https://platform.openai.com/docs/api-reference/responses-streaming>: one output item per part
    /// of the answer (reasoning, message, each function call), each added, filled by deltas, and done.
    fn responses(&self, answer: Answer) -> Stream {
        let mut events = vec![event(&json!({"type": "response.created",
            "response": {"id": "resp_mock", "status": "in_progress", "model": self.model}}))];
        let mut index = 0;
        let mut item = |events: &mut Vec<String>, added: Value, deltas: Vec<Value>, done: Value| {
            events.push(event(
                &json!({"type": "response.output_item.added", "output_index": index, "item": added}),
            ));
            for mut delta in deltas {
                delta["output_index"] = json!(index);
                events.push(event(&delta));
            }
            events.push(event(
                &json!({"type": "response.output_item.done", "output_index": index, "item": done}),
            ));
            index += 1;
        };
        if !answer.reasoning.is_empty() {
            let mut deltas = vec![
                json!({"type": "response.reasoning_summary_part.added", "summary_index": 0,
                "part": {"type": "summary_text", "text": ""}}),
            ];
            deltas.extend(
                words(&answer.reasoning)
                    .into_iter()
                    .map(|w| json!({"type": "response.reasoning_summary_text.delta", "summary_index": 0, "delta": w})),
            );
            let done = json!({"type": "reasoning", "id": "rs_mock", "summary": [{"type": "summary_text",
                "text": answer.reasoning}], "encrypted_content": format!("enc:{}", answer.reasoning)});
            item(
                &mut events,
                json!({"type": "reasoning", "id": "rs_mock", "summary": []}),
                deltas,
                done,
            );
        }
        if !answer.text.is_empty() {
            let deltas = words(&answer.text)
                .into_iter()
                .map(|w| json!({"type": "response.output_text.delta", "content_index": 0, "delta": w}))
                .collect();
            let done = json!({"type": "message", "id": "msg_mock", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": answer.text}]});
            item(
                &mut events,
                json!({"type": "message", "id": "msg_mock", "role": "assistant", "content": []}),
                deltas,
                done,
            );
        }
        for (n, (name, args)) in answer.calls.iter().enumerate() {
            let call_id = self.next_call_id();
            let fc = |arguments: &str| {
                json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": call_id,
                "name": name, "arguments": arguments})
            };
            let mut deltas: Vec<Value> = thirds(args)
                .into_iter()
                .map(|p| json!({"type": "response.function_call_arguments.delta", "delta": p}))
                .collect();
            deltas.push(json!({"type": "response.function_call_arguments.done", "arguments": args}));
            item(&mut events, fc(""), deltas, fc(args));
        }
        let content_end = events.len();
        let (input, cached, output) = self.usage(&answer);
        let usage = json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input + output});
        events.push(if answer.finish == "length" {
            event(
                &json!({"type": "response.incomplete", "response": {"id": "resp_mock", "status": "incomplete",
                "incomplete_details": {"reason": "max_output_tokens"}, "usage": usage}}),
            )
        } else {
            event(
                &json!({"type": "response.completed", "response": {"id": "resp_mock", "status": "completed",
                "usage": usage}}),
            )
        });
        Stream { events, content_end }
    }

    fn openai(&self, answer: Answer) -> Stream {
        let chunk = |delta: Value, finish: Value| {
            let body = json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            data(&body)
        };
        let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
        for piece in words(&answer.reasoning) {
            events.push(chunk(json!({"reasoning_content": piece}), Value::Null));
        }
        for piece in words(&answer.text) {
            events.push(chunk(json!({"content": piece}), Value::Null));
        }
        let pieces: Vec<Vec<String>> = answer.calls.iter().map(|(_, args)| thirds(args)).collect();
        for (index, (name, _)) in answer.calls.iter().enumerate() {
            let call = json!({"index": index, "id": self.next_call_id(), "type": "function",
                "function": {"name": name, "arguments": ""}});
            events.push(chunk(json!({"tool_calls": [call]}), Value::Null));
        }
        for round in 0..3 {
            for (index, parts) in pieces.iter().enumerate() {
                if let Some(part) = parts.get(round).filter(|p| !p.is_empty()) {
                    let call = json!({"index": index, "function": {"arguments": part}});
                    events.push(chunk(json!({"tool_calls": [call]}), Value::Null));
                }
            }
        }
        let content_end = events.len();
        let (input, cached, output) = self.usage(&answer);
        events.push(chunk(json!({}), json!(answer.finish)));
        events.push(data(
            &json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "choices": [],
            "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output,
                "prompt_tokens_details": {"cached_tokens": cached}}}),
        ));
        events.push("data: [DONE]\n\n".to_string());
        Stream { events, content_end }
    }

    fn anthropic(&self, answer: Answer) -> Stream {
        let (input, cached, output) = self.usage(&answer);
        let mut events = vec![
            event(
                &json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message",
                "role": "assistant", "model": self.model, "content": [], "stop_reason": null,
                "usage": {"input_tokens": input - cached, "cache_read_input_tokens": cached,
                    "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
            ),
            event(&json!({"type": "ping"})),
        ];
        let mut index = 0;
        let mut block = |events: &mut Vec<String>, start: Value, deltas: Vec<Value>| {
            events.push(event(
                &json!({"type": "content_block_start", "index": index, "content_block": start}),
            ));
            for delta in deltas {
                events.push(event(
                    &json!({"type": "content_block_delta", "index": index, "delta": delta}),
                ));
            }
            events.push(event(&json!({"type": "content_block_stop", "index": index})));
            index += 1;
        };
        if !answer.reasoning.is_empty() {
            let mut deltas: Vec<Value> = words(&answer.reasoning)
                .into_iter()
                .map(|w| json!({"type": "thinking_delta", "thinking": w}))
                .collect();
            deltas.push(json!({"type": "signature_delta", "signature": "mock-signature"}));
            block(&mut events, json!({"type": "thinking", "thinking": ""}), deltas);
        }
        if !answer.text.is_empty() {
            let deltas = words(&answer.text)
                .into_iter()
                .map(|w| json!({"type": "text_delta", "text": w}));
            block(&mut events, json!({"type": "text", "text": ""}), deltas.collect());
        }
        for (name, args) in &answer.calls {
            let mut deltas = vec![json!({"type": "input_json_delta", "partial_json": ""})];
            deltas.extend(
                thirds(args)
                    .into_iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p})),
            );
            let start = json!({"type": "tool_use", "id": self.next_call_id(), "name": name, "input": {}});
            block(&mut events, start, deltas);
        }
        let content_end = events.len();
        let stop_reason = match answer.finish {
            "length" => "max_tokens",
            "tool_calls" => "tool_use",
            _ => "end_turn",
        };
        events.push(event(&json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output}})));
        events.push(event(&json!({"type": "message_stop"})));
        Stream { events, content_end }
    }

    fn error_event(&self, kind: &str, message: &str) -> Vec<String> {
        match self.format {
            Format::OpenAi => vec![data(&json!({"error": {"type": kind, "message": message}}))],
            Format::Anthropic => vec![event(
                &json!({"type": "error", "error": {"type": kind, "message": message}}),
            )],
            Format::Responses => vec![event(&json!({"type": "error", "code": kind, "message": message}))],
        }
    }
}

fn data(body: &Value) -> String {
    format!("data: {body}\n\n")
}

fn event(body: &Value) -> String {
    let name = body.get("type").and_then(Value::as_str).unwrap_or("message");
    format!("event: {name}\ndata: {body}\n\n")
}

/// Interleaves things a client must ignore with the real events.
fn with_garbage(events: Vec<String>) -> Vec<String> {
    const JUNK: [&str; 6] = [
        ": a comment line\n\n",
        "event: surprise\ndata: {\"type\":\"surprise\",\"note\":\"an event nobody knows\"}\n\n",
        "garbage line without a colon\n\n",
        "data: {this is not json\n\n",
        "id: 42\r\nretry: 10\r\n\r\n",
        "\n\n\r\n",
    ];
    let mut out = Vec::with_capacity(events.len() * 2);
    for (i, event) in events.into_iter().enumerate() {
        out.push(JUNK[i % JUNK.len()].to_string());
        out.push(event);
    }
    out
}

/// Text in word-sized pieces, each keeping its trailing whitespace.
fn words(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if !c.is_whitespace() && current.ends_with(char::is_whitespace) {
            pieces.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// A string in three pieces cut at character boundaries (some may be empty).
fn thirds(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let third = chars.len().div_ceil(3).max(1);
    let mut pieces: Vec<String> = chars.chunks(third).map(|c| c.iter().collect()).collect();
    pieces.resize(3, String::new());
    pieces
}
